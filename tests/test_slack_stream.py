"""What Slack receives while an answer streams: the exact pieces the escaper releases for long
words (chat.startStream / chat.appendStream as the fake Slack recorded them), the size each
streamed message is filled to, and that no message cut splits an HTML entity."""

from __future__ import annotations

import asyncio

import pytest

from bot.core.chat_platform import Conversation
from bot.render import slack as R
from bot.runtime.app import App
from bot.runtime.services import Services
from handlers.slack import Pacing, build_slack
from handlers.slack.stream import STREAM_MESSAGE_BYTES

HOUR = Pacing(per_second=500, burst=100, edit_interval=3600, stream_interval=3600)


def _conv(thread: str) -> Conversation:
    return Conversation("slack", "C9", "U0001", thread=thread, extra={"team_id": "T0001"})


def _sent(call) -> str:
    params = call.params
    return "".join(c.get("text", "") for c in params.get("chunks") or []) + (params.get("markdown_text") or "")


def _received(slack) -> list[str]:
    """Every non-empty piece of text Slack was given, in order."""
    calls = [c for c in slack.calls if c.method in ("chat.startStream", "chat.appendStream", "chat.stopStream")]
    return [t for t in (_sent(c) for c in calls) if t]


# first piece of the answer (fed whole) → what Slack shows first: the escaper releases a word
# without whitespace only past 256 characters, keeping its last 16 back, and never cuts within
# 10 characters after an "@" or right after a "]" (a broadcast or link could straddle the cut)
FIRST_SHOWN = {
    "a word of 300": ("a" * 300, "a" * 284),
    "a word of exactly 256 is held": ("a" * 256, "a" * 256 + " "),
    "a short word is held": ("a" * 20, "a" * 20 + " "),
    "an @ 11 characters before the cut": ("a" * 273 + "@" + "b" * 26, "a" * 273 + "@" + "b" * 10),
    "a ] right before the cut": ("a" * 283 + "]" + "b" * 16, "a" * 283),
    "a lone @ then brackets": ("@" + "]" * 299, R.esc("@" + "]" * 299) + " "),
}


@pytest.mark.parametrize("case", list(FIRST_SHOWN))
async def test_a_long_word_is_released_in_the_pieces_no_pattern_can_straddle(platform, slack, case):
    word, first = FIRST_SHOWN[case]
    answer = word + " end"

    async def pieces():
        yield word
        yield " end"

    await platform.stream("C9", "1.000060", pieces(), conv=_conv("1.000060"))
    received = _received(slack)
    assert received[0] == first
    assert "".join(received) == R.esc(answer)
    (message,) = slack.replies("C9", "1.000060")
    assert message.text == R.esc(answer)


async def test_a_single_line_break_is_shown_before_the_next_word_arrives(platform, slack):
    async def pieces():
        yield "\n"
        yield "y" * 300

    await platform.stream("C9", "1.000061", pieces(), conv=_conv("1.000061"))
    received = _received(slack)
    assert received[0] == "\n"
    assert "".join(received) == "\n" + "y" * 300


async def test_a_one_character_answer_is_one_streamed_message_whose_id_is_returned(platform, slack):
    async def pieces():
        yield "x"

    ref = await platform.stream("C9", "1.000062", pieces(), conv=_conv("1.000062"))
    (message,) = slack.replies("C9", "1.000062")
    assert message.text == "x" and message.ts == ref.id


async def test_a_long_answer_fills_each_streamed_message_and_never_splits_an_entity(platform, slack):
    answer = "x&" + "a" * 25000  # "&" is sent as "&amp;": the cut must not fall inside it
    await platform.stream("C9", "1.000063", _one(answer), conv=_conv("1.000063"))
    messages = [m for m in slack.replies("C9", "1.000063") if m.streamed]
    sizes = [len(m.text.encode()) for m in messages]
    assert all(size <= STREAM_MESSAGE_BYTES for size in sizes)
    assert sizes[0] == STREAM_MESSAGE_BYTES - 8  # filled up to the room kept to close a code fence
    assert messages[0].text.startswith("x&amp;a")
    assert _received(slack)[0].startswith("x&amp;a")  # not "x", then the rest: no early cut before an entity
    assert "".join(m.text for m in messages) == R.esc(answer)


async def _one(text: str):
    yield text


@pytest.fixture
async def hourly(make_settings, slack, widgets):
    """A platform that pushes streamed text at most once an hour."""
    settings = make_settings(slack_bot_token=slack.token, slack_api_url=slack.url, default_repo=str(widgets.path))
    services = Services.build(settings)
    adapter = build_slack(settings, App.build(services).router, receive=False, pacing=HOUR)
    yield adapter.platform
    await adapter.close()
    await services.aclose()


@pytest.mark.parametrize("native", [True, False])
async def test_an_answer_ending_while_its_next_push_waits_is_finished_at_once(hourly, slack, native):
    # the second piece waits for the (hour-long) interval; the answer's end must not wait for it
    async def pieces():
        yield "first "
        yield "second "
        yield "third"

    conv = _conv("1.000064") if native else None
    await asyncio.wait_for(hourly.stream("C9", "1.000064", pieces(), conv=conv), 120)
    (message,) = slack.replies("C9", "1.000064")
    assert R.md_to_mrkdwn(message.text) == R.md_to_mrkdwn("first second third") and not message.streaming
