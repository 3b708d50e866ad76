"""What the conversation calls on the layers below, as the shapes it calls (Protocols): the digest
builder's analyses, a commit's and a period's answers, the sources, the deliveries. The
conversation names these, not the modules that implement them, so it sits beside the digest
build instead of on top of it; the composition root (bot/runtime/app.py) hands it the real ones,
and mypy checks that they fit.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import Any, Protocol

from settings import Settings

from ..core.chat_platform import ChatPlatform, Conversation
from ..core.models import Analysis, Commit, Digest, FileChange, Window
from ..sources import CommitSource, SourceRegistry

__all__ = [
    "Analyses",
    "CommitAnswers",
    "PeriodAnswers",
    "PeriodAsker",
    "QuestionAsker",
    "SourceRegistry",
]


class Analyses(Protocol):
    """The digest builder, as questions, watches and request limits use it."""

    settings: Settings

    async def analysis(
        self, source: CommitSource, commit: Commit, lang: str, siblings: Sequence[Commit] = ()
    ) -> Analysis: ...

    async def files(self, source: CommitSource, sha: str) -> tuple[FileChange, ...]: ...

    async def uncached(self, source: CommitSource, commits: Sequence[Commit], lang: str) -> list[Commit]: ...

    async def note_reader(self, source: CommitSource, lang: str) -> None: ...

    async def corrected(self, digest: Digest) -> Digest: ...


class CommitAnswers(Protocol):
    """Answers about one commit, streamed (bot/answers/commit_qa.py)."""

    def answer(
        self, source: CommitSource, commit: Commit, question: str, lang: str, history: Sequence[Any] = ()
    ) -> AsyncIterator[str]: ...


class PeriodAnswers(Protocol):
    """Answers about a period, streamed (bot/period_questions/)."""

    def answer(
        self,
        targets: Sequence[tuple[CommitSource, str | None]],
        window: Window,
        question: str,
        lang: str,
        history: Sequence[Any] = (),
        *,
        search: str | None = None,
        trace: Any = None,
    ) -> AsyncIterator[str]: ...


class PeriodAsker(Protocol):
    async def ask(
        self, conv: Conversation, platform: ChatPlatform, question: str, cfg: Any, prefix: str = ..., usage: bool = ...
    ) -> None: ...


class QuestionAsker(Protocol):
    """The questions family, as the `ask` command hands it a question (bot/conversation/questions.py)."""

    @property
    def period(self) -> PeriodAsker: ...

    async def ask(self, conv: Conversation, platform: ChatPlatform, ref: str, question: str, cfg: Any) -> None: ...
