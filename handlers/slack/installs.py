"""The app installed into many workspaces (SLACK_CLIENT_ID + SLACK_CLIENT_SECRET): installations and
OAuth state in Redis, shared by the web, worker and clock processes, and each workspace's token.

Bolt ships no Redis stores, and its file defaults break as soon as two processes run. Here:

  InstallationStore  Bolt's AsyncInstallationStore (bot scope only): one record per workspace,
                     `slack:install:{tenant}`, tenant = the enterprise id of an org-wide install,
                     else the team id; the enterprise id is kept either way
  StateStore         Bolt's AsyncOAuthStateStore: a state is issued for 600 s and consumed once
                     (GETDEL), whichever process serves the redirect
  Tokens             a workspace's bot token for any process, refreshed shortly before it
                     expires (token rotation) under a Redis lock: the installation is read again
                     once the lock is held, so only one refresh ever spends a refresh token
  Workspaces         the client a Slack address is sent with: `T1/C1` → T1's token, one client
                     per token; no installation → SlackNotInstalled, nothing sent (never another
                     workspace's token). `FixedWorkspace` is the single-workspace bot (bare ids).

Tokens are never logged.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections import OrderedDict
from collections.abc import Callable

from bot.core import tenants
from bot.i18n import phrase
from handlers.slack import api
from handlers.slack.api import SlackError

log = logging.getLogger(__name__)

STATE_TTL = 600  # seconds an OAuth state stays valid (Slack's and Bolt's default)
REFRESH_MARGIN = 600  # seconds before expiry a rotating token is refreshed
REFRESH_LOCK_TTL = 30  # seconds one process may hold a workspace's refresh lock
REFRESH_WAIT = 40.0  # seconds a caller waits for another process's refresh
CLIENTS_KEPT = 256  # Web API clients kept (one per token)


class SlackNotInstalled(SlackError):
    """A workspace the app is not (or no longer) installed in: nothing can be sent there."""

    def __init__(self, tenant: str | None):
        super().__init__(phrase("slack_install.not_installed", team=tenant or "?"), "not_installed")


def tenant_of(enterprise_id: str | None, team_id: str | None, is_enterprise_install: bool) -> str | None:
    """The workspace a request or an installation belongs to: an org-wide install is its enterprise's."""
    return (enterprise_id if is_enterprise_install else team_id) or None


class InstallationStore:
    """Bolt's AsyncInstallationStore interface on our store, bot installations only."""

    def __init__(self, store, client_id: str):
        self.store = store
        self.client_id = client_id

    @property
    def logger(self) -> logging.Logger:
        return log

    def key(self, tenant: str) -> str:
        return self.store.k("slack", "install", tenant)

    async def get(self, tenant: str | None) -> dict | None:
        return await self.store.get_json(self.key(tenant)) if tenant else None

    async def put(self, record: dict) -> None:
        await self.store.set_json(self.key(record["tenant"]), record)

    async def remove(self, tenant: str | None, why: str) -> bool:
        if not tenant or await self.get(tenant) is None:
            return False
        await self.store.delete(self.key(tenant))
        log.info("Slack workspace %s: installation deleted (%s); its subscriptions are kept", tenant, why)
        return True

    # --- Bolt's interface -------------------------------------------------------------------------
    async def async_save(self, installation) -> None:
        await self.async_save_bot(installation)

    async def async_save_bot(self, bot) -> None:
        tenant = tenant_of(bot.enterprise_id, bot.team_id, bool(bot.is_enterprise_install))
        if tenant is None or not bot.bot_token:
            raise SlackError(phrase("errors.slack_failed", method="oauth.v2.access", code="no_bot_token"))
        record = {
            "tenant": tenant,
            "app_id": bot.app_id,
            "enterprise_id": bot.enterprise_id,
            "enterprise_name": bot.enterprise_name,
            "team_id": bot.team_id,
            "team_name": bot.team_name,
            "is_enterprise_install": bool(bot.is_enterprise_install),
            "bot_token": bot.bot_token,
            "bot_id": bot.bot_id,
            "bot_user_id": bot.bot_user_id,
            "bot_scopes": list(bot.bot_scopes or []),
            "bot_refresh_token": bot.bot_refresh_token,
            "bot_token_expires_at": bot.bot_token_expires_at,
            "installer": getattr(bot, "user_id", None),
            "installed_at": time.time(),
        }
        await self.put(record)
        log.info("Slack workspace %s installed (%s)", tenant, bot.team_name or bot.enterprise_name or "")

    async def async_find_bot(self, *, enterprise_id, team_id, is_enterprise_install=False):
        record = await self.get(tenant_of(enterprise_id, team_id, bool(is_enterprise_install)))
        return api.bot_model(record) if record else None

    async def async_find_installation(self, *, enterprise_id, team_id, user_id=None, is_enterprise_install=False):
        if user_id is not None:
            return None  # no user tokens are kept: the bot asks no user scopes
        record = await self.get(tenant_of(enterprise_id, team_id, bool(is_enterprise_install)))
        return api.installation_model(record) if record else None

    async def async_delete_bot(self, *, enterprise_id, team_id) -> None:
        await self._delete_either(enterprise_id, team_id, "bot deleted")

    async def async_delete_installation(self, *, enterprise_id, team_id, user_id=None) -> None:
        if user_id is None:
            await self._delete_either(enterprise_id, team_id, "installation deleted")

    async def async_delete_all(self, *, enterprise_id, team_id) -> None:
        await self._delete_either(enterprise_id, team_id, "all deleted")

    async def _delete_either(self, enterprise_id, team_id, why: str) -> None:
        """Without is_enterprise_install: the workspace's own installation, else the org-wide one."""
        if not await self.remove(team_id, why) and enterprise_id:
            record = await self.get(enterprise_id)
            if record and record.get("is_enterprise_install"):
                await self.remove(enterprise_id, why)


class StateStore:
    """Bolt's AsyncOAuthStateStore on our store: valid STATE_TTL seconds, consumed once by any process."""

    def __init__(self, store, ttl: int = STATE_TTL):
        self.store = store
        self.ttl = ttl

    @property
    def logger(self) -> logging.Logger:
        return log

    async def async_issue(self, *args, **kwargs) -> str:
        state = uuid.uuid4().hex
        await self.store.set_json(self.store.k("slack", "oauth_state", state), {"at": time.time()}, ttl=self.ttl)
        return state

    async def async_consume(self, state: str) -> bool:
        if not state or len(state) > 100:
            return False
        return await self.store.take(self.store.k("slack", "oauth_state", state)) is not None


class Tokens:
    """Each workspace's bot token, for whichever process needs it, refreshed before it expires."""

    def __init__(
        self,
        installs: InstallationStore,
        client: api.AsyncWebClient,
        client_id: str,
        client_secret: str,
        *,
        margin: int = REFRESH_MARGIN,
        now: Callable[[], float] = time.time,
    ):
        self.installs = installs
        self.client = client  # tokenless: oauth.v2.access authenticates with the client credentials
        self.client_id = client_id
        self.client_secret = client_secret
        self.margin = margin
        self.now = now
        self.refreshes = 0  # this process's refreshes (bench and tests read it)

    def stale(self, record: dict) -> bool:
        expires = record.get("bot_token_expires_at")
        return bool(record.get("bot_refresh_token")) and expires is not None and expires - self.now() < self.margin

    async def bot(self, tenant: str | None) -> dict | None:
        """The workspace's installation with a token good for a while yet; None: not installed."""
        record = await self.installs.get(tenant)
        if record is None or not self.stale(record):
            return record
        return await self._refresh(record["tenant"])

    async def find(self, enterprise_id: str | None, team_id: str | None, is_enterprise_install: bool) -> dict | None:
        """Bolt's authorize: the request's workspace (an org-wide install's enterprise first)."""
        if is_enterprise_install:
            return await self.bot(enterprise_id)
        return await self.bot(team_id) or (await self._org_wide(enterprise_id))

    async def _org_wide(self, enterprise_id: str | None) -> dict | None:
        record = await self.bot(enterprise_id) if enterprise_id else None
        return record if record and record.get("is_enterprise_install") else None

    async def _refresh(self, tenant: str) -> dict | None:
        store = self.installs.store
        lock = store.k("slack", "install", tenant, "refresh")
        owner = uuid.uuid4().hex
        deadline = time.monotonic() + REFRESH_WAIT
        delay = 0.02
        while True:
            if await store.lease(lock, owner, REFRESH_LOCK_TTL):
                try:
                    record = await self.installs.get(tenant)  # again, under the lock
                    if record is None or not self.stale(record):
                        return record  # gone, or another process refreshed it meanwhile
                    return await self._rotate(record)
                finally:
                    await store.release(lock, owner)
            await asyncio.sleep(delay)
            delay = min(0.25, delay * 1.5)
            record = await self.installs.get(tenant)
            if record is None or not self.stale(record):
                return record
            if time.monotonic() > deadline:
                raise SlackError(phrase("errors.slack_failed", method="oauth.v2.access", code="refresh_busy"))

    async def _rotate(self, record: dict) -> dict:
        try:
            data = await api.refresh_bot_token(
                self.client, self.client_id, self.client_secret, record["bot_refresh_token"]
            )
        except SlackError as exc:
            log.warning("Slack workspace %s: token refresh refused (%s)", record["tenant"], exc.code)
            raise
        self.refreshes += 1
        fresh = dict(
            record,
            bot_token=data["access_token"],
            bot_refresh_token=data.get("refresh_token") or record["bot_refresh_token"],
            bot_token_expires_at=int(self.now()) + int(data.get("expires_in") or 0) if data.get("expires_in") else None,
        )
        await self.installs.put(fresh)
        log.info("Slack workspace %s: bot token refreshed", record["tenant"])
        return fresh


class FixedWorkspace:
    """One workspace, one bot token (SLACK_BOT_TOKEN): ids stay bare, as they always were."""

    def __init__(self, client: api.AsyncWebClient):
        self.client = client

    async def client_for(self, address: str) -> tuple[api.AsyncWebClient, str]:
        return self.client, address

    async def reaches(self, address: str) -> bool:
        return True


class Workspaces:
    """Many workspaces: an address names its workspace, whose own token sends to it."""

    def __init__(self, tokens: Tokens, base_url: str):
        self.tokens = tokens
        self.base_url = base_url
        self.clients: OrderedDict[str, api.AsyncWebClient] = OrderedDict()
        self.lookups = 0  # installation reads for sending (bench reads it)
        self._missing: set[str | None] = set()  # workspaces already logged as not installed

    async def reaches(self, address: str) -> bool:
        """Whether `address`'s workspace has an installation (one log line when it has none)."""
        tenant = tenants.tenant_of(address)
        self.lookups += 1
        if await self.tokens.installs.get(tenant) is None:
            self._no_installation(tenant, tenants.local_id(address))
            return False
        self._missing.discard(tenant)
        return True

    def _no_installation(self, tenant: str | None, local: str) -> None:
        if tenant not in self._missing:  # once per workspace until it is installed again
            self._missing.add(tenant)
            log.warning("Slack workspace %s has no installation: nothing sent to %s", tenant or "(none)", local)

    async def client_for(self, address: str) -> tuple[api.AsyncWebClient, str]:
        tenant, local = tenants.split(address)
        self.lookups += 1
        record = await self.tokens.bot(tenant)
        if record is None:
            self._no_installation(tenant, local)
            raise SlackNotInstalled(tenant)
        self._missing.discard(tenant)
        token = record["bot_token"]
        client = self.clients.get(token)
        if client is None:
            client = self.clients[token] = api.make_client(token, self.base_url)
            while len(self.clients) > CLIENTS_KEPT:
                self.clients.popitem(last=False)
        else:
            self.clients.move_to_end(token)
        return client, local
