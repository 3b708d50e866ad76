"""How a period's retrieved commits are ranked and cut, and the retrieval as the answer calls it:
shared by the retriever (bot/period_questions/retrieve.py) and the answer (period_answer.py), which names
this shape rather than the retriever's module."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from ..core.models import Commit, Window
from .answer_trace import Source

TOP_K = 10  # commits retrieved for an answer (and for recall@10)
# A hit scoring under a share of the best one is left out: BM25 gives a commit that shares only a
# common word a small positive score. The model is given more (it judges relevance and cites only
# what answers; recall matters), the offline list less (it is the answer; precision matters). Both
# chosen on the tuning half of the labelled questions (bench/eval_history.py --tune: the list's
# cutoff has the best F1 there; the model's keeps nine in ten of the labelled commits).
CONTEXT_CUTOFF = 0.35
LIST_CUTOFF = 0.7


class Retrieval(Protocol):
    async def commits(self, source: Any, window: Window, branch: str | None = None) -> list[Commit]: ...

    async def prepare(self, source: Any, commits: Sequence[Commit], lang: str, progress: Any = None) -> int: ...

    async def unread(self, source: Any, shas: Sequence[str], lang: str) -> list[str]: ...

    async def read_count(self, source: Any, commits: Sequence[Commit], lang: str) -> int: ...

    async def deepen(self, source: Any, commits: Sequence[Commit], lang: str) -> int: ...

    async def search(
        self,
        source: Any,
        commits: Sequence[Commit],
        window: Window,
        lang: str,
        query: Any,
        limit: int = ...,
        cutoff: float = ...,
    ) -> list[Source]: ...


def best_of(found: Sequence[Source], limit: int, cutoff: float) -> list[Source]:
    """The best `limit` by score (of one repository's search or several merged), none under
    `cutoff` × the best score."""
    ranked = sorted(found, key=lambda s: -s.score)[:limit]
    if ranked and cutoff > 0:
        ranked = [s for s in ranked if s.score >= cutoff * ranked[0].score]
    return ranked


def by_importance(found: Sequence[Source], limit: int) -> list[Source]:
    """For a question that names no topic: high first, then the most recent."""
    rank = {"high": 0, "medium": 1, "low": 2}
    return sorted(found, key=lambda s: (rank.get(s.importance, 1), -s.committed_at))[:limit]
