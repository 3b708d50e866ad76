"""Answers streamed into a Feishu thread (handlers/feishu/stream.py) as the thread shows them:
the card's first words, CardKit refused or failing midway, a producer that fails, the chat's
language. Real lark-oapi SDK → the fake Feishu on loopback; real Redis."""

from __future__ import annotations

import asyncio
import json

import pytest

from tests.shared.feishu import GROUP, feishu_env, rocket_repo


@pytest.fixture
def repo(tmp_path):
    return rocket_repo(tmp_path)


ROOT = "om_question000000000000000000001"


async def until(condition, what: str) -> None:
    """Wait for something Feishu shows (polling the fake), at most ~10 s."""
    for _ in range(1000):
        if condition():
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"never happened: {what}")


def answers(env) -> list:
    return env.fake.thread(ROOT)


def created_cards(env) -> list[dict]:
    """The cards the bot created with CardKit, as Feishu received them."""
    return [json.loads(c.body["data"]) for c in env.fake.api_calls("/open-apis/cardkit/v1/cards", "POST")]


def first_text(card: dict) -> str:
    return card["body"]["elements"][0]["content"]


async def stream(env, pieces, **kw):
    env.fake.user_message(ROOT, GROUP, "what changed?")
    return await env.adapter.platform.stream(GROUP, ROOT, pieces, **kw)


async def test_an_answer_ready_at_once_opens_its_card_with_the_first_words(make_settings, repo):
    async with feishu_env(make_settings, repo) as env:

        async def pieces():
            yield "The cache fix "
            yield "is small."

        await stream(env, pieces())
        (opened,) = created_cards(env)
        assert first_text(opened) == "The cache fix is small."  # no "thinking…" flash before the first words


@pytest.mark.parametrize("lang, thinking", [("", "正在思考"), ("en", "Thinking")])
async def test_an_answer_slow_to_start_shows_thinking_in_the_answers_language(make_settings, repo, lang, thinking):
    async with feishu_env(make_settings, repo) as env:  # DEFAULT_LANG is zh

        async def pieces():
            await until(lambda: env.fake.cards, "the card opened before the first piece")
            yield "Done."

        await stream(env, pieces(), lang=lang)
        (opened,) = created_cards(env)
        assert thinking in first_text(opened)
        (entity,) = env.fake.cards.values()
        assert entity.history[-1][1] == "Done."


async def test_cardkit_refused_once_is_not_asked_again_and_answers_are_edited_messages(make_settings, repo):
    async with feishu_env(make_settings, repo) as env:
        env.fake.deny_cardkit()

        async def pieces(text):
            yield text[:5]
            yield text[5:]

        await stream(env, pieces("first answer"))
        await stream(env, pieces("second answer"))
        assert len(env.fake.api_calls("/open-apis/cardkit/v1/cards", "POST")) == 1
        first, second = answers(env)
        assert env.fake.text_of(first) == "first answer" and env.fake.text_of(second) == "second answer"
        assert all(json.loads(m.content).get("type") != "card" for m in (first, second))
        # plain cards, previewed in the chat list by the answer's start (a streaming card would say "回答")
        assert env.fake.card(second)["config"] == {"update_multi": True, "summary": {"content": "second answer"}}


async def test_a_cardkit_update_refused_midway_continues_in_an_edited_message(make_settings, repo):
    async with feishu_env(make_settings, repo) as env:

        async def pieces():
            yield "one "
            await until(lambda: answers(env), "the card posted")
            (card_id,) = env.fake.cards
            env.fake.fail(
                1,
                status=400,
                code=300309,
                msg="streaming mode is closed",
                path=f"/open-apis/cardkit/v1/cards/{card_id}/elements/",
            )
            yield "two "
            await until(lambda: len(answers(env)) == 2, "the replacement message")
            yield "three"

        ref = await stream(env, pieces())
        streamed, replacement = answers(env)
        assert ref.id == streamed.message_id
        assert env.fake.text_of(replacement) == "one two three"  # the whole answer, nothing lost
        assert replacement.patches  # …edited as it grew
        assert json.loads(replacement.content)["config"].get("streaming_mode") is None  # a plain card from the start
        assert env.fake.card(replacement)["config"] == {"update_multi": True, "summary": {"content": "one two three"}}
        assert len(env.fake.api_calls("/open-apis/cardkit/v1/cards", "POST")) == 1  # not a new CardKit card


async def test_a_rate_limited_cardkit_update_fails_the_answer_instead_of_switching(make_settings, repo):
    from handlers.feishu import FeishuError

    async with feishu_env(make_settings, repo) as env:
        env.adapter.api.max_throttled = 0  # give up at the first rate limit

        stopped = []

        async def pieces():  # a model still talking when Feishu gives up on the bot
            try:
                yield "one "
                await until(lambda: answers(env), "the card posted")
                env.fake.throttle(1, path="/open-apis/cardkit/v1/cards/")
                yield "two"
                await asyncio.Event().wait()
            finally:
                stopped.append(True)

        with pytest.raises(FeishuError) as caught:
            await stream(env, pieces())
        assert "rate-limiting" in str(caught.value)
        assert stopped == [True]  # the answer's producer is stopped, not left running
        assert len(answers(env)) == 1  # no replacement message posted


async def test_a_rate_limited_cardkit_create_fails_the_answer_and_keeps_cardkit(make_settings, repo):
    from handlers.feishu import FeishuError

    async with feishu_env(make_settings, repo) as env:
        env.adapter.api.max_throttled = 0
        env.fake.throttle(1, path="/open-apis/cardkit/v1/cards")

        async def pieces():
            yield "one"

        with pytest.raises(FeishuError):
            await stream(env, pieces())
        assert answers(env) == []
        await stream(env, pieces())  # the next answer still streams through CardKit
        assert json.loads(answers(env)[0].content)["type"] == "card"


async def test_a_producer_failing_midway_leaves_what_it_said_shown_and_closed(make_settings, repo):
    async with feishu_env(make_settings, repo) as env:

        async def pieces():
            yield "The first half"
            raise RuntimeError("the model went away")

        with pytest.raises(RuntimeError):
            await stream(env, pieces())
        (entity,) = env.fake.cards.values()
        assert entity.card["body"]["elements"][0]["content"] == "The first half"
        assert entity.card["config"]["streaming_mode"] is False


async def test_without_cardkit_a_failing_producer_leaves_its_text_in_the_message(make_settings, repo):
    async with feishu_env(make_settings, repo) as env:
        env.fake.deny_cardkit()

        async def pieces():
            yield "Half"
            await until(lambda: answers(env), "the message")
            yield " and more"
            raise RuntimeError("the model went away")

        with pytest.raises(RuntimeError):
            await stream(env, pieces())
        (message,) = answers(env)
        assert env.fake.text_of(message) == "Half and more"
