"""Start-up work, counted rather than timed (issue 26 item 5): a digest that needs no LLM call
must not import the LLM SDK (the openai package alone was ~0.4 s of a 1.3 s start)."""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import datetime
from pathlib import Path

from tests.gitrepo import GitRepo

ROOT = Path(__file__).resolve().parent.parent


def imported_by_an_empty_day_digest(tmp_path, **env: str) -> set[str]:
    repo = GitRepo(tmp_path / "r")
    repo.commit("init", {"a.py": "x = 1\n"}, when=datetime.fromisoformat("2026-01-20T09:00:00+08:00"))
    clean = {
        k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "LLM_", "REDIS_", "SLACK_", "FEISHU_"))
    }
    clean.update({"DATA_DIR": str(tmp_path / "data"), "PYTHONPATH": str(ROOT), **env})
    proc = subprocess.run(
        [
            sys.executable,
            "-X",
            "importtime",
            "-m",
            "bot",
            "digest",
            "--repo",
            str(repo.path),
            "--date",
            "2026-01-10",
            "--lang",
            "en",
            "--out",
            os.devnull,
        ],
        capture_output=True,
        text=True,
        env=clean,
        cwd=tmp_path,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return {line.rsplit("|", 1)[-1].strip() for line in proc.stderr.splitlines() if line.startswith("import time:")}


def test_a_digest_without_an_llm_never_imports_the_llm_sdk(tmp_path):
    modules = imported_by_an_empty_day_digest(tmp_path)
    assert "bot.analysis.llm" in modules  # the module is there; its SDK is not
    assert not {m for m in modules if m == "openai" or m.startswith("openai.")}


def test_with_an_llm_configured_the_sdk_is_imported_when_the_endpoint_is_built(tmp_path):
    modules = imported_by_an_empty_day_digest(tmp_path, OPENAI_BASE_URL="http://127.0.0.1:9/v1", OPENAI_API_KEY="sk-x")
    assert "openai" in modules
