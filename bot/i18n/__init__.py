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
from functools import lru_cache
from importlib import resources
from typing import Any

LANGS = ("zh", "en")
DEFAULT_LANG = "zh"


def _flatten(table: dict[str, Any], prefix: str = "") -> dict[str, str]:
    out: dict[str, str] = {}
    for key, value in table.items():
        path = f"{prefix}{key}"
        if isinstance(value, dict):
            out.update(_flatten(value, path + "."))
        else:
            out[path] = str(value)
    return out


@lru_cache(maxsize=None)
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
