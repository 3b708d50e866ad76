"""Inbound Feishu events (handlers/feishu/events.py) as a chat member experiences them: which
messages the bot takes as addressed to it, how their text reads back (mentions, rich text), and
what each card button answers. Signed callbacks into the real HTTP endpoint, or frames as the long
connection delivers them → real lark-oapi SDK → the fake Feishu on loopback; real Redis."""

from __future__ import annotations

import pytest

from tests.fakes.feishu_server import card_action_event, mention, message_event
from tests.shared.feishu import ALICE, DM, GROUP, TOKEN, callback_value, deliver, feishu_env, rocket_repo, settle


@pytest.fixture
def repo(tmp_path):
    return rocket_repo(tmp_path)


BOB = "ou_bob00000000000000000000000000001"


def at_bot(env, key: str = "@_user_1") -> dict:
    return mention(key, env.fake.bot_open_id, env.fake.bot_name, "bot")


# --- messages -------------------------------------------------------------------------------------------


async def test_other_peoples_mentions_read_as_their_names_and_the_bots_disappears(make_settings, repo):
    async with feishu_env(make_settings, repo) as env:
        parent, _ = await env.digest()
        env.fake.user_message("om_q1", GROUP, "", parent.message_id)
        await env.post(
            message_event(
                "@_user_1 what did   @_user_2 change\n here?",
                token=TOKEN,
                root_id=parent.message_id,
                message_id="om_q1",
                thread_id="omt_x",
                mentions=[at_bot(env), mention("@_user_2", BOB, "Bob")],
            )
        )
        await env.settle()
        choice = env.fake.card(env.fake.thread(parent.message_id)[-1])  # "which commit do you mean?"
        # the question as the bot read it: spaces and newlines folded, the bot's own @ gone, Bob by name
        assert callback_value(choice, "choose")["question"] == "what did @Bob change here?"


async def test_a_message_from_the_bot_itself_is_not_answered(make_settings, repo):
    async with feishu_env(make_settings, repo) as env:
        await env.post(
            message_event(
                "@_user_1 digest 2026-01-28", token=TOKEN, sender=env.fake.bot_open_id, mentions=[at_bot(env)]
            )
        )
        await env.settle()
        assert env.fake.messages == [] and env.fake.ephemerals == []


async def test_an_image_mentioning_the_bot_is_not_answered(make_settings, repo, caplog):
    async with feishu_env(make_settings, repo) as env:
        await env.post(
            message_event(message_type="image", content={"image_key": "img_v2_x"}, token=TOKEN, mentions=[at_bot(env)])
        )
        await env.post(message_event(message_type="text", content="not json{", token=TOKEN, mentions=[at_bot(env)]))
        await env.settle()
        assert env.fake.messages == [] and env.fake.ephemerals == []
        assert not [r for r in caplog.records if r.levelname == "ERROR"]  # ignored quietly, not a failure


async def test_rich_text_keyed_by_language_with_a_title_links_and_code_is_read_in_order(make_settings, repo):
    async with feishu_env(make_settings, repo) as env:
        post = {
            "zh_cn": {
                "title": "digest",
                "content": [
                    [{"tag": "at", "user_id": "@_user_1", "user_name": "DigestBot"}],
                    [
                        {"tag": "a", "text": "2026-01-28", "href": "https://example.com"},
                        {"tag": "img", "image_key": "x"},
                    ],
                    None,
                ],
            }
        }
        await env.post(message_event(message_type="post", content=post, token=TOKEN, mentions=[at_bot(env)]))
        await env.settle()
        (parent,) = env.fake.top_level(GROUP)
        assert "2026-01-28" in env.fake.card(parent)["header"]["title"]["content"]
        env.fake.user_message("om_q2", GROUP, "", parent.message_id)
        question = {
            "title": "what",
            "content": [
                [
                    {"tag": "text", "text": "did "},
                    {"tag": "code_block", "text": "this"},
                    {"tag": "md", "text": " change?"},
                ]
            ],
        }
        await env.post(
            message_event(
                message_type="post",
                content=question,
                token=TOKEN,
                root_id=parent.message_id,
                message_id="om_q2",
                thread_id="omt_x",
                mentions=[at_bot(env)],
            )
        )
        await env.settle()
        choice = env.fake.card(env.fake.thread(parent.message_id)[-1])  # "which commit do you mean?"
        assert callback_value(choice, "choose")["question"] == "what did this change?"


async def test_group_chatter_not_addressed_to_the_bot_is_ignored(make_settings, repo):
    async with feishu_env(make_settings, repo) as env:
        await env.say("lunch?", mention_bot=False)
        await env.say("help", mention_bot=False)  # a command word, but not to the bot
        await env.settle()
        assert env.fake.messages == [] and env.fake.ephemerals == []


async def test_without_its_identity_the_bot_knows_its_mention_by_type(make_settings, repo):
    async with feishu_env(make_settings, repo, mode="ws") as env:  # not started: identity read on first event
        env.fake.fail(1, status=400, code=99991672, path="/open-apis/bot/")  # bot info not readable
        await deliver(env, message_event("@_user_1 help", mentions=[mention("@_user_1", "ou_someone", "Carol")]))
        await settle(env)
        assert env.fake.ephemerals == []  # a user was mentioned, not the bot
        await deliver(env, message_event("@_user_1 help", mentions=[mention("@_user_1", "ou_unknown", "Bot", "bot")]))
        await settle(env)
        (told,) = env.fake.ephemerals
        assert "subscribe" in told["card"]["elements"][0]["text"]["content"]
        assert "• `@\u200bbot [日期|" in told["card"]["elements"][0]["text"]["content"]  # its name unknown too


async def test_a_command_names_the_bot_as_chat_members_see_it(make_settings, repo):
    async with feishu_env(make_settings, repo) as env:
        await env.say("subscribe")
        await env.settle()
        assert "@\u200bDigestBot" in env.fake.ephemerals[-1]["card"]["elements"][0]["text"]["content"]


# --- card buttons ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "value, toast",
    [
        ({"action": "frobnicate", "lang": "en"}, "This button is no longer valid"),
        ({"action": "details", "lang": "en", "sha": "a" * 40}, "Preparing the details…"),
        ({"action": "choose", "lang": "en", "sha": "a" * 40}, "Answering…"),
        ({"action": "ask", "lang": "fr"}, "请在话题里填写问题"),  # an unknown language: the bot's default (zh)
        ({"action": "ask_submit", "lang": "en"}, "Please type a question first"),
    ],
)
async def test_each_button_answers_at_once_with_a_toast_in_the_cards_language(make_settings, repo, value, toast):
    async with feishu_env(make_settings, repo) as env:
        status, body = await env.post(
            card_action_event(
                value,
                chat_id=GROUP,
                message_id="om_card0000000000000000001",
                operator=ALICE,
                form_value={"question": "  "},
                token=TOKEN,
            )
        )
        assert status == 200 and body["toast"]["content"] == toast
        assert body["toast"]["type"] == (
            "warning" if "valid" in toast or "question" in toast or "失效" in toast else "info"
        )


async def test_a_button_without_its_chat_is_refused(make_settings, repo):
    async with feishu_env(make_settings, repo) as env:
        status, body = await env.post(
            card_action_event(
                {"action": "details", "lang": "en", "sha": "a" * 40},
                chat_id="",
                message_id="om_card0000000000000000001",
                operator=ALICE,
                token=TOKEN,
            )
        )
        assert status == 200 and body["toast"] == {"type": "warning", "content": "This button is no longer valid"}
        await env.settle()
        assert env.fake.messages == [] and env.fake.ephemerals == []


async def test_a_form_submitted_without_its_value_and_an_empty_question_is_told_to_type_one(make_settings, repo):
    async with feishu_env(make_settings, repo) as env:
        status, body = await env.post(
            card_action_event(
                None,
                chat_id=GROUP,
                message_id="om_form0000000000000000001",
                operator=ALICE,
                form_value={"question": " "},
                token=TOKEN,
            )
        )
        assert status == 200 and body == {"toast": {"type": "warning", "content": "请先写下问题"}}


async def test_a_refusal_after_a_click_in_a_one_to_one_chat_is_a_message_there(make_settings, repo, tmp_path):
    async with feishu_env(make_settings, repo) as env:
        env.fake.p2p_chat(DM)
        await env.say("help", mention_bot=False, chat_id=DM, chat_type="p2p")  # the bot learns DM is one-to-one
        await env.settle()
        before = len(env.fake.messages)
        forged = {"action": "details", "sha": "a" * 40, "repo": str(tmp_path), "lang": "en"}
        status, _ = await env.post(
            card_action_event(
                forged, chat_id=DM, message_id=env.fake.messages[-1].message_id, operator=ALICE, token=TOKEN
            )
        )
        assert status == 200
        await env.settle()
        assert env.fake.api_calls("/open-apis/ephemeral/") == []  # no "only you can see this" in a DM
        assert "In chat you can name GitHub repositories" in env.fake.text_of(env.fake.messages[before])


async def test_rich_text_with_nodes_feishu_never_sends_is_read_as_far_as_it_goes(make_settings, repo, caplog):
    async with feishu_env(make_settings, repo) as env:
        post = {
            "title": "",
            "content": [
                ["stray", 5, {"tag": "at", "user_id": "@_user_1"}, {"tag": "text", "text": " help"}],
                {"not": "a paragraph"},
            ],
        }
        await env.post(message_event(message_type="post", content=post, token=TOKEN, mentions=[at_bot(env)]))
        await env.settle()
        (told,) = env.fake.ephemerals
        assert "subscribe" in told["card"]["elements"][0]["text"]["content"]
        assert not [r for r in caplog.records if r.levelname == "ERROR"]


async def test_an_event_without_its_message_is_ignored_quietly(make_settings, repo, caplog):
    async with feishu_env(make_settings, repo) as env:
        for broken in ({"message": None}, None):
            payload = message_event("@_user_1 help", token=TOKEN, mentions=[at_bot(env)])
            if broken is None:
                payload["event"] = None
            else:
                payload["event"].update(broken)
            assert (await env.post(payload))[0] == 200  # acknowledged, so Feishu does not re-push it
        await env.settle()
        assert env.fake.messages == [] and env.fake.ephemerals == []
        assert not [r for r in caplog.records if r.levelname == "ERROR"]


async def test_a_click_delivered_twice_leaves_no_work_half_started(make_settings, repo, recwarn):
    import gc

    async with feishu_env(make_settings, repo) as env:
        parent, replies = await env.digest()
        click = card_action_event(
            callback_value(env.fake.card(replies[0]), "details"),
            chat_id=GROUP,
            message_id=replies[0].message_id,
            operator=ALICE,
            token=TOKEN,
        )
        await env.post(click)
        await env.post(click)
        await env.settle()
        gc.collect()
        assert len(env.fake.thread(parent.message_id)) == 3
        assert not [w for w in recwarn if "never awaited" in str(w.message)]


async def test_a_mentioned_question_outside_a_thread_is_a_question_not_a_bad_command(make_settings, repo):
    async with feishu_env(make_settings, repo) as env:
        _parent, replies = await env.digest()
        sha = callback_value(env.fake.card(replies[0]), "ask")["sha"]
        before = len(env.fake.messages)
        await env.say(f"what does {sha[:7]} change?")
        await env.settle()
        assert len(env.fake.messages) > before  # answered in the chat…
        assert env.fake.ephemerals == []  # …not told the usage of a command


async def test_a_callback_without_its_action_is_an_invalid_button(make_settings, repo):
    async with feishu_env(make_settings, repo) as env:
        payload = card_action_event(
            {"action": "details"}, chat_id=GROUP, message_id="om_card0000000000000000001", operator=ALICE, token=TOKEN
        )
        del payload["event"]["action"]
        status, body = await env.post(payload)
        assert status == 200 and body["toast"] == {"type": "warning", "content": "这个按钮已失效"}
