from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import path

from sessions import views as table_views

from . import accounts, api, audit_views, health, metrics, openapi, verifier, views

# A database outage met outside a view is a 503 too (campaign/outages.py).
handler500 = "campaign.outages.server_error"

urlpatterns = [
    path("", views.home, name="home"),
    path("login/", views.login_view, name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("signup/", views.signup, name="signup"),
    path("profile/", views.profile, name="profile"),
    path("password/", views.PasswordChangeView.as_view(), name="password_change"),
    path("password/done/", auth_views.PasswordChangeDoneView.as_view(), name="password_change_done"),
    path("password/reset/", accounts.PasswordResetView.as_view(), name="password_reset"),
    path("password/reset/done/", auth_views.PasswordResetDoneView.as_view(), name="password_reset_done"),
    path("password/reset/<uidb64>/<token>/", accounts.PasswordResetConfirmView.as_view(),
         name="password_reset_confirm"),
    path("password/reset/complete/", auth_views.PasswordResetCompleteView.as_view(), name="password_reset_complete"),
    path("join/<str:code>/", views.join, name="join"),
    path("campaigns/<slug:slug>/", table_views.table, name="table"),
    path("campaigns/<slug:slug>/verify/", table_views.verify, name="verify"),
    path("campaigns/<slug:slug>/settings/", views.campaign_settings, name="campaign-settings"),
    path("campaigns/<slug:slug>/audit/", audit_views.audit_page, name="audit"),
    path("campaigns/<slug:slug>/audit/sheet/", audit_views.audit_sheet, name="audit-sheet"),
    path("campaigns/<slug:slug>/audit/advancement/", audit_views.audit_advancement, name="audit-advancement"),
    path("campaigns/<slug:slug>/audit/advancement/award/", audit_views.audit_award, name="audit-award"),
    path("campaigns/<slug:slug>/sessions/<int:number>/dice/", audit_views.session_dice, name="session-dice"),
    path("api/campaigns/<slug:slug>/commands", api.commands, name="api-commands"),
    path("api/campaigns/<slug:slug>/events", api.events, name="api-events"),
    path("api/campaigns/<slug:slug>/preview", api.preview, name="api-preview"),
    path("api/openapi.json", openapi.spec, name="api-openapi"),
    path("api/systems/<str:name>", openapi.system, name="api-system"),
    path("api/actions", openapi.platform, name="api-actions"),
    path("api/key", api.signing_key, name="api-key"),
    path("talekeeper-verify.pyz", verifier.download, name="verifier-download"),
    path("api/campaigns/<slug:slug>/checkpoints", api.campaign_checkpoints, name="api-checkpoints"),
    path("api/campaigns/<slug:slug>/keys", api.campaign_keys, name="api-keys"),
    path("api/campaigns/<slug:slug>/characters", api.characters, name="api-characters"),
    path("api/campaigns/<slug:slug>/characters/<int:character_id>", api.character_state, name="api-character"),
    path("api/campaigns/<slug:slug>/export.jsonl", audit_views.export_jsonl, name="api-export-jsonl"),
    path("api/campaigns/<slug:slug>/export.csv", audit_views.export_csv, name="api-export-csv"),
    path("api/campaigns/<slug:slug>/dice-stats", audit_views.dice_stats_api, name="api-dice-stats"),
    path("healthz", health.healthz, name="healthz"),
    path("metrics", metrics.view, name="metrics"),
    path("readyz", health.readyz, name="readyz"),
    path("admin/", admin.site.urls),
]
