"""Stand-ins for a secret: the mark written in a secret's place, and what people write instead of one.

A value that is already `[REDACTED:kind]`, masked (`****`), a template (`${TOKEN}`, `{{ key }}`), a
placeholder (`<your-key>`, `changeme`, `xxxx`), a safe word (`none`, `write`) or says it is fake
(`dummy-token`) is no secret: every detector asks these before it withholds anything. Like
names.py and values.py this module imports nothing of the package, so that every detector sits
one floor above the three (see __init__).
"""

from __future__ import annotations

import re

MARK_PREFIX = "[REDACTED:"


def mark(kind: str) -> str:
    return f"{MARK_PREFIX}{kind}]"


SAFE_VALUES: frozenset[str] = frozenset(
    """
none null nil true false undefined required optional yes no on off empty str string int bytes bool boolean
float number any object secretstr text char varchar password secret token redacted self this default env
environment read write read-write readwrite admin user root guest public private basic bearer digest oauth
oauth2 jwt api key apikey auth hidden masked sensitive secure insecure unknown missing invalid valid value
string? str|none changeme placeholder foo bar baz qux foobar foo-bar quux secret-token secret-key
api-key api_key access-token auth-token inherit scrubbed example test testing dummy fake mock sample demo todo fixme tbd xxx
""".split()
)


_MASKED = re.compile(r"[*•]+(?:[/\-._: ]+[*•]+)*")
_TEMPLATE = re.compile(
    r"\$\{[^}]*\}|\$\(\([^)]*\)\)|\$\([^)]*\)|\{\{.*?\}\}|\{%.*?%\}|%\([\w.]+\)[sd]|%[A-Z_]+%|\$[A-Za-z_][\w.]*"
    r"|<[A-Za-z_][\w .\-]*>|\{[A-Za-z_][\w.]*\}|\[[A-Z_ ]+\]|@[A-Z_]+@"
)
_TEMPLATE_INSIDE = re.compile(
    r"\$\{[A-Za-z_][\w.]*(?:\}|:-|:=|:\?)|(?<!\{)\{[a-z_][a-z0-9_.]*(?:\[[\w'\"]+\])?\}(?!\})|\{\{[ \t]*[\w.|() ]+[ \t]*\}\}|\$\([\w .\-]+\)|\$[A-Z_]{3,}\b|^\$[a-z_]\w*$"
)


def is_placeholder(value: str) -> bool:
    v = value.strip()
    if not v or MARK_PREFIX in v or len(set(v.replace("-", "").replace("_", ""))) <= 1:
        return True  # "", ****, xxxx, ----
    if _MASKED.fullmatch(v):
        return True  # ****/**/**, ••••-••••: a value shown masked
    if _TEMPLATE.fullmatch(v) or _TEMPLATE_INSIDE.search(v):
        return True
    low = v.lower()
    return bool(
        re.fullmatch(
            r"(?:your|my|insert|enter|put|replace|add)[-_ ]?.*|.*[-_ ](?:here|goes-here)|x{3,}.*|\.{3}.*|…", low
        )
    )


FAKE_MARKER: re.Pattern[str] = re.compile(
    r"fake|dummy|example|placeholder|sample|mock|redacted|not[-_]?a[-_]?real|(?<![a-z])test"
)
