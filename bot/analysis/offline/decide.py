"""Combining what the evidence modules conclude: facts into a level and its reason, risks into the
five most serious (or one generic line), insights into three lines. No rules live here — every
condition is in an evidence module; this only orders, picks and joins."""

from __future__ import annotations

from ...core.models import Importance, Insights
from ...i18n import text
from .context import Context, Fact
from .evidence import behaviour, breaking, dependencies, release, removal, scope, security, size
from .lang import lower_first
from .learned import weigh

# The evidence modules whose facts, risks and insights are combined (scope only sets ceilings).
KINDS = (breaking, security, removal, behaviour, dependencies, release, size)

MAX_RISKS = 5


def facts(c: Context) -> list[Fact]:
    """Every fact that fired, in the order they are named."""
    return sorted((f for kind in KINDS for f in kind.facts(c)), key=lambda f: f.order)


def decide_importance(c: Context, zh: bool) -> tuple[Importance, str]:
    """The most serious level any fact asks for, unless a ceiling (or floor) overrides it; the
    reason names up to two specific facts at that level — size only speaks when nothing more
    specific does — or, when no rule fired, the baseline."""
    found = facts(c)
    cap = scope.ceiling(c, security.exempts_ci(c), security.pipeline_hardening(c), dependencies.dev_only(c))
    level, reason = _by_rules(c, found, cap, zh)
    learned = weigh(c, found, cap, level)
    return (learned.level, learned.text(zh)) if learned else (level, reason)


def _by_rules(c: Context, found: list[Fact], cap: Fact | None, zh: bool) -> tuple[Importance, str]:
    level = min((f.level for f in found), key=lambda i: i.rank, default=Importance.LOW)
    if cap is not None and not cap.floor and level.rank <= cap.level.rank:
        return cap.level, cap.text(zh)
    if cap is not None and cap.floor and cap.level.rank < level.rank:
        return cap.level, cap.text(zh)
    at_level = [f for f in found if f.level is level]
    specific = [f for f in at_level if not f.size]
    decisive = (specific or at_level)[:2]
    if not decisive:
        return Importance.LOW, scope.baseline(c).text(zh)
    texts = [f.text(zh) for f in decisive]
    if not zh:  # an English clause after the semicolon goes on in lower case; Chinese has no case
        texts = [texts[0]] + [lower_first(t) for t in texts[1:]]
    return level, _clause_sep(zh).join(texts)


def _clause_sep(zh: bool) -> str:
    """What joins two clauses of one line: "；" / "; "."""
    return text("zh" if zh else "en", "offline.prose.clause_sep")


def collect_risks(c: Context, zh: bool) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(risks, recommendations), paired, most serious first. Each names the concrete thing that
    may break; a generic line speaks only when nothing specific does, and then only the first."""
    found = sorted((r for kind in KINDS for r in kind.risks(c)), key=lambda r: r.order)
    chosen = [r for r in found if not r.fallback] or [r for r in found if r.fallback][:1]
    pairs = [r.text(zh) for r in chosen[:MAX_RISKS]]
    return tuple(risk for risk, _ in pairs), tuple(rec for _, rec in pairs)


def collect_insights(c: Context, zh: bool) -> Insights:
    notes = sorted((i for kind in KINDS for i in kind.insights(c)), key=lambda i: i.order)
    sep = _clause_sep(zh)

    def line(aspect: str) -> str:
        return sep.join(i.text(zh) for i in notes if i.aspect == aspect)

    return Insights(architecture=line("architecture"), performance=line("performance"), security=line("security"))
