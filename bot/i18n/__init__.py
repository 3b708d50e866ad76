"""Every sentence a user reads, in one catalogue per language: `zh.toml` and `en.toml` beside this file.

    from bot.i18n import text
    text("zh", "errors.bad_date", value="2026-13-45")

Keys are dotted paths into the TOML tables (`[errors] bad_date = "…{value}…"`); fields are filled
with `str.format`. Both catalogues must hold the same keys with the same fields (a test walks them).
An unknown language falls back to the default (zh); an unknown key is a bug and raises KeyError.
The files ship inside the package and are read with importlib.resources, so an installed wheel
finds them from any directory.
"""

from __future__ import annotations

import tomllib
from functools import cache
from importlib import resources
from typing import Any

LANGS = ("zh", "en")
DEFAULT_LANG = "zh"
ECHO_LIMIT = 80  # characters of a typed word that a sentence repeats back


def is_zh(lang: str) -> bool:
    """A Chinese reader (`zh`, `zh-CN`…); an unset language is the default, Chinese."""
    return (lang or "zh").lower().startswith("zh")


def browser_language(accept_language: str, default: str) -> str:
    """The first of zh / en a browser asks for (an Accept-Language header, in its order), else
    `default`: the language of a page that has no conversation to take it from."""
    for part in accept_language.split(","):
        tag = part.split(";")[0].strip().lower()
        if tag.startswith("zh"):
            return "zh"
        if tag.startswith("en"):
            return "en"
    return default


def echo(word: str, limit: int = ECHO_LIMIT) -> str:
    """A word the user typed, as an error repeats it: at most `limit` characters, ending in …
    when clipped (a pasted page is not echoed back whole)."""
    return word if len(word) <= limit else word[: limit - 1] + "…"


def _flatten(table: dict[str, Any], prefix: str = "") -> dict[str, str]:
    out: dict[str, str] = {}
    for key, value in table.items():
        path = f"{prefix}{key}"
        if isinstance(value, dict):
            out.update(_flatten(value, path + "."))
        else:
            out[path] = str(value)
    return out


@cache
def catalogue(lang: str) -> dict[str, str]:
    """The flat key → template map of one language."""
    if lang not in LANGS:
        lang = DEFAULT_LANG
    raw = resources.files(__name__).joinpath(f"{lang}.toml").read_text(encoding="utf-8")
    return _flatten(tomllib.loads(raw))


def text(lang: str | None, key: str, /, **fields: Any) -> str:
    """The sentence `key` in `lang`, its `{fields}` filled in."""
    template = catalogue(lang or DEFAULT_LANG)[key]
    return template.format(**fields) if fields else template


class Phrase(str):
    """A catalogue sentence not yet tied to a language: it reads as English where a plain string
    is expected (logs, `str(exc)`, the CLI without `--lang`), and `say(lang)` tells it again in
    the language of whoever reads it. Errors are raised far from where the reader's language is
    known (a date parser, a repository lookup), so they carry a Phrase instead of a sentence:

        raise UsageError(phrase("errors.bad_date", value=token))
        ... later, where the channel's language is known:  localize(exc, lang)
    """

    key: str
    fields: dict[str, Any]

    def __new__(cls, key: str, fields: dict[str, Any]) -> Phrase:
        obj = super().__new__(cls, _fill("en", key, fields))
        obj.key = key
        obj.fields = fields
        return obj

    def say(self, lang: str | None) -> str:
        return _fill(lang, self.key, self.fields)

    def __reduce__(self):  # pickled and copied as key + fields, not as the English text
        return Phrase, (self.key, self.fields)


class OneOf(tuple):
    """Choices named in a sentence, joined with the reader's "or": `OneOf(("zh", "en"))`."""

    def say(self, lang: str | None) -> str:
        return text(lang, "common.or").join(self)


class Count:
    """A number with its noun, told in the reader's language: `Count(3, "counts.file")` is
    "3 files" / "3 个文件". The noun's forms are the keys `<noun>.one` and `<noun>.other` of the
    catalogue, `{n}` the number (Chinese has one form: both keys hold it)."""

    __slots__ = ("n", "noun")

    def __init__(self, n: int, noun: str):
        self.n, self.noun = n, noun

    def say(self, lang: str | None) -> str:
        return text(lang, f"{self.noun}.{'one' if self.n == 1 else 'other'}", n=f"{self.n:,}")

    def __repr__(self) -> str:
        return f"Count({self.n!r}, {self.noun!r})"


def _fill(lang: str | None, key: str, fields: dict[str, Any]) -> str:
    # A field may itself say something (a Phrase inside a notice, OneOf, Count, a list of names):
    # it is told in the same language as the sentence around it.
    return text(lang, key, **{k: v.say(lang) if hasattr(v, "say") else v for k, v in fields.items()})


def phrase(key: str, /, **fields: Any) -> Phrase:
    """The sentence `key` with its fields, to be said later in the reader's language."""
    return Phrase(key, fields)


def localize(message: object, lang: str | None) -> str:
    """`message` (a Phrase, an exception raised with one, or anything else) in `lang`; text that
    never came from the catalogue is returned as it is."""
    if isinstance(message, BaseException):
        message = message.args[0] if len(message.args) == 1 else str(message)
    if isinstance(message, Phrase):
        return message.say(lang)
    return str(message)
