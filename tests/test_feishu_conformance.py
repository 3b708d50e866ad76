"""Feishu as it really behaves (issue 9, items 11–15): request bodies over 30 KB refused (230025),
card Markdown decoding only numeric escapes, the sensitive scope behind `questions all`,
ephemeral cards refused in topic groups, form submissions without their button's value, and a
card click delivered twice. Real SDK → the fake Feishu on loopback; real Redis."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from bot.core.chat_platform import CommitDetail
from tests.fakes.feishu_server import card_action_event
from tests.shared.feishu import (
    ALICE,
    CODE,
    GROUP,
    TOKEN,
    callback_value,
    code_heavy_digest,
    fails_for_now,
    feishu_env,
    later,
    push_spec,
    rocket_repo,
)


@pytest.fixture
def repo(tmp_path):
    return rocket_repo(tmp_path)


TOPIC = "oc_topic0000000000000000000000001"


async def test_a_code_heavy_commit_goes_out_whole_in_bodies_feishu_accepts(make_settings, repo):
    async with feishu_env(make_settings, repo) as env:
        parent, _ = await env.digest()
        d, entry = code_heavy_digest()
        await env.adapter.platform.send(GROUP, CommitDetail(d, entry), thread=parent.message_id, key="big")
        sends = env.fake.api_calls("/open-apis/im/v1/messages")
        assert all(c.status == 200 for c in sends), [(c.status, c.code) for c in sends if c.status != 200]
        assert max(c.size for c in sends) <= 30 * 1024
        cards = env.fake.thread(parent.message_id)[2:]
        assert len(cards) >= 3  # split across cards…
        shown = "\n".join(env.fake.shown(m) for m in cards)
        assert all(f'cfg["key_{i:04d}"]' in shown for i in range(900))  # …never truncated


async def test_a_code_heavy_answer_streams_through_cardkit_in_bodies_feishu_accepts(make_settings, repo):
    async with feishu_env(make_settings, repo) as env:
        parent, _ = await env.digest()

        async def pieces():
            for line in ("```python\n" + CODE + "\n```").splitlines(keepends=True):
                yield line

        await env.adapter.platform.stream(GROUP, parent.message_id, pieces())
        calls = env.fake.api_calls("/open-apis/cardkit/") + env.fake.api_calls("/open-apis/im/")
        assert all(c.status == 200 for c in calls), [(c.path, c.code) for c in calls if c.status != 200]
        entities = [
            env.fake.cards[json.loads(m.content)["data"]["card_id"]] for m in env.fake.thread(parent.message_id)[2:]
        ]
        assert len(entities) >= 2
        shown = "".join(e.history[-1][1] if e.history else e.card["body"]["elements"][0]["content"] for e in entities)
        assert all(f'cfg["key_{i:04d}"]' in shown for i in range(900))


async def test_a_streamed_answer_reads_as_written(make_settings, repo):
    async with feishu_env(make_settings, repo) as env:
        parent, _ = await env.digest()

        async def pieces():
            yield "Compare with a <= b && c > d, "
            yield "not a < b."

        ref = await env.adapter.platform.stream(GROUP, parent.message_id, pieces())
        # Feishu shows named entities (&lt;) literally and decodes the numeric ones it documents
        assert "Compare with a <= b && c > d, not a < b." in env.fake.shown(env.fake.message(ref.id))


async def test_questions_all_says_when_the_group_message_scope_is_missing(make_settings, repo):
    async with feishu_env(make_settings, repo) as env:
        await env.say("config questions all")
        await env.settle()
        told = env.fake.shown(env.fake.top_level(GROUP)[-1])
        assert "im:message.group_msg" in told
        env.adapter.platform._scopes = (0.0, None)  # what an admin grants is seen on the next check
        env.fake.scopes["im:message.group_msg"] = 1
        await env.say("config questions all")
        await env.settle()
        assert "im:message.group_msg" not in env.fake.shown(env.fake.top_level(GROUP)[-1])
        await env.say("config questions mention")
        await env.settle()
        assert "im:message.group_msg" not in env.fake.shown(env.fake.top_level(GROUP)[-1])


async def test_questions_all_with_the_scope_state_unknown_says_so(make_settings, repo):
    async with feishu_env(make_settings, repo) as env:
        env.fake.fail(50, status=400, code=212100, msg="app not install", path="/open-apis/application/")
        await env.say("config questions all")
        await env.settle()
        assert "im:message.group_msg" in env.fake.shown(env.fake.top_level(GROUP)[-1])


async def test_a_topic_group_refusing_ephemeral_cards_does_not_switch_them_off_elsewhere(make_settings, repo):
    async with feishu_env(make_settings, repo) as env:
        env.fake.topic_chat(TOPIC)
        await env.say("help", chat_id=TOPIC)
        await env.settle()
        (reply,) = env.fake.top_level(TOPIC) or [m for m in env.fake.messages if m.chat_id == TOPIC]
        assert "subscribe" in env.fake.text_of(reply)  # the topic group got a reply instead
        await env.say("help")  # an ordinary group: still "only you can see this"
        await env.settle()
        assert [e["chat_id"] for e in env.fake.ephemerals] == [GROUP]
        assert all(m.chat_id == TOPIC for m in env.fake.messages)
        await env.say("help", chat_id=TOPIC)  # and the topic group is not asked again
        await env.settle()
        refused = [c for c in env.fake.api_calls("/open-apis/ephemeral/") if c.status != 200]
        assert len(refused) == 1


async def test_a_permission_refusal_switches_ephemeral_cards_off(make_settings, repo):
    async with feishu_env(make_settings, repo) as env:
        env.fake.deny_ephemeral()
        await env.say("help")
        await env.settle()
        await env.say("help", chat_id="oc_other000000000000000000000000001")
        await env.settle()
        assert len(env.fake.api_calls("/open-apis/ephemeral/")) == 1  # not tried again in another chat
        assert len(env.fake.messages) == 2


async def test_a_form_submitted_without_its_button_value_is_answered_from_the_saved_context(make_settings, repo):
    async with feishu_env(make_settings, repo) as env:
        parent, replies = await env.digest()
        ask = callback_value(env.fake.card(replies[0]), "ask")
        await env.click(ask, message_id=replies[0].message_id)
        await env.settle()
        form_message = env.fake.thread(parent.message_id)[-1]
        status, body = await env.post(
            card_action_event(
                None,
                chat_id=GROUP,
                message_id=form_message.message_id,
                operator=ALICE,
                form_value={"question": "what could break?"},
                token=TOKEN,
            )
        )
        assert status == 200 and body["card"]["type"] == "raw"  # the form is replaced at once
        await env.settle()
        header, _answer = env.fake.thread(parent.message_id)[-2:]
        assert "what could break?" in env.fake.text_of(header)
        assert "export --since flag" in env.fake.text_of(header)  # the commit the form was about
        # a form the bot knows nothing about (expired, or not ours) gets a sentence, not silence
        await env.post(
            card_action_event(
                None,
                chat_id=GROUP,
                message_id=replies[1].message_id,
                operator=ALICE,
                form_value={"question": "and this?"},
                token=TOKEN,
            )
        )
        await env.settle()
        (told,) = env.fake.ephemerals  # only the person who pressed it
        assert "提问" in told["card"]["elements"][0]["text"]["content"] and told["open_id"] == ALICE


async def test_a_card_click_delivered_twice_is_acted_on_once(make_settings, repo):
    async with feishu_env(make_settings, repo) as env:
        parent, replies = await env.digest()
        click = card_action_event(
            callback_value(env.fake.card(replies[0]), "details"),
            chat_id=GROUP,
            message_id=replies[0].message_id,
            operator=ALICE,
            token=TOKEN,
        )
        first = await env.post(click)
        second = await env.post(click)  # Feishu re-delivers a callback it thinks was missed
        assert first[0] == second[0] == 200 and "toast" in second[1]
        await env.settle()
        assert len(env.fake.thread(parent.message_id)) == 3  # one details card, not two


# --- item 16: the uuid lasts an hour; after it, the bot reads the chat back before re-sending ------

COMMITS = ("add export", "cache expiry off by one", "fix a typo")  # each commit of the `repo` fixture


def thread_commits(env, parent) -> dict[str, int]:
    """How many thread messages show each commit: exactly once each, for nothing lost or doubled."""
    texts = [env.fake.text_of(m) for m in env.fake.thread(parent.message_id)]
    return {c: sum(c in text for text in texts) for c in COMMITS}


async def run_push_with_a_lost_reply(env, repo, *, reached: bool = True):
    """A scheduled push whose first thread message gets no answer, every time it is tried: it
    reached Feishu (the answer was lost on the way back) or it did not (Feishu failed first)."""
    env.adapter.api.max_transient = 2  # give up sooner than in production
    spec = push_spec(env, repo)
    if reached:
        env.fake.lose(2, path="/open-apis/im/v1/messages/")  # the two attempts at the first thread reply
    else:
        env.fake.fail(2, path="/open-apis/im/v1/messages/")
    await fails_for_now(env, spec)
    (parent,) = env.fake.top_level(GROUP)
    assert len(env.fake.thread(parent.message_id)) == (1 if reached else 0)
    return spec, parent


async def test_a_push_retried_after_the_uuid_expired_does_not_post_twice(make_settings, repo):
    async with feishu_env(make_settings, repo) as env:
        env.fake.scopes["im:message.group_msg"] = 1  # the bot may read the group back
        spec, parent = await run_push_with_a_lost_reply(env, repo)
        later(env, 3 * 3600)  # the retry comes after Feishu forgot the uuid
        assert await env.chat.deliveries.run(spec) == "delivered"
        assert thread_commits(env, parent) == {c: 1 for c in COMMITS}
        assert len(env.fake.thread(parent.message_id)) == 2
        assert len(env.fake.top_level(GROUP)) == 1


async def test_a_push_retried_after_the_uuid_expired_posts_what_never_reached_feishu(make_settings, repo):
    async with feishu_env(make_settings, repo) as env:
        env.fake.scopes["im:message.group_msg"] = 1
        spec, parent = await run_push_with_a_lost_reply(env, repo, reached=False)
        later(env, 3 * 3600)
        assert await env.chat.deliveries.run(spec) == "delivered"
        assert thread_commits(env, parent) == {c: 1 for c in COMMITS}  # nothing lost
        assert len(env.fake.top_level(GROUP)) == 1


async def test_without_the_scope_to_read_the_thread_an_unanswered_reply_is_not_sent_again(make_settings, repo, caplog):
    async with feishu_env(make_settings, repo) as env:  # im:message.group_msg not granted
        spec, parent = await run_push_with_a_lost_reply(env, repo)
        later(env, 3 * 3600)
        assert await env.chat.deliveries.run(spec) == "delivered"
        assert thread_commits(env, parent) == {c: 1 for c in COMMITS}  # it had reached Feishu: not doubled
        assert any("may be missing" in r.getMessage() for r in caplog.records)
        assert any("im:message.group_msg" in r.getMessage() for r in caplog.records)  # and why


async def test_a_push_retried_within_the_hour_relies_on_the_uuid_and_loses_nothing(make_settings, repo):
    async with feishu_env(make_settings, repo) as env:
        spec, parent = await run_push_with_a_lost_reply(env, repo)
        later(env, 20 * 60)
        before = len(env.fake.calls)
        assert await env.chat.deliveries.run(spec) == "delivered"
        assert thread_commits(env, parent) == {c: 1 for c in COMMITS}
        assert any(c.deduped for c in env.fake.calls[before:])  # re-sent with its uuid: Feishu dedupes it


async def run_push_with_a_lost_parent(env, repo, *, reached: bool):
    env.adapter.api.max_transient = 2
    spec = push_spec(env, repo)
    if reached:
        env.fake.lose(2, path="/open-apis/im/v1/messages")
    else:
        env.fake.fail(2, path="/open-apis/im/v1/messages")
    before = len(env.fake.top_level(GROUP))
    await fails_for_now(env, spec)
    assert len(env.fake.top_level(GROUP)) - before == (1 if reached else 0)
    later(env, 3 * 3600)
    return spec


async def test_a_parent_whose_send_went_unanswered_hours_ago_is_found_not_posted_again(make_settings, repo):
    async with feishu_env(make_settings, repo) as env:
        env.fake.scopes["im:message.group_msg"] = 1
        for i in range(120):  # a busy group: the digest is on the third page read back
            env.fake.user_message(f"om_chatter{i:04d}", GROUP, f"message {i}")
        spec = await run_push_with_a_lost_parent(env, repo, reached=True)
        assert await env.chat.deliveries.run(spec) == "delivered"
        (parent,) = env.fake.top_level(GROUP)  # the one posted before, found and completed
        assert thread_commits(env, parent) == {c: 1 for c in COMMITS}
        assert await env.chat.deliveries.run(spec) == "already delivered"


async def test_a_parent_whose_send_never_reached_feishu_is_posted_hours_later(make_settings, repo):
    async with feishu_env(make_settings, repo) as env:
        env.fake.scopes["im:message.group_msg"] = 1
        spec = await run_push_with_a_lost_parent(env, repo, reached=False)
        assert await env.chat.deliveries.run(spec) == "delivered"
        (parent,) = env.fake.top_level(GROUP)
        assert thread_commits(env, parent) == {c: 1 for c in COMMITS}


async def test_a_lookup_that_fails_for_now_is_retried_not_decided(make_settings, repo):
    async with feishu_env(make_settings, repo) as env:
        env.fake.scopes["im:message.group_msg"] = 1
        spec = await run_push_with_a_lost_parent(env, repo, reached=True)
        env.fake.fail(2, path="/open-apis/im/v1/messages")  # Feishu fails while the bot reads the chat back
        await fails_for_now(env, spec)
        assert await env.chat.deliveries.run(spec) == "delivered"
        (parent,) = env.fake.top_level(GROUP)
        assert thread_commits(env, parent) == {c: 1 for c in COMMITS}


async def test_without_the_scope_to_read_the_group_an_unanswered_parent_is_not_posted_again(
    make_settings, repo, caplog
):
    async with feishu_env(make_settings, repo) as env:  # im:message.group_msg not granted
        spec = await run_push_with_a_lost_parent(env, repo, reached=True)
        assert await env.chat.deliveries.run(spec) == "uncertain"
        assert await env.chat.deliveries.run(spec) == "already delivered"  # the ledger closed it
        assert len(env.fake.top_level(GROUP)) == 1
        assert any("im:message.group_msg" in r.getMessage() for r in caplog.records)


async def test_a_body_over_30_kb_is_never_sent(make_settings, repo):
    from bot.render import feishu as R
    from handlers.feishu import FeishuError

    async with feishu_env(make_settings, repo) as env:
        # 10,000 quote characters: a 20 KB card, a 40 KB request body once escaped again
        card = R.card([{"tag": "markdown", "content": '"' * 10_000}])
        assert R.card_bytes(card) < 30 * 1024 < R.body_bytes(card)
        with pytest.raises(FeishuError) as refused:  # an oversized body is not accepted
            await env.adapter.platform.post_cards(GROUP, [card])
        assert refused.value.code == 230025 and "too large" in str(refused.value)
        assert env.fake.api_calls("/open-apis/im/") == []  # refused here, not by Feishu


async def test_a_click_whose_value_names_another_local_repository_reads_nothing(make_settings, repo, tmp_path):
    """A card callback is signed, but its value is whatever the card carried: a value naming a
    local path other than the default must be refused like a typed one, and nothing read from it."""
    from tests.gitrepo import GitRepo

    other = GitRepo(tmp_path / "private-repo")
    sha = other.commit(
        "feat: PRIVATE-ONLY-TITLE", {"secret.txt": "hunter2\n"}, when=datetime(2026, 1, 28, 10, tzinfo=UTC)
    )
    async with feishu_env(make_settings, repo) as env:
        forged = {"action": "details", "sha": sha, "repo": str(other.path), "lang": "en"}
        status, _ = await env.post(
            card_action_event(
                forged, chat_id=GROUP, message_id="om_unknown0000000000000000001", operator=ALICE, token=TOKEN
            )
        )
        assert status == 200
        await env.settle()
        shown = json.dumps([env.fake.ephemerals, [m.__dict__ for m in env.fake.top_level(GROUP)]], default=str)
        assert "PRIVATE-ONLY-TITLE" not in shown and "hunter2" not in shown
        assert "In chat you can name GitHub repositories" in json.dumps(env.fake.ephemerals, ensure_ascii=False)
