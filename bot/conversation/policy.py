"""Who may do what in a conversation, and which repositories a request is about: changing a
channel's subscriptions, settings or owner mappings is for the platform's admins in that workspace
(its registry entry's admin list, when set; `is_admin`); chat users may name remote
repositories (GitHub, GitLab: any registry entry that is `remote`) or the configured default (only the operator's own terminal may point at local
paths on the bot's machine); a command naming no repository is about the channel's
subscriptions, else the default repository."""

from __future__ import annotations

from typing import Protocol

from settings import Settings

from ..core import platform_registry, tenants
from ..core.chat_platform import Conversation
from ..core.models import BotError, Subscription, UsageError
from ..i18n import phrase
from ..sources import SourceRegistry
from ..sources.giturl import parse_git_url
from ..sources.registry import find
from .grammar import CommandError


class ChannelSubscriptions(Protocol):
    """The subscriptions store, as the policy reads it (bot/channels/subscriptions.py)."""

    async def for_channel(self, platform: str, channel: str) -> list[Subscription]: ...


class ChannelPolicy:
    def __init__(self, settings: Settings, sources: SourceRegistry, subs: ChannelSubscriptions):
        self.settings = settings
        self.sources = sources
        self.subs = subs

    def admin_list(self, platform: str) -> frozenset[str]:
        """The platform's admin list as set (its registry entry names the setting); empty: none set."""
        entry = platform_registry.by_name(platform)
        return self.settings.admin_list(entry.admins(self.settings)) if entry is not None else frozenset()

    def require_admin(self, conv: Conversation) -> None:
        """Changing a channel's subscriptions, settings or owner mappings: the platform's admins
        only, per workspace (`is_admin`); anyone when its admin list is not set."""
        admins = self.admin_list(conv.platform)
        if admins and not is_admin(admins, conv.channel, conv.user):
            raise UsageError(phrase("errors.admins_only"))

    def check_repo(self, conv: Conversation, repo: str) -> str:
        """Chat users may name remote repositories or the configured default; only the operator's
        own terminal may point at arbitrary local paths on the bot's machine."""
        if repo in (self.settings.default_repo, "."):
            return self.settings.default_repo
        default_name = self._default_name()
        if default_name and repo.lower() == default_name.lower():
            return self.settings.default_repo  # a local clone named by its owner/name: stay local
        named = find(repo, self.settings)
        if platform_registry.is_operator(conv.platform):
            return named.spec if named is not None and not named.entry.keeps_typed else repo
        if named is not None and named.entry.remote:
            self.check_git_host(named.kind, named.where)
            return named.spec  # `gitlab:group/project` for a GitLab URL: short and unambiguous
        raise UsageError(phrase("errors.repo_policy", default=default_name or self.settings.default_repo))

    def check_git_host(self, kind: str, where: str) -> None:
        """A git URL names a host the bot will fetch from: GIT_URL_HOSTS, when set, lists those
        chat users may name (the bot's network may reach services its users should not)."""
        hosts = self.settings.admin_list(self.settings.git_url_hosts.lower())
        url = parse_git_url(where) if kind == "url" and hosts else None
        if url is not None and url.host not in hosts and url.web_host not in hosts:
            raise UsageError(phrase("errors.git_host_policy", host=url.host, hosts=", ".join(sorted(hosts))))

    def _default_name(self) -> str | None:
        try:
            return self.sources.get(self.settings.default_repo).name
        except BotError:
            return None

    async def channel_repos(self, conv: Conversation, named: tuple[str, ...]) -> list[tuple[str, Subscription | None]]:
        """The repositories a command is about: those it names (checked against the policy), else
        the channel's subscriptions, else the default repository."""
        if named:
            return [(self.check_repo(conv, r), None) for r in named]
        subs = await self.subs.for_channel(conv.platform, conv.channel)
        if subs:
            return [(s.repo, s) for s in subs]
        try:
            self.sources.get(self.settings.default_repo)
        except UsageError:  # no usable default (e.g. DEFAULT_REPO unset and not run from a clone)
            raise CommandError(phrase("errors.no_repo"), "digest") from None
        return [(self.settings.default_repo, None)]


def is_admin(admins: frozenset[str], channel: str, user: str) -> bool:
    """Whether `user` is an admin of `channel`'s workspace. An entry `U1` is that person in any
    workspace, `T1/U1` that person in workspace T1 only, `T1/*` anyone in T1 (bot/core/tenants.py:
    the adapters qualify both ids from the verified request). A person of another workspace (a
    shared channel, a forged id) is never an admin here, nor is an id holding another `T/` (typed
    into a request: no platform's own id holds the separator); a workspace none of whose entries
    apply has no admins, so a list set for one workspace never leaves another open."""
    workspace = tenants.tenant_of(channel)
    theirs, person = tenants.split(user)
    if theirs != workspace or tenants.SEP in person:  # no platform's own id holds the separator
        return False
    if person in admins:
        return True
    return workspace is not None and bool(
        {tenants.qualify(workspace, person), tenants.qualify(workspace, "*")} & admins
    )
