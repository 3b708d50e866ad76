"""A repository's profile: where its public surface is, what never ships, how previews are gated.

Read from `.digest.toml` at the root of the repository's default branch (or given as a
subscription option). Both analysers use it: the rule-based one to decide whether a removed
definition is a public API removal and to cap preview-only work, the LLM one as context.
When there is no profile, `RepoProfile.inferred()` stands in: the defaults are the usual layouts
(private `_modules`, `internal/` packages, tests, scripts, benchmarks) — see `is_public`.

The format (every key optional):

    [surface]                     # what users rely on: paths or path prefixes
    cli = ["crates/app/src/args.rs"]
    settings = ["crates/app/src/options.rs", "app.schema.json"]
    env = ["crates/app/src/env_vars.rs"]
    formats = ["crates/app/src/lockfile/"]
    packages = ["mylib/"]         # public library packages

    [internal]
    paths = ["scripts/", "playground/"]   # never shipped: tooling, websites, fuzzers

    [preview]
    paths = ["crates/app/src/preview/"]   # preview-only code
    tags = ["ty"]                          # title tags ("[ty] …") of preview-only products

    [areas]                       # how the weekly roll-up groups commits (bot/digest/rollup.py); names are free
    resolver = ["crates/app-resolver/", "crates/app-pubgrub/"]

A bad profile raises `ProfileError` with one sentence for the digest and the log.
"""

from __future__ import annotations

import logging
import tomllib
from dataclasses import dataclass, field

from ..i18n import phrase

log = logging.getLogger(__name__)

PROFILE_PATH = ".digest.toml"
SURFACE_KINDS = ("cli", "settings", "env", "formats", "packages")
_SECTIONS = {"surface": SURFACE_KINDS, "internal": ("paths",), "preview": ("paths", "tags")}


class ProfileError(ValueError):
    """The profile cannot be used; the message is one sentence for the reader (a catalogue
    phrase: the digest tells it in its own language)."""


@dataclass(frozen=True)
class RepoProfile:
    surface: dict[str, tuple[str, ...]] = field(default_factory=dict)  # kind → paths
    internal: tuple[str, ...] = ()
    preview_paths: tuple[str, ...] = ()
    preview_tags: tuple[str, ...] = ()
    declared: bool = False  # False: defaults inferred, nothing was read
    # name → path prefixes: the roll-up's areas. Not part of the fingerprint: grouping a week
    # changes no analysis.
    areas: dict[str, tuple[str, ...]] = field(default_factory=dict)

    @classmethod
    def inferred(cls) -> RepoProfile:
        return cls()

    # --- questions the analysers ask -------------------------------------------------------------
    def surface_kind(self, path: str) -> str | None:
        """'cli', 'settings', 'env', 'formats' or 'packages' when the profile lists the path."""
        for kind in SURFACE_KINDS:
            if any(_matches(path, p) for p in self.surface.get(kind, ())):
                return kind
        return None

    def is_internal(self, path: str) -> bool:
        return any(_matches(path, p) for p in self.internal)

    def is_preview(self, path: str = "", tags: tuple[str, ...] = ()) -> bool:
        if path and any(_matches(path, p) for p in self.preview_paths):
            return True
        wanted = {t.lower() for t in self.preview_tags}
        return any(t.lower() in wanted for t in tags)

    def is_public(self, path: str) -> bool:
        """On the public surface: listed by the profile, or, for paths it does not list, by the
        usual conventions (a declared `packages` list replaces the conventions)."""
        if self.is_internal(path):
            return False
        if self.surface_kind(path):
            return True
        if self.surface.get("packages"):
            return False  # the profile named its public packages; this is not one of them
        return _conventionally_public(path)

    def fingerprint(self) -> str:
        """'' for the defaults, else a short hash: part of the analysis cache key."""
        if not self.declared:
            return ""
        import hashlib

        return hashlib.sha256(
            repr((sorted(self.surface.items()), self.internal, self.preview_paths, self.preview_tags)).encode()
        ).hexdigest()[:12]

    def describe(self) -> str:
        """One line for the LLM prompt (empty without a declared profile)."""
        if not self.declared:
            return ""
        parts = [f"{kind}: {', '.join(paths)}" for kind, paths in self.surface.items() if paths]
        if self.internal:
            parts.append(f"internal: {', '.join(self.internal)}")
        if self.preview_paths or self.preview_tags:
            parts.append("preview-only: " + ", ".join(self.preview_paths + tuple(f"[{t}]" for t in self.preview_tags)))
        return "; ".join(parts)


def _matches(path: str, pattern: str) -> bool:
    path, pattern = path.strip("/"), pattern.strip()
    if pattern.endswith("/"):
        return path.startswith(pattern.lstrip("/"))
    pattern = pattern.strip("/")
    return path == pattern or path.startswith(pattern + "/")


_PRIVATE_DIRS = {
    "internal",
    "_internal",
    "private",
    "impl",
    "detail",
    "details",
    "tests",
    "test",
    "testing",
    "scripts",
    "tools",
    "benches",
    "benchmarks",
    "examples",
    "docs",
    "fuzz",
}


def _conventionally_public(path: str) -> bool:
    """Without a profile: Python modules outside `_private` names, Go packages outside
    `internal/`, Rust items of a root crate's `src/` (workspace member crates are assumed
    internal: most workspaces publish one front crate), JS/TS/Java/Kotlin outside private dirs."""
    parts = path.strip("/").split("/")
    dirs, name = parts[:-1], parts[-1]
    if any(d.lower() in _PRIVATE_DIRS for d in dirs):
        return False
    ext = name.rsplit(".", 1)[-1].lower() if "." in name else ""
    if ext in ("py", "pyi"):
        stem = name.rsplit(".", 1)[0]
        return not any(p.startswith("_") and p != "__init__" for p in dirs + [stem])
    if ext == "rs":
        return bool(dirs) and dirs[0] == "src"
    return True


def parse_profile(text: str, source: str = PROFILE_PATH) -> RepoProfile:
    """A profile from TOML text; ProfileError (one sentence) when it is not valid."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ProfileError(phrase("llm_path.profile_not_toml", source=source, error=str(exc))) from None
    return profile_from_dict(data, source)


def profile_from_dict(data: dict, source: str = PROFILE_PATH) -> RepoProfile:
    unknown = sorted(set(data) - set(_SECTIONS) - {"areas"})
    if unknown:
        known = ", ".join((*_SECTIONS, "areas"))  # TOML names, listed as written
        raise ProfileError(phrase("llm_path.profile_unknown_section", source=source, section=unknown[0], known=known))
    areas = data.get("areas", {})
    if not isinstance(areas, dict) or not all(
        isinstance(v, list) and v and all(isinstance(p, str) and p.strip() for p in v) for v in areas.values()
    ):
        raise ProfileError(phrase("llm_path.profile_bad_areas", source=source))
    values: dict[str, dict[str, tuple[str, ...]]] = {}
    for section, keys in _SECTIONS.items():
        table = data.get(section, {})
        if not isinstance(table, dict):
            raise ProfileError(phrase("llm_path.profile_not_a_table", source=source, section=section))
        bad = sorted(set(table) - set(keys))
        if bad:
            raise ProfileError(
                phrase(
                    "llm_path.profile_unknown_key", source=source, section=section, key=bad[0], known=", ".join(keys)
                )
            )
        values[section] = {}
        for key, value in table.items():
            if isinstance(value, str):
                value = [value]
            if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
                raise ProfileError(phrase("llm_path.profile_not_paths", source=source, section=section, key=key))
            values[section][key] = tuple(v.strip() for v in value)
    return RepoProfile(
        surface={k: v for k, v in values["surface"].items() if v},
        internal=values["internal"].get("paths", ()),
        preview_paths=values["preview"].get("paths", ()),
        preview_tags=tuple(t.strip("[]") for t in values["preview"].get("tags", ())),
        declared=True,
        areas={name: tuple(p.strip() for p in paths) for name, paths in areas.items()},
    )


async def load_profile(source, override: str | None = None) -> tuple[RepoProfile, str]:
    """(profile, problem): the subscription's profile text when given, else `.digest.toml` at the
    default branch read through the commit source, else the inferred defaults. A bad or unreadable
    profile never stops a digest: the defaults are used and `problem` is one sentence saying why
    (also logged)."""
    where = phrase("llm_path.subscription_profile") if override is not None else PROFILE_PATH
    try:
        text = override
        if text is None:
            reader = getattr(source, "read_file", None)
            text = await reader(PROFILE_PATH) if reader else None
        if text is None:
            return RepoProfile.inferred(), ""
        return parse_profile(text, where), ""
    except ProfileError as exc:
        problem = exc.args[0]  # the phrase itself, so the digest can tell it in its language
    except Exception as exc:  # noqa: BLE001 — the source failed: the digest goes on with the defaults
        problem = phrase("llm_path.profile_unreadable", source=where, kind=type(exc).__name__)
    log.warning("%s: %s", getattr(source, "name", "repository"), problem)
    return RepoProfile.inferred(), problem
