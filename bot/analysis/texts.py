"""An analysis in several languages: what is language-neutral (the level, the type, provenance,
coverage, the counts) is decided once; what a reader reads (the reason, summary, impact,
insights, risks, recommendations) is written in each language the repository is read in.

Two ways to get a second language's texts, both cheaper than a second analysis:
- in the same call as the analysis, when the languages are known in advance: the answer carries
  them under `translations` (the schema below; prompts/analyze_commit.*.j2 asks for it);
- later, for a language asked after the analysis was made: the texts alone, translated in
  batches (bot/analysis/translate.py), as a flat list of strings per commit.

Either way the texts pass the checks an answer's texts pass (the prompt not copied, a summary
that says something, the reader's language); a language that fails is left out and made again
(translated) later, never shown half right.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from ..core.models import Analysis, Commit, Insights
from ..i18n import phrase
from .answer_schema import (
    ANSWER_FIELDS,
    INSIGHT_KEYS,
    InvalidAnswer,
    answer_schema,
    echoed_field,
    foreign_field,
    language_problem,
    repeats_title,
    summary_too_short,
    validate_answer,
)

TEXT_FIELDS = tuple(f for f in ANSWER_FIELDS if f.kind != "enum")  # what a reader reads
TRANSLATIONS = "translations"


def texts_schema() -> dict[str, Any]:
    """The schema of one language's texts: the answer's schema without its enums."""
    full = answer_schema()
    keys = [f.key for f in TEXT_FIELDS]
    return {
        "type": "object",
        "properties": {k: full["properties"][k] for k in keys},
        "required": keys,
        "additionalProperties": False,
    }


def joint_schema(also: Sequence[str]) -> dict[str, Any]:
    """The answer's schema with the other languages' texts under `translations` (strict-mode
    shaped, as answer_schema())."""
    schema = answer_schema()
    if not also:
        return schema
    schema["properties"][TRANSLATIONS] = {
        "type": "object",
        "properties": {lang: texts_schema() for lang in also},
        "required": list(also),
        "additionalProperties": False,
    }
    schema["required"] = [*schema["required"], TRANSLATIONS]
    return schema


def with_texts(base: Analysis, data: Any) -> Analysis:
    """`base` with its reader-facing texts taken from `data` (one language's texts), validated
    as an answer's are; InvalidAnswer when they are not an object of texts."""
    if not isinstance(data, dict):
        raise InvalidAnswer(phrase("llm_path.translation_missing"), "translation")
    fields = {f.key: data.get(f.key) for f in TEXT_FIELDS}
    made = validate_answer({"change_type": base.change_type.value, "importance": base.importance.value, **fields})
    return _texts_into(base, made)


def check_texts(analysis: Analysis, commit: Commit, our_text: str, lang: str) -> None:
    """The checks of an answer that concern its texts alone (the level and type were checked
    with the analysis): no copied prompt, a summary that says something, a reason that is not
    the title, every text in `lang`."""
    if (key := echoed_field(analysis, our_text)) is not None:
        raise InvalidAnswer(phrase("llm_path.copies_prompt", key=key), "placeholder")
    if summary_too_short(analysis.summary):
        raise InvalidAnswer(phrase("llm_path.summary_too_short"), "summary_too_short")
    if repeats_title(analysis.importance_reason, commit):
        raise InvalidAnswer(phrase("llm_path.reason_is_title"), "reason_is_title")
    if (key := foreign_field(analysis, lang)) is not None:
        raise InvalidAnswer(language_problem(key, lang), "wrong_language")


# --- flat texts (the later path's batches) ------------------------------------------------------


def flat_texts(analysis: Analysis) -> list[str]:
    """The analysis's non-empty texts in a fixed order: reason, summary, impact, the insights,
    the risks, the recommendations."""
    out = [analysis.importance_reason, analysis.summary, analysis.impact]
    out += [getattr(analysis.insights, k) for k in INSIGHT_KEYS]
    out += list(analysis.risks) + list(analysis.recommendations)
    return [t for t in out if t.strip()]


def from_flat(base: Analysis, texts: Sequence[str]) -> Analysis:
    """`base` with its non-empty texts replaced, in `flat_texts` order, by `texts` (which must be
    as many); InvalidAnswer otherwise."""
    wanted = len(flat_texts(base))
    if len(texts) != wanted or not all(isinstance(t, str) and t.strip() for t in texts):
        raise InvalidAnswer(phrase("llm_path.translation_count", n=wanted, got=len(texts)), "translation")
    given = iter(t.strip() for t in texts)

    def next_if(value: str) -> str:
        return next(given) if value.strip() else ""

    reason = next_if(base.importance_reason)
    summary = next_if(base.summary)
    impact = next_if(base.impact)
    insights = Insights(**{k: next_if(getattr(base.insights, k)) for k in INSIGHT_KEYS})
    risks = tuple(next_if(r) for r in base.risks if r.strip())
    recs = tuple(next_if(r) for r in base.recommendations if r.strip())
    return replace(
        base,
        importance_reason=reason,
        summary=summary,
        impact=impact,
        insights=insights,
        risks=risks,
        recommendations=recs,
    )


def _texts_into(base: Analysis, made: Analysis) -> Analysis:
    return replace(
        base,
        importance_reason=made.importance_reason,
        summary=made.summary,
        impact=made.impact,
        insights=made.insights,
        risks=made.risks,
        recommendations=made.recommendations,
    )
