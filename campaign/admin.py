"""The Django admin (``/admin/``, staff only): users are Django's own admin (deactivate, reset a
password, grant staff); campaigns, memberships and the log are shown, never changed here.

Everything that changes a campaign (its name, a member's role, a removal) is an event in its log,
made by the game's own commands: an edit here would change the table behind the log's back. So these
are view-only, with searches and filters to find a campaign, a member or an event."""

from django.contrib import admin

from .models import Campaign, Event, Membership


class ViewOnly(admin.ModelAdmin):
    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


class MembershipInline(admin.TabularInline):
    model = Membership
    fields = ("user", "role")
    readonly_fields = fields
    extra = 0
    can_delete = False

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False


@admin.register(Campaign)
class CampaignAdmin(ViewOnly):
    list_display = ("slug", "name", "system", "last_seq", "current_session")
    list_filter = ("system",)
    search_fields = ("slug", "name")
    inlines = [MembershipInline]


@admin.register(Membership)
class MembershipAdmin(ViewOnly):
    list_display = ("user", "campaign", "role")
    list_filter = ("role",)
    search_fields = ("user__username", "user__email", "campaign__slug")
    list_select_related = ("user", "campaign")


@admin.register(Event)
class EventAdmin(ViewOnly):
    list_display = ("campaign", "seq", "type", "actor", "session", "visibility", "created_at")
    list_filter = ("type", "visibility")
    search_fields = ("campaign__slug", "=seq", "actor__username")
    list_select_related = ("campaign", "actor")
    ordering = ("campaign", "-seq")
    show_full_result_count = False  # the log is large: no COUNT(*) over it per page
