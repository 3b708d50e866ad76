"""Who is affected, in one sentence: users of X, operators of Y — not a file census. (The
summary, what the diff does by name, is said.py's.)"""

from __future__ import annotations

from collections.abc import Sequence

from ...i18n import Phrase, phrase, text
from .context import Context
from .evidence.behaviour import language_server_paths
from .lang import Names
from .paths import FileKind
from .title import TAG_TYPES, norm_tag


def _say(lang: str, key: str, /, **fields: object) -> str:
    """The sentence `offline.prose.<key>` in `lang`, its field objects (Names) told in it too."""
    return phrase(f"offline.prose.{key}", **fields).say(lang)


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


def audiences(c: Context) -> list[Phrase]:
    """Who is affected, most specific first, each once (in no language yet)."""
    d, t = c.diff, c.title
    out: list[Phrase] = []

    def add(key: str, /, **fields: object) -> None:
        said = phrase(f"offline.prose.{key}", **fields)
        if str(said) not in out:
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
    server = bool(language_server_paths(c))
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


def tell_impact(who: Sequence[Phrase], lang: str, limit: int = 3) -> str:
    """Who is affected, in one sentence: users of X, operators of Y — not a file census."""
    said = [p.say(lang) for p in who[:limit]]
    if not said:
        return ""
    listed = text(lang, "offline.prose.audience_sep").join(said[:-1])
    if len(said) > 1:
        listed += text(lang, "offline.prose.audience_last_sep")
    return _say(lang, "affects", who=listed + said[-1])


def build_impact(c: Context, zh: bool, limit: int = 3) -> str:
    return tell_impact(audiences(c), "zh" if zh else "en", limit)
