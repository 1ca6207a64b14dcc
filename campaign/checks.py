"""Deployment checks of our own (shown by `manage.py check --deploy`)."""

from pathlib import Path

from django.conf import settings
from django.contrib.staticfiles.storage import ManifestStaticFilesStorage, staticfiles_storage
from django.core.checks import Error, Tags, Warning, register

from . import signing


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
    try:
        signing.require_key()
    except signing.MissingKey as e:
        return [Error(str(e), hint=f"Run `{signing.CREATE_COMMAND}` once.", id="talekeeper.E001")]
    return []


@register(Tags.security, deploy=True)
def production_services(app_configs, **kwargs):
    """What `make run` does on purpose (SQLite, the in-memory layer) and a public server must not."""
    warnings = []
    if not settings.DEBUG and settings.DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
        warnings.append(Warning(
            "The database is SQLite: one process on one machine, and a write lock held up to 30 s under load.",
            hint="Set DATABASE_URL=postgres://... (docs/operations.md, \"Before going live\").",
            id="talekeeper.W002",
        ))
    if not settings.DEBUG and not settings.REDIS_URL:
        warnings.append(Warning(
            "REDIS_URL is not set: the in-memory channel layer serves one process only. With several "
            "server processes, a socket on one never hears what another stored until its heartbeat, "
            "presence and the per-user socket count are per process, and rate limits count per process.",
            hint="Run one process, or set REDIS_URL=redis://... for every process.",
            id="talekeeper.W003",
        ))
    if not settings.DEBUG and getattr(settings, "SECURE_SSL_REDIRECT", False) \
            and getattr(settings, "SECURE_PROXY_SSL_HEADER", None) is None:
        warnings.append(Warning(
            "SECURE_SSL_REDIRECT is on and BEHIND_PROXY is off: daphne speaks plain http, so behind a "
            "TLS proxy every request is redirected to https for ever, and the login throttle counts "
            "every client as the proxy's address.",
            hint="Behind a proxy that sets X-Forwarded-Proto and X-Forwarded-For, set BEHIND_PROXY=1 "
                 "(never without one).",
            id="talekeeper.W004",
        ))
    return warnings


def static_files_problem() -> str | None:
    """Why the pages can't be served with DEBUG off, or None: every page names its files by their
    hashed names, read from the manifest collectstatic writes."""
    if settings.DEBUG or not isinstance(staticfiles_storage, ManifestStaticFilesStorage):
        return None
    manifest = Path(settings.STATIC_ROOT) / staticfiles_storage.manifest_name
    if not manifest.exists():
        return (f"DEBUG is off and the static files were not collected (no {manifest}): every page "
                "would fail. Run `python manage.py collectstatic --noinput` (again after every upgrade).")
    return None


@register(Tags.staticfiles, deploy=True)
def static_files_collected(app_configs, **kwargs):
    problem = static_files_problem()
    return [Error(problem, id="talekeeper.E002")] if problem else []
