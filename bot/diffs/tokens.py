"""The token estimate every prompt budget is counted in: `estimate_tokens`, and its memo.

Its own module because everything that sizes a prompt reads it — the diff selection here, the LLM
client's window (bot/analysis/llm), the summaries and the tokens ratio — and it needs nothing but
the standard library: what only counts tokens depends on this module, not on the selection.
"""

from __future__ import annotations

import functools
import re

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
CJK_RUN = re.compile(f"[{_CJK_CLASS}]+")
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
    """The estimate, line by line: no piece the estimate counts spans a newline except runs of
    newlines, so a text's estimate is the sum of its lines' plus its newline runs'. Each line's
    share is remembered (`_LINE_UNITS`): a diff's lines are estimated as a file's patch, again in
    the selection that joins the patches and again in the prompt around it, and every time after
    the first costs a dictionary look-up instead of a scan. Counted in twentieths of a token, so
    the sum is exact (0.8, 1.25, 0.6 and 1.5 tokens are whole twentieths)."""
    units = _units(text, None)
    assert units is not None  # (no limit: never given up)
    return max(1, -(-units // _UNIT))  # even a lone space is a token


def estimate_within(text: str, limit: int) -> int | None:
    """`estimate_tokens(text)` when it is at most `limit`, else None: the lines are estimated
    until their sum passes the limit, not further (every line's share is ≥ 0, so once the sum
    passes it the whole text's does too). A packer asking whether a large file fits reads it
    only as far as the room it has."""
    if not text:
        return 0 if limit >= 0 else None
    units = _units(text, _UNIT * max(limit, 0))
    if units is None:
        return None
    tokens = max(1, -(-units // _UNIT))
    return tokens if tokens <= limit else None


def _units(text: str, limit: int | None) -> int | None:
    """The text's estimate in twentieths of a token (`_estimate`); None as soon as the sum passes
    `limit` twentieths (when one is given).

    Most lines were estimated before (a prompt is a diff estimated file by file, then joined,
    then wrapped in the template): the lines' shares are looked up and summed in C, and the
    newline runs counted from the empty pieces between lines, instead of a Python loop over the
    lines. New lines are estimated and remembered. A run of more than 8 newlines (it costs more
    than one token) goes line by line (`_units_in_order`); the same sum either way
    (tests/test_speed_work.py compares them)."""
    pieces = text.split("\n")
    if _LONG_NEWLINE_RUN in text:
        return _units_in_order(pieces, limit)
    lines = _LINE_UNITS
    units = 0
    # with a limit, the lines go in growing slices, the sum compared after each: a large file
    # is read about as far as the room (a slice or so more), not whole
    at, step = 0, (_FIRST_SLICE if limit is not None else len(pieces))
    while at < len(pieces):
        piece = pieces[at : at + step]
        known = list(map(lines.get, piece))
        if None in known:
            for i, share in enumerate(known):
                if share is None:
                    line = piece[i]
                    share = known[i] = _line_units(line) if line else 0
                    if len(lines) >= _LINE_MEMO_SIZE:
                        lines.clear()
                    lines[line] = share
        units += sum(known)  # type: ignore[arg-type]  # (no None is left)
        if limit is not None and units > limit:
            return None  # the lines alone pass it (the newlines only add)
        at += step
        step *= 2
    newlines = len(pieces) - 1
    if newlines:
        # each run of newlines (at most 8 here) costs one token: a run starts at the first
        # newline and at each newline after a non-empty line
        inner_empty = pieces.count("") - (pieces[0] == "") - (pieces[-1] == "")
        units += _UNIT * (1 + (newlines - 1 - inner_empty))
    if limit is not None and units > limit:
        return None
    return units


_FIRST_SLICE = 64
_LONG_NEWLINE_RUN = "\n" * 9


def _units_in_order(pieces: list[str], limit: int | None) -> int | None:
    """`_units` of the text split at its newlines, line after line (the sum stops as soon as it
    passes `limit`)."""
    units = 0
    newlines = 0  # the current run of newlines
    lines = _LINE_UNITS
    for line in pieces:
        if newlines and not line:
            newlines += 1  # another newline right after the last one
        else:
            if newlines:
                units += _UNIT * -(-newlines // 8)  # a run of newlines: one token per 8
            newlines = 1  # the newline after this line (the last line has none: undone below)
            if line:
                found = lines.get(line)
                if found is None:
                    found = _line_units(line)
                    if len(lines) >= _LINE_MEMO_SIZE:
                        lines.clear()
                    lines[line] = found
                units += found
                if limit is not None and units > limit:
                    return None
    newlines -= 1  # the text does not end with the newline counted after its last line
    if newlines > 0:
        units += _UNIT * -(-newlines // 8)
    return units


_UNIT = 20  # twentieths of a token: every cost above is a whole number of them
_LINE_MEMO_SIZE = 200_000  # lines remembered (~20 MB at most; cleared, not evicted, when full)
_LINE_UNITS: dict[str, int] = {}


def _line_units(line: str) -> int:
    """One line's estimate (no newline in it), in twentieths of a token."""
    units = 0
    if len(line) >= 16 and (runs := _BLOB.findall(line)) and any(_looks_random(run) for run in runs):
        cost, line = _take_random_blobs(line)
        units = round(cost * _UNIT)  # whole twentieths: digits cost 20, other characters 16
    units += _UNIT * (len(_ONE_TOKEN_PIECE.findall(line)) + len(_LONE_SPACE_PIECE.findall(line)))
    if not line.isascii():
        units += _non_ascii_units(line)
    return units


def estimate_tokens_split(text: str) -> tuple[float, float]:
    """(the estimate's share for Chinese/Japanese/Korean characters, the rest's): tokenizers
    differ from the estimate differently for the two (bot/analysis/tokens_ratio.py)."""
    total = float(estimate_tokens(text))
    if not text or text.isascii():
        return 0.0, total
    cjk = min(total, _CJK_COST * _count_chars(CJK_RUN, text))
    return cjk, total - cjk


def surely_over(text: str, allowance: int) -> bool:
    """True when text is certainly estimated above `allowance`, without estimating it (a few
    counts in C instead of a scan in Python, of about as much text as the allowance could hold:
    a large file the prompt has no room for is not read).

    Every character but a lone space costs at least 1/65 token (64-space runs are the cheapest);
    and (`tokens_at_least`) a digit or a control character a whole token, punctuation 1/2 (a
    pair), letters at least 1/5 of the small ones and 1/6 of them all (a letter piece holds 5
    small letters, one capital and 5 small ones, or 4 capitals; a random run's character costs
    0.8), a tab 1/8, and a newline that follows a non-empty line a whole token; beyond ASCII,
    nothing (every such character costs 0.6 and more)."""
    allowance = max(allowance, 0)
    if len(text) > 66 * (allowance + 1):
        return True
    if len(text) <= allowance:  # (each character counts at most 1 in the bound below)
        return False
    return tokens_at_least(text, room_for(allowance)) > allowance


def room_for(allowance: int) -> int:
    """How many characters tokens_at_least needs to look at to find a text over `allowance` (code
    counts about one token of the bound in four to six characters)."""
    return _CHARS_LOOKED_AT * (max(allowance, 0) + 1)


_CHARS_LOOKED_AT = 8


def tokens_at_least(text: str, chars: int | None = None) -> int:
    """A lower bound of `estimate_tokens(text)` from counts alone (see surely_over): each ASCII
    character's class counted in C (the text as bytes, each byte mapped to its class), beyond
    ASCII nothing counted. With `chars`, of the text's first `chars` characters only, less one
    (a run of newlines cut in two counts twice in the parts): a bound of the whole text still,
    since a text's estimate is never below its beginning's."""
    cut = chars is not None and len(text) > chars
    ascii_bytes = (text[:chars] if cut else text).encode("ascii", "ignore")
    classes = ascii_bytes.translate(_CLASS_OF_BYTE)
    # the frequent classes counted by what deleting them leaves (counting a frequent byte is slow)
    no_lower = classes.translate(None, b"l")
    rest = no_lower.translate(None, b"p ")
    lower, pairs = len(classes) - len(no_lower), len(no_lower) - len(no_lower.translate(None, b"p"))
    ones, upper, tabs, newlines = (rest.count(c) for c in (b"1", b"u", b"t", b"n"))
    # without an empty line, each newline is a run of its own (one token); else at least one a run of 8
    # (a newline, a character beyond ASCII, a newline: counted as an empty line, the smaller bound)
    runs = newlines if b"nn" not in classes else -(-newlines // 8)
    # a letter piece holds at most 5 small letters, or a capital and 5 small letters, or 4 capitals:
    # the letters cost at least a fifth of the small ones, and at least a sixth of them all
    letters = max(24 * lower, 20 * (lower + upper))  # in 120ths
    # a digit or a control character 1, punctuation 1/2, a tab 1/8: in 120ths, rounded up
    bound = -(-(120 * ones + 60 * pairs + letters + 15 * tabs) // 120) + runs
    return bound - 1 if cut else bound


def _byte_classes() -> bytes:
    """A byte → its class for tokens_at_least: 1 (a digit or a control character: a token each),
    p (punctuation), l (a small letter), u (a capital), t (a tab), n (a newline), and a space
    for a space."""
    table = bytearray(b" " * 256)
    for byte in range(128):
        char = chr(byte)
        if "a" <= char <= "z":
            table[byte] = ord("l")
        elif "A" <= char <= "Z":
            table[byte] = ord("u")
        elif re.fullmatch(r"[!-/:-@\[-`{-~]", char):
            table[byte] = ord("p")
        elif char == "\t":
            table[byte] = ord("t")
        elif char == "\n":
            table[byte] = ord("n")
        elif char != " ":  # a digit, \r \f \v, a control character
            table[byte] = ord("1")
    return bytes(table)


_CLASS_OF_BYTE = _byte_classes()


def _count_chars(run: re.Pattern[str], text: str) -> int:
    return sum(map(len, run.findall(text)))


def _non_ascii_cost(text: str) -> float:
    return _non_ascii_units(text) / _UNIT


def _non_ascii_units(text: str) -> int:
    """What the characters beyond ASCII cost, in twentieths of a token: one scan for them, then
    their classes counted among themselves (a diff has few; the header's `−` is one)."""
    other = "".join(_NON_ASCII_RUN.findall(text))
    cjk = _count_chars(CJK_RUN, other)
    astral = _count_chars(_ASTRAL_RUN, other)
    two_byte = _count_chars(_TWO_BYTE_RUN, other)
    three_byte = len(other) - cjk - astral - two_byte
    return 25 * cjk + 60 * astral + 12 * two_byte + 30 * three_byte  # 1.25, 3, 0.6, 1.5 tokens


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
    if run.islower() or run.isupper():  # letters of one case (most identifiers): only a hash
        return not run.isalpha() and _HEX_RUN.fullmatch(run) is not None
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
