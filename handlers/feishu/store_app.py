"""A Feishu/Lark store app's credentials (FEISHU_APP_TYPE=store), kept in Redis for every process.

Feishu pushes an `app_ticket` to a store app's callback every hour; with it (and the app secret)
the app gets an `app_access_token`, and with that one `tenant_access_token` per tenant that
installed it (`tenant_key`). All three live in Redis, so the web process that received the ticket
and the worker and clock processes that send share them. A token is refreshed when less than
REFRESH_BEFORE of its life is left (Feishu hands out a new one then, the old staying valid until
its end), under `Store.single_flight`: N processes asking at once make one fetch.

After a restart with no ticket in Redis (a first start, a flushed Redis) the app cannot get any
token until Feishu pushes one: the bot asks Feishu to resend it, says so in a log line and in
`python -m bot health platforms`, and a send meanwhile fails with one sentence.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from bot.core.models import BotError
from bot.i18n import phrase
from handlers.feishu.api import FeishuApi, FeishuError

log = logging.getLogger(__name__)

TICKET_RESEND = "/open-apis/auth/v3/app_ticket/resend"
APP_TOKEN = "/open-apis/auth/v3/app_access_token"
TENANT_TOKEN = "/open-apis/auth/v3/tenant_access_token"
REFRESH_BEFORE = 1800  # seconds: Feishu returns a new token once less than 30 minutes are left
RESEND_EVERY = 300  # seconds between two requests to resend a missing ticket
TICKET_CODES = frozenset({10012})  # "app_ticket is invalid": a new one is needed


class StoreApp:
    """The ticket, the app token and each tenant's token of one store app, in Redis."""

    def __init__(self, api: FeishuApi, store, app_id: str, app_secret: str, clock: Callable[[], float] = time.time):
        self.api = api
        self.store = store
        self.app_id = app_id
        self.app_secret = app_secret
        self.clock = clock
        self.fetches = 0  # token fetches this process made (the bench counts them)

    def _key(self, *parts: str) -> str:
        return self.store.k("feishu", "isv", self.app_id, *parts)

    # --- the ticket ----------------------------------------------------------------------------------
    async def ticket(self) -> str | None:
        found = await self.store.get_json(self._key("ticket"))
        return str(found["ticket"]) if isinstance(found, dict) and found.get("ticket") else None

    async def save_ticket(self, ticket: str) -> None:
        """An app_ticket event (verified by the caller): kept for every process."""
        now = self.clock()
        await self.store.set_json(self._key("ticket"), {"ticket": ticket, "at": now})
        await self._say(ok=True, key="ops.feishu_ticket_ok", since=now)
        log.info("Feishu store app %s: app_ticket received", self.app_id)

    async def wait_for_ticket(self) -> bool:
        """At start: True when a ticket is there; else ask Feishu to resend one (at most every
        RESEND_EVERY seconds, whichever process asks), say that we wait, and return False."""
        if await self.ticket():
            return True
        await self.ask_resend()
        state = await self.store.get_json(self.store.k("health", "platform", "feishu"))
        asked = float(state.get("since") or 0) if isinstance(state, dict) else 0.0
        seconds = round(self.clock() - asked) if asked else 0
        log.warning("%s", phrase("ops.feishu_waiting_ticket", app_id=self.app_id, seconds=seconds))
        return False

    async def ask_resend(self) -> None:
        """Ask Feishu to push the ticket again, unless some process asked in the last RESEND_EVERY s."""
        if not await self.store.claim(self._key("resend"), RESEND_EVERY):
            return
        now = self.clock()
        try:
            await self.api.raw(
                "resend_ticket",
                "POST",
                TICKET_RESEND,
                {"app_id": self.app_id, "app_secret": self.app_secret},
                auth=False,
            )
        except BotError as exc:
            log.warning("Feishu store app %s: asking Feishu to resend the app_ticket failed: %s", self.app_id, exc)
        await self._say(ok=False, key="ops.feishu_waiting_ticket", since=now)

    async def _say(self, *, ok: bool, key: str, since: float) -> None:
        """What `python -m bot health platforms` reports (bot/runtime/health.py reads
        `{prefix}health:platform:*`: ok, a catalogue key, its fields, since when)."""
        state = {"ok": ok, "phrase": key, "fields": {"app_id": self.app_id}, "since": since}
        await self.store.set_json(self.store.k("health", "platform", "feishu"), state)

    # --- tokens --------------------------------------------------------------------------------------
    async def app_token(self) -> str:
        return await self._token(self._key("app_token"), self._fetch_app_token)

    async def tenant_token(self, tenant: str) -> str:
        return await self._token(self._key("tenant_token", tenant), lambda: self._fetch_tenant_token(tenant))

    async def forget(self, tenant: str, token: str) -> None:
        """Feishu refused `token`: drop it (unless another process has replaced it already)."""
        key = self._key("tenant_token", tenant)
        found = await self.store.get_json(key)
        if isinstance(found, dict) and found.get("token") == token:
            await self.store.delete(key)

    async def _token(self, key: str, fetch) -> str:
        async def cached() -> dict | None:
            found = await self.store.get_json(key)
            if isinstance(found, dict) and float(found.get("expires", 0)) - self.clock() > REFRESH_BEFORE:
                return found
            return None

        async def produce() -> dict:
            token, expire = await fetch()
            value = {"token": token, "expires": self.clock() + expire}
            await self.store.set_json(key, value, ttl=max(1, int(expire)))
            return value

        found = await self.store.single_flight(key, produce, cached=cached)
        return str(found["token"])

    async def _fetch_app_token(self) -> tuple[str, float]:
        ticket = await self.ticket()
        if not ticket:
            await self.ask_resend()
            raise FeishuError(phrase("errors.feishu_no_ticket"))
        reply = await self._fetch(
            "get_app_token", APP_TOKEN, {"app_id": self.app_id, "app_secret": self.app_secret, "app_ticket": ticket}
        )
        return str(reply["app_access_token"]), float(reply.get("expire") or 0)

    async def _fetch_tenant_token(self, tenant: str) -> tuple[str, float]:
        app_token = await self.app_token()
        reply = await self._fetch(
            "get_tenant_token", TENANT_TOKEN, {"app_access_token": app_token, "tenant_key": tenant}
        )
        return str(reply["tenant_access_token"]), float(reply.get("expire") or 0)

    async def _fetch(self, what: str, uri: str, body: dict) -> dict:
        self.fetches += 1
        try:
            reply = await self.api.raw(what, "POST", uri, body, auth=False)
        except FeishuError as exc:
            if exc.code in TICKET_CODES:  # a stale ticket: forget it, ask for a new one
                await self.store.delete(self._key("ticket"))
                await self.ask_resend()
            raise
        if not isinstance(reply, dict) or not reply.get(
            "app_access_token" if uri == APP_TOKEN else "tenant_access_token"
        ):
            raise FeishuError(phrase("errors.feishu_unreadable", what=phrase(f"errors.feishu_doing.{what}")))
        return reply
