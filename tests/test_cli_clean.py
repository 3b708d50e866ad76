"""The command line says each thing once, in one language, and stops when asked (issue 33 §5):
a real `python -m bot` process, as a user runs it from a terminal."""

from __future__ import annotations

import os
import pty
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tests.shared.cli import cli_repo
from tests.shared.console import busy_repo, embedded_servers

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def repo(tmp_path):
    return cli_repo(tmp_path)


# --- one language per run ---------------------------------------------------------------------------


def test_a_run_speaks_one_language_stderr_included(run, repo, tmp_path):
    out = tmp_path / "day.md"
    # No --lang, no DEFAULT_LANG: the digest is Chinese, and so is every line on stderr.
    proc = run("digest", "--repo", str(repo.path), "--date", "2026-01-28", "--out", str(out))
    assert proc.returncode == 0 and proc.stderr == f"已写入 {out}（2 个提交）\n"
    assert "每日更新报告" in out.read_text(encoding="utf-8")
    bad = run("digest", "--repo", str(repo.path), "--date", "2026-02-30")
    assert bad.returncode == 2 and bad.stderr == "错误：“2026-02-30”不是真实存在的日期。\n"
    flag = run("digest", "--repo", str(repo.path), "--frob")
    assert flag.returncode == 2 and flag.stderr == "错误：无法识别的参数：--frob（用法见 python -m bot --help）\n"
    empty = run("digest", "--repo", str(repo.path), "--date", "2026-01-27")
    assert empty.stderr == "widgets（main）在 2026-01-27（Asia/Shanghai）没有提交。\n"
    # DEFAULT_LANG=en: all English; --lang wins over DEFAULT_LANG, for stdout and stderr alike.
    en = {"DEFAULT_LANG": "en"}
    assert run("digest", "--repo", str(repo.path), "--frob", env=en).stderr.startswith("error: unrecognized")
    proc = run("digest", "--repo", str(repo.path), "--date", "2026-01-28", "--out", str(out), env=en)
    assert proc.stderr == f"wrote {out} (2 commits)\n" and "Daily update report" in out.read_text(encoding="utf-8")
    proc = run("digest", "--repo", str(repo.path), "--date", "2026-01-28", "--lang", "zh", "--out", str(out), env=en)
    assert proc.stderr == f"已写入 {out}（2 个提交）\n"
    bad_setting = run("digest", "--repo", str(repo.path), env={"LOG_LEVEL": "loud"})
    assert bad_setting.returncode == 2 and bad_setting.stderr.startswith("错误：配置错误：LOG_LEVEL")
    missing = run("feedback", "import", str(tmp_path / "nope.jsonl"))
    assert missing.returncode == 2 and missing.stderr == f"错误：更正文件 {tmp_path / 'nope.jsonl'} 不存在。\n"


# --- Ctrl-C ------------------------------------------------------------------------------------------


class _Terminal:
    """A pseudo-terminal for the process's stderr, as a user's shell gives it: the progress line
    shows (it is only drawn on a terminal), and what it says is read as it comes."""

    def __init__(self):
        self.master, self.slave = pty.openpty()
        self.said: list[tuple[float, str]] = []
        self._thread = threading.Thread(target=self._pump, daemon=True)
        self._thread.start()

    def _pump(self) -> None:
        while True:
            try:
                chunk = os.read(self.master, 4096)
            except OSError:  # the process closed its end
                return
            if not chunk:
                return
            self.said.append((time.monotonic(), chunk.decode("utf-8", errors="replace")))

    def wait_for(self, words: str, timeout: float = 60) -> None:
        end = time.monotonic() + timeout
        while words not in "".join(text for _, text in self.said):
            assert time.monotonic() < end, f"never saw {words!r}: {self.said[-3:]}"
            time.sleep(0.02)

    def since(self, moment: float) -> str:
        self._thread.join(timeout=5)
        return "".join(text for when, text in self.said if when >= moment)


def test_ctrl_c_during_a_digest_stops_it_with_one_line(run, tmp_path):
    busy = busy_repo(tmp_path)
    terminal = _Terminal()
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("SLACK_", "FEISHU_", "OPENAI_", "GITHUB_", "LLM_", "REDIS_", "DEFAULT_", "LOG_"))
    }
    env.update({"DATA_DIR": str(tmp_path / "data"), "PYTHONPATH": str(ROOT)})  # its own embedded Redis
    proc = subprocess.Popen(
        [sys.executable, "-m", "bot", "digest", "--repo", str(busy.path), "--date", "2026-01-28"],
        stdout=subprocess.PIPE,
        stderr=terminal.slave,
        env=env,
        cwd=tmp_path,
        start_new_session=True,  # its own process group: Ctrl-C in a terminal signals all of it, Redis too
    )
    os.close(terminal.slave)
    try:
        terminal.wait_for("正在分析")  # the progress line: the digest is being analysed
        pressed = time.monotonic()
        os.killpg(proc.pid, signal.SIGINT)
        assert proc.wait(timeout=30) == 130  # a generous bound: the 1 s is not a test's figure
        said = re.sub(r"\r(\x1b\[K)?|正在分析 \d+/\d+ \[[#.]*\]", "", terminal.since(pressed))
        assert said.strip().splitlines() == ["已中断"]  # one line, in the run's language: no log line after it
        assert proc.stdout.read() == b""  # no half a digest
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.stdout.close()
        os.close(terminal.master)
    # The embedded Redis was stopped with the data saved: the next run starts and reads it.
    again = subprocess.run(
        [sys.executable, "-m", "bot", "digest", "--repo", str(busy.path), "--date", "2026-01-26"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=120,
    )
    assert again.returncode == 0 and "没有提交" in again.stderr, again.stderr
    assert embedded_servers(tmp_path / "data") == []  # and stopped again when it left


# --- the coverage line, offline -------------------------------------------------------------------


def test_offline_coverage_names_no_length_limit_and_no_build_artefacts(run, repo):
    from datetime import datetime

    from tests.shared.cli import SH

    pyc = b"\xa7\r\r\n\x00\x00\x00\x00" + bytes(range(256)) * 4  # compiled Python: binary
    repo.commit(
        "feat: the exporter grows formats",
        {
            # Each file alone is over the LLM's prompt budget (LLM_MAX_PROMPT_TOKENS, 3,000 here),
            # which no one applies when no LLM is configured: the rules read every line.
            **{
                f"src/fmt_{n}.py": "".join(f"def fmt_{n}_{i}(row):\n    return str(row)\n" for i in range(900))
                for n in range(3)
            },
            **{f"src/__pycache__/fmt_{n}.cpython-311.pyc": pyc for n in range(7)},
            "logo.png": b"\x89PNG\r\n\x1a\n" + bytes(64),
        },
        when=datetime(2026, 1, 29, 10, 0, tzinfo=SH),
    )
    for lang, limit, artefacts, png in (
        ("zh", "超出长度限制", "7 个构建产物（.pyc）", "logo.png（二进制文件）"),
        ("en", "over budget", "7 build artefacts (.pyc)", "logo.png (binary)"),
    ):
        proc = run(
            "digest",
            "--repo",
            str(repo.path),
            "--date",
            "2026-01-29",
            "--lang",
            lang,
            env={"LLM_MAX_PROMPT_TOKENS": "3000"},
        )
        assert proc.returncode == 0, proc.stderr
        (line,) = [x for x in proc.stdout.splitlines() if x.startswith("> 📁")]
        assert limit not in line and ".cpython-311" not in line and "__pycache__" not in line, line
        assert artefacts in line and png in line and "11" in line, line  # 3 of 11 read; the rest said


def test_a_leading_slash_is_answered_with_the_path_typed(run, repo):
    proc = run("digest", "--repo", str(repo.path), "--paths", "src/**", "/bot/**")
    assert proc.returncode == 2
    assert proc.stderr == "错误：“/bot/**”以 / 开头，但 glob 是相对仓库根目录的：请写 bot/**，而不是 /bot/**。\n"


def test_every_option_of_every_command_says_what_it_does(run):
    """`eval --help` listed `--format {text,json}` with no word about it."""
    import argparse

    from bot.__main__ import build_parser

    def parsers(parser, name="python -m bot"):
        yield name, parser
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for sub, child in action.choices.items():
                    yield from parsers(child, f"{name} {sub}")

    unexplained = [
        f"{name} {action.option_strings[0]}"
        for name, parser in parsers(build_parser())
        for action in parser._actions
        if action.option_strings and not action.help
    ]
    assert unexplained == []
    said = " ".join(run("eval", "--help").stdout.split())  # as the user reads it
    assert "--format {text,json} text (default): the report card to read; json: the same figures" in said


def test_feedback_import_stops_at_the_first_host_it_cannot_reach(run, repo, tmp_path):
    import json
    import socket

    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    sha = repo.git("rev-parse", "HEAD").strip()
    lines = [{"repo": "acme/widgets", "sha": sha, "level": "high"}, {"repo": "acme/widgets", "sha": "nope"}]
    lines += [{"repo": "octo/far", "sha": f"{n:07x}", "level": "low"} for n in range(20)]
    path = tmp_path / "corrections.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    proc = run(
        "feedback",
        "import",
        str(path),
        "--repo",
        f"acme/widgets={repo.path}",
        env={"GITHUB_API_URL": f"http://127.0.0.1:{port}"},
    )
    assert proc.returncode == 1
    assert proc.stderr.splitlines() == [
        f"{path} 第 2 行未导入：缺少 level（一条更正需要 repo、sha 和 level）。",
        f"错误：在 {path} 第 3 行停止：无法连接 GitHub（127.0.0.1）：重试 3 次后仍然失败。"
        "此前已导入 1 条更正；其后的 19 行未尝试。",
    ]
