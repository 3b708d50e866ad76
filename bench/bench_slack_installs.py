"""Slack installed into many workspaces (issue 35 §1): what OAuth installs cost a scheduled push, and
how long a new workspace waits for its first post. Prints figures; asserts nothing.

  python bench/bench_slack_installs.py                  # 8 workspaces
  python bench/bench_slack_installs.py --workspaces 20

Everything is real except Slack and the LLM: the embedded Redis (a redis-server under a temporary
DATA_DIR), a local git repository with one day of three commits, the offline analyser, Bolt's
OAuth flow served by the bot's own web server, and the fake Slack (tests/fakes/slack_server.py:
authorize page, oauth.v2.access, a token per workspace).

(a) Calls per scheduled push: N subscriptions, each in its own channel, pushed by one clock tick;
    Slack Web API calls and Redis commands (INFO commandstats, this server only) per push, with
    one SLACK_BOT_TOKEN (bare ids) and with N workspaces installed through OAuth (T/C ids, each
    call with its workspace's token). Ideal: the same Slack calls (OAuth adds no Slack call to a
    push); the Redis cost is the installation reads (one per Slack call) and is printed apart.
(b) Time to first post: for each workspace, from the browser's request to /slack/oauth_redirect
    (code exchanged, installation stored) to the first message of a `/digest <day>` typed right
    after in that workspace arriving at Slack. Ideal: the on-demand digest's own time.
"""

from __future__ import annotations

import argparse
import asyncio
import atexit
import html
import re
import shutil
import statistics
import sys
import tempfile
import time
from datetime import UTC, date, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import aiohttp

from bot.core.models import Subscription
from bot.runtime.app import App
from bot.runtime.services import Services
from handlers.slack import Pacing, build_slack
from handlers.web import bound_port, build_app, start_server
from settings import Settings
from tests.fakes.slack_server import FakeSlack, SlackSender
from tests.shared.slack import build_widgets

NOW = datetime(2026, 1, 29, 1, 30, tzinfo=UTC)  # 09:30 in Shanghai: the 28th's push is due
SECRET = "bench-signing-secret"
FAST = Pacing(per_second=500, burst=100, edit_interval=0.05, stream_interval=0.02)


async def start(tmp: Path, name: str, slack: FakeSlack, repo, oauth: bool):
    values: dict = dict(
        _env_file=None,
        data_dir=tmp / "data",  # one embedded Redis for both runs; prefixes keep them apart
        redis_prefix=f"bench{name}:",
        slack_api_url=slack.url,
        slack_signing_secret=SECRET,
        default_repo=str(repo.path),
        default_lang="en",
        default_tz="Asia/Shanghai",
        log_level="WARNING",
    )
    if oauth:
        values.update(slack_client_id=slack.client_id, slack_client_secret=slack.client_secret)
    else:
        values.update(slack_bot_token=slack.token)
    settings = Settings(**values)
    services = Services.build(settings)
    app = App.build(services)
    adapter = build_slack(settings, app.router, receive=True, pacing=FAST)
    app.register(adapter.platform)
    runner = await start_server(build_app(services.store, adapter.http_routes()), "127.0.0.1", 0)
    base = f"http://127.0.0.1:{bound_port(runner)}"
    slack.redirect_uri = f"{base}/slack/oauth_redirect"
    return services, app, adapter, runner, base


async def stop(services, app, adapter, runner) -> None:
    await app.drain()
    await adapter.close()
    await runner.cleanup()
    await services.aclose()


async def redis_commands(store) -> int:
    stats = await store.r.info("commandstats")
    return sum(int(v["calls"]) for v in stats.values())


async def install(http: aiohttp.ClientSession, base: str, team: str) -> tuple[str, str]:
    """/slack/install → Slack's authorize page; returns the redirect back and the state cookie."""
    async with http.get(f"{base}/slack/install?team={team}") as page:
        body = await page.text()
        cookie = page.headers["Set-Cookie"].split(";")[0]
    url = html.unescape(re.search(r'<a href="([^"]+)" id="add-to-slack"', body).group(1))
    async with http.get(url, allow_redirects=False) as slack_page:
        return slack_page.headers["Location"], cookie


async def first_post(slack: FakeSlack, channel: str, limit: float = 60.0) -> float | None:
    end = time.monotonic() + limit
    while time.monotonic() < end:
        if slack.top_level(channel):
            return time.monotonic()
        await asyncio.sleep(0.002)
    return None


async def pushes(tmp: Path, repo, n: int, oauth: bool) -> dict:
    with FakeSlack() as slack:
        teams = [f"TB{i:04d}" for i in range(n)]
        for team in teams if oauth else ():  # one bot token: the fake's own workspace has them all
            slack.add_team(team, channels=(f"C{team}",))
        services, app, adapter, runner, base = await start(tmp, "oauth" if oauth else "fixed", slack, repo, oauth)
        try:
            if oauth:
                async with aiohttp.ClientSession() as http:
                    for team in teams:
                        back, cookie = await install(http, base, team)
                        async with http.get(back, headers={"Cookie": cookie}) as done:
                            assert done.status == 200, await done.text()
            for team in teams:
                channel = f"{team}/C{team}" if oauth else f"C{team}"
                sub = Subscription("slack", channel, str(repo.path), at="09:20", tz="Asia/Shanghai", lang="en")
                await app.subs.upsert(sub)
            calls, redis_before = len(slack.calls), await redis_commands(services.store)
            lookups = getattr(adapter.platform.workspaces, "lookups", 0)
            outcomes = [o for _, _, o in await app.make_clock(now=lambda: NOW).tick()]
            assert outcomes == ["delivered"] * n, outcomes
            return {
                "slack": (len(slack.calls) - calls) / n,
                "redis": (await redis_commands(services.store) - redis_before) / n,
                "lookups": (getattr(adapter.platform.workspaces, "lookups", 0) - lookups) / n,
                "wrong_token": sum(
                    1
                    for team in teams
                    for c in slack.calls_by(team)
                    if c.params.get("channel") not in (None, f"C{team}")
                ),
            }
        finally:
            await stop(services, app, adapter, runner)


async def time_to_first_post(tmp: Path, repo, n: int) -> list[float]:
    with FakeSlack() as slack:
        services, app, adapter, runner, base = await start(tmp, "first", slack, repo, oauth=True)
        waits = []
        try:
            async with aiohttp.ClientSession() as http:
                for i in range(n):
                    team, channel = f"TF{i:04d}", f"CTF{i:04d}"
                    slack.add_team(team, channels=(channel,))
                    back, cookie = await install(http, base, team)
                    sender = SlackSender(f"{base}/slack/events", SECRET, team_id=team)
                    began = time.monotonic()
                    async with http.get(back, headers={"Cookie": cookie}) as done:
                        assert done.status == 200
                    status, _ = await sender.slash("2026-01-28", channel=channel, user="U1")
                    assert status == 200
                    seen = await first_post(slack, channel)
                    await sender.close()
                    if seen is not None:
                        waits.append(seen - began)
            return waits
        finally:
            await stop(services, app, adapter, runner)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workspaces", type=int, default=8)
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="bench-slack-installs-"))
    atexit.register(shutil.rmtree, tmp, ignore_errors=True)
    repo = build_widgets(tmp / "widgets", date(2026, 1, 28))
    n = args.workspaces

    print(f"(a) one scheduled push each into {n} channels (3 commits, offline analyser)")
    fixed = await pushes(tmp, repo, n, oauth=False)
    oauth = await pushes(tmp, repo, n, oauth=True)
    for label, got in (("one bot token", fixed), (f"OAuth, {n} workspaces", oauth)):
        print(
            f"  {label:>22}: Slack calls/push {got['slack']:.1f}, Redis commands/push {got['redis']:.1f}, "
            f"installation reads/push {got['lookups']:.1f}"
        )
    print(
        f"  ratio OAuth/one token: Slack calls {oauth['slack'] / fixed['slack']:.2f} (ideal 1.00), "
        f"Redis commands {oauth['redis'] / fixed['redis']:.2f}; calls to a channel with another "
        f"workspace's token: {oauth['wrong_token']}"
    )

    print(f"(b) install redirect → first post of `/digest 2026-01-28`, {n} workspaces in turn")
    waits = await time_to_first_post(tmp, repo, n)
    if waits:
        print(
            f"  seconds: p50 {statistics.median(waits):.3f}, max {max(waits):.3f}, "
            f"min {min(waits):.3f}; posted {len(waits)}/{n}"
        )
    else:
        print("  no first post seen")


if __name__ == "__main__":
    asyncio.run(main())
