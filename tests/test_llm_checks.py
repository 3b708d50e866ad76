"""What a real small model (Qwen2.5-Coder-1.5B on llama-cpp-python, issue 17 item 4) got past the
answer checks, replayed through the fake endpoint: "None" published as a risk, the offline hint's
reason copied under a contradicting level, "high" for CI-only changes and patch-level bumps, and
a headline that silently became rule-based. Asserted on what the reader gets."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import uuid
from datetime import UTC, datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from bot.analysis.analyze import Analyzer
from bot.analysis.llm import LLM
from bot.analysis.summary import headline, offline_headline
from bot.core.models import Analysis, ChangeType, Commit, DigestEntry, FileChange, Importance
from bot.core.prompts import Prompts
from tests.fakes.openai_server import FakeOpenAI, Reply, analysis_json, good_answer, headline_json, script
from tests.gitrepo import GitRepo

ROOT = Path(__file__).resolve().parent.parent
PROMPTS = Prompts(ROOT / "prompts")
SH = ZoneInfo("Asia/Shanghai")
KEY = "sk-test-checks-0123456789abcdef"


def make_commit(title: str = "feat: add --since to the export command", **overrides) -> Commit:
    values = dict(
        repo="astral-sh/uv",
        sha="0123456789abcdef0123456789abcdef01234567",
        title=title,
        body="",
        author="Ada Lovelace",
        committed_at=datetime(2026, 1, 12, 9, 30, tzinfo=UTC),
    )
    values.update(overrides)
    return Commit(**values)


def change(path: str, patch: str) -> FileChange:
    adds = sum(1 for line in patch.splitlines() if line.startswith("+"))
    dels = sum(1 for line in patch.splitlines() if line.startswith("-"))
    return FileChange(path=path, status="modified", additions=adds, deletions=dels, patch=patch)


SOURCE = (
    change("src/export.py", "@@ -1,2 +1,3 @@\n def export(rows, since=None):\n+    rows = [r for r in rows if r]\n"),
)


@pytest.fixture
def fake():
    with FakeOpenAI() as server:
        yield server


@pytest.fixture
async def analyzer(make_settings, fake):
    settings = make_settings(openai_base_url=fake.url, openai_api_key=KEY, llm_timeout=5.0, llm_max_retries=1)
    llm = LLM(settings)
    yield Analyzer(llm, PROMPTS, settings)
    await llm.aclose()


# --- "None" is nothing ------------------------------------------------------------------------------


async def test_none_like_values_are_empty_in_every_field(analyzer, fake):
    fake.responder = lambda req: good_answer(
        req,
        importance="medium",
        impact="N/A",
        risks=["None", "n/a", "暂无"],
        recommendations=["无", "Add a test for export() with empty rows."],
        insights={"architecture": "None.", "performance": "No significant performance impact", "security": "无"},
    )
    result = await analyzer.analyse(make_commit(), SOURCE, "en")
    assert result.origin == "llm"
    assert result.risks == () and result.impact == ""
    assert result.recommendations == ("Add a test for export() with empty rows.",)
    assert (result.insights.architecture, result.insights.performance, result.insights.security) == ("", "", "")


async def test_a_none_importance_reason_is_missing_and_retried(analyzer, fake):
    fake.responder = _calls(
        script(
            lambda req: good_answer(req, importance_reason="None"),
            lambda req: good_answer(req, importance_reason="Filters empty rows out of export()."),
        )
    )
    result = await analyzer.analyse(make_commit(), SOURCE, "en")
    assert result.origin == "llm" and result.importance_reason == "Filters empty rows out of export()."
    assert '"importance_reason" is missing or empty' in fake.requests[1]["messages"][-1]["content"]


def _calls(responder):
    """A script whose replies are functions of the request."""

    def respond(request):
        reply = responder(request)
        return reply(request) if callable(reply) else reply

    return respond


def test_the_offline_headline_never_lists_none_as_a_risk():
    """Analyses cached before the rule may still hold "None": the headline's risks skip it."""
    risky = Analysis(
        change_type=ChangeType.FEATURE,
        importance=Importance.MEDIUM,
        importance_reason="New flag.",
        summary="Adds --since.",
        risks=("None", "Old configs are rejected"),
    )
    quiet = Analysis(
        change_type=ChangeType.BUGFIX,
        importance=Importance.MEDIUM,
        importance_reason="Fix.",
        summary="Fixes export.",
        risks=("None.",),
    )
    bullets = offline_headline([DigestEntry(make_commit(), risky), DigestEntry(make_commit("fix: x"), quiet)], "en")
    assert bullets[-1] == "Main risks: Old configs are rejected."


# --- the CLI: a digest with "None" risks and a headline that fails its checks ------------------------


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
            "REDIS_PREFIX": f"chk{uuid.uuid4().hex[:6]}:",
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


def test_cli_digest_publishes_no_none_risk_and_says_the_headline_fell_back(run, tmp_path):
    repo = GitRepo(tmp_path / "uv")
    repo.commit(
        "feat: add --since to export",
        {"src/export.py": "def export(rows, since=None):\n    return rows\n"},
        when=datetime(2026, 1, 12, 10, 0, tzinfo=SH),
    )
    repo.commit(
        "fix: skip empty rows in export",
        {"src/export.py": "def export(rows, since=None):\n    return [r for r in rows if r]\n"},
        when=datetime(2026, 1, 12, 11, 0, tzinfo=SH),
    )

    def responder(request):
        if '"bullets"' in request["messages"][0]["content"]:  # the headline: bullets as objects
            return json.dumps({"bullets": [{"commit": "add --since", "importance": "medium"}]})
        return good_answer(request, importance="medium", risks=["None"], recommendations=["N/A"])

    with FakeOpenAI(responder) as fake:
        proc = run("digest", "--repo", str(repo.path), "--date", "2026-01-12", "--lang", "en", url=fake.url)
    shown = proc.stdout
    assert proc.returncode == 0, proc.stderr
    assert "None" not in shown and "N/A" not in shown
    assert "⚠️ Risks" not in shown and "Main risks" not in shown
    # the headline fell back: said in the digest, marked rule-based, and on stderr
    assert "> ⚠️ The headline was written by rule, not by the LLM: its answers failed the checks." in shown
    assert "_(rule-based)_" in shown
    assert "LLM headline failed: answers rejected; rule-based headline used" in proc.stderr.splitlines()
    headline_requests = [r for r in fake.requests if '"bullets"' in r["messages"][0]["content"]]
    assert len(headline_requests) == 2  # asked, then corrected once
    assert headline_requests[0]["response_format"]["json_schema"]["name"] == "day_headline"
    assert "list of strings" in headline_requests[1]["messages"][-1]["content"]


def test_cli_zh_digest_says_the_headline_fell_back_in_chinese(run, tmp_path):
    repo = GitRepo(tmp_path / "uv")
    repo.commit(
        "feat: add --since to export",
        {"src/export.py": "def export(rows, since=None):\n    return rows\n"},
        when=datetime(2026, 1, 12, 10, 0, tzinfo=SH),
    )

    def responder(request):
        if '"bullets"' in request["messages"][0]["content"]:
            return Reply(content='{"bullets": ["<要点>"', finish_reason="length")
        return good_answer(request)

    with FakeOpenAI(responder) as fake:
        proc = run("digest", "--repo", str(repo.path), "--date", "2026-01-12", "--lang", "zh", url=fake.url)
    assert "> ⚠️ 要点由规则生成，而非 LLM：LLM 的回答未通过校验。" in proc.stdout
    assert "LLM 要点生成失败：回答未通过校验；已使用规则生成的要点" in proc.stderr  # one language per run


# --- the offline hint is a second opinion, not text to copy --------------------------------------------


def hint_reason(request: dict) -> str:
    user = next(m["content"] for m in request["messages"] if m["role"] == "user")
    hint = re.search(r"<offline_hint>\n(.*?)\n</offline_hint>", user, re.S).group(1)
    return hint.split(": ", 1)[1]  # "low (ci/build): CI-only change (1 file); no runtime code touched"


CI_BUMP = (
    change(
        ".github/workflows/sync.yml",
        "@@ -12,3 +12,3 @@\n     steps:\n"
        "-      - uses: peter-evans/create-pull-request@v7\n+      - uses: peter-evans/create-pull-request@v8\n",
    ),
)


async def test_an_importance_reason_copied_from_the_offline_hint_is_rejected(analyzer, fake):
    fake.responder = lambda req: good_answer(
        req, importance="medium", change_type="ci/build", importance_reason=hint_reason(req)
    )
    commit = make_commit("Bump peter-evans/create-pull-request from 7 to 8")
    result = await analyzer.analyse(commit, CI_BUMP, "en")
    assert hint_reason(fake.requests[0]) == "CI-only change (1 file); no runtime code touched"
    assert result.origin == "fallback" and "copies the prompt's placeholder, instructions or hint" in result.note
    assert "importance_reason" in fake.requests[1]["messages"][-1]["content"]  # the retry says which field


async def test_the_hints_reason_under_the_hints_own_level_is_accepted(analyzer, fake):
    """Issue 25: a small model copies the rules' reason; it is a true sentence when the level
    agrees (only the rules' reason under another level must not pass)."""
    fake.responder = lambda req: good_answer(
        req, importance="low", change_type="ci/build", importance_reason=hint_reason(req)
    )
    result = await analyzer.analyse(make_commit("Bump peter-evans/create-pull-request from 7 to 8"), CI_BUMP, "en")
    assert result.origin == "llm" and len(fake.requests) == 1
    assert result.importance_reason == "CI-only change (1 file); no runtime code touched"


async def test_an_own_reason_that_agrees_with_the_hint_is_accepted(analyzer, fake):
    fake.responder = lambda req: good_answer(
        req,
        importance="low",
        change_type="ci/build",
        importance_reason="Only the sync workflow's action version moves.",
    )
    result = await analyzer.analyse(make_commit("Bump peter-evans/create-pull-request from 7 to 8"), CI_BUMP, "en")
    assert result.origin == "llm" and result.importance is Importance.LOW


async def test_a_summary_may_quote_the_commit_title(analyzer, fake):
    """Only our text counts as copying: the commit's own words are the model's material."""
    title = "Bump peter-evans/create-pull-request from 7 to 8"
    fake.responder = lambda req: good_answer(req, importance="low", change_type="ci/build", summary=title + ".")
    result = await analyzer.analyse(make_commit(title), CI_BUMP, "en")
    assert result.origin == "llm" and result.summary == title + "."


# --- "high" that the files contradict -------------------------------------------------------------------

CARGO_PATCH = (
    change("Cargo.toml", '@@ -20,1 +20,1 @@\n-serde = "1.0.228"\n+serde = "1.0.229"\n'),
    change(
        "Cargo.lock",
        '@@ -900,3 +900,3 @@\n name = "serde"\n-version = "1.0.228"\n+version = "1.0.229"\n'
        ' source = "registry+https://github.com/rust-lang/crates.io-index"\n'
        '-checksum = "9a8e94ea7f378bd32cbbd37198a4a91436180c5bb472411e48b5ec2e2124ae9e"\n'
        '+checksum = "e87c8d9e27e2d4ac8f0e3c5ad4b3f1c9a0d6e2f4b8a1c3e5d7f9b2a4c6e8d0f1"\n',
    ),
)
CARGO_MINOR = (
    change("crates/uv-dev/Cargo.toml", '@@ -3,1 +3,1 @@\n-resvg = "0.29.0"\n+resvg = "0.46.0"\n'),
    change("Cargo.lock", '@@ -10,2 +10,2 @@\n name = "resvg"\n-version = "0.29.0"\n+version = "0.46.0"\n'),
)
TOOLING = (change("scripts/benchmark.py", "@@ -1,1 +1,2 @@\n import timeit\n+RUNS = 20\n"),)


@pytest.mark.parametrize(
    "files,title,said",
    [
        (CI_BUMP, "Bump peter-evans/create-pull-request from 7 to 8", "changes only CI configuration"),
        (
            (change(".github/workflows/ci.yml", "@@ -1,1 +1,2 @@\n jobs:\n+  lint: {runs-on: ubuntu-latest}\n"),)
            + (change("docs/ci.md", "@@ -1 +1,2 @@\n # CI\n+Lint runs first.\n"),),
            "ci: run the linter first",
            "changes only documentation and CI configuration",
        ),
        (TOOLING, "bench: more runs", "changes only tooling"),
        (CARGO_PATCH, "Update Rust crate serde to 1.0.229", "bumps dependencies by patch releases"),
    ],
    ids=["ci-only", "ci-and-docs", "tooling-only", "patch-level-bump"],
)
async def test_high_for_what_cannot_be_high_gets_the_corrective_retry_then_the_fallback(
    analyzer, fake, files, title, said
):
    fake.responder = lambda req: good_answer(
        req, importance="high", change_type="ci/build", importance_reason="The workflow update affects every release."
    )
    result = await analyzer.analyse(make_commit(title), files, "en")
    assert result.origin == "fallback" and said in result.note
    assert result.importance is not Importance.HIGH
    assert said in fake.requests[1]["messages"][-1]["content"]  # the retry told the model why


async def test_high_then_a_lower_level_on_the_retry_is_accepted(analyzer, fake):
    fake.responder = script(good_answer_for(importance="high"), good_answer_for(importance="low"))
    result = await analyzer.analyse(make_commit("Bump create-pull-request from 7 to 8"), CI_BUMP, "en")
    assert result.origin == "llm" and result.importance is Importance.LOW


def good_answer_for(**overrides):
    return analysis_json(
        summary="Moves the sync workflow to create-pull-request v8.",
        importance_reason="The sync workflow's action changes major version.",
        **overrides,
    )


@pytest.mark.parametrize(
    "files,change_type",
    [
        (CARGO_MINOR, "dependencies"),  # 0.29 → 0.46: not a patch release
        (CI_BUMP, "security"),  # a security fix in a workflow may be high
        (SOURCE + CARGO_PATCH, "dependencies"),  # source changes too
    ],
    ids=["minor-bump", "ci-security", "with-source"],
)
async def test_high_stays_when_the_files_allow_it(analyzer, fake, files, change_type):
    fake.responder = lambda req: good_answer(
        req, importance="high", change_type=change_type, importance_reason="Renders differ after the upgrade."
    )
    result = await analyzer.analyse(make_commit("Update resvg and export"), files, "en")
    assert result.origin == "llm" and result.importance is Importance.HIGH


# --- the headline down the structured-output ladder ---------------------------------------------------

DAY = [
    DigestEntry(
        make_commit(),
        Analysis(
            change_type=ChangeType.FEATURE,
            importance=Importance.MEDIUM,
            importance_reason="New option.",
            summary="Adds --since.",
        ),
    )
]


async def test_the_headline_steps_down_a_refused_json_schema_like_analyses(make_settings):
    with FakeOpenAI(refuse_json_schema=True) as fake:
        llm = LLM(make_settings(openai_base_url=fake.url, openai_api_key=KEY, llm_max_retries=3))
        try:
            bullets, origin, failed = await headline(llm, PROMPTS, DAY, "en")
        finally:
            await llm.aclose()
    assert (bullets, origin, failed) == (json.loads(headline_json())["bullets"], "llm", "")
    formats = [r["response_format"] for r in fake.requests]
    assert [f["type"] for f in formats] == ["json_schema", "json_object"]  # a 500 naming the format: no outage
    assert formats[1]["schema"]["properties"]["bullets"] == {"type": "array", "items": {"type": "string"}}
