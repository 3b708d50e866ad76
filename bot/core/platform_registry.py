"""The chat platforms, as a registry: one `PlatformEntry` per platform, read by everything that
used to name Slack and Feishu one by one.

An entry says:

- `name`: the platform's name (`Conversation.platform`, the platform part of every Redis key,
  `platform = "…"` in subscriptions.toml);
- `enabled`: whether the settings turn it on (its credentials are there), and `enables`, the
  settings that do, for the sentence a command needing a platform gets;
- `builds`: its adapter's factory, `module:function` (called with the settings, the router and
  `receive=`), imported only when the platform is enabled: a name, not an import, so the core,
  the CLI and the tests of other platforms never import its SDK (lark_oapi takes seconds);
- `check`: its credentials checked before that import (a missing signing secret is one sentence
  without loading the SDK; the adapter keeps its own guard);
- `outbound`: it connects out to receive (Socket Mode, Feishu's long connection), so a `worker`
  receives too;
- `admins`: its admin list (the raw setting) and `admins_setting`, that setting's name (docs,
  help); bot/conversation/policy.py reads entries `U1` and `T1/U1` per workspace;
- `mentions`: the forms of a person or group typed in its messages, as the `owners` command maps
  them (`kind` is what the renderer reads), and how the conversation shows each as text;
  `any_mention`: every platform's forms may be mapped here (the terminal: a mapping there is only
  shown).

The transport lives in `handlers/<name>/` and the rendering in `bot/render/<name>*.py`; this
entry is the rest. Adding a platform: its adapter package, its renderer modules, one entry here
(or, in a test, `registered(entry)`), its settings in settings.py's chat platforms section.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Protocol

from settings import ConfigError, Settings

from ..i18n import OneOf, phrase
from .models import UsageError


class Adapter(Protocol):
    """What a platform's factory returns: its `ChatPlatform` (registered with the app), its HTTP
    routes on the public server, and its lifecycle (a connection opened by `start`)."""

    platform: Any  # a ChatPlatform (core/chat_platform.py)

    def http_routes(self) -> list: ...

    async def start(self) -> None: ...

    async def close(self) -> None: ...


@dataclass(frozen=True)
class MentionForm:
    kind: str  # what an owner mapping keeps and the renderer reads: "slack_user"
    typed: re.Pattern[str]  # the form as typed in a message; group 1 is the id
    shown: str  # the mention as the conversation's own markup, shown as text: "<@{id}>"

    def show(self, id_: str) -> str:
        return self.shown.format(id=id_)


def _never(settings: Settings) -> bool:
    return False


def _no_admins(settings: Settings) -> str:
    return ""


def _no_check(settings: Settings, receive: bool) -> None:
    return None


@dataclass(frozen=True)
class PlatformEntry:
    name: str
    enabled: Callable[[Settings], bool] = _never
    builds: str | Callable[..., Adapter] | None = None  # "handlers.slack:build_slack", or (a test) the function
    enables: str = ""  # the settings that turn it on, as an operator sets them
    check: Callable[[Settings, bool], None] = _no_check  # raises the one sentence a missing credential gets
    outbound: Callable[[Settings], bool] = _never
    admins: Callable[[Settings], str] = _no_admins
    admins_setting: str = ""
    mentions: tuple[MentionForm, ...] = ()
    any_mention: bool = False
    # The operator's own terminal on the bot's machine: may name local paths (repositories, forks)
    # and any git host; a chat platform's users may not.
    operator: bool = False

    def build(self, settings: Settings, router: Any, *, receive: bool) -> Adapter:
        """Its adapter: the credentials checked, then its module imported (now, once) and called."""
        self.check(settings, receive)
        builds = self.builds
        if builds is None:
            raise ValueError(f"the platform {self.name!r} has no adapter to build")
        if isinstance(builds, str):
            module, _, function = builds.partition(":")
            builds = getattr(importlib.import_module(module), function)
        return builds(settings, router, receive=receive)

    @property
    def mention_kinds(self) -> tuple[str, ...]:
        return tuple(m.kind for m in self.mentions)


# --- the built-in platforms' credentials ------------------------------------------------------------


def _slack_check(settings: Settings, receive: bool) -> None:
    secret = settings.slack_signing_secret.get_secret_value() if settings.slack_signing_secret else ""
    if receive and settings.slack_app_token is None and not secret:
        raise UsageError(phrase("ops.slack_http_secret"))


def _feishu_check(settings: Settings, receive: bool) -> None:
    token, key = settings.feishu_verification_token, settings.feishu_encrypt_key
    if settings.feishu_mode == "http" and receive:
        if not (token and key and token.get_secret_value() and key.get_secret_value()):
            raise ConfigError(phrase("ops.config_error", field="FEISHU_MODE=http", detail=phrase("ops.feishu_http")))


PLATFORMS: list[PlatformEntry] = [
    PlatformEntry(
        "slack",
        enabled=lambda s: s.slack_enabled,
        builds="handlers.slack:build_slack",
        enables="SLACK_BOT_TOKEN (SLACK_CLIENT_ID/SLACK_CLIENT_SECRET)",
        check=_slack_check,
        outbound=lambda s: s.slack_enabled and s.slack_app_token is not None,
        admins=lambda s: s.slack_admin_users,
        admins_setting="SLACK_ADMIN_USERS",
        # Slack's escaped mentions may carry `|name`
        mentions=(
            MentionForm("slack_user", re.compile(r"^<@([UW][A-Z0-9]{2,20})(?:\|[^<>]*)?>$"), "<@{id}>"),
            MentionForm("slack_group", re.compile(r"^<!subteam\^(S[A-Z0-9]{2,20})(?:\|[^<>]*)?>$"), "<!subteam^{id}>"),
        ),
    ),
    PlatformEntry(
        "feishu",
        enabled=lambda s: s.feishu_enabled,
        builds="handlers.feishu:build_feishu",
        enables="FEISHU_APP_ID/FEISHU_APP_SECRET",
        check=_feishu_check,
        outbound=lambda s: s.feishu_enabled and s.feishu_mode == "ws",
        admins=lambda s: s.feishu_admin_users,
        admins_setting="FEISHU_ADMIN_USERS",
        mentions=(
            MentionForm(
                "feishu_user",
                re.compile(r"^<at\s+(?:user_id|id|open_id)=\"?(ou_[A-Za-z0-9_-]{1,64})\"?\s*>[^<>]*</at>$"),
                '<at user_id="{id}"></at>',
            ),
        ),
    ),
    # the terminal: opened by `run` when no other platform is enabled (bot/runtime/processes.py),
    # never built as an adapter; its person types `@name`, and any platform's mention may be mapped
    PlatformEntry(
        "console",
        mentions=(MentionForm("name", re.compile(r"^@([A-Za-z0-9][A-Za-z0-9._-]{0,63})$"), "@{id}"),),
        any_mention=True,
        operator=True,
    ),
]


def register(entry: PlatformEntry, *, before: str | None = "console") -> None:
    """Add a platform (a plug-in, a test): just before the entry named `before` (the terminal's
    `@name`, which would take other forms' typed mentions, stays last), else last."""
    names = [e.name for e in PLATFORMS]
    if entry.name in names:
        raise ValueError(f"a platform named {entry.name!r} is registered already")
    PLATFORMS.insert(names.index(before) if before in names else len(PLATFORMS), entry)


def unregister(name: str) -> None:
    PLATFORMS[:] = [e for e in PLATFORMS if e.name != name]


@contextmanager
def registered(entry: PlatformEntry, *, before: str | None = "console") -> Iterator[PlatformEntry]:
    register(entry, before=before)
    try:
        yield entry
    finally:
        unregister(entry.name)


def names() -> tuple[str, ...]:
    return tuple(e.name for e in PLATFORMS)


def by_name(name: str) -> PlatformEntry | None:
    return next((e for e in PLATFORMS if e.name == name), None)


def is_operator(name: str) -> bool:
    """Whether requests from this platform are the operator's own (the terminal)."""
    entry = by_name(name)
    return entry is not None and entry.operator


def enabled(settings: Settings) -> list[PlatformEntry]:
    """The platforms these settings turn on, in the registry's order."""
    return [e for e in PLATFORMS if e.builds is not None and e.enabled(settings)]


def mention_forms() -> Iterator[MentionForm]:
    """Every platform's mention forms, in the registry's order (the first that matches wins)."""
    for entry in PLATFORMS:
        yield from entry.mentions


def enabling_settings() -> OneOf:
    """The settings that turn a platform on, each platform's once: `SLACK_BOT_TOKEN or …` in
    the reader's language."""
    return OneOf(e.enables for e in PLATFORMS if e.enables)
