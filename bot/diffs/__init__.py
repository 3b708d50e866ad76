"""Token-budgeted diff selection and the coverage line: what of a commit's diff a prompt carries,
and what the reader is told about it.

Everything here is pure (strings and models in, strings and models out) so it can be table-tested
hard. The modules, by concern:

- tokens.py — the token estimate every budget is counted in (and its memo);
- hunks.py — a patch's hunks parsed, deletion-only runs shortened, clipped to fit;
- packing.py — `select_diff`: a commit's diff for the analysis, files classified, redacted and
  packed in priority order, ending with what was left out;
- relevant.py — `relevant_hunks`: the hunks an offline question asks about;
- reader.py — the coverage line, and the diff's markers in the reader's language.

Callers import from here; modules that only count tokens import bot.diffs.tokens (it imports
nothing else of the product). Nothing here imports bot.analysis, which imports this package.
"""

from __future__ import annotations

# is_binary_path: the sources read it from bot/core/file_kinds.py; kept here for older callers.
from ..core.file_kinds import is_binary_path
from ..redact import Redacted, redact, redact_secrets, redact_text
from .hunks import CLIP_MIN_TOKENS
from .packing import (
    BINARY,
    GENERATED,
    LOCKFILE,
    NO_PATCH,
    OVER_BUDGET,
    TAIL_MAX_NAMES,
    VENDORED,
    DiffSelection,
    select_diff,
    skip_reason,
)
from .reader import COVERAGE_MAX_NAMES, coverage_line, for_reader
from .relevant import relevant_hunks
from .tokens import estimate_tokens, estimate_tokens_split

__all__ = [
    "DiffSelection",
    "select_diff",
    "relevant_hunks",
    "coverage_line",
    "for_reader",
    "estimate_tokens",
    "estimate_tokens_split",
    "skip_reason",
    "is_binary_path",
    "CLIP_MIN_TOKENS",
    "TAIL_MAX_NAMES",
    "COVERAGE_MAX_NAMES",
    "LOCKFILE",
    "BINARY",
    "GENERATED",
    "VENDORED",
    "NO_PATCH",
    "OVER_BUDGET",
    "Redacted",
    "redact",
    "redact_secrets",
    "redact_text",
]
