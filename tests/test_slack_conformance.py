"""Slack as the real service behaves (issue 9): what Slack refuses, what an attacker sends, and the
limits Slack does not document precisely. Same setup as test_slack_e2e.py: signed requests into
the real endpoint, the real slack_sdk/Bolt against the fake Web API, real Redis, real git."""

from __future__ import annotations

import asyncio
import json
import logging
from datetime import datetime
from urllib.parse import quote

import pytest

from bot.core.chat_platform import CommitChoice, CommitDetails, Conversation, Notice
from bot.core.models import Analysis, ChangeType, DigestEntry, Importance
from bot.render import slack as R
from bot.runtime.app import App
from bot.runtime.services import Services
from handlers.slack import Pacing, build_slack
from tests.fakes.slack_server import CUMULATIVE_LIMIT, check_blocks
from tests.gitrepo import GitRepo
from tests.shared.slack import CHANNEL, HIGH_TITLE, SH, buttons, by_title, digest_thread, shown, shown_eph
from tests.shared.slack_render import commit, digest

# --- 1. unique action_ids ------------------------------------------------------------------------------


def test_the_fake_refuses_duplicate_action_ids_in_a_message_or_view():
    button = {"type": "button", "text": {"type": "plain_text", "text": "x"}, "value": "v"}
    twice = [{"type": "actions", "elements": [dict(button, action_id="same"), dict(button, action_id="same")]}]
    apart = [
        {"type": "actions", "elements": [dict(button, action_id="same")]},
        {"type": "section", "text": {"type": "mrkdwn", "text": "x"}, "accessory": dict(button, action_id="same")},
    ]
    assert "duplicate action_id same" in " ".join(check_blocks(twice))
    assert "duplicate action_id same" in " ".join(check_blocks(apart))


def test_commit_choice_gives_every_button_its_own_action_id():
    choice = CommitChoice("what broke?", tuple(commit(i) for i in range(1, 31)), lang="en")
    for payload in R.render(choice, thread="1.000001"):
        assert check_blocks(payload["blocks"]) == []
        ids = [e["action_id"] for b in payload["blocks"] if b["type"] == "actions" for e in b["elements"]]
        assert len(ids) == len(set(ids)) and all(R.ACTION_CHOOSE_PATTERN.match(i) for i in ids)


async def test_ambiguous_question_gets_a_choice_and_each_button_answers(make_bot, slack, widgets):
    bot = await make_bot()
    parent, _ = await digest_thread(bot, slack)
    await bot.sender.event(
        bot.sender.message_event("<@UBOT> what could this break?", kind="app_mention", thread_ts=parent.ts)
    )
    await bot.settle()
    assert slack.block_errors == []  # Slack would have refused the whole message
    choice = next(m for m in slack.replies(CHANNEL, parent.ts) if "Which commit do you mean?" in shown(m))
    choices = buttons(choice)
    assert len(choices) == 3
    high = next(b for b in choices.values() if json.loads(b["value"])["sha"] == widgets.shas["high"])
    status, _ = await bot.sender.block_action(
        high["action_id"], value=high["value"], message_ts=choice.ts, thread_ts=parent.ts
    )
    assert status == 200
    await bot.settle()
    answer = [m for m in slack.replies(CHANNEL, parent.ts) if m.streamed][-1]
    assert "export_v1" in answer.text


# --- 2. the slack-sdk floor ----------------------------------------------------------------------------


def test_the_slack_sdk_floor_has_chat_stream():
    """AsyncWebClient.chat_stream arrived in slack-sdk 3.37.0, but its stream's `ts` (which the bot
    needs to continue, edit and close a streamed answer) is public only from 3.43.0: with 3.37.0-3.42.0
    installed every answer fell back to edits (checked by running these tests against each)."""
    from pathlib import Path

    from slack_sdk.web.async_client import AsyncWebClient

    text = (Path(__file__).resolve().parent.parent / "pyproject.toml").read_text(encoding="utf-8")
    floor = next(line for line in text.splitlines() if '"slack-sdk>=' in line).split(">=")[1].split(",")[0]
    assert tuple(int(x) for x in floor.split(".")) >= (3, 43)
    assert hasattr(AsyncWebClient, "chat_stream")


# --- 3. chat.appendStream is Tier 4 ----------------------------------------------------------------------


@pytest.fixture
async def paced_platform(make_settings, slack, widgets):
    """The platform with the production stream pace (posting itself fast)."""
    settings = make_settings(slack_bot_token=slack.token, slack_api_url=slack.url, default_repo=str(widgets.path))
    services = Services.build(settings)
    adapter = build_slack(
        settings, App.build(services).router, receive=False, pacing=Pacing(per_second=500, burst=100, edit_interval=1.0)
    )
    yield adapter.platform
    await adapter.close()
    await services.aclose()


async def test_stream_appends_are_about_a_second_apart_or_big(paced_platform, slack):
    async def trickle():
        for i in range(36):
            yield f"word{i:02d} " * 3  # 21 characters every 50 ms: far more often than Tier 4 allows
            await asyncio.sleep(0.05)

    conv = Conversation("slack", "C9", "U0001", thread="1.000010", extra={"team_id": "T0001"})
    await paced_platform.stream("C9", "1.000010", trickle(), conv=conv)
    (message,) = [m for m in slack.replies("C9", "1.000010") if m.streamed]
    assert message.text == "".join(f"word{i:02d} " * 3 for i in range(36))
    appends = slack.calls_to("chat.appendStream")
    assert appends
    # The last append carries what was left when the answer ended; before it, each append waited
    # about a second after the one before or carried at least 256 characters. (A loaded machine
    # only makes the gaps longer.)
    previous = slack.calls_to("chat.startStream")[0]
    for call in appends[:-1]:
        size = len("".join(c["text"] for c in call.params.get("chunks") or []) + call.params.get("markdown_text", ""))
        assert call.at - previous.at >= 0.5 or size >= 256, (call.at - previous.at, size)
        previous = call


# --- 4. any streaming failure before the first chunk falls back ---------------------------------------------


async def test_any_error_starting_a_stream_falls_back_to_a_message(platform, slack):
    async def answer():
        yield "The answer "
        yield "is forty-two."

    slack.fail("chat.startStream", error="internal_error")  # not one of the known "unavailable" codes
    conv = Conversation("slack", "C9", "U0001", thread="1.000011", extra={"team_id": "T0001"})
    ref = await platform.stream("C9", "1.000011", answer(), conv=conv)
    (message,) = slack.replies("C9", "1.000011")
    assert message.ts == ref.id and not message.streamed
    assert message.text == "The answer is forty-two."
    assert platform.native_streaming is True  # one failure does not switch streaming off


# --- 5. sizes counted in UTF-8 bytes ----------------------------------------------------------------------


async def test_chinese_content_fits_slacks_limit_in_bytes(platform, slack):
    body = "这个改动重写了导出模块的分页逻辑，" * 330  # ~5,600 characters, ~16,800 bytes
    entry = DigestEntry(
        commit(1, title="重构：导出分页"),
        Analysis(ChangeType.REFACTOR, Importance.HIGH, "影响导出", body, impact=body[:2000]),
    )
    await platform.send("C9", CommitDetails(digest([entry], lang="zh"), entry))
    assert slack.block_errors == []  # the fake counts bytes, as Slack may
    (top,) = slack.top_level("C9")
    messages = [top] + slack.replies("C9", top.ts)
    assert len(messages) >= 2
    for m in messages:
        assert sum(len(json.dumps(b, ensure_ascii=False).encode()) for b in m.blocks) <= CUMULATIVE_LIMIT


async def test_a_chinese_stream_splits_by_bytes(platform, slack):
    answer = "导出模块的分页逻辑被重写了。" * 1000  # 14,000 characters, 42,000 bytes

    async def pieces():
        for i in range(0, len(answer), 500):
            yield answer[i : i + 500]

    conv = Conversation("slack", "C9", "U0001", thread="1.000012", extra={"team_id": "T0001"})
    await platform.stream("C9", "1.000012", pieces(), conv=conv)
    messages = [m for m in slack.replies("C9", "1.000012") if m.streamed]
    assert "".join(m.text for m in messages) == answer
    assert len(messages) >= 4 and all(len(m.text.encode()) <= 12000 for m in messages)


# --- 6. crash recovery reads every page ----------------------------------------------------------------


async def test_keyed_send_after_a_crash_finds_its_message_beyond_the_first_page(platform, slack):
    slack.page_size = 2  # Slack pages conversations.history; make the first page small
    await platform.send("C9", Notice("the 09:30 digest"), key="push:1")
    for i in range(5):  # the channel moves on
        await platform.send("C9", Notice(f"chatter {i}"))
    # The process crashed after posting but before recording where: only "pending" is known.
    await platform.store.set_json(platform.store.k("slack", "sent", "push:1"), {"pending": True}, ttl=600)
    await platform.send("C9", Notice("the 09:30 digest"), key="push:1")
    assert [shown(m) for m in slack.top_level("C9")].count("the 09:30 digest") == 1
    assert len(slack.calls_to("conversations.history")) >= 3  # it followed the cursor


# --- 7. malformed requests ----------------------------------------------------------------------------


async def test_malformed_requests_get_a_4xx_and_one_log_line(make_bot, slack, caplog):
    bot = await make_bot()
    caplog.set_level(logging.INFO)
    form = "application/x-www-form-urlencoded"
    cases = [
        (
            "not a timestamp",
            dict(
                body=bot.sender.slash_body("help"),
                content_type=form,
                signed=False,
                headers={"X-Slack-Request-Timestamp": "soon", "X-Slack-Signature": "v0=00"},
            ),
            401,
        ),
        ("bad JSON", dict(body='{"type": "event_callback", ', content_type="application/json"), 400),
        ("a JSON array", dict(body='[{"type": "event_callback"}]', content_type="application/json"), 400),
        ("garbage payload", dict(body="payload=" + quote("{garbage"), content_type=form), 400),
        ("payload not an object", dict(body="payload=" + quote("[1, 2]"), content_type=form), 400),
        # well-formed JSON objects whose fields have the wrong shape for Bolt
        (
            "event not an object",
            dict(
                body=json.dumps({"type": "event_callback", "event": "x", "event_id": "Ev1"}),
                content_type="application/json",
            ),
            400,
        ),
        (
            "actions not a list",
            dict(body="payload=" + quote(json.dumps({"type": "block_actions", "actions": "x"})), content_type=form),
            400,
        ),
        (
            "view not an object",
            dict(body="payload=" + quote(json.dumps({"type": "view_submission", "view": "x"})), content_type=form),
            400,
        ),
    ]
    for name, request, expected in cases:
        caplog.clear()
        status, _ = await bot.sender.post(request.pop("body"), request.pop("content_type"), **request)
        assert status == expected, name
        assert not [r for r in caplog.records if r.exc_info], name  # no traceback
        assert len([r for r in caplog.records if r.levelno >= logging.WARNING]) == 1, name
    await bot.settle()
    assert slack.ephemerals == [] and slack.top_level(CHANNEL) == []


# --- 8. replays run once ---------------------------------------------------------------------------------


async def test_a_replayed_slash_command_runs_once(make_bot, slack):
    bot = await make_bot()
    body = bot.sender.slash_body("help")
    stamp = int(datetime.now().timestamp())
    for _ in range(3):  # the attacker resends the captured, validly signed request
        status, _ = await bot.sender.post(body, "application/x-www-form-urlencoded", timestamp=stamp)
        assert status == 200
    await bot.settle()
    assert len(slack.ephemerals) == 1
    await bot.sender.slash("help")  # the user typing it again is a new command
    await bot.settle()
    assert len(slack.ephemerals) == 2


async def test_a_replayed_click_runs_once(make_bot, slack, widgets):
    bot = await make_bot()
    parent, replies = await digest_thread(bot, slack)
    high = by_title(replies, HIGH_TITLE)
    value = buttons(high)["digest_details"]["value"]
    body = bot.sender.block_action_body("digest_details", value=value, message_ts=high.ts, thread_ts=parent.ts)
    stamp = int(datetime.now().timestamp())
    for _ in range(3):  # one click, then two replays of the captured request
        assert (await bot.sender.post(body, "application/x-www-form-urlencoded", timestamp=stamp))[0] == 200
    await bot.settle()
    assert len(slack.ephemerals) == 1


# --- 9. the repository policy on every click -----------------------------------------------------------


@pytest.fixture
def private_repo(tmp_path) -> GitRepo:
    """A local repository on the bot's machine that chat users must not reach."""
    r = GitRepo(tmp_path / "private")
    r.shas = {
        "secret": r.commit(
            "chore: rotate the PRIVATE-SIGNING-KEY", {"key.txt": "k\n"}, when=datetime(2026, 1, 28, 10, tzinfo=SH)
        )
    }
    return r


@pytest.mark.parametrize("action", ["digest_details", "digest_choose_0"])
async def test_a_click_naming_a_local_path_does_not_read_it(make_bot, slack, private_repo, action):
    bot = await make_bot()
    forged = json.dumps(
        {"repo": str(private_repo.path), "sha": private_repo.shas["secret"], "lang": "en", "question": "what is in it?"}
    )
    status, _ = await bot.sender.block_action(action, value=forged, message_ts="1.000099")
    assert status == 200
    await bot.settle()
    assert "PRIVATE-SIGNING-KEY" not in slack.all_text()
    (refusal,) = slack.ephemerals
    assert "In chat you can name GitHub repositories (owner/name)" in R.unescape(shown_eph(refusal))


async def test_a_question_form_naming_a_local_path_does_not_read_it(make_bot, slack, private_repo):
    bot = await make_bot()
    view = R.ask_modal(
        {"sha": private_repo.shas["secret"], "lang": "en"},
        json.dumps({"v": {"repo": str(private_repo.path), "sha": private_repo.shas["secret"]}, "c": CHANNEL}),
    )
    status, _ = await bot.sender.view_submission(view, {"question": {"question": "what is in it?"}})
    assert status == 200
    await bot.settle()
    assert "PRIVATE-SIGNING-KEY" not in slack.all_text()
    assert len(slack.ephemerals) == 1


# --- 10. control characters ------------------------------------------------------------------------------


async def test_control_characters_never_reach_slack(platform, slack):
    hostile = "fix: \x1b]0;owned\x07 title\x00 with \u202egnp.exe\u202c and \x9b2J"
    entry = DigestEntry(commit(1, title=hostile), None, error="not analysed")
    await platform.send("C9", CommitDetails(digest([entry]), entry))
    text = slack.all_text()
    for bad in ("\x1b", "\x07", "\x00", "\u202e", "\u202c", "\x9b", "\\u001b", "\\u0007"):
        assert bad not in text, repr(bad)
    assert "fix: ]0;owned title with gnp.exe and 2J" in R.unescape(shown(slack.top_level("C9")[0]))


def test_control_characters_are_stripped_by_every_renderer():
    from bot.core.chat_platform import DigestParent
    from bot.render.feishu import render_cards
    from bot.render.markdown import render_report
    from bot.render.text import render_text

    hostile = "fix: \x1b]0;owned\x07 title\x00 with \u202egnp.exe\u202c \u2066x\u2069 and \x9b2J\r"
    entry = DigestEntry(
        commit(1, title=hostile, body="body \x1b[2J\x1bc"),
        Analysis(ChangeType.FEATURE, Importance.HIGH, "why \x07", "sum \x1b[31mred", impact="\u202e"),
    )
    d = digest([entry], headline=("head \x1b]2;x\x07",))
    outputs = {
        "markdown": render_report([d]),
        "text": render_text(DigestParent(d)) + render_text(CommitDetails(d, entry)),
        "slack": json.dumps(R.render(CommitDetails(d, entry)) + R.render(DigestParent(d)), ensure_ascii=False),
        "feishu": json.dumps(render_cards(CommitDetails(d, entry), lang="en"), ensure_ascii=False),
    }
    for name, out in outputs.items():
        for bad in ("\x1b", "\x07", "\x00", "\x9b", "\r", "\u202e", "\u202c", "\u2066", "\u2069"):
            assert bad not in out, (name, repr(bad))
        assert "\\u001b" not in out and "\\u0007" not in out, name  # nor escaped in JSON


# --- the bot is not in the channel -----------------------------------------------------------------------


async def test_a_digest_where_the_bot_is_not_a_member_says_to_invite_it(make_bot, slack):
    bot = await make_bot()
    slack.not_joined.add("C0002")
    url = slack.response_url("cmd-not-in")
    status, _ = await bot.sender.slash("2026-01-28", channel="C0002", response_url=url)
    assert status == 200
    await bot.settle()
    assert slack.top_level("C0002") == []
    assert slack.calls_to("chat.postMessage")  # it tried, and Slack refused
    told = [R.unescape(json.dumps(p, ensure_ascii=False)) for p in slack.webhook_posts + slack.ephemerals]
    assert len(told) == 1 and "not_in_channel" in told[0] and "/invite" in told[0]
