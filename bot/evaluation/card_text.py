"""The model report card as a terminal table (`python -m bot eval`) or one JSON document (`--format json`)."""

from __future__ import annotations

import json
import unicodedata

from ..i18n import text
from ..taste.scores import LEVELS, Scores
from .card import Card, LLMColumn


def render_card_json(card: Card) -> str:
    return json.dumps(card.as_dict(), ensure_ascii=False, indent=2) + "\n"


def render_card_text(card: Card) -> str:
    lang = card.lang
    repos = ", ".join(f"{repo} {n}" for repo, n in card.repos.items())
    lines = [text(lang, "eval.title", commits=card.commits, labels=card.labels, repos=repos)]
    columns: list[tuple[str, Scores]] = []
    if card.llm is not None:
        c = card.llm
        lines.append(
            text(lang, "eval.endpoint", model=c.model, endpoint=c.endpoint, language=text(lang, "common.language_name"))
        )
        columns += [(text(lang, "eval.col_llm"), c.scores), (text(lang, "eval.col_rules"), c.rules_same)]
        if card.learned is not None:
            columns.append((text(lang, "eval.col_learned_all"), card.learned))
        if c.accepted < card.commits:
            columns.append((text(lang, "eval.col_rules_all"), card.rules))
    else:
        if card.learned is not None:
            columns.append((text(lang, "eval.col_learned_all"), card.learned))
        columns.append((text(lang, "eval.col_rules_all"), card.rules))
    lines += ["", *_table(lang, columns), ""]
    if card.llm is not None:
        lines += _cost(lang, card, card.llm)
        lines += [
            "",
            *_matrix(lang, text(lang, "eval.col_llm"), card.llm.scores),
            "",
            *_matrix(lang, text(lang, "eval.col_rules"), card.llm.rules_same),
        ]
    else:
        lines.append(text(lang, "eval.rules_time", wall=_duration(lang, card.rules_seconds)))
        lines += ["", *_matrix(lang, text(lang, "eval.col_rules"), card.rules)]
    if card.learned is not None:
        lines += ["", *_matrix(lang, text(lang, "eval.col_learned_all"), card.learned)]
    return "\n".join(lines) + "\n"


def _table(lang: str, columns: list[tuple[str, Scores]]) -> list[str]:
    rows = [
        ("row_commits", lambda s: str(s.n)),
        ("row_exact", lambda s: _share(s.exact, s.n)),
        ("row_kappa", lambda s: text(lang, "eval.na") if s.kappa != s.kappa else f"{s.kappa:.2f}"),
        ("row_above_low", lambda s: _share(s.above_low, s.n)),
        ("row_either", lambda s: _share(s.either_above_agree, s.either_above, total=True)),
        ("row_higher", lambda s: str(s.higher)),
        ("row_lower", lambda s: str(s.lower)),
    ]
    names = [text(lang, f"eval.{key}") for key, _ in rows]
    first = max(_width(n) for n in names)
    cells = [[fmt(scores) for _, scores in columns] for _, fmt in rows]
    widths = [max(_width(title), *(_width(r[i]) for r in cells)) for i, (title, _) in enumerate(columns)]
    out = [" " * first + "".join("  " + _rjust(title, w) for (title, _), w in zip(columns, widths))]
    for name, row in zip(names, cells):
        out.append(_ljust(name, first) + "".join("  " + _rjust(cell, w) for cell, w in zip(row, widths)))
    return out


def _cost(lang: str, card: Card, c: LLMColumn) -> list[str]:
    share = f"{c.accepted / card.commits:.0%}" if card.commits else "–"
    if c.fallbacks:
        reasons = ", ".join(f"{reason} {n}" for reason, n in c.fallbacks.items())
        accepted = text(
            lang, "eval.accepted_some", accepted=c.accepted, commits=card.commits, share=share, fallbacks=reasons
        )
    else:
        accepted = text(lang, "eval.accepted_all", accepted=c.accepted, commits=card.commits, share=share)
    per = c.run.seconds / card.commits if card.commits else 0.0
    cost = text(
        lang,
        "eval.cost",
        prompt=f"{c.run.prompt_tokens:,}",
        completion=f"{c.run.completion_tokens:,}",
        calls=c.run.calls,
        wall=_duration(lang, c.run.seconds),
        per_commit=_duration(lang, per),
        rules_wall=_duration(lang, card.rules_seconds),
    )
    return [accepted, cost]


def _matrix(lang: str, who: str, scores: Scores) -> list[str]:
    names = [text(lang, f"eval.level_{level}") for level in LEVELS]
    first = max(_width(n) for n in names)
    width = max(6, *(_width(n) for n in names))
    out = [text(lang, "eval.confusion", who=who), " " * first + "".join("  " + _rjust(n, width) for n in names)]
    for level, name in zip(LEVELS, names):
        out.append(_ljust(name, first) + "".join("  " + _rjust(str(scores.confusion[level][p]), width) for p in LEVELS))
    return out


def _share(part: int, whole: int, total: bool = False) -> str:
    if not whole:
        return "0/0" if total else "0"
    return f"{part}/{whole} ({part / whole:.0%})" if total else f"{part} ({part / whole:.0%})"


def _duration(lang: str, seconds: float) -> str:
    if seconds < 10:
        return text(lang, "eval.seconds", n=f"{seconds:.1f}")
    if seconds < 120:
        return text(lang, "eval.seconds", n=f"{seconds:.0f}")
    minutes, rest = divmod(round(seconds), 60)
    return text(lang, "eval.minutes", m=minutes, s=rest)


def _width(value: str) -> int:
    """Terminal columns: wide (CJK) characters take two."""
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in value)


def _ljust(value: str, width: int) -> str:
    return value + " " * (width - _width(value))


def _rjust(value: str, width: int) -> str:
    return " " * (width - _width(value)) + value
