from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import path

from sessions import views as table_views

from . import api, views

urlpatterns = [
    path("", views.home, name="home"),
    path("login/", auth_views.LoginView.as_view(), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("signup/", views.signup, name="signup"),
    path("profile/", views.profile, name="profile"),
    path("join/<str:code>/", views.join, name="join"),
    path("campaigns/<slug:slug>/", table_views.table, name="table"),
    path("api/campaigns/<slug:slug>/commands", api.commands, name="api-commands"),
    path("api/campaigns/<slug:slug>/events", api.events, name="api-events"),
    path("api/campaigns/<slug:slug>/preview", api.preview, name="api-preview"),
    path("api/openapi.json", __import__("campaign.openapi", fromlist=["spec"]).spec, name="api-openapi"),
    path("api/campaigns/<slug:slug>/characters/<int:character_id>", api.character_state, name="api-character"),
    path("admin/", admin.site.urls),
]
