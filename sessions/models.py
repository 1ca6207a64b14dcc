"""Who is at the table right now.

Presence is not part of the log (it is not something that happened in the
game): one row per open socket, refreshed by its heartbeat, so a process that
died without cleaning up stops counting after a few missed heartbeats.
"""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.db import models
from django.utils import timezone


class Presence(models.Model):
    campaign = models.ForeignKey("campaign.Campaign", on_delete=models.CASCADE, related_name="+")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    role = models.CharField(max_length=10)
    channel_name = models.CharField(max_length=200, unique=True)
    seen_at = models.DateTimeField(default=timezone.now)
    # The last head this socket's client verified and reported (sessions/heads.py); none yet: null.
    head_seq = models.PositiveBigIntegerField(null=True)
    head_hash = models.CharField(max_length=64, blank=True, default="")

    class Meta:
        indexes = [models.Index(fields=["campaign", "seen_at"])]


def present(campaign_id: int) -> list[dict]:
    """Members with at least one live socket, sorted by name, each with the head they reported.

    A member at the table on several devices is listed once, with the newest
    head any of them reported (``None`` until one has).
    """
    fresh = timezone.now() - timedelta(seconds=3 * settings.TABLE_HEARTBEAT_SECONDS + 5)
    rows = (
        Presence.objects.filter(campaign_id=campaign_id, seen_at__gte=fresh)
        .values_list("user__username", "role", "head_seq", "head_hash")
        .order_by("user__username", "head_seq")
    )
    members: dict[str, dict] = {}
    for username, role, head_seq, head_hash in rows:
        member = members.setdefault(username, {"username": username, "role": role, "head": None})
        if head_seq is not None and (member["head"] is None or head_seq >= member["head"]["seq"]):
            member["head"] = {"seq": head_seq, "hash": head_hash}
    return list(members.values())


def arrive(campaign_id: int, user_id: int, role: str, channel_name: str) -> list[dict]:
    Presence.objects.update_or_create(
        channel_name=channel_name,
        defaults={"campaign_id": campaign_id, "user_id": user_id, "role": role, "seen_at": timezone.now()},
    )
    return present(campaign_id)


def leave(campaign_id: int, channel_name: str) -> list[dict]:
    Presence.objects.filter(channel_name=channel_name).delete()
    return present(campaign_id)


def report_head(campaign_id: int, channel_name: str, head: dict) -> list[dict] | None:
    """Store the head this socket's client reports; the members to announce if it changed, else None."""
    changed = Presence.objects.filter(channel_name=channel_name).exclude(
        head_seq=head["seq"], head_hash=head["hash"]).update(head_seq=head["seq"], head_hash=head["hash"])
    return present(campaign_id) if changed else None


def still_here(channel_name: str) -> None:
    Presence.objects.filter(channel_name=channel_name).update(seen_at=timezone.now())


def sockets_of(user_id: int) -> int:
    """The user's live table sockets, in every campaign and process (for the SOCKETS_PER_USER cap)."""
    fresh = timezone.now() - timedelta(seconds=3 * settings.TABLE_HEARTBEAT_SECONDS + 5)
    return Presence.objects.filter(user_id=user_id, seen_at__gte=fresh).count()
