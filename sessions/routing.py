from django.urls import path

from .consumers import TableConsumer

websocket_urlpatterns = [
    path("ws/campaigns/<slug:slug>/table/", TableConsumer.as_asgi()),
]
