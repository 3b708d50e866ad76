"""GitHub API calls per digest as a GitHub App against a personal token, through the fake GitHub
(tests/fakes/github_server.py, which checks the app's JWT) and the real PyGithub.

    .venv/bin/python bench/bench_github_app.py [--commits 20]

A digest's fetch of one day (N commits, half with a PR): the repository (1), the day's commits
(1 page), the PRs' descriptions (1 GraphQL request), each commit's files (N): the ideal is N + 3
with a personal token. As the app, a process with a cold cache (nothing in Redis yet) adds the
owner's installation (GET /repos/{o}/{r}/installation) and a token (POST …/access_tokens): N + 5;
with a warm cache — any process after the first within the token's hour (less REFRESH_MARGIN),
and the installation kept a day — it adds nothing: N + 3. The ratio printed is calls / ideal
(personal token's N + 3). Each case is a fresh process's view (new source, new app object); the
warm cases share the cold case's Redis (embedded, a throwaway directory).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
from datetime import date, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bot.core.store import open_store
from bot.core.window import day_window
from bot.sources.github import GitHubSource
from bot.sources.github.installations import GitHubApp
from settings import Settings
from tests.fakes.github_server import FakeFile, FakeGitHub

REPO = "octo/widgets"
PAT = "bench-personal-token"


async def digest_calls(gh: FakeGitHub, source: GitHubSource) -> int:
    """The GitHub API calls one digest's fetch of the day makes (token fetches included)."""
    before = len(gh.requests)
    commits = await source.list_commits(day_window(date(2026, 1, 28), "Asia/Shanghai"))
    await source.prefetch_prs(commits)
    await asyncio.gather(*(source.get_files(c.sha) for c in commits))
    return len(gh.requests) - before


async def main(n: int) -> None:
    sh = ZoneInfo("Asia/Shanghai")
    with FakeGitHub() as gh, tempfile.TemporaryDirectory() as data:
        app = gh.enable_app(app_id="4242", slug="digest-bot")
        app.install("octo")
        gh.add_repo(REPO)
        start = datetime(2026, 1, 28, 8, tzinfo=sh)
        for i in range(n):
            title = f"feat: change {i}" + (f" (#{i + 1})" if i % 2 == 0 else "")
            gh.add_commit(REPO, title, committed_at=start + timedelta(minutes=i), files=[FakeFile(f"m{i}.py")])
            if i % 2 == 0:
                gh.add_pull(REPO, i + 1, body=f"Why change {i}.")
        gh.accept_tokens(PAT)
        base = {"_env_file": None, "github_api_url": gh.url, "data_dir": Path(data)}
        personal = Settings(**base, github_token=PAT)  # type: ignore[arg-type]
        as_app = Settings(**base, github_app_id="4242", github_app_private_key=app.private_pem)  # type: ignore[arg-type]
        store = open_store(as_app)
        ideal = n + 3
        rows = [("personal token", await digest_calls(gh, GitHubSource(REPO, personal)))]
        try:
            for case in (
                "app, cold cache (first process)",
                "app, warm cache (second process)",
                "app, warm cache (third process)",
            ):
                rows.append((case, await digest_calls(gh, GitHubSource(REPO, as_app, app=GitHubApp(as_app, store)))))
        finally:
            await store.close()
        print(f"a day of {n} commits ({(n + 1) // 2} with a PR); ideal {ideal} calls (N + 3, personal token)")
        for case, calls in rows:
            print(f"{case:34} {calls:4d} calls  ratio {calls / ideal:.2f}")
        print(f"installation tokens issued: {app.tokens_issued} (one an hour per installation, for every process)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--commits", type=int, default=20)
    asyncio.run(main(parser.parse_args().commits))
