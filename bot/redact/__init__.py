"""Secrets never reach the LLM: the one redactor for every untrusted text that is sent.

Diffs, commit messages, PR descriptions, file names, thread history and the user's question all
go through `redact()` before they are put into a prompt. Each secret becomes `[REDACTED:kind]`,
so the model and the reader know something was there; callers add the counts to the prompt and,
once per prompt actually sent, to the `digestbot_redactions_total{kind}` counter (`record()`).

Four detectors, all pure regular expressions over the text (no I/O, no dependency), run in turn:

    shapes.py           values whose form alone says credential (vendor tokens, keys, JWTs, …);
                        the vendor tables in vendor_tables.py
    url_credentials.py  user:password@ and token@ in URLs
    context.py          a value next to a name or label holding a credential word
    random_runs.py      a value random beyond doubt, given to any name

and they judge what they find with three modules that import nothing of the package:

    names.py            which names say credential
    values.py           what a value looks like (random, words, code, a version …)
    placeholders.py     the mark written in a secret's place, and stand-ins people write

`redact()` lives here, in the package itself, rather than in a module of its own: callers import
it from `bot.redact`, and one module more between them and the detectors would put every caller
one floor higher (tools/import_graph.py).

Why not a library: detect-secrets alone withholds 14% of a broad service-key corpus with its
keyword and service plugins, and its entropy plugins flag thousands of lines of ordinary code
(see README, Security). The figures of this package are printed by bench/eval_secrets.py.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from .context import redact_context
from .placeholders import MARK_PREFIX
from .random_runs import redact_named_random
from .shapes import RULES, SHAPES, Shapes, redact_shapes
from .url_credentials import redact_url_credentials

__all__ = [
    "MARK_PREFIX",
    "Redacted",
    "record",
    "redact",
    "redact_secrets",
    "redact_text",
    "redactor",
    "vendor_names",
]


@dataclass(frozen=True)
class Redacted:
    text: str
    kinds: Counter = field(default_factory=Counter)  # kind -> how many were replaced

    @property
    def count(self) -> int:
        return sum(self.kinds.values())


def redact(text: str | None, *, _shapes: Shapes | None = None) -> Redacted:
    """`text` with every secret replaced by [REDACTED:kind], and how many of each kind."""
    if not text:
        return Redacted(text or "")
    kinds: Counter = Counter()
    text = redact_shapes(text, kinds, _shapes or SHAPES)
    text = redact_url_credentials(text, kinds)
    text = redact_context(text, kinds)
    text = redact_named_random(text, kinds)
    return Redacted(text, kinds)


def redactor(without_vendors: Iterable[str]) -> Callable[[str | None], Redacted]:
    """redact() without the shape rules written for these vendors: how bench/eval_secrets.py
    measures whether the other detectors withhold a vendor that no rule was written for."""
    shapes = SHAPES.without(frozenset(without_vendors))
    return lambda text: redact(text, _shapes=shapes)


def vendor_names() -> frozenset[str]:
    """Every vendor some shape rule was written for (normalised: lower case letters and digits)."""
    return frozenset(v for rule in RULES for v in rule.vendors)


def redact_secrets(text: str | None) -> tuple[str, int]:
    """(redacted text, number of redactions) — the short form most callers need."""
    result = redact(text)
    return result.text, result.count


def redact_text(text: str | None) -> str:
    return redact(text).text


def record(kinds: Counter | dict[str, int] | Iterable[tuple[str, int]]) -> None:
    """Count secrets withheld from one prompt that is being sent, by kind."""
    from ..core import metrics

    items = kinds.items() if isinstance(kinds, dict) else kinds
    for kind, n in items:
        if n:
            metrics.count("redactions", n, kind=kind)
