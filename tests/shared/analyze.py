"""Commit analysis through the real openai SDK and an HTTP fake: commits, patches and an Analyzer factory."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from bot.analysis.analyze import Analyzer
from bot.analysis.llm import LLM
from bot.core.models import Commit, FileChange
from bot.core.prompts import Prompts

KEY = "sk-test-8c1d2e3f4a5b6c7d8e9f"
PROMPTS = Prompts(Path(__file__).resolve().parent.parent / "prompts")


def make_commit(**overrides) -> Commit:
    values = dict(
        repo="acme/widgets",
        sha="0123456789abcdef0123456789abcdef01234567",
        title="feat: add --since to the export command",
        body="Exports can now start at a given date.",
        author="Ada Lovelace",
        committed_at=datetime(2026, 1, 28, 9, 30, tzinfo=UTC),
    )
    values.update(overrides)
    return Commit(**values)


def patch(lines: int, word: str = "value") -> str:
    return "@@ -1,0 +1,%d @@\n" % lines + "\n".join(f"+{word}_{i} = compute({i})" for i in range(lines))


FILES = (
    FileChange(path="src/export.py", status="modified", additions=12, deletions=2, patch=patch(12)),
    FileChange(path="tests/test_export.py", status="added", additions=8, deletions=0, patch=patch(8, "check")),
)


def user_message(request: dict) -> str:
    return next(m["content"] for m in request["messages"] if m["role"] == "user")


@pytest.fixture
async def make_analyzer(make_settings, fake):
    made: list[LLM] = []

    def build(**overrides) -> Analyzer:
        values = {
            "openai_base_url": fake.url,
            "openai_api_key": KEY,
            "llm_model": "test-model",
            "llm_timeout": 5.0,
            "llm_max_retries": 1,
            **overrides,
        }
        settings = make_settings(**values)
        llm = LLM(settings)
        made.append(llm)
        return Analyzer(llm, PROMPTS, settings)

    yield build
    for llm in made:
        await llm.aclose()
