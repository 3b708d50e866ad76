"""Offline, rule-based analysis. (STUB: being written.)"""
from __future__ import annotations

from typing import Sequence

from ..models import Analysis, Commit, Coverage, FileChange


def analyse_offline(commit: Commit, files: Sequence[FileChange], lang: str,
                    coverage: Coverage | None = None, origin: str = "offline", note: str = "") -> Analysis:
    raise NotImplementedError
