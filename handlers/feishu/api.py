"""Everything that touches lark_oapi: the one module of the package importing it (the SDK takes
seconds to import, so `bot.runtime.processes` imports this package only when Feishu is configured).

`FeishuApi` runs SDK calls (blocking `requests` underneath, including the token fetch) in a small
thread pool, paced (handlers/pacing.py), with our retry policy: HTTP 429 / code 99991400 waits
`x-ogw-ratelimit-reset` and retries; other transient failures back off; a final failure is one
sentence (never a token or the secret). The SDK's request builders and event types are
re-exported from here for the rest of the package.
"""

from __future__ import annotations

import asyncio
import json
import logging
import random
from collections.abc import Awaitable, Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Protocol

import lark_oapi as lark
from lark_oapi.api.cardkit.v1 import (
    ContentCardElementRequest,
    ContentCardElementRequestBody,
    CreateCardRequest,
    CreateCardRequestBody,
    SettingsCardRequest,
    SettingsCardRequestBody,
)
from lark_oapi.api.im.v1 import (
    CreateMessageRequest,
    CreateMessageRequestBody,
    GetMessageRequest,
    ListMessageRequest,
    P2ImMessageReceiveV1,
    PatchMessageRequest,
    PatchMessageRequestBody,
    ReplyMessageRequest,
    ReplyMessageRequestBody,
)
from lark_oapi.core.exception import ObtainAccessTokenException
from lark_oapi.core.utils import AESCipher
from lark_oapi.event.callback.model.p2_card_action_trigger import P2CardActionTrigger, P2CardActionTriggerResponse

from bot.core.models import BotError
from bot.i18n import phrase
from handlers.pacing import Pacer

log = logging.getLogger(__name__)

RATE_CODES = frozenset({99991400, 230020, 11232})  # gateway, per-chat, per-tenant message limits
# The app lacks a scope / a capability: the same call fails the same way in every chat.
PERMISSION_CODES = frozenset({99991672, 99991679, 230027, 230006})
# The token is not (or no longer) valid: invalid, expired, or of another tenant.
TOKEN_CODES = frozenset({99991661, 99991663, 99991664, 99991668, 99991677})
MAX_BODY_BYTES = 30 * 1024  # card and rich-text request bodies (error 230025)
MAX_TRANSIENT = 5  # attempts for 5xx / connection failures
MAX_THROTTLED = 10  # waits for a rate-limit reset before giving up
MAX_RESET_WAIT = 60.0
APP_LIMITS = (("app:s", 50, 1.0), ("app:min", 1000, 60.0))


class TenantTokens(Protocol):
    """A store app's tokens (handlers/feishu/store_app.py's StoreApp)."""

    async def tenant_token(self, tenant: str) -> str: ...

    async def forget(self, tenant: str, token: str) -> None: ...


class FeishuError(BotError):
    """Feishu refused a call (after retries where retrying made sense)."""

    def __init__(self, message: str, code: int | None = None):
        super().__init__(message)
        self.code = code


class FeishuApi:
    """Runs SDK calls (blocking `requests` underneath, including the token fetch) in a small
    thread pool, paced, with our retry policy: the SDK itself neither retries nor raises."""

    def __init__(
        self,
        client: lark.Client,
        executor: ThreadPoolExecutor,
        pacer: Pacer,
        *,
        max_throttled: int = MAX_THROTTLED,
        max_transient: int = MAX_TRANSIENT,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ):
        self.client = client
        self.executor = executor
        self.pacer = pacer
        self.sleep = sleep  # the waits between attempts (tests record them instead of waiting)
        self.max_throttled = max_throttled  # rate-limit waits per call before giving up
        self.max_transient = max_transient  # attempts per call on 5xx / connection failures
        # A store app's tokens (handlers/feishu/store_app.py), set by the adapter: every call then
        # carries its tenant's tenant_access_token. None: a self-built app, the SDK's own token.
        self.tokens: TenantTokens | None = None

    async def call(self, what: str, fn: Callable, request, *, limits=(), tenant: str | None = None) -> Any:
        """One API call, paced, retried on rate limits and transient failures. `what` names the
        action for the error a user may read: a key of the catalogue's [errors.feishu_doing].
        `tenant`: whose tenant_access_token a store app calls with (ignored by a self-built app).
        Returns the SDK's response for `fn` (lark_oapi has no type information: Any)."""
        key = what
        what = phrase(f"errors.feishu_doing.{what}")  # English in the logs, the reader's language when shown
        if self.tokens is not None and request_needs_token(request):
            return await self._as_tenant(key, fn, request, limits, tenant)
        return await self._call(what, fn, request, limits, None)

    async def _as_tenant(self, key: str, fn: Callable, request, limits, tenant: str | None) -> Any:
        """A store app's call: with its tenant's token, never another's; a token Feishu no longer
        takes is forgotten and the call made once more with a fresh one."""
        assert self.tokens is not None
        what = phrase(f"errors.feishu_doing.{key}")
        if not tenant:  # an address without its tenant: a bug, never a guess at some tenant's token
            log.error("not calling Feishu to %s: a store app's call names no tenant", what)
            raise FeishuError(phrase("errors.feishu_refused", what=what, code=-1, msg="no tenant"))
        for attempt in (1, 2):
            token = await self.tokens.tenant_token(tenant)
            option = lark.RequestOption.builder().tenant_access_token(token).build()
            try:
                return await self._call(what, fn, request, limits, option)
            except FeishuError as exc:
                if exc.code not in TOKEN_CODES or attempt == 2:
                    raise
                await self.tokens.forget(tenant, token)
        raise AssertionError("unreachable")

    async def _call(self, what, fn: Callable, request, limits, option) -> Any:
        args = (request,) if option is None else (request, option)
        size = body_bytes(request)
        if size > MAX_BODY_BYTES:  # the renderer keeps cards well below: never send what Feishu refuses
            log.error("not sending a %d-byte request body to %s (Feishu's limit is %d)", size, what, MAX_BODY_BYTES)
            raise FeishuError(phrase("errors.feishu_too_large", what=what), 230025)
        loop = asyncio.get_running_loop()
        transient = throttled = 0
        while True:
            await self.pacer.acquire(tuple(limits) + APP_LIMITS)
            try:
                resp = await loop.run_in_executor(self.executor, fn, *args)
            except ObtainAccessTokenException as exc:
                if exc.code in RATE_CODES:  # the token endpoint is rate-limited too: not a credentials problem
                    if throttled < self.max_throttled:
                        throttled += 1
                        await self.sleep(_backoff(throttled))
                        continue
                    raise FeishuError(phrase("errors.feishu_rate_limited", what=what), exc.code) from None
                raise FeishuError(
                    phrase("errors.feishu_bad_credentials", code=exc.code, msg=exc.msg), exc.code
                ) from None
            except Exception as exc:  # noqa: BLE001 — connection refused/reset, timeout, a non-JSON gateway page
                transient += 1
                if transient >= self.max_transient:
                    raise FeishuError(phrase("errors.feishu_unreachable", what=what, kind=type(exc).__name__)) from None
                await self.sleep(_backoff(transient))
                continue
            raw = getattr(resp, "raw", None)
            status = getattr(raw, "status_code", None) or 200
            code = resp.code if resp.code is not None else (0 if status < 400 else -1)
            if status == 429 or code in RATE_CODES:
                throttled += 1
                if throttled > self.max_throttled:
                    raise FeishuError(phrase("errors.feishu_rate_limited", what=what), code)
                await self.sleep(_reset_wait(getattr(raw, "headers", None) or {}, throttled))
                continue
            if code == 0 and status < 400:
                return resp
            if status >= 500 and transient + 1 < self.max_transient:
                transient += 1
                await self.sleep(_backoff(transient))
                continue
            log.warning("Feishu refused to %s: HTTP %s, code %s, %s", what, status, code, resp.msg)
            raise FeishuError(
                phrase(
                    "errors.feishu_refused", what=what, code=code, msg=resp.msg or phrase("errors.feishu_no_message")
                ),
                code,
            )

    async def raw(
        self,
        what: str,
        method: str,
        uri: str,
        body: dict | None = None,
        *,
        limits=(),
        tenant: str | None = None,
        auth: bool = True,
    ) -> dict:
        """A call the SDK has no method for; returns the whole JSON reply. `auth=False`: a call
        that carries no token (a store app's token endpoints)."""
        builder = lark.BaseRequest.builder().http_method(getattr(lark.HttpMethod, method)).uri(uri)
        request = builder.token_types({lark.AccessTokenType.TENANT} if auth else set()).build()
        if body is not None:
            request.body = body
            request.headers = {"Content-Type": "application/json; charset=utf-8"}
        resp = await self.call(what, self.client.request, request, limits=limits, tenant=tenant)
        try:
            return json.loads(resp.raw.content or b"{}")
        except ValueError:
            raise FeishuError(phrase("errors.feishu_unreadable", what=phrase(f"errors.feishu_doing.{what}"))) from None


def request_needs_token(request) -> bool:
    """Whether the SDK would put a token on this request (the token endpoints carry none)."""
    return bool(getattr(request, "token_types", None))


def store_client(app_id: str, app_secret: str, domain: str, timeout: float) -> lark.Client:
    """A store app's client. Tokens are ours (handlers/feishu/store_app.py), passed on every
    request as `RequestOption.tenant_access_token`: `enable_set_token` makes the SDK use it. The
    SDK's own ISV token path is not used: its cache is one class attribute per process (not
    shared by the bot's processes), it has no lock (N processes, N fetches at expiry) and it
    ignores the builder's app_ticket (a TODO in 1.7.5: the ticket must ride on every request).
    `AppType.ISV` keeps it from ever fetching a self-built app's token instead: a request
    reaching it without our token fails with "tenant_key not found" rather than fetching."""
    return (
        lark.Client.builder()
        .app_id(app_id)
        .app_secret(app_secret)
        .app_type(lark.AppType.ISV)
        .enable_set_token(True)
        .domain(domain)
        .timeout(timeout)
        .build()
    )


def long_connection(loop: asyncio.AbstractEventLoop, app_id: str, app_secret: str, dispatcher, domain: str):
    """The SDK's long-connection (WebSocket) client, bound to `loop`: the thread that runs it."""
    import lark_oapi.ws.client as ws_client

    # The client's constructor takes the thread's event loop for a cache of its own (and makes,
    # and leaks, a new one if the thread has none): give it this one.
    asyncio.set_event_loop(loop)
    # lark-oapi 1.7.5 keeps its event loop in a module global bound when it was first imported
    # (typically the bot's running main loop, where `start()` fails): give it this thread's.
    ws_client.loop = loop
    return lark.ws.Client(
        app_id,
        app_secret,
        event_handler=dispatcher,
        domain=domain.rstrip("/"),
        log_level=lark.LogLevel.WARNING,
        auto_reconnect=True,
    )


def body_bytes(request) -> int:
    """The size of the request body exactly as the SDK will send it (its own serialiser)."""
    body = getattr(request, "body", None)
    if body is None:
        return 0
    marshalled = lark.JSON.marshal(body)
    return len(marshalled.encode("utf-8")) if marshalled else 0


def _backoff(attempt: int) -> float:
    return min(8.0, 0.25 * 2 ** (attempt - 1)) * (0.75 + random.random() / 2)


def _reset_wait(headers: Mapping[str, str], attempt: int) -> float:
    """Seconds until the rate-limit window resets (`x-ogw-ratelimit-reset`), else a backoff."""
    value = next((v for k, v in headers.items() if k.lower() == "x-ogw-ratelimit-reset"), None)
    if value is None:
        return _backoff(attempt)
    try:
        return min(MAX_RESET_WAIT, max(0.05, float(value)))
    except (TypeError, ValueError):
        return _backoff(attempt)


__all__ = [
    "lark",
    "FeishuApi",
    "FeishuError",
    "RATE_CODES",
    "PERMISSION_CODES",
    "MAX_BODY_BYTES",
    "body_bytes",
    "store_client",
    "request_needs_token",
    "TOKEN_CODES",
    "APP_LIMITS",
    "AESCipher",
    "P2ImMessageReceiveV1",
    "P2CardActionTrigger",
    "P2CardActionTriggerResponse",
    "ContentCardElementRequest",
    "ContentCardElementRequestBody",
    "CreateCardRequest",
    "CreateCardRequestBody",
    "SettingsCardRequest",
    "SettingsCardRequestBody",
    "CreateMessageRequest",
    "CreateMessageRequestBody",
    "PatchMessageRequest",
    "GetMessageRequest",
    "ListMessageRequest",
    "PatchMessageRequestBody",
    "ReplyMessageRequest",
    "ReplyMessageRequestBody",
]
