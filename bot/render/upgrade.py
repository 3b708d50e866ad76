"""The upgrade report of a release range (`digest A..B`, `release TAG`): what an upgrade must
handle first, from the digest's own analyses (no further LLM call).

Sections, in this order and only when non-empty: breaking changes, removals and deprecations, new
defaults, security fixes; then features and fixes, each grouped by area (bot/digest/rollup.py's
areas); then the other commits above low. The low commits are one counted line. Read against a
fork, two more groups: the commits that touch files the fork patches, and of them those whose
cherry-pick would conflict.

A commit is listed once, in the first section that holds it. Only commits above low are listed.
- breaking: bot/render/changelog.py's `is_breaking` (the analysis says so, negations excepted);
- removals: a model's change type removal/deprecation, or the title (and a model's summary) says
  it deprecates something (deprecate, is now deprecated; 弃用, 废弃) or removes something users
  see (remove, drop, delete; 移除, 删除 — then a flag, an option, support for Python 3.9, an API,
  a legacy or deprecated thing, …), not after a negation and not in a clause about the project's
  own work (unused, duplicate, tests, guards, cleanup …);
- new defaults: the title (and a model's summary) says a default changes (default to, by default,
  new default; 默认), likewise;
- security: change type security, or the title or summary names a vulnerability or a CVE;
- features, fixes: by change type; everything else is "other".
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from ..core.chat_platform import ROOT_AREA, UNKNOWN_AREA, UpgradeGroup, UpgradeReport
from ..core.models import ChangeType, Digest, DigestEntry, Importance
from ..i18n import text
from . import fork_section as DS
from .breaking import is_breaking
from .labels import branch_mark

MUST = ("breaking", "removals", "defaults", "security")  # what an upgrade must handle, in order
BY_AREA = ("features", "fixes")
ORDER = MUST + BY_AREA + ("other",)

# A removal an upgrade must handle takes something users see: the verb, then in the same clause
# one of these (`drop support for Python 3.9`, `remove the --force flag`, `delete the legacy
# exporter`); `remove unused imports`, `remove the Python 3.9 guards` are the project's own work.
_REMOVES = re.compile(
    r"\b(?:remov(?:e|es|ed|ing)|drop(?:s|ped|ping)?|delet(?:e|es|ed|ing))\b|移除|删除|下线", re.IGNORECASE
)
_DEPRECATES = re.compile(  # a deprecation is of something users see by nature (not `deprecation checks`)
    r"\bdeprecat(?:e|es|ing)\b|\b(?:is|are|now|marked?|as)\s+deprecated\b|弃用|废弃", re.IGNORECASE
)
_USER_FACING = re.compile(
    r"\b(?:support|flags?|options?|arguments?|args?|param(?:eter)?s?|settings?|config(?:uration)?|"
    r"(?:sub)?commands?|apis?|endpoints?|deprecated|legacy|old|features?|plugins?|backends?|aliases?|"
    r"env(?:ironment)?\s+var(?:iable)?s?|keywords?|kwargs?|extras?|clients?|public|v\d+|python\s*[23]|py3\d+)\b"
    r"|--[A-Za-z][\w-]*|参数|选项|支持|接口|命令|配置|功能|旧",
    re.IGNORECASE,
)
_INTERNAL = re.compile(
    r"\b(?:unused|unnecessary|unneeded|duplicated?|duplicates|redundant|dead|obsolete|stale|leftover|"
    r"no\s+longer\s+(?:needed|used)|clean\s*-?\s*up|cleanup|internal|private|tests?|ci|typos?|"
    r"workarounds?|guards?|comments?|debug)\b|未使用|冗余|重复|测试|内部",
    re.IGNORECASE,
)
_DEFAULT = re.compile(
    r"\b(?:defaults?\s+(?:to|is\s+now|changed|changes|now)|by\s+default|new\s+default|default\s+"
    r"(?:value|behaviou?r|setting)s?\s+(?:is|are|of|for|to|changed|now))\b|默认",
    re.IGNORECASE,
)
_SECURITY = re.compile(
    r"\b(?:vulnerab\w*|CVE-\d{4}-\d+|GHSA-[\w-]+|security\s+fix\w*)|安全漏洞|安全修复", re.IGNORECASE
)
# A word that voids a match when it comes shortly before it, in the same clause.
_NEGATION = re.compile(
    r"(?:\b(?:not|no|never|without|nor)\b|不|未|没有|无需)[^.,;:!?，。；：！？]{0,24}$", re.IGNORECASE
)
_CLAUSE_END = re.compile(r"[.,;:!?，。；：！？]|\band\b|\s—\s")


def _clause(said: str, match: re.Match) -> tuple[str, str]:
    """The clause around a match: (its words up to the match, its words after it)."""
    start = max((m.end() for m in _CLAUSE_END.finditer(said, 0, match.start())), default=0)
    end = _CLAUSE_END.search(said, match.end())
    return said[start : match.start()], said[match.end() : end.start() if end else len(said)]


def _says(pattern: re.Pattern, *texts: str, needs: re.Pattern | None = None) -> bool:
    """Does any text say it, outside a negation (`no longer removed`, `not enabled by default`)
    and outside a clause about the project's own work (`remove unused imports`, `… by default in
    tests`)? With `needs`, the clause must also name it after the match (what is removed)."""
    for said in texts:
        for match in pattern.finditer(said or ""):
            before, after = _clause(said, match)
            if _NEGATION.search(said[: match.start()]) or _INTERNAL.search(before + " " + after):
                continue
            if needs is None or needs.search(after):
                return True
    return False


def _title(entry: DigestEntry) -> str:
    """What the commit says it does: a merge on the first-parent line ("Merge pull request #12
    from a/branch") says it in the first line of its body, the pull request's title."""
    c = entry.commit
    if c.is_merge and c.body.strip():
        return c.body.strip().splitlines()[0]
    return c.title


def section_of(entry: DigestEntry) -> str:
    """The section an above-low commit is listed under (a key of the [upgrade] table).

    The words are read in the title, and in the summary when a model wrote it: the offline
    analyser's summary is the author's own description, whose every "remove" and "by default"
    (`removing buffering makes reads faster`) is not what the commit does to its users."""
    if is_breaking(entry):
        return "breaking"
    a = entry.analysis
    kind = a.change_type if a else ChangeType.OTHER
    modelled = a is not None and a.origin == "llm"
    said = (_title(entry), a.summary if a and modelled else "")
    if (
        (kind is ChangeType.REMOVAL and modelled)
        or _says(_DEPRECATES, *said)
        or _says(_REMOVES, *said, needs=_USER_FACING)
    ):
        return "removals"
    if _says(_DEFAULT, *said):
        return "defaults"
    if kind is ChangeType.SECURITY or _says(_SECURITY, _title(entry), a.summary if a else ""):
        return "security"
    if kind is ChangeType.FEATURE:
        return "features"
    if kind is ChangeType.BUGFIX:
        return "fixes"
    return "other"


def upgrade_report(digest: Digest, area_of: Mapping[str, str] | None = None) -> UpgradeReport:
    """The report's content, pure. `area_of`: sha → area (bot/digest/rollup.py's `areas_of`);
    without it features and fixes are one group each."""
    d, lang = digest, digest.lang
    area_of = area_of or {}
    listed = [e for e in d.entries if e.importance is not Importance.LOW]  # newest first
    by_section: dict[str, list[DigestEntry]] = {key: [] for key in ORDER}
    for e in listed:
        by_section[section_of(e)].append(e)
    groups: list[UpgradeGroup] = []
    for key in ORDER:
        entries = by_section[key]
        if not entries:
            continue
        section = text(lang, f"upgrade.{key}")
        if key in BY_AREA and area_of:
            areas: dict[str, list[DigestEntry]] = {}
            for e in entries:
                areas.setdefault(area_of.get(e.commit.sha, UNKNOWN_AREA), []).append(e)
            for area, held in sorted(areas.items(), key=lambda kv: (-len(kv[1]), kv[0])):
                name = {ROOT_AREA: text(lang, "week.root"), UNKNOWN_AREA: text(lang, "week.unknown")}.get(area, area)
                heading = text(lang, "upgrade.group_area", section=section, area=name, n=len(held))
                groups.append(UpgradeGroup(key, heading, tuple(held)))
        else:
            groups.append(
                UpgradeGroup(key, text(lang, "upgrade.group", section=section, n=len(entries)), tuple(entries))
            )
    fork_clear = ""
    if d.fork is not None:
        fork = DS.fork_label(d)
        touching = [e for e in d.entries if e.downstream]
        conflicts = [e for e in touching if e.downstream and e.downstream.conflict]
        if conflicts:
            groups.append(
                UpgradeGroup(
                    "fork_conflicts",
                    text(lang, "upgrade.fork_conflicts", fork=fork, n=len(conflicts)),
                    tuple(conflicts),
                )
            )
        clean = [e for e in touching if e not in conflicts]  # each commit once: a conflict touches them too
        if clean:
            groups.append(
                UpgradeGroup("fork_touches", text(lang, "upgrade.fork_touches", fork=fork, n=len(clean)), tuple(clean))
            )
        if not touching:
            fork_clear = text(lang, "upgrade.fork_clear", fork=fork)
    return UpgradeReport(d, tuple(groups), low=len(d.entries) - len(listed), fork_clear=fork_clear)


def entry_text(e: DigestEntry) -> str:
    """What a listed commit says, unescaped: its summary, else its title."""
    a = e.analysis
    return (a.summary if a and a.summary.strip() else "") or e.commit.title


def fork_files(group: UpgradeGroup, e: DigestEntry, lang: str) -> str:
    """`files: a.py, b.py` for a fork group's commit ('' elsewhere), unescaped."""
    if not group.key.startswith("fork") or e.downstream is None:
        return ""
    return text(lang, "upgrade.files", files=", ".join(e.downstream.patched_files))


def entry_note(group: UpgradeGroup, e: DigestEntry, lang: str) -> str:
    """What follows a listed commit, unescaped: a fork group's files, a backport's original
    (`backport of 1a2b3c4`: git's cherry-pick line), the branches of several followed."""
    return " · ".join(x for x in (fork_files(group, e, lang), branch_mark(lang, e)) if x)


def upgrade_data(report: UpgradeReport) -> dict:
    """The report as JSON (`--format json`'s `upgrade`): sections of short SHAs, the low count."""
    return {
        "sections": [
            {"key": g.key, "heading": g.heading, "commits": [e.commit.sha for e in g.entries]} for g in report.groups
        ],
        "low": report.low,
    }
