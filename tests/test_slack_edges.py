"""Edges of the Slack adapter that the mutation run (tools/mutate.py over handlers/slack/) found
untested: retry waits and counts against what the fake Slack answers, the request checks before
Bolt, the crash-safe send's bounds, the default posting pace, listeners' routing and dedupe.
Same setup as test_slack_e2e.py: the real slack_sdk/Bolt against the fake Web API, real Redis."""

from __future__ import annotations

import asyncio
import json
import logging
import time

import pytest

from bot.core.chat_platform import Conversation, Notice
from bot.render import slack as R
from bot.runtime.app import App
from bot.runtime.services import Services
from handlers.slack import SlackError, api, build_slack
from tests.shared.slack import (
    CHANNEL,
    FAST,
    HIGH_TITLE,
    LOW_TITLE,
    answer_pieces,
    buttons,
    by_title,
    digest_thread,
    shown,
    shown_eph,
)

# --- retries: what the client waits and how often it tries, against the fake's answers ---------------


class Waits:
    """An injected sleep: records each wait the retry handlers ask for, without spending it."""

    def __init__(self) -> None:
        self.waits: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)
        await asyncio.sleep(0)


async def test_a_429_waits_retry_after_plus_a_bounded_jitter_and_gives_up_after_12_retries(slack):
    waits = Waits()
    client = api.make_client(slack.token, slack.url, sleep=waits)
    slack.fail("chat.postMessage", times=None, status=429, retry_after="10")
    with pytest.raises(SlackError) as caught:
        await api.call(client, "chat.postMessage", channel="C9", text="hello")
    assert str(caught.value) == "Slack chat.postMessage failed: ratelimited."
    assert len(slack.calls_to("chat.postMessage")) == 13  # the first try and 12 retries
    assert len(waits.waits) == 12
    # Retry-After 10 s, plus up to min(0.5 s, 0.1 s + 10 % of the wait) so that clients spread out
    assert all(10.0 <= w <= 10.5 for w in waits.waits), waits.waits
    assert max(waits.waits) > 10.25  # the jitter spans its whole range (12 draws: almost surely)

    waits.waits.clear()
    slack.clear_failures()
    slack.fail("chat.postMessage", times=None, status=429, retry_after="1")
    with pytest.raises(SlackError):
        await api.call(client, "chat.postMessage", channel="C9", text="hello")
    assert all(1.0 <= w <= 1.2 for w in waits.waits), waits.waits  # 1 s: up to 0.1 s + 10 %

    waits.waits.clear()
    slack.clear_failures()
    slack.fail("chat.postMessage", times=1, status=429, retry_after="1.5")  # fractions allowed
    slack.fail("chat.postMessage", times=1, status=429, retry_after="0")
    await api.call(client, "chat.postMessage", channel="C9", text="hello")
    assert 1.5 <= waits.waits[0] <= 1.5 + 0.25 and 0 <= waits.waits[1] <= 0.1
    assert [m.text for m in slack.top_level("C9")] == ["hello"]  # posted once, after the retries


async def test_a_429_with_an_unreadable_retry_after_waits_a_second(slack):
    waits = Waits()
    client = api.make_client(slack.token, slack.url, sleep=waits)
    slack.fail("chat.postMessage", times=1, status=429, retry_after="soon")
    slack.fail("chat.postMessage", times=1, status=429, retry_after="-3")
    await api.call(client, "chat.postMessage", channel="C9", text="hello")
    assert 1.0 <= waits.waits[0] <= 1.2 and 0.0 <= waits.waits[1] <= 0.1


@pytest.mark.parametrize("status", [500, 502, 503, 504])
async def test_server_errors_back_off_doubling_then_fail(slack, status):
    waits = Waits()
    client = api.make_client(slack.token, slack.url, sleep=waits)
    slack.fail("chat.postMessage", times=None, status=status, error="internal_error")
    for _ in range(5):
        with pytest.raises(SlackError) as caught:
            await api.call(client, "chat.postMessage", channel="C9", text="hello")
        assert "Slack chat.postMessage failed" in str(caught.value) and slack.token not in str(caught.value)
    assert len(slack.calls_to("chat.postMessage")) == 5 * 5  # each: the first try and 4 retries
    for call in range(5):  # 0.2 s, 0.4 s, 0.8 s, 1.6 s, each ±20 %
        for attempt, wait in enumerate(waits.waits[call * 4 : call * 4 + 4]):
            assert 0.8 * 0.2 * 2**attempt <= wait <= 1.2 * 0.2 * 2**attempt, waits.waits


async def test_an_unreachable_slack_is_retried_then_named_without_the_token(slack):
    import socket

    with socket.socket() as closed:  # a port nothing listens on
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    waits = Waits()
    client = api.make_client(slack.token, f"http://127.0.0.1:{port}/api", sleep=waits)
    with pytest.raises(SlackError) as caught:
        await api.call(client, "chat.postMessage", channel="C9", text="hello")
    assert str(caught.value) == "Slack chat.postMessage failed: ClientConnectorError."
    assert len(waits.waits) == 4  # backed off and retried 4 times


async def test_other_http_errors_are_not_retried(slack):
    waits = Waits()
    client = api.make_client(slack.token, slack.url, sleep=waits)
    slack.fail("chat.postMessage", times=None, status=400, error="invalid_arguments")
    with pytest.raises(SlackError, match="invalid_arguments"):
        await api.call(client, "chat.postMessage", channel="C9", text="hello")
    slack.clear_failures()
    await api.call(client, "chat.postMessage", channel="C9", text="hello")
    assert len(slack.calls_to("chat.postMessage")) == 2 and waits.waits == []
    assert len(slack.top_level("C9")) == 1  # a successful post is not sent again


# --- the request checks before Bolt -------------------------------------------------------------------


async def test_signature_headers_are_each_required_and_the_timestamp_is_digits_only(make_bot, slack, caplog):
    bot = await make_bot()
    caplog.set_level(logging.INFO)
    form = "application/x-www-form-urlencoded"
    body = bot.sender.slash_body("help")
    now = str(int(time.time()))
    signed = bot.sender.sign(body, int(now))
    cases = [
        ("no signature", {"X-Slack-Request-Timestamp": now}, "unsigned request"),
        ("no timestamp", {"X-Slack-Signature": signed["X-Slack-Signature"]}, "unsigned request"),
        (
            "trailing garbage",
            {"X-Slack-Request-Timestamp": now + "x", "X-Slack-Signature": signed["X-Slack-Signature"]},
            "malformed timestamp",
        ),
        ("another secret", bot.sender.sign(body, int(now), secret="not-the-secret"), "bad signature"),
    ]
    for name, headers, reason in cases:
        caplog.clear()
        status, text = await bot.sender.post(body, form, signed=False, headers=headers)
        assert (status, json.loads(text)) == (401, {"ok": False, "error": reason}), name
        assert not [r for r in caplog.records if r.exc_info], name
    await bot.settle()
    assert slack.ephemerals == [] and slack.webhook_posts == []


async def test_a_request_older_than_300_seconds_is_refused_before_bolt(make_bot, slack):
    bot = await make_bot()
    body = bot.sender.slash_body("help")
    status, text = await bot.sender.post(
        body, "application/x-www-form-urlencoded", timestamp=int(time.time()) - 300
    )  # 300.x s old by the time it arrives
    assert (status, json.loads(text)) == (401, {"ok": False, "error": "stale timestamp"})
    status, _ = await bot.sender.post(body, "application/x-www-form-urlencoded", timestamp=int(time.time()) - 290)
    assert status == 200
    await bot.settle()
    assert len(slack.ephemerals) == 1  # the fresh one ran


async def test_a_json_body_is_read_as_json_whatever_its_content_type(make_bot, slack, widgets):
    """Bolt reads a body starting with `{` as JSON even when labelled as a form; so do the checks."""
    bot = await make_bot()
    event = bot.sender.message_event(
        f"what could {widgets.shas['high'][:7]} break?", channel="D0001", channel_type="im"
    )
    for content_type in ("application/json; charset=utf-8", "text/plain"):
        status, _ = await bot.sender.post(bot.sender.event_body(event), content_type)
        assert status == 200, content_type
    status, text = await bot.sender.post('{"type": "event_callback", ', "text/plain")
    assert (status, json.loads(text)["error"]) == (400, "body is not valid JSON")
    await bot.settle()
    (header,) = slack.top_level("D0001")  # the same event twice (Slack's retry): one answer
    assert "asked: what could" in header.blocks[0]["text"]["text"]


async def test_a_form_without_a_payload_field_goes_to_bolt(make_bot, slack, caplog):
    bot = await make_bot()
    caplog.set_level(logging.INFO)
    for body in ("hello=world", "", "text=the+payload+word"):
        caplog.clear()
        status, _ = await bot.sender.post(body, "application/x-www-form-urlencoded")
        assert status == 404, body  # Bolt: no listener for it; not a refusal from the JSON checks
        assert "Unhandled request" in caplog.text  # Bolt's own log lines still reach the operator


async def test_malformed_bodies_are_refused_with_the_reason(make_bot, slack):
    from urllib.parse import quote

    bot = await make_bot()
    form = "application/x-www-form-urlencoded"
    for body, content_type, reason in (
        ('[{"type": "event_callback"}]', "application/json", "body is not a JSON object"),
        ('"event_callback"', "application/json", "body is not a JSON object"),
        ("payload=" + quote("[1, 2]"), form, "body is not a JSON object"),
        ("payload=" + quote("{garbage"), form, "body is not valid JSON"),
        ("payload=", form, "body is not valid JSON"),
        # signed JSON objects whose fields have another type than Slack documents: each would
        # crash Bolt or one of our listeners (HTTP 500 and a traceback)
        (
            "payload=" + quote(json.dumps({"type": "block_actions", "user": 5, "actions": []})),
            form,
            "field `user` has the wrong type",
        ),
        (
            "payload="
            + quote(
                json.dumps(
                    {
                        "type": "block_actions",
                        "user": {"id": "U1"},
                        "channel": "C1",
                        "actions": [{"action_id": "digest_details", "value": "{}"}],
                    }
                )
            ),
            form,
            "field `channel` has the wrong type",
        ),
        (
            "payload="
            + quote(json.dumps({"type": "block_actions", "user": {"id": "U1"}, "actions": ["digest_details"]})),
            form,
            "field `actions` has the wrong type",
        ),
        (
            "payload="
            + quote(
                json.dumps(
                    {
                        "type": "block_actions",
                        "user": {"id": "U1"},
                        "actions": [{"action_id": "digest_details", "value": {"sha": "x"}}],
                    }
                )
            ),
            form,
            "field `actions[].value` has the wrong type",
        ),
        (
            json.dumps(
                {
                    "type": "event_callback",
                    "event_id": "Ev9",
                    "team_id": "T1",
                    "event": {
                        "type": "app_mention",
                        "user": "U1",
                        "channel": "C1",
                        "ts": "1.0",
                        "text": ["<@UBOT> hi"],
                    },
                }
            ),
            "application/json",
            "field `event.text` has the wrong type",
        ),
    ):
        status, text = await bot.sender.post(body, content_type)
        assert (status, json.loads(text)) == (400, {"ok": False, "error": reason}), body
    await bot.settle()
    assert slack.ephemerals == [] and slack.webhook_posts == []


# --- sending: pace, link previews, the crash-safe send's bounds -------------------------------------


@pytest.fixture
async def default_platform(make_settings, slack, widgets):
    """The platform as production builds it: the default pace."""
    settings = make_settings(slack_bot_token=slack.token, slack_api_url=slack.url, default_repo=str(widgets.path))
    services = Services.build(settings)
    adapter = build_slack(settings, App.build(services).router, receive=False)
    yield adapter.platform
    await adapter.close()
    await services.aclose()


async def test_the_default_pace_is_a_burst_of_three_then_one_post_a_second(default_platform, slack):
    await asyncio.gather(
        *(default_platform.send("C9", Notice(f"post {i}")) for i in range(4)),
        default_platform.send("C8", Notice("elsewhere")),
    )
    posts = [c for c in slack.calls_to("chat.postMessage") if c.params["channel"] == "C9"]
    assert [p.params["text"] for p in posts] == [f"post {i}" for i in range(4)]  # in the order asked
    # three at once, the fourth once the first has left the 3-second window (a lower bound only)
    assert posts[3].at - posts[0].at >= 3.0 - 0.01
    assert all(
        c.params["unfurl_links"] is False and c.params["unfurl_media"] is False
        for c in slack.calls_to("chat.postMessage")
    )


async def test_a_report_upload_takes_its_turn_in_the_channels_pace(default_platform, slack):
    for i in range(3):
        await default_platform.send("C9", Notice(f"post {i}"))
    await default_platform.upload("C9", None, "report.md", "# Report\n", "report.md")
    (upload,) = slack.uploads.values()
    assert upload["channel"] == "C9" and upload.get("thread_ts") in (None, "")  # top level
    first = slack.calls_to("chat.postMessage")[0].at
    assert slack.calls_to("files.getUploadURLExternal")[0].at - first >= 3.0 - 0.01


async def test_a_keyed_send_is_remembered_for_a_week(platform, slack):
    await platform.send("C9", Notice("the 09:30 digest"), key="push:week")
    assert 6 * 86400 < await platform.store.r.ttl(platform.store.k("slack", "sent", "push:week")) <= 7 * 86400
    calls = len(slack.calls)
    again = await platform.send("C9", Notice("the 09:30 digest"), key="push:week")  # a retry of the same push
    (message,) = slack.top_level("C9")
    assert again.id == message.ts and len(slack.calls) == calls  # known done: Slack is not even asked


async def test_a_keyed_reply_cut_before_its_bookkeeping_is_found_in_its_thread(platform, slack):
    root = await platform.send("C9", Notice("the digest"))
    await platform.send("C9", Notice("the high commit"), thread=root.id, key="push:reply")
    # a crash between the post and its bookkeeping leaves only the "may have posted" mark
    await platform.store.set_json(platform.store.k("slack", "sent", "push:reply"), {"pending": True}, ttl=600)
    await platform.send("C9", Notice("the high commit"), thread=root.id, key="push:reply")
    assert [shown(m) for m in slack.replies("C9", root.id)] == ["the high commit"]
    assert slack.calls_to("conversations.history") == []  # a thread's own replies are enough


async def test_the_crash_lookup_reads_at_most_25_pages_of_200(platform, slack):
    slack.page_size = 1
    for i in range(30):
        await platform.send("C9", Notice(f"chatter {i}"))
    await platform.store.set_json(platform.store.k("slack", "sent", "push:lost"), {"pending": True}, ttl=600)
    await platform.send("C9", Notice("the 09:30 digest"), key="push:lost")
    history = slack.calls_to("conversations.history")
    assert len(history) == 25  # then it gives up looking and posts
    assert all(int(c.params["limit"]) == 200 for c in history)  # Slack recommends pages of at most 200
    assert [shown(m) for m in slack.top_level("C9")].count("the 09:30 digest") == 1


async def test_a_channel_that_asked_for_the_report_file_gets_it_in_the_digest_thread(make_bot, slack):
    bot = await make_bot()
    await bot.sender.slash("config file on")
    await bot.settle()
    parent, _ = await digest_thread(bot, slack)
    (upload,) = slack.uploads.values()
    assert upload["channel"] == CHANNEL and upload["thread_ts"] == parent.ts
    assert upload["filename"].endswith(".md") and b"# " in upload["content"]


# --- receiving: which messages are for the bot -----------------------------------------------------------


async def test_a_slash_command_under_another_name_is_answered_with_that_name(make_bot, slack):
    bot = await make_bot()
    await bot.sender.slash("help", command="/commits")
    await bot.settle()
    (help_text,) = [R.unescape(shown_eph(e)) for e in slack.ephemerals]
    assert "/commits subscribe owner/repo" in help_text and "/digest " not in help_text


async def test_thread_replies_are_answered_only_when_they_mention_the_bot(make_bot, slack, widgets):
    bot = await make_bot()
    parent, _ = await digest_thread(bot, slack)
    sha = widgets.shas["high"][:7]
    # a reply in the digest thread that talks to someone else: Slack sends only a `message` event
    await bot.sender.event(bot.sender.message_event(f"<@U0002> did you see {sha}?", thread_ts=parent.ts))
    await bot.settle()
    assert slack.calls_to("chat.startStream") == []
    # a reply that mentions the bot, seen through its `message` event (the app_mention may come later)
    await bot.sender.event(bot.sender.message_event(f"<@UBOT> what does {sha} break?", thread_ts=parent.ts))
    await bot.settle()
    assert len(slack.calls_to("chat.startStream")) == 1
    assert "export_v1" in [m for m in slack.replies(CHANNEL, parent.ts) if m.streamed][-1].text


async def test_messages_by_the_bot_itself_or_without_a_sender_are_not_answered(make_bot, slack, widgets):
    bot = await make_bot()
    parent, _ = await digest_thread(bot, slack)
    before = len(slack.calls)
    question = f"<@UBOT> what does {widgets.shas['high'][:7]} break?"
    for event in (
        bot.sender.message_event(question, thread_ts=parent.ts, user="UBOT"),  # ours, without bot_id
        bot.sender.message_event(question, thread_ts=parent.ts, user=""),
        bot.sender.message_event(question, thread_ts=parent.ts, channel=""),
    ):
        assert (await bot.sender.event(event))[0] == 200
    await bot.settle()
    assert [c.method for c in slack.calls[before:]] == [] and slack.ephemerals == []


async def test_a_top_level_mention_is_answered_without_the_mention_in_the_question(make_bot, slack, widgets):
    bot = await make_bot()
    sha = widgets.shas["high"][:7]
    await bot.sender.event(
        bot.sender.message_event(f"<@UBOT|digestbot>   what could {sha}\nbreak?", kind="app_mention")
    )
    await bot.settle()
    (header,) = slack.top_level(CHANNEL)
    assert f"❓ <@U0001> asked: what could {sha} break?" in header.blocks[0]["text"]["text"]


async def test_events_are_remembered_for_an_hour(make_bot, slack, widgets):
    bot = await make_bot()
    event = bot.sender.message_event(
        f"what could {widgets.shas['high'][:7]} break?", channel="D0001", channel_type="im"
    )
    await bot.sender.event(event, event_id="EvHOUR1")
    await bot.settle()
    store = bot.services.store
    assert 3500 < await store.r.ttl(store.k("event", "slack", "EvHOUR1")) <= 3600


async def test_an_event_without_its_own_team_streams_to_the_envelopes_team(make_bot, slack, widgets):
    bot = await make_bot()
    parent, _ = await digest_thread(bot, slack)
    event = bot.sender.message_event(
        f"<@UBOT> what does {widgets.shas['high'][:7]} break?", kind="app_mention", thread_ts=parent.ts
    )
    del event["team"]
    await bot.sender.event(event)
    await bot.settle()
    (start,) = slack.calls_to("chat.startStream")
    assert start.params["recipient_team_id"] == "T0001" and start.params["recipient_user_id"] == "U0001"


# --- receiving: clicks in the shapes Slack sends them --------------------------------------------------


def reshaped(body: str, change) -> str:
    """An interactive form body (`payload=`) with its payload changed by `change(payload)`."""
    from urllib.parse import parse_qsl, urlencode

    payload = json.loads(dict(parse_qsl(body))["payload"])
    change(payload)
    return urlencode({"payload": json.dumps(payload)})


def _drop(*path):
    def change(payload):
        node = payload
        for key in path[:-1]:
            node = node[key]
        node.pop(path[-1])

    return change


@pytest.mark.parametrize("shape", ["ephemeral", "no channel", "container without channel", "container without thread"])
async def test_details_clicks_answer_in_the_thread_whatever_the_payloads_shape(make_bot, slack, shape):
    bot = await make_bot()
    parent, replies = await digest_thread(bot, slack)
    high = by_title(replies, HIGH_TITLE)
    value = json.loads(buttons(high)["digest_details"]["value"])
    change = {
        "ephemeral": _drop("message"),  # a click in an ephemeral message: no `message`
        "no channel": _drop("channel"),
        "container without channel": _drop("container", "channel_id"),
        "container without thread": _drop("container", "thread_ts"),
    }[shape]
    if shape == "container without thread":
        value.pop("thread")  # only the message says which thread
    body = bot.sender.block_action_body(
        "digest_details",
        value=json.dumps(value),
        message_ts=high.ts if shape != "ephemeral" else "9.000001",
        thread_ts=parent.ts if shape != "ephemeral" else None,
    )
    status, _ = await bot.sender.post(reshaped(body, change), "application/x-www-form-urlencoded")
    assert status == 200
    await bot.settle()
    (eph,) = slack.ephemerals
    assert (eph["channel"], eph["user"], eph["thread_ts"]) == (CHANNEL, "U0001", parent.ts)
    assert HIGH_TITLE in R.unescape(shown_eph(eph))


@pytest.mark.parametrize("missing", ["user", "team"])
async def test_a_chosen_commit_is_streamed_when_the_payload_names_the_team_once(make_bot, slack, widgets, missing):
    bot = await make_bot()
    parent, _ = await digest_thread(bot, slack)
    value = json.dumps(
        {
            "repo": str(widgets.path),
            "sha": widgets.shas["high"],
            "thread": parent.ts,
            "question": "what could this break?",
            "lang": "en",
        }
    )
    body = bot.sender.block_action_body("digest_choose_0", value=value, message_ts="9.000002", thread_ts=parent.ts)
    change = _drop("user", "team_id") if missing == "user" else _drop("team")
    assert (await bot.sender.post(reshaped(body, change), "application/x-www-form-urlencoded"))[0] == 200
    await bot.settle()
    (start,) = slack.calls_to("chat.startStream")
    assert start.params["recipient_team_id"] == "T0001" and start.params["thread_ts"] == parent.ts
    assert "export_v1" in [m for m in slack.replies(CHANNEL, parent.ts) if m.streamed][-1].text


async def test_a_click_resent_with_its_fields_in_another_order_runs_once(make_bot, slack):
    bot = await make_bot()
    parent, replies = await digest_thread(bot, slack)
    high = by_title(replies, HIGH_TITLE)
    body = bot.sender.block_action_body(
        "digest_details", value=buttons(high)["digest_details"]["value"], message_ts=high.ts, thread_ts=parent.ts
    )

    def reverse(payload):
        items = list(payload.items())
        payload.clear()
        payload.update(reversed(items))

    for sent in (body, reshaped(body, reverse)):  # the same click, serialised twice
        assert (await bot.sender.post(sent, "application/x-www-form-urlencoded"))[0] == 200
    await bot.settle()
    assert len(slack.ephemerals) == 1


async def test_an_expired_form_trigger_tells_the_user_how_to_ask_in_their_language(make_bot, slack, widgets):
    bot = await make_bot()
    parent, _ = await digest_thread(bot, slack)
    sha = widgets.shas["high"]
    slack.fail("views.open", times=2, error="expired_trigger_id")
    for lang, hint in (
        ("zh", f"请在这个线程里 @我，提出关于 `{sha[:7]}` 的问题。"),
        (None, f"Mention me in this thread with your question about `{sha[:7]}`."),
    ):
        value = {"repo": str(widgets.path), "sha": sha, "thread": parent.ts, **({"lang": lang} if lang else {})}
        before = len(slack.ephemerals)
        await bot.sender.block_action("digest_ask", value=json.dumps(value), message_ts="9.000003", thread_ts=parent.ts)
        await bot.settle()
        (told,) = slack.ephemerals[before:]
        assert R.unescape(shown_eph(told)) == hint and told["thread_ts"] == parent.ts
    assert slack.views == []


async def test_a_refused_click_is_told_in_the_clicks_language(make_bot, slack, tmp_path):
    bot = await make_bot()
    for lang, refusal in (("zh", "在聊天里只能查询 GitHub 仓库"), ("fr", "In chat you can name GitHub repositories")):
        before = len(slack.ephemerals)
        forged = json.dumps({"repo": str(tmp_path), "sha": "a" * 40, "lang": lang})
        await bot.sender.block_action("digest_details", value=forged, message_ts="9.000004")
        await bot.settle()
        (told,) = slack.ephemerals[before:]
        assert refusal in R.unescape(shown_eph(told))


async def test_a_question_form_from_a_user_without_a_team_id_is_streamed(make_bot, slack, widgets):
    bot = await make_bot()
    parent, replies = await digest_thread(bot, slack)
    high = by_title(replies, HIGH_TITLE)
    await bot.sender.block_action(
        "digest_ask",
        value=buttons(high)["digest_ask"]["value"],
        message_ts=high.ts,
        thread_ts=parent.ts,
        trigger_id="trig-9",
    )
    await bot.settle()
    view = slack.views[0]["view"]
    # view_submission as Slack sends it, but its user without a team_id (the team is at the top)
    body = bot.sender.view_submission_body(view, {"question": {"question": "what could this break?"}})
    status, _ = await bot.sender.post(reshaped(body, _drop("user", "team_id")), "application/x-www-form-urlencoded")
    assert status == 200
    await bot.settle()
    (start,) = slack.calls_to("chat.startStream")
    assert start.params["recipient_team_id"] == "T0001"


async def test_a_keyed_send_interrupted_mid_post_is_not_posted_twice(platform, slack):
    """The process dies (here: the task is cancelled) while Slack is still answering the post:
    the message exists, the process never learnt its ts. The retry finds it instead of posting."""
    slack.delay("chat.postMessage", 0.5)
    task = asyncio.create_task(platform.send("C9", Notice("the 09:30 digest"), key="push:cut"))
    while not slack.top_level("C9"):
        await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    slack.delay("chat.postMessage", 0.0)
    await platform.send("C9", Notice("the 10:00 digest"), key="push:other")  # another keyed post, newer
    ref = await platform.send("C9", Notice("the 09:30 digest"), key="push:cut")
    assert [shown(m) for m in slack.top_level("C9")] == ["the 09:30 digest", "the 10:00 digest"]
    assert ref.id == slack.top_level("C9")[0].ts
    assert len(slack.calls_to("conversations.history")) == 1  # one page held the channel: no more asked


async def test_a_keyed_send_cut_after_its_first_part_posts_only_the_rest(platform, slack):
    from bot.core.chat_platform import CommitDetails
    from bot.core.models import Analysis, ChangeType, DigestEntry, Importance
    from tests.shared.slack_render import commit, digest

    huge = Analysis(ChangeType.FEATURE, Importance.HIGH, "why", " ".join(f"w{i}" for i in range(6000)))
    entry = DigestEntry(commit(1), huge)
    content = CommitDetails(digest([entry]), entry)
    first = await platform.send("C9", content, key="push:parts")
    parts = len(slack.replies("C9", first.id))
    assert parts >= 1
    again = await platform.send("C9", content, key="push:parts")  # done: nothing more
    assert again.id == first.id and len(slack.replies("C9", first.id)) == parts
    # The state a crash right after the first part leaves: it is posted and recorded, the rest is not.
    slack.messages[:] = [m for m in slack.messages if m.thread_ts != first.id]
    await platform.store.set_json(
        platform.store.k("slack", "sent", "push:parts"), {"pending": True, "ts": first.id}, ttl=600
    )
    await platform.send("C9", content, key="push:parts")
    assert len(slack.top_level("C9")) == 1 and len(slack.replies("C9", first.id)) == parts
    assert every_word_once([slack.top_level("C9")[0]] + slack.replies("C9", first.id), 6000)
    # Only "a post may have happened" is known: every part is found (the first at top level, the
    # rest in its thread) and none is posted again.
    await platform.store.set_json(platform.store.k("slack", "sent", "push:parts"), {"pending": True}, ttl=600)
    await platform.send("C9", content, key="push:parts")
    assert len(slack.top_level("C9")) == 1 and len(slack.replies("C9", first.id)) == parts


async def test_a_keyed_send_cut_while_posting_its_second_part_resumes_without_the_history(platform, slack):
    """Once the first part's ts is recorded, resuming needs only that thread: even with
    conversations.history unavailable, nothing is posted twice and nothing is lost."""
    from bot.core.chat_platform import CommitDetails
    from bot.core.models import Analysis, ChangeType, DigestEntry, Importance
    from tests.shared.slack_render import commit, digest

    huge = Analysis(ChangeType.FEATURE, Importance.HIGH, "why", " ".join(f"w{i}" for i in range(9000)))
    entry = DigestEntry(commit(1), huge)
    content = CommitDetails(digest([entry]), entry)
    slack.delay("chat.postMessage", 0.3)
    task = asyncio.create_task(platform.send("C9", content, key="push:second"))
    while len(slack.calls_to("chat.postMessage")) < 2:
        await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    slack.delay("chat.postMessage", 0.0)
    slack.fail("conversations.history", times=None, error="internal_error")
    ref = await platform.send("C9", content, key="push:second")
    (top,) = slack.top_level("C9")
    assert ref.id == top.ts
    texts = [shown(m) for m in slack.replies("C9", top.ts)]
    assert len(texts) == len(set(texts)) >= 2 and "w8999" in texts[-1]


# --- response_url, Socket Mode, the HTTP endpoint's presence ----------------------------------------------


async def test_a_response_url_answer_is_ephemeral_and_never_replaces_the_original(make_bot, slack):
    bot = await make_bot()
    await bot.sender.slash("help", channel="CNOTIN1", response_url=slack.response_url("cmd-eph"))
    await bot.settle()
    (post,) = slack.webhook_posts
    assert post["response_type"] == "ephemeral" and post["replace_original"] is False


async def test_a_rate_limited_response_url_is_retried_four_times_then_logged(make_bot, slack, caplog):
    bot = await make_bot()
    caplog.set_level(logging.WARNING)
    slack.fail("response_url", times=None, status=429, retry_after="0")
    await bot.sender.slash("help", channel="CNOTIN1", response_url=slack.response_url("cmd-429"))
    await bot.settle()
    assert slack.webhook_posts == [] and slack.ephemerals == []
    tries = slack.calls_to("response_url")
    assert len(tries) >= 5 and len(tries) % 5 == 0  # each answer: the first try and 4 retries
    assert slack.token not in caplog.text


async def test_an_expired_response_url_is_a_failure_not_a_success(make_bot, slack, caplog):
    bot = await make_bot()
    caplog.set_level(logging.INFO)
    slack.fail("response_url", times=None, status=404, error="expired_url")
    await bot.sender.slash("help", channel="CNOTIN1", response_url=slack.response_url("cmd-404"))
    await bot.settle()
    assert slack.webhook_posts == []
    assert "Slack response_url failed: HTTP 404." in caplog.text


async def test_socket_mode_names_slacks_refusal_and_closes_its_connection(make_settings, slack, widgets):
    from tests.fakes.slack_server import FakeSocketMode

    settings = make_settings(
        slack_bot_token=slack.token,
        slack_app_token="xapp-wrong",
        slack_api_url=slack.url,
        default_repo=str(widgets.path),
    )
    services = Services.build(settings)
    adapter = build_slack(settings, App.build(services).router, receive=True, pacing=FAST)
    with pytest.raises(SlackError) as caught:
        await adapter.start()
    assert str(caught.value) == "Slack Socket Mode could not connect: invalid_auth (check SLACK_APP_TOKEN)."
    await adapter.close()

    socket = await FakeSocketMode().start()
    slack.socket_url = socket.url
    settings = make_settings(
        slack_bot_token=slack.token,
        slack_app_token=slack.app_token,
        slack_api_url=slack.url,
        default_repo=str(widgets.path),
    )
    adapter = build_slack(settings, App.build(services).router, receive=True, pacing=FAST)
    try:
        await adapter.start()
        await asyncio.wait_for(socket.connected.wait(), 10)
        await adapter.close()
        await asyncio.wait_for(socket.disconnected.wait(), 10)  # Slack sees the app go away
    finally:
        await socket.stop()
        await services.aclose()


async def test_http_mode_starts_no_socket_and_a_posting_only_adapter_has_no_endpoint(make_settings, slack, widgets):
    from handlers.web import bound_port, build_app, start_server

    settings = make_settings(
        slack_bot_token=slack.token, slack_signing_secret="s", slack_api_url=slack.url, default_repo=str(widgets.path)
    )
    services = Services.build(settings)
    receiving = build_slack(settings, App.build(services).router, receive=True, pacing=FAST)
    posting = build_slack(settings, App.build(services).router, receive=False, pacing=FAST)
    runner = await start_server(build_app(services.store, posting.http_routes()), "127.0.0.1", 0)
    try:
        await receiving.start()
        assert slack.calls == []  # no apps.connections.open: HTTP mode
        assert [route[:2] for route in receiving.http_routes()] == [("POST", "/slack/events")]
        import aiohttp

        async with (
            aiohttp.ClientSession() as session,
            session.post(f"http://127.0.0.1:{bound_port(runner)}/slack/events", data=b"{}") as resp,
        ):
            assert resp.status == 404  # the clock only posts
    finally:
        await runner.cleanup()
        await receiving.close()
        await posting.close()
        await services.aclose()


async def test_bolt_does_not_warn_about_the_client_we_give_it(make_settings, slack, widgets, caplog, monkeypatch):
    """Bolt reads SLACK_BOT_TOKEN by itself and warns that our client wins: noise for operators."""
    monkeypatch.setenv("SLACK_BOT_TOKEN", slack.token)
    caplog.set_level(logging.INFO)
    settings = make_settings(
        slack_bot_token=slack.token, slack_signing_secret="s", slack_api_url=slack.url, default_repo=str(widgets.path)
    )
    services = Services.build(settings)
    try:
        for _ in range(2):
            build_slack(settings, App.build(services).router, receive=True, pacing=FAST)
        assert "As you gave `client`" not in caplog.text
    finally:
        await services.aclose()


# --- streaming: text escaped as it arrives is escaped as a whole ----------------------------------------

LONG_WORDS = {
    # a word longer than the escaper holds back, with a pattern right where it would cut
    "broadcast at the cut": "x" * 283 + "@here" + "." + "y" * 11,
    "broadcast just before": "x" * 276 + "@channel" + "." + "y" * 15,
    "link bracket at the cut": "x" * 283 + "](https://evil.example)" + "y" * 3,
    "entity at the cut": "x" * 283 + "<!everyone>&" + "y" * 5,
    "at the threshold": "x" * 256 + "@here",
}


@pytest.mark.parametrize("case", list(LONG_WORDS))
async def test_a_long_word_streamed_in_pieces_is_escaped_as_if_whole(platform, slack, case):
    word = LONG_WORDS[case]
    answer = word + " and @everyone then " + "z" * 300 + "@here"

    async def pieces():
        yield word  # the whole long word at once: the escaper must cut inside it
        for i in range(len(word), len(answer), 7):
            yield answer[i : i + 7]

    conv = Conversation("slack", "C9", "U0001", thread="1.000020", extra={"team_id": "T0001"})
    await platform.stream("C9", "1.000020", pieces(), conv=conv)
    (message,) = [m for m in slack.replies("C9", "1.000020") if m.streamed]
    assert message.text == R.esc(answer)
    assert "@here" not in message.text and "@everyone" not in message.text and "](" not in message.text


async def test_an_answer_that_is_only_whitespace_says_so(platform, slack):
    async def pieces():
        yield None
        yield ""

    conv = Conversation("slack", "C9", "U0001", thread="1.000021", extra={"team_id": "T0001"})
    ref = await platform.stream("C9", "1.000021", pieces(), conv=conv)
    (message,) = slack.replies("C9", "1.000021")
    assert message.ts == ref.id and message.text == R.esc(R.s("en", "empty_answer")) and not message.streaming


async def test_an_update_to_a_longer_content_posts_every_continuation_once(platform, slack):
    from bot.core.chat_platform import CommitDetails
    from bot.core.models import Analysis, ChangeType, DigestEntry, Importance
    from tests.shared.slack_render import commit, digest

    ref = await platform.send("C9", Notice("⏳ working…", "progress"))
    huge = Analysis(ChangeType.FEATURE, Importance.HIGH, "why", " ".join(f"w{i}" for i in range(3000)))
    entry = DigestEntry(commit(1), huge)
    await platform.update(ref, CommitDetails(digest([entry]), entry))
    (top,) = slack.top_level("C9")
    rest = slack.replies("C9", top.ts)
    assert len(rest) == 1  # exactly one continuation: two payloads
    assert every_word_once([top] + rest, 3000)


def every_word_once(messages, n: int) -> bool:
    from collections import Counter

    words = Counter(" ".join(shown(m) for m in messages).split())
    return [i for i in range(n) if words[f"w{i}"] != 1] == []


async def test_a_long_content_is_posted_whole_in_its_thread(platform, slack):
    from bot.core.chat_platform import CommitDetails
    from bot.core.models import Analysis, ChangeType, DigestEntry, Importance
    from tests.shared.slack_render import commit, digest

    huge = Analysis(ChangeType.FEATURE, Importance.HIGH, "why", " ".join(f"w{i}" for i in range(9000)))
    entry = DigestEntry(commit(1), huge)
    ref = await platform.send("C9", CommitDetails(digest([entry]), entry))
    (top,) = slack.top_level("C9")
    rest = slack.replies("C9", top.ts)
    assert ref.id == top.ts and len(rest) >= 2 and every_word_once([top] + rest, 9000)


async def test_a_slower_pace_spaces_posts_out(make_settings, slack, widgets):
    from handlers.slack import Pacing

    settings = make_settings(slack_bot_token=slack.token, slack_api_url=slack.url, default_repo=str(widgets.path))
    services = Services.build(settings)
    adapter = build_slack(settings, App.build(services).router, receive=False, pacing=Pacing(per_second=0.5, burst=1))
    try:
        for i in range(2):
            await adapter.platform.send("C9", Notice(f"post {i}"))
    finally:
        await adapter.close()
        await services.aclose()
    first, second = slack.calls_to("chat.postMessage")
    assert second.at - first.at >= 2.0 - 0.01  # one post per 2 s


async def test_a_streamed_answer_starts_in_the_channels_turn_and_appends_do_not_wait_for_it(default_platform, slack):
    for i in range(3):
        await default_platform.send("C9", Notice(f"post {i}"))

    async def pieces():
        for i in range(5):
            yield f"part{i} "

    conv = Conversation("slack", "C9", "U0001", thread="1.000030", extra={"team_id": "T0001"})
    await default_platform.stream("C9", "1.000030", pieces(), conv=conv)
    first_post = slack.calls_to("chat.postMessage")[0].at
    (start,) = slack.calls_to("chat.startStream")
    # The fourth message in the channel waits for the window. The fake stamps arrival, so a first post
    # delayed in transit on a loaded machine shrinks the gap a little: allow that much, not a second.
    assert start.at - first_post >= 3.0 - 0.2
    (message,) = [m for m in slack.replies("C9", "1.000030") if m.streamed]
    assert message.text == "".join(f"part{i} " for i in range(5)) and not message.streaming


async def test_the_first_word_is_shown_at_once(platform, slack):
    async def pieces():
        yield "A "
        for _ in range(500):  # the reader sees the answer begin before the rest exists
            if slack.calls_to("chat.startStream"):
                break
            await asyncio.sleep(0.01)
        yield "and the rest."

    conv = Conversation("slack", "C9", "U0001", thread="1.000031", extra={"team_id": "T0001"})
    ref = await platform.stream("C9", "1.000031", pieces(), conv=conv)
    (start,) = slack.calls_to("chat.startStream")
    assert "".join(c["text"] for c in start.params.get("chunks") or []) + start.params.get("markdown_text", "") == "A "
    (message,) = slack.replies("C9", "1.000031")
    assert message.ts == ref.id and message.text == "A and the rest."


@pytest.mark.parametrize("where", ["channel without team", "dm without team"])
async def test_streaming_needs_a_known_recipient_outside_dms(platform, slack, where):
    channel = "C9" if where.startswith("channel") else "D9"
    conv = Conversation("slack", channel, "U0001", thread="1.000032", is_dm=channel == "D9")

    async def pieces():
        yield "The answer is forty-two."

    ref = await platform.stream(channel, "1.000032", pieces(), conv=conv)
    (message,) = slack.replies(channel, "1.000032")
    assert message.ts == ref.id and message.text == "The answer is forty-two."
    starts = slack.calls_to("chat.startStream")
    if channel == "D9":  # a DM streams without naming a recipient
        # and never half a recipient: Slack documents the team and the user as a pair
        assert message.streamed and not {"recipient_team_id", "recipient_user_id"} & set(starts[0].params)
    else:  # Slack refuses a channel stream without its recipient: an edited message, not a refused call
        assert not message.streamed and starts == []


async def test_once_slack_says_streaming_is_unavailable_later_answers_do_not_try(platform, slack):
    slack.fail("chat.startStream", times=None, error="missing_scope")
    conv = Conversation("slack", "C9", "U0001", thread="1.000033", extra={"team_id": "T0001"})

    async def pieces():
        yield "An answer."

    await platform.stream("C9", "1.000033", pieces(), conv=conv)
    await platform.stream("C9", "1.000034", pieces(), conv=conv)
    assert len(slack.calls_to("chat.startStream")) == 1
    assert [m.text for m in slack.replies("C9", "1.000033") + slack.replies("C9", "1.000034")] == ["An answer."] * 2


async def test_an_edit_that_fails_midway_loses_nothing(platform, slack):
    """Bug found by this test: the refused edit's text stayed in the message being built and went
    back to the pending text too, so the next edit showed it twice."""
    slack.fail("chat.startStream", times=None, error="not_allowed_token_type")
    words = [f"word{i} " for i in range(60)]

    async def pieces():
        yield words[0]
        while not slack.calls_to("chat.postMessage"):
            await asyncio.sleep(0.01)
        slack.fail("chat.update", times=1, error="internal_error")  # the next edit is refused once
        for word in words[1:]:
            yield word
            await asyncio.sleep(0.005)

    conv = Conversation("slack", "C9", "U0001", thread="1.000035", extra={"team_id": "T0001"})
    await platform.stream("C9", "1.000035", pieces(), conv=conv)
    (message,) = slack.replies("C9", "1.000035")
    assert message.text == "".join(words)


async def test_the_question_form_remembers_the_clicked_thread_when_the_value_does_not(make_bot, slack, widgets):
    bot = await make_bot()
    parent, replies = await digest_thread(bot, slack)
    low = by_title(replies, LOW_TITLE)
    menu = next(b for b in low.blocks if b["type"] == "actions")
    block = json.loads(menu["block_id"])
    block.pop("thread", None)  # a block_id that had to drop the thread to fit
    status, _ = await bot.sender.block_action(
        "digest_low",
        selected=f"ask:{widgets.shas['low']}",
        block_id=json.dumps(block),
        message_ts=low.ts,
        thread_ts=parent.ts,
        trigger_id="trig-low2",
    )
    assert status == 200
    await bot.settle()
    view = slack.views[-1]["view"]
    assert json.loads(view["private_metadata"])["v"]["thread"] == parent.ts
    await bot.sender.view_submission(view, {"question": {"question": "is this documented?"}})
    await bot.settle()
    assert [m for m in slack.replies(CHANNEL, parent.ts) if m.streamed]  # answered in the digest's thread


async def test_a_click_in_a_digest_thread_naming_another_repository_is_refused(make_bot, slack, widgets, tmp_path):
    bot = await make_bot()
    parent, _ = await digest_thread(bot, slack)
    forged = json.dumps({"repo": str(tmp_path), "sha": widgets.shas["high"], "lang": "en", "thread": parent.ts})
    await bot.sender.block_action("digest_details", value=forged, message_ts="9.000005", thread_ts=parent.ts)
    await bot.settle()
    (told,) = slack.ephemerals
    assert "In chat you can name GitHub repositories" in R.unescape(shown_eph(told))
    assert HIGH_TITLE not in R.unescape(shown_eph(told))


async def test_an_empty_question_from_a_dm_form_is_answered_in_the_dm(make_bot, slack, widgets):
    bot = await make_bot()
    view = R.ask_modal(
        {"sha": widgets.shas["high"], "lang": "en"},
        json.dumps({"v": {"repo": str(widgets.path), "sha": widgets.shas["high"], "lang": "en"}, "c": "D0001"}),
    )
    assert (await bot.sender.view_submission(view, {"question": {"question": "   "}}))[0] == 200
    await bot.settle()
    assert slack.ephemerals == []  # a DM is private already: a message, not an ephemeral
    (hint,) = slack.top_level("D0001")
    assert f"your question about `{widgets.shas['high'][:7]}`" in shown(hint)


async def test_a_very_long_word_is_shown_before_it_ends(platform, slack):
    word = "ab0" * 200  # 600 characters without a space (a hash, a URL, base64…)

    async def pieces():
        yield word
        for _ in range(500):  # the reader sees it coming before the answer goes on
            if slack.calls_to("chat.startStream"):
                break
            await asyncio.sleep(0.01)
        yield " and the end."

    conv = Conversation("slack", "C9", "U0001", thread="1.000040", extra={"team_id": "T0001"})
    await platform.stream("C9", "1.000040", pieces(), conv=conv)
    (start,) = slack.calls_to("chat.startStream")
    shown_first = "".join(c["text"] for c in start.params.get("chunks") or []) + start.params.get("markdown_text", "")
    assert 0 < len(shown_first) < len(word) and word.startswith(shown_first)
    (message,) = slack.replies("C9", "1.000040")
    assert message.text == word + " and the end."


async def test_a_code_block_open_at_a_message_cut_is_closed_and_reopened_after_earlier_blocks(platform, slack):
    code = "".join(f"+ line {i}\n" for i in range(1500))
    answer = "First:\n\n```\nsmall\n```\n\nThen:\n\n```diff\n" + code + "```\nThat is all."
    conv = Conversation("slack", "C9", "U0001", thread="1.000041", extra={"team_id": "T0001"})
    await platform.stream("C9", "1.000041", answer_pieces(answer), conv=conv)
    messages = [m for m in slack.replies("C9", "1.000041") if m.streamed]
    assert len(messages) >= 2
    assert all(m.text.count("```") % 2 == 0 for m in messages)  # each message's code blocks closed
    assert "".join(m.text for m in messages).replace("\n``````\n", "") == R.esc(answer)
