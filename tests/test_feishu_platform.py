"""Sending to Feishu (handlers/feishu/platform.py) as the chat shows it: a message too long for one
card edited into place, private notices where no ephemeral card is possible, the bot's identity
read once, the scope check cached, a streamed answer's chat-list preview. Real lark-oapi SDK → the
fake Feishu on loopback; real Redis."""

from __future__ import annotations

import pytest

from bot.core.chat_platform import CommitDetail
from bot.render import feishu as R
from tests.fakes.feishu_server import mention, message_event
from tests.shared.feishu import DM, GROUP, TOKEN, code_heavy_digest, deliver, feishu_env, rocket_repo, settle


@pytest.fixture
def repo(tmp_path):
    return rocket_repo(tmp_path)


async def test_an_edit_too_long_for_one_card_continues_in_the_messages_thread(make_settings, repo):
    async with feishu_env(make_settings, repo) as env:
        ref = await env.adapter.platform.post_cards(GROUP, [R.card([{"tag": "markdown", "content": "⏳ working…"}])])
        d, entry = code_heavy_digest()
        returned = await env.adapter.platform.update(ref, CommitDetail(d, entry))
        assert returned == ref
        edited = env.fake.message(ref.id)
        assert edited.patches and "working" not in env.fake.text_of(edited)
        rest = env.fake.thread(ref.id)
        assert len(rest) >= 2 and all(m.reply_in_thread for m in rest)
        shown = "\n".join(env.fake.shown(m) for m in [edited, *rest])
        assert all(f'cfg["key_{i:04d}"]' in shown for i in range(900))  # nothing lost across the cards


async def test_an_edit_that_fits_one_card_posts_nothing_more(make_settings, repo):
    from bot.core.chat_platform import Notice

    async with feishu_env(make_settings, repo) as env:
        ref = await env.adapter.platform.post_cards(GROUP, [R.card([{"tag": "markdown", "content": "⏳ working…"}])])
        await env.adapter.platform.update(ref, Notice("done", lang="en"))
        assert len(env.fake.messages) == 1 and "done" in env.fake.text_of(env.fake.message(ref.id))


async def test_a_notice_to_a_recalled_message_in_a_one_to_one_chat_is_posted_plainly(make_settings, repo):
    async with feishu_env(make_settings, repo) as env:
        env.fake.p2p_chat(DM)
        # the user's message is gone (recalled) by the time the bot answers it: no quote possible
        await env.post(
            message_event(
                "frobnicate", chat_id=DM, chat_type="p2p", token=TOKEN, message_id="om_recalled0000000000000001"
            )
        )
        await env.settle()
        (reply,) = env.fake.messages
        assert reply.chat_id == DM and not reply.parent_id and "help" in env.fake.text_of(reply)
        assert env.fake.api_calls("/open-apis/ephemeral/") == []


async def test_a_rate_limited_quote_is_not_posted_twice(make_settings, repo):
    async with feishu_env(make_settings, repo) as env:
        env.fake.p2p_chat(DM)
        env.adapter.api.max_throttled = 0
        env.fake.user_message("om_user_dm0000000000000001", DM, "frobnicate")
        env.fake.throttle(1, path="/open-apis/im/v1/messages/om_user_dm")
        await env.post(
            message_event(
                "frobnicate", chat_id=DM, chat_type="p2p", token=TOKEN, message_id="om_user_dm0000000000000001"
            )
        )
        await env.settle()
        (reply,) = env.fake.messages  # the failure reported (quoting, once the limit passed)…
        assert reply.parent_id == "om_user_dm0000000000000001" and "飞书持续限流" in env.fake.text_of(
            reply
        )  # in the chat's language (zh)
        # …not turned into an unquoted send of the same reply


async def test_an_unreadable_identity_is_read_once_a_minute_not_on_every_event(make_settings, repo):
    async with feishu_env(make_settings, repo, mode="ws") as env:  # not started: identity read on first event
        env.fake.fail(1, status=400, code=99991672, path="/open-apis/bot/")
        for _ in range(2):
            await deliver(env, message_event("help", chat_id=DM, chat_type="p2p"))
            await settle(env)
        assert len(env.fake.api_calls("/open-apis/bot/v3/info")) == 1
        assert len(env.fake.messages) == 2  # both answered meanwhile


async def test_another_bots_mention_is_not_the_bots_own(make_settings, repo):
    async with feishu_env(make_settings, repo) as env:
        await env.post(
            message_event(
                "@_user_1 help",
                token=TOKEN,
                mentions=[mention("@_user_1", "ou_otherbot00000000000000000000001", "Other", "bot")],
            )
        )
        await env.settle()
        assert env.fake.messages == [] and env.fake.ephemerals == []


async def test_the_scope_check_is_cached_for_ten_minutes(make_settings, repo):
    async with feishu_env(make_settings, repo) as env:
        for _ in range(2):
            await env.say("config questions all")
            await env.settle()
        assert len(env.fake.api_calls("/open-apis/application/v6/scopes")) == 1
        assert all("im:message.group_msg" in env.fake.shown(m) for m in env.fake.top_level(GROUP))


async def test_a_scope_listed_without_a_grant_status_counts_as_missing(make_settings, repo):
    async with feishu_env(make_settings, repo) as env:
        env.fake.scopes["im:message.group_msg"] = None  # listed, its grant status not given
        await env.say("config questions all")
        await env.settle()
        assert "应用还没有敏感权限 im:message.group_msg" in env.fake.shown(env.fake.top_level(GROUP)[-1])  # missing


async def test_a_streamed_answer_previews_its_first_sixty_characters_in_the_chat_list(make_settings, repo):
    async with feishu_env(make_settings, repo) as env:
        env.fake.user_message("om_q0000000000000000000001", GROUP, "why?")
        text = "Because " + "the expiry compared with less-or-equal " * 5

        async def pieces():
            yield text

        await env.adapter.platform.stream(GROUP, "om_q0000000000000000000001", pieces())
        (entity,) = env.fake.cards.values()
        summary = entity.card["config"]["summary"]["content"]
        assert summary == R.plain(text, 60) and len(summary) == 60 and summary.endswith("…")


@pytest.mark.parametrize("code", [99991672, 99991679, 230027, 230006])
async def test_each_permission_refusal_switches_ephemeral_cards_off_everywhere(make_settings, repo, code):
    async with feishu_env(make_settings, repo) as env:
        env.fake.fail(1, status=400, code=code, msg="no permission", path="/open-apis/ephemeral/")
        await env.say("help")
        await env.settle()
        await env.say("help", chat_id="oc_other000000000000000000000000001")
        await env.settle()
        assert len(env.fake.api_calls("/open-apis/ephemeral/")) == 1  # not tried again in another chat
        assert env.fake.ephemerals == [] and len(env.fake.messages) == 2  # both answered as replies


@pytest.mark.parametrize("code", [10002, 230099])
async def test_other_ephemeral_refusals_switch_them_off_only_in_that_chat(make_settings, repo, code):
    async with feishu_env(make_settings, repo) as env:
        env.fake.fail(1, status=400, code=code, msg="not here", path="/open-apis/ephemeral/")
        await env.say("help")
        await env.settle()
        await env.say("help", chat_id="oc_other000000000000000000000000001")
        await env.say("help")
        await env.settle()
        assert [e["chat_id"] for e in env.fake.ephemerals] == ["oc_other000000000000000000000000001"]
        assert len(env.fake.messages) == 2  # the refusing chat got replies, twice, without asking again


# --- reading the chat back after the send's uuid expired (issue 9, item 16): the lookup's reach ---------


async def lost_parent_with_chatter(env, repo, *, since: int, before: int = 0):
    """A push whose parent never reached Feishu, retried hours later, with `before` messages in the
    group older than the first attempt (beyond the lookup's clock skew) and `since` after it."""
    from tests.shared.feishu import fails_for_now, later, push_spec

    env.fake.scopes["im:message.group_msg"] = 1
    for i in range(before):
        env.fake.user_message(f"om_old{i:05d}", GROUP, f"old {i}")
    later(env, 700)  # the old messages are more than the 600 s skew before the first attempt
    env.adapter.api.max_transient = 2
    spec = push_spec(env, repo)
    env.fake.fail(2, path="/open-apis/im/v1/messages")
    await fails_for_now(env, spec)
    assert env.fake.top_level(GROUP) == []
    for i in range(since):
        env.fake.user_message(f"om_new{i:05d}", GROUP, f"new {i}")
    later(env, 3 * 3600)
    return spec


async def test_a_thousand_messages_since_a_lost_send_are_read_to_the_end(make_settings, repo):
    async with feishu_env(make_settings, repo) as env:
        spec = await lost_parent_with_chatter(env, repo, since=1000, before=1001)
        assert await env.chat.deliveries.run(spec) == "delivered"  # 20 pages read: not there, so posted
        assert len(env.fake.top_level(GROUP)) == 1
        listed = env.fake.api_calls("/open-apis/im/v1/messages", "GET")
        assert len(listed) == 20 and all(c.query["page_size"] == "50" for c in listed)


async def test_more_messages_since_a_lost_send_than_a_lookup_reads_leave_it_undecided(make_settings, repo):
    async with feishu_env(make_settings, repo) as env:
        spec = await lost_parent_with_chatter(env, repo, since=1001)
        assert await env.chat.deliveries.run(spec) == "uncertain"  # it might be on page 21: not posted
        assert env.fake.top_level(GROUP) == []
        assert len(env.fake.api_calls("/open-apis/im/v1/messages", "GET")) == 20


# --- a keyed message of several cards, checked after its uuid expired ------------------------------------


async def test_a_long_keyed_message_whose_continuation_was_lost_is_completed_not_reposted(make_settings, repo):
    from handlers.feishu import FeishuError
    from tests.shared.feishu import later

    async with feishu_env(make_settings, repo) as env:
        env.fake.scopes["im:message.group_msg"] = 1
        env.adapter.api.max_transient = 1
        d, entry = code_heavy_digest()
        since = env.chat.clock().timestamp()
        env.fake.fail(1, path="/open-apis/im/v1/messages/")  # the first continuation card fails
        try:
            await env.adapter.platform.send(GROUP, CommitDetail(d, entry), key="long")
            raise AssertionError("the send should have failed")
        except FeishuError:
            pass
        (first,) = env.fake.messages
        later(env, 3 * 3600)  # Feishu forgot the uuids
        ref = await env.adapter.platform.send_unless_posted(GROUP, CommitDetail(d, entry), key="long", since=since)
        assert ref.id == first.message_id and env.fake.top_level(GROUP) == [first]  # found, not posted again
        rest = env.fake.thread(first.message_id)
        assert len(rest) >= 2
        shown = "\n".join(env.fake.shown(m) for m in [first, *rest])
        assert all(shown.count(f'cfg["key_{i:04d}"]') == 1 for i in range(900))  # every line exactly once
        # checked again once those uuids expired too: everything is there now, nothing is posted
        later(env, 3 * 3600)
        again = await env.adapter.platform.send_unless_posted(GROUP, CommitDetail(d, entry), key="long", since=since)
        assert again.id == first.message_id and len(env.fake.thread(first.message_id)) == len(rest)


async def test_a_rate_limited_ephemeral_card_is_tried_again_next_time(make_settings, repo):
    async with feishu_env(make_settings, repo) as env:
        env.adapter.api.max_throttled = 0  # give up at the first rate limit
        env.fake.throttle(1, path="/open-apis/ephemeral/")
        await env.say("help")
        await env.settle()
        assert env.fake.ephemerals == [] and len(env.fake.messages) == 1  # a reply this time
        await env.say("help")
        await env.settle()
        assert len(env.fake.ephemerals) == 1 and len(env.fake.messages) == 1  # the chat was not written off
