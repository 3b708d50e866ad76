"""The history commands as a real `python -m bot` process."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def history_run(redis_url, tmp_path):
    """`run("history", ...)` for the history tests: like conftest's `run`, but with `extra=` for the
    environment and its own key prefix (test_history_cli's `run`)."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("SLACK_", "FEISHU_", "OPENAI_", "GITHUB_", "LLM_", "REDIS_", "DEFAULT_"))
    }
    env.update(
        {
            "REDIS_URL": redis_url,
            "REDIS_PREFIX": f"hist{uuid.uuid4().hex[:6]}:",
            "DATA_DIR": str(tmp_path / "data"),
            "PYTHONPATH": str(ROOT),
        }
    )

    def invoke(*args: str, extra: dict | None = None) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", "bot", *args],
            capture_output=True,
            text=True,
            env={**env, **(extra or {})},
            cwd=tmp_path,
            timeout=120,
        )

    return invoke


def one_clear_line(proc: subprocess.CompletedProcess) -> str:
    assert "Traceback" not in proc.stderr, proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, proc.stderr
    return lines[0]


def sources(stdout: str) -> list[str]:
    """The short SHAs of the Sources list, in order."""
    part = re.split(r"\*\*(?:Sources|来源)\*\*", stdout)[-1]
    return re.findall(r"^• `([0-9a-f]{7})`", part, re.M)
