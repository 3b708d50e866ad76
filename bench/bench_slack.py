"""Slack adapter benchmarks: prints figures and ratios to the targets; asserts nothing.

  python bench/bench_slack.py

Everything is real except Slack and the LLM, which are the loopback fakes from tests/fakes: the
bot's HTTP endpoint (handlers/web.py + the adapter's routes), Bolt, slack_sdk, an embedded Redis,
a local git repository with 30 commits on the benchmarked day.

(a) `/digest` acknowledgement latency: ~200 signed slash commands, one after another, each timed
    from sending the request to its HTTP 200, while another `/digest` builds a 30-commit digest
    against a fake LLM with 0.3 s latency. Target p99 < 300 ms (Slack's own limit is 3 s).
(b) Q&A: a question (app_mention in the digest's thread) → the first streamed chunk reaching the
    fake Slack (chat.startStream carries it), minus the fake LLM's first-token delay, with a warm
    cache (the commit's analysis and diff already stored). Target < 500 ms.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import sys
import tempfile
import time
from datetime import date, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bot.runtime.app import App  # noqa: E402
from bot.runtime.services import Services  # noqa: E402
from handlers.slack import Pacing, build_slack  # noqa: E402
from handlers.web import bound_port, build_app, start_server  # noqa: E402
from settings import Settings  # noqa: E402
from tests.fakes.openai_server import FakeOpenAI  # noqa: E402
from tests.fakes.slack_server import FakeSlack, SlackSender  # noqa: E402
from tests.gitrepo import GitRepo  # noqa: E402

SH = ZoneInfo("Asia/Shanghai")
DAY = date(2026, 1, 28)
SECRET = "bench-signing-secret"
CHANNEL = "CBENCH"
N_COMMITS, LLM_LATENCY, LLM_CONCURRENCY = 30, 0.3, 4
N_ACKS, ACK_TARGET = 200, 0.300
N_QUESTIONS, FIRST_TOKEN_DELAY, QA_TARGET = 20, 0.2, 0.500


def build_repo(path: Path) -> GitRepo:
    repo = GitRepo(path, bare_origin="https://github.com/bench/widgets.git")
    repo.commit("init", {"src/base.py": "x = 0\n"}, when=datetime(2026, 1, 27, 9, 0, tzinfo=SH))
    for i in range(N_COMMITS):
        repo.commit(
            f"feat: change number {i}",
            {f"src/mod_{i}.py": "".join(f"v{j} = {j}\n" for j in range(20 + i))},
            when=datetime(2026, 1, 28, 1, 0, tzinfo=SH) + timedelta(minutes=40 * i),
        )
    return repo


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(p / 100 * len(ordered)) - 1))]


async def wait_for(predicate, timeout: float = 30.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        await asyncio.sleep(0.001)
    return False


async def main() -> None:
    started = time.perf_counter()
    with (
        tempfile.TemporaryDirectory() as tmp,
        FakeSlack() as slack,
        FakeOpenAI(latency=LLM_LATENCY, first_token_delay=FIRST_TOKEN_DELAY) as llm,
    ):
        repo = build_repo(Path(tmp) / "widgets")
        settings = Settings(
            _env_file=None,
            slack_bot_token=slack.token,
            slack_signing_secret=SECRET,
            slack_api_url=slack.url,
            default_repo=str(repo.path),
            default_lang="en",
            openai_base_url=llm.url,
            openai_api_key="bench-key-0000",
            llm_concurrency=LLM_CONCURRENCY,
            data_dir=Path(tmp) / "data",
            redis_prefix="benchslack:",
            log_level="WARNING",
        )
        services = Services.build(settings)
        chat = App.build(services)
        adapter = build_slack(settings, chat.router, receive=True, pacing=Pacing(per_second=50, burst=20))
        chat.register(adapter.platform)
        runner = await start_server(build_app(services.store, adapter.http_routes()), "127.0.0.1", 0)
        sender = SlackSender(f"http://127.0.0.1:{bound_port(runner)}/slack/events", SECRET)
        try:
            await bench_acks(sender, slack, llm, chat)
            await bench_qa(sender, slack, llm, chat)
            print(f"(benchmark wall time {time.perf_counter() - started:.1f} s)")
        finally:
            await sender.close()
            await chat.drain()
            await adapter.close()
            await runner.cleanup()
            await services.aclose()


def digest_unposted(slack: FakeSlack) -> bool:
    """True while the digest is still being built: no thread replies under its progress message."""
    top = slack.top_level(CHANNEL)
    return not top or not slack.replies(CHANNEL, top[0].ts)


async def bench_acks(sender: SlackSender, slack: FakeSlack, llm: FakeOpenAI, chat: App) -> None:
    await sender.slash("help", channel="CWARM")  # Bolt's one-time auth.test, first connections
    await chat.drain()
    status, _ = await sender.slash(DAY.isoformat(), channel=CHANNEL)  # the digest that keeps building
    assert status == 200
    latencies: list[float] = []
    building_throughout = True
    for i in range(N_ACKS):
        start = time.perf_counter()
        status, _ = await sender.slash("help", channel=f"CACK{i % 7}")
        latencies.append(time.perf_counter() - start)
        if status != 200:
            print(f"    request {i} answered HTTP {status}")
        building_throughout &= digest_unposted(slack)
    analyses = sum(1 for r in llm.requests if not r.get("stream"))
    p50, p99 = statistics.median(latencies), pct(latencies, 99)
    print(
        f"(a) /digest acknowledgement over {N_ACKS} signed requests while a {N_COMMITS}-commit digest builds "
        f"(fake LLM {LLM_LATENCY} s/request, {LLM_CONCURRENCY} at a time; {analyses} LLM calls made meanwhile; "
        f"digest still unposted throughout: {'yes' if building_throughout else 'no'})"
    )
    print(
        f"    p50 {p50 * 1000:.1f} ms · p99 {p99 * 1000:.1f} ms · max {max(latencies) * 1000:.1f} ms → "
        f"p99 / target({ACK_TARGET * 1000:.0f} ms) = {p99 / ACK_TARGET:.3f}"
    )
    await chat.drain()  # the digest finishes and is posted with its thread


async def bench_qa(sender: SlackSender, slack: FakeSlack, llm: FakeOpenAI, chat: App) -> None:
    llm.latency = 0.0  # from here on the LLM's only delay is its first-token delay, subtracted below
    parent = slack.top_level(CHANNEL)[0]
    replies = slack.replies(CHANNEL, parent.ts)
    value = next(b["elements"][0]["value"] for r in replies for b in r.blocks if b["type"] == "actions")
    sha = json.loads(value)["sha"][:7]
    net: list[float] = []
    failed = 0
    for i in range(N_QUESTIONS + 1):  # the first one warms the cache (diff + analysis) and is not counted
        before = len(slack.calls_to("chat.startStream"))
        event = sender.message_event(
            f"<@UBOT> what could {sha} break? ({i})", kind="app_mention", channel=CHANNEL, thread_ts=parent.ts
        )
        start = time.monotonic()
        status, _ = await sender.event(event)
        arrived = await wait_for(lambda before=before: len(slack.calls_to("chat.startStream")) > before, timeout=10)
        await chat.drain()
        if status != 200 or not arrived:
            failed += 1
            continue
        first_chunk = slack.calls_to("chat.startStream")[before].at
        if i:
            net.append(first_chunk - start - FIRST_TOKEN_DELAY)
    if not net:
        print(f"(b) Q&A: no streamed answer arrived ({failed} failures) — nothing to measure")
        return
    p50, p99 = statistics.median(net), pct(net, 99)
    print(
        f"(b) Q&A, warm cache, {len(net)} questions in the digest thread: question → first streamed chunk at Slack, "
        f"minus the fake LLM's {FIRST_TOKEN_DELAY * 1000:.0f} ms first-token delay"
        + (f" ({failed} failed)" if failed else "")
    )
    print(
        f"    p50 {p50 * 1000:.1f} ms · p99 {p99 * 1000:.1f} ms · max {max(net) * 1000:.1f} ms → "
        f"p50 / target({QA_TARGET * 1000:.0f} ms) = {p50 / QA_TARGET:.3f}, p99 / target = {p99 / QA_TARGET:.3f}"
    )


if __name__ == "__main__":
    asyncio.run(main())
