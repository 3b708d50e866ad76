"""Subscriptions and per-channel settings, kept in Redis and editable by command; an optional
`subscriptions.toml` seeds them at start-up for infrastructure-as-code users.

  subs                      hash: "{platform}:{channel}:{repo}" → Subscription JSON
  chancfg:{platform}:{ch}   JSON: language, time zone, who may ask in threads, report file
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, replace
from pathlib import Path

from settings import Settings, check_timezone

from ..core import platform_registry
from ..core.models import ALERT_LEVELS, BOT_MODES, Importance, Subscription, UsageError, subscription_from_dict, to_dict
from ..core.window import WEEKDAYS
from ..digest.authorfilter import MAX_AUTHORS, AuthorError, AuthorFilter
from ..digest.pathfilter import GlobError, PathFilter
from ..i18n import phrase


@dataclass(frozen=True)
class ChannelConfig:
    lang: str
    tz: str
    questions: str = "mention"  # mention: only messages that mention the bot; all: every thread message
    file: bool = False  # attach the full Markdown report to digest threads


class Subscriptions:
    def __init__(self, store, settings: Settings):
        self.store = store
        self.settings = settings

    @property
    def _hash(self) -> str:
        return self.store.k("subs")

    async def upsert(self, sub: Subscription) -> bool:
        """Store `sub`; True when it is new."""
        return await self.store.hset_json(self._hash, sub.key, to_dict(sub))

    async def remove(self, platform: str, channel: str, repo: str, weekly: bool = False) -> bool:
        """Remove the daily subscription (or with `weekly`, the weekly roll-up); True when there was one."""
        key = Subscription(platform, channel, repo, weekday="mon" if weekly else None).key
        return await self.store.hdel(self._hash, key)

    async def all(self) -> list[Subscription]:
        raw = await self.store.hgetall_json(self._hash)
        subs = [subscription_from_dict(v) for v in raw.values()]
        return sorted(subs, key=lambda s: (s.platform, s.channel, s.repo.lower()))

    async def for_channel(self, platform: str, channel: str) -> list[Subscription]:
        return [s for s in await self.all() if s.platform == platform and s.channel == channel]

    # --- channel settings ---------------------------------------------------------------------------
    def _cfg_key(self, platform: str, channel: str) -> str:
        return self.store.k("chancfg", platform, channel)

    async def config(self, platform: str, channel: str) -> ChannelConfig:
        raw = await self.store.get_json(self._cfg_key(platform, channel)) or {}
        base = ChannelConfig(lang=self.settings.default_lang, tz=self.settings.default_tz)
        return replace(base, **{k: v for k, v in raw.items() if k in ChannelConfig.__dataclass_fields__})

    async def set_config(self, platform: str, channel: str, **changes) -> ChannelConfig:
        current = await self.config(platform, channel)
        updated = replace(current, **{k: v for k, v in changes.items() if v is not None})
        await self.store.set_json(self._cfg_key(platform, channel), to_dict(updated))
        return updated

    # --- subscriptions.toml -------------------------------------------------------------------------
    async def seed(self, path: Path) -> int:
        """Upsert every [[subscription]] in the file; returns how many. Subscriptions added by
        command are left alone. A bad file is one ConfigError-style sentence naming the entry."""
        subs = load_subscription_file(path, self.settings)
        for sub in subs:
            await self.upsert(sub)
        return len(subs)


def load_subscription_file(path: Path, settings: Settings) -> list[Subscription]:
    try:
        data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UsageError(phrase("errors.subs_file_missing", path=path)) from None
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(phrase("errors.subs_file_toml", path=path, detail=exc)) from None
    entries = data.get("subscription", [])
    if not isinstance(entries, list):
        raise UsageError(phrase("errors.subs_file_tables", path=path))
    subs = []
    for n, entry in enumerate(entries, 1):
        missing = [k for k in ("platform", "channel", "repo") if not entry.get(k)]
        if missing:
            raise UsageError(phrase("errors.subs_file_lacks", path=path, n=n, keys=", ".join(missing)))
        if entry["platform"] not in platform_registry.names():
            platforms = ", ".join(platform_registry.names())
            raise UsageError(phrase("errors.subs_file_platform", path=path, n=n, platforms=platforms))
        unknown = set(entry) - {
            "platform",
            "channel",
            "repo",
            "at",
            "tz",
            "lang",
            "min",
            "branch",
            "empty",
            "weekly",
            "paths",
            "exclude",
            "authors",
            "exclude_authors",
            "bots",
            "fork",
            "owner",
            "alerts",
        }
        if unknown:
            raise UsageError(phrase("errors.subs_file_unknown", path=path, n=n, keys=", ".join(sorted(unknown))))
        try:
            tz = entry.get("tz", settings.default_tz)
            check_timezone(tz)
            sub = Subscription(
                platform=entry["platform"],
                channel=str(entry["channel"]),
                repo=str(entry["repo"]),
                at=_hhmm(str(entry.get("at", "09:00"))),
                tz=tz,
                lang=_choice(entry.get("lang", settings.default_lang), ("zh", "en"), "lang"),
                min_importance=Importance(_choice(entry.get("min", "low"), ("high", "medium", "low"), "min")),
                branch=entry.get("branch"),
                post_empty=_choice(entry.get("empty", "post"), ("post", "skip"), "empty") == "post",
                weekday=_choice(entry["weekly"], WEEKDAYS, "weekly") if "weekly" in entry else None,
                paths=_globs(entry.get("paths", []), "paths"),
                exclude=_globs(entry.get("exclude", []), "exclude"),
                authors=_names(entry.get("authors", []), "authors"),
                exclude_authors=_names(entry.get("exclude_authors", []), "exclude_authors"),
                bots=_choice(entry.get("bots", "collapse"), BOT_MODES, "bots"),
                fork=str(entry["fork"]) if entry.get("fork") else None,
                owner=str(entry.get("owner", "")),
                alerts=_choice(entry.get("alerts", "off"), ALERT_LEVELS, "alerts"),
            )
        except ValueError as exc:
            detail = exc.args[0] if exc.args else str(exc)  # a Phrase (a time zone) is told in the reader's language
            raise UsageError(phrase("errors.subs_file_entry", path=path, n=n, detail=detail)) from None
        subs.append(sub)
    return subs


def _hhmm(value: str) -> str:
    hh, sep, mm = value.partition(":")
    if not (sep and hh.isdigit() and mm.isdigit() and int(hh) < 24 and int(mm) < 60 and len(mm) == 2):
        raise ValueError(f"at must look like 09:30, not {value!r}")
    return f"{int(hh):02d}:{mm}"


def _globs(value, name) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError(f"{name} must be a list of globs")
    try:
        return PathFilter.of(value).paths
    except GlobError as exc:
        raise ValueError(f"{name}: {exc.glob!r} is not a usable glob ({exc.reason})") from None


def _names(value, name) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError(f"{name} must be a list of author names or logins")
    if len(value) > MAX_AUTHORS:
        raise ValueError(f"{name} takes at most {MAX_AUTHORS} names")
    try:
        return AuthorFilter.of(value).authors
    except AuthorError as exc:
        raise ValueError(f"{name}: {exc.name!r} is not a usable name ({exc.reason})") from None


def _choice(value, choices, name):
    if value not in choices:
        raise ValueError(f"{name} must be one of {', '.join(choices)}, not {value!r}")
    return value
