"""The one job pattern (bot/delivery/once.py), for each kind of keyed job the clock hands on: a
scheduled push, a watch's day, an alert poll. Two clocks ticking at once without a job queue (two
replicas of the terminal) post once; a clock with a queue then neither queues nor runs what is
done — every runner goes through the same "run here, else skip if done, else queue" helper.
(The improve pass has no done key: a digest with nothing left to retry is no longer due; its two
passes at once are tests/test_improve.py's.) Real Redis and job queue, the real Slack adapter
against the fake Slack; what is asserted is what the channel or the person reads."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import pytest

from bot.runtime.queue import Jobs
from bot.runtime.schedule import Clock
from tests.fakes.openai_server import FakeOpenAI, Reply, analysis_json, commit_facts, default_responder
from tests.gitrepo import GitRepo
from tests.shared.slack import Bot, shown

T0 = datetime(2026, 1, 29, 2, 0, tzinfo=UTC)  # 10:00 on the 29th in Shanghai; the widgets' history is the 28th
CHANNEL = "C0001"
DM = "D0001"  # where the person types `watch`
IM = "DU0001"  # the bot's own IM with U0001, where a watch's messages go


@dataclass
class Time:
    now: datetime = T0

    def __call__(self) -> datetime:
        return self.now


def grades(request: dict) -> Reply:
    """High for the wire-format break that an alert posts (the default answers medium)."""
    title, path = commit_facts(request)
    if "wire format" in title and '"bullets"' not in str(request["messages"][0]["content"]):
        return Reply(content=analysis_json(importance="high", summary=f"Drops a format in {path}."))
    return default_responder(request)


@pytest.fixture
def llm():
    with FakeOpenAI() as fake:
        fake.responder = grades
        yield fake


async def command(bot: Bot, text: str, channel: str) -> None:
    status, _ = await bot.sender.slash(text, channel=channel)
    assert status == 200
    await bot.settle()


@dataclass
class Kind:
    """One kind of keyed job: what is due, how the clock ticks it, and where its posts are read."""

    arrange: Callable[[Bot, GitRepo, Time], Awaitable[None]]
    tick: Callable[[Clock, datetime], Awaitable[list[str]]]
    where: str  # the conversation its posts go to
    posts: int  # how many messages one run posts there
    says: str  # the run's outcome
    done: str  # what a done job says


async def subscribed(bot: Bot, widgets: GitRepo, time_: Time) -> None:
    await command(bot, "subscribe acme/widgets", CHANNEL)  # daily at 09:00: due at 10:00


async def watching(bot: Bot, widgets: GitRepo, time_: Time) -> None:
    await command(bot, "watch acme/widgets src/**", DM)  # the person's 09:00: due at 10:00


async def alerting(bot: Bot, widgets: GitRepo, time_: Time) -> None:
    await command(bot, "subscribe acme/widgets alerts high", CHANNEL)
    assert [o for _, o in await bot.chat.make_clock(now=time_).tick_alerts(time_.now)] == ["nothing new"]
    widgets.commit(  # a high commit lands after the first poll; the next period's poll posts it
        "feat!: drop the v0 wire format\n\nBREAKING CHANGE: clients on v0 must upgrade.",
        {"src/wire_0.py": "VERSION = 2\n"},
        when=T0 + timedelta(minutes=3),
    )
    time_.now = T0 + timedelta(minutes=12)


async def push_outcomes(clock: Clock, now: datetime) -> list[str]:
    return [o for _, _, o in await clock.tick()]


async def watch_outcomes(clock: Clock, now: datetime) -> list[str]:
    return [o for _, _, o in await clock.tick_watches(now, timedelta(minutes=180))]


async def alert_outcomes(clock: Clock, now: datetime) -> list[str]:
    return [o for _, o in await clock.tick_alerts(now)]


KINDS = {
    "deliver": Kind(subscribed, push_outcomes, CHANNEL, 1, "delivered", "already delivered"),
    "watch": Kind(watching, watch_outcomes, IM, 3, "sent 2", "already done"),
    "alert": Kind(alerting, alert_outcomes, CHANNEL, 1, "sent 1", "already done"),
}


@pytest.mark.parametrize("kind", sorted(KINDS))
async def test_a_job_runs_once_under_two_clocks_and_is_never_queued_once_done(kind, make_bot, slack, widgets, llm):
    case, time_ = KINDS[kind], Time()
    # the 09:00 push and watch are still due at 10:00
    bot = await make_bot(openai_base_url=llm.url, openai_api_key="sk-test-jobs", catchup_minutes=180)
    bot.chat.clock = time_  # every piece's clock
    await case.arrange(bot, widgets, time_)
    before = len(slack.top_level(case.where))

    # Two clocks tick at the same moment, with no job queue: one runs it, the other finds it
    # running (or done); the conversation reads it once.
    first, second = bot.chat.make_clock(now=time_), bot.chat.make_clock(now=time_)
    outcomes = await asyncio.gather(case.tick(first, time_.now), case.tick(second, time_.now))
    assert sorted(o for o in (*outcomes[0], *outcomes[1]) if o == case.says) == [case.says]
    posted = slack.top_level(case.where)[before:]
    assert len(posted) == case.posts, [shown(m) for m in posted]

    # A clock with a job queue: the done job is neither queued nor run again.
    jobs = await Jobs.connect(bot.chat.settings)
    try:
        clock = bot.chat.make_clock(now=time_, jobs=jobs)
        assert await case.tick(clock, time_.now) == [case.done]
        queued = [j.decode().removeprefix(jobs.prefix) for j in await jobs.pool.zrange(jobs.queue, 0, -1)]
        assert [j for j in queued if j.startswith(f"{kind}:")] == []
    finally:
        await jobs.close()
    assert slack.top_level(case.where)[before:] == posted
