"""The sentences a reader sees first: the summary (what changed, in whole sentences) and the
impact (who is affected: users of X, operators of Y — not a file census)."""

from __future__ import annotations

import re

from ...core.models import ChangeType, Importance
from ...i18n import phrase, text
from .context import Context
from .evidence.behaviour import SERVER_TOKENS
from .evidence.dependencies import dependency_updates
from .evidence.release import changelog_entries, new_version
from .lang import Names
from .message import clean_prose, first_paragraphs, whole_sentences
from .paths import FileKind
from .stats import where_names
from .title import TAG_TYPES, norm_tag


def _say(lang: str, key: str, /, **fields: object) -> str:
    """The sentence `offline.prose.<key>` in `lang`, its field objects (Names) told in it too."""
    return phrase(f"offline.prose.{key}", **fields).say(lang)


def _update_text(updates: list[tuple[str, str, str]], files: list[str], lang: str) -> str:
    shown = [f"{n} {o} → {v}" for n, o, v in updates[:4]]
    more = len(updates) - len(shown)
    listed = ", ".join(shown) + (f" (+{more})" if more > 0 else "")
    return _say(lang, "updates_in", updates=listed, files=Names(files, 2))


def build_summary(c: Context, importance: Importance, zh: bool) -> str:
    """Whole sentences: the author's own (cut only at a sentence end), a dependency update as
    'name old → new (file)', a release as its version and changelog size, else what changed where."""
    lang = "zh" if zh else "en"
    if c.ctype is ChangeType.DEPENDENCIES or c.commit.author.lower().endswith("[bot]"):
        updates = dependency_updates(c.commit, c.stats, c.title)
        if updates:
            files = [
                f.path
                for f, k in c.stats.files
                if k in (FileKind.LOCKFILE, FileKind.DEPENDENCY, FileKind.CI, FileKind.BUILD, FileKind.CONFIG)
            ]
            if not files and c.stats.files:
                files = [c.stats.files[0][0].path]
            listed = _update_text(updates, files, lang) if files else ", ".join(f"{n} {o} → {v}" for n, o, v in updates)
            return _say(lang, "dependency_update", updates=listed)
    if c.title.release:
        m = re.search(r"v?(\d+\.\d+[\w.+-]*)", c.title.subject)
        version = m.group(1) if m else new_version(c.stats)
        entries = changelog_entries(c.stats)
        version = version or _say(lang, "unnamed_release")
        if entries:
            return _say(lang, "release_with_changelog", version=version, entries=entries)
        return _say(lang, "release", version=version)
    limit = 200 if importance is Importance.LOW else 360
    para = first_paragraphs(c.commit.body, 1200)
    if importance is Importance.LOW:
        para = para.split("\n", 1)[0]  # one paragraph for a one-line entry
    said = whole_sentences(para.replace("\n", " "), limit) if para else ""
    if said and len(re.findall(r"\w+", said)) < 4:
        said = ""
    where = where_names(c.stats, c.diff.hunk_names, zh)
    if c.ctype is ChangeType.REVERT and c.title.reverted_title:
        inner = clean_prose(c.title.reverted_title).rstrip(".。")
        return _say(lang, "reverts_in", inner=inner, where=where) if where else _say(lang, "reverts", inner=inner)
    if not said:
        subject = clean_prose(c.title.subject).rstrip(".。") or c.commit.title
        if not zh:  # it opens the English sentence; the Chinese one quotes it as written
            subject = subject[:1].upper() + subject[1:]
        return _say(lang, "title_in", subject=subject, where=where) if where else _say(lang, "title", subject=subject)
    if where and importance is not Importance.LOW:
        return _say(lang, "author_text_in", said=said, where=where)
    return _say(lang, "author_text", said=said)


# --- who is affected ---------------------------------------------------------------------------

_GROUP_DIRS = frozenset(
    {"crates", "packages", "libs", "lib", "modules", "plugins", "apps", "components", "services", "pkg", "cmd", "src"}
)
_NOT_AREAS = frozenset({"misc", "minor", "chore", "wip", "nfc", "trivial", "small", "core"})


def _component(path: str) -> str:
    parts = path.strip("/").split("/")
    if len(parts) >= 3 and parts[0] in _GROUP_DIRS:
        return parts[1]
    if len(parts) >= 2:
        return parts[0]
    return ""


def _audiences(c: Context, zh: bool) -> list[str]:
    d, t = c.diff, c.title
    lang = "zh" if zh else "en"
    out: list[str] = []

    def add(key: str, /, **fields: object) -> None:
        said = _say(lang, key, **fields)
        if said not in out:
            out.append(said)

    if d.release_edits:
        add("installs_released_builds", edits=Names(d.release_edits, 2))
    if d.removed_flags:
        add("scripts_passing", flags=Names(d.removed_flags, 2))
    if d.removed_api:
        add("code_calling", names=Names(d.removed_api, 2))
    if d.default_changes:
        add("deployments_leaving_unset", setting=d.default_changes[0][1])
    for kind in d.surface_kinds:
        add(f"surface_users.{kind}")
    if d.shipped_dep_changes:
        add("installs_with_changed_dependency", deps=Names(d.shipped_dep_changes, 2))
    tags = [tag for tag in t.tags if norm_tag(tag) not in TAG_TYPES and norm_tag(tag) not in _NOT_AREAS]
    comps: list[str] = []
    for f in c.stats.source:
        if c.profile.is_internal(f.path):
            continue
        comp = _component(f.path).lstrip("_")
        if comp and comp not in comps:
            comps.append(comp)
    server = any(
        set(re.split(r"[/.]", f.path.lower())) & SERVER_TOKENS
        or re.search(r"(^|[/_-])(server|lsp)([/_.-]|$)", f.path.lower())
        for f in c.stats.source
    )
    if server:
        who = tags[0] if tags else (comps[0] if comps else "")
        if who:
            add("language_server_users_of", who=who)
        else:
            add("language_server_users")
    if tags:
        if comps:
            add("users_of_area_in", area=tags[0], components=Names(comps, 2))
        else:
            add("users_of_area", area=tags[0])
    elif comps:
        add("users_of_components", components=Names(comps, 2))
    if not out and c.stats.of(FileKind.CI):
        add("maintainers_ci")
    if not out and c.stats.of(FileKind.TOOLING, FileKind.TEST, FileKind.DOCS):
        add("contributors")
    return out


def build_impact(c: Context, zh: bool, limit: int = 3) -> str:
    """Who is affected, in one sentence: users of X, operators of Y — not a file census."""
    lang = "zh" if zh else "en"
    who = _audiences(c, zh)[:limit]
    if not who:
        return ""
    listed = text(lang, "offline.prose.audience_sep").join(who[:-1])
    if len(who) > 1:
        listed += text(lang, "offline.prose.audience_last_sep")
    return _say(lang, "affects", who=listed + who[-1])
