"""What a period's answer was built from: the retrieved commits it may cite (`Source`) and the
trace a caller reads after it streamed (`Trace`: the chat thread remembers the sources, the eval
counts the reads). Plain data, apart from the retrieval and the answer that fill it, so the chat
layer can read a trace without depending on how it was made."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Source:
    """One retrieved commit: what the answer may cite and the Sources list shows."""

    sha: str
    title: str
    url: str | None
    summary: str
    importance: str
    change_type: str
    committed_at: float
    score: float
    repo: str = ""  # the repository's display name (the answer names it when it draws on several)
    read: bool = False  # its analysis (the diff read in full) is in its row, not only the commit's text

    @property
    def short_sha(self) -> str:
        return self.sha[:7]


@dataclass
class Trace:
    """What an answer was built from, for the caller that wants more than the text (the eval)."""

    commits: int = 0  # in the period
    analysed: int = 0  # indexed for this question
    deepened: int = 0  # analysed for this question (at most HISTORY_MAX_ANALYSES)
    read: int = 0  # of the period's commits, those whose analysis the answer could use
    refusals: list[str] = field(default_factory=list)  # answers refused: "copy" or "language"
    sources: list[Source] = field(default_factory=list)
    cited: list[str] = field(default_factory=list)  # full SHAs the answer cites (checked)
    refused: list[str] = field(default_factory=list)  # SHA-like words that named no source
    first_piece_at: float | None = None  # time.monotonic() of the first piece yielded
