"""`python -m bot settings`: every effective setting, where it came from, secrets masked.

The output reads like a `.env` file (`NAME=value  # source`), so an operator can see at once
which value won (environment over `.env` over the default). A secret shows as `********` whatever
its length; a URL keeps its host and hides only its password (`redis://:********@db:6379/0`), so
REDIS_URL still tells which server is used.
"""

from __future__ import annotations

import os
from urllib.parse import urlsplit, urlunsplit

from pydantic import SecretStr

from settings import Settings

MASK = "********"


def mask_url(url: str, secret: bool = False) -> str:
    """The URL with the password of its user-info (if any) masked; a secret URL's query too
    (`redis://db?password=…`)."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return MASK
    if parts.password is not None:
        user = parts.username or ""
        parts = parts._replace(netloc=f"{user}:{MASK}@{parts.netloc.rsplit('@', 1)[1]}")
    if secret and parts.query:
        parts = parts._replace(query=MASK)
    return urlunsplit(parts)


def shown(value) -> str:
    if value is None:
        return ""
    if isinstance(value, SecretStr):
        secret = value.get_secret_value()
        return mask_url(secret, secret=True) if "://" in secret else MASK
    if isinstance(value, str) and "://" in value:
        return mask_url(value)
    return str(value)


def source(settings: Settings, field: str, environ=os.environ) -> str:
    if field not in settings.model_fields_set:
        return "default"
    if field.upper() in {name.upper() for name in environ}:
        return "environment"
    return ".env"


def report(settings: Settings, environ=os.environ) -> str:
    rows = [
        (f"{field.upper()}={shown(getattr(settings, field))}", source(settings, field, environ))
        for field in type(settings).model_fields
    ]
    width = min(60, max(len(left) for left, _ in rows))
    return "".join(f"{left.ljust(width)}  # {where}\n" for left, where in rows)
