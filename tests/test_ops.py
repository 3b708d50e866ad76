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
SECRETS = {
    "SLACK_BOT_TOKEN": "xoxb-ops-test-0123456789",
    "SLACK_SIGNING_SECRET": "sig-ops-test-abcdef",
    "OPENAI_API_KEY": "sk-ops-test-abcdefabcdef",
    "GITHUB_TOKEN": "ghp_opstestopstestopstest1234",
    "FEISHU_APP_SECRET": "feishu-ops-test-secret",
    "METRICS_TOKEN": "metrics-ops-test-token",
}


@pytest.fixture
def run(redis_url, tmp_path):
    base = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(
            ("SLACK_", "FEISHU_", "OPENAI_", "GITHUB_", "LLM_", "REDIS_", "DEFAULT_", "LOG_", "METRICS_")
        )
    }
    base.update(
        {
            "REDIS_URL": redis_url,
            "REDIS_PREFIX": f"ops{uuid.uuid4().hex[:6]}:",
            "DATA_DIR": str(tmp_path / "data"),
            "PYTHONPATH": str(ROOT),
            "DEFAULT_LANG": "en",  # the English lines (a run speaks DEFAULT_LANG, zh by default)
        }
    )

    def invoke(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", "bot", *args],
            capture_output=True,
            text=True,
            env={**base, **(env or {})},
            cwd=tmp_path,
            timeout=120,
        )

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
    proc = run(
        "settings", env={**in_env, "REDIS_URL": "redis://bot:hunter2-ops@db.internal:6379/0", "LLM_CONCURRENCY": "3"}
    )
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


@pytest.mark.parametrize(
    "command",
    [
        ["run"],
        ["serve"],
        ["worker"],
        ["clock"],
        ["digest", "--repo", "."],
        ["ask", "--repo", ".", "--commit", "HEAD", "why?"],
        ["settings"],
    ],
)
@pytest.mark.parametrize(
    "variable,value,message",
    [
        ("LOG_LEVEL", "verbose", "LOG_LEVEL must be DEBUG, INFO, WARNING, ERROR or CRITICAL, not 'verbose'."),
        ("LOG_FORMAT", "xml", "LOG_FORMAT must be text or json, not 'xml'."),
    ],
)
def test_a_mistyped_log_setting_stops_every_command(run, command, variable, value, message):
    proc = run(*command, env={variable: value})
    assert proc.returncode == 2
    assert one_line(proc) == f"error: Configuration error: {message}"


def test_log_level_is_not_case_sensitive(run):
    proc = run("settings", env={"LOG_LEVEL": "warning", "LOG_FORMAT": "JSON"})
    assert proc.returncode == 0
    assert "LOG_LEVEL=WARNING " in proc.stdout and "LOG_FORMAT=json " in proc.stdout


# --- the processes: metrics off the public port, health answers, JSON logs -----------------------

from tests.fakes.slack_server import FakeSlack  # noqa: E402
from tests.shared.processes import Bots, _one_sub, base_env, wait_for  # noqa: E402
from tests.shared.redis_proc import free_port  # noqa: E402


def http_get(url: str, token: str | None = None) -> tuple[int, str]:
    import urllib.error
    import urllib.request

    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"} if token else {})
    try:
        with urllib.request.urlopen(request, timeout=10) as resp:
            return resp.status, resp.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()
    except OSError:
        return 0, ""  # not listening (yet)


def health(kind: str, env: dict, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "bot", "health", kind], capture_output=True, text=True, env=env, cwd=cwd, timeout=60
    )


def test_metrics_are_served_on_the_metrics_port_only(scheduled, tmp_path):
    public, private = free_port(), free_port()
    with FakeSlack() as slack:
        env = base_env(
            slack,
            scheduled["url"],
            scheduled["prefix"],
            scheduled["repo"],
            tmp_path,
            PORT=str(public),
            HOST="127.0.0.1",
            METRICS_PORT=str(private),
            METRICS_TOKEN=SECRETS["METRICS_TOKEN"],
        )
        bots = Bots(tmp_path, env)
        try:
            bots.start("serve")
            wait_for(lambda: http_get(f"http://127.0.0.1:{public}/healthz")[0] == 200, 30, "the public port")
            assert http_get(f"http://127.0.0.1:{public}/metrics")[0] == 404
            assert http_get(f"http://127.0.0.1:{public}/metrics", SECRETS["METRICS_TOKEN"])[0] == 404
            status, page = http_get(f"http://127.0.0.1:{private}/metrics", SECRETS["METRICS_TOKEN"])
            assert status == 200 and "# TYPE digestbot_jobs_total counter" in page.splitlines()
            assert http_get(f"http://127.0.0.1:{private}/metrics")[0] == 401
            assert http_get(f"http://127.0.0.1:{private}/metrics", "not-the-token")[0] == 401
            status, body = http_get(f"http://127.0.0.1:{private}/healthz")  # health needs no token
            assert status == 200 and json.loads(body) == {"ok": True, "redis": "up"}
        finally:
            bots.stop_all()
        assert bots.tracebacks() == ""


def test_the_metrics_port_cannot_be_the_public_port(run):
    proc = run(
        "serve", env={"SLACK_BOT_TOKEN": "xoxb-1", "SLACK_SIGNING_SECRET": "s", "PORT": "3999", "METRICS_PORT": "3999"}
    )
    assert proc.returncode == 2
    assert one_line(proc) == ("error: METRICS_PORT must not be PORT (3999): metrics stay off the public callback port.")


def test_worker_and_clock_answer_health_checks(scheduled, tmp_path):
    worker_port, clock_port = free_port(), free_port()
    with FakeSlack() as slack:
        env = base_env(slack, scheduled["url"], scheduled["prefix"], scheduled["repo"], tmp_path)
        bots = Bots(tmp_path, env)
        try:
            for kind in ("worker", "clock"):  # nothing runs yet: both say so, exit 1
                proc = health(kind, env, tmp_path)
                assert proc.returncode == 1 and proc.stdout == ""
                assert one_line(proc).startswith(
                    f"No {kind} has reported on this Redis (key prefix {scheduled['prefix']}) in the last "
                )
            worker = bots.start("worker", METRICS_PORT=str(worker_port))
            bots.start("clock", METRICS_PORT=str(clock_port))
            wait_for(lambda: health("worker", env, tmp_path).returncode == 0, 30, "a live worker")
            wait_for(lambda: health("clock", env, tmp_path).returncode == 0, 30, "a live clock")
            assert health("worker", env, tmp_path).stdout.startswith(f"worker alive: 1 ({worker.pid}-")
            assert "j_complete=" in health("worker", env, tmp_path).stdout
            assert "last tick" in health("clock", env, tmp_path).stdout
            status, body = http_get(f"http://127.0.0.1:{worker_port}/healthz")
            assert status == 200 and json.loads(body) == {"ok": True, "redis": "up", "worker": "alive"}
            status, body = http_get(f"http://127.0.0.1:{clock_port}/healthz")
            assert status == 200 and json.loads(body) == {"ok": True, "redis": "up", "clock": "alive"}
            assert http_get(f"http://127.0.0.1:{worker_port}/metrics")[0] == 200
            bots.kill(worker)  # its health key lapses within its report interval (JOB_LEASE=2 here)
            wait_for(lambda: health("worker", env, tmp_path).returncode == 1, 30, "the dead worker to be noticed")
        finally:
            bots.stop_all()
        assert bots.tracebacks() == ""


def test_json_logs_are_one_object_a_line_naming_the_job(scheduled, tmp_path):
    channel = "CJSON"
    with FakeSlack() as slack:
        env = base_env(
            slack,
            scheduled["url"],
            scheduled["prefix"],
            scheduled["repo"],
            tmp_path,
            SUBSCRIPTIONS_FILE=str(_one_sub(scheduled, tmp_path, channel)),
            LOG_FORMAT="json",
            LOG_LEVEL="DEBUG",
        )
        bots = Bots(tmp_path, env)
        try:
            bots.start("clock")
            bots.start("worker")
            wait_for(lambda: scheduled["redis"].keys(f"{scheduled['prefix']}ledger:*"), 30, "the delivery")
        finally:
            bots.stop_all()
    entries = []
    for log in bots.logs:
        for line in Path(log).read_text().splitlines():
            entry = json.loads(line)  # every line is one JSON object
            assert set(entry) - {"exception"} == {"time", "level", "logger", "job", "message"}, line
            entries.append(entry)
    assert any(
        e["logger"] == "bot.runtime.schedule" and e["message"].startswith("clock started") and e["job"] is None
        for e in entries
    )
    in_jobs = {e["job"] for e in entries if e["job"]}
    assert any(job.startswith(f"{scheduled['prefix']}deliver:") for job in in_jobs), in_jobs
    assert all(e["level"] in ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL") for e in entries)
    assert all(e["time"].endswith("+00:00") for e in entries)
