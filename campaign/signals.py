"""Rights that end outside the table close the table's sockets at once.

A logout or a deactivation happens over HTTP (or in the admin); the user's open
sockets hear of it through their per-user group (campaign.broadcast). Removals
and role changes close sockets from their own actions (campaign.actions).
"""

from django.contrib.auth import get_user_model
from django.contrib.auth.signals import user_logged_out
from django.db.models.signals import post_save
from django.dispatch import receiver

from .broadcast import close_sockets_on_commit


@receiver(user_logged_out, dispatch_uid="talekeeper-close-sockets-on-logout")
def close_sockets_on_logout(sender, request, user, **kwargs):
    # Every socket of the user, not only this browser's: a socket can't tell which
    # login opened it, and the others simply reconnect with their own session.
    if user is not None:
        close_sockets_on_commit(user.pk)


@receiver(post_save, sender=get_user_model(), dispatch_uid="talekeeper-close-sockets-on-deactivation")
def close_sockets_on_deactivation(sender, instance, created, **kwargs):
    if not created and not instance.is_active:
        close_sockets_on_commit(instance.pk)
