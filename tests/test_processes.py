"""The deployable processes as real subprocesses (`clock`, `worker`, `serve`) on one real Redis,
posting to the fake Slack Web API: exactly-once pushes with two clocks, a worker killed mid-post,
an on-demand `/digest` whose worker dies halfway through its thread, and a chaos run (2 clocks,
2 workers, 1 web, 50 subscriptions, random SIGKILLs, one Redis restart)."""

from __future__ import annotations

import json
import random
import re
import time
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import redis

from bot.core.models import Subscription
from bot.runtime.schedule import due_day
from tests.fakes.slack_server import FakeSlack, SlackSender
from tests.gitrepo import GitRepo, bulk_commits
from tests.shared.processes import SECRET, Bots, _one_sub, base_env, subs_file, wait_for
from tests.shared.redis_proc import RedisProcess, free_port


def thread_numbers(slack: FakeSlack, channel: str, parent_ts: str, tag: str = "") -> list[int]:
    """The commit numbers a thread shows, one per message that shows it: a commit posted twice
    (in two messages) appears twice."""
    found: list[int] = []
    for m in slack.replies(channel, parent_ts):
        shown = m.text + json.dumps(m.blocks, ensure_ascii=False)
        found += sorted({int(n) for n in re.findall(rf"{tag}handle edge case (\d+) ", shown)})
    return sorted(found)


def test_worker_killed_mid_post_is_resumed_by_another_exactly_once(scheduled, tmp_path):
    channel = "CKILL1"
    with FakeSlack() as slack:
        env = base_env(
            slack,
            scheduled["url"],
            scheduled["prefix"],
            scheduled["repo"],
            tmp_path,
            SUBSCRIPTIONS_FILE=str(_one_sub(scheduled, tmp_path, channel)),
        )
        bots = Bots(tmp_path, env)
        slack.delay("chat.postMessage", 0.5)  # the parent is accepted, its answer is slow…
        try:
            bots.start("clock")
            first = bots.start("worker")
            wait_for(lambda: slack.calls_to("chat.postMessage"), 30, "the first post")
            bots.kill(first)  # …and the worker dies before it hears back
            assert len(slack.top_level(channel)) == 1
            slack.delay("chat.postMessage", 0.0)
            bots.start("worker")
            wait_for(lambda: scheduled["redis"].keys(f"{scheduled['prefix']}ledger:*"), 30, "the ledger entry")
        finally:
            bots.stop_all()
        (parent,) = slack.top_level(channel)
        assert "Daily update report" in parent.text
        assert thread_numbers(slack, channel, parent.ts) == [0, 1, 2]  # each commit exactly once
        # the second worker found the post the dead one made, by the key in its metadata
        assert slack.calls_to("conversations.history")


def test_two_clocks_and_two_workers_post_once(scheduled, tmp_path):
    channel = "CTWO"
    with FakeSlack() as slack:
        env = base_env(
            slack,
            scheduled["url"],
            scheduled["prefix"],
            scheduled["repo"],
            tmp_path,
            SUBSCRIPTIONS_FILE=str(_one_sub(scheduled, tmp_path, channel)),
        )
        bots = Bots(tmp_path, env)
        try:
            for role in ("clock", "clock", "worker", "worker"):
                bots.start(role)
            wait_for(lambda: scheduled["redis"].keys(f"{scheduled['prefix']}ledger:*"), 30, "the ledger entry")
            # the clocks keep ticking: wait for two more enqueue attempts to be refused by the ledger
            wait_for(lambda: not scheduled["redis"].zcard(f"arq:queue:{scheduled['prefix']}"), 10, "an empty queue")
        finally:
            bots.stop_all()
        (parent,) = slack.top_level(channel)
        assert thread_numbers(slack, channel, parent.ts) == [0, 1, 2]


def test_on_demand_digest_whose_worker_dies_is_completed_exactly_once(scheduled, tmp_path):
    """`/digest` through the web process; the worker is killed halfway through the thread; the
    next worker finishes the same thread (the parent already says how many commits)."""
    repo = GitRepo(tmp_path / "ondemand")
    # breaking changes: each is high, so each gets a thread message of its own
    bulk_commits(
        repo,
        12,
        datetime(2026, 1, 28, 1, 0, tzinfo=ZoneInfo("Asia/Shanghai")),
        step_seconds=600,
        title="feat!: remove the legacy API, handle edge case {i} in module {m}",
    )
    port = free_port()
    with FakeSlack() as slack:
        env = base_env(
            slack, scheduled["url"], scheduled["prefix"], repo.path, tmp_path, PORT=str(port), HOST="127.0.0.1"
        )
        bots = Bots(tmp_path, env)
        try:
            bots.start("serve")
            first = bots.start("worker")
            wait_for(lambda: _healthy(port), 30, "the web process")
            slack.delay("chat.postMessage", 0.3)
            sender = SlackSender(f"http://127.0.0.1:{port}/slack/events", SECRET)
            import asyncio

            async def ask():
                try:
                    return await sender.slash("2026-01-28", channel="CDEMAND")
                finally:
                    await sender.close()

            status, _ = asyncio.run(ask())
            assert status == 200
            wait_for(lambda: len(slack.calls_to("chat.postMessage")) >= 4, 60, "the thread to start")
            bots.kill(first)
            slack.delay("chat.postMessage", 0.0)
            bots.start("worker")
            queue = f"arq:queue:{scheduled['prefix']}"
            wait_for(lambda: scheduled["redis"].zcard(queue) == 0, 60, "the request job to finish")
        finally:
            bots.stop_all()
        (parent,) = slack.top_level("CDEMAND")
        assert "12" in parent.text
        assert thread_numbers(slack, "CDEMAND", parent.ts) == list(range(12)), bots.log_text()


def _healthy(port: int) -> bool:
    import urllib.request

    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=1) as resp:
            return resp.status == 200
    except OSError:
        return False


# --- chaos -------------------------------------------------------------------------------------------

ZONES = ("Etc/GMT+10", "UTC", "Asia/Shanghai", "Pacific/Kiritimati")  # several local days at once


def test_chaos_every_push_exactly_once(tmp_path):
    """2 clocks, 2 workers and 1 web on one Redis; 50 subscriptions (25 channels × 2 repositories)
    spread over time zones so that they cover several local days; workers and clocks SIGKILLed at
    random for 20 s and Redis killed and restarted once → every (channel, repository, day)
    delivered exactly once, every thread complete."""
    rng = random.Random(20261124)
    redis_dir = tmp_path / "redis"
    redis_dir.mkdir()
    server = RedisProcess(free_port(), redis_dir, durable=True)
    server.start()
    url = f"redis://127.0.0.1:{server.port}/0"
    now = datetime.now(UTC)
    start = datetime.combine((now - timedelta(days=3)).date(), datetime.min.time(), tzinfo=UTC)
    step = 1800  # two commits an hour, every hour, from three days ago: every zone's due day has 48
    repos = []
    for r in range(2):
        repo = GitRepo(tmp_path / f"repo{r}")
        bulk_commits(
            repo, 2 * 24 * 5, start, step_seconds=step, title=f"fix: r{r} handle edge case {{i}} in module {{m}}"
        )
        repos.append(repo)
    subs, expected = [], {}
    for c in range(25):
        for r, repo in enumerate(repos):
            tz = ZONES[(c + r) % len(ZONES)]
            local = now.astimezone(ZoneInfo(tz))
            at = (local - timedelta(minutes=2 + rng.randint(0, 20))).strftime("%H:%M")
            subs.append(dict(platform="slack", channel=f"CH{c:03d}", repo=str(repo.path), at=at, tz=tz, lang="en"))
            day = due_day(now, Subscription("slack", "x", "x", at=at, tz=tz), timedelta(minutes=180))
            begin = datetime.combine(day, datetime.min.time(), tzinfo=ZoneInfo(tz))
            first = -(-(begin - start).total_seconds() // step)
            expected[(f"CH{c:03d}", r)] = (day, list(range(int(first), int(first) + 48)))
    assert len({day for day, _ in expected.values()}) >= 2  # the run covers several local days
    prefix = "chaos:"
    port = free_port()
    with FakeSlack() as slack:
        env = base_env(
            slack,
            url,
            prefix,
            repos[0].path,
            tmp_path,
            PORT=str(port),
            HOST="127.0.0.1",
            SUBSCRIPTIONS_FILE=str(subs_file(tmp_path / "subs.toml", subs)),
        )
        bots = Bots(tmp_path, env)
        client = redis.Redis.from_url(url)
        try:
            bots.start("serve")
            clocks = [bots.start("clock"), bots.start("clock")]
            workers = [bots.start("worker"), bots.start("worker")]
            restarted_redis = False
            deadline = time.monotonic() + 20
            while time.monotonic() < deadline:
                time.sleep(rng.uniform(0.5, 2.0))
                pool = workers if rng.random() < 0.7 else clocks
                i = rng.randrange(len(pool))
                bots.kill(pool[i])
                pool[i] = bots.start("worker" if pool is workers else "clock")
                if not restarted_redis and time.monotonic() > deadline - 12:
                    server.restart()
                    restarted_redis = True
            wait_for(lambda: _count(client, f"{prefix}ledger:*") == 50, 180, "all 50 ledger entries")
            wait_for(lambda: client.zcard(f"arq:queue:{prefix}") == 0, 60, "an empty queue")
            ledgers = [client.get(k) for k in client.scan_iter(f"{prefix}ledger:*")]
        finally:
            bots.stop_all()
            client.close()
            server.stop()
        assert restarted_redis
        assert not [v for v in ledgers if b"failed" in v], ledgers
        for (channel, r), (day, numbers) in expected.items():
            parents = [m for m in slack.top_level(channel) if thread_numbers(slack, channel, m.ts, f"r{r} ")]
            assert len(parents) == 1, (channel, r, day, [m.text for m in slack.top_level(channel)])
            assert day.isoformat() in parents[0].text
            assert thread_numbers(slack, channel, parents[0].ts, f"r{r} ") == numbers
        for channel in {c for c, _ in expected}:
            assert len(slack.top_level(channel)) == 2  # one per repository, nothing doubled


def _count(client, pattern: str) -> int:
    return sum(1 for _ in client.scan_iter(pattern))
