"""What an operator runs and reads: `--version`, `settings` (secrets masked), LOG_LEVEL and
LOG_FORMAT checked and honoured, /metrics kept off the public port, and a health answer from
`worker` and `clock` — all through real `python -m bot` processes on a real Redis."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
import uuid
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SECRETS = {"SLACK_BOT_TOKEN": "xoxb-ops-test-0123456789", "SLACK_SIGNING_SECRET": "sig-ops-test-abcdef",
           "OPENAI_API_KEY": "sk-ops-test-abcdefabcdef", "GITHUB_TOKEN": "ghp_opstestopstestopstest1234",
           "FEISHU_APP_SECRET": "feishu-ops-test-secret", "METRICS_TOKEN": "metrics-ops-test-token"}


@pytest.fixture
def run(redis_url, tmp_path):
    base = {k: v for k, v in os.environ.items()
            if not k.startswith(("SLACK_", "FEISHU_", "OPENAI_", "GITHUB_", "LLM_", "REDIS_", "DEFAULT_", "LOG_",
                                 "METRICS_"))}
    base.update({"REDIS_URL": redis_url, "REDIS_PREFIX": f"ops{uuid.uuid4().hex[:6]}:",
                 "DATA_DIR": str(tmp_path / "data"), "PYTHONPATH": str(ROOT)})

    def invoke(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "bot", *args], capture_output=True, text=True,
                              env={**base, **(env or {})}, cwd=tmp_path, timeout=120)

    return invoke


def one_line(proc: subprocess.CompletedProcess) -> str:
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert "Traceback" not in proc.stderr and len(lines) == 1, proc.stderr
    return lines[0]


def test_version_is_the_packaged_one(run):
    expected = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    proc = run("--version")
    assert proc.returncode == 0 and proc.stdout == f"digest-bot {expected}\n" and proc.stderr == ""


def test_settings_shows_every_value_and_its_source_but_no_secret(run, tmp_path):
    (tmp_path / ".env").write_text("LLM_MODEL=qwen-from-dotenv\nFEISHU_APP_SECRET=feishu-ops-test-secret\n")
    in_env = {k: v for k, v in SECRETS.items() if k != "FEISHU_APP_SECRET"}
    proc = run("settings", env={**in_env, "REDIS_URL": "redis://bot:hunter2-ops@db.internal:6379/0",
                                "LLM_CONCURRENCY": "3"})
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    lines = dict(line.split("=", 1) for line in proc.stdout.splitlines())
    from settings import Settings
    assert list(lines) == [name.upper() for name in Settings.model_fields]  # every setting, once
    assert len(proc.stdout.splitlines()) == len(lines)
    assert lines["LLM_CONCURRENCY"].split() == ["3", "#", "environment"]
    assert lines["LLM_MODEL"].split() == ["qwen-from-dotenv", "#", ".env"]
    assert lines["LLM_TIMEOUT"].split() == ["120.0", "#", "default"]
    assert lines["SLACK_BOT_TOKEN"].split() == ["********", "#", "environment"]
    assert lines["FEISHU_APP_SECRET"].split() == ["********", "#", ".env"]
    assert lines["REDIS_URL"].split() == ["redis://bot:********@db.internal:6379/0", "#", "environment"]
    for secret in [*SECRETS.values(), "hunter2-ops"]:
        assert secret not in proc.stdout


@pytest.mark.parametrize("command", [["run"], ["serve"], ["worker"], ["clock"], ["digest", "--repo", "."],
                                     ["ask", "--repo", ".", "--commit", "HEAD", "why?"], ["settings"]])
@pytest.mark.parametrize("variable,value,message", [
    ("LOG_LEVEL", "verbose", "LOG_LEVEL must be DEBUG, INFO, WARNING, ERROR or CRITICAL, not 'verbose'."),
    ("LOG_FORMAT", "xml", "LOG_FORMAT must be text or json, not 'xml'."),
])
def test_a_mistyped_log_setting_stops_every_command(run, command, variable, value, message):
    proc = run(*command, env={variable: value})
    assert proc.returncode == 2
    assert one_line(proc) == f"error: Configuration error: {message}"


def test_log_level_is_not_case_sensitive(run):
    proc = run("settings", env={"LOG_LEVEL": "warning", "LOG_FORMAT": "JSON"})
    assert proc.returncode == 0
    assert "LOG_LEVEL=WARNING " in proc.stdout and "LOG_FORMAT=json " in proc.stdout
