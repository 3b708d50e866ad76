"""The day's headline: 3–5 bullets on what matters and what may break.

With an LLM: one extra call over the day's analyses (compact: importance, type, title, reason,
risks — most important first, as many as fit the prompt budget). Without one, or when that call
fails in any way, the same bullets are built from the analyses by rule.
"""
from __future__ import annotations

import logging
from collections import Counter
from typing import Sequence

from ..diffs import estimate_tokens
from ..models import DigestEntry, Importance
from ..prompts import Prompts
from ..redact import redact_text
from .analyze import InvalidAnswer, clip, defang, parse_answer
from .llm import LLM, LLMError

log = logging.getLogger(__name__)

JOB = "day_headline"
MAX_BULLETS = 5
ITEM_BULLETS = 4  # leaves room for the risks bullet
MIN_ITEMS = 3
HEADLINE_MAX_TOKENS = 1024
PROMPT_MARGIN_TOKENS = 200
TITLE_CHARS = 150
REASON_CHARS = 200
RISK_CHARS = 150
RISKS_PER_COMMIT = 2
SUMMARY_CHARS = 240
RISKS_IN_BULLET = 3


async def headline(llm: LLM | None, prompts: Prompts, entries: Sequence[DigestEntry],
                   lang: str) -> tuple[list[str], str]:
    """(bullets, origin): origin is "llm" or "offline". An empty day has no bullets."""
    if not entries:
        return [], "offline"
    if llm is None:
        return offline_headline(entries, lang), "offline"
    try:
        prompt = headline_prompt(prompts, entries, lang, llm.max_prompt_tokens)
        completion = await llm.complete(prompt.messages(),
                                        max_tokens=min(llm.max_output_tokens, HEADLINE_MAX_TOKENS))
        if completion.finish_reason == "length":
            raise InvalidAnswer("the answer was cut off")
        return parse_bullets(completion.text), "llm"
    except (LLMError, InvalidAnswer) as exc:
        log.warning("day headline: rule-based bullets instead (%s)", exc)
        return offline_headline(entries, lang), "offline"


# --- LLM ---------------------------------------------------------------------------------------

def by_importance(entries: Sequence[DigestEntry]) -> list[DigestEntry]:
    """High first; unanalysed entries last; the digest's order (newest first) within a level."""
    return sorted(entries, key=lambda e: e.analysis.importance.rank if e.analysis else 3)


def compact_line(entry: DigestEntry) -> str:
    """`- [high] feature | title | summary: … | why: … | risks: a; b` — one line per commit for
    the prompt, marked `bot author` when a bot (Renovate, Dependabot) wrote the commit."""
    title = clip(entry.commit.title, TITLE_CHARS)
    a = entry.analysis
    bot = " | bot author" if entry.commit.author.lower().endswith(("[bot]", "-bot", " bot")) else ""
    if a is None:
        return defang(redact_text(f"- [not analysed] {title}{bot}"))
    parts = [f"- [{a.importance.value}] {a.change_type.value} | {title}{bot}"]
    if a.summary:
        parts.append(f"summary: {clip(' '.join(a.summary.split()), SUMMARY_CHARS)}")
    parts.append(f"why: {clip(a.importance_reason, REASON_CHARS)}")
    if a.risks:
        parts.append("risks: " + "; ".join(clip(r, RISK_CHARS) for r in a.risks[:RISKS_PER_COMMIT]))
    return defang(redact_text(" | ".join(parts)))


def headline_prompt(prompts: Prompts, entries: Sequence[DigestEntry], lang: str, max_tokens: int):
    """The rendered prompt listing as many commits (most important first) as fit `max_tokens`."""
    ordered = by_importance(entries)
    repo = defang(entries[0].commit.repo)

    def render(lines: list[str]):
        return prompts.render(JOB, lang, repo=repo, count=len(entries), listed=len(lines),
                              commits="\n".join(lines))

    empty = render([])
    room = max_tokens - estimate_tokens(empty.system) - estimate_tokens(empty.user) - PROMPT_MARGIN_TOKENS
    lines: list[str] = []
    for entry in ordered:
        line = compact_line(entry)
        cost = estimate_tokens(line + "\n")
        if cost > room and lines:
            break
        lines.append(line)
        room -= cost
    return render(lines)


def parse_bullets(text: str) -> list[str]:
    """The `bullets` of the answer: non-empty strings, list markers stripped, at most five."""
    data = parse_answer(text)
    raw = data.get("bullets")
    if not isinstance(raw, list) or not all(isinstance(b, str) for b in raw):
        raise InvalidAnswer('"bullets" must be a list of strings')
    bullets = [b.strip().lstrip("-•*·").strip() for b in raw]
    bullets = [b for b in bullets if b]
    if not bullets:
        raise InvalidAnswer('"bullets" is empty')
    return bullets[:MAX_BULLETS]


# --- offline -----------------------------------------------------------------------------------

def offline_headline(entries: Sequence[DigestEntry], lang: str) -> list[str]:
    """High items (title: reason), topped up with medium ones to three, then the main risks."""
    if not entries:
        return []
    zh = lang == "zh"
    high = [e for e in entries if e.analysis and e.analysis.importance is Importance.HIGH]
    medium = [e for e in entries if e.analysis and e.analysis.importance is Importance.MEDIUM]
    bullets: list[str] = []
    if len(high) > ITEM_BULLETS:
        shown = high[:ITEM_BULLETS - 1]
        more = len(high) - len(shown)
        bullets = [_item(e, zh) for e in shown]
        bullets.append(f"另有 {more} 项高重要性变更，见下文。" if zh
                       else f"{more} more high-importance changes below.")
    else:
        items = high + medium[:max(0, MIN_ITEMS - len(high))]
        bullets = [_item(e, zh) for e in items]
    if not bullets and any(e.analysis for e in entries):
        bullets.append(_quiet_day(entries, zh))
    risks = _risks_bullet(high + medium, zh)
    if risks:
        bullets.append(risks)
    unanalysed = sum(1 for e in entries if e.analysis is None)
    if unanalysed and len(bullets) < MAX_BULLETS:
        bullets.append(f"{unanalysed} 个提交未能分析，见下文。" if zh
                       else f"{unanalysed} commit(s) could not be analysed; see below.")
    return bullets[:MAX_BULLETS]


def _item(entry: DigestEntry, zh: bool) -> str:
    title = clip(entry.commit.title, TITLE_CHARS).rstrip("。.")
    reason = clip(entry.analysis.importance_reason, REASON_CHARS)
    return f"{title}：{reason}" if zh else f"{title}: {reason}"


def _quiet_day(entries: Sequence[DigestEntry], zh: bool) -> str:
    """A day without high or medium changes, in one bullet: how many, and of what kind."""
    analysed = [e for e in entries if e.analysis]
    kinds = Counter(e.analysis.change_type for e in analysed)
    labels = [t.label("zh" if zh else "en") for t, _ in kinds.most_common(3)]
    if zh:
        return f"{len(analysed)} 个提交，均为低重要性" + (f"：{'、'.join(labels)}。" if labels else "。")
    return f"{len(analysed)} commit(s), all low importance" + (f": {', '.join(labels).lower()}." if labels else ".")


def _risks_bullet(entries: Sequence[DigestEntry], zh: bool) -> str:
    seen: set[str] = set()
    risks: list[str] = []
    for entry in entries:
        for risk in entry.analysis.risks:
            text = clip(risk, RISK_CHARS).rstrip("。.;；")
            if text and text.lower() not in seen:
                seen.add(text.lower())
                risks.append(text)
    risks = risks[:RISKS_IN_BULLET]
    if not risks:
        return ""
    return f"主要风险：{'；'.join(risks)}。" if zh else f"Main risks: {'; '.join(risks)}."
