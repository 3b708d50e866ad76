"""The day's headline: 3–5 bullets on what matters and what may break.

With an LLM: one extra call over the day's analyses (compact: importance, type, title, reason,
risks — most important first, as many as fit the prompt budget), treated like an analysis: its
schema (`{"bullets": [string]}`) sent down the same structured-output ladder, the answer checked
(a list of strings; "None"-like and placeholder bullets dropped; copied instructions refused),
one corrective retry, a context-length error answered by a smaller list. Without an LLM the
bullets are built from the analyses by rule; when the LLM was asked and failed, the rule-based
bullets are marked as a fallback, with a notice in the digest and a line on the CLI's stderr.
"""

from __future__ import annotations

import logging
import re
from collections import Counter
from collections.abc import Sequence
from typing import Any

from ..core.models import DigestEntry, Importance
from ..core.prompts import Prompts, RenderedPrompt
from ..diffs.tokens import estimate_tokens
from ..i18n import text
from ..redact import redact_text
from .answer_schema import InvalidAnswer, copies_prompt, is_none_like, language_problem, normalise, parse_answer
from .language import wrong_language
from .llm.client import LLM
from .llm.endpoint import CONTEXT_RETRIES
from .llm.responses import ContextLengthError, LLMError
from .prompt_text import clip, defang

log = logging.getLogger(__name__)

JOB = "day_headline"
SCHEMA_NAME = "day_headline"
MAX_BULLETS = 5
ITEM_BULLETS = 4  # leaves room for the risks bullet
MIN_ITEMS = 3
# What the answer needs: five bullets of at most 30 words (a 1.5B model used 363 tokens); the
# request may ask for more when the window leaves it, never more than HEADLINE_MAX_TOKENS.
HEADLINE_OUTPUT_TOKENS = 640
HEADLINE_MAX_TOKENS = 1024
PROMPT_MARGIN_TOKENS = 200
TITLE_CHARS = 150
REASON_CHARS = 200
RISK_CHARS = 150
RISKS_PER_COMMIT = 2
SUMMARY_CHARS = 240
RISKS_IN_BULLET = 3
FALLBACK_REASONS = ("timeout", "unreachable", "http_error", "context", "rejected")

RETRY_JOB = "headline_retry"  # the corrective message after a rejected answer: prompts/headline_retry.{lang}.j2


def headline_schema() -> dict[str, Any]:
    """The answer's JSON schema (strict-mode shaped, like the analysis schema)."""
    return {
        "type": "object",
        "properties": {"bullets": {"type": "array", "items": {"type": "string"}}},
        "required": ["bullets"],
        "additionalProperties": False,
    }


async def headline(
    llm: LLM | None, prompts: Prompts, entries: Sequence[DigestEntry], lang: str
) -> tuple[list[str], str, str]:
    """(bullets, origin, fallback reason): origin is "llm", "offline" (no LLM configured) or
    "fallback" (the LLM failed; the reason is one of FALLBACK_REASONS). An empty day has no bullets."""
    if not entries:
        return [], "offline", ""
    if llm is None:
        return offline_headline(entries, lang), "offline", ""
    try:
        for refused in range(CONTEXT_RETRIES + 1):
            try:
                return await _ask(llm, prompts, entries, lang), "llm", ""
            except ContextLengthError as exc:
                if refused == CONTEXT_RETRIES:
                    raise
                # The endpoint said how big its window is (the estimate is corrected): list fewer commits.
                log.info("day headline: %s Asking again with fewer commits.", exc)
    except LLMError as exc:
        if exc.kind == "budget":  # the month's tokens are spent: the digest says so once (bot/analysis/cost.py)
            return offline_headline(entries, lang), "offline", ""
        reason, why = exc.kind if exc.kind in FALLBACK_REASONS else "http_error", str(exc)
    except InvalidAnswer as exc:
        reason, why = "rejected", str(exc)
    log.warning("day headline: rule-based bullets instead (%s)", why)
    return offline_headline(entries, lang), "fallback", reason


def headline_notice(reason: str, lang: str) -> str:
    """The digest's notice when the LLM was asked for the headline and failed."""
    return text(lang, "llm_headline.notice", why=text(lang, f"llm_headline.why_{reason}"))


def headline_cli_line(reason: str, lang: str = "en") -> str:
    """The CLI's stderr line for the same (in the run's language, like the CLI's other lines)."""
    return text(lang, "llm_headline.cli", why=text(lang, f"llm_headline.cli_{reason}"))


async def _ask(llm: LLM, prompts: Prompts, entries: Sequence[DigestEntry], lang: str) -> list[str]:
    """The checked bullets, after at most one corrective retry; InvalidAnswer otherwise."""
    await llm.recall()
    prompt = headline_prompt(prompts, entries, lang, llm.prompt_budget(HEADLINE_OUTPUT_TOKENS))
    messages = prompt.messages()
    for attempt in range(2):
        completion = await llm.complete(
            messages,
            max_tokens=min(llm.max_output_tokens, HEADLINE_MAX_TOKENS),
            schema=headline_schema(),
            schema_name=SCHEMA_NAME,
        )
        try:
            if completion.finish_reason == "length":
                raise InvalidAnswer("the answer was cut off at the output limit", "cut_off")
            if not completion.text.strip():  # still blank after the client's re-asks
                raise InvalidAnswer("the answer was blank every time it was asked", "empty")
            return parse_bullets(completion.text, prompt, lang)
        except InvalidAnswer as exc:
            if attempt or exc.code == "empty":
                raise
            feedback = prompts.render(RETRY_JOB, _lang(lang), cut_off=exc.code == "cut_off", reason=str(exc))
            log.info("day headline: answer rejected (%s); retrying once", exc)
            messages = messages + [{"role": "user", "content": feedback.user}]
    raise AssertionError("unreachable")


def _lang(lang: str) -> str:
    return "zh" if lang == "zh" else "en"


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
        return prompts.render(JOB, lang, repo=repo, count=len(entries), listed=len(lines), commits="\n".join(lines))

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


def parse_bullets(answer: str, prompt: RenderedPrompt | None = None, lang: str | None = None) -> list[str]:
    """The `bullets` of the answer: strings, list markers stripped, "None"-like ones dropped, at
    most five; none left, one that copies the prompt's placeholder, instructions or one of its
    commit rows, or bullets not in `lang`, are refused."""
    data = parse_answer(answer, expect=("bullets",))
    raw = data.get("bullets")
    if not isinstance(raw, list) or not all(isinstance(b, str) for b in raw):
        raise InvalidAnswer('"bullets" must be a list of strings, not objects or a single text')
    bullets = [b.strip().lstrip("-•*·").strip() for b in raw]
    bullets = [b for b in bullets if b and not is_none_like(b)]
    if not bullets:
        raise InvalidAnswer('"bullets" is empty')
    if prompt is not None and any(copies_prompt(b, prompt.system) for b in bullets):
        raise InvalidAnswer(
            "a bullet copies the prompt's placeholder or instructions instead of summarising the commits", "placeholder"
        )
    if prompt is not None and any(copies_row(b, prompt.user) for b in bullets):
        raise InvalidAnswer(
            "a bullet copies a commit's row from the list instead of saying what matters in a sentence of your own",
            "copied_row",
        )
    if lang and wrong_language("\n".join(bullets), lang):
        raise InvalidAnswer(language_problem("bullets", lang), "wrong_language")
    return bullets[:MAX_BULLETS]


# A row's own structure: `[medium] feature | title | summary: … | why: … | risks: …`.
_ROW_MARKS = re.compile(
    r"^\s*\[(?:high|medium|low|not analysed)\]|\|\s*(?:summary|why|risks)\s*:|\|\s*bot author\b", re.I
)
ROW_COPY_WORDS = 8  # a verbatim run this long (beyond the title) is a copied row
ROW_COPY_CJK = 20


def copies_row(bullet: str, rows: str) -> bool:
    """True when a bullet is one of the prompt's commit rows (or most of one) rather than a
    sentence of the model's own: it keeps a row's markers (`[medium] feature |`, `| why:`), or
    repeats a long run of a row's text beyond its title (a summary or reason copied whole)."""
    if _ROW_MARKS.search(bullet):
        return True
    said = normalise(bullet)
    if not said or said not in normalise(rows):
        return False
    titles = (line.split(" | ")[1] for line in rows.splitlines() if line.count(" | ") >= 1)
    if any(said in normalise(title) for title in titles):
        return False  # a title named as the point is the model's choice, not a copied row
    cjk = sum(1 for ch in said if "\u3400" <= ch <= "\u9fff")
    return cjk >= ROW_COPY_CJK or len(said.split()) >= ROW_COPY_WORDS


# --- offline -----------------------------------------------------------------------------------


def offline_headline(entries: Sequence[DigestEntry], lang: str) -> list[str]:
    """High items (title: reason), topped up with medium ones to three, then the main risks."""
    if not entries:
        return []
    lang = _lang(lang)
    high = [e for e in entries if e.analysis and e.analysis.importance is Importance.HIGH]
    medium = [e for e in entries if e.analysis and e.analysis.importance is Importance.MEDIUM]
    bullets: list[str] = []
    if len(high) > ITEM_BULLETS:
        shown = high[: ITEM_BULLETS - 1]
        more = len(high) - len(shown)
        bullets = [_item(e, lang) for e in shown]
        bullets.append(text(lang, "headline.more_high_below", n=more))
    else:
        items = high + medium[: max(0, MIN_ITEMS - len(high))]
        bullets = [_item(e, lang) for e in items]
    if not bullets and any(e.analysis for e in entries):
        bullets.append(_quiet_day(entries, lang))
    risks = _risks_bullet(high + medium, lang)
    if risks:
        bullets.append(risks)
    unanalysed = sum(1 for e in entries if e.analysis is None)
    if unanalysed and len(bullets) < MAX_BULLETS:
        bullets.append(text(lang, "headline.not_analysed_below", n=unanalysed))
    return bullets[:MAX_BULLETS]


def _item(entry: DigestEntry, lang: str) -> str:
    title = entry.commit.title.rstrip("。.")  # as written: a title is never cut to a fragment
    reason = clip(entry.analysis.importance_reason if entry.analysis else "", REASON_CHARS)
    return text(lang, "headline.item", title=title, reason=reason)


def _quiet_day(entries: Sequence[DigestEntry], lang: str) -> str:
    """A day without high or medium changes, in one bullet: how many, and of what kind."""
    analysed = [e.analysis for e in entries if e.analysis]
    kinds = Counter(a.change_type for a in analysed)
    labels = [t.label(lang) for t, _ in kinds.most_common(3)]  # called when some are analysed
    listed = text(lang, "headline.kinds_sep").join(labels)
    if lang == "en":  # English names the kinds mid-sentence, in lower case; Chinese has no case
        listed = listed.lower()
    return text(lang, "headline.all_low", n=len(analysed), kinds=listed)


def _risks_bullet(entries: Sequence[DigestEntry], lang: str) -> str:
    seen: set[str] = set()
    risks: list[str] = []
    for analysis in (e.analysis for e in entries if e.analysis):  # high and medium: all analysed
        for risk in analysis.risks:
            item = clip(risk, RISK_CHARS).rstrip("。.;；")
            # "None" is no risk (answers validated before that rule, still in the cache, may say it)
            if item and not is_none_like(item) and item.lower() not in seen:
                seen.add(item.lower())
                risks.append(item)
    risks = risks[:RISKS_IN_BULLET]
    if not risks:
        return ""
    return text(lang, "headline.main_risks", risks=text(lang, "headline.risks_sep").join(risks))
