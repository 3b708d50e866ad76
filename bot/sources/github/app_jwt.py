"""The GitHub App's JSON Web Token: the only module importing PyJWT (and reading the key).

GitHub wants RS256, `iat` 60 s in the past (its clock and ours may differ a little), `exp` at most
10 minutes after `iat`, and `iss` the App ID: PyGithub's `AppAuth` lays out those claims
(client.py's JWT_ISSUED_BEFORE, JWT_LIFETIME) and this module signs them. The JWT is only sent to
ask for installations and their tokens (client.py's `AppRequests`), made when needed, never kept.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jwt
from cryptography.exceptions import UnsupportedAlgorithm
from cryptography.hazmat.primitives.asymmetric.rsa import RSAPrivateKey
from cryptography.hazmat.primitives.serialization import load_pem_private_key

from ...core.models import SourceError
from ...i18n import phrase


class AppKeyInvalid(SourceError):
    """GITHUB_APP_PRIVATE_KEY is no usable RSA key: one sentence, never the key."""


def load_key(pem: str) -> RSAPrivateKey:
    """The app's RSA key from its PEM text (`\\n` typed for newlines in one env line accepted)."""
    text = pem.replace("\\n", "\n").strip().encode()
    try:
        key = load_pem_private_key(text, password=None)
    except (ValueError, TypeError, UnsupportedAlgorithm) as exc:  # the message may quote the key's bytes: only its kind
        raise AppKeyInvalid(phrase("ops.github_app_key_invalid", why=type(exc).__name__)) from None
    if not isinstance(key, RSAPrivateKey):
        raise AppKeyInvalid(phrase("ops.github_app_key_invalid", why=type(key).__name__))
    return key


def signer(pem: str) -> Callable[[dict[str, Any]], str]:
    """Signs a JWT's claims with the app's key (RS256); the key is read, and checked, now."""
    key = load_key(pem)

    def sign(claims: dict[str, Any]) -> str:
        return jwt.encode(claims, key, algorithm="RS256")

    return sign
