"""What a shape rule is, and how a vendor table becomes one rule that can leave vendors out.

A rule is a pattern with the cheap tests that decide whether it runs at all (lowercase hints,
case-sensitive literals), the part of a match it replaces, a last look at that part, and the
vendors it was written for, so that bench/eval_secrets.py can measure the other detectors on a
vendor no rule was written for. The rules themselves are in shapes.py, the tables in
vendor_tables.py.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Rule:
    kind: str
    pattern: re.Pattern[str]
    hints: tuple[str, ...]  # lowercase substrings; the regex only runs when one occurs
    group: int | str = 0  # the part of the match that is replaced
    check: Callable[[str], bool] | None = None  # a last look at the replaced part
    # Case-sensitive literals, one of which every match holds: a sharper test than the lowercase
    # hints for patterns that are case-sensitive (`eaaa` is in many hashes, `EAAA` in few).
    exact: tuple[str, ...] | re.Pattern[str] = ()
    # The services the rule was written for (normalised names, aliases included); () for formats
    # and context that belong to no vendor (PEM, JWT, URL credentials, Authorization headers).
    vendors: tuple[str, ...] = ()
    # For a table's alternation: the same rule without the rows of some vendors (or None).
    rebuild: Callable[[frozenset[str]], Rule | None] | None = None


def table_rule(
    table: tuple[tuple[str, str, tuple[str, ...]], ...], before: str, after: str, without: frozenset[str] = frozenset()
) -> Rule | None:
    """One alternation of a table's rows, less those written for a vendor in `without`."""
    rows = [row for row in table if not without.intersection(row[0].split())]
    if not rows:
        return None
    hints = tuple(dict.fromkeys(h for _, _, row_hints in rows for h in row_hints))
    return Rule(
        "api-token",
        re.compile(before + "(?:" + "|".join(branch for _, branch, _ in rows) + ")" + after),
        hints,
        vendors=tuple(sorted({v for row in rows for v in row[0].split()})),
        rebuild=lambda left_out: table_rule(table, before, after, left_out),
    )


def whole_table_rule(table: tuple[tuple[str, str, tuple[str, ...]], ...], before: str, after: str) -> Rule:
    """Every row of a table in one rule (the tables are not empty)."""
    rule = table_rule(table, before, after)
    if rule is None:
        raise ValueError("a secrets table has no rows")
    return rule
