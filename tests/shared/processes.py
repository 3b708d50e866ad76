"""The bot as real processes (clock, worker) against a fake Slack and a real Redis."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from bot.core.models import Subscription
from bot.runtime.schedule import due_day
from tests.fakes.slack_server import FakeSlack
from tests.gitrepo import GitRepo, bulk_commits

ROOT = Path(__file__).resolve().parent.parent
SECRET = "processes-signing-secret"


class Bots:
    """Start, kill and stop bot processes; each writes its log to a file (a pipe could fill)."""

    def __init__(self, tmp_path: Path, env: dict):
        self.tmp, self.env, self.procs, self.logs = tmp_path, env, [], []

    def start(self, role: str, **extra: str) -> subprocess.Popen:
        log = open(self.tmp / f"{role}-{len(self.procs)}.log", "wb")  # noqa: SIM115 — the child writes it while it lives
        proc = subprocess.Popen(
            [sys.executable, "-m", "bot", role],
            env={**self.env, **extra},
            cwd=self.tmp,
            stdout=subprocess.DEVNULL,
            stderr=log,
        )
        self.procs.append(proc)
        self.logs.append(log.name)
        return proc

    @staticmethod
    def kill(proc: subprocess.Popen) -> None:
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)

    def stop_all(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        for proc in self.procs:
            try:
                proc.wait(15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()

    def tracebacks(self) -> str:
        text = "\n".join(Path(p).read_text(errors="replace") for p in self.logs)
        return "\n".join(line for line in text.splitlines() if "Traceback" in line)

    def log_text(self) -> str:
        return "\n".join(Path(p).read_text(errors="replace")[-3000:] for p in self.logs)


def wait_for(predicate, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def base_env(slack: FakeSlack, redis_url: str, prefix: str, repo: Path, tmp: Path, **extra) -> dict:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("SLACK_", "OPENAI_", "REDIS_", "DEFAULT_", "FEISHU_", "GITHUB_", "LLM_"))
    }
    env.update(
        SLACK_BOT_TOKEN=slack.token,
        SLACK_API_URL=slack.url,
        SLACK_SIGNING_SECRET=SECRET,
        REDIS_URL=redis_url,
        REDIS_PREFIX=prefix,
        DEFAULT_REPO=str(repo),
        DEFAULT_LANG="en",
        CLOCK_INTERVAL="0.2",
        JOB_LEASE="2",
        DATA_DIR=str(tmp / "data"),
        LOG_LEVEL="WARNING",
        PYTHONPATH=str(ROOT),
    )
    env.update(extra)
    return env


def subs_file(path: Path, subs: list[dict]) -> Path:
    lines = []
    for s in subs:
        lines.append("[[subscription]]")
        lines += [f'{k} = "{v}"' for k, v in s.items()]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture
def scheduled(tmp_path, redis_server, redis_url):
    """One subscription due a few minutes ago (inside the catch-up window) for a repository with
    three commits on the day it covers."""
    now = datetime.now(UTC)
    at = (now - timedelta(minutes=3)).strftime("%H:%M")
    day = due_day(now, Subscription("slack", "C", "x", at=at, tz="UTC"), timedelta(minutes=180))
    repo = GitRepo(tmp_path / "repo")
    bulk_commits(repo, 3, datetime.combine(day, datetime.min.time(), tzinfo=UTC) + timedelta(hours=9), step_seconds=600)
    prefix = f"proc{os.getpid()}{int(time.time() * 1000) % 100000}:"
    return dict(repo=repo.path, at=at, prefix=prefix, redis=redis_server, url=redis_url)


def _one_sub(scheduled, tmp_path, channel: str) -> Path:
    return subs_file(
        tmp_path / f"subs-{channel}.toml",
        [dict(platform="slack", channel=channel, repo=str(scheduled["repo"]), at=scheduled["at"], tz="UTC", lang="en")],
    )
