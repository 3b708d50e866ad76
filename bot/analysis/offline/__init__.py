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
classifier, bot/core/file_kinds.py, also used by the LLM prompt's diff order), title.py and message.py (the message),
patch.py (diff scanners), observe.py (what the patches show), change_type.py; then evidence/
(one module per kind of evidence: facts, risks, insights), decide.py (combines them into a level,
holding no rules of its own) and prose.py (summary and impact sentences).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ...core.models import Analysis, Commit, Coverage, FileChange, Importance, Insights, Judgement
from ..profile import RepoProfile
from .change_type import decide_change_type
from .context import Context, DiffFacts, Fact
from .decide import collect_insights, collect_risks, decide_importance
from .evidence.dependencies import dependency_updates, is_major_bump
from .lang import is_zh
from .message import first_paragraph, first_paragraphs, split_sentences, whole_sentences
from .observe import diff_facts
from .paths import NON_RUNTIME, FileKind, classify_path
from .prose import build_impact, build_summary
from .stats import FileStats, file_stats
from .title import TitleInfo, parse_title

# Part of the analysis cache key: bump whenever a rule or a sentence changes.
RULES_VERSION = (
    "2.3"  # 2.3: the learned profile weighed in (offline/learned.py); false highs from file names and strings gone
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
    """Analyse one commit with rules only. Depth follows importance: a low commit gets its type,
    a one-line summary and the reason; medium and high ones also get impact, insights, risks and
    recommendations when a rule has something specific to say."""
    zh = is_zh(lang)
    title = parse_title(commit.title, commit.body)
    stats = file_stats(commit, files)
    profile = profile or RepoProfile.inferred()
    ctx = Context(
        commit,
        title,
        stats,
        diff_facts(stats, title, profile),
        decide_change_type(commit, title, stats),
        profile,
        judgement,
    )
    importance, reason = decide_importance(ctx, zh)
    summary = build_summary(ctx, importance, zh)
    risks: tuple[str, ...]
    recs: tuple[str, ...]
    if importance is Importance.LOW:
        impact, insights, risks, recs = "", Insights(), (), ()
    else:
        impact = build_impact(ctx, zh)
        insights = collect_insights(ctx, zh)
        risks, recs = collect_risks(ctx, zh)
    return Analysis(
        change_type=ctx.ctype,
        importance=importance,
        importance_reason=reason,
        summary=summary,
        impact=impact,
        insights=insights,
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


def analyse_offline_langs(
    commit: Commit,
    files: Sequence[FileChange],
    langs: Sequence[str],
    coverage: Coverage | None = None,
    origin: str = "offline",
    notes: Mapping[str, str] | None = None,
    profile: RepoProfile | None = None,
    judgement: Judgement | None = None,
) -> dict[str, Analysis]:
    """`analyse_offline` for several languages at once: the commit's facts (title, file stats,
    what the patches show, the change type — nine tenths of the work) are built once, then each
    language's sentences are written from them by the per-language builders. The level and type
    are the same in every language (the facts decide them); `notes` is each language's note of a
    fallback. Languages repeated are written once."""
    title = parse_title(commit.title, commit.body)
    stats = file_stats(commit, files)
    profile = profile or RepoProfile.inferred()
    ctx = Context(
        commit,
        title,
        stats,
        diff_facts(stats, title, profile),
        decide_change_type(commit, title, stats),
        profile,
        judgement,
    )
    made: dict[str, Analysis] = {}
    level: Importance | None = None
    for lang in dict.fromkeys(langs):
        zh = is_zh(lang)
        importance, reason = decide_importance(ctx, zh)
        level = level or importance  # the facts decide it: the same in every language
        summary = build_summary(ctx, level, zh)
        risks: tuple[str, ...]
        recs: tuple[str, ...]
        if level is Importance.LOW:
            impact, insights, risks, recs = "", Insights(), (), ()
        else:
            impact = build_impact(ctx, zh)
            insights = collect_insights(ctx, zh)
            risks, recs = collect_risks(ctx, zh)
        made[lang] = Analysis(
            change_type=ctx.ctype,
            importance=level,
            importance_reason=reason,
            summary=summary,
            impact=impact,
            insights=insights,
            risks=risks,
            recommendations=recs,
            origin=origin,
            model="",
            note=(notes or {}).get(lang, ""),
            coverage=coverage,
            files_changed=stats.total_files,
            additions=stats.additions,
            deletions=stats.deletions,
        )
    return made


__all__ = [
    "RULES_VERSION",
    "analyse_offline",
    "analyse_offline_langs",
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
