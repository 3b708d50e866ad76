"""Checking a Feishu HTTP callback before the SDK sees it (encryption, signature, a fresh
timestamp, the verification token)."""

from __future__ import annotations

import hashlib
import hmac
import json
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from handlers.feishu.api import AESCipher

MAX_SKEW = 300  # seconds: older (or future) signed callbacks are replays
TS_HEADER, NONCE_HEADER, SIG_HEADER = "X-Lark-Request-Timestamp", "X-Lark-Request-Nonce", "X-Lark-Signature"


@dataclass(frozen=True)
class Verdict:
    ok: bool
    status: int = 200
    reason: str = ""
    payload: dict = field(default_factory=dict)


class CallbackVerifier:
    """Checks an HTTP callback before the SDK sees it: the SDK checks the signature but not the
    timestamp (so a captured callback could be replayed forever), and answers every rejection
    with HTTP 500 and a logged traceback. Rejections here are a clean 4xx with one line logged."""

    def __init__(self, encrypt_key: str, verification_token: str, clock: Callable[[], float] = time.time):
        self.encrypt_key = encrypt_key
        self.token = verification_token
        self.clock = clock

    def check(self, body: bytes, headers: Mapping[str, str]) -> Verdict:
        try:
            outer = json.loads(body or b"")
        except ValueError:
            return Verdict(False, 400, "body is not JSON")
        if not isinstance(outer, dict):
            return Verdict(False, 400, "body is not a JSON object")
        if not isinstance(outer.get("encrypt"), str):
            return Verdict(False, 400, "body is not encrypted")
        try:
            payload = json.loads(AESCipher(self.encrypt_key).decrypt_str(outer["encrypt"]))
        except Exception:  # noqa: BLE001 — wrong key, bad padding, not base64, not JSON
            return Verdict(False, 400, "body cannot be decrypted")
        if not isinstance(payload, dict):
            return Verdict(False, 400, "payload is not a JSON object")
        if payload.get("type") == "url_verification":
            if not hmac.compare_digest(str(payload.get("token", "")).encode(), self.token.encode()):
                return Verdict(False, 401, "wrong verification token")
            return Verdict(True, payload=payload)
        timestamp, nonce, signature = (headers.get(h) for h in (TS_HEADER, NONCE_HEADER, SIG_HEADER))
        if not (timestamp and nonce and signature):
            return Verdict(False, 401, "unsigned callback")
        try:
            age = abs(self.clock() - int(timestamp))
        except ValueError:
            return Verdict(False, 401, "bad timestamp")
        if age > MAX_SKEW:
            return Verdict(False, 401, "stale timestamp")
        expected = hashlib.sha256((timestamp + nonce + self.encrypt_key).encode() + body).hexdigest()
        if not hmac.compare_digest(expected, signature):
            return Verdict(False, 401, "bad signature")
        header = payload.get("header")
        # v2 events carry the token in their header, v1 events (a store app's app_ticket) at the top
        token = header.get("token", "") if isinstance(header, dict) else payload.get("token", "")
        if not hmac.compare_digest(str(token).encode(), self.token.encode()):
            return Verdict(False, 401, "wrong verification token")
        return Verdict(True, payload=payload)
