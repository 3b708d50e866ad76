"""Feishu end to end: signed, encrypted callbacks into the real HTTP endpoint (handlers/web.py on
port 0 with the adapter's routes) → the conversation core (real Redis, a real git repository,
offline analyses or the fake LLM) → the real lark-oapi SDK → a fake Feishu OpenAPI on loopback."""

from __future__ import annotations

import asyncio
import json
import re
import time

import pytest

from tests.fakes.feishu_server import (
    card_action_event,
    encrypt,
    mention,
    message_event,
    sign,
    url_verification,
)
from tests.fakes.openai_server import FakeOpenAI, Reply, default_responder
from tests.shared.feishu import ALICE, DM, ENCRYPT_KEY, GROUP, TOKEN, callback_value, feishu_env, markdowns, rocket_repo


@pytest.fixture
def repo(tmp_path):
    return rocket_repo(tmp_path)


ANSWER_CHUNKS = ["The cache fix ", "compares expiry ", "with <= instead ", "of <, so entries ", "live one tick less."]


def assert_inert(text: str, allowed: tuple[str, ...] = ()) -> None:
    assert "@all" not in text and "<at user_id" not in text and "<at id=all" not in text
    assert set(re.findall(r"<at id=([^>]*)>", text)) <= set(allowed)
    assert "](http" not in text  # a local repository has no web URL: no link at all


def streaming_llm() -> FakeOpenAI:
    def respond(request):
        if request.get("stream"):
            return Reply(chunks=list(ANSWER_CHUNKS), chunk_delay=0.15)
        return default_responder(request)

    return FakeOpenAI(respond)


# --- digests ---------------------------------------------------------------------------------------


async def test_digest_command_posts_a_digest_card_and_commit_cards_in_its_thread(make_settings, repo):
    async with feishu_env(make_settings, repo) as env:
        env.fake.pause("/open-apis/im/")  # no message can be posted until the callback is answered
        status, body = await asyncio.wait_for(env.say("digest 2026-01-28"), 30)
        assert status == 200 and body == {"msg": "success"}  # acknowledged before any work (Feishu's 3 s)
        assert env.fake.messages == []
        env.fake.resume()
        await env.settle()
        (parent,) = env.fake.top_level(GROUP)
        digest_card = env.fake.card(parent)  # the progress line, replaced by the digest
        assert "2026-01-28" in digest_card["header"]["title"]["content"]
        assert "rocket" in digest_card["header"]["subtitle"]["content"]
        assert parent.patches, "the progress message was not turned into the digest"
        replies = env.fake.thread(parent.message_id)
        assert len(replies) == 2 and all(m.reply_in_thread for m in replies)
        commit_card, _low_card = (env.fake.card(m) for m in replies)
        assert "export --since flag" in commit_card["header"]["title"]["content"]
        assert any(x.get("tag") == "collapsible_panel" for x in commit_card["body"]["elements"])
        ask = callback_value(commit_card, "ask")
        assert ask["thread"] == parent.message_id and len(ask["sha"]) == 40
        assert "cache expiry" in env.fake.text_of(replies[1]) and "typo" in env.fake.text_of(replies[1])
        sends = env.fake.api_calls("/open-apis/im/v1/messages", "POST")
        assert sends and all(c.body.get("uuid") and len(c.body["uuid"]) <= 50 for c in sends)
        everything = markdowns(env.fake, [parent, *replies])
        assert "export --since flag" in everything
        assert_inert(everything)  # the hostile commit title and body stay text
        assert 'user_id="all"' in everything  # …readable as text


async def test_one_to_one_chat_needs_no_mention(make_settings, repo):
    async with feishu_env(make_settings, repo) as env:
        await env.say("digest 2026-01-28", mention_bot=False, chat_id=DM, chat_type="p2p")
        await env.settle()
        (parent,) = env.fake.top_level(DM)
        assert len(env.fake.thread(parent.message_id)) == 2
        # in a group, a message without the mention is not for the bot
        await env.say("digest 2026-01-28", mention_bot=False)
        await env.settle()
        assert env.fake.top_level(GROUP) == []


async def test_a_digest_without_its_verb_and_a_chinese_alias_work(make_settings, repo):
    async with feishu_env(make_settings, repo) as env:
        await env.say("日报 2026-01-28")
        await env.say("2026-01-27")
        await env.settle()
        texts = [env.fake.text_of(m) for m in env.fake.top_level(GROUP)]
        assert len(texts) == 2
        assert any("2026-01-27" in t for t in texts)


async def test_bad_commands_get_a_short_usage_reply(make_settings, repo):
    async with feishu_env(make_settings, repo) as env:
        await env.say("subscribe")  # group: only the asker sees it (ephemeral card)
        await env.settle()
        (ephemeral,) = env.fake.ephemerals
        assert ephemeral["open_id"] == ALICE and ephemeral["chat_id"] == GROUP
        text = ephemeral["card"]["elements"][0]["text"]["content"]
        assert "subscribe owner/repo" in text and "@\u200bDigestBot" in text
        assert env.fake.messages == []
        env.fake.p2p_chat(DM)
        await env.say("frobnicate the flux", mention_bot=False, chat_id=DM, chat_type="p2p")
        await env.settle()
        (reply,) = env.fake.messages  # a DM: a reply quoting the user's message
        assert reply.parent_id.startswith("om_user") and not reply.reply_in_thread
        assert len(env.fake.api_calls("/open-apis/ephemeral/")) == 1  # not even tried in the DM
        assert "subscribe owner/repo" in env.fake.text_of(reply)  # the help


async def test_subscriptions_from_a_group_with_admins(make_settings, repo):
    async with feishu_env(make_settings, repo, feishu_admin_users=ALICE) as env:
        await env.say("订阅 rocket at 09:30 lang en")
        await env.settle()
        (confirmation,) = env.fake.top_level(GROUP)  # the whole chat sees a new subscription
        assert "rocket" in env.fake.text_of(confirmation) and "09:30" in env.fake.text_of(confirmation)
        await env.say("list")
        await env.settle()
        assert "09:30" in env.fake.ephemerals[-1]["card"]["elements"][0]["text"]["content"]
        payload = message_event(
            "@_user_1 unsubscribe rocket",
            sender="ou_mallory0000000000000000000000001",
            token=TOKEN,
            mentions=[mention("@_user_1", env.fake.bot_open_id, "DigestBot", "bot")],
        )
        await env.post(payload)
        await env.settle()
        refusal = env.fake.ephemerals[-1]
        assert refusal["open_id"] == "ou_mallory0000000000000000000000001"
        assert (
            "admin" in refusal["card"]["elements"][0]["text"]["content"].lower()
            or "管理员" in refusal["card"]["elements"][0]["text"]["content"]
        )


async def test_ephemeral_refused_falls_back_to_a_reply(make_settings, repo):
    async with feishu_env(make_settings, repo) as env:
        env.fake.deny_ephemeral()
        await env.say("help")
        await env.settle()
        (reply,) = env.fake.messages
        assert reply.parent_id.startswith("om_user") and "subscribe" in env.fake.text_of(reply)


# --- reliability --------------------------------------------------------------------------------------


async def test_a_duplicate_event_is_answered_once(make_settings, repo):
    async with feishu_env(make_settings, repo) as env:
        payload = message_event(
            "@_user_1 digest 2026-01-28",
            token=TOKEN,
            mentions=[mention("@_user_1", env.fake.bot_open_id, "DigestBot", "bot")],
        )
        first = await env.post(payload)
        second = await env.post(payload)  # Feishu re-pushes what it thinks we missed
        assert first[0] == second[0] == 200
        await env.settle()
        assert len(env.fake.top_level(GROUP)) == 1
        assert len(env.fake.api_calls("/open-apis/im/v1/messages", "POST")) == 3  # progress + 2 thread cards


async def test_a_rate_limit_storm_loses_nothing_and_keeps_the_order(make_settings, repo):
    async with feishu_env(make_settings, repo) as env:
        env.fake.throttle(5, reset="0.05")
        env.fake.fail(1, status=502, path="/open-apis/im/v1/messages")
        parent, replies = await env.digest()
        throttled = [c for c in env.fake.calls if c.status == 429]
        assert len(throttled) == 5 and all(c.code == 99991400 for c in throttled)
        assert len(env.fake.messages) == 3  # nothing doubled, nothing lost
        assert [env.fake.card(m)["header"]["template"] for m in replies] == ["orange", "green"]
        assert "2026-01-28" in env.fake.card(parent)["header"]["title"]["content"]


async def test_a_send_that_keeps_failing_is_reported_in_one_sentence(make_settings, repo):
    async with feishu_env(make_settings, repo) as env:
        env.adapter.api.max_throttled = 2  # give up sooner than in production (10 waits)
        env.fake.throttle(1000, reset="0.01", path="/open-apis/im/v1/messages/")  # every edit and reply
        await env.say("digest 2026-01-28")
        await env.settle()
        assert len(env.fake.messages) == 1  # only the progress line got out; nothing was doubled
        (told,) = env.fake.ephemerals  # the asker learns why, in one sentence
        sentence = told["card"]["elements"][0]["text"]["content"]
        assert "飞书持续限流" in sentence and "\n" not in sentence and "Traceback" not in sentence
        assert "app-secret-for-tests" not in sentence and "Bearer" not in sentence


@pytest.mark.parametrize(
    "case", ["forged", "wrong_key", "stale", "future", "unsigned", "garbage", "plain", "wrong_token", "not_object"]
)
async def test_forged_unsigned_or_stale_callbacks_are_rejected_and_do_nothing(make_settings, repo, case):
    async with feishu_env(make_settings, repo) as env:
        payload = message_event(
            "@_user_1 digest 2026-01-28",
            token=TOKEN,
            mentions=[mention("@_user_1", env.fake.bot_open_id, "DigestBot", "bot")],
        )
        body = encrypt(payload, ENCRYPT_KEY)
        headers = sign(body, ENCRYPT_KEY)
        if case == "forged":
            headers = sign(body, "someone-elses-key")
        elif case == "wrong_key":
            body = encrypt(payload, "someone-elses-key")
            headers = sign(body, "someone-elses-key")
        elif case == "stale":
            headers = sign(body, ENCRYPT_KEY, timestamp=int(time.time()) - 600)
        elif case == "future":
            headers = sign(body, ENCRYPT_KEY, timestamp=int(time.time()) + 600)
        elif case == "unsigned":
            headers = {k: v for k, v in headers.items() if k != "X-Lark-Signature"}
        elif case == "garbage":
            body = b"\x00\xffnot json at all"
            headers = sign(body, ENCRYPT_KEY)
        elif case == "plain":
            body = json.dumps(payload).encode()
            headers = sign(body, ENCRYPT_KEY)
        elif case == "wrong_token":
            body = encrypt({**payload, "header": {**payload["header"], "token": "guessed"}}, ENCRYPT_KEY)
            headers = sign(body, ENCRYPT_KEY)
        elif case == "not_object":
            body = b"[1, 2, 3]"
            headers = sign(body, ENCRYPT_KEY)
        status, answer = await env.post_raw(body, headers)
        assert 400 <= status < 500, (status, answer)
        assert "Traceback" not in json.dumps(answer)
        await env.settle()
        assert env.fake.messages == [] and env.fake.ephemerals == []
        assert not env.fake.api_calls("/open-apis/im/")


async def test_url_verification_and_unhandled_events(make_settings, repo):
    async with feishu_env(make_settings, repo) as env:
        status, body = await env.post_raw(encrypt(url_verification("c-123", TOKEN), ENCRYPT_KEY), {})
        assert (status, body) == (200, {"challenge": "c-123"})
        status, _ = await env.post_raw(encrypt(url_verification("c-123", "guess"), ENCRYPT_KEY), {})
        assert status == 401
        other = message_event("hi", token=TOKEN)
        other["header"]["event_type"] = "im.message.message_read_v1"
        assert await env.post(other) == (200, {"msg": "ignored"})
        bot_said = message_event(
            "@_user_1 digest 2026-01-28",
            token=TOKEN,
            sender_type="app",
            mentions=[mention("@_user_1", env.fake.bot_open_id, "DigestBot", "bot")],
        )
        assert (await env.post(bot_said))[0] == 200
        await env.settle()
        assert env.fake.messages == []


# --- questions --------------------------------------------------------------------------------------


async def test_a_question_in_the_thread_streams_an_answer_through_cardkit(make_settings, repo):
    with streaming_llm() as llm:
        async with feishu_env(make_settings, repo, openai_base_url=llm.url, openai_api_key="sk-test") as env:
            parent, _replies = await env.digest()
            await env.say("what does the cache fix change?", root_id=parent.message_id)
            await env.settle()
            answer = env.fake.thread(parent.message_id)[-1]
            assert answer.reply_in_thread
            ref = json.loads(answer.content)
            assert ref["type"] == "card"
            entity = env.fake.cards[ref["data"]["card_id"]]
            assert len(entity.history) >= 2, "the answer was not streamed in several updates"
            sequences = [s for s, _ in entity.history] + [entity.sequence]  # the last: closing the stream
            assert sequences == sorted(set(sequences))
            final = entity.history[-1][1]
            assert "".join(ANSWER_CHUNKS).replace("<", "&#60;") in final
            assert entity.card["config"]["streaming_mode"] is False and entity.settings


async def test_the_platform_streams_pieces_into_a_cardkit_card_as_they_arrive(make_settings, repo):
    async with feishu_env(make_settings, repo) as env:
        parent, _ = await env.digest()
        seen: list[str] = []

        async def one_at_a_time():
            """The next piece only once Feishu shows the text so far (an observable event, not a delay)."""
            text = ""
            for chunk in ANSWER_CHUNKS:
                yield chunk
                text += chunk
                for _ in range(400):
                    shown = [e.history[-1][1] for e in env.fake.cards.values() if e.history]
                    if text.replace("<", "&#60;") in shown:
                        seen.append(text)
                        break
                    await asyncio.sleep(0.01)

        ref = await env.adapter.platform.stream(GROUP, parent.message_id, one_at_a_time())
        message = env.fake.message(ref.id)
        assert message.reply_in_thread and message.root_id == parent.message_id
        entity = env.fake.cards[json.loads(message.content)["data"]["card_id"]]
        assert len(seen) >= len(ANSWER_CHUNKS) - 1  # each piece was shown before the next existed
        assert len(entity.history) >= len(ANSWER_CHUNKS) - 1  # updated as pieces arrived, not once at the end
        sequences = [s for s, _ in entity.history]
        assert sequences == sorted(set(sequences))
        assert entity.history[-1][1] == "".join(ANSWER_CHUNKS).replace("<", "&#60;")
        assert entity.card["config"]["streaming_mode"] is False


async def test_pieces_arriving_together_are_coalesced_and_long_answers_continue_on_new_cards(make_settings, repo):
    async with feishu_env(make_settings, repo) as env:
        parent, _ = await env.digest()
        words = [f"word{i:05d} " for i in range(8_000)]  # ~80 KB: three or four cards

        async def burst():
            for i in range(0, len(words), 100):
                yield "".join(words[i : i + 100])
                if i % 2000 == 0:
                    await asyncio.sleep(0.05)

        await env.adapter.platform.stream(GROUP, parent.message_id, burst())
        answers = env.fake.thread(parent.message_id)[2:]
        assert len(answers) >= 3
        entities = [env.fake.cards[json.loads(m.content)["data"]["card_id"]] for m in answers]
        assert all(e.card["config"]["streaming_mode"] is False for e in entities)
        assert sum(len(e.history) for e in entities) < 80  # 80 pieces, far fewer updates
        shown = "".join(e.history[-1][1] if e.history else e.card["body"]["elements"][0]["content"] for e in entities)
        assert all(w.strip() in shown for w in words)


async def test_the_ask_button_opens_a_form_whose_question_is_answered(make_settings, repo):
    async with feishu_env(make_settings, repo) as env:
        parent, replies = await env.digest()
        commit_message = replies[0]
        status, body = await env.click(
            callback_value(env.fake.card(commit_message), "ask"), message_id=commit_message.message_id
        )
        assert status == 200 and body["toast"]["type"] == "info"
        await env.settle()
        form_message = env.fake.thread(parent.message_id)[-1]
        form = env.fake.card(form_message)
        assert any(n.get("tag") == "form" for n in form["body"]["elements"])
        submit = callback_value(form, "ask_submit")
        status, body = await env.click(submit, message_id=form_message.message_id, form_value={"question": ""})
        assert body["toast"]["type"] == "warning"  # nothing asked yet
        status, body = await env.click(
            submit, message_id=form_message.message_id, form_value={"question": "what could this break?"}
        )
        assert status == 200 and body["card"]["type"] == "raw"  # the form is replaced: no double submit
        assert body["card"]["data"]["schema"] == "2.0" and not any(
            n.get("tag") == "form" for n in body["card"]["data"]["body"]["elements"]
        )
        await env.settle()
        header, answer = env.fake.thread(parent.message_id)[-2:]
        assert f"<at id={ALICE}></at>" in env.fake.text_of(header) and "what could this break?" in env.fake.text_of(
            header
        )
        assert "LLM" in env.fake.text_of(answer)  # no LLM configured: the offline answer


async def test_a_vague_question_offers_a_choice_and_the_choice_is_answered(make_settings, repo):
    async with feishu_env(make_settings, repo) as env:
        parent, _ = await env.digest()
        await env.say("what changed here?", root_id=parent.message_id)
        await env.settle()
        choice_message = env.fake.thread(parent.message_id)[-1]
        choose = callback_value(env.fake.card(choice_message), "choose")
        assert choose["question"].endswith("what changed here?") and choose["thread"] == parent.message_id
        status, body = await env.click(choose, message_id=choice_message.message_id)
        assert status == 200 and body["toast"]
        await env.settle()
        answer = env.fake.thread(parent.message_id)[-1]
        assert answer.message_id != choice_message.message_id and "LLM" in env.fake.text_of(answer)


async def test_rich_text_messages_are_commands_too(make_settings, repo):
    async with feishu_env(make_settings, repo) as env:
        post = {
            "title": "",
            "content": [
                [
                    {"tag": "at", "user_id": "@_user_1", "user_name": "DigestBot"},
                    {"tag": "text", "text": " digest "},
                    {"tag": "text", "text": "2026-01-28"},
                ]
            ],
        }
        payload = message_event(
            message_type="post",
            content=post,
            token=TOKEN,
            mentions=[mention("@_user_1", env.fake.bot_open_id, "DigestBot", "bot")],
        )
        assert (await env.post(payload))[0] == 200
        await env.settle()
        (parent,) = env.fake.top_level(GROUP)
        assert "2026-01-28" in env.fake.card(parent)["header"]["title"]["content"]


async def test_the_details_button_posts_the_full_analysis_in_the_thread(make_settings, repo):
    async with feishu_env(make_settings, repo) as env:
        parent, replies = await env.digest()
        status, body = await env.click(
            callback_value(env.fake.card(replies[0]), "details"), message_id=replies[0].message_id
        )
        assert status == 200 and "toast" in body
        await env.settle()
        details = env.fake.thread(parent.message_id)[-1]
        card = env.fake.card(details)
        panels = [e for e in card["body"]["elements"] if e.get("tag") == "collapsible_panel"]
        assert panels and all(p["expanded"] for p in panels)
        assert_inert(env.fake.markdown_of(details))


async def test_without_cardkit_answers_stream_by_editing_a_message(make_settings, repo):
    with streaming_llm() as llm:
        async with feishu_env(make_settings, repo, openai_base_url=llm.url, openai_api_key="sk-test") as env:
            env.fake.deny_cardkit()
            parent, _ = await env.digest()
            await env.say("what does the cache fix change?", root_id=parent.message_id)
            await env.settle()
            answer = env.fake.thread(parent.message_id)[-1]
            assert answer.patches, "the answer was not edited as it grew"
            assert "".join(ANSWER_CHUNKS).replace("<", "&#60;") in env.fake.text_of(answer)


# --- the long connection's dispatch path ----------------------------------------------------------------


async def test_ws_mode_hands_events_from_its_own_thread_to_the_main_loop(make_settings, repo):
    async with feishu_env(make_settings, repo, mode="ws") as env:
        assert env.adapter.http_routes() == []
        payload = message_event("digest 2026-01-28", chat_id=DM, chat_type="p2p")
        raw = json.dumps(payload).encode()
        env.fake.pause("/open-apis/im/")  # the handler must return before anything is posted
        # exactly what lark.ws.Client does with each event frame, on a thread of its own
        result = await asyncio.wait_for(asyncio.to_thread(env.adapter.dispatcher._do_without_validation, raw), 30)
        assert result is None and env.fake.messages == []
        env.fake.resume()
        await env.settle()
        (parent,) = env.fake.top_level(DM)
        replies = env.fake.thread(parent.message_id)
        commit_card = env.fake.card(replies[0])
        click = card_action_event(
            callback_value(commit_card, "details"), chat_id=DM, message_id=replies[0].message_id, operator=ALICE
        )
        response = await asyncio.to_thread(env.adapter.dispatcher._do_without_validation, json.dumps(click).encode())
        assert response.toast.content
        await env.settle()
        assert len(env.fake.thread(parent.message_id)) == 3


async def test_ws_mode_over_a_real_long_connection(make_settings, repo):
    async with feishu_env(make_settings, repo, mode="ws") as env:
        await env.adapter.start()  # lark.ws.Client on its own thread and loop, connecting to the fake gateway
        assert await asyncio.to_thread(env.fake.ws_connected.wait, 5), "the long connection never came up"
        answer = await asyncio.to_thread(
            env.fake.ws_push, message_event("digest 2026-01-28", chat_id=DM, chat_type="p2p")
        )
        assert answer["code"] == 200
        await env.settle()
        (parent,) = env.fake.top_level(DM)
        replies = env.fake.thread(parent.message_id)
        click = card_action_event(
            callback_value(env.fake.card(replies[0]), "ask"),
            chat_id=DM,
            message_id=replies[0].message_id,
            operator=ALICE,
        )
        answer = await asyncio.to_thread(env.fake.ws_push, click)
        assert answer["code"] == 200 and answer["data"]["toast"]["type"] == "info"
        await env.settle()
        assert any(
            n.get("tag") == "form" for n in env.fake.card(env.fake.thread(parent.message_id)[-1])["body"]["elements"]
        )
        await env.adapter.close()  # stops the long connection's thread
        assert not env.adapter._ws_thread.is_alive()
        for _ in range(40):  # the gateway sees the socket close
            if not env.fake.ws_connected.is_set():
                break
            await asyncio.sleep(0.05)
        assert not env.fake.ws_connected.is_set()


async def test_ws_mode_with_wrong_credentials_says_so_in_one_line(make_settings, repo, caplog):
    async with feishu_env(make_settings, repo, mode="ws") as env:
        env.fake.app_secret = "rotated-secret"  # the bot's secret no longer matches
        await env.adapter.start()
        for _ in range(100):
            if not env.adapter._ws_thread.is_alive():
                break
            await asyncio.sleep(0.05)
        assert not env.adapter._ws_thread.is_alive()
        lines = [r.getMessage() for r in caplog.records if "long connection" in r.getMessage()]
        assert lines and "app-secret-for-tests" not in lines[0] and "\n" not in lines[0]


# --- shared with the other Feishu test files ------------------------------------------------------
