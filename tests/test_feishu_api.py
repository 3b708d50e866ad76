"""The Feishu API client's retry policy (handlers/feishu/api.py) as Feishu sees it: which refusals
are retried and how many times, how long the bot waits before each retry (recorded, not slept:
the waits are the bot's side of Feishu's rate-limit contract), and the one sentence a final
failure becomes. Real lark-oapi SDK → the fake Feishu on loopback; no Redis needed."""

from __future__ import annotations

import uuid
from contextlib import asynccontextmanager

import pytest

from bot.render import feishu as R
from tests.fakes.feishu_server import FakeFeishu

GROUP = "oc_group0000000000000000000000001"
SECRET = "app-secret-for-tests"


class Waits(list):
    """Records the waits the client asks for, without waiting."""

    async def __call__(self, seconds: float) -> None:
        self.append(seconds)


@asynccontextmanager
async def sender(make_settings, **settings):
    """A sending-only Feishu adapter (as in the worker) against a fresh fake; its waits recorded."""
    from handlers.feishu import build_feishu

    app_id = "cli_" + uuid.uuid4().hex[:12]  # the SDK caches tokens per app id, process-wide
    fake = FakeFeishu(app_id=app_id, app_secret=SECRET).start()
    adapter = build_feishu(
        make_settings(feishu_app_id=app_id, feishu_app_secret=SECRET, feishu_domain=fake.url, **settings),
        None,
        receive=False,
    )
    waits = Waits()
    adapter.api.sleep = waits
    try:
        yield fake, adapter, waits
    finally:
        await adapter.close()
        fake.stop()


def card(text: str = "hello") -> dict:
    return R.card([{"tag": "markdown", "content": text}])


async def post(adapter, text: str = "hello", chat: str = GROUP):
    return await adapter.platform.post_cards(chat, [card(text)])


def sends(fake) -> list:
    return fake.api_calls("/open-apis/im/v1/messages", "POST")


def backoff_bounds(attempt: int) -> tuple[float, float]:
    """The documented backoff: 0.25 s doubling per attempt, at most 8 s, with ±25% jitter."""
    base = min(8.0, 0.25 * 2 ** (attempt - 1))
    return base * 0.75, base * 1.25


def assert_backoffs(waits: list[float]) -> None:
    for attempt, wait in enumerate(waits, 1):
        low, high = backoff_bounds(attempt)
        assert low <= wait <= high, (attempt, wait, (low, high))


# --- rate limits -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("reset, expected", [("2.5", 2.5), ("3600", 60.0), ("0", 0.05), ("-3", 0.05)])
async def test_a_rate_limited_send_waits_for_the_reset_feishu_names_within_bounds(make_settings, reset, expected):
    async with sender(make_settings) as (fake, adapter, waits):
        fake.throttle(3, reset=reset, path="/open-apis/im/")
        ref = await post(adapter)
        assert waits == [expected] * 3  # the window Feishu gave, at most a minute, never a busy loop
        assert [m.message_id for m in fake.messages] == [ref.id]  # posted once, after the waits


async def test_without_a_usable_reset_header_a_rate_limited_send_backs_off(make_settings):
    async with sender(make_settings) as (fake, adapter, waits):
        fake.throttle(7, reset="soon", path="/open-apis/im/")
        await post(adapter)
        assert len(waits) == 7 and len(fake.messages) == 1
        assert_backoffs(waits)


@pytest.mark.parametrize("code", [99991400, 230020, 11232])
async def test_each_rate_limit_code_is_waited_out_whatever_the_http_status(make_settings, code):
    async with sender(make_settings) as (fake, adapter, waits):
        fake.fail(2, status=400, code=code, msg="rate limited", path="/open-apis/im/")
        await post(adapter)
        assert len(fake.messages) == 1 and len(waits) == 2
        assert len(sends(fake)) == 3


async def test_ten_rate_limit_waits_are_allowed_and_the_eleventh_refusal_is_one_sentence(make_settings):
    from handlers.feishu import FeishuError

    async with sender(make_settings) as (fake, adapter, waits):
        fake.throttle(10, reset="0.1", path="/open-apis/im/")
        await post(adapter)
        assert len(waits) == 10 and len(fake.messages) == 1
    async with sender(make_settings) as (fake, adapter, waits):
        fake.throttle(11, reset="0.1", path="/open-apis/im/")
        with pytest.raises(FeishuError) as caught:
            await post(adapter)
        assert len(sends(fake)) == 11 and fake.messages == []
        assert "kept rate-limiting" in str(caught.value) and caught.value.code == 99991400


# --- transient failures --------------------------------------------------------------------------------------


async def test_a_server_error_is_retried_four_times_then_reported(make_settings):
    from handlers.feishu import FeishuError

    async with sender(make_settings) as (fake, adapter, waits):
        fake.fail(4, status=500, path="/open-apis/im/")
        await post(adapter)
        assert len(sends(fake)) == 5 and len(fake.messages) == 1
        assert len(waits) == 4
        assert_backoffs(waits)
    async with sender(make_settings) as (fake, adapter, waits):
        fake.fail(5, status=503, code=1000004, msg="service unavailable", path="/open-apis/im/")
        with pytest.raises(FeishuError) as caught:
            await post(adapter)
        assert len(sends(fake)) == 5 and fake.messages == []
        assert str(caught.value) == "Feishu refused to post a message (code 1000004: service unavailable)."


async def test_a_gateway_page_instead_of_json_is_retried_then_reported_in_one_sentence(make_settings):
    from handlers.feishu import FeishuError

    async with sender(make_settings) as (fake, adapter, waits):
        fake.gateway_error(4, path="/open-apis/im/")
        await post(adapter)
        assert len(sends(fake)) == 5 and len(fake.messages) == 1
        assert len(waits) == 4
        assert_backoffs(waits)
    async with sender(make_settings) as (fake, adapter, waits):
        fake.gateway_error(5, path="/open-apis/im/")
        with pytest.raises(FeishuError) as caught:
            await post(adapter)
        assert len(sends(fake)) == 5 and fake.messages == []
        assert str(caught.value).startswith("Feishu could not be reached to post a message (")
        assert "<html>" not in str(caught.value)


async def test_a_refusal_that_retrying_cannot_fix_is_reported_at_once(make_settings):
    from handlers.feishu import FeishuError

    async with sender(make_settings) as (fake, adapter, waits):
        fake.fail(1, status=400, code=230002, msg="Bot/User can NOT be out of the chat.", path="/open-apis/im/")
        with pytest.raises(FeishuError) as caught:
            await post(adapter)
        assert len(sends(fake)) == 1 and waits == []
        assert caught.value.code == 230002
        assert (
            str(caught.value) == "Feishu refused to post a message (code 230002: Bot/User can NOT be out of the chat.)."
        )
    async with sender(make_settings) as (fake, adapter, waits):
        fake.fail(1, status=200, code=230001, msg="", path="/open-apis/im/")  # an error code in an HTTP 200
        with pytest.raises(FeishuError) as caught:
            await post(adapter)
        assert len(sends(fake)) == 1 and fake.messages == []
        assert str(caught.value) == "Feishu refused to post a message (code 230001: no message)."


async def test_an_http_error_is_a_failure_even_when_the_body_says_code_0(make_settings):
    from handlers.feishu import FeishuError

    async with sender(make_settings) as (fake, adapter, _waits):
        fake.fail(1, status=400, code=0, msg="", path="/open-apis/im/")
        with pytest.raises(FeishuError) as caught:
            await post(adapter)
        assert str(caught.value) == "Feishu refused to post a message (code 0: no message)."


async def test_a_reply_without_a_code_is_judged_by_its_http_status(make_settings):
    from handlers.feishu import FeishuError

    async with sender(make_settings) as (fake, adapter, _waits):
        fake.fail(1, status=200, code=None, msg="ok", path="/open-apis/application/")
        assert await adapter.api.raw("read_scopes", "GET", "/open-apis/application/v6/scopes") == {
            "code": None,
            "msg": "ok",
        }
        fake.fail(1, status=400, code=None, msg="bad request", path="/open-apis/im/")
        with pytest.raises(FeishuError) as caught:
            await post(adapter)
        assert str(caught.value) == "Feishu refused to post a message (code -1: bad request)."
        assert caught.value.code == -1 and fake.messages == []


# --- the tenant token ----------------------------------------------------------------------------------------


async def test_a_rate_limited_token_fetch_is_waited_out(make_settings):
    async with sender(make_settings) as (fake, adapter, waits):
        fake.throttle(2, path="/open-apis/auth/")
        await post(adapter)
        assert len(fake.messages) == 1 and len(waits) == 2
        assert_backoffs(waits)
        assert len([c for c in fake.calls if c.path.startswith("/open-apis/auth/")]) == 3


async def test_a_token_fetch_rate_limited_past_ten_waits_says_so_and_does_not_blame_the_credentials(make_settings):
    from handlers.feishu import FeishuError

    async with sender(make_settings) as (fake, adapter, waits):
        fake.throttle(11, path="/open-apis/auth/")
        with pytest.raises(FeishuError) as caught:
            await post(adapter)
        assert len(waits) == 10 and fake.messages == []
        assert "kept rate-limiting" in str(caught.value) and "FEISHU_APP_SECRET" not in str(caught.value)


async def test_any_http_429_is_waited_out_whatever_its_code(make_settings):
    async with sender(make_settings) as (fake, adapter, waits):
        fake.fail(1, status=429, code=1000005, msg="too many requests", path="/open-apis/im/")
        await post(adapter)
        assert len(waits) == 1 and len(fake.messages) == 1


async def test_wrong_app_credentials_are_one_sentence_without_the_secret(make_settings):
    from handlers.feishu import FeishuError

    async with sender(make_settings) as (fake, adapter, waits):
        fake.app_secret = "rotated-secret"
        with pytest.raises(FeishuError) as caught:
            await post(adapter)
        sentence = str(caught.value)
        assert "FEISHU_APP_ID and FEISHU_APP_SECRET" in sentence and "code 10014" in sentence
        assert SECRET not in sentence and "\n" not in sentence
        assert waits == [] and fake.api_calls() == []  # nothing retried, nothing sent


# --- the 30 KB request body --------------------------------------------------------------------------------


def card_with_body_of(size: int) -> dict:
    """A card whose message-create request body is exactly `size` bytes as the SDK sends it."""
    from handlers.feishu.api import CreateMessageRequestBody, body_bytes

    def body_size(text: str) -> int:
        body = (
            CreateMessageRequestBody.builder()
            .receive_id(GROUP)
            .msg_type("interactive")
            .content(R.card_json(card(text)))
            .uuid("x" * 34 + "-0")
            .build()
        )
        return body_bytes(type("Request", (), {"body": body})())

    text = "a" * (size - body_size(""))
    assert body_size(text) == size
    return card(text)


async def test_a_body_of_exactly_30_kb_is_sent_and_one_byte_more_is_refused_before_sending(make_settings):
    from handlers.feishu import FeishuError

    async with sender(make_settings) as (fake, adapter, _waits):
        ref = await adapter.platform.post_cards(GROUP, [card_with_body_of(30 * 1024)], base="b" * 34)
        assert sends(fake)[-1].size == 30 * 1024 and fake.message(ref.id)
        with pytest.raises(FeishuError) as caught:
            await adapter.platform.post_cards(GROUP, [card_with_body_of(30 * 1024 + 1)], base="c" * 34)
        assert caught.value.code == 230025 and len(sends(fake)) == 1


# --- pacing: Feishu's documented limits, on a fake clock --------------------------------------------------------


class FakeClock:
    """A clock that moves only when the pacer waits; the waits are recorded."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.waits: list[float] = []

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.waits.append(round(seconds, 6))
        self.now += seconds


def paced(adapter) -> FakeClock:
    from handlers.pacing import Pacer

    clock = FakeClock()
    adapter.api.pacer = Pacer(clock, clock.sleep)
    return clock


async def test_fifty_calls_a_second_for_the_whole_app(make_settings):
    async with sender(make_settings) as (fake, adapter, _waits):
        clock = paced(adapter)
        for i in range(50):  # one message to each of 50 chats: only the app's limit applies
            await post(adapter, chat=f"oc_chat{i:04d}")
        assert clock.waits == []
        await post(adapter, chat="oc_chat0050")
        assert clock.waits == [1.0] and len(fake.messages) == 51


async def test_five_messages_a_second_to_one_chat(make_settings):
    async with sender(make_settings) as (fake, adapter, _waits):
        clock = paced(adapter)
        for i in range(5):
            await post(adapter, f"message {i}")
        assert clock.waits == []
        await post(adapter, "message 5")
        assert clock.waits == [1.0]
        assert [fake.text_of(m) for m in fake.messages] == [f"message {i}" for i in range(6)]  # in order


async def test_five_edits_a_second_to_one_message(make_settings):
    async with sender(make_settings) as (fake, adapter, _waits):
        ref = await post(adapter)
        clock = paced(adapter)
        for i in range(5):
            await adapter.platform.patch(ref.id, card(f"edit {i}"))
        assert clock.waits == []
        await adapter.platform.patch(ref.id, card("edit 5"))
        assert clock.waits == [1.0] and fake.text_of(fake.message(ref.id)) == "edit 5"


async def test_ten_streaming_updates_a_second_to_one_card(make_settings):
    async with sender(make_settings) as (fake, adapter, _waits):
        card_id = await adapter.platform.create_card(R.answer_card("", streaming=True, lang="en"))
        clock = paced(adapter)
        for i in range(1, 11):
            await adapter.platform.set_card_text(card_id, f"text {i}", i)
        assert clock.waits == []
        await adapter.platform.set_card_text(card_id, "text 11", 11)
        assert clock.waits == [1.0] and fake.cards[card_id].history[-1] == (11, "text 11")


async def test_a_thousand_calls_a_minute_for_the_whole_app(make_settings):
    async with sender(make_settings) as (fake, adapter, _waits):
        clock = paced(adapter)
        for _ in range(1001):  # light calls, one after another, as fast as the per-second limit allows
            await adapter.api.raw("read_scopes", "GET", "/open-apis/application/v6/scopes")
        # 50 a second: a one-second wait after every 50 calls; the 1001st waits for the minute's end
        assert clock.waits == [1.0] * 19 + [41.0]
        assert len(fake.api_calls("/open-apis/application/")) == 1001
