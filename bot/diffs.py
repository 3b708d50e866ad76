"""Token-budgeted diff selection, secret redaction and the coverage line. (STUB: being written.)"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from .models import Coverage, FileChange


@dataclass(frozen=True)
class DiffSelection:
    text: str  # redacted, ready for the prompt
    coverage: Coverage
    tokens: int  # estimate_tokens(text)
    redactions: int = 0


def estimate_tokens(text: str) -> int:
    """A conservative local token estimate (nothing downloaded)."""
    raise NotImplementedError


def redact_secrets(text: str) -> tuple[str, int]:
    """(text with secrets replaced by [REDACTED:kind], number replaced)."""
    raise NotImplementedError


def select_diff(files: Sequence[FileChange], budget_tokens: int) -> DiffSelection:
    raise NotImplementedError


def relevant_hunks(files: Sequence[FileChange], question: str, budget_tokens: int) -> DiffSelection:
    raise NotImplementedError


def coverage_line(coverage: Coverage, lang: str) -> str:
    raise NotImplementedError
