"""Offline, rule-based commit analysis.

Used when no LLM is configured, and as the fallback when the LLM fails for one commit. Pure code,
no I/O. It improves on the reference tool's score (see notes/anchors.md) in four ways:
- the change type comes from conventional prefixes, vLLM-style bracket tags in any position,
  verbs and the files touched, into the one closed `ChangeType` list;
- size is measured on source code only: tests, docs, lockfiles, generated and vendored files
  never make a commit look important;
- the decisive facts (removed files and APIs, breaking markers, security, reverts, dependency
  majors, config defaults, CLI flags, build files) are read from titles, bodies, paths and patches;
- every level comes with `importance_reason`, one sentence naming those facts.

The package reads a commit in stages: paths.py (what kind of file each path is — the one path
classifier, bot/core/file_kinds.py, also used by the LLM prompt's diff order), title.py and
message.py (the message), patch.py (each patch split once; diff scanners; docstrings.py: where a hunk begins inside one) and scan.py (one pass
over the patches: definitions, flags, tests, docs sections), observe.py (what the patches show),
change_type.py; then evidence/ (one module per kind of evidence: facts, risks, insights; a word of
the message is a hint the diff has to bear out), decide.py (combines them into a level, holding no
rules of its own), said.py (the summary: what the diff does, by name) and prose.py (the impact).

It works in two steps: `read_offline` works everything out once, in no language (a `Reading` of
catalogue phrases); `tell_offline` says it in one. `analyse_offline` does both for one language.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ...core.models import Analysis, Commit, Coverage, FileChange, Importance, Insights, Judgement
from ...i18n import Phrase
from ..repo_config import RepoProfile
from .change_type import decide_change_type
from .context import Context, DiffFacts, Fact, Insight, Risk
from .decide import (
    Verdict,
    choose_insights,
    choose_risks,
    collect_insights,
    collect_risks,
    decide_importance,
    judge,
    tell_insights,
    tell_reason,
    tell_risks,
)
from .evidence.dependencies import dependency_updates, is_major_bump
from .lang import is_zh
from .message import first_paragraph, first_paragraphs, split_sentences, whole_sentences
from .observe import diff_facts
from .paths import NON_RUNTIME, FileKind, classify_path
from .prose import audiences, build_impact, tell_impact
from .said import build_summary, summary_parts, tell_summary
from .stats import FileStats, file_stats
from .title import TitleInfo, parse_title

# Part of the analysis cache key: bump whenever a rule or a sentence changes.
# 3.6: a field removed from a public config class, a minimum version newly asserted at run time, a new limit flag with a default that refuses larger input (high; round 8)
# 3.5: install extras dropped (high) or changed (medium), a minimum version checked at run time raised (high), a change of no named kind medium from 6 lines of shipped code (round 7)
# 3.4: highs from the diff: a dependency floor above every install of the old requirement, removed API the docs showed, names dropped from a top package's exports, a public function's returned tuple grown (round 6)
# 3.3: a hunk opening inside a docstring shows its code; `prototype/` code is experimental; a change of no named kind is medium from 8 lines of shipped code; behaviour unchanged "for the common path" is no refactor (round 5)
# 3.2: a field's changed default is high, deprecations and removals at the end of one, clearer errors, experimental code (round 3)
# 3.1: a fix, feature or speed-up of shipped code is medium (a guess the profile weighs), round 2's misfires
# 3.0: summaries from the diff, levels from evidence (words are hints), risks of the commit
RULES_VERSION = "3.6"


def read_context(
    commit: Commit,
    files: Sequence[FileChange],
    profile: RepoProfile | None = None,
    judgement: Judgement | None = None,
) -> Context:
    """Everything the rules know about one commit once its message and patches are read (each
    patch once): the parsed title, the file statistics, the diff's facts and the change type."""
    title = parse_title(commit.title, commit.body)
    stats = file_stats(commit, files)
    profile = profile or RepoProfile.inferred()
    diff = diff_facts(stats, title, profile)
    return Context(commit, title, stats, diff, decide_change_type(commit, title, stats, diff), profile, judgement)


@dataclass(frozen=True)
class Reading:
    """One commit as the rules read it, in no language yet: the level and the facts deciding it,
    what the summary names, who is affected, and — above low — insights and risks. `tell_offline`
    says it in a language; reading once serves every language a commit is shown in."""

    context: Context
    verdict: Verdict
    summary: tuple[Phrase, ...]
    audiences: tuple[Phrase, ...] = ()
    insights: tuple[Insight, ...] = ()
    risks: tuple[Risk, ...] = ()


def read_offline(
    commit: Commit,
    files: Sequence[FileChange],
    profile: RepoProfile | None = None,
    judgement: Judgement | None = None,
    start: tuple[Context, Verdict] | None = None,
) -> Reading:
    """Depth follows importance: a low commit gets its type, a one-line summary and the reason;
    medium and high ones also get impact, insights, risks and recommendations when a rule has
    something specific to say. `start`: the context and verdict already worked out for this
    commit, files, profile and judgement (the LLM prompt's hint made them: bot/analysis/hints.py)."""
    ctx, verdict = start if start is not None else (read_context(commit, files, profile, judgement), None)
    verdict = verdict or judge(ctx)
    summary = tuple(summary_parts(ctx, verdict.level))
    if verdict.level is Importance.LOW:
        return Reading(ctx, verdict, summary)
    return Reading(ctx, verdict, summary, tuple(audiences(ctx)), tuple(choose_insights(ctx)), tuple(choose_risks(ctx)))


def tell_offline(
    reading: Reading, lang: str, coverage: Coverage | None = None, origin: str = "offline", note: str = ""
) -> Analysis:
    """The reading said in `lang` ("zh", "en"): the only language-specific step."""
    lang = "zh" if is_zh(lang) else "en"
    risks, recs = tell_risks(reading.risks, lang)
    stats = reading.context.stats
    return Analysis(
        change_type=reading.context.ctype,
        importance=reading.verdict.level,
        importance_reason=tell_reason(reading.verdict, lang),
        summary=tell_summary(reading.summary, lang),
        impact=tell_impact(reading.audiences, lang),
        insights=tell_insights(reading.insights, lang) if reading.insights else Insights(),
        risks=risks,
        recommendations=recs,
        origin=origin,
        model="",
        note=note,
        coverage=coverage,
        files_changed=stats.total_files,
        additions=stats.additions,
        deletions=stats.deletions,
    )


def analyse_offline(
    commit: Commit,
    files: Sequence[FileChange],
    lang: str,
    coverage: Coverage | None = None,
    origin: str = "offline",
    note: str = "",
    profile: RepoProfile | None = None,
    judgement: Judgement | None = None,
) -> Analysis:
    """Analyse one commit with rules only, in one language: `read_offline` then `tell_offline`."""
    return tell_offline(read_offline(commit, files, profile, judgement), lang, coverage, origin, note)


def analyse_offline_langs(
    commit: Commit,
    files: Sequence[FileChange],
    langs: Sequence[str],
    coverage: Coverage | None = None,
    origin: str = "offline",
    notes: Mapping[str, str] | None = None,
    profile: RepoProfile | None = None,
    judgement: Judgement | None = None,
    start: tuple[Context, Verdict] | None = None,
) -> dict[str, Analysis]:
    """`analyse_offline` for several languages at once: the commit is read once (`read_offline`:
    the facts, the level, the summary's parts — nearly all of the work), then said in each
    language (`tell_offline`). The level and type are the same in every language; `notes` is each
    language's note of a fallback. Languages repeated are written once. `start`: as for
    `read_offline`."""
    reading = read_offline(commit, files, profile, judgement, start)
    return {
        lang: tell_offline(reading, lang, coverage, origin, (notes or {}).get(lang, ""))
        for lang in dict.fromkeys(langs)
    }


__all__ = [
    "RULES_VERSION",
    "Reading",
    "Verdict",
    "analyse_offline",
    "analyse_offline_langs",
    "audiences",
    "judge",
    "read_context",
    "read_offline",
    "summary_parts",
    "tell_impact",
    "tell_offline",
    "tell_summary",
    "Context",
    "DiffFacts",
    "Fact",
    "FileKind",
    "FileStats",
    "NON_RUNTIME",
    "TitleInfo",
    "build_impact",
    "build_summary",
    "classify_path",
    "collect_insights",
    "collect_risks",
    "decide_change_type",
    "decide_importance",
    "dependency_updates",
    "diff_facts",
    "file_stats",
    "first_paragraph",
    "first_paragraphs",
    "is_major_bump",
    "parse_title",
    "split_sentences",
    "whole_sentences",
]
