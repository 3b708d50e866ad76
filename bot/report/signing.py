"""Signed report links: an HMAC-SHA256 over the report id and the link's expiry.

A link is `/r/{id}?exp={epoch seconds}&sig={mac}`. Changing any of the three breaks the MAC;
a link past its `exp` is refused even though its MAC is good. The MAC is compared in constant
time. The key is REPORT_SIGNING_KEY when set; otherwise one random key is generated the first
time any process needs it and kept in Redis (SET NX), so the web process that checks a link
agrees with the worker that made it.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
import secrets

KEY_NAME = "report:signing-key"  # under REDIS_PREFIX; no TTL: the key outlives every link
ID_PATTERN = re.compile(r"^[A-Za-z0-9_-]{16,64}\Z")
_SIG_PATTERN = re.compile(r"^[A-Za-z0-9_-]{43}\Z")  # a SHA-256 MAC in unpadded base64url
_EXP_PATTERN = re.compile(r"^[1-9][0-9]{0,11}\Z")  # the one spelling sign() makes: ASCII, no leading 0


def new_report_id() -> str:
    """128 random bits: not guessable, so a report cannot be reached by counting."""
    return secrets.token_urlsafe(16)


def sign(key: bytes, report_id: str, exp: int) -> str:
    mac = hmac.new(key, f"report-link\x00{report_id}\x00{exp}".encode(), hashlib.sha256).digest()
    return base64.urlsafe_b64encode(mac).rstrip(b"=").decode()


def verify(key: bytes, report_id: str, exp: str, sig: str, now: float) -> bool:
    """True only for an untampered link that has not expired. Everything a visitor sends is
    checked for shape first, so no malformed value reaches the MAC or the store."""
    if not ID_PATTERN.match(report_id) or not _EXP_PATTERN.match(exp) or not _SIG_PATTERN.match(sig):
        return False
    if not hmac.compare_digest(sign(key, report_id, int(exp)), sig):
        return False
    return now < int(exp)


async def signing_key(store, configured) -> bytes:
    """REPORT_SIGNING_KEY (a SecretStr) or the deployment's key in Redis, made on first use."""
    if configured is not None:
        return configured.get_secret_value().encode()
    name = store.k(KEY_NAME)
    if (kept := await store.get_json(name)) is not None:
        return str(kept).encode()
    # Read on every use, not cached: a process never signs with a key the others lost. SET NX: when two processes race, the first one's key wins and both read that one back.
    await store.set_json(name, secrets.token_hex(32), nx=True)
    return str(await store.get_json(name)).encode()


# --- the level-correction forms on a page ---------------------------------------------------------
# Each commit's form carries its SHA, a random nonce (a form sent twice is recorded once) and a MAC
# over both with the link's id and expiry: a form whose commit was changed, or copied to another
# report, is refused before anything is read or recorded.

_SHA_PATTERN = re.compile(r"^[0-9a-f]{40}\Z")
_NONCE_PATTERN = re.compile(r"^[A-Za-z0-9_-]{12,32}\Z")


def new_nonce() -> str:
    return secrets.token_urlsafe(12)


def sign_tap(key: bytes, report_id: str, exp: int, sha: str, nonce: str) -> str:
    mac = hmac.new(key, f"report-level\x00{report_id}\x00{exp}\x00{sha}\x00{nonce}".encode(), hashlib.sha256).digest()
    return base64.urlsafe_b64encode(mac).rstrip(b"=").decode()


def verify_tap(key: bytes, report_id: str, exp: str, sha: str, nonce: str, mac: str) -> bool:
    """True only for a form this page drew (its link already checked by `verify`)."""
    if not _EXP_PATTERN.match(exp) or not _SHA_PATTERN.match(sha) or not _NONCE_PATTERN.match(nonce):
        return False
    if not _SIG_PATTERN.match(mac):
        return False
    return hmac.compare_digest(sign_tap(key, report_id, int(exp), sha, nonce), mac)
