"""Ask the history: a question that names no commit is about a period of a repository.

period.py    the period from the question's words (this week, 上周, since Monday, A..B …)
terms.py     words for the index and the query (identifier parts, Chinese pairs, glossary)
index.py     the embedded SQLite FTS5 index of analysed commits, under DATA_DIR
retrieve.py  the period's commits analysed (through the digests' cache) and indexed; BM25 retrieval
cite.py      a streamed answer's SHAs checked against its sources
answer.py    the answer: LLM with citations, or the ranked sources; the Sources list
"""

from __future__ import annotations

from pathlib import Path

from settings import Settings

from .answer import HistoryQA, Trace, sources_list
from .index import INDEX_FILE, HistoryIndex
from .period import Period, find_period, period_from_flags
from .retrieve import Retriever, Source


def build_history(builder, llm, prompts, settings: Settings) -> HistoryQA:
    index = HistoryIndex(Path(settings.data_dir) / INDEX_FILE)
    return HistoryQA(Retriever(builder, index, settings), llm, prompts, settings)


__all__ = [
    "HistoryQA",
    "HistoryIndex",
    "Period",
    "Retriever",
    "Source",
    "Trace",
    "build_history",
    "find_period",
    "period_from_flags",
    "sources_list",
]
