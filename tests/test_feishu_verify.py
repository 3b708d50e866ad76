"""The Feishu callback verifier on its own (handlers/feishu/verify.py), with an injected clock:
the SDK behind it checks signatures again, which would hide a broken check in end-to-end tests."""

from __future__ import annotations

import pytest

from handlers.feishu.verify import MAX_SKEW, CallbackVerifier
from tests.fakes.feishu_server import encrypt, message_event, sign, url_verification

KEY = "enc-key-for-tests"
TOKEN = "verification-token-for-tests"
NOW = 1_800_000_000


def verifier(now: float = NOW) -> CallbackVerifier:
    return CallbackVerifier(KEY, TOKEN, clock=lambda: now)


def signed_event(*, timestamp: int = NOW, token: str = TOKEN, key: str = KEY) -> tuple[bytes, dict]:
    body = encrypt(message_event("hi", token=token), KEY)
    return body, sign(body, key, timestamp=timestamp)


@pytest.mark.parametrize("skew", [-MAX_SKEW, MAX_SKEW, 0])
def test_a_timestamp_up_to_300_seconds_away_either_way_is_accepted(skew):
    body, headers = signed_event(timestamp=NOW + skew)
    verdict = verifier().check(body, headers)
    assert verdict.ok and verdict.payload["header"]["event_type"] == "im.message.receive_v1"


@pytest.mark.parametrize("skew", [-MAX_SKEW - 1, MAX_SKEW + 1, -86_400])
def test_one_second_beyond_is_a_replay(skew):
    body, headers = signed_event(timestamp=NOW + skew)
    verdict = verifier().check(body, headers)
    assert (verdict.ok, verdict.status, verdict.reason) == (False, 401, "stale timestamp")


def test_the_clock_is_the_verifiers_not_the_callers():
    body, headers = signed_event(timestamp=NOW)
    assert not verifier(now=NOW + MAX_SKEW + 1).check(body, headers).ok
    assert verifier(now=NOW + MAX_SKEW).check(body, headers).ok


def test_a_bad_signature_is_refused():
    body, headers = signed_event(key="someone-elses-key")
    assert (verifier().check(body, headers).status, verifier().check(body, headers).reason) == (401, "bad signature")
    body, headers = signed_event()
    other = encrypt(message_event("something else", token=TOKEN), KEY)  # a valid body, not the one signed
    assert verifier().check(other, headers).reason == "bad signature"
    sig = headers["X-Lark-Signature"]
    altered = sig[:-1] + ("1" if sig.endswith("0") else "0")  # always a different signature
    assert not verifier().check(body, {**headers, "X-Lark-Signature": altered}).ok


def test_a_wrong_token_in_the_header_is_refused_even_when_signed():
    body, headers = signed_event(token="guessed")
    verdict = verifier().check(body, headers)
    assert (verdict.ok, verdict.status, verdict.reason) == (False, 401, "wrong verification token")


@pytest.mark.parametrize("missing", ["X-Lark-Request-Nonce", "X-Lark-Request-Timestamp", "X-Lark-Signature"])
def test_a_missing_nonce_timestamp_or_signature_is_401(missing):
    body, headers = signed_event()
    verdict = verifier().check(body, {k: v for k, v in headers.items() if k != missing})
    assert (verdict.ok, verdict.status) == (False, 401)


def test_a_non_numeric_timestamp_is_401_not_an_exception():
    body, headers = signed_event()
    verdict = verifier().check(body, {**headers, "X-Lark-Request-Timestamp": "yesterday"})
    assert (verdict.ok, verdict.status) == (False, 401)


def test_url_verification_needs_the_token_but_no_signature():
    assert verifier().check(encrypt(url_verification("c-1", TOKEN), KEY), {}).ok
    verdict = verifier().check(encrypt(url_verification("c-1", "guess"), KEY), {})
    assert (verdict.ok, verdict.status) == (False, 401)


@pytest.mark.parametrize("body", [b"", b"not json", b"[1, 2]", b'{"plain": true}', b'{"encrypt": "bm90IGFlcw=="}'])
def test_bodies_that_are_not_encrypted_json_objects_are_400(body):
    verdict = verifier().check(body, sign(body, KEY, timestamp=NOW))
    assert (verdict.ok, verdict.status) == (False, 400)
