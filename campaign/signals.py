"""Rights that end outside the table close the table's sockets at once.

A logout, a deactivation or a new password happens over HTTP, in the admin or a
management command; the user's open sockets hear of it through their per-user
group (campaign.publish, sessions/transport.py). Removals and role changes close sockets from their
own actions (campaign.actions).
"""

from django.contrib.auth import get_user_model
from django.contrib.auth.signals import user_logged_out
from django.db.models.signals import post_save
from django.dispatch import receiver

from .accounts import end_other_access
from .publish import close_sockets_on_commit


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


@receiver(post_save, sender=get_user_model(), dispatch_uid="talekeeper-end-access-on-new-password")
def end_access_on_new_password(sender, instance, created, **kwargs):
    """Every path that sets a password (``/password/``, a reset link, ``changepassword``, the admin)
    calls ``set_password`` and then saves: Django keeps the new raw password on the user
    (``_password``) until that save is done, and clears it before saving a mere rehash of the same
    password at login (a hasher's new iteration count), which must revoke nothing."""
    if not created and getattr(instance, "_password", None) is not None:
        end_other_access(instance)
