"""The digest as a Markdown report: the reference report's structure without its defects.

One heading level per kind (# report, ## repository, ### section, #### commit), every TOC link
computed with GitHub's own slug rules (so it resolves), commit text and LLM output escaped so
they can neither inject HTML/links nor break the layout, nothing truncated.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Mapping, Sequence

from ..analysis.cost import cost_line
from ..core.models import Analysis, Digest, DigestEntry, Importance
from ..diffs.reader import coverage_line
from . import fork_section as DS
from . import labels as L
from . import owner_lines as OL
from .labels import t
from .safe import esc, esc_rich, strip_controls
from .upgrade import UpgradeReport, entry_note, entry_text, upgrade_report


class Slugger:
    """GitHub's heading anchors (github-slugger): lower-case; keep letters, marks, decimal and
    letter numbers, connector punctuation, '-' and ' '; spaces become '-'; repeats get -1, -2…"""

    def __init__(self) -> None:
        self.seen: dict[str, int] = {}

    @staticmethod
    def base(text: str) -> str:
        kept = []
        for ch in text.lower():
            cat = unicodedata.category(ch)
            if ch in "- " or cat[0] in "LM" or cat in ("Nd", "Nl", "Pc"):
                kept.append("-" if ch == " " else ch)
        return "".join(kept)

    def slug(self, text: str) -> str:
        original = self.base(" ".join(text.split()))  # the heading as rendered: whitespace collapsed
        result = original
        while result in self.seen:
            self.seen[original] += 1
            result = f"{original}-{self.seen[original]}"
        self.seen.setdefault(original, 0)
        self.seen.setdefault(result, 0)
        return result


# --- the report --------------------------------------------------------------------------------------


def render_report(digests: Sequence[Digest], areas: Mapping[str, str] | None = None) -> str:
    """One Markdown document for one or more repositories' digests of the same window. A range
    of refs leads with its upgrade report (bot/render/upgrade.py; `areas`: sha → area)."""
    if not digests:
        return ""
    slugger = Slugger()
    first = digests[0]
    out = [f"# {esc(L.title(first))}", ""]
    slugger.slug(L.title(first))
    for digest in digests:
        out.extend(_repo_section(digest, slugger, areas))
    return strip_controls("\n".join(out).rstrip()) + "\n"  # one pass over everything shown


def _repo_section(d: Digest, slugger: Slugger, areas: Mapping[str, str] | None = None) -> list[str]:
    lang = d.lang
    out = [f"## {esc(d.repo)}", ""]
    slugger.slug(d.repo)
    out += [f"> {esc(L.meta_line(d))}", ""]
    if L.filter_line(d):  # the path filter it was built with, and how many commits it kept
        out += [f"> {esc(L.filter_line(d))}", ""]
    if spent := cost_line(d.cost, lang):  # what its LLM analyses cost
        out += [f"> {esc(spent)}", ""]
    out += [line for n in d.notices for line in (f"> {esc(n)}", "")]  # how it was made, first
    if not d.entries:
        return out + [esc(t(lang, "empty", repo=d.repo, label=d.window.label, tz=d.window.tz)), ""]

    # Anchors are assigned in document order, exactly as GitHub numbers repeated headings.
    headline_title = t(lang, "headline_heading")
    list_title, stats_title, toc_title = t(lang, "commits_heading"), t(lang, "stats_heading"), t(lang, "toc_heading")
    downstream_title = DS.heading(d) if d.fork else ""
    upgrade = upgrade_report(d, areas) if d.window.is_range else None
    upgrade_titles = [upgrade.title] + [g.heading for g in upgrade.groups] if upgrade else []
    for text in (
        ([headline_title] if d.headline else [])
        + upgrade_titles
        + [list_title, stats_title]
        + ([downstream_title] if d.fork else [])
        + [toc_title]
    ):
        slugger.slug(text)
    groups = [(imp, entries) for imp, entries in d.grouped() if entries]
    anchors: dict[str, str] = {}
    group_anchor: dict[Importance, str] = {}
    for imp, entries in groups:
        group_anchor[imp] = slugger.slug(L.group_label(lang, imp, len(entries)))
        for e in entries:
            anchors[e.commit.sha] = slugger.slug(e.commit.title)

    if d.headline:
        out += [f"### {esc(headline_title)}", ""]
        out += [f"- {esc_rich(b)}" for b in d.headline]
        if d.headline_origin != "llm":
            out += ["", f"_{esc(t(lang, 'headline_offline'))}_"]
        out.append("")
    if upgrade is not None:
        out += _upgrade(upgrade, anchors)

    out += [
        f"### {esc(list_title)}",
        "",
        f"| {t(lang, 'col_time')} | {t(lang, 'col_author')} | {t(lang, 'col_message')} |",
        "|---|---|---|",
    ]
    for e in d.entries:  # newest first
        when = e.commit.local_time(d.window.tz).strftime("%Y-%m-%d %H:%M:%S")
        out.append(
            f"| {when} | {esc(e.commit.author)} | {e.importance.emoji} "
            f"[{esc(e.commit.title)}](#{anchors[e.commit.sha]}) |"
        )
    out += ["", f"### {esc(stats_title)}", "", f"> {L.stats_line(d)}", ""]
    if d.fork:
        out += [f"### {esc(downstream_title)}", "", esc(DS.intro(d)), ""]
        out += [
            f"- [{esc(e.commit.title)}](#{anchors[e.commit.sha]}) `{e.commit.short_sha}` — "
            f"{esc(DS.line(d, e.downstream))}"
            for e in DS.flagged(d)
        ]
        out.append("")

    out += [f"### {esc(toc_title)}", ""]
    for imp, entries in groups:
        out.append(f"- [{esc(L.group_label(lang, imp, len(entries)))}](#{group_anchor[imp]})")
        out += [f"  - [{esc(e.commit.title)}](#{anchors[e.commit.sha]})" for e in entries]
    out.append("")

    for imp, entries in groups:
        out += [f"### {esc(L.group_label(lang, imp, len(entries)))}", ""]
        for e in entries:
            out += _entry(d, e)
    return out


def _upgrade(u: UpgradeReport, anchors: dict[str, str]) -> list[str]:
    """The upgrade report's sections, each commit linking to its entry below."""
    d = u.digest
    out = [f"### {esc(u.title)}", "", f"> {esc(u.stats)}", ""]
    if u.nothing:
        out += [esc(u.nothing), ""]
    for g in u.groups:
        out += [f"#### {esc(g.heading)}", ""]
        for e in g.entries:
            target = f"(#{anchors[e.commit.sha]})" if e.commit.sha in anchors else ""
            title = f"[{esc(entry_text(e))}]{target}" if target else esc(entry_text(e))
            files = entry_note(g, e, d.lang)
            out.append(f"- {e.importance.emoji} `{e.commit.short_sha}` {title}" + (f" — {esc(files)}" if files else ""))
        out.append("")
    if u.fork_clear:
        out += [esc(u.fork_clear), ""]
    if u.low_line:
        out += [esc(u.low_line), ""]
    return out


def _entry(d: Digest, e: DigestEntry) -> list[str]:
    lang, c, a = d.lang, e.commit, e.analysis
    out = [f"#### {esc(c.title)}", ""]
    out.append(" · ".join(_meta_parts(d, e)))
    out.append("")
    if e.owners:  # its code owners (CODEOWNERS)
        out += [esc(OL.entry_owners(lang, e.owners)), ""]
    if flag := DS.flag(d, e):
        out += [f"> **{esc(flag)}**", ""]
    if c.reverts:
        url = d.commit_url(c.reverts)
        ref = f"[`{c.reverts[:7]}`]({url})" if url else f"`{c.reverts[:7]}`"
        out += [t(lang, "reverts", sha=ref), ""]
    if e.error and (a is None or a.origin != "fallback"):
        out += [f"> {esc(t(lang, 'unanalysed', reason=e.error))}", ""]
    if a is None:
        return out + ["---", ""]
    if corrected := L.corrected_line(lang, e):  # a reader's level correction: who, and from what
        out += [f"> {esc(corrected)}", ""]
    note = L.origin_note(lang, a)
    if note:
        out += [f"> {esc(note)}", ""]
    reason = f" — {esc_rich(a.importance_reason)}" if a.importance_reason else ""
    colon = L.colon(lang)
    out += [
        f"**{t(lang, 'type')}**{colon}{esc(a.change_type.label(lang))} · "
        f"**{t(lang, 'importance')}**{colon}{L.importance_label(lang, a.importance)}{reason}",
        "",
    ]
    out += _field(lang, "summary", a.summary)
    if a.importance is not Importance.LOW:
        out += _field(lang, "impact", a.impact)
        out += _insights(lang, a)
        out += _bullets(lang, "risks", a.risks)
        out += _bullets(lang, "recommendations", a.recommendations)
    if a.coverage is not None:
        out += [f"> {t(lang, 'coverage')}{L.colon(lang)}{esc(coverage_line(a.coverage, lang))}", ""]
    return out + ["---", ""]


def _meta_parts(d: Digest, e: DigestEntry) -> list[str]:
    c, lang = e.commit, d.lang
    sha = f"[`{c.short_sha}`]({c.url})" if c.url else f"`{c.short_sha}`"
    parts = [f"**SHA**: {sha}"]
    if c.url:
        parts.append(f"🔗 [{t(lang, 'view_commit')}]({c.url})")
    if (pr_url := d.change_url(c.pr_number)) and c.pr_number:
        parts.append(f"{t(lang, d.links.change_word)} [{d.links.change_ref(c.pr_number)}]({pr_url})")
    parts.append(f"{t(lang, 'author')} {esc(c.author)}")
    parts.append(c.local_time(d.window.tz).strftime("%Y-%m-%d %H:%M:%S"))
    if mark := L.entry_marks(lang, e):
        parts.append(esc(mark))
    return parts


def _field(lang: str, key: str, value: str) -> list[str]:
    if not value or not value.strip():
        return []
    body = esc_rich(value)
    sep = "\n" if "\n" in body else ""
    return [f"**{t(lang, key)}**{L.colon(lang)}{sep}{body}", ""]


def _insights(lang: str, a: Analysis) -> list[str]:
    rows = [(k, getattr(a.insights, k)) for k in ("architecture", "performance", "security")]
    rows = [(k, v) for k, v in rows if v and v.strip()]
    if not rows:
        return []
    return (
        [f"**{t(lang, 'insights')}**", ""]
        + [f"- **{t(lang, k)}**{L.colon(lang)}{esc_rich(v).replace(chr(10), chr(10) + '  ')}" for k, v in rows]
        + [""]
    )


def _bullets(lang: str, key: str, items: Iterable[str]) -> list[str]:
    items = [i for i in items if i and i.strip()]
    if not items:
        return []
    return [f"**{t(lang, key)}**", ""] + [f"- {esc_rich(i).replace(chr(10), chr(10) + '  ')}" for i in items] + [""]
