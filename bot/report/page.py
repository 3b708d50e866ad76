"""A digest as one HTML page: the Markdown report's content and order (headline, commit table,
stats, contents, every commit's analysis with its coverage, the notices first), for a phone.

The templates (templates/*.html) are Jinja2 with autoescape on, so every untrusted string
(commit titles, authors, bodies, LLM output) is HTML-escaped where it is printed. Two more
guards: a `finalize` hook strips control and bidi-override characters from everything printed
(the same filter every renderer applies), and links are only the http(s) URLs the bot built.
LLM prose keeps `code` and **bold**: the text is escaped first and only then are those two
marks turned into fixed tags, so nothing in the text can become markup.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from functools import lru_cache
from typing import Any
from zoneinfo import ZoneInfo

from jinja2 import Environment, PackageLoader, StrictUndefined
from markupsafe import Markup, escape

from ..analysis.cost import cost_line
from ..core.models import Digest, DigestEntry, Importance
from ..diffs.reader import coverage_line
from ..i18n import text
from ..render import labels as L
from ..render import owner_lines as OL
from ..render.labels import t
from ..render.safe import strip_controls
from ..render.upgrade import upgrade_report

_CODE = re.compile(r"`([^`\n]+)`")
_BOLD = re.compile(r"\*\*(?=\S)(.+?)(?<=\S)\*\*")
_URL = re.compile(r"^https?://[^\s\"'<>\\]+$")


def prose(value: Any) -> Markup:
    """Untrusted multi-line prose → escaped HTML with `code`, **bold** and line breaks."""
    lines = []
    for line in strip_controls(value).split("\n"):
        if line.strip():
            html = str(escape(line.strip()))  # no <, >, &, quotes left unescaped after this
            html = _CODE.sub(r"<code>\1</code>", html)
            lines.append(_BOLD.sub(r"<strong>\1</strong>", html))
    return Markup("<br>".join(lines))


def safe_url(url: str | None) -> str | None:
    """Only http(s) URLs: a `javascript:` or `data:` URL from anywhere never becomes a link."""
    return url if url and _URL.match(url) else None


def _finalize(value: Any) -> Any:
    if value is None:
        return ""
    if isinstance(value, str) and not isinstance(value, Markup):
        return strip_controls(value)
    return value


@lru_cache(maxsize=1)
def environment() -> Environment:
    env = Environment(
        loader=PackageLoader("bot.report", "templates"),
        autoescape=True,
        undefined=StrictUndefined,
        finalize=_finalize,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["prose"] = prose
    return env


def anchors(d: Digest) -> dict[str, str]:
    """sha → the id of its section: 12 hex digits, or the whole SHA if two commits share those."""
    short = {e.commit.sha: f"c-{e.commit.sha[:12]}" for e in d.entries}
    if len(set(short.values())) == len(short):
        return short
    return {sha: f"c-{sha}" for sha in short}


def _entry(d: Digest, e: DigestEntry, anchor: str, tap: dict | None = None) -> dict:
    lang, c, a = d.lang, e.commit, e.analysis
    view: dict[str, Any] = {
        "corrected": L.corrected_line(lang, e),  # a reader's level correction: who, and from what
        "owners": OL.entry_owners(lang, e.owners),  # its code owners (CODEOWNERS), '' without
        "branches": L.branch_mark(lang, e),  # its branches and backports (several followed), '' without
        "tap": tap if a is not None else None,  # the level-correction form's hidden fields
        "anchor": anchor,
        "emoji": e.importance.emoji,
        "title": c.title,
        "short_sha": c.short_sha,
        "url": safe_url(c.url),
        "author": c.author,
        "when": c.local_time(d.window.tz).strftime("%Y-%m-%d %H:%M:%S"),
        "pr": c.pr_number,
        "pr_url": safe_url(d.change_url(c.pr_number)),
        "pr_label": t(lang, d.links.change_word),
        "pr_ref": d.links.change_ref(c.pr_number) if c.pr_number else "",
        "reverts": None,
        "unanalysed": "",
        "analysis": None,
    }
    if c.reverts:
        before, _, after = t(lang, "reverts", sha="\x00").partition("\x00")  # the label around the link
        view["reverts"] = {
            "before": before,
            "after": after,
            "sha": c.reverts[:7],
            "url": safe_url(d.commit_url(c.reverts)),
        }
    if e.error and (a is None or a.origin != "fallback"):
        view["unanalysed"] = t(lang, "unanalysed", reason=e.error)
    if a is None:
        return view
    full = a.importance is not Importance.LOW  # as the Markdown report: low commits in brief
    insights = [(t(lang, k), getattr(a.insights, k)) for k in ("architecture", "performance", "security")]
    view["analysis"] = {
        "note": L.origin_note(lang, a),
        "type": a.change_type.label(lang),
        "importance": L.importance_label(lang, a.importance),
        "reason": a.importance_reason,
        "summary": a.summary if a.summary.strip() else "",
        "impact": a.impact if full and a.impact.strip() else "",
        "insights": [(k, v) for k, v in insights if full and v and v.strip()],
        "risks": [r for r in a.risks if full and r and r.strip()],
        "recommendations": [r for r in a.recommendations if full and r and r.strip()],
        "coverage": coverage_line(a.coverage, lang) if a.coverage is not None else "",
    }
    return view


def page_view(
    d: Digest, expires: int | None = None, taps: dict | None = None, said: str = "", download: str | None = None
) -> dict:
    """Everything the template prints, already in the digest's language. `taps`: sha → the hidden
    fields of its level-correction form (None: no forms); `said`: the sentence answering a tap;
    `download`: the link to the page's release notes (None: no link)."""
    lang = d.lang
    groups = [(imp, entries) for imp, entries in d.grouped() if entries]
    when = d.generated_at.astimezone(ZoneInfo(d.window.tz)).strftime("%Y-%m-%d %H:%M") if d.generated_at else ""
    until = (
        datetime.fromtimestamp(expires, UTC).astimezone(ZoneInfo(d.window.tz)).strftime("%Y-%m-%d %H:%M")
        if expires
        else ""
    )
    words = {
        k: t(lang, k)
        for k in (
            "headline_heading",
            "headline_offline",
            "commits_heading",
            "stats_heading",
            "toc_heading",
            "col_time",
            "col_author",
            "col_message",
            "type",
            "importance",
            "summary",
            "impact",
            "insights",
            "risks",
            "recommendations",
            "coverage",
            "view_commit",
            "author",
            "pr",
        )
    }
    words.update({k: text(lang, f"report.{k}") for k in ("back_to_contents", "skip_to_contents", "download")})
    words.update({k: text(lang, f"levels.{k}") for k in ("too_high", "too_low")})
    ids = anchors(d)
    views = {
        e.commit.sha: _entry(d, e, ids[e.commit.sha], (taps or {}).get(e.commit.sha)) for e in d.entries
    }  # once each: the table and the groups share it
    return {
        "lang": lang,
        "said": said,
        "download": download if d.entries else None,
        "title": L.title(d),
        "repo": d.repo,
        "repo_url": safe_url(d.repo_url),
        "meta": " · ".join(x for x in (L.meta_line(d), L.filter_line(d)) if x),
        "cost": cost_line(d.cost, lang) or "",  # what its LLM analyses cost, as the parent message says
        "notices": list(d.notices),
        "empty": t(lang, "empty", repo=d.repo, label=d.window.label, tz=d.window.tz) if not d.entries else "",
        "headline": list(d.headline),
        "headline_offline": d.headline_origin != "llm",
        "rows": [views[e.commit.sha] for e in d.entries],  # newest first, as the Markdown table
        "stats": L.stats_line(d),
        "groups": [
            {
                "id": f"g-{imp.value}",
                "label": L.group_label(lang, imp, len(entries)),
                "entries": [views[e.commit.sha] for e in entries],
            }
            for imp, entries in groups
        ],
        "upgrade": _upgrade(d, views),
        "words": words,
        "colon": L.colon(lang),
        "footer": text(lang, "report.footer", generated=when, expires=until) if when and until else "",
    }


def _upgrade(d: Digest, views: dict[str, dict]) -> dict | None:
    """A range of refs leads with its upgrade report (bot/render/upgrade.py), each commit linked to
    its analysis below. The page keeps no file lists, so features and fixes are one group each
    (the chat message groups them by area)."""
    if not (d.window.is_range and d.entries):
        return None
    report = upgrade_report(d)
    return {
        "title": report.title,
        "groups": [{"heading": g.heading, "entries": [views[e.commit.sha] for e in g.entries]} for g in report.groups],
        "nothing": report.nothing,
        "low": report.low_line,
        "fork_clear": report.fork_clear,
    }


def render_page(
    d: Digest, expires: int | None = None, taps: dict | None = None, said: str = "", download: str | None = None
) -> str:
    return environment().get_template("report.html").render(page_view(d, expires, taps, said, download))


def render_refusal(lang: str, status: int) -> str:
    """The page for a refused or missing report: the same words whatever the reason, so it tells
    a visitor nothing about which reports exist."""
    key = {403: "forbidden", 404: "not_found"}.get(status, "unavailable")
    return (
        environment()
        .get_template("refusal.html")
        .render(lang=lang, title=text(lang, "report.refused_title"), message=text(lang, f"report.{key}"))
    )
