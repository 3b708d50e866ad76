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
from typing import Any

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
MAX_BODY_BYTES = 30 * 1024  # card and rich-text request bodies (error 230025)
MAX_TRANSIENT = 5  # attempts for 5xx / connection failures
MAX_THROTTLED = 10  # waits for a rate-limit reset before giving up
MAX_RESET_WAIT = 60.0
APP_LIMITS = (("app:s", 50, 1.0), ("app:min", 1000, 60.0))


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

    async def call(self, what: str, fn: Callable, request, *, limits=()) -> Any:
        """One API call, paced, retried on rate limits and transient failures. `what` names the
        action for the error a user may read: a key of the catalogue's [errors.feishu_doing].
        Returns the SDK's response for `fn` (lark_oapi has no type information: Any)."""
        what = phrase(f"errors.feishu_doing.{what}")  # English in the logs, the reader's language when shown
        size = body_bytes(request)
        if size > MAX_BODY_BYTES:  # the renderer keeps cards well below: never send what Feishu refuses
            log.error("not sending a %d-byte request body to %s (Feishu's limit is %d)", size, what, MAX_BODY_BYTES)
            raise FeishuError(phrase("errors.feishu_too_large", what=what), 230025)
        loop = asyncio.get_running_loop()
        transient = throttled = 0
        while True:
            await self.pacer.acquire(tuple(limits) + APP_LIMITS)
            try:
                resp = await loop.run_in_executor(self.executor, fn, request)
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

    async def raw(self, what: str, method: str, uri: str, body: dict | None = None, *, limits=()) -> dict:
        """A call the SDK has no method for; returns the whole JSON reply."""
        request = (
            lark.BaseRequest.builder()
            .http_method(getattr(lark.HttpMethod, method))
            .uri(uri)
            .token_types({lark.AccessTokenType.TENANT})
            .build()
        )
        if body is not None:
            request.body = body
            request.headers = {"Content-Type": "application/json; charset=utf-8"}
        resp = await self.call(what, self.client.request, request, limits=limits)
        try:
            return json.loads(resp.raw.content or b"{}")
        except ValueError:
            raise FeishuError(phrase("errors.feishu_unreadable", what=phrase(f"errors.feishu_doing.{what}"))) from None


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
