"""The LLM path against endpoints that behave like the servers and models met in the wild
(tests/fakes/openai_server.py `Behaviour`): each behaviour once through the CLI (a real
`python -m bot` process) and once through a chat thread (the terminal chat), asserting what the
reader gets — LLM analyses or a visible, counted fallback — and what the endpoint was sent."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import uuid
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from bot.runtime.app import App
from bot.runtime.services import Services
from handlers.console import ConsoleChat, ConsolePlatform
from tests.fakes.openai_server import BEHAVIOURS, Behaviour, FakeOpenAI
from tests.gitrepo import GitRepo

ROOT = Path(__file__).resolve().parent.parent
SH = ZoneInfo("Asia/Shanghai")
NOW = datetime(2026, 1, 29, 1, 30, tzinfo=UTC)
KEY = "sk-test-endpoints-0123456789"
ANALYSED = [b for b in BEHAVIOURS if b not in ("echo", "hang")]  # the LLM must analyse every commit
PROSE = "scripts reading its output may need updating"  # what every behaviour streams as an answer


@pytest.fixture
def repo(tmp_path):
    r = GitRepo(tmp_path / "widgets")
    r.commit(
        "feat: add CSV export (#7)",
        {"src/export.py": "import csv\n\ndef export(rows):\n    return csv.writer(rows)\n"},
        when=datetime(2026, 1, 28, 9, 30, tzinfo=SH),
    )
    r.commit(
        "fix: handle empty rows in export",
        {
            "src/export.py": "import csv\n\ndef export(rows):\n    if not rows:\n"
            "        return None\n    return csv.writer(rows)\n"
        },
        when=datetime(2026, 1, 28, 18, 0, tzinfo=SH),
    )
    r.commit(
        "docs: explain the export",
        {"docs/export.md": "# Export\n\nRun `export`.\n"},
        when=datetime(2026, 1, 28, 19, 0, tzinfo=SH),
    )
    # the day's biggest commit: over a 6,144-token window with the default 4,096 output tokens
    r.commit(
        "perf: rewrite the column parser",
        {
            "src/parser.py": "".join(
                f"def parse_{i}(text):\n    return text.split(',')[{i}]  # 第 {i} 列\n" for i in range(700)
            )
        },
        when=datetime(2026, 1, 28, 20, 0, tzinfo=SH),
    )
    return r


def analysis_requests(fake: FakeOpenAI) -> list[dict]:
    return [r for r in fake.requests if not r.get("stream") and '"bullets"' not in r["messages"][0]["content"]]


def format_of(request: dict) -> str | None:
    fmt = request.get("response_format")
    if not fmt:
        return None
    return "json_object+schema" if fmt["type"] == "json_object" and "schema" in fmt else fmt["type"]


# Each refused format is sent once (the probe that learns the refusal), never again.
REFUSED = {
    "refuse_400": ("json_schema", "json_object+schema"),
    "refuse_422": ("json_schema", "json_object+schema", "json_object"),
    "llamacpp_500": ("json_schema",),
}


def assert_endpoint_saw(behaviour: str, fake: FakeOpenAI, played: Behaviour) -> None:
    requests = analysis_requests(fake)
    formats = Counter(format_of(r) for r in fake.requests if not r.get("stream"))
    for refused in REFUSED.get(behaviour, ()):
        assert formats[refused] == 1, formats
    if behaviour == "schema_only":  # its schema is kept only when asked for: always asked
        assert {format_of(r) for r in requests} == {"json_schema"}
    if behaviour == "context":
        assert played.refusals >= 1  # the window was exceeded and the server said so
    if behaviour == "hang":  # a timed-out call is sent twice at most, and the breaker stops the rest
        sent = Counter(json.dumps(r["messages"]) for r in fake.requests)
        assert max(sent.values()) <= 2
        assert len(fake.requests) <= 2 * 3 + 2


# --- the CLI --------------------------------------------------------------------------------------


@pytest.fixture
def run(redis_url, tmp_path):
    base_env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("SLACK_", "FEISHU_", "OPENAI_", "GITHUB_", "LLM_", "REDIS_", "DEFAULT_"))
    }
    base_env.update(
        {
            "REDIS_URL": redis_url,
            "REDIS_PREFIX": f"ep{uuid.uuid4().hex[:6]}:",
            "DATA_DIR": str(tmp_path / "data"),
            "PYTHONPATH": str(ROOT),
            "OPENAI_API_KEY": KEY,
            "LLM_TIMEOUT": "1",
            "LLM_MAX_RETRIES": "2",
        }
    )

    def invoke(*args: str, url: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", "bot", *args],
            capture_output=True,
            text=True,
            env={**base_env, "OPENAI_BASE_URL": url},
            cwd=tmp_path,
            timeout=180,
        )

    return invoke


@pytest.mark.parametrize("behaviour", BEHAVIOURS)
def test_cli_digest_and_ask(behaviour, run, repo):
    played = Behaviour(behaviour)
    with FakeOpenAI(played) as fake:
        proc = run(
            "digest", "--repo", str(repo.path), "--date", "2026-01-28", "--lang", "en", "--format", "json", url=fake.url
        )
        assert "Traceback" not in proc.stderr, proc.stderr
        digest = json.loads(proc.stdout)["digests"][0]
        origins = [e["analysis"]["origin"] for e in digest["entries"]]
        summaries = " ".join(e["analysis"]["summary"] for e in digest["entries"])
        if behaviour in ANALYSED:
            assert proc.returncode == 0, proc.stderr
            assert origins == ["llm"] * 4, [e["analysis"]["note"] for e in digest["entries"]]
            assert digest["notices"] == [] and "LLM failed" not in proc.stderr
            assert "draft" not in summaries  # the think block's draft JSON is not the answer
        else:
            assert proc.returncode == 3  # an LLM was configured and no commit got its analysis
            assert origins == ["fallback"] * 4
            why = "answers rejected" if behaviour == "echo" else "timed out after 1 s"
            assert f"LLM failed for 4/4 commits: {why}; offline analysis used" in proc.stderr.splitlines()
            reason = "failed the checks" if behaviour == "echo" else "timed out"
            assert digest["notices"][0].startswith("⚠️ The LLM could not analyse 4 of 4 commits")
            assert reason in digest["notices"][0]
            assert "<what changed and why>" not in summaries
        assert_endpoint_saw(behaviour, fake, played)

        if behaviour in ("think", "context", "hang"):  # `ask` on the day's biggest commit
            fake.requests.clear()
            big = repo.git("rev-parse", "HEAD").strip()
            asked = run(
                "ask",
                "--repo",
                str(repo.path),
                "--commit",
                big[:8],
                "--lang",
                "en",
                "what could this break?",
                url=fake.url,
            )
            assert asked.returncode == 0, asked.stderr
            if behaviour == "hang":
                assert "timed out" in asked.stdout and "The LLM could not answer" in asked.stdout
                assert len(fake.requests) <= 2 + 2  # the analysis and the answer, each sent twice at most
            else:
                assert PROSE in asked.stdout
                assert "The user asks" not in asked.stdout and "<thi" not in asked.stdout
                streamed = [r for r in fake.requests if r.get("stream")]
                assert streamed and streamed[-1]["max_tokens"] <= 1500


def test_cli_exit_status_3_is_documented():
    cli_page = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    assert "the exit code is 3" in cli_page


# --- a chat thread -----------------------------------------------------------------------------------


@pytest.fixture
async def chat_with(make_settings, repo):
    made = []

    async def build(url: str):
        settings = make_settings(
            default_repo=str(repo.path),
            default_lang="en",
            openai_base_url=url,
            openai_api_key=KEY,
            llm_timeout=1.0,
            llm_max_retries=2,
        )
        services = Services.build(settings, clock=lambda: NOW)
        made.append(services)
        out = io.StringIO()
        platform = ConsolePlatform(out=out, report_dir=Path(settings.data_dir) / "reports")
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

        return type_line

    yield build
    for services in made:
        await services.aclose()


@pytest.mark.parametrize("behaviour", BEHAVIOURS)
async def test_chat_digest_and_thread_question(behaviour, chat_with, repo):
    played = Behaviour(behaviour)
    with FakeOpenAI(played) as fake:
        console = await chat_with(fake.url)
        shown = await console("/digest 2026-01-28")
        assert "Daily update report (2026-01-28)" in shown
        if behaviour in ANALYSED:
            assert "The LLM analysis failed" not in shown and "could not analyse" not in shown
        else:
            reason = "failed the checks" if behaviour == "echo" else "timed out"
            notice = next(line for line in shown.splitlines() if "could not analyse" in line)
            assert "4 of 4 commits" in notice and reason in notice
            assert "The LLM analysis failed" in shown  # each commit says it, too
        big = repo.git("rev-parse", "HEAD").strip()
        answer = await console(f"reply 1 what could {big[:8]} break?")
        assert "The user asks" not in answer and "<thi" not in answer and "nk>" not in answer
        if behaviour == "hang":
            assert "The LLM could not answer" in answer and "parse_" in answer  # the relevant hunks
        else:
            assert PROSE in answer
        assert_endpoint_saw(behaviour, fake, played)


async def test_files_consulted_names_only_what_the_model_was_given(chat_with, repo):
    """A small window: the question's prompt holds part of a many-file commit; the answer's
    "Files consulted" line names exactly the files whose changes were in that prompt."""
    sha = repo.commit(
        "feat: split the exporters",
        {
            f"src/exporter_{i}.py": "".join(
                f"def export_{i}_{j}(rows):\n    return [r for r in rows if r]  # {j}\n" for j in range(120)
            )
            for i in range(6)
        },
        when=datetime(2026, 1, 28, 21, 0, tzinfo=SH),
    )
    with FakeOpenAI(Behaviour("context", window=4096)) as fake:
        console = await chat_with(fake.url)
        await console("/digest 2026-01-28")
        answer = await console(f"reply 1 what does {sha[:8]} change in the exporters?")
        prompt = fake.requests[-1]["messages"][-1]["content"]
        assert fake.requests[-1].get("stream") and PROSE in answer
    consulted = next(line for line in answer.splitlines() if "Files consulted:" in line)
    named = {f"src/exporter_{i}.py" for i in range(6) if f"src/exporter_{i}.py" in consulted}
    assert named and len(named) < 6  # the window could not hold them all
    for i in range(6):
        assert (f"def export_{i}_0(rows)" in prompt) == (f"src/exporter_{i}.py" in named), i
