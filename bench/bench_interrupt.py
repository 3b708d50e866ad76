"""Ctrl-C during a digest (issue 33 §5): from the signal to the one line that says so, and to the
process's exit, for the CLI (`python -m bot digest`) and the terminal chat (`python -m bot run`,
`/digest …`). Prints each figure and its ratio to the 1 s target; asserts nothing.

  python bench/bench_interrupt.py              # 5 runs of each
  python bench/bench_interrupt.py --runs 10

Everything is real: a local git repository of 400 commits on one day (tests/shared/console.py's
`busy_repo`, the offline analyser reads them all), the embedded Redis under a temporary DATA_DIR,
and SIGINT sent to the process's group once the digest is being analysed — what Ctrl-C in a
terminal does (the embedded redis-server and any running git receive it too). The CLI's stderr
is a pseudo-terminal, so its progress bar shows, as for a user; the chat's stdin and stdout are
pipes.
"""

from __future__ import annotations

import argparse
import os
import pty
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.shared.console import busy_repo  # noqa: E402

TARGET = 1.0  # seconds, the bound for both figures
CLEAN = ("SLACK_", "FEISHU_", "OPENAI_", "GITHUB_", "LLM_", "REDIS_", "DEFAULT_", "LOG_", "CONSOLE_")


def _env(data: Path, repo: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(CLEAN)}
    env.update({"DATA_DIR": str(data), "DEFAULT_REPO": str(repo), "PYTHONPATH": str(ROOT), "PYTHONUNBUFFERED": "1"})
    return env


class _Reader:
    """What a file descriptor says, as it comes, with when."""

    def __init__(self, fd: int):
        self.fd, self.said = fd, []
        self.thread = threading.Thread(target=self._pump, daemon=True)
        self.thread.start()

    def _pump(self) -> None:
        while True:
            try:
                chunk = os.read(self.fd, 65536)
            except OSError:
                return
            if not chunk:
                return
            self.said.append((time.monotonic(), chunk.decode("utf-8", errors="replace")))

    def wait_for(self, words: str, timeout: float = 120) -> None:
        end = time.monotonic() + timeout
        while words not in "".join(t for _, t in self.said):
            if time.monotonic() > end:
                raise SystemExit(f"never saw {words!r}")
            time.sleep(0.005)

    def first(self, words: str, after: float) -> float | None:
        seen = ""
        for when, text in self.said:
            seen += text
            if when >= after and words in seen:
                return when
        return None


def cli_once(repo: Path, work: Path) -> tuple[float, float]:
    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "bot", "digest", "--repo", str(repo), "--date", "2026-01-28"],
        stdout=subprocess.DEVNULL,
        stderr=slave,
        env=_env(Path(tempfile.mkdtemp(dir=work)), repo),
        start_new_session=True,
    )
    os.close(slave)
    said = _Reader(master)
    said.wait_for("/400")  # the progress bar: the digest is being analysed
    pressed = time.monotonic()
    os.killpg(proc.pid, signal.SIGINT)
    proc.wait(timeout=60)
    exited = time.monotonic()
    said.thread.join(timeout=5)
    os.close(master)
    line = said.first("已中断", pressed) or said.first("interrupted", pressed)
    return (line or exited) - pressed, exited - pressed  # no line at all: counted as at the exit


def chat_once(repo: Path, work: Path) -> tuple[float, float]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "bot", "run"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=_env(Path(tempfile.mkdtemp(dir=work)), repo),
        start_new_session=True,
    )
    assert proc.stdin is not None and proc.stdout is not None
    said = _Reader(proc.stdout.fileno())
    proc.stdin.write(b"/digest 2026-01-28\n")
    proc.stdin.flush()
    said.wait_for("0/400")
    pressed = time.monotonic()
    os.killpg(proc.pid, signal.SIGINT)
    proc.wait(timeout=60)
    exited = time.monotonic()
    said.thread.join(timeout=5)
    proc.stdin.close()
    line = said.first("⏹", pressed)
    return (line or exited) - pressed, exited - pressed  # no line at all: counted as at the exit


def report(name: str, runs: list[tuple[float, float]]) -> None:
    for i, label in ((0, "the one line"), (1, "the exit")):
        values = [r[i] for r in runs]
        med, worst = statistics.median(values), max(values)
        print(
            f"{name:5} Ctrl-C → {label:12}: median {med:.2f} s, max {worst:.2f} s "
            f"(÷ target {TARGET:.0f} s: {med / TARGET:.2f}, {worst / TARGET:.2f})"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        repo = busy_repo(work).path
        report("cli", [cli_once(repo, work) for _ in range(args.runs)])
        report("chat", [chat_once(repo, work) for _ in range(args.runs)])


if __name__ == "__main__":
    main()
