"""The terminal chat shows the conversation and nothing else: no log lines, no English in a
Chinese chat, and Ctrl-C stops a running command with one line (issue 33 §5). Driven as a user
types: what the chat prints is what is checked."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tests.shared.console import busy_repo, console_repo

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def repo(tmp_path):
    return console_repo(tmp_path)


# --- no English in a Chinese chat -----------------------------------------------------------------

# Words a Chinese chat may show in Latin letters: the commands and their options as the user types
# them (the prompt, usage and help lines name them), and the trade's words that Chinese developers
# write in English.
TYPED = set(
    """
    digest help reply details level too-high too-low quit sha owner repo subscribe unsubscribe list
    ask config lang tz questions mention all file on off owners remove watch unwatch watches week
    release weekly mon at min high medium low branch main empty post skip paths exclude authors
    exclude-authors bots show collapse fork org our-fork alerts none user team today yesterday
    last-week this-week zh en
    """.split()
)
TRADE = {
    "glob",
    "fork",
    "cherry-pick",
    "Ctrl-C",
    "Ctrl-D",
    "diff",
    "commit",
    "hunk",
    "token",
    "Slack",
    "GitHub",
    "Lark",
}

_FENCE = re.compile(r"```.*?```", re.S)  # an offline answer's diff: code
_CODE = re.compile(r"`[^`\n]*`")
_QUOTED = re.compile(r"「[^」]*」|“[^”]*”|‘[^’]*’|'[^'\n]*'|<[^>\n]*>")  # quoted commit or typed text
_URL = re.compile(r"https?://\S+")
_WORD = re.compile(r"[A-Za-z][A-Za-z'-]*[A-Za-z]|[A-Za-z]")


def english_chrome(shown: str, allowed: set[str]) -> list[str]:
    """The lines of `shown` holding a word of English that is neither code, a name (repository,
    path, SHA, commit title) nor one of the words above."""
    found = []
    for line in _FENCE.sub("", shown).splitlines():
        rest = line
        for title in sorted(allowed, key=len, reverse=True):  # commit titles and bodies, repo names
            if " " in title:
                rest = rest.replace(title, " ")
        rest = _URL.sub(" ", _CODE.sub(" ", _QUOTED.sub(" ", rest)))
        tokens = rest.split()
        words = []
        for token in tokens:
            # code and names: anything with a path, a dot, an underscore, a digit or an @
            if re.search(r"[/._0-9@#=]", token) or re.fullmatch(r"[0-9a-f]{7,40}", token):
                continue
            words += _WORD.findall(token)
        odd = [
            w
            for w in words
            if w not in TYPED and w not in TRADE and w not in allowed and not w.isupper() and len(w) > 1
        ]
        if odd:
            found.append(f"{odd}: {line.strip()}")
    return found


def names_of(repo) -> set[str]:
    """What a digest of `repo` may quote as written: its commit titles and bodies (whole, and word
    by word), its paths' parts and the repository's names."""
    said = repo.git("log", "--all", "--format=%s%n%b")
    paths = repo.git("log", "--all", "--name-only", "--format=")
    names = {line.strip() for line in said.splitlines() if line.strip()}
    names |= {w for line in said.splitlines() for w in _WORD.findall(line)}
    names |= {part for p in paths.split() for part in re.split(r"[/.]", p) if part}
    return names | {"acme", "widgets"}


async def test_a_chinese_session_through_every_command_shows_no_english_chrome(console_in, repo):
    console = await console_in("zh")
    path = str(repo.path)
    sha = repo.git("log", "-1", "--format=%h", "--grep=Remove the legacy", "--before=2026-01-28T23:00+08:00").strip()
    lines = [
        "/digest 2026-01-28",
        "reply 1 这次删除了什么？",
        f"reply 1 {sha} 会影响什么？",
        f"details 1 {sha}",
        f"level 1 too-high {sha}",
        f"level 1 too-low {sha}",
        "level 1 too-high",
        "/digest list",
        f"/digest subscribe {path} at 9:00 min medium",
        f"/digest subscribe {path} weekly mon paths src/** alerts high",
        "/digest list",
        "/digest config",
        "/digest config file on",
        "/digest week 2026-01-28",
        "/digest 2026-01-27..2026-01-28 paths src/** exclude-authors nobody",
        "/digest 2026-01-28 authors Ada exclude README.md",
        "/digest 2026-01-28 paths /src/**",
        "/digest frobnicate",
        "/digest 2026-02-30",
        "/digest 2027-01-01",
        "/digest ask 2026-01-27..2026-01-28 删除了什么？",
        f"/digest watch {path} src/**",
        "/digest watches",
        f"/digest unwatch {path}",
        "/digest owners",
        "/digest release",
        "reply x",
        "reply 99 为什么？",
        "level x",
        "details 1",
        f"/digest unsubscribe {path}",
        f"/digest unsubscribe {path} weekly",
        "/digest today",
        "help",
    ]
    shown = ""
    for line in lines:
        shown += await console(line)
    assert "每日更新报告（2026-01-28）" in shown and "周报" in shown  # the session did run
    assert "已订阅" in shown and "已取消订阅" in shown and "已记录" in shown
    # The cases seen by the issue, named, then every other line.
    for english in ("由 you", " in #", "最低重要度 low", "最低重要度 medium", "最低 low", "🔎 paths"):
        assert english not in shown, english
    found = english_chrome(shown, names_of(repo) | {"nobody", "Ada"})  # the typed author names
    assert not found, "\n".join(found)


def test_the_english_detector_finds_chrome_and_passes_names():
    names = {"Remove the legacy exporter", "src", "widgets"}
    assert english_chrome("  ↳ [#2 in #1] 🔴 9b425c4 Remove the legacy exporter", names) == [
        "['in']: ↳ [#2 in #1] 🔴 9b425c4 Remove the legacy exporter"
    ]
    assert english_chrome("影响：src 的使用者；删除了 src/a.py 中的 `f0`，见 https://x.example/a", names) == []
    assert english_chrome("• a/b — 每天 09:00 · zh · 最低 low", names) == []  # `low` is a typed word…
    assert english_chrome("✏️ 等级已由 you 纠正", names) == ["['you']: ✏️ 等级已由 you 纠正"]  # …`you` is not


# --- no log lines in the chat ---------------------------------------------------------------------


def _clean_env(redis_url: str, repo, prefix: str, **more: str) -> dict:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("SLACK_", "FEISHU_", "OPENAI_", "GITHUB_", "REDIS_", "DEFAULT_", "LOG_", "CONSOLE_"))
    }
    env.update(
        {
            "REDIS_URL": redis_url,
            "REDIS_PREFIX": prefix,
            "DEFAULT_REPO": str(repo.path),
            "PYTHONPATH": str(ROOT),
            "PYTHONUNBUFFERED": "1",
            **more,
        }
    )
    return env


@pytest.mark.parametrize(
    "lang,said",
    [
        ("zh", "日志写入 {path}（设置 CONSOLE_LOGS=stderr 可改为显示在这里）。"),
        ("en", "Log lines go to {path} (CONSOLE_LOGS=stderr shows them here instead)."),
    ],
)
def test_the_chat_says_once_where_its_logs_go_and_shows_none(redis_url, repo, tmp_path, lang, said):
    data = tmp_path / "data"
    env = _clean_env(redis_url, repo, f"logs{lang}:", DATA_DIR=str(data), DEFAULT_LANG=lang)
    proc = subprocess.run(
        [sys.executable, "-m", "bot", "run"],
        input="/digest 2026-01-28\nreply 1 what happened to the legacy exporter?\nquit\n",
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    log = data / "logs" / "bot.log"
    assert proc.stdout.count(said.format(path=log)) == 1
    assert proc.stdout.splitlines()[1] == said.format(path=log)  # right under the prompt
    assert "2026-01-28" in proc.stdout  # the digest was shown…
    for shown in (proc.stdout, proc.stderr):  # …and not one log line, anywhere on the terminal
        assert " INFO " not in shown and "arq.worker" not in shown and "jobs complete" not in shown
    assert proc.stderr == ""
    written = log.read_text(encoding="utf-8")
    assert "arq.worker" in written and "job worker" in written  # they went to the file

    # Asked for (CONSOLE_LOGS=stderr), they are on stderr, and the chat says nothing of a file.
    env["CONSOLE_LOGS"], env["DATA_DIR"] = "stderr", str(tmp_path / "elsewhere")
    proc = subprocess.run(
        [sys.executable, "-m", "bot", "run"], input="quit\n", capture_output=True, text=True, env=env, timeout=120
    )
    assert proc.returncode == 0 and "job worker" in proc.stderr and "CONSOLE_LOGS" not in proc.stdout
    assert not (tmp_path / "elsewhere" / "logs").exists()


def test_a_mistyped_console_logs_is_one_sentence(redis_url, repo, tmp_path):
    env = _clean_env(redis_url, repo, "logsbad:", DATA_DIR=str(tmp_path / "data"), CONSOLE_LOGS="disk")
    proc = subprocess.run(
        [sys.executable, "-m", "bot", "run"], input="quit\n", capture_output=True, text=True, env=env, timeout=120
    )
    assert proc.returncode == 2 and "CONSOLE_LOGS" in proc.stderr and "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


# --- Ctrl-C while a command runs ------------------------------------------------------------------


class _Lines:
    """A process's output lines as they come, each with when it came."""

    def __init__(self, stream):
        self.lines: list[tuple[float, str]] = []
        self._thread = threading.Thread(target=self._pump, args=(stream,), daemon=True)
        self._thread.start()

    def _pump(self, stream) -> None:
        for line in stream:
            self.lines.append((time.monotonic(), line.rstrip("\n")))

    def wait_for(self, words: str, timeout: float = 60) -> None:
        end = time.monotonic() + timeout
        while not any(words in line for _, line in self.lines):
            assert time.monotonic() < end, f"never saw {words!r}: {self.lines[-5:]}"
            time.sleep(0.02)

    def since(self, moment: float) -> list[str]:
        self._thread.join(timeout=10)
        return [line for when, line in self.lines if when >= moment]


@pytest.mark.parametrize(
    "lang,said",
    [
        ("zh", "⏹ 已中断：命令已停止，聊天即将退出。"),
        ("en", "⏹ Interrupted: the command was stopped and the chat is closing."),
    ],
)
def test_ctrl_c_during_a_digest_stops_it_with_one_line(redis_url, tmp_path, lang, said):
    busy = busy_repo(tmp_path)
    env = _clean_env(redis_url, busy, f"sigint{lang}:", DATA_DIR=str(tmp_path / "data"), DEFAULT_LANG=lang)
    proc = subprocess.Popen(
        [sys.executable, "-m", "bot", "run"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=tmp_path,
        start_new_session=True,  # its own process group: Ctrl-C in a terminal signals the whole group
    )
    out, err = _Lines(proc.stdout), _Lines(proc.stderr)
    try:
        proc.stdin.write("/digest 2026-01-28\n")
        proc.stdin.flush()
        out.wait_for("0/400")  # the digest is being analysed
        pressed = time.monotonic()
        os.killpg(proc.pid, signal.SIGINT)
        assert proc.wait(timeout=30) == 0  # a generous bound: the 1 s is not a test's figure
        after = [line for line in out.since(pressed) if line.strip()]
        assert said in after, after
        before, rest = after[: after.index(said)], after[after.index(said) + 1 :]
        assert all("⏳" in line for line in before) and rest == []  # at most a progress line in flight, then one line
        assert err.since(0) == []  # no log line, no traceback
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.stdin.close()


@pytest.mark.parametrize(
    "lang,said",
    [
        ("zh", "⚠️ “/bot/**”以 / 开头，但 glob 是相对仓库根目录的：请写 bot/**，而不是 /bot/**。"),
        ("en", "⚠️ '/bot/**' starts with /, but globs are relative to the repository root: write bot/**, not /bot/**."),
    ],
)
async def test_a_leading_slash_is_answered_with_the_path_typed(console_in, repo, lang, said):
    console = await console_in(lang)
    for typed in ("/digest 2026-01-28 paths /bot/**", f"/digest watch {repo.path} /bot/**"):
        shown = await console(typed)
        assert said in shown and "crates" not in shown, shown
