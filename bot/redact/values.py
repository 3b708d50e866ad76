"""What a value looks like: random or made of words, code or a literal, a number, a version, a UUID.

Character classes, entropy and how often the class changes tell a key from an identifier, a word
or a hash: `looks_random` is the loose test (for a value next to a credential word),
`strongly_random` the strict one (for a value next to any name, or a token's tail). Every
detector judges values with these. This module imports nothing of the package (see __init__).
"""

from __future__ import annotations

import itertools
import math
import re
from collections import Counter

NUMBER = re.compile(r"[-+]?\d+(?:\.\d+)?(?:e[-+]?\d+)?")
REFERENCE: re.Pattern[str] = re.compile(r"[A-Za-z_$][\w$]*(?:(?:\.|->|::|\?\.)[A-Za-z_$][\w$]*)+(?:\(\))?")
VERSION = re.compile(r"v?\d+(?:\.\d+){1,3}(?:[-+.][A-Za-z0-9.\-]{1,40})?")
UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
_HEX = re.compile(r"[0-9a-fA-F]+")
DIGIT = re.compile(r"[0-9]")


# Prefixes of ids that APIs hand out (messages, requests, tool calls, Stripe objects…): random, public.
ID_PREFIXES = frozenset(
    """
msg chatcmpl req request call resp response run file toolu srvtoolu cus ch pi pm evt in sub prod price txn
thread asst batch ft org proj user item rs fc ws img vs cmpl id uuid obj comp gen job task trace span step
sess conv chat tool act acct ba card src tok py re seti si cs ii il po tr ic ipi event mcptoolu
toolu srvtoolu tc tx rsn enc sha1 sha224 sha256 sha384 sha512 md5 blake2b blake3 xxh3 container tooluse
""".split()
)


_READABLE_PART = re.compile(r"[0-9]?[a-z]+[0-9]{0,3}|[A-Z][a-z]+|[A-Z]+|[0-9]{1,8}|")


def wordy(value: str) -> bool:
    """Only words and short numbers, whatever joins them."""
    return all(_READABLE_PART.fullmatch(p) for p in re.split(r"[-_.: #]", value))


def readable(value: str) -> bool:
    """Lowercase words, Capitalised words and short numbers joined by - _ . : — something a person wrote."""
    parts = re.split(r"[-_.: ]", value)
    return (
        len(parts) > 1
        and all(_READABLE_PART.fullmatch(p) and len(p) <= 20 for p in parts)
        and not any(p.isupper() and len(p) > 6 for p in parts)
    )


_PLACEHOLDER_WORD = re.compile(r"secret|pass|token|key|test|fake|example|dummy|changeme|super|sample|demo")


def placeholder_words(value: str) -> bool:
    """`index-secret`, `super-secret`, `pass`: a person's stand-in for a password in docs and tests."""
    low = value.lower()
    return (readable(value) or low.isalpha()) and _PLACEHOLDER_WORD.search(low) is not None


def alternates(value: str) -> bool:
    """Random text changes character class often; identifiers and words do not."""
    changes = sum(1 for a, b in itertools.pairwise(value) if (a.isdigit(), a.isupper()) != (b.isdigit(), b.isupper()))
    return changes / len(value) >= 0.3


def entropy(value: str) -> float:
    counts = Counter(value)
    n = len(value)
    return -sum(c / n * math.log2(c / n) for c in counts.values())


def char_classes(value: str) -> int:
    return (
        any(c.islower() for c in value)
        + any(c.isupper() for c in value)
        + any(c.isdigit() for c in value)
        + any(not c.isalnum() for c in value)
    )


def looks_random(value: str) -> bool:
    """A token-like value: long enough, mixing character classes, not a word or identifier."""
    n = len(value)
    if n < 12:
        return False
    if _HEX.fullmatch(value):
        return n >= 16 and any(c.isdigit() for c in value) and any(c.isalpha() for c in value)
    classes = char_classes(value)
    if classes >= 3 or (classes == 2 and any(c.isdigit() for c in value)):
        return entropy(value) >= 3.0
    return False


def strongly_random(value: str) -> bool:
    """Random beyond doubt: 16+ letters and digits mixing upper, lower and digits, changing class
    often, with high entropy — no identifier, word or hash reads like that."""
    core = re.sub(r"[^A-Za-z0-9]", "", value)
    return len(core) >= 16 and char_classes(core) == 3 and entropy(core) >= 3.5 and alternates(core)


_CODE_VALUE = re.compile(r"[A-Za-z_$][\w$.:]*[(\[<]|[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+$")


def is_code(value: str) -> bool:
    """A call, an attribute or a dotted name — unless a dotted part is random (`hvx.Tq8…`)."""
    if not (_CODE_VALUE.match(value) or REFERENCE.fullmatch(value)):
        return False
    return not any(_random_part(part) for part in re.split(r"\.|->|::|\?\.|\(", value))


def _random_part(part: str) -> bool:
    """No attribute or module name: random beyond doubt, or 20+ letters and digits with plenty of each."""
    if strongly_random(part):
        return True
    digits = sum(c.isdigit() for c in part)
    return part.isalnum() and len(part) >= 20 and 0.2 <= digits / len(part) <= 0.8


def another_assignment(value: str) -> bool:
    """`key, http_client=client` holds another `name=`; base64 padding (`…MQ==:7f3c`) does not."""
    for m in re.finditer(r"(?:^|(?<=[,&;(\s]))([A-Za-z_][\w.\-]*)=(?!=)", value):
        if not looks_random(m.group(1)):
            return True
    return False


_B64ISH = re.compile(r"[A-Za-z0-9+/=_\-]+")


def braced_random(value: str) -> bool:
    """`{AQAAABAAAAAQ…=}`, `{AQAAABAAAA 7Gm2Q9…}`: base64 pieces in braces, random together."""
    if len(value) < 18 or value[0] != "{" or value[-1] != "}":
        return False
    pieces = value[1:-1].split()
    joined = "".join(pieces)
    return bool(pieces) and all(_B64ISH.fullmatch(p) for p in pieces) and strongly_random(joined)
