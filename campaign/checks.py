"""Deployment checks of our own (shown by `manage.py check --deploy`)."""

from django.conf import settings
from django.core.checks import Error, Tags, Warning, register


@register(Tags.security, deploy=True)
def secret_key_from_environment(app_configs, **kwargs):
    if settings.SECRET_KEY_FROM_ENV:
        return []
    return [Warning(
        "SECRET_KEY is not set: a random key is made at every start, so logins end on restart and "
        "are not shared between server processes.",
        hint="Set SECRET_KEY to a long random string (e.g. python -c 'import secrets; print(secrets.token_urlsafe(50))').",
        id="talekeeper.W001",
    )]


@register(Tags.security, deploy=True)
def signing_key_present(app_configs, **kwargs):
    from . import signing

    try:
        signing.require_key()
    except signing.MissingKey as e:
        return [Error(str(e), hint=f"Run `{signing.CREATE_COMMAND}` once.", id="talekeeper.E001")]
    return []
