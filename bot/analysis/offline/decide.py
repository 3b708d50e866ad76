"""Combining what the evidence modules conclude: facts into a level and its reason, risks into the
five most serious, insights into three lines. No rules live here — every condition is in an
evidence module; this only orders, picks and joins.

Each step is done twice over: once in no language (`judge`, `choose_risks`, `choose_insights`:
facts, risks and notes as catalogue phrases), then per language (`tell_reason`, `tell_risks`,
`tell_insights`), so a commit read for several languages is judged once.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ...core.models import Importance, Insights
from ...i18n import text
from .context import Context, Fact, Insight, Risk
from .evidence import behaviour, breaking, dependencies, release, removal, scope, security, size
from .lang import lower_first
from .learned import weigh

# The evidence modules whose facts, risks and insights are combined (scope only sets ceilings).
KINDS = (breaking, security, removal, behaviour, dependencies, release, size)

MAX_RISKS = 5


@dataclass(frozen=True)
class Verdict:
    """A level and the facts that decide it (one or two; a ceiling, the baseline or the learned
    profile's word when no specific fact does)."""

    level: Importance
    reasons: tuple[Fact, ...]


def facts(c: Context) -> list[Fact]:
    """Every fact that fired, in the order they are named."""
    return sorted((f for kind in KINDS for f in kind.facts(c)), key=lambda f: f.order)


def judge(c: Context) -> Verdict:
    """The most serious level any fact asks for, unless a ceiling (or floor) overrides it; the
    reason names up to two specific facts at that level — size only speaks when nothing more
    specific does — or, when no rule fired, the baseline. Then the repository's learned profile
    (learned.py) may move it."""
    found, cap, verdict = by_rules(c)
    learned = weigh(c, found, cap, verdict.level)
    return Verdict(learned.level, (learned,)) if learned else verdict


def by_rules(c: Context) -> tuple[list[Fact], Fact | None, Verdict]:
    """(the facts that fired, the ceiling, the rules' own verdict) before any learned profile:
    what learned.py weighs, and what bench/cv_prior.py reads as a commit's evidence."""
    found = facts(c)
    cap = scope.ceiling(
        c, security.exempts_ci(c), security.pipeline_hardening(c), dependencies.dev_only(c), release.ships_release(c)
    )
    return found, cap, _by_rules(c, found, cap)


def _by_rules(c: Context, found: list[Fact], cap: Fact | None) -> Verdict:
    level = min((f.level for f in found), key=lambda i: i.rank, default=Importance.LOW)
    if cap is not None and not cap.floor and level.rank <= cap.level.rank:
        return Verdict(cap.level, (cap,))
    if cap is not None and cap.floor and cap.level.rank < level.rank:
        return Verdict(cap.level, (cap,))
    at_level = [f for f in found if f.level is level]
    specific = [f for f in at_level if not f.size]
    decisive = (specific or at_level)[:2]
    if not decisive:
        return Verdict(Importance.LOW, (scope.baseline(c),))
    return Verdict(level, tuple(decisive))


def tell_reason(verdict: Verdict, lang: str) -> str:
    texts = [f.said.say(lang) for f in verdict.reasons]
    if lang != "zh":  # an English clause after the semicolon goes on in lower case; Chinese has no case
        texts = [texts[0]] + [lower_first(t) for t in texts[1:]]
    return _clause_sep(lang).join(texts)


def decide_importance(c: Context, zh: bool) -> tuple[Importance, str]:
    verdict = judge(c)
    return verdict.level, tell_reason(verdict, "zh" if zh else "en")


def _clause_sep(lang: str) -> str:
    """What joins two clauses of one line: "；" / "; "."""
    return text(lang, "offline.prose.clause_sep")


def choose_risks(c: Context) -> list[Risk]:
    """The risks to show, most serious first, each once. Each names the concrete thing that may
    break; a fallback (one that names no specific change) speaks only when nothing specific does,
    and then only the first — no risk at all beats a generic one."""
    found = sorted((r for kind in KINDS for r in kind.risks(c)), key=lambda r: r.order)
    chosen = [r for r in found if not r.fallback] or [r for r in found if r.fallback][:1]
    seen: set[str] = set()
    unique = []
    for r in chosen:
        if str(r.risk) not in seen:  # the same sentence from two rules (two release edits) is said once
            seen.add(str(r.risk))
            unique.append(r)
    return unique[:MAX_RISKS]


def tell_risks(risks: Sequence[Risk], lang: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(risks, recommendations) in `lang`; a recommendation two risks share is given once."""
    said = tuple(r.risk.say(lang) for r in risks)
    advice = {str(r.advice): r.advice for r in risks}  # by the phrase, so each language gives as many
    return said, tuple(a.say(lang) for a in advice.values())


def collect_risks(c: Context, zh: bool) -> tuple[tuple[str, ...], tuple[str, ...]]:
    return tell_risks(choose_risks(c), "zh" if zh else "en")


def choose_insights(c: Context) -> list[Insight]:
    return sorted((i for kind in KINDS for i in kind.insights(c)), key=lambda i: i.order)


def tell_insights(notes: Sequence[Insight], lang: str) -> Insights:
    sep = _clause_sep(lang)

    def line(aspect: str) -> str:
        return sep.join(i.said.say(lang) for i in notes if i.aspect == aspect)

    return Insights(architecture=line("architecture"), performance=line("performance"), security=line("security"))


def collect_insights(c: Context, zh: bool) -> Insights:
    return tell_insights(choose_insights(c), "zh" if zh else "en")
