"""Slack end to end: signed requests into the real HTTP endpoint (handlers/web.py + the adapter's
routes), the real slack_sdk/Bolt talking to a fake Slack Web API on loopback, real Redis, a real
local git repository as the repository; the fake LLM where an LLM is needed."""

from __future__ import annotations

import asyncio
import json
import re
import time
from pathlib import Path

import pytest

from bot.render import slack as R
from bot.runtime.app import App
from bot.runtime.services import Services
from handlers.slack import Pacing, build_slack
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.slack_server import FakeSlack, SlackSender
from tests.shared.slack import (
    CHANNEL,
    FAST,
    HIGH_TITLE,
    LOW_TITLE,
    MEDIUM_TITLE,
    answer_pieces,
    buttons,
    by_title,
    digest_thread,
    shown,
    shown_eph,
)

ROOT = Path(__file__).resolve().parent.parent
INJECTIONS = ("<!channel>", "<!here>", "<@U1>", "<https://evil.example|docs>")


# --- helpers ----------------------------------------------------------------------------------------


def chat_calls(slack: FakeSlack) -> list[str]:
    return [m for m in slack.methods() if m.startswith(("chat.", "views.", "files."))]


def assert_inert(text: str) -> None:
    for bad in INJECTIONS:
        assert bad not in text, bad
    assert not re.search(r"(?<![\w\u200d])@(here|channel|everyone)\b", text)


# --- /digest ---------------------------------------------------------------------------------------


async def test_digest_command_posts_parent_then_thread(make_bot, slack, widgets):
    bot = await make_bot()
    parent, replies = await digest_thread(bot, slack)

    first_post = slack.calls_to("chat.postMessage")[0].params
    assert "Building the 2026-01-28 digest for acme/widgets" in R.unescape(first_post["text"])  # progress first
    assert parent.edits >= 1  # …then replaced by the digest
    assert len(slack.top_level(CHANNEL)) == 1
    text = shown(parent)
    assert "Daily update report (2026-01-28) · acme/widgets" in text
    assert "3 commits on 2026-01-28 | 🔴 high 1 | 🟡 medium 1 | 🟢 low 1" in text
    assert HIGH_TITLE in text and "breaking change" in text  # the high item and its reason
    assert LOW_TITLE not in text
    assert f"https://github.com/acme/widgets/commit/{widgets.shas['high']}" in json.dumps(parent.blocks)

    assert [r.thread_ts for r in replies] == [parent.ts] * 3
    high, medium, low = (by_title(replies, t) for t in (HIGH_TITLE, MEDIUM_TITLE, LOW_TITLE))
    assert "🔴 High" in shown(high) and "⚠️ Risks" in shown(high) and "Rule-based analysis" in shown(high)
    assert "🟡 Medium" in shown(medium) and "--since" in shown(medium)
    assert "🟢 Low importance (1)" in shown(low) and replies[-1] is low  # the grouped low ones come last
    assert set(buttons(high)) == {"digest_ask", "digest_details", "digest_level_too_high", "digest_level_too_low"}
    assert json.loads(buttons(high)["digest_ask"]["value"])["sha"] == widgets.shas["high"]
    assert buttons(low)["digest_low"]["type"] == "static_select"
    # every post: no link unfurling, within Slack's limits (the fake refuses anything else)
    assert all(c.params.get("unfurl_links") is False for c in slack.calls_to("chat.postMessage"))
    assert slack.block_errors == []


async def test_hostile_commit_text_is_inert_in_every_payload(make_bot, slack):
    bot = await make_bot()
    _parent, replies = await digest_thread(bot, slack)
    everything = slack.all_text()
    assert_inert(everything)
    assert by_title(replies, MEDIUM_TITLE)  # still readable as text


async def test_bad_commands_get_one_private_line_and_usage(make_bot, slack):
    bot = await make_bot()
    for text, expected, usage in (
        ("frobnicate", "Unknown command 'frobnicate'", "/digest"),
        ("subscribe", "Name the repository to subscribe to.", "/digest subscribe owner/repo"),
        ("2026-13-45", "'2026-13-45' is not a real calendar date.", "/digest [DATE|"),
    ):
        before = len(slack.ephemerals)
        status, _ = await bot.sender.slash(text)
        assert status == 200
        await bot.settle()
        new = slack.ephemerals[before:]
        assert len(new) == 1, (text, new)
        line = R.unescape(shown_eph(new[0]))
        assert line.startswith("⚠️") and expected in line
        assert usage in line  # the usage (or the help) comes with it
        assert new[0]["user"] == "U0001" and new[0]["channel"] == CHANNEL
    assert slack.top_level(CHANNEL) == []


async def test_private_reply_falls_back_to_response_url(make_bot, slack):
    bot = await make_bot()
    url = slack.response_url("cmd1")
    status, _ = await bot.sender.slash("help", channel="CNOTIN1", response_url=url)
    assert status == 200
    await bot.settle()
    assert slack.ephemerals == []
    assert len(slack.webhook_posts) == 1 and slack.webhook_posts[0]["response_type"] == "ephemeral"
    assert "/digest subscribe owner/repo" in R.unescape(
        json.dumps(slack.webhook_posts[0]["blocks"], ensure_ascii=False)
    )


async def test_only_admins_may_change_subscriptions(make_bot, slack, widgets):
    bot = await make_bot(slack_admin_users="UADMIN")
    repo = str(widgets.path)
    for command in (f"subscribe {repo} at 09:30 tz UTC lang en", f"unsubscribe {repo}", "config lang zh"):
        before = len(slack.ephemerals)
        await bot.sender.slash(command, user="U0001")
        await bot.settle()
        assert len(slack.ephemerals) == before + 1
        assert "Only the bot's admins can change this channel's subscriptions." in shown_eph(slack.ephemerals[-1])
    assert slack.top_level(CHANNEL) == []
    assert await bot.chat.subs.for_channel("slack", CHANNEL) == []


async def test_subscribe_list_unsubscribe(make_bot, slack, widgets):
    bot = await make_bot(slack_admin_users="UADMIN")
    repo = str(widgets.path)
    await bot.sender.slash(f"subscribe {repo} at 09:30 tz UTC lang en", user="UADMIN")
    await bot.settle()
    confirmation = shown(slack.top_level(CHANNEL)[-1])
    assert "✅ Subscribed to" in confirmation and "09:30 (UTC)" in confirmation
    assert [s.at for s in await bot.chat.subs.for_channel("slack", CHANNEL)] == ["09:30"]

    await bot.sender.slash("list", user="U0001")
    await bot.settle()
    listing = R.unescape(shown_eph(slack.ephemerals[-1]))
    assert "This channel's subscriptions:" in listing and "daily at 09:30 (UTC)" in listing

    await bot.sender.slash(f"unsubscribe {repo}", user="UADMIN")
    await bot.settle()
    assert "✅ Unsubscribed from" in shown(slack.top_level(CHANNEL)[-1])
    assert await bot.chat.subs.for_channel("slack", CHANNEL) == []
    await bot.sender.slash("list", user="U0001")  # anyone may look
    await bot.settle()
    assert "No subscriptions here yet" in R.unescape(shown_eph(slack.ephemerals[-1]))


# --- security ---------------------------------------------------------------------------------------


async def test_bad_signature_and_stale_timestamp_are_rejected(make_bot, slack):
    bot = await make_bot()
    body = bot.sender.slash_body("2026-01-28")
    cases = [dict(secret="not-the-secret"), dict(timestamp=int(time.time()) - 600), dict(signed=False)]
    for signing in cases:
        status, _ = await bot.sender.post(body, "application/x-www-form-urlencoded", **signing)
        assert status == 401, signing
    event = bot.sender.message_event("<@UBOT> 2026-01-28", kind="app_mention")
    status, _ = await bot.sender.event(event, secret="forged")
    assert status == 401
    await bot.settle()
    assert chat_calls(slack) == [] and slack.ephemerals == []


# --- events and Q&A ---------------------------------------------------------------------------------


async def test_question_in_thread_is_answered_in_that_thread_offline(make_bot, slack, widgets):
    bot = await make_bot()
    parent, _ = await digest_thread(bot, slack)
    event = bot.sender.message_event(
        f"<@UBOT> what does {widgets.shas['high'][:7]} break?", kind="app_mention", thread_ts=parent.ts
    )
    status, _ = await bot.sender.event(event)
    assert status == 200
    await bot.settle()
    start = slack.calls_to("chat.startStream")
    assert len(start) == 1
    assert start[0].params["thread_ts"] == parent.ts
    assert start[0].params["recipient_user_id"] == "U0001" and start[0].params["recipient_team_id"] == "T0001"
    answer = [m for m in slack.replies(CHANNEL, parent.ts) if m.streamed][-1]
    assert not answer.streaming  # stopped
    assert "No LLM is configured" in R.unescape(answer.text) and "export_v1" in answer.text


async def test_duplicate_and_paired_events_give_one_answer(make_bot, slack, widgets):
    bot = await make_bot()
    parent, _ = await digest_thread(bot, slack)
    ts = f"{time.time():.6f}"
    text = f"<@UBOT> why {widgets.shas['low'][:7]}?"
    mention = bot.sender.message_event(text, kind="app_mention", thread_ts=parent.ts, ts=ts)
    message = bot.sender.message_event(text, thread_ts=parent.ts, ts=ts)
    assert (await bot.sender.event(mention, event_id="EvDUP1"))[0] == 200
    assert (await bot.sender.event(mention, event_id="EvDUP1", retry_num=1))[0] == 200  # Slack's retry
    assert (await bot.sender.event(message, event_id="EvDUP2"))[0] == 200  # same user message, other event
    await bot.settle()
    assert len(slack.calls_to("chat.startStream")) == 1


async def test_bots_and_edits_are_ignored(make_bot, slack):
    bot = await make_bot()
    parent, _ = await digest_thread(bot, slack)
    before = chat_calls(slack)
    for event in (
        bot.sender.message_event("<@UBOT> hello", thread_ts=parent.ts, user="UBOT", bot_id="BBOT"),  # ourselves
        bot.sender.message_event("<@UBOT> hello", thread_ts=parent.ts, user="UOTHER", bot_id="B999"),  # another bot
        bot.sender.message_event("<@UBOT> hello", thread_ts=parent.ts, subtype="message_changed"),
        bot.sender.message_event("<@UBOT> hello", thread_ts=parent.ts, subtype="message_deleted"),
        bot.sender.message_event("just chatting about list of things"),  # top level, not for the bot
    ):
        assert (await bot.sender.event(event))[0] == 200
    await bot.settle()
    assert chat_calls(slack) == before and slack.ephemerals == []


async def test_llm_answer_streams_and_follow_up_keeps_context(make_settings, slack, widgets, make_bot):
    with FakeOpenAI() as llm:
        llm.responder = _llm_responder
        bot = await make_bot(openai_base_url=llm.url, openai_api_key="sk-test-key")
        parent, replies = await digest_thread(bot, slack)
        assert len(replies) >= 1

        ask = bot.sender.message_event(
            f"<@UBOT> what could {widgets.shas['medium'][:7]} break?", kind="app_mention", thread_ts=parent.ts
        )
        await bot.sender.event(ask)
        await bot.settle()
        answers = [m for m in slack.replies(CHANNEL, parent.ts) if m.streamed]
        assert len(answers) == 1
        assert "Scripts passing --since" in answers[0].text
        assert_inert(answers[0].text)  # the LLM's <!channel> is inert too
        assert len(slack.calls_to("chat.startStream")) == 1 and slack.calls_to("chat.stopStream")

        follow = bot.sender.message_event("<@UBOT> and how do I roll it back?", kind="app_mention", thread_ts=parent.ts)
        await bot.sender.event(follow)
        await bot.settle()
        streams = [r for r in llm.requests if r.get("stream")]
        assert len(streams) == 2
        prompt = json.dumps(streams[-1]["messages"], ensure_ascii=False)
        assert "what could" in prompt and "Scripts passing --since" in prompt  # the earlier turn
        assert "roll it back" in prompt
        assert len([m for m in slack.replies(CHANNEL, parent.ts) if m.streamed]) == 2


def _llm_responder(request: dict):
    from tests.fakes.openai_server import Reply, default_responder

    if request.get("stream"):
        return Reply(
            chunks=[
                "Scripts passing --since ",
                "on old versions will fail. ",
                "<!channel> ",
                "see [docs](https://evil.example) @here.",
            ],
            chunk_delay=0.01,
        )
    return default_responder(request)


async def test_streaming_unavailable_falls_back_to_edits(make_bot, slack, widgets):
    bot = await make_bot()
    slack.fail("chat.startStream", times=None, error="method_not_found")
    parent, _ = await digest_thread(bot, slack)
    await bot.sender.event(
        bot.sender.message_event(
            f"<@UBOT> what does {widgets.shas['high'][:7]} break?", kind="app_mention", thread_ts=parent.ts
        )
    )
    await bot.settle()
    replies = slack.replies(CHANNEL, parent.ts)
    answer = replies[-1]
    assert not answer.streamed and "No LLM is configured" in R.unescape(answer.text)
    assert "export_v1" in answer.text
    # later answers skip the unavailable method entirely
    await bot.sender.event(
        bot.sender.message_event(f"<@UBOT> and {widgets.shas['low'][:7]}?", kind="app_mention", thread_ts=parent.ts)
    )
    await bot.settle()
    assert len(slack.calls_to("chat.startStream")) == 1


async def test_ask_button_opens_a_form_and_answers_in_the_thread(make_bot, slack, widgets):
    bot = await make_bot()
    parent, replies = await digest_thread(bot, slack)
    high = by_title(replies, HIGH_TITLE)
    value = buttons(high)["digest_ask"]["value"]
    status, _ = await bot.sender.block_action(
        "digest_ask", value=value, message_ts=high.ts, thread_ts=parent.ts, trigger_id="trig-1"
    )
    assert status == 200
    await bot.settle()
    assert len(slack.views) == 1 and slack.views[0]["trigger_id"] == "trig-1"
    view = slack.views[0]["view"]
    assert view["callback_id"] == "digest_ask_modal"
    status, _ = await bot.sender.view_submission(view, {"question": {"question": "what could this break?"}})
    assert status == 200
    await bot.settle()
    thread = slack.replies(CHANNEL, parent.ts)
    header, answer = thread[-2], thread[-1]
    assert "❓ <@U0001> asked: what could this break?" in header.blocks[0]["text"]["text"]
    assert widgets.shas["high"][:7] in shown(header)
    assert answer.streamed and "export_v1" in answer.text


async def test_low_menu_details_and_details_button_are_private(make_bot, slack, widgets):
    bot = await make_bot()
    parent, replies = await digest_thread(bot, slack)
    high, low = by_title(replies, HIGH_TITLE), by_title(replies, LOW_TITLE)
    value = buttons(high)["digest_details"]["value"]
    await bot.sender.block_action("digest_details", value=value, message_ts=high.ts, thread_ts=parent.ts)
    await bot.settle()
    assert len(slack.ephemerals) == 1
    eph = slack.ephemerals[0]
    assert eph["user"] == "U0001" and eph["thread_ts"] == parent.ts
    text = R.unescape(shown_eph(eph))
    assert HIGH_TITLE in text and "⚠️ Risks" in text and "💡 Recommendations" in text

    menu = next(b for b in low.blocks if b["type"] == "actions")
    options = [o["value"] for g in menu["elements"][0]["option_groups"] for o in g["options"]]
    assert options == [f"ask:{widgets.shas['low']}", f"details:{widgets.shas['low']}"]
    await bot.sender.block_action(
        "digest_low", selected=options[1], block_id=menu["block_id"], message_ts=low.ts, thread_ts=parent.ts
    )
    await bot.settle()
    assert len(slack.ephemerals) == 2 and LOW_TITLE in R.unescape(shown_eph(slack.ephemerals[1]))
    assert len(slack.top_level(CHANNEL)) == 1 and len(slack.replies(CHANNEL, parent.ts)) == 3  # nothing public

    await bot.sender.block_action(
        "digest_low",
        selected=options[0],
        block_id=menu["block_id"],
        message_ts=low.ts,
        thread_ts=parent.ts,
        trigger_id="trig-low",
    )
    await bot.settle()
    assert slack.views[-1]["trigger_id"] == "trig-low"  # Ask from the menu opens the question form
    assert json.loads(slack.views[-1]["view"]["private_metadata"])["v"]["sha"] == widgets.shas["low"]


# --- rate limits and ordering ----------------------------------------------------------------------


async def test_429_storm_loses_nothing_and_keeps_thread_order(make_bot, slack):
    bot = await make_bot()
    reference, replies = await digest_thread(bot, slack)  # the order without any trouble
    order = [next(t for t in (HIGH_TITLE, MEDIUM_TITLE, LOW_TITLE) if t in shown(r)) for r in replies]
    assert sorted(order) == sorted((HIGH_TITLE, MEDIUM_TITLE, LOW_TITLE))
    posts_before = len(slack.calls_to("chat.postMessage"))
    slack.fail("chat.postMessage", times=8, status=429, retry_after="0.01")
    slack.fail("chat.update", times=2, status=429, retry_after="0.01")
    # two digests into the same channel at once
    await asyncio.gather(bot.sender.slash("2026-01-28"), bot.sender.slash("2026-01-28", user="U0002"))
    await bot.settle()
    parents = [p for p in slack.top_level(CHANNEL) if p.ts != reference.ts]
    assert len(parents) == 2
    for parent in parents:
        texts = [shown(r) for r in slack.replies(CHANNEL, parent.ts)]
        assert len(texts) == 3
        assert all(title in text for title, text in zip(order, texts))
        assert "Daily update report" in shown(parent)
    posts = len(slack.calls_to("chat.postMessage")) - posts_before
    assert posts == 2 * 4 + 8  # every post made it; the 8 refused ones were retried


# The scheduler as real processes (clock + worker, kills, two clocks): tests/test_processes.py.


# --- the platform's own behaviour, against the fake Web API ------------------------------------------


async def test_long_streamed_answer_continues_in_new_messages(platform, slack):
    from bot.core.chat_platform import Conversation

    code = "".join(f"+ line {i} & <tag{i}> @here\n" for i in range(900))
    answer = "Here is the diff:\n\n```diff\n" + code + "```\nThat is all."
    conv = Conversation("slack", "C9", "U0001", thread="1.000001", extra={"team_id": "T0001"})
    ref = await platform.stream("C9", "1.000001", answer_pieces(answer), conv=conv)
    messages = [m for m in slack.replies("C9", "1.000001") if m.streamed]
    assert len(messages) >= 3 and ref.id == messages[0].ts
    for m in messages:
        assert len(m.text) <= 12000 and m.text.count("```") % 2 == 0 and not m.streaming
        assert_inert(m.text)
    joined = "".join(m.text for m in messages)
    assert joined.replace("\n``````\n", "") == R.esc(answer)  # every character, fences closed and reopened


async def test_edit_fallback_is_throttled_and_complete(make_settings, slack, widgets):
    from bot.core.chat_platform import Conversation

    settings = make_settings(slack_bot_token=slack.token, slack_api_url=slack.url, default_repo=str(widgets.path))
    services = Services.build(settings)
    adapter = build_slack(
        settings, App.build(services).router, receive=False, pacing=Pacing(per_second=500, burst=100, edit_interval=1.0)
    )
    platform = adapter.platform
    slack.fail("chat.startStream", times=None, error="not_allowed_token_type")
    words = [f"word{i} " for i in range(400)]

    async def pieces():
        yield words[0]
        while not slack.calls_to("chat.postMessage"):  # the answer's message exists…
            await asyncio.sleep(0.01)
        for word in words[1:]:  # …then 399 pieces at once, well within one edit interval
            yield word

    conv = Conversation("slack", "C9", "U0001", thread="1.000002", extra={"team_id": "T0001"})
    try:
        await platform.stream("C9", "1.000002", pieces(), conv=conv)
    finally:
        await adapter.close()
        await services.aclose()
    message = slack.replies("C9", "1.000002")[-1]
    assert message.text == "".join(words) and not message.streamed
    assert len(slack.calls_to("chat.update")) <= 2  # the pieces were gathered into an edit, not one each
    assert platform.native_streaming is False


async def test_update_to_a_bigger_content_continues_in_its_thread(platform, slack):
    from bot.core.chat_platform import CommitDetails, Notice
    from bot.core.models import Analysis, ChangeType, DigestEntry, Importance
    from tests.shared.slack_render import commit, digest

    ref = await platform.send("C9", Notice("⏳ working…", "progress"))
    huge = Analysis(ChangeType.FEATURE, Importance.HIGH, "why", " ".join(f"w{i}" for i in range(6000)))
    entry = DigestEntry(commit(1), huge)
    await platform.update(ref, CommitDetails(digest([entry]), entry))
    top = slack.top_level("C9")
    assert len(top) == 1 and top[0].edits == 1 and "w0" in shown(top[0])
    rest = slack.replies("C9", top[0].ts)
    assert rest and "w5999" in shown(rest[-1]) and slack.block_errors == []


async def test_report_file_is_uploaded_into_the_thread(platform, slack):
    await platform.upload(
        "C9", "1.000003", "acme_widgets-2026-01-28.md", "# Report\n\nbody\n", "acme_widgets-2026-01-28.md"
    )
    (upload,) = slack.uploads.values()
    assert upload["content"] == b"# Report\n\nbody\n"
    assert upload["channel"] == "C9" and upload["thread_ts"] == "1.000003"
    assert [c.method for c in slack.calls if c.method.startswith("files.")] == [
        "files.getUploadURLExternal",
        "files.completeUploadExternal",
    ]


async def test_failures_are_one_sentence_without_the_token(platform, slack):
    from bot.core.chat_platform import Notice
    from handlers.slack import SlackError

    slack.fail("chat.postMessage", times=None, error="channel_not_found")
    with pytest.raises(SlackError) as caught:
        await platform.send("C404", Notice("hello"))
    assert str(caught.value) == (
        "Slack chat.postMessage failed: channel_not_found (the bot cannot see this conversation; invite it first)."
    )
    assert slack.token not in str(caught.value)


async def test_socket_mode_needs_no_http_route_and_reports_a_bad_app_token(make_settings, slack, widgets):
    from handlers.slack import SlackError

    settings = make_settings(
        slack_bot_token=slack.token,
        slack_app_token="xapp-secret-value",
        slack_api_url=slack.url,
        default_repo=str(widgets.path),
    )
    services = Services.build(settings)
    adapter = build_slack(settings, App.build(services).router, receive=True, pacing=FAST)
    try:
        assert adapter.http_routes() == []
        with pytest.raises(SlackError) as caught:
            await adapter.start()
        assert "Socket Mode" in str(caught.value) and "xapp-secret-value" not in str(caught.value)
        assert slack.calls_to("apps.connections.open")
    finally:
        await adapter.close()
        await services.aclose()


def test_http_mode_without_signing_secret_is_a_clear_error(make_settings, slack):
    from bot.core.models import UsageError

    settings = make_settings(slack_bot_token=slack.token, slack_api_url=slack.url)
    with pytest.raises(UsageError, match="SLACK_SIGNING_SECRET"):
        build_slack(settings, object(), receive=True)


def test_manifest_declares_what_the_adapter_uses():
    manifest = (ROOT / "slack_manifest.yml").read_text(encoding="utf-8")
    lines = {line.split("#")[0].strip() for line in manifest.splitlines()}
    for scope in (
        "chat:write",
        "commands",
        "app_mentions:read",
        "channels:history",
        "groups:history",
        "im:history",
        "mpim:history",
        "im:write",
        "files:write",
    ):
        assert f"- {scope}" in lines, scope
    for event in ("app_mention", "message.channels", "message.groups", "message.im", "message.mpim"):
        assert f"- {event}" in lines, event
    assert "- command: /digest" in lines and "socket_mode_enabled: true" in lines and "is_enabled: true" in lines
    assert any(line.startswith("usage_hint:") for line in lines)


async def test_a_stream_that_expires_midway_is_finished_by_editing_it(platform, slack):
    from bot.core.chat_platform import Conversation

    slack.fail("chat.appendStream", times=None, error="message_not_in_streaming_state")
    answer = " ".join(f"word{i}" for i in range(300))
    conv = Conversation("slack", "C9", "U0001", thread="1.000004", extra={"team_id": "T0001"})
    ref = await platform.stream("C9", "1.000004", answer_pieces(answer, size=50, delay=0.01), conv=conv)
    (message,) = slack.replies("C9", "1.000004")
    assert message.ts == ref.id and message.streamed  # the same message, started as a stream…
    assert message.text == answer and message.edits >= 1  # …completed with chat.update, nothing lost
    assert platform.native_streaming is True  # a refusal for one answer does not turn streaming off


async def test_direct_message_question_is_answered_in_the_dm(make_bot, slack, widgets):
    bot = await make_bot()
    assert slack.calls == []  # building the adapter calls nothing; Bolt asks auth.test on the first request
    event = bot.sender.message_event(
        f"what could {widgets.shas['high'][:7]} break?", channel="D0001", channel_type="im"
    )
    assert (await bot.sender.event(event))[0] == 200
    await bot.settle()
    (header,) = slack.top_level("D0001")
    assert "❓ <@U0001> asked: what could" in header.blocks[0]["text"]["text"]
    (answer,) = slack.replies("D0001", header.ts)
    assert answer.streamed and "export_v1" in answer.text
    assert slack.ephemerals == []
    await bot.sender.event(bot.sender.message_event("help", channel="D0001", channel_type="im"))
    await bot.settle()
    assert len(slack.calls_to("auth.test")) == 1  # once, then cached
    help_message = slack.top_level("D0001")[-1]  # in a DM "private" is the DM itself
    assert "/digest subscribe owner/repo" in shown(help_message)


async def test_socket_mode_takes_commands_and_events(make_settings, slack, widgets):
    from urllib.parse import parse_qsl

    from tests.fakes.slack_server import FakeSocketMode

    socket = await FakeSocketMode().start()
    slack.socket_url = socket.url
    settings = make_settings(
        slack_bot_token=slack.token,
        slack_app_token=slack.app_token,
        slack_api_url=slack.url,
        default_repo=str(widgets.path),
        default_lang="en",
    )
    services = Services.build(settings)
    chat = App.build(services)
    adapter = build_slack(settings, chat.router, receive=True, pacing=FAST)
    chat.register(adapter.platform)
    bodies = SlackSender("http://unused.invalid/", "unused")  # only builds Slack-shaped payloads here
    try:
        await adapter.start()
        envelope = await socket.push("slash_commands", dict(parse_qsl(bodies.slash_body("2026-01-28"))))
        assert (await socket.ack_for(envelope)) == {"envelope_id": envelope}  # an empty ack
        await chat.drain()
        (parent,) = slack.top_level(CHANNEL)
        assert "Daily update report (2026-01-28)" in shown(parent)
        assert len(slack.replies(CHANNEL, parent.ts)) == 3

        mention = bodies.message_event(
            f"<@UBOT> what does {widgets.shas['high'][:7]} break?", kind="app_mention", thread_ts=parent.ts
        )
        body = json.loads(bodies.event_body(mention, event_id="EvSOCK1"))
        first = await socket.push("events_api", body, accepts_response_payload=False)
        again = await socket.push("events_api", body, accepts_response_payload=False, retry_attempt=1)
        await socket.ack_for(first)
        await socket.ack_for(again)
        await chat.drain()
        assert len(slack.calls_to("chat.startStream")) == 1  # the retried envelope was deduplicated
        answer = [m for m in slack.replies(CHANNEL, parent.ts) if m.streamed][-1]
        assert "export_v1" in answer.text
    finally:
        await adapter.close()
        await socket.stop()
        await services.aclose()
