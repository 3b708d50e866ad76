"""The monthly LLM budget per workspace (issue 35 §4), end to end: two Slack workspaces installed
through OAuth (the fake Slack, real Bolt), the fake LLM endpoint reporting `usage` (streams too),
real Redis.

- with LLM_MONTHLY_TOKEN_BUDGET_PER_WORKSPACE set, the tokens of a workspace's questions and
  on-demand digests count in its own month besides the deployment's; scheduled pushes count for
  the deployment only;
- a workspace over its budget: its question gets the budget sentence (naming this workspace's
  budget) and the offline answer, no LLM request; its digest the offline rules, said once; the
  other workspace is answered by the LLM as before;
- a single-workspace bot keeps no per-workspace count, and the deployment's budget caps questions.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

import pytest

from bot.core.models import Subscription
from tests.fakes.openai_server import FakeOpenAI
from tests.shared.slack import shown
from tests.test_slack_installs import CHAN_A, CHAN_B, NOW, TEAM_A, TEAM_B, install, oauth_bot, teams  # noqa: F401

CAP = 50_000
SCOPE_A, SCOPE_B = f"slack:{TEAM_A}", f"slack:{TEAM_B}"


@pytest.fixture
def llm():
    with FakeOpenAI() as fake:
        yield fake


class month:
    """The month's counters, read as the bot keeps them in Redis (the services' clock is the real
    one): the deployment's `llm:tokens:YYYY-MM`, a workspace's `llm:tokens:ws:{scope}:YYYY-MM`."""

    def __init__(self, store):
        self.store = store

    def key(self, scope: str = "") -> str:
        yyyy_mm = datetime.now(UTC).strftime("%Y-%m")
        return self.store.k("llm", "tokens", "ws", scope, yyyy_mm) if scope else self.store.k("llm", "tokens", yyyy_mm)

    async def spent(self, scope: str = "") -> int:
        return int(await self.store.get_json(self.key(scope)) or 0)


async def two_workspaces(oauth_bot, teams, widgets, llm, **overrides):  # noqa: F811
    bot = await oauth_bot(
        teams,
        openai_base_url=llm.url,
        openai_api_key="sk-test-ws",
        llm_monthly_token_budget_per_workspace=CAP,
        **overrides,
    )
    assert (await install(bot, TEAM_A))[0] == 200
    assert (await install(bot, TEAM_B))[0] == 200
    return bot


async def ask_in_thread(bot, teams, team: str, channel: str, question: str) -> str:  # noqa: F811
    parent = teams.top_level(channel)[0]
    sender = bot.sender(team)
    event = sender.message_event(
        f"<@UBOT{team}> {question}", channel=channel, user="U1", thread_ts=parent.ts, kind="app_mention"
    )
    status, _ = await sender.event(event, event_id=f"Ev{uuid.uuid4().hex}")  # unique, as Slack's are
    assert status == 200
    await bot.chat.drain()
    return shown(teams.replies(channel, parent.ts)[-1])


async def test_a_workspace_over_its_budget_is_not_sent_to_the_llm_and_the_other_is(
    oauth_bot,  # noqa: F811
    teams,  # noqa: F811
    widgets,
    llm,
):
    bot = await two_workspaces(oauth_bot, teams, widgets, llm)
    store = bot.chat.store
    counts = month(store)
    repo = str(widgets.path)
    for team, channel, lang in ((TEAM_A, CHAN_A, "zh"), (TEAM_B, CHAN_B, "en")):
        await bot.chat.subs.upsert(
            Subscription("slack", f"{team}/{channel}", repo, at="09:20", tz="Asia/Shanghai", lang=lang)
        )
    outcomes = [o for _, _, o in await bot.chat.make_clock(now=lambda: NOW).tick()]
    assert outcomes == ["delivered", "delivered"]
    # the scheduled build is shared by both workspaces: the deployment's tokens alone
    pushed = await counts.spent()
    assert pushed > 0 and await counts.spent(SCOPE_A) == 0 and await counts.spent(SCOPE_B) == 0

    high = widgets.shas["high"][:7]
    # B asks: answered by the LLM, its tokens counted for B and for the deployment
    asked = len(llm.requests)
    answer_b = await ask_in_thread(bot, teams, TEAM_B, CHAN_B, f"what does {high} break?")
    assert len(llm.requests) == asked + 1 and llm.requests[-1].get("stream")
    assert "budget" not in answer_b
    spent_b = await counts.spent(SCOPE_B)
    assert spent_b > 0 and await counts.spent(SCOPE_A) == 0
    assert await counts.spent() == pushed + spent_b  # the counters add up

    # A's month is spent: A's question is not sent, it gets the budget sentence and the offline answer
    await store.incr(counts.key(SCOPE_A), 3600, CAP)
    asked = len(llm.requests)
    answer_a = await ask_in_thread(bot, teams, TEAM_A, CHAN_A, f"what does {high} break?")
    assert len(llm.requests) == asked  # no LLM request for it
    assert "⚠️ 本工作区本月的 LLM token 预算（50,000 个 token）已用完。" in answer_a  # A reads Chinese
    assert "本月的 LLM token 预算" not in answer_a.replace("本工作区本月", "")  # not the deployment's
    assert await counts.spent(SCOPE_A) == CAP and await counts.spent() == pushed + spent_b

    # B is unaffected: asked again, answered by the LLM again
    answer_b = await ask_in_thread(bot, teams, TEAM_B, CHAN_B, f"does {high} need tests?")
    assert len(llm.requests) == asked + 1 and "budget" not in answer_b
    spent_b2 = await counts.spent(SCOPE_B)
    assert spent_b2 > spent_b and await counts.spent() == pushed + spent_b2


async def test_an_on_demand_digest_over_the_workspace_budget_is_offline_and_not_kept_for_the_other(
    oauth_bot,  # noqa: F811
    teams,  # noqa: F811
    widgets,
    llm,
):
    bot = await two_workspaces(oauth_bot, teams, widgets, llm)
    store = bot.chat.store
    counts = month(store)
    await store.incr(counts.key(SCOPE_A), 3600, CAP)

    sender_a = bot.sender(TEAM_A)
    status, _ = await sender_a.slash("2026-01-28", channel=CHAN_A, user="UA1")
    assert status == 200
    await bot.chat.drain()
    assert llm.requests == []  # not one request: not even the headline
    parent_a = teams.top_level(CHAN_A)[-1]
    everything = [shown(parent_a)] + [shown(m) for m in teams.replies(CHAN_A, parent_a.ts)]
    notice = "⚠️ This workspace's monthly LLM token budget (50,000 tokens) is spent"
    assert sum(t.count(notice) for t in everything) == 1 and notice in everything[0]
    assert any("Rule-based analysis" in t for t in everything[1:])

    # B asks for the same day: its analyses by the LLM (A's offline digest was not kept for it)
    sender_b = bot.sender(TEAM_B)
    status, _ = await sender_b.slash("2026-01-28", channel=CHAN_B, user="UB1")
    assert status == 200
    await bot.chat.drain()
    assert llm.requests  # analysed by the LLM
    parent_b = shown(teams.top_level(CHAN_B)[-1])
    assert "budget" not in parent_b
    spent_b = await counts.spent(SCOPE_B)
    assert spent_b > 0 and await counts.spent() == spent_b  # B's fresh analyses are B's
    assert await counts.spent(SCOPE_A) == CAP


async def test_the_deployment_budget_still_caps_every_workspace_and_its_questions(
    oauth_bot,  # noqa: F811
    teams,  # noqa: F811
    widgets,
    llm,
):
    bot = await two_workspaces(oauth_bot, teams, widgets, llm, llm_monthly_token_budget=1_000)
    store = bot.chat.store
    counts = month(store)
    await store.incr(counts.key(), 3600, 1_000)  # the deployment's month is spent; no workspace's is
    for team, channel in ((TEAM_A, CHAN_A), (TEAM_B, CHAN_B)):
        sender = bot.sender(team)
        status, _ = await sender.slash("2026-01-28", channel=channel, user="U1")
        assert status == 200
    await bot.chat.drain()
    for channel in (CHAN_A, CHAN_B):
        assert "This month's LLM token budget (1,000 tokens) is spent" in shown(teams.top_level(channel)[-1])
    answer = await ask_in_thread(bot, teams, TEAM_A, CHAN_A, f"what does {widgets.shas['high'][:7]} break?")
    assert llm.requests == []  # neither the digests nor the question reached the endpoint
    assert "This month's LLM token budget (1,000 tokens) is spent." in answer
    assert "workspace" not in answer


async def test_a_single_workspace_bot_counts_the_deployment_only_questions_included(make_bot, slack, widgets, llm):
    bot = await make_bot(
        openai_base_url=llm.url, openai_api_key="sk-test-ws", llm_monthly_token_budget_per_workspace=CAP
    )
    store = bot.chat.store
    counts = month(store)
    status, _ = await bot.sender.slash("2026-01-28")
    assert status == 200
    await bot.settle()
    built = await counts.spent()
    assert built > 0
    parent = slack.top_level("C0001")[-1]
    ask = bot.sender.message_event(
        f"<@UBOT> what does {widgets.shas['high'][:7]} break?", kind="app_mention", thread_ts=parent.ts
    )
    status, _ = await bot.sender.event(ask)
    assert status == 200
    await bot.settle()
    assert llm.requests[-1].get("stream") and "budget" not in shown(slack.replies("C0001", parent.ts)[-1])
    assert await counts.spent() > built  # the streamed answer's tokens count for the month
    assert await store.scan(store.k("llm", "tokens", "ws") + "*") == []  # no workspace: no workspace's count
