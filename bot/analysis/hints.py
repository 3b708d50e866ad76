"""What the LLM gets besides the diff: the rule-based analyser's findings as a labelled hint,
the changelog hunk of a release, and message texts without bot boilerplate or repetition.

Pure functions over models; analyze.py puts their results into the prompt (as untrusted data).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..core.models import Commit, FileChange, Judgement
from .offline.change_type import decide_change_type
from .offline.context import Context
from .offline.decide import Verdict, judge, tell_reason
from .offline.lang import is_zh
from .offline.observe import diff_facts
from .offline.stats import file_stats
from .offline.title import TitleInfo, parse_title
from .prompt_text import strip_bot_footers
from .repo_config import RepoProfile

CHANGELOG_LINES = 60


# Bot boilerplate that says nothing about the change: Renovate's configuration section and
# footer, Dependabot's commands block, check-boxes for rebasing, hidden debug comments.
def _words(text: str) -> list[str]:
    return re.findall(r"\w+", text.lower())


def same_text(a: str | None, b: str | None) -> bool:
    """True when one text repeats the other (a squash merge copies the PR description into the
    commit message), so sending both would spend the budget twice on the same words."""
    wa, wb = _words(a or ""), _words(b or "")
    if not wa or not wb:
        return False
    short, long = (wa, wb) if len(wa) <= len(wb) else (wb, wa)
    if len(short) < 0.8 * len(long):
        return False
    joined = " ".join(long)
    return " ".join(short) in joined or short[:50] == long[:50]


def split_pr_context(text: str) -> tuple[str, str]:
    """('Labels: …\nLinked issues: …', the description) — the lines the GitHub source puts first."""
    lines = text.split("\n")
    head: list[str] = []
    while lines and lines[0].startswith(("Labels: ", "Linked issues: ")):
        head.append(lines.pop(0))
    return "\n".join(head), "\n".join(lines).strip()


def pr_text_for_prompt(commit_body: str, pr_body: str | None) -> str:
    """The PR text worth sending: its labels and linked issues, and its description unless the
    (squash-merged) commit message already repeats it."""
    context, description = split_pr_context(strip_bot_footers(pr_body))
    if same_text(commit_body, description):
        description = ""
    return "\n\n".join(p for p in (context, description) if p)


def rules_reading(
    commit: Commit,
    files: Sequence[FileChange],
    profile: RepoProfile | None,
    judgement: Judgement | None = None,
    title: TitleInfo | None = None,
) -> tuple[Context, Verdict]:
    """The rules' reading of a commit as far as the hint needs it: the context `read_context`
    builds (the patches read once) and the verdict on it. An analysis makes it once and hands it
    to the hint in its prompt's language and, when the LLM fails, to the offline analysis that
    stands in (`read_offline(..., start=…)`): a commit is never read twice by the rules."""
    title = title or parse_title(commit.title, commit.body)
    stats = file_stats(commit, files)
    profile = profile or RepoProfile.inferred()
    diff = diff_facts(stats, title, profile)
    ctx = Context(commit, title, stats, diff, decide_change_type(commit, title, stats, diff), profile, judgement)
    return ctx, judge(ctx)


def offline_hint(
    commit: Commit,
    files: Sequence[FileChange],
    profile: RepoProfile | None,
    judgement: Judgement | None = None,
    lang: str = "en",
    title: TitleInfo | None = None,
    reading: tuple[Context, Verdict] | None = None,
) -> str:
    """'medium (bugfix): <reason>' — the rule-based level and reason (with the repository's learned
    profile weighed in, when it has one), for the LLM to weigh, in the answer's language.

    Only what the hint says is worked out: the rules' change type, level and reason, from the
    same context `analyse_offline` builds (tests/test_speed_work.py holds them equal) — not the
    summary, impact, insights and risks the prompt never shows. `title`: the commit's parsed
    title when the caller has it already (`parse_title(commit.title, commit.body)`); `reading`:
    the commit's `rules_reading` when the caller has it."""
    ctx, verdict = reading or rules_reading(commit, files, profile, judgement, title)
    return f"{verdict.level.value} ({ctx.ctype.value}): {tell_reason(verdict, 'zh' if is_zh(lang) else 'en')}"


def taste_hint(judgement: Judgement | None) -> str:
    """The learned profile's view and the project's own nearest examples, for the LLM: how this
    project's maintainers judge changes like this (English data lines, like the offline hint)."""
    if judgement is None:
        return ""
    view = f"announced in this project's release notes with probability {judgement.above_low:.2f}"
    if judgement.high >= 0.2:
        view += f" (as a breaking or security change: {judgement.high:.2f})"
    if judgement.heading and judgement.above_low >= 0.5:
        view += f'; usually listed under "{judgement.heading}"'
    lines = [view]
    if judgement.similar:
        lines.append("similar commits of this project and how its maintainers listed them:")
        for level, heading, title in judgement.similar:
            how = f'listed under "{heading}"' if heading else "not listed"
            lines.append(f"- {level}, {how}: {title}")
    return "\n".join(lines)


def changelog_hunk(commit: Commit, files: Sequence[FileChange], title: TitleInfo | None = None) -> str:
    """The lines a release commit adds to its changelog (what ships), else ''. `title`: as for
    `offline_hint`."""
    if not (title or parse_title(commit.title, commit.body)).release:
        return ""
    for f in files:
        name = f.path.rsplit("/", 1)[-1].lower()
        if name.startswith(("changelog", "changes", "history", "news", "release-notes")) and f.patch:
            added = [ln[1:] for ln in f.patch.splitlines() if ln.startswith("+") and not ln.startswith("+++")]
            return "\n".join(added[:CHANGELOG_LINES]).strip()
    return ""
