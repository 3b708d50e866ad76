"""Alert latency (issue 27, item 4): from a high commit landing to its alert in the channel.
Prints each figure and its ratio to ALERT_POLL_SECONDS; asserts nothing.

  python bench/bench_alerts.py                        # defaults: period 2 s, 12 commits
  python bench/bench_alerts.py --period 3 --commits 20

Everything is real except the chat platform and the LLM: a local git repository
(tests/gitrepo.py) that commits land in while the bot runs, the embedded Redis (a redis-server
under a temporary DATA_DIR), the clock loop (`Clock.run_forever`, ticking every CLOCK_INTERVAL =
period ÷ 20, polls inline as in the terminal's `run`), the offline analyser (no LLM configured:
the commits are breaking changes it grades high), and the fake Slack Web API
(tests/fakes/slack_server.py) that the alerts are posted to.

(a) Polls only: ALERT_POLL_SECONDS = period. Commits land one at a time, each at a uniformly
    random moment of the period after the previous alert's; each is timed from the moment `git commit` returned to the moment its
    alert is in the fake Slack (read every 10 ms). Ideal: max ≤ 1.0 period (+ a tick and the
    poll's own work), mean ≈ 0.5 period: a commit waits for the next poll boundary.
(b) The push webhook: ALERT_POLL_SECONDS = 600, GITHUB_WEBHOOK_SECRET set, and after each commit a
    signed GitHub `push` to `POST /github/webhook` (handlers/web.py) on the public server. The
    latency in seconds, landing to alert: the webhook's answer, the woken poll, the post.
"""

from __future__ import annotations

import argparse
import asyncio
import atexit
import hashlib
import hmac
import json
import random
import shutil
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import aiohttp

from bot.channels.alerted import AlertLedger
from bot.core.models import Subscription
from bot.render import slack as R
from bot.runtime.app import App
from bot.runtime.services import Services
from handlers.slack import Pacing, build_slack
from handlers.web import bound_port, build_app, github_webhook_routes, start_server
from settings import Settings
from tests.fakes.slack_server import FakeSlack
from tests.gitrepo import GitRepo

CHANNEL = "C0ALERTS"
SECRET = "bench-webhook-secret"
FAST = Pacing(per_second=500, burst=100, edit_interval=0.05, stream_interval=0.02)


def make_repo(path: Path, commits: int) -> GitRepo:
    repo = GitRepo(path, bare_origin="https://github.com/acme/widgets.git")
    files = {
        f"src/api_{n}.py": f"def old_{n}(x):\n    return x\n\n\ndef new_{n}(x):\n    return [x]\n"
        for n in range(commits)
    }
    repo.commit("init", files, when=datetime.now(UTC).replace(year=2025))
    return repo


def land(repo: GitRepo, n: int) -> float:
    """A breaking change (the offline analyser's high), committed now; when `git commit` returned."""
    repo.commit(
        f"feat!: remove old_{n} from the public API\n\nBREAKING CHANGE: old_{n} is gone; call new_{n}.",
        {f"src/api_{n}.py": f"def new_{n}(x):\n    return [x]\n"},
        when=datetime.now(UTC),
    )
    return time.time()


async def seen(slack: FakeSlack, n: int, limit: float) -> float | None:
    """When the alert about commit `n` is first in the channel (read every 10 ms)."""
    needle = f"remove old_{n} from"
    deadline = time.time() + limit
    while time.time() < deadline:
        for m in slack.top_level(CHANNEL):
            text = R.unescape("\n".join(x for b in m.blocks for x in R.plain_texts(b)) if m.blocks else m.text)
            if needle in text:
                return time.time()
        await asyncio.sleep(0.01)
    return None


async def bot(tmp: Path, name: str, repo: GitRepo, slack: FakeSlack, period: float, hook: bool):
    settings = Settings(
        _env_file=None,
        data_dir=tmp / name,
        redis_prefix=f"bench{name}:",
        slack_bot_token=slack.token,
        slack_api_url=slack.url,
        default_repo=str(repo.path),
        default_lang="en",
        alert_poll_seconds=period,
        alert_max_per_hour=100,
        clock_interval=max(0.05, min(period / 20, 1.0)),
        log_level="WARNING",
        github_webhook_secret=SECRET if hook else None,
    )
    services = Services.build(settings)
    app = App.build(services)
    adapter = build_slack(settings, app.router, receive=False, pacing=FAST)
    app.register(adapter.platform)
    sub = Subscription("slack", CHANNEL, str(repo.path), lang="en", alerts="high")
    await app.subs.upsert(sub)
    await AlertLedger(services.store).start("slack", CHANNEL, sub.repo, datetime.now(UTC))
    runner = None
    if hook:
        routes = github_webhook_routes(SECRET, app.wake_alerts)
        runner = await start_server(build_app(services.store, routes), "127.0.0.1", 0)
    return services, app, adapter, runner


def summary(label: str, latencies: list[float], period: float | None) -> None:
    lat = sorted(latencies)
    p50 = statistics.median(lat)
    mean = statistics.fmean(lat)
    line = f"  {label}: n={len(lat)}  max {lat[-1]:.2f} s  p50 {p50:.2f} s  mean {mean:.2f} s"
    if period:
        line += f"  →  max ÷ period {lat[-1] / period:.2f}, p50 ÷ period {p50 / period:.2f}, mean ÷ period {mean / period:.2f}"
    print(line)


async def polls_only(tmp: Path, period: float, commits: int, rng: random.Random) -> None:
    repo = make_repo(tmp / "repo-a", commits)
    with FakeSlack() as slack:
        services, app, adapter, _ = await bot(tmp, "a", repo, slack, period, hook=False)
        stop = asyncio.Event()
        ticking = asyncio.create_task(app.make_clock().run_forever(stop))
        latencies: list[float] = []
        missed = 0
        try:
            await asyncio.sleep(period)  # the first poll has run: the cursor is in place
            for n in range(commits):
                # A uniformly random moment of the next period (polls are due at multiples of the
                # period since the epoch): not a pause after the last alert, which would favour
                # the start of a period and so longer waits.
                now = time.time()
                await asyncio.sleep((period - now % period) + rng.uniform(0, period))
                landed = await asyncio.to_thread(land, repo, n)
                at = await seen(slack, n, limit=5 * period + 10)
                if at is None:
                    missed += 1
                else:
                    latencies.append(at - landed)
        finally:
            stop.set()
            await asyncio.gather(ticking, return_exceptions=True)
            await adapter.close()
            await services.aclose()
        posted = len(slack.top_level(CHANNEL))
    print(f"(a) polls only: ALERT_POLL_SECONDS = {period:g} s, clock tick {max(0.05, min(period / 20, 1.0)):g} s")
    summary("landing → alert", latencies, period)
    print(f"  alerts posted {posted} for {commits} commits (duplicates: {posted - commits + missed}); missed {missed}")


async def with_webhook(tmp: Path, commits: int, rng: random.Random) -> None:
    repo = make_repo(tmp / "repo-b", commits)
    with FakeSlack() as slack:
        services, app, adapter, runner = await bot(tmp, "b", repo, slack, 600.0, hook=True)
        assert runner is not None
        url = f"http://127.0.0.1:{bound_port(runner)}/github/webhook"
        stop = asyncio.Event()
        ticking = asyncio.create_task(app.make_clock().run_forever(stop))
        latencies: list[float] = []
        answers: list[float] = []
        missed = 0
        try:
            async with aiohttp.ClientSession() as session:
                await asyncio.sleep(0.5)
                for n in range(commits):
                    await asyncio.sleep(rng.uniform(5.1, 6.0))  # past the 5 s that one wake-up covers
                    landed = await asyncio.to_thread(land, repo, n)
                    body = json.dumps({"ref": "refs/heads/main", "repository": {"full_name": "acme/widgets"}}).encode()
                    sig = "sha256=" + hmac.new(SECRET.encode(), body, hashlib.sha256).hexdigest()
                    sent = time.time()
                    async with session.post(
                        url, data=body, headers={"X-GitHub-Event": "push", "X-Hub-Signature-256": sig}
                    ) as resp:
                        assert resp.status == 202, resp.status
                    answers.append(time.time() - sent)
                    at = await seen(slack, n, limit=30)
                    if at is None:
                        missed += 1
                    else:
                        latencies.append(at - landed)
        finally:
            stop.set()
            await asyncio.gather(ticking, return_exceptions=True)
            await app.drain_local()
            await runner.cleanup()
            await adapter.close()
            await services.aclose()
        posted = len(slack.top_level(CHANNEL))
    print("(b) push webhook: ALERT_POLL_SECONDS = 600 s (no poll due meanwhile), one signed push after each commit")
    summary("landing → alert", latencies, None)
    print(f"  webhook answered in: max {max(answers) * 1000:.0f} ms, p50 {statistics.median(answers) * 1000:.0f} ms")
    print(f"  alerts posted {posted} for {commits} commits; missed {missed}")


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--period", type=float, default=2.0, help="ALERT_POLL_SECONDS for (a)")
    parser.add_argument("--commits", type=int, default=12)
    parser.add_argument("--hook-commits", type=int, default=5)
    parser.add_argument("--parts", default="ab")
    parser.add_argument("--seed", type=int, default=27)
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="bench-alerts-"))
    atexit.register(shutil.rmtree, tmp, ignore_errors=True)
    rng = random.Random(args.seed)
    if "a" in args.parts:
        await polls_only(tmp, args.period, args.commits, rng)
    if "b" in args.parts:
        await with_webhook(tmp, args.hook_commits, rng)


if __name__ == "__main__":
    asyncio.run(main())
