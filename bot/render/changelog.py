"""Release notes for a digest's window (`digest --format changelog`): the digest's own analyses
sorted into a changelog's sections, no further LLM call.

Sections, in this order and only when non-empty: breaking changes, features, fixes, performance,
security, documentation, other changes. Each lists the commits above low, one line each (the
summary, else the title; the short SHA; the PR link when known); the low ones are counted in one
line; the contributors close it. Every word is from the catalogue's [changelog] table; commit and
LLM text is escaped as the report escapes it (bot/render/safe.py): a title renders literally, a
summary as prose whose `code` stays code.

Breaking: the answer schema has no breaking flag, so a commit is breaking when its analysis says
so where the analysers put it — the offline analyser's own breaking sentences in its importance
reason or risks (bot/analysis/offline/evidence/breaking.py), or an above-low analysis whose reason
or risks name a breaking change (not "non-breaking", "no breaking change").
"""

from __future__ import annotations

from ..core.models import ChangeType, Digest, DigestEntry, Importance
from ..i18n import text
from . import labels as L
from .breaking import is_breaking
from .safe import esc, esc_rich, strip_controls

# Sections after "breaking", by change type; every other type is under "other".
SECTIONS: tuple[tuple[str, tuple[ChangeType, ...]], ...] = (
    ("features", (ChangeType.FEATURE,)),
    ("fixes", (ChangeType.BUGFIX,)),
    ("performance", (ChangeType.PERFORMANCE,)),
    ("security", (ChangeType.SECURITY,)),
    ("docs", (ChangeType.DOCS,)),
)
ORDER = ("breaking",) + tuple(key for key, _ in SECTIONS) + ("other",)


def section_of(entry: DigestEntry) -> str:
    """The section an above-low commit is listed under (a key of the [changelog] table)."""
    if is_breaking(entry):
        return "breaking"
    a = entry.analysis
    kind = a.change_type if a else ChangeType.OTHER
    return next((key for key, types in SECTIONS if kind in types), "other")


def _line(d: Digest, e: DigestEntry) -> str:
    """The summary as the report shows it (prose: its `code` stays code), else the title as written."""
    c, a = e.commit, e.analysis
    said = esc_rich(a.summary).replace("\n", "\n  ") if a and a.summary.strip() else esc(c.title)
    sha = f"[`{c.short_sha}`]({c.url})" if c.url else f"`{c.short_sha}`"
    refs = [sha]
    if c.pr_number:
        ref, url = d.links.change_ref(c.pr_number), d.change_url(c.pr_number)
        refs.append(f"[{ref}]({url})" if url else ref)
    return f"- {said} ({', '.join(refs)})"


def render_changelog(digest: Digest) -> str:
    """One Markdown document: the release notes of `digest`'s window."""
    d, lang = digest, digest.lang
    out = [f"# {esc(text(lang, 'changelog.title', repo=d.repo, label=d.window.label))}", ""]
    out += [f"> {esc(L.meta_line(d))}", ""]
    if L.filter_line(d):
        out += [f"> {esc(L.filter_line(d))}", ""]
    out += [line for n in d.notices for line in (f"> {esc(n)}", "")]
    if not d.entries:
        out += [esc(text(lang, "changelog.empty", repo=d.repo, label=d.window.label, tz=d.window.tz)), ""]
        return strip_controls("\n".join(out).rstrip()) + "\n"

    listed = [e for e in d.entries if e.importance is not Importance.LOW]  # newest first, as the digest
    low = len(d.entries) - len(listed)
    for key in ORDER:
        entries = [e for e in listed if section_of(e) == key]
        if entries:
            out += [f"## {esc(text(lang, f'changelog.{key}'))}", ""]
            out += [_line(d, e) for e in entries]
            out.append("")
    if low:
        form = "one" if low == 1 else "other"
        key = f"changelog.low.{form}" if listed else f"changelog.only_low.{form}"
        out += [esc(text(lang, key, n=low)), ""]

    authors = sorted(
        {" ".join(e.commit.author.split()) for e in d.entries if e.commit.author.strip()}, key=str.casefold
    )
    if authors:
        out += [f"## {esc(text(lang, 'changelog.contributors'))}", ""]
        out += [f"- {esc(name)}" for name in authors]
    return strip_controls("\n".join(out).rstrip()) + "\n"
