"""The console chat on a local repository, at a fixed clock."""

from __future__ import annotations

import io
from datetime import UTC, datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from bot.runtime.app import App
from bot.runtime.services import Services
from handlers.console import ConsoleChat, ConsolePlatform
from tests.gitrepo import GitRepo

SH = ZoneInfo("Asia/Shanghai")
NOW = datetime(2026, 1, 29, 1, 30, tzinfo=UTC)  # 09:30 on the 29th in Shanghai


def console_repo(tmp_path):
    """Four commits on 27–28 January in Shanghai, one with a hostile title (test_console's `repo`)."""
    r = GitRepo(tmp_path / "widgets", bare_origin="https://github.com/acme/widgets.git")
    r.commit(
        "[Deprecation] Remove the legacy exporter (#41)\n\nThe v1 exporter is gone.",
        {
            "src/legacy_export.py": "".join(f"def f{i}():\n    return {i}\n" for i in range(200)),
            "src/api.py": "def export_v1():\n    pass\n",
        },
        when=datetime(2026, 1, 27, 9, tzinfo=SH),
    )
    r.commit(
        "[Deprecation] Remove the legacy exporter (#41)",
        {"src/legacy_export.py": None, "src/api.py": "\n"},
        when=datetime(2026, 1, 28, 10, tzinfo=SH),
    )
    r.commit("[Docs] Fix typo in README", {"README.md": "Widgets\n"}, when=datetime(2026, 1, 28, 11, tzinfo=SH))
    r.commit(
        "[Bugfix] Handle <!channel> and <https://evil|docs> in titles @all",
        {"src/api.py": "\n\n"},
        when=datetime(2026, 1, 28, 12, tzinfo=SH),
    )
    return r


def busy_repo(tmp_path, commits: int = 400):
    """A day of `commits` commits (git fast-import: seconds of git calls saved), long enough to
    analyse that Ctrl-C lands while the digest runs."""
    import subprocess

    r = GitRepo(tmp_path / "busy", bare_origin="https://github.com/acme/busy.git")
    start = int(datetime(2026, 1, 28, 8, tzinfo=SH).timestamp())
    body = "".join(f"def f{i}(x):\n    return x + {i}\n" for i in range(60))
    stream = []
    for n in range(commits):
        data, message = f"{body}# {n}\n".encode(), f"Change module {n}\n".encode()
        stream += [
            b"commit refs/heads/main",
            f"committer Ada Lovelace <ada@example.com> {start + 60 * n} +0800".encode(),
            b"data %d" % len(message),
            message,
            b"M 100644 inline src/m%d.py" % (n % 40),
            b"data %d" % len(data),
            data,
        ]
    subprocess.run(["git", "-C", str(r.path), "fast-import", "--quiet"], input=b"\n".join(stream) + b"\n", check=True)
    r.git("reset", "-q", "--hard", "main")
    return r


def embedded_servers(data_dir) -> list[int]:
    """The redis-server processes still running in `data_dir` (the embedded Redis of a bot that
    has exited must not be among them; a zombie has exited)."""
    import psutil

    found = []
    for proc in psutil.process_iter(["name"]):
        try:
            if proc.info["name"] == "redis-server" and proc.status() != psutil.STATUS_ZOMBIE:
                if proc.cwd().startswith(str(data_dir)):
                    found.append(proc.pid)
        except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
            pass
    return found


@pytest.fixture
async def console(console_in):
    return await console_in("en")


@pytest.fixture
async def console_in(make_settings, repo):
    """`await console_in(lang)`: a typing function (see `console`) for a console whose
    DEFAULT_LANG is `lang`."""
    made = []

    async def build(lang: str, **overrides):
        typed = _typing(
            Services.build(
                make_settings(default_repo=str(repo.path), default_lang=lang, **overrides), clock=lambda: NOW
            )
        )
        made.append(typed)
        return typed

    yield build
    for typed in made:
        await typed.chat.services.aclose()


def _typing(services):
    out = io.StringIO()
    platform = ConsolePlatform(out=out, report_dir=Path(services.settings.data_dir) / "reports")
    chat = App.build(services, {"console": platform}, clock=lambda: NOW)
    typed = ConsoleChat(chat.router, platform)

    async def type_line(line: str) -> str:
        start = out.tell()
        await typed.handle(line)
        await chat.drain()
        out.seek(start)
        text = out.read()
        out.seek(0, io.SEEK_END)
        return text

    type_line.chat = chat
    type_line.platform = platform
    return type_line
