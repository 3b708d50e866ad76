"""Start-up work, counted rather than timed (issue 26 item 5, issue 33 §6): a digest that needs no
LLM call must not import the LLM SDK (the openai package alone was ~0.5 s of a 1.45 s start), nor
any other SDK: each is imported by the first call that needs it."""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import datetime
from pathlib import Path

from tests.gitrepo import GitRepo

ROOT = Path(__file__).resolve().parent.parent


# The SDKs (and scikit-learn, the learned profiles' fitting library): none before its first call.
SDKS = ("openai", "github", "slack_sdk", "slack_bolt", "lark_oapi", "arq", "sklearn")


def imported_by_an_empty_day_digest(tmp_path, day: str = "2026-01-10", **env: str) -> set[str]:
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
            day,
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


def imported_sdks(modules: set[str]) -> set[str]:
    return {m.split(".")[0] for m in modules if m.split(".")[0] in SDKS}


def test_with_an_llm_configured_no_sdk_is_imported_before_a_call_needs_it(tmp_path):
    """An empty day with an LLM configured asks the LLM nothing: the openai SDK stays out (it was
    imported when the endpoint was configured), and so does every other SDK."""
    modules = imported_by_an_empty_day_digest(tmp_path, OPENAI_BASE_URL="http://127.0.0.1:9/v1", OPENAI_API_KEY="sk-x")
    assert "bot.analysis.llm.client" in modules  # the endpoint is configured …
    assert imported_sdks(modules) == set()  # … and nothing is asked of it


def test_the_first_llm_call_imports_the_sdk(tmp_path):
    """The day with a commit needs its analysis: the SDK comes in then, and the call is made."""
    from tests.fakes.openai_server import FakeOpenAI, good_answer

    with FakeOpenAI(good_answer) as fake:
        modules = imported_by_an_empty_day_digest(
            tmp_path, day="2026-01-20", OPENAI_BASE_URL=fake.url, OPENAI_API_KEY="sk-x"
        )
        asked = len(fake.requests)
    assert "openai" in modules
    assert asked >= 1


async def test_each_long_text_of_a_commits_analysis_is_estimated_once(make_settings, monkeypatch):
    """Work counted, not timed: the prompt's texts are re-estimated at every fitting step and by
    the checks; the estimator must run once per distinct long text (it was ~20 times a commit)."""
    from bot.analysis.analyze import Analyzer
    from bot.analysis.llm import LLM
    from bot.core.models import Commit, FileChange
    from bot.core.prompts import Prompts
    from bot.diffs import tokens as diffs
    from tests.fakes.openai_server import FakeOpenAI, good_answer

    diffs._estimate_memo.cache_clear()
    seen: list[str] = []
    real = diffs._estimate

    def counted(text: str) -> int:
        if len(text) >= diffs._MEMO_MIN_CHARS:
            seen.append(text)
        return real(text)

    monkeypatch.setattr(diffs, "_estimate", counted)
    patch = "@@ -1,0 +1,300 @@\n" + "".join(f"+    value_{i} = compute({i})  # step {i}\n" for i in range(300))
    files = tuple(
        FileChange(
            path=f"src/mod_{n}.py", status="modified", additions=300, deletions=0, patch=patch.replace("step", f"s{n}")
        )
        for n in range(6)
    )
    commit = Commit(
        repo="o/r",
        sha="c" * 40,
        title="perf: split the passes",
        body="Why: faster.\n" * 40,
        author="a",
        committed_at=datetime.fromisoformat("2026-01-20T09:00:00+00:00"),
    )
    with FakeOpenAI(good_answer) as fake:
        settings = make_settings(openai_base_url=fake.url, openai_api_key="sk-x", llm_max_prompt_tokens=3000)
        llm = LLM(settings)
        try:
            result = await Analyzer(llm, Prompts(ROOT / "prompts"), settings).analyse(commit, files, "en")
        finally:
            await llm.aclose()
    assert result.origin == "llm"
    assert seen and len(seen) == len(set(seen))  # no long text estimated twice
