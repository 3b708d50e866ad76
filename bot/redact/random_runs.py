"""A value random beyond doubt, given to any name: what no rule and no credential word catches.

`wandb 2e11kyDIiLGCGkHX7pAdSvKuqrEcZtYf82Hr`, `posthog = phx_WQV1…`, `AcmeClient("Tq8…")`: no
credential word, only a vendor's name — a name no rule can know. Not after `name:`: YAML and
JSON records (recorded API sessions) give random data such names line after line. What ordinary code gives a name
and is as random as that is an id an API handed out (`id: msg_01…`, `call_id: call_…`,
`responseId: …`), a signature or an encrypted blob (`thoughtSignature`, `encrypted_content`), a
hash or a URL: those names and prefixes are left alone. Hex, UUIDs and values that read as
words are never taken here: SHAs and ids are everywhere (they need a credential word).

Also here: a credential word glued to a vendor's name and to its value in one word
(`capsulecrm-SECRET-bu9J…`).
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict

from .names import NAME_WORD, name_strength, wordy_identifier
from .placeholders import MARK_PREFIX, is_placeholder, mark
from .values import DIGIT, ID_PREFIXES, UUID, looks_random, readable, strongly_random

# (a run may start a diff's line right after its + or - marker)
_RANDOM_RUN = re.compile(r"(?<![\w/.~])(?<![^\n][+\-])[A-Za-z0-9][A-Za-z0-9+/_\-.~]{19,199}=*(?![\w+/=\-~])")
_NAME_OP_BEFORE = re.compile(
    r"(?<![\w.\-])(?P<name>[A-Za-z][A-Za-z0-9_\-.]{0,40})[\"']?(?:[ \t]*(?:=|:=|=>)[ \t]*|[ \t]+|\()[\"'`]?$"
)
# Last words of names whose random values are not secrets.
_NOT_SECRET_NAMES = frozenset(
    """
id ids uuid guid signature signatures sig index hash hashes digest sha commit rev revision ref nonce etag checksum
cursor fingerprint salt iv version content contents data blob image base64 b64 encrypted ciphertext hmac
https http ftp file path url uri type alias class struct def fn func let const var val new return import from
""".split()
)


def _named_random(value: str, name: str) -> bool:
    core = value.rstrip(".")
    if "/" in core or "+" in core or "=" in core:
        return False  # base64 data (`audio: 9//o/+b/…`), a path, a query: a key without a name has none
    if not strongly_random(core) or wordy_identifier(core) or is_placeholder(core):
        return False
    if all(wordy_identifier(part) for part in core.split(".")) or _mostly_words(core):
        return False  # pytest.PytestRemovedIn10Warning, CPyList_GetItemInt64: names made of words
    first = re.split(r"[_\-~.]", core, maxsplit=1)[0].lower()
    if first in ID_PREFIXES or first.endswith(("id", "call")):
        return False  # an id an API handed out: msg_01…, call_…, toolu_…, chatcmpl-…
    words = [w.lower() for w in NAME_WORD.findall(name)]
    return bool(words) and words[-1] not in _NOT_SECRET_NAMES and not (set(words) & {"id", "hash", "signature"})


# A credential word glued to a vendor's name and to its value in one word:
# `capsulecrm-SECRET-bu9J…`, `holidayapiKEY-123e4567-…`, `gitter-secret-…`, `versioneyeACCESS-…`.
# (matched on the lowercased run: re.I is several times slower)
_GLUED_WORD = re.compile(r"(?:secret|token|key|access|private|password|passwd|apikey)s?(?=[-_.][a-z0-9])")
# a glued value is letters, digits and dashes (`key_id=PROBE_KEY` is more words of the name)
_GLUED_VALUE = re.compile(r"[A-Za-z0-9]+(?:-[A-Za-z0-9]+)*")


def _glued_secret(run: str, lowered: str) -> int:
    """Where the value starts in a run holding `name-credential-value`, or -1."""
    for g in reversed(list(_GLUED_WORD.finditer(lowered))):
        name, rest = run[: g.end()], run[g.end() + 1 :].rstrip(".")
        if len(rest) < 16 or run[g.end()] in ":=" or not _GLUED_VALUE.fullmatch(rest) or not name_strength(name)[0]:
            continue  # (`name=value` and `name: value` are the context detector's: not glued)
        if UUID.fullmatch(rest) or (
            looks_random(rest) and not wordy_identifier(rest) and not readable(rest) and not is_placeholder(rest)
        ):
            return g.end() + 1
    return -1


_WORD_PIECE = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])")


def _mostly_words(value: str) -> bool:
    """Most letters in pieces of three or more with a vowel (`testVecI64ForLoop_64bit`): a name a
    person wrote; random text breaks into short pieces and consonant runs."""
    pieces = _WORD_PIECE.findall(value)
    letters = sum(len(p) for p in pieces)
    worded = sum(len(p) for p in pieces if len(p) >= 3 and any(c in "aeiouyAEIOUY" for c in p))
    return letters > 0 and worded >= 0.5 * letters


def _may_be_strongly_random(run: str) -> bool:
    """Upper case, lower case and a digit, and none of base64's / + = (see _named_random)."""
    return (
        run != run.lower()
        and run != run.upper()
        and "/" not in run
        and "+" not in run
        and "=" not in run
        and DIGIT.search(run) is not None
    )


def redact_named_random(text: str, kinds: Counter) -> str:
    spans = []
    named: dict[str, list[tuple[int, int, str]]] = defaultdict(list)  # name -> (start, end, value)
    for m in _RANDOM_RUN.finditer(text):
        run = m.group()
        lowered = run.lower()
        glued = _glued_secret(run, lowered) if _GLUED_WORD.search(lowered) else -1
        if glued > 0:
            spans.append((m.start() + glued, m.start() + len(run.rstrip("."))))
            continue
        if not _may_be_strongly_random(run):
            continue  # (cheap string tests first: most runs are paths and identifiers)
        line_start = text.rfind("\n", 0, m.start()) + 1
        before = _NAME_OP_BEFORE.search(text, max(line_start, m.start() - 60), m.start())
        if before is None or MARK_PREFIX in text[line_start : m.start()]:
            continue
        if _named_random(m.group(), before.group("name")):
            value = m.group().rstrip(".")
            named[before.group("name").lower()].append((m.start(), m.start() + len(value), value))
    for found in named.values():
        # One name given three different random values is a stream of data (`audio: …` chunks of
        # a recorded session, one record after another), not a credential: a file holds one key
        # under a name, maybe repeated.
        if len({value for _, _, value in found}) < 3:
            spans.extend((start, end) for start, end, _ in found)
    spans.sort()
    if not spans:
        return text
    out, at = [], 0
    for start, end in spans:
        out.append(text[at:start])
        out.append(mark("token"))
        kinds["token"] += 1
        at = end
    out.append(text[at:])
    return "".join(out)
