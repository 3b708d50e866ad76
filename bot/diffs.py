"""Token-budgeted diff selection, secret redaction and the coverage line.

Everything here is pure (strings and models in, strings and models out) so it can be table-tested
hard. The rules follow PR-Agent's large-diff strategy (see shared/notes/anchors.md): lockfiles,
binaries, generated and vendored files are never sent; deleted files are named only; when the diff
does not fit, deletion-only hunks go first, then whole patches are added greedily in priority
order, an oversized patch is clipped, and the text always ends by naming what was left out.
"""

from __future__ import annotations

import functools
import math
import posixpath
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache

# is_binary_path is also what the sources import from here.
from .analysis.offline.paths import FileKind, classify_path, generated_origin, is_binary_path, is_lockfile
from .core.models import Coverage, FileChange
from .i18n import catalogue, text
from .redact import Redacted, redact, redact_secrets, redact_text  # noqa: F401  (re-exported)


@dataclass(frozen=True)
class DiffSelection:
    text: str  # redacted, ready for the prompt
    coverage: Coverage
    tokens: int  # estimate_tokens(text)
    redactions: int = 0
    kinds: tuple[tuple[str, int], ...] = ()  # (kind, how many) of the redactions


# Reasons a file is not shown, as they appear in Coverage.omitted and the coverage line.
LOCKFILE = "lockfile"
BINARY = "binary"
GENERATED = "generated"
VENDORED = "vendored"
NO_PATCH = "no patch"
OVER_BUDGET = "over budget"


# =============================================================================================
# Token estimate
# =============================================================================================
#
# Why this shape: BPE tokenizers (cl100k/o200k for OpenAI, Qwen2/3's, DeepSeek's) first split
# text into "pre-tokens" with a regex (letter runs, digit runs, punctuation runs, whitespace runs),
# then merge bytes inside each pre-token. So we count the same pieces, each at the most a piece
# of that shape costs in any of those vocabularies:
#   * letters: one token per word-ish piece — a lowercase run of up to 5 letters, optionally led by
#     one capital ("get|User|Name"), or up to 4 capitals. Common English words and identifiers are
#     single tokens, so this over-counts them a little, but never under-counts long words.
#   * digits: one token EACH — Qwen splits numbers into single digits (cl100k groups 3).
#   * ASCII punctuation: one token per 2 characters (runs like `):`, `->`, `==` merge).
#   * whitespace: a single space is free (it is glued to the next word); runs of spaces cost one
#     per 64 (vocabularies hold runs up to 80-128), tabs one per 8 (DeepSeek: 8/token), newlines
#     one per 8, every \r one (DeepSeek tokenizes CRLF poorly).  A space before a digit or a
#     non-ASCII character is its own token. Control characters: one each.
#   * CJK: 1.25 per character. Qwen/DeepSeek/o200k need ~0.55-0.75 per character of Chinese
#     prose, but cl100k (GPT-3.5/4) needs 1.0-1.15, so we take the safe side.
#     Other BMP characters: 0.6 for 2-byte UTF-8 (accents, Cyrillic, Greek), 1.5 for 3-byte
#     (symbols, box drawing); astral characters (emoji) 3.
#   * random-looking strings (base64, hashes, keys) defeat BPE merges (~1.3 characters per token
#     with cl100k): a 16+ character run mixing cases and digits with frequent class changes, or a
#     hex run, costs one token per digit and 0.8 per other character.
# Calibrated (dev-time only; nothing is downloaded at run time) against the real cl100k_base,
# o200k_base, Qwen3, Qwen3.6 and DeepSeek-V4 vocabularies on 420 samples: real Python, C, Go and
# JS source, unified diffs between CPython 3.12 and 3.13, Node.js docs, licences, Chinese prose,
# code with Chinese docstrings, whitespace-heavy and CRLF diffs, base64, hex, numbers, emoji.
# Against the MOST expensive of those tokenizers for each sample, the estimate is 1.09-1.45x for
# code, diffs and prose (mean ~1.25x), 1.1-1.3x for Chinese prose, 1.0-1.6x for whitespace runs,
# 1.0-1.1x for numbers/hex/base64. Known under-estimates: rare/traditional Chinese characters
# that cl100k spells byte by byte (~2 tokens each) and long runs of random punctuation.

_CJK_CLASS = (
    "\u2e80-\u2fdf\u3000-\u303f\u3040-\u30ff\u3100-\u31ff\u3400-\u4dbf\u4e00-\u9fff"
    "\uac00-\ud7af\uf900-\ufaff\ufe30-\ufe4f\uff00-\uffef"
)
_CJK_RUN = re.compile(f"[{_CJK_CLASS}]+")
_ASTRAL_RUN = re.compile("[\U00010000-\U0010ffff]+")
_TWO_BYTE_RUN = re.compile("[\u0080-\u07ff]+")
_NON_ASCII_RUN = re.compile("[^\x00-\x7f]+")
_DIGIT_RUN = re.compile("[0-9]+")
# Pieces that cost one token each; their character classes are disjoint, so one scan finds them
# all: a digit, a letter piece, a punctuation pair, a whitespace run, a control character.
_ONE_TOKEN_PIECE = re.compile(
    r"[0-9]"
    r"|[A-Z]?[a-z]{1,5}|[A-Z]{1,4}"
    r"|[!-/:-@\[-`{-~]{1,2}"
    r"| {2,64}|\t{1,8}|\n{1,8}|[\r\f\v]"
    r"|[\x00-\x08\x0e-\x1f\x7f]"
)
_LONE_SPACE_PIECE = re.compile(r"[ \t](?:[0-9]|[^\x00-\x7f])")
_BLOB = re.compile(r"[A-Za-z0-9+/_\-]{16,}")
_CHAR_CLASS_RUN = re.compile(r"[a-z]+|[A-Z]+|[0-9]+|[^A-Za-z0-9]+")
_HEX_RUN = re.compile(r"[0-9a-f]+|[0-9A-F]+")

_CJK_COST = 1.25
_TWO_BYTE_COST = 0.6
_THREE_BYTE_COST = 1.5
_ASTRAL_COST = 3.0
_RANDOM_CHAR_COST = 0.8


def estimate_tokens(text: str) -> int:
    """A conservative local token estimate (nothing downloaded); see the comment above."""
    if not text:
        return 0
    if len(text) < _MEMO_MIN_CHARS:
        return _estimate(text)
    return _estimate_memo(text)


# A prompt's texts are estimated again at each fitting step, and the meaning checks and the
# window's calibration estimate them once more (~20 estimates of the same texts a commit): the
# longer ones are remembered (a bounded cache: at most _MEMO_SIZE texts, each under the prompt
# budget's few tens of KB), the short ones cost less to estimate than to look up.
_MEMO_MIN_CHARS = 256
_MEMO_SIZE = 512


@functools.lru_cache(maxsize=_MEMO_SIZE)
def _estimate_memo(text: str) -> int:
    return _estimate(text)


def _estimate(text: str) -> int:
    random_cost, text = _take_random_blobs(text)
    total = random_cost + len(_ONE_TOKEN_PIECE.findall(text)) + len(_LONE_SPACE_PIECE.findall(text))
    if not text.isascii():
        total += _non_ascii_cost(text)
    return max(1, math.ceil(total))  # even a lone space is a token


def estimate_tokens_split(text: str) -> tuple[float, float]:
    """(the estimate's share for Chinese/Japanese/Korean characters, the rest's): tokenizers
    differ from the estimate differently for the two (bot/analysis/tokens_ratio.py)."""
    total = float(estimate_tokens(text))
    if not text or text.isascii():
        return 0.0, total
    cjk = min(total, _CJK_COST * _count_chars(_CJK_RUN, text))
    return cjk, total - cjk


def _surely_over(text: str, allowance: int) -> bool:
    """True when text is certainly estimated above `allowance`, without estimating it: every
    character but a lone space costs at least 1/65 token (64-space runs are the cheapest)."""
    return len(text) > 66 * (max(allowance, 0) + 1)


def _count_chars(run: re.Pattern[str], text: str) -> int:
    return sum(map(len, run.findall(text)))


def _non_ascii_cost(text: str) -> float:
    cjk = _count_chars(_CJK_RUN, text)
    astral = _count_chars(_ASTRAL_RUN, text)
    two_byte = _count_chars(_TWO_BYTE_RUN, text)
    three_byte = _count_chars(_NON_ASCII_RUN, text) - cjk - astral - two_byte
    return _CJK_COST * cjk + _ASTRAL_COST * astral + _TWO_BYTE_COST * two_byte + _THREE_BYTE_COST * three_byte


def _take_random_blobs(text: str) -> tuple[float, str]:
    """(cost of the random-looking runs, text with each such run replaced by one space)."""
    cost = 0.0

    def replace(match: re.Match[str]) -> str:
        nonlocal cost
        run = match.group(0)
        if not _looks_random(run):
            return run
        digits = _count_chars(_DIGIT_RUN, run)
        cost += digits + _RANDOM_CHAR_COST * (len(run) - digits)
        return " "

    rest = _BLOB.sub(replace, text)
    return cost, rest


def _looks_random(run: str) -> bool:
    has_digit = any(c.isdigit() for c in run)
    has_upper = any("A" <= c <= "Z" for c in run)
    has_lower = any("a" <= c <= "z" for c in run)
    if has_digit and (has_upper or has_lower) and _HEX_RUN.fullmatch(run):
        return True  # a hash
    if not (has_upper and has_lower):
        return False
    # camelCase identifiers change character class every ~3 characters; base64 every ~1.5.
    class_changes = len(_CHAR_CLASS_RUN.findall(run)) / len(run)
    return class_changes >= (0.4 if has_digit else 0.5)


# =============================================================================================
# File classification
# =============================================================================================

_CERTAIN_GENERATED_MARK = re.compile(r"@generated\b|(?i:code generated\b.*\bdo not edit)")
_TOP_GENERATED_MARK = re.compile(
    r"(?i)do not edit|auto-?generated|\bgenerated (?:by|from|with|automatically)\b"
    r"|this (?:file|code) (?:is|was|has been) (?:\w+ )?generated"
)
_HUNK_HEADER = re.compile(r"@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@")

# What kind of file a path names comes from the analyser's one classifier (offline/paths.py).
# Prompt order: shipped source first, then what builds and configures it, then tooling that does
# not ship, then tests, then docs (examples and notebooks included).
_RANK = {
    FileKind.SOURCE: 0,
    FileKind.BUILD: 1,
    FileKind.DEPENDENCY: 1,
    FileKind.CONFIG: 1,
    FileKind.CI: 1,
    FileKind.LOCKFILE: 1,
    FileKind.GENERATED: 1,
    FileKind.OTHER: 1,
    FileKind.TOOLING: 2,
    FileKind.TEST: 3,
    FileKind.DOCS: 4,
}


def skip_reason(file: FileChange) -> str | None:
    """Why this file's content must never reach the prompt ("lockfile", "binary", …), or None."""
    if is_lockfile(file.path):
        return LOCKFILE
    if file.binary or (file.patch or "").startswith(("Binary files ", "GIT binary patch")):
        return BINARY
    if file.patch is None and is_binary_path(file.path):
        return BINARY
    origin = generated_origin(file.path)
    if origin:
        return VENDORED if origin == "vendored" else GENERATED
    if file.patch and _patch_says_generated(file.patch):
        return GENERATED
    return None


def _patch_says_generated(patch: str) -> bool:
    """A generator's banner in the first lines the patch shows. Go's "Code generated … DO NOT
    EDIT." and "@generated" count anywhere; looser wording ("DO NOT EDIT", "auto-generated",
    "generated by") only when the patch starts at the top of the file, since hand-written files
    say such things in the middle too."""
    head = patch[:2000].split("\n")[:7]
    content = "\n".join(line[1:] for line in head if not line.startswith("@@"))
    if _CERTAIN_GENERATED_MARK.search(content):
        return True
    header = _HUNK_HEADER.match(head[0]) if head else None
    at_top = header is not None and int(header.group(2)) <= 3
    return at_top and _TOP_GENERATED_MARK.search(content) is not None


# =============================================================================================
# Patch structure
# =============================================================================================


@dataclass
class _Hunk:
    header: str  # the "@@ -a,b +c,d @@ …" line
    lines: list[str]

    @property
    def added(self) -> int:
        return sum(1 for line in self.lines if line.startswith("+"))

    @property
    def deleted(self) -> int:
        return sum(1 for line in self.lines if line.startswith("-"))

    @property
    def deletion_only(self) -> bool:
        return self.deleted > 0 and self.added == 0

    def text(self) -> str:
        return "\n".join([self.header, *self.lines])


def _parse_patch(patch: str) -> tuple[list[str], list[_Hunk]]:
    """(lines before the first hunk, hunks)."""
    prelude: list[str] = []
    hunks: list[_Hunk] = []
    for line in patch.split("\n"):
        if line.startswith("@@"):
            hunks.append(_Hunk(line, []))
        elif hunks:
            hunks[-1].lines.append(line)
        else:
            prelude.append(line)
    if hunks and hunks[-1].lines and hunks[-1].lines[-1] == "":
        hunks[-1].lines.pop()  # the patch's trailing newline
    return prelude, hunks


def _without_deletion_only_hunks(hunks: Sequence[_Hunk]) -> list[str]:
    """The hunks' lines, each run of deletion-only hunks replaced by a one-line marker."""
    out: list[str] = []
    run_hunks = run_lines = 0
    for hunk in [*hunks, None]:
        if hunk is not None and hunk.deletion_only:
            run_hunks += 1
            run_lines += hunk.deleted
            continue
        if run_hunks:
            plural = "s" if run_hunks > 1 else ""
            out.append(f"[… {run_hunks} deletion-only hunk{plural} omitted (−{run_lines} lines)]")
            run_hunks = run_lines = 0
        if hunk is not None:
            out.extend([hunk.header, *hunk.lines])
    return out


# =============================================================================================
# Budgeting
# =============================================================================================

# A clipped patch must keep at least this much (a few dozen diff lines) to be worth showing.
CLIP_MIN_TOKENS = 80
# The closing "Not shown" list names at most this many files, then "… and N more files".
TAIL_MAX_NAMES = 40


@dataclass
class _File:
    """One changed file, classified and redacted."""

    index: int  # position in the commit's file list
    file: FileChange
    reason: str | None  # why it is never shown, or None
    rank: int  # _RANK: source first, docs last
    header: str = ""  # "### path (modified, +3 −1)" above the patch
    name_only: str | None = None  # the whole entry for deleted files and bare renames
    prelude: list[str] = field(default_factory=list)  # patch lines before the first hunk
    hunks: list[_Hunk] = field(default_factory=list)

    @property
    def path(self) -> str:
        return self.file.path

    def body_lines(self, drop_deletions: bool) -> list[str]:
        if drop_deletions:
            return [*self.prelude, *_without_deletion_only_hunks(self.hunks)]
        return [*self.prelude, *(line for hunk in self.hunks for line in (hunk.header, *hunk.lines))]

    def text(self, drop_deletions: bool) -> str:
        if self.name_only is not None:
            return self.name_only
        return "\n".join([self.header, *self.body_lines(drop_deletions)])


@dataclass
class _Part:
    """A block of the selection's text, belonging to one file."""

    file_index: int
    text: str
    cost: int  # estimate_tokens(text)
    clipped: bool = False
    hunks: int = 0  # how many of the file's hunks it carries (relevant_hunks)


def _prepare(files: Sequence[FileChange], deleted_by_name: bool) -> tuple[list[_File], Counter]:
    """Classify and redact every file (patch and names); (files, redactions by kind)."""
    prepared: list[_File] = []
    kinds: Counter = Counter()
    for index, f in enumerate(files):
        prepared.append(_prepare_one(index, f, deleted_by_name, kinds))
    return prepared, kinds


def _prepare_one(index: int, f: FileChange, deleted_by_name: bool, kinds: Counter) -> _File:
    rank = _RANK[classify_path(f.path)]
    if f.status == "removed" and (deleted_by_name or not f.patch):
        name = _redacted_name(f.path, kinds)
        return _File(index, f, None, rank, name_only=f"deleted: {name} (−{_deleted_lines(f)} lines)")
    if f.status == "renamed" and f.changes == 0 and not f.patch:
        return _File(index, f, None, rank, name_only=_bare_entry(f, kinds))
    reason = skip_reason(f) or (NO_PATCH if f.patch is None else None)
    if reason is not None:
        return _File(index, f, reason, rank)
    if not (f.patch or "").strip():
        return _File(index, f, None, rank, name_only=_bare_entry(f, kinds))
    patch = _redacted_patch(f.patch or "")
    kinds.update(patch.kinds)
    prelude, hunks = _parse_patch(patch.text)
    return _File(index, f, None, rank, _file_header(f, kinds), None, prelude, hunks)


@lru_cache(maxsize=512)
def _redacted_patch(patch: str) -> Redacted:
    """A prompt is fitted to its budget by selecting the same diff several times; redact each
    patch once. (The result is only read.)"""
    return redact(patch)


def _redacted_name(path: str, kinds: Counter) -> str:
    """A file name as the prompt shows it: a secret in a name is withheld like one in a patch."""
    result = redact(path)
    kinds.update(result.kinds)
    return result.text


def _deleted_lines(f: FileChange) -> int:
    if f.deletions or not f.patch:
        return f.deletions
    return sum(1 for line in f.patch.split("\n") if line.startswith("-"))


def _file_header(f: FileChange, kinds: Counter) -> str:
    path = _redacted_name(f.path, kinds)
    status = (
        f"renamed from {_redacted_name(f.previous_path, kinds)}"
        if f.previous_path and f.status == "renamed"
        else f.status
    )
    return f"### {path} ({status}, +{f.additions} −{f.deletions})"


_NO_CONTENT = "(no content changes)"


def _bare_entry(f: FileChange, kinds: Counter) -> str:
    path = _redacted_name(f.path, kinds)
    if f.status == "renamed" and f.previous_path:
        return f"renamed: {_redacted_name(f.previous_path, kinds)} → {path} {_NO_CONTENT}"
    return f"{f.status}: {path} {_NO_CONTENT}"


class _Packer:
    """Adds parts while their summed estimate (plus one newline between parts) stays within
    `limit`. The estimate is subadditive over newline-joined pieces (no piece it counts can span a
    newline, and ceil(a+b) <= ceil(a)+ceil(b)), so the sum bounds the joined text's estimate."""

    def __init__(self, limit: int):
        self.limit = limit
        self.parts: list[_Part] = []
        self.used = 0

    @property
    def room(self) -> int:
        return self.limit - self.used - (1 if self.parts else 0)

    def add(self, part: _Part) -> bool:
        if part.cost > self.room:
            return False
        self.used += part.cost + (1 if self.parts else 0)
        self.parts.append(part)
        return True

    def add_text(self, file_index: int, text: str, hunks: int = 0) -> bool:
        if self.room <= 0 or _surely_over(text, self.room):
            return False
        return self.add(_Part(file_index, text, estimate_tokens(text), hunks=hunks))

    def add_clipped(self, file_index: int, head: str, lines: Sequence[str], hunks: int = 0) -> bool:
        if self.room < CLIP_MIN_TOKENS:
            return False
        clipped = _clip_lines(head, lines, self.room)
        return clipped is not None and self.add(_Part(file_index, clipped[0], clipped[1], clipped=True, hunks=hunks))


def _clip_lines(head: str, lines: Sequence[str], allowance: int) -> tuple[str, int] | None:
    """(text, cost): head + the longest prefix of `lines` that fits + a "clipped" marker, within
    `allowance`. Cuts between lines; only an enormous line that leaves most of the room unused is
    cut inside. None when less than CLIP_MIN_TOKENS of content would fit."""
    room = allowance - estimate_tokens(head) - 1 - _marker_cost(len(lines))
    if room < CLIP_MIN_TOKENS:
        return None
    kept: list[str] = []
    used = 0
    for line in lines:
        cost = estimate_tokens(line) + 1
        if used + cost > room:
            break
        kept.append(line)
        used += cost
    whole_lines = len(kept)
    if whole_lines < len(lines) and used < room // 2:
        piece = _cut_to_tokens(lines[whole_lines], room - used - 1)
        if piece:
            kept.append(piece)
    if not kept:
        return None
    text = "\n".join([head, *kept, _clip_marker(len(lines) - whole_lines)])
    return text, estimate_tokens(text)


def _clip_marker(lines_left: int) -> str:
    return f"[… clipped: {lines_left} more line{'s' if lines_left != 1 else ''} not shown]"


def _marker_cost(lines_total: int) -> int:
    return estimate_tokens(_clip_marker(lines_total)) + 1  # the count only shrinks


def _cut_to_tokens(text: str, allowance: int) -> str:
    """A prefix of one huge line whose estimate (with a trailing " …") fits `allowance`."""
    length = min(len(text), max(0, allowance) * 4)
    while length > 0:
        cost = estimate_tokens(text[:length] + " …")
        if cost <= allowance:
            return text[:length] + " …"
        length = min(length - 1, length * allowance // cost - 1)
    return ""


def _tail_text(omitted: Sequence[tuple[str, str]], allowance: int) -> str:
    """The closing list of what was left out, never more than `allowance` tokens."""
    total = len(omitted)
    if not total or allowance <= 0:
        return ""
    lines = [f"Not shown ({total} file{'s' if total != 1 else ''}):"]
    used = estimate_tokens(lines[0])
    for shown, (path, reason) in enumerate(omitted):
        line = f"- {redact_text(path)} ({reason})"
        rest = total - shown - 1
        cost = estimate_tokens(line) + 1
        more = estimate_tokens(_more_line(rest)) + 1 if rest else 0
        if shown >= TAIL_MAX_NAMES or used + cost + more > allowance:
            lines.append(_more_line(total - shown))
            break
        lines.append(line)
        used += cost
    text = "\n".join(lines)
    if len(lines) > 2 or not lines[-1].startswith("…"):  # at least one name made it
        if estimate_tokens(text) <= allowance:
            return text
    compact = f"[{total} file{'s' if total != 1 else ''} not shown]"
    return compact if estimate_tokens(compact) <= allowance else ""


def _more_line(count: int) -> str:
    return f"… and {count} more file{'s' if count != 1 else ''}"


def _tail_reserve(budget: int, skipped: Sequence[tuple[str, str]]) -> int:
    """Tokens kept back for the closing list: room for its first names, at most a fifth."""
    sample_cost = estimate_tokens(_tail_text(skipped[: TAIL_MAX_NAMES // 4], budget)) if skipped else 0
    return min(budget // 5, max(40, sample_cost + 16))


def _coverage(parts: Sequence[_Part], prepared: Sequence[_File], hunk_totals: dict[int, int] | None = None) -> Coverage:
    shown_hunks: dict[int, int] = {}
    partial: set[int] = set()
    for part in parts:
        shown_hunks[part.file_index] = shown_hunks.get(part.file_index, 0) + part.hunks
        if part.clipped:
            partial.add(part.file_index)
    if hunk_totals is not None:
        partial |= {i for i, n in shown_hunks.items() if n < hunk_totals.get(i, 0)}
    return Coverage(
        files_total=len(prepared),
        files_shown=len(shown_hunks),
        partial=tuple(item.path for item in prepared if item.index in partial),
        omitted=tuple((item.path, item.reason or OVER_BUDGET) for item in prepared if item.index not in shown_hunks),
    )


def _assemble(
    parts: list[_Part],
    prepared: Sequence[_File],
    budget: int,
    kinds: Counter,
    hunk_totals: dict[int, int] | None = None,
) -> DiffSelection:
    """Join the parts and the closing list within the budget. Should the joined text ever be
    estimated above the budget (the packer's bound makes that impossible), trailing parts are
    dropped until it fits, so `tokens <= budget` holds unconditionally."""
    while True:
        coverage = _coverage(parts, prepared, hunk_totals)
        body = "\n".join(part.text for part in parts)
        body_cost = sum(part.cost for part in parts) + len(parts)  # + a newline after each
        tail = _tail_text(coverage.omitted, budget - body_cost)
        text = "\n".join(x for x in (body, tail) if x)
        tokens = estimate_tokens(text)
        if tokens <= budget:
            return DiffSelection(
                text=text,
                coverage=coverage,
                tokens=tokens,
                redactions=sum(kinds.values()),
                kinds=tuple(sorted(kinds.items())),
            )
        if not parts:
            return DiffSelection(
                text="", coverage=coverage, tokens=0, redactions=sum(kinds.values()), kinds=tuple(sorted(kinds.items()))
            )
        parts.pop()


def select_diff(files: Sequence[FileChange], budget_tokens: int) -> DiffSelection:
    """What of a commit's diff goes into the prompt, within `budget_tokens`.

    Everything when it fits; otherwise deletion-only hunks become one-line markers and patches
    are added whole, greedily in priority order (code, config, tests, docs; larger changes first).
    A patch larger than what remains is clipped when at least CLIP_MIN_TOKENS of it would fit —
    after the smaller files of its own kind had their turn, so one huge source file cannot crowd
    out every other source file — else it is left out by name. The text ends with what was left
    out, by name."""
    budget = max(0, int(budget_tokens))
    prepared, kinds = _prepare(files, deleted_by_name=True)
    order = sorted(
        (item for item in prepared if item.reason is None), key=lambda item: (item.rank, -item.file.changes, item.index)
    )
    skipped = [(item.path, item.reason) for item in prepared if item.reason]

    everything = _everything_if_it_fits(order, skipped, budget)
    if everything is not None:
        return _assemble(everything, prepared, budget, kinds)

    packer = _Packer(budget - _tail_reserve(budget, skipped))
    for rank in sorted({item.rank for item in order}):
        _pack_rank(packer, [item for item in order if item.rank == rank])
    return _assemble(packer.parts, prepared, budget, kinds)


def _pack_rank(packer: _Packer, items: Sequence[_File]) -> None:
    """Whole patches first, in order; then the ones too large, clipped into what remains."""
    oversized = []
    for item in items:
        if not packer.add_text(item.index, item.text(drop_deletions=True)) and item.name_only is None:
            oversized.append(item)  # (a name-only entry that does not fit is left out by name)
    for item in oversized:
        packer.add_clipped(item.index, f"{item.header} [clipped]", item.body_lines(drop_deletions=True))


def _everything_if_it_fits(
    order: Sequence[_File], skipped: Sequence[tuple[str, str]], budget: int
) -> list[_Part] | None:
    """Every file's whole patch (deletions included), if they and the closing list fit."""
    packer = _Packer(budget)
    for item in order:
        if not packer.add_text(item.index, item.text(drop_deletions=False)):
            return None
    if not skipped:
        return packer.parts
    tail = _tail_text(skipped, packer.room - 1)
    return packer.parts if tail and estimate_tokens(tail) <= packer.room - 1 else None


# =============================================================================================
# Relevant hunks (offline Q&A)
# =============================================================================================

_STOPWORDS = frozenset(
    """
a an the and or but if then else of to in on at by for from with without into onto about as is are
was were be been being do does did done doing have has had having it its this that these those what
which who whom whose why how when where there here can could should would will shall may might must
not no yes i you he she we they me my your our their them us please explain tell show describe
change changes changed commit commits diff file files code line lines function method class mean
meaning whats happen happened happens new old add added adds remove removed removes fix fixed fixes
update updated updates use used uses using make made makes get gets got also just more most less
only all any some each other than too very so such same own both few via per work works
""".split()
)
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_FILE_NAME = re.compile(r"[\w.\-]*\w\.[A-Za-z][A-Za-z0-9]{0,7}\b|[\w\-]+/[\w./\-]+")
_CAMEL_PART = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")


@dataclass(frozen=True)
class _Terms:
    """A question's search terms, lowercased."""

    identifiers: frozenset[str]  # words and identifiers as written: parse_date, timezone
    parts: frozenset[str]  # their sub-words (parse, date) and CJK bigrams
    names: frozenset[str]  # file names and paths: utils.py, src/app

    @property
    def all(self) -> frozenset[str]:
        return self.identifiers | self.parts


def _subwords(identifier: str) -> list[str]:
    return [p.lower() for chunk in identifier.split("_") for p in _CAMEL_PART.findall(chunk) if len(p) >= 3]


def _question_terms(question: str) -> _Terms:
    words = _WORD.findall(question)
    identifiers = {w.lower() for w in words if len(w) >= 3 and w.lower() not in _STOPWORDS}
    parts = {p for w in words for p in _subwords(w) if p not in _STOPWORDS}
    for run in _CJK_RUN.findall(question):
        parts |= {run[i : i + 2] for i in range(max(1, len(run) - 1))}
    names = {n.lower().strip("./") for n in _FILE_NAME.findall(question)}
    return _Terms(frozenset(identifiers), frozenset(parts - identifiers), frozenset(n for n in names if n))


@dataclass
class _HunkCandidate:
    item: _File
    position: int  # the hunk's index within its file
    hunk: _Hunk
    score: float = 0.0


def _score_hunks(candidates: Sequence[_HunkCandidate], terms: _Terms) -> None:
    """Score = Σ over the question's terms found in the hunk of weight × rarity × (1 + log hits),
    where identifiers weigh 3 and sub-words 1, rarer terms (in fewer hunks) weigh more, and hits
    on changed lines count double; plus a bonus when the hunk's file is the one named."""
    texts = [(c.hunk.text() + "\n" + c.item.path).lower() for c in candidates]
    frequency = {term: sum(1 for text in texts if term in text) for term in terms.all}
    for candidate in candidates:
        changed = "\n".join(ln for ln in candidate.hunk.lines if ln[:1] in ("+", "-")).lower()
        context = "\n".join(
            [candidate.hunk.header, *(ln for ln in candidate.hunk.lines if ln[:1] not in ("+", "-"))]
        ).lower()
        score = 0.0
        for term in terms.all:
            hits = 2 * changed.count(term) + context.count(term)
            if hits:
                weight = 3.0 if term in terms.identifiers else 1.0
                rarity = math.log(1 + len(candidates) / (1 + frequency[term]))
                score += weight * rarity * (1 + math.log(hits))
        candidate.score = score + _path_score(candidate.item.path, terms)


def _path_score(path: str, terms: _Terms) -> float:
    lower = path.lower()
    base = posixpath.basename(lower)
    if any(lower == name or lower.endswith("/" + name) or base == name for name in terms.names):
        return 6.0
    return 3.0 if base.rsplit(".", 1)[0] in terms.all else 0.0


def relevant_hunks(files: Sequence[FileChange], question: str, budget_tokens: int) -> DiffSelection:
    """For offline Q&A: the hunks most relevant to `question`, best first, each under its file path
    and @@ header, within `budget_tokens`; files named only (deleted without a patch, bare renames)
    come last. Same skip rules, redaction and closing list as select_diff."""
    budget = max(0, int(budget_tokens))
    prepared, kinds = _prepare(files, deleted_by_name=False)
    terms = _question_terms(question)
    candidates = [
        _HunkCandidate(item, i, hunk) for item in prepared if item.reason is None for i, hunk in enumerate(item.hunks)
    ]
    _score_hunks(candidates, terms)
    candidates.sort(key=lambda c: (-c.score, c.item.rank, c.item.index, c.position))
    named = sorted(
        (item for item in prepared if item.reason is None and item.name_only is not None),
        key=lambda item: (-_path_score(item.path, terms), item.index),
    )
    skipped = [(item.path, item.reason) for item in prepared if item.reason]

    packer = _Packer(budget - _tail_reserve(budget, skipped))
    for c in candidates:
        head = f"### {c.item.path}\n{c.hunk.header}"
        if not packer.add_text(c.item.index, "\n".join([head, *c.hunk.lines]), hunks=1):
            packer.add_clipped(c.item.index, head, c.hunk.lines, hunks=1)
    for item in named:
        packer.add_text(item.index, item.name_only or "")
    hunk_totals = {item.index: len(item.hunks) for item in prepared if item.hunks}
    return _assemble(packer.parts, prepared, budget, kinds, hunk_totals)


# The diff text's own markers (above) stay English: they are data for the model, and part of the
# prompts' cached shape. A reader shown the text itself (the offline answer) reads them in their
# language: `for_reader` says each marker line again from the catalogue's [diff_view].
_CLIPPED_LINE = re.compile(r"\[… clipped: (\d+) more lines? not shown\]")
_TAIL_HEAD = re.compile(r"Not shown \((\d+) files?\):")
_TAIL_MORE = re.compile(r"… and (\d+) more files?")
_TAIL_COMPACT = re.compile(r"\[(\d+) files? not shown\]")
_TAIL_ITEM = re.compile(r"- (.+) \(([a-z ]+)\)")
_BARE_RENAME = re.compile(r"renamed: (.+) → (.+) " + re.escape(_NO_CONTENT))
_BARE = re.compile(r"([a-z]+): (.+) " + re.escape(_NO_CONTENT))


def for_reader(diff_text: str, lang: str) -> str:
    """`diff_text` (from select_diff / relevant_hunks) with its marker lines — a clipped hunk, a
    file without content changes, the closing list of files not shown and why — in `lang`. Diff
    lines themselves (+, -, space, @@, ###) are left as they are."""
    lang = "zh" if lang.lower().startswith("zh") else "en"
    out: list[str] = []
    in_tail = False
    for line in diff_text.split("\n"):
        said = _marker_line(line, lang, in_tail)
        in_tail = in_tail or _TAIL_HEAD.fullmatch(line) is not None
        out.append(line if said is None else said)
    return "\n".join(out)


def _form(n: str) -> str:
    return "one" if n == "1" else "other"


def _marker_line(line: str, lang: str, in_tail: bool) -> str | None:
    if m := _CLIPPED_LINE.fullmatch(line):
        return text(lang, f"diff_view.clipped.{_form(m[1])}", n=m[1])
    if m := _TAIL_HEAD.fullmatch(line):
        return text(lang, f"diff_view.not_shown.{_form(m[1])}", n=m[1])
    if m := _TAIL_COMPACT.fullmatch(line):
        return text(lang, f"diff_view.compact.{_form(m[1])}", n=m[1])
    if m := _BARE_RENAME.fullmatch(line):
        return text(lang, "diff_view.renamed", old=m[1], path=m[2])
    if (m := _BARE.fullmatch(line)) and f"diff_view.status.{m[1]}" in catalogue(lang):
        return text(lang, "diff_view.unchanged", status=text(lang, f"diff_view.status.{m[1]}"), path=m[2])
    if in_tail and (m := _TAIL_MORE.fullmatch(line)):
        return text(lang, f"diff_view.more.{_form(m[1])}", n=m[1])
    if in_tail and (m := _TAIL_ITEM.fullmatch(line)):
        return "- " + text(lang, "coverage.omitted_file", path=m[1], reason=_reason(m[2], lang))
    return None


# =============================================================================================
# Coverage line
# =============================================================================================

# How many names the line spells out before "+N more" / "等 N 个".
COVERAGE_MAX_NAMES = 5
_MAX_SHOWN_PATH = 48


def _short_path(path: str) -> str:
    if len(path) <= _MAX_SHOWN_PATH:
        return path
    tail = "/".join(path.split("/")[-2:])
    if len(tail) > _MAX_SHOWN_PATH - 2:
        tail = posixpath.basename(path)
    return "…/" + tail


class _Listed:
    """Up to COVERAGE_MAX_NAMES names, then how many more, as a field told in the reader's
    language. The languages count differently — English the rest ("+2 more"), Chinese all of
    them ("等 7 个"): both numbers are given, each template takes its own; Chinese puts no
    space between a full-width character and the count (`names_more_after_wide`)."""

    __slots__ = ("names",)

    def __init__(self, names: Sequence[str]):
        self.names = tuple(names)

    def say(self, lang: str) -> str:
        shown = self.names[:COVERAGE_MAX_NAMES]
        rest = len(self.names) - len(shown)
        listed = text(lang, "coverage.list_sep").join(shown)
        if not rest:
            return listed
        key = "coverage.names_more" if listed[-1:].isascii() else "coverage.names_more_after_wide"
        return text(lang, key, names=listed, rest=rest, total=len(self.names))


def _reason(reason: str, lang: str) -> str:
    """Why a file is not shown, in the reader's words; a reason the catalogue does not know (one
    stored by another version) as it was stored."""
    key = f"coverage.reason.{reason.replace(' ', '_')}"
    return text(lang, key) if key in catalogue(lang) else reason


def coverage_line(coverage: Coverage, lang: str) -> str:
    """One line telling the reader how much of the diff the analysis saw."""
    lang = "zh" if lang.lower().startswith("zh") else "en"
    total = coverage.files_total
    if total == 0:
        return text(lang, "coverage.no_files")
    form = "one" if total == 1 else "other"
    if coverage.complete:
        return text(lang, f"coverage.all_analysed.{form}", total=total)
    pieces = [text(lang, f"coverage.analysed_of.{form}", shown=coverage.files_shown, total=total)]
    if coverage.omitted:
        names = [
            text(lang, "coverage.omitted_file", path=_short_path(p), reason=_reason(r, lang))
            for p, r in coverage.omitted
        ]
        pieces.append(text(lang, "coverage.not_shown", files=_Listed(names).say(lang)))
    if coverage.partial:
        clipped = _Listed([_short_path(p) for p in coverage.partial])
        pieces.append(text(lang, "coverage.clipped", files=clipped.say(lang)))
    return text(lang, "coverage.sep").join(pieces)
