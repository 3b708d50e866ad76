"""The LLM path against small windows, blank answers and servers that count fewer tokens than
the client estimates (issue 17, items 2, 3 and the budget of 4), through the CLI (a real
`python -m bot` process) and a chat thread (the terminal chat), asserting what the reader gets:
the answer streamed, the line saying what of the diff the model was given, no fallback.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import uuid
from datetime import UTC, datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from bot.analysis.analyze import Analyzer
from bot.analysis.llm import LLM
from bot.core.models import Commit, FileChange
from bot.core.prompts import Prompts
from bot.runtime.app import App
from bot.runtime.services import Services
from handlers.console import ConsoleChat, ConsolePlatform
from tests.fakes.openai_server import FakeOpenAI, good_answer, measured_tokens
from tests.gitrepo import GitRepo

ROOT = Path(__file__).resolve().parent.parent
PROMPTS = Prompts(ROOT / "prompts")
SH = ZoneInfo("Asia/Shanghai")
NOW = datetime(2026, 1, 29, 1, 30, tzinfo=UTC)
KEY = "sk-test-fit-0123456789abcdef"
PROSE = "exports can be limited to recent records"  # what the fake streams as an answer
WINDOW = 6144
HUNKS = 60

# A Renovate pull request's squash message: the update table, then ~34 KB of release notes.
RENOVATE_BODY = "\n".join(
    [
        "This PR contains the following updates:",
        "",
        "| Package | Type | Update | Change |",
        "|---|---|---|---|",
        "| [resvg](https://redirect.github.com/linebender/resvg) | dependencies | minor | `0.29.0` → `0.46.0` |",
        "",
        "---",
        "",
        "### Release Notes",
        "",
        "<details>",
        "<summary>linebender/resvg (resvg)</summary>",
        "",
    ]
    + [
        f"- Support nested embedded images in case {i} ([#{900 + i}](https://redirect.github.com/linebender/"
        f"resvg/issues/{900 + i}) by [@contributor{i}](https://redirect.github.com/contributor{i}))"
        for i in range(240)
    ]
    + ["", "</details>"]
)


def render_source(changed: bool) -> str:
    lines = []
    for i in range(HUNKS * 20):
        if changed and i % 20 == 10:
            lines.append(f"    let bench_{i} = render_tree(&tree, Options::default().scale({i}.0));")
        else:
            lines.append(f"    let bench_{i} = render_tree(&tree, Options::default());")
    return "fn render_benchmarks(tree: &Tree) {\n" + "\n".join(lines) + "\n}\n"


@pytest.fixture
def repo(tmp_path):
    r = GitRepo(tmp_path / "uv")
    r.commit(
        "Add the render benchmarks",
        {
            "crates/uv-dev/Cargo.toml": '[dependencies]\nresvg = "0.29.0"\n',
            "crates/uv-dev/src/render_benchmarks.rs": render_source(False),
            "Cargo.lock": "".join(f'[[package]]\nname = "dep{i}"\nversion = "1.0.{i}"\n\n' for i in range(300)),
        },
        when=datetime(2026, 1, 27, 9, 0, tzinfo=SH),
    )
    r.commit(
        "Update Rust crate resvg to 0.46.0 (#17595)\n\n" + RENOVATE_BODY,
        {
            "crates/uv-dev/Cargo.toml": '[dependencies]\nresvg = "0.46.0"\n',
            "crates/uv-dev/src/render_benchmarks.rs": render_source(True),
            "Cargo.lock": "".join(f'[[package]]\nname = "dep{i}"\nversion = "1.1.{i}"\n\n' for i in range(300)),
        },
        when=datetime(2026, 1, 28, 9, 0, tzinfo=SH),
    )
    return r


def streamed(fake: FakeOpenAI) -> list[dict]:
    return [r for r in fake.requests if r.get("stream")]


def assert_fits(fake: FakeOpenAI, request: dict) -> None:
    assert fake.tokens(request) + request["max_tokens"] <= fake.window


def assert_fewer_hunks_said(answer: str, request: dict) -> None:
    """The model got some of the file's hunks, and the reader is told the diff was cut to fit."""
    sent = request["messages"][-1]["content"]
    assert 0 < sent.count("@@ -") < HUNKS
    note = next(line for line in answer.splitlines() if line.startswith("📄"))
    assert note.startswith(f"📄 The model's context window ({WINDOW:,} tokens) held part of the diff:")
    assert "clipped: crates/uv-dev/src/render_benchmarks.rs" in note and "Cargo.lock (lockfile)" in note


# --- the CLI --------------------------------------------------------------------------------------


@pytest.fixture
def run(redis_url, tmp_path):
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("SLACK_", "FEISHU_", "OPENAI_", "GITHUB_", "LLM_", "REDIS_", "DEFAULT_"))
    }
    env.update(
        {
            "REDIS_URL": redis_url,
            "REDIS_PREFIX": f"fit{uuid.uuid4().hex[:6]}:",
            "DATA_DIR": str(tmp_path / "data"),
            "PYTHONPATH": str(ROOT),
            "OPENAI_API_KEY": KEY,
            "LLM_TIMEOUT": "5",
            "LLM_MAX_RETRIES": "1",
        }
    )

    def invoke(*args: str, url: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", "bot", *args],
            capture_output=True,
            text=True,
            env={**env, "OPENAI_BASE_URL": url},
            cwd=tmp_path,
            timeout=180,
        )

    return invoke


def test_cli_ask_on_a_big_commit_against_a_small_window_answers(run, repo):
    """The analysis is cached (made against a big window); the endpoint now has 6,144 tokens. The
    Q&A prompt (~12,000 tokens with the release notes) is refused, rebuilt to fit — message
    clipped, fewer hunks — and answered, the reader told what of the diff the model saw."""
    sha = repo.git("rev-parse", "HEAD").strip()[:8]
    with FakeOpenAI() as fake:
        built = run("digest", "--repo", str(repo.path), "--date", "2026-01-28", "--lang", "en", url=fake.url)
        assert built.returncode == 0, built.stderr
        fake.window = WINDOW
        fake.requests.clear()
        asked = run("ask", "--repo", str(repo.path), "--commit", sha, "--lang", "en", "What could break?", url=fake.url)
        assert asked.returncode == 0, asked.stderr
        assert PROSE in asked.stdout
        assert "did not fit" not in asked.stdout and "The LLM could not answer" not in asked.stdout
        requests = streamed(fake)
        assert 1 <= fake.window_refusals <= 2 and len(requests) == fake.window_refusals + 1
        assert_fits(fake, requests[-1])
        assert_fewer_hunks_said(asked.stdout, requests[-1])
        consulted = next(line for line in asked.stdout.splitlines() if "Files consulted:" in line)
        assert "crates/uv-dev/src/render_benchmarks.rs" in consulted and "Cargo.lock" not in consulted

        # The next run knows the window (remembered per endpoint): no refused request at all.
        fake.requests.clear()
        refused = fake.window_refusals
        again = run("ask", "--repo", str(repo.path), "--commit", sha, "--lang", "en", "What could break?", url=fake.url)
        assert again.returncode == 0 and PROSE in again.stdout
        assert fake.window_refusals == refused and len(streamed(fake)) == 1


def test_cli_remembers_a_refused_format_per_endpoint(run, repo):
    """llama-cpp-python refuses json_schema with a 500: learnt once, not probed again next run."""
    repo.commit(
        "fix: handle empty rows",
        {"src/export.py": "def export(rows):\n    return rows or None\n"},
        when=datetime(2026, 1, 26, 9, 0, tzinfo=SH),
    )
    with FakeOpenAI(refuse_json_schema=True) as fake:
        first = run(
            "digest", "--repo", str(repo.path), "--date", "2026-01-28", "--lang", "en", "--format", "json", url=fake.url
        )
        assert first.returncode == 0, first.stderr
        assert fake.refused_schema == 1
        second = run(
            "digest", "--repo", str(repo.path), "--date", "2026-01-26", "--lang", "en", "--format", "json", url=fake.url
        )
        assert second.returncode == 0, second.stderr
        assert fake.refused_schema == 1  # the second process started at json_object + schema
        origins = [e["analysis"]["origin"] for e in json.loads(second.stdout)["digests"][0]["entries"]]
        assert origins == ["llm"]
        last = [r for r in fake.requests if not r.get("stream")][-1]
        assert last["response_format"]["type"] == "json_object" and "schema" in last["response_format"]


@pytest.mark.parametrize("blank_first,origin", [(2, "llm"), (3, "fallback")])
def test_cli_blank_answers_are_asked_again_twice_before_falling_back(run, repo, blank_first, origin):
    """DeepSeek blanks an answer its JSON mode could not produce: each prompt answered blank
    twice still gets its analysis (and the headline its bullets); blank three times, the fallback
    says the answers were rejected."""
    with FakeOpenAI(blank_first=blank_first) as fake:
        proc = run(
            "digest", "--repo", str(repo.path), "--date", "2026-01-28", "--lang", "en", "--format", "json", url=fake.url
        )
        digest = json.loads(proc.stdout)["digests"][0]
        assert [e["analysis"]["origin"] for e in digest["entries"]] == [origin]
        sent = [json.dumps(r["messages"]) for r in fake.requests if not r.get("stream")]
        if origin == "llm":
            assert proc.returncode == 0 and digest["notices"] == [] and digest["headline_origin"] == "llm"
            assert len(sent) == 2 * 3 and len(set(sent)) == 2  # analysis and headline, each sent thrice
        else:
            assert proc.returncode == 3
            assert "LLM failed for 1/1 commits: answers rejected; offline analysis used" in proc.stderr
            assert "blank" in digest["entries"][0]["analysis"]["note"]
            assert len(set(sent)) == 2  # no corrective retry for a blank answer: it would not help


# --- a chat thread ----------------------------------------------------------------------------------


@pytest.fixture
async def console(make_settings, repo):
    made = []

    async def build(url: str):
        settings = make_settings(
            default_repo=str(repo.path),
            default_lang="en",
            openai_base_url=url,
            openai_api_key=KEY,
            llm_timeout=5.0,
            llm_max_retries=1,
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
            shown = out.read()
            out.seek(0, io.SEEK_END)
            return shown

        return type_line

    yield build
    for services in made:
        await services.aclose()


async def test_thread_question_on_a_big_commit_against_a_small_window_answers(console, repo):
    sha = repo.git("rev-parse", "HEAD").strip()[:8]
    with FakeOpenAI() as fake:
        typed = await console(fake.url)
        assert "Daily update report (2026-01-28)" in await typed("/digest 2026-01-28")
        fake.window = WINDOW
        fake.requests.clear()
        answer = await typed(f"reply 1 what could {sha} break?")
        assert PROSE in answer and "did not fit" not in answer and "could not answer" not in answer
        requests = streamed(fake)
        assert 1 <= fake.window_refusals <= 2 and len(requests) == fake.window_refusals + 1
        assert_fits(fake, requests[-1])
        assert_fewer_hunks_said(answer, requests[-1])
        # the next question in the thread fits at once: the window is known now
        refused = fake.window_refusals
        follow_up = await typed(f"reply 1 and what about {sha} on Windows?")
        assert PROSE in follow_up and fake.window_refusals == refused


# --- the prompt budget: output reserved by need, the estimate calibrated from the first answer ------


def big_commit(n: int) -> tuple[Commit, tuple[FileChange, ...]]:
    files = tuple(
        FileChange(
            path=f"crates/uv-resolver/src/pass_{i}.rs",
            status="modified",
            additions=40,
            deletions=0,
            patch="@@ -1,0 +1,40 @@\n"
            + "\n".join(f"+    let column_{j} = parse_column(row, {j})?;  // pass {i}" for j in range(40)),
        )
        for i in range(n)
    )
    commit = Commit(
        repo="astral-sh/uv",
        sha=f"{n:040x}",
        title="perf: split the resolver passes",
        body="",
        author="Ada",
        committed_at=datetime(2026, 1, 28, 9, 0, tzinfo=UTC),
    )
    return commit, files


async def test_a_small_window_carries_more_of_the_diff_once_the_server_has_counted(make_settings):
    """llama-cpp-python counts 0.73–0.81 of the local estimate and an analysis uses a few hundred
    tokens: from the first answer on, the prompt is budgeted by the server's count and what the
    answer needs, so the same commit shows more files — and the window is never exceeded."""
    with FakeOpenAI(good_answer, window=8192, tokens=measured_tokens) as fake:
        settings = make_settings(openai_base_url=fake.url, openai_api_key=KEY, llm_context_tokens=8192)
        llm = LLM(settings)
        try:
            analyzer = Analyzer(llm, PROMPTS, settings)
            commit, files = big_commit(30)
            first = await analyzer.analyse(commit, files, "en")
            assert llm.token_ratio <= 0.81 + 1e-9
            second = await analyzer.analyse(commit, files, "en")
        finally:
            await llm.aclose()
    assert first.origin == second.origin == "llm" and fake.window_refusals == 0
    assert first.coverage.files_shown < second.coverage.files_shown < 30
    for request in fake.requests:
        assert fake.tokens(request) + request["max_tokens"] <= 8192
    # what a third of the window used to keep back is now the prompt's: the biggest prompt uses
    # most of what the reserve, the margin and the slack for texts that count higher leave (the
    # server's ratio varies 0.73-0.81 by text), and each request still asks for what an answer needs
    from bot.analysis.llm import RATIO_SLACK

    assert max(fake.tokens(r) for r in fake.requests) > (8192 - 1024 - 256) / (1 + RATIO_SLACK) * 0.73 / 0.81
    assert min(r["max_tokens"] for r in fake.requests) >= 1024
