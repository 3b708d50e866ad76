"""The parts of a commit's diff a question asks about, for the two places that show less than the
whole diff because of a question:

- `relevant_hunks` — the LLM prompt's diff when the whole one does not fit: hunks, best first,
  filling the token budget;
- `answer_hunks` — the offline answer (no LLM): only the blocks that match the question's terms,
  code before tests, a few dozen lines; when nothing matches, the commit's main code changes,
  said as such.

The terms and the scoring are asked.py's; both fill their budget with packing.py's packer, skip
rules, redaction and closing list, as select_diff does.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..core.models import FileChange
from .asked import Terms, Unit, path_score, question_terms, score_units
from .hunks import IMPORT_LINE, split_hunk
from .packing import OVER_BUDGET, DiffSelection, Packer, PreparedFile, assemble, prepare, tail_reserve

# An offline answer shows at most this much of the diff: enough for the code a question is about
# and a test of it, short enough to read in a terminal or a chat thread.
ANSWER_LINES = 80
ANSWER_BLOCKS = 5
BLOCK_LINES = 25  # a longer hunk (a new file is one) is cut into blocks of at most this many lines
# A block scoring under this share of the best is not shown: a stray mention of a common word is
# not what was asked about.
KEEP_SHARE = 0.3
# Why a file of the commit is not in an offline answer (coverage.reason.not_asked_about).
NOT_ASKED = "not asked about"


def relevant_hunks(files: Sequence[FileChange], question: str, budget_tokens: int) -> DiffSelection:
    """For a prompt whose whole diff does not fit: the hunks most relevant to `question`, best
    first, each under its file path and @@ header, within `budget_tokens`; files named only
    (deleted without a patch, bare renames) come last. Same skip rules, redaction and closing list
    as select_diff."""
    budget = max(0, int(budget_tokens))
    prepared, kinds = prepare(files, deleted_by_name=False)
    terms = question_terms(question)
    candidates = [
        (item, i, Unit(item.path, item.rank, hunk.header, hunk.lines))
        for item in prepared
        if item.reason is None
        for i, hunk in enumerate(item.hunks)
    ]
    score_units([unit for _, _, unit in candidates], terms)
    candidates.sort(key=lambda c: (-c[2].score, c[0].rank, c[0].index, c[1]))
    skipped = [(item.path, item.reason) for item in prepared if item.reason]

    packer = Packer(budget - tail_reserve(budget, skipped))
    for item, _, unit in candidates:
        head = f"### {item.path}\n{unit.header}"
        if not packer.add_text(item.index, "\n".join([head, *unit.lines]), hunks=1):
            packer.add_clipped(item.index, head, unit.lines, hunks=1)
    for item in _named_only(prepared, terms):
        packer.add_text(item.index, item.name_only or "")
    hunk_totals = {item.index: len(item.hunks) for item in prepared if item.hunks}
    return assemble(packer.parts, prepared, budget, kinds, hunk_totals)


@dataclass(frozen=True)
class Answered:
    """What an offline answer shows of a diff."""

    selection: DiffSelection
    matched: bool  # what is shown matches the question's terms (else: the main code changes)
    all_new: int  # when every changed file is new, how many (nothing existing is changed); else 0
    blocks: int  # how many blocks of the diff could be shown (0: no file has a patch to show)


@dataclass(eq=False)  # compared by identity: a commit can have tens of thousands
class _Block:
    item: PreparedFile
    order: tuple[int, int]  # (hunk, block) within its file
    unit: Unit
    prior: float = 0.0  # how much of the commit's own code it changes, when nothing is asked


def answer_hunks(files: Sequence[FileChange], question: str, budget_tokens: int) -> Answered:
    """For an answer without an LLM: the blocks of the diff that match the question's terms (a
    long hunk is cut into blocks where its definitions start), at most ANSWER_BLOCKS blocks and
    ANSWER_LINES lines within `budget_tokens`, those under KEEP_SHARE of the best left out; shown
    file by file, code before tests, each file's blocks in their order. When nothing matches, the
    blocks that change the most code (one a file first, code before tests) — `matched` says so.
    The closing list names the files not shown: not asked about, or asked about and over the
    limits."""
    budget = max(0, int(budget_tokens))
    prepared, kinds = prepare(files, deleted_by_name=False)
    terms = question_terms(question)
    blocks = [
        _Block(item, (h, b), Unit(item.path, item.rank, block.header, block.lines))
        for item in prepared
        if item.reason is None
        for h, hunk in enumerate(item.hunks)
        for b, block in enumerate(split_hunk(hunk, BLOCK_LINES))
    ]
    score_units([block.unit for block in blocks], terms)
    asked = [b for b in blocks if b.unit.score > 0]
    if asked:
        best = max(b.unit.score for b in asked)
        pool = sorted((b for b in asked if b.unit.score >= KEEP_SHARE * best), key=lambda b: -b.unit.score)
    else:
        pool = _main_changes(blocks)
    picked = _within_limits(pool)
    first: dict[int, int] = {}
    for place, block in enumerate(picked):
        first.setdefault(block.item.index, place)
    # File by file, code first (by kind), then by the place of the file's best block.
    chosen = sorted(picked, key=lambda b: (0 if b.item.rank <= 1 else b.item.rank, first[b.item.index], b.order))
    skipped = [(item.path, item.reason) for item in prepared if item.reason]

    packer = Packer(budget - tail_reserve(budget, skipped))
    for block in chosen:
        head = f"### {block.item.path}\n{block.unit.header}"
        if not packer.add_text(block.item.index, "\n".join([head, *block.unit.lines]), hunks=1):
            packer.add_clipped(block.item.index, head, block.unit.lines, hunks=1)
    for item in _named_only(prepared, terms):
        packer.add_text(item.index, item.name_only or "")
    totals: dict[int, int] = {}
    for block in blocks:
        totals[block.item.index] = totals.get(block.item.index, 0) + 1
    pooled = {b.item.index for b in pool} if asked else set()
    left = {item.index: OVER_BUDGET if item.index in pooled else NOT_ASKED for item in prepared}
    selection = assemble(packer.parts, prepared, budget, kinds, totals, left)
    changed = [f for f in files if f.status != "added" and (f.additions or f.deletions or f.patch)]
    return Answered(selection, bool(asked), 0 if changed or not files else len(files), len(blocks))


def _main_changes(blocks: Sequence[_Block]) -> list[_Block]:
    """When no block matches the question: the blocks that change the most code — changed lines
    that are not imports, blank or comments, a removed or rewritten line counting thrice (it is
    what existing callers relied on), a changed definition five more — the best of each file
    first, then the rest; the commit's code only, when it changes any."""
    for block in blocks:
        added = removed = 0
        defines = False
        for line in block.unit.lines:
            code = line[1:].strip()
            if line[:1] not in ("+", "-") or not code or code.startswith(("#", "//", '"""', "*")):
                continue
            if IMPORT_LINE.match(line[1:]):
                continue
            added += line[:1] == "+"
            removed += line[:1] == "-"
            defines = defines or code.startswith(("def ", "async def ", "class ", "fn ", "pub fn ", "func "))
        block.prior = added + 3 * removed + (5 if defines else 0)
    # (A commit that only changes blank lines or comments still has them shown.)
    ranked = sorted([b for b in blocks if b.prior > 0] or blocks, key=lambda b: (b.item.rank > 1, -b.prior))
    if ranked and ranked[0].item.rank <= 1:  # the commit's code, not its tests, benchmarks or docs
        ranked = [b for b in ranked if b.item.rank <= 1]
    firsts: list[_Block] = []
    seen: set[int] = set()
    for block in ranked:
        if block.item.index not in seen:
            seen.add(block.item.index)
            firsts.append(block)
    firsts.sort(key=lambda b: (b.item.rank > 1, -b.prior))
    taken = {id(b) for b in firsts}
    return firsts + [b for b in ranked if id(b) not in taken]


def _within_limits(pool: Sequence[_Block]) -> list[_Block]:
    """The first blocks of `pool` that fit ANSWER_BLOCKS and ANSWER_LINES (a block that does not
    fit is passed over for a smaller one after it; the first is taken whatever its size)."""
    chosen: list[_Block] = []
    lines = 0
    for block in pool:
        size = len(block.unit.lines) + 2  # its path and header
        if len(chosen) >= ANSWER_BLOCKS:
            break
        if chosen and lines + size > ANSWER_LINES:
            continue
        chosen.append(block)
        lines += size
    return chosen


def _named_only(prepared: Sequence[PreparedFile], terms: Terms) -> list[PreparedFile]:
    """Files with no patch to show (deleted without one, bare renames), the one named first."""
    return sorted(
        (item for item in prepared if item.reason is None and item.name_only is not None),
        key=lambda item: (-path_score(item.path, terms), item.index),
    )
