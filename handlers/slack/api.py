"""Everything that touches slack_sdk / slack_bolt: the one module of the package importing them.

The Web API client (with our retry policy: 429s wait Retry-After, transient server/connection
failures back off), one `call` that turns every SDK failure into a SlackError naming the method
and Slack's error code (never the token), response_url posts, file uploads, the chat stream
helper, and the Bolt app with its HTTP and Socket Mode entry points.
"""

from __future__ import annotations

import asyncio
import json
import logging
import random
import re
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Protocol
from urllib.parse import parse_qsl

from aiohttp import ClientConnectionError, ServerDisconnectedError, web
from slack_bolt.adapter.aiohttp import to_aiohttp_response, to_bolt_request
from slack_bolt.app.async_app import AsyncApp
from slack_bolt.authorization import AuthorizeResult
from slack_bolt.authorization.async_authorize import AsyncAuthorize
from slack_bolt.oauth.async_callback_options import AsyncCallbackOptions, AsyncFailureArgs, AsyncSuccessArgs
from slack_bolt.oauth.async_oauth_flow import AsyncOAuthFlow
from slack_bolt.oauth.async_oauth_settings import AsyncOAuthSettings
from slack_bolt.response import BoltResponse
from slack_sdk.errors import SlackApiError, SlackClientError
from slack_sdk.http_retry.async_handler import AsyncRetryHandler
from slack_sdk.oauth.installation_store import Bot, Installation
from slack_sdk.signature import SignatureVerifier
from slack_sdk.web.async_client import AsyncWebClient
from slack_sdk.webhook.async_client import AsyncWebhookClient

from bot.core.models import BotError
from bot.i18n import phrase

if TYPE_CHECKING:  # for annotations: a slack_sdk without chat_stream lacks the module (open_chat_stream)
    from slack_sdk.web.async_chat_stream import AsyncChatStream

log = logging.getLogger(__name__)

SOCKET_CONNECT_TIMEOUT = 60.0
MAX_SKEW = 300  # seconds: Slack's (and Bolt's) window for a signed request's timestamp
_TIMESTAMP = re.compile(r"^[0-9]{1,12}$")

Sleep = Callable[[float], Awaitable[None]]

# What an SDK call can raise besides our own errors.
SDK_ERRORS = (SlackClientError, ClientConnectionError, asyncio.TimeoutError)


class SlackError(BotError):
    """A Slack Web API call failed for good (after retries); names the method and Slack's error
    code, never the token."""

    def __init__(self, message: str, code: str = "error"):
        super().__init__(message)
        self.code = code


# Slack's error codes a user can do something about: what to do is in the catalogue.
HINTS = ("not_in_channel", "channel_not_found")


def as_slack_error(exc: BaseException, what: str) -> SlackError:
    """`Slack <what> failed: <Slack's error code | the exception's type>.` (plus what to do)"""
    if isinstance(exc, SlackApiError):
        code = (exc.response.get("error") if exc.response is not None else None) or "error"
        if code in HINTS:
            return SlackError(
                phrase("errors.slack_failed_hint", method=what, code=code, hint=phrase(f"errors.slack_hint_{code}")),
                code,
            )
        return SlackError(phrase("errors.slack_failed", method=what, code=code), code)
    return SlackError(phrase("errors.slack_failed", method=what, code=type(exc).__name__), type(exc).__name__)


# --- retries -------------------------------------------------------------------------------------------


class RetryAfterHandler(AsyncRetryHandler):
    """429 → wait Retry-After (seconds, fractions allowed) plus a little jitter, then retry.
    `sleep` is injectable so that a test can read the waits without spending them."""

    def __init__(self, max_retry_count: int = 12, *, sleep: Sleep = asyncio.sleep):
        super().__init__(max_retry_count=max_retry_count)
        self.sleep = sleep

    async def _can_retry_async(self, *, state, request, response=None, error=None) -> bool:
        return response is not None and response.status_code == 429

    async def prepare_for_next_attempt_async(self, *, state, request, response=None, error=None) -> None:
        state.next_attempt_requested = True
        wait = 1.0
        # slack_sdk's RetryHttpResponse keeps every header as a list of values
        for name, values in response.headers.items():
            if name.lower() == "retry-after" and values:
                try:
                    wait = max(0.0, float(values[0]))
                except (TypeError, ValueError):
                    pass
        await self.sleep(wait + random.uniform(0, min(0.5, 0.1 + wait * 0.1)))
        state.increment_current_attempt()


class TransientErrorHandler(AsyncRetryHandler):
    """5xx answers, dropped connections and timeouts → back off (0.2 s, 0.4 s, 0.8 s…) and retry."""

    def __init__(self, max_retry_count: int = 4, base: float = 0.2, *, sleep: Sleep = asyncio.sleep):
        super().__init__(max_retry_count=max_retry_count)
        self.base = base
        self.sleep = sleep

    async def _can_retry_async(self, *, state, request, response=None, error=None) -> bool:
        if error is not None:
            return isinstance(error, (ClientConnectionError, ServerDisconnectedError, asyncio.TimeoutError))
        return response is not None and response.status_code in (500, 502, 503, 504)

    async def prepare_for_next_attempt_async(self, *, state, request, response=None, error=None) -> None:
        state.next_attempt_requested = True
        await self.sleep(self.base * (2**state.current_attempt) * random.uniform(0.8, 1.2))
        state.increment_current_attempt()


def make_client(token: str | None, base_url: str, *, sleep: Sleep = asyncio.sleep) -> AsyncWebClient:
    base = base_url if base_url.endswith("/") else base_url + "/"
    return AsyncWebClient(
        token=token,
        base_url=base,
        timeout=30,
        retry_handlers=[RetryAfterHandler(sleep=sleep), TransientErrorHandler(sleep=sleep)],
    )


# --- calls ---------------------------------------------------------------------------------------------


async def call(client: AsyncWebClient, method: str, **kwargs) -> dict:
    """One Web API call; failures become a SlackError naming the method and Slack's error."""
    fn = getattr(client, method.replace(".", "_"))
    try:
        response = await fn(**kwargs)
    except SDK_ERRORS as exc:
        raise as_slack_error(exc, method) from None
    return response.data if hasattr(response, "data") else dict(response)


async def respond(url: str, payload: dict) -> None:
    """Post to a slash command's / action's response_url (ephemeral, never replacing)."""
    hook = AsyncWebhookClient(url, timeout=15, retry_handlers=[RetryAfterHandler(4), TransientErrorHandler()])
    try:
        resp = await hook.send(
            text=payload["text"], blocks=payload["blocks"], response_type="ephemeral", replace_original=False
        )
    except SDK_ERRORS as exc:
        raise as_slack_error(exc, "response_url") from None
    if resp.status_code != 200:
        raise SlackError(phrase("errors.slack_failed", method="response_url", code=f"HTTP {resp.status_code}"))


async def upload(client: AsyncWebClient, **args) -> None:
    try:
        await client.files_upload_v2(**args)
    except SDK_ERRORS as exc:
        raise as_slack_error(exc, "files.uploadV2") from None


async def open_chat_stream(client: AsyncWebClient, **kwargs) -> AsyncChatStream:
    """slack_sdk's AsyncChatStream (chat.startStream on its first append, then appendStream).
    A slack_sdk older than 3.43 (the floor) may lack it: that is "streaming unavailable", not a crash."""
    if not hasattr(client, "chat_stream"):
        raise SlackError(
            phrase("errors.slack_failed", method="chat.startStream", code="method_not_found"), "method_not_found"
        )
    return await client.chat_stream(**kwargs)


async def stream_append(helper: AsyncChatStream, text: str) -> None:
    """chat.startStream (the helper's first append) or chat.appendStream. A failure only decides
    the fallback to edits (by its code); its wording is never shown."""
    try:
        await helper.append(markdown_text=text)
    except SDK_ERRORS as exc:
        raise as_slack_error(exc, "streaming") from None


async def stream_stop(helper) -> None:
    try:
        await helper.stop()
    except SDK_ERRORS as exc:
        log.warning("could not close a Slack stream: %s", type(exc).__name__)


# --- receiving -------------------------------------------------------------------------------------------


class _DropClientNotice(logging.Filter):
    """Bolt reads SLACK_BOT_TOKEN from the environment by itself and then warns that the client we
    pass wins; that is intended (settings.py is our only reader of the environment)."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith("As you gave `client` as well")


def _bolt_logger() -> logging.Logger:
    logger = logging.getLogger("handlers.slack.bolt")
    if not any(isinstance(f, _DropClientNotice) for f in logger.filters):
        logger.addFilter(_DropClientNotice())
    return logger


def request_problem(body: str, headers: Mapping[str, str], secret: str) -> tuple[int, str] | None:
    """(status, reason) for a request to refuse before Bolt sees it, else None. Bolt checks the
    signature too, but a non-numeric timestamp or a signed body that is not a JSON object makes
    it raise (HTTP 500 and a traceback); here they are a 4xx. The body is parsed exactly as Bolt
    parses it (JSON, or a form whose `payload` field is JSON)."""
    timestamp, signature = headers.get("X-Slack-Request-Timestamp"), headers.get("X-Slack-Signature")
    if not timestamp or not signature:
        return 401, "unsigned request"
    if not _TIMESTAMP.match(timestamp):
        return 401, "malformed timestamp"
    if abs(time.time() - int(timestamp)) > MAX_SKEW:
        return 401, "stale timestamp"
    if not SignatureVerifier(secret).is_valid(body=body, timestamp=timestamp, signature=signature):
        return 401, "bad signature"
    if not body:
        return None
    content_type = (headers.get("Content-Type") or "").split(";")[0].strip().lower()
    try:
        if content_type == "application/json" or body.startswith("{"):
            parsed = json.loads(body)
        elif "payload" in body:
            payload = dict(parse_qsl(body, keep_blank_values=True)).get("payload")
            parsed = json.loads(payload) if payload is not None else {}
        else:
            parsed = {}
    except ValueError:
        return 400, "body is not valid JSON"
    if not isinstance(parsed, dict):
        return 400, "body is not a JSON object"
    return _shape_problem(parsed)


# The JSON type of every field our listeners read, as Slack documents them. A signed payload with
# another type (a `channel` that is a string) would crash a listener: HTTP 500 and a traceback.
_OBJECTS = ("channel", "user", "team", "container", "message", "view", "event", "state")
_STRINGS = ("type", "response_url", "trigger_id", "event_id", "team_id", "api_app_id")
_ACTION_STRINGS = ("action_id", "block_id", "value", "action_ts")
_MESSAGE_EVENT_STRINGS = (
    "type",
    "text",
    "user",
    "channel",
    "ts",
    "thread_ts",
    "subtype",
    "bot_id",
    "channel_type",
    "team",
)


def _shape_problem(payload: dict) -> tuple[int, str] | None:
    def wrong(owner: dict, names: tuple, kind: type, where: str = "") -> str | None:
        for name in names:
            if owner.get(name) is not None and not isinstance(owner[name], kind):
                return f"field `{where}{name}` has the wrong type"
        return None

    problem = wrong(payload, _OBJECTS, dict) or wrong(payload, _STRINGS, str)
    actions = payload.get("actions")
    if problem is None and actions is not None:
        if not isinstance(actions, list) or not all(isinstance(a, dict) for a in actions):
            problem = "field `actions` has the wrong type"
        else:
            problem = next(
                (
                    p
                    for a in actions
                    for p in [
                        wrong(a, _ACTION_STRINGS, str, "actions[].")
                        or wrong(a, ("selected_option",), dict, "actions[].")
                    ]
                    if p
                ),
                None,
            )
    event = payload.get("event")
    if problem is None and isinstance(event, dict) and event.get("type") in ("message", "app_mention"):
        problem = wrong(event, _MESSAGE_EVENT_STRINGS, str, "event.")
    return (400, problem) if problem else None


def bolt_app(client: AsyncWebClient, secret: str) -> AsyncApp:
    # No I/O here: Bolt calls auth.test on the first request and keeps the answer. Bolt checks an
    # HTTP request's signature again after `request_problem`; Socket Mode envelopes it never checks.
    return AsyncApp(
        client=client,
        signing_secret=secret or "unused-in-socket-mode",
        process_before_response=True,  # listeners only ack + hand off: fast
        logger=_bolt_logger(),
    )


async def dispatch_http(app: AsyncApp, request: web.Request) -> web.Response:
    bolt_request = await to_bolt_request(request)
    return await to_aiohttp_response(await app.async_dispatch(bolt_request))


async def connect_socket_mode(app: AsyncApp, app_token: str):
    """Connect Socket Mode; returns the handler (close it with `close_socket_mode`)."""
    from slack_bolt.adapter.socket_mode.async_handler import AsyncSocketModeHandler

    socket = AsyncSocketModeHandler(app, app_token)
    try:
        # Ask for the WebSocket URL ourselves first: the SDK's connect() retries a refused
        # app token forever; we want one clear sentence at start-up instead.
        socket.client.wss_uri = await socket.client.issue_new_wss_url()
        await asyncio.wait_for(socket.connect_async(), timeout=SOCKET_CONNECT_TIMEOUT)
    except SlackApiError as exc:
        code = (exc.response.get("error") if exc.response is not None else None) or "error"
        await socket.close_async()
        raise SlackError(phrase("ops.socket_refused", code=code)) from None
    except (TimeoutError, SlackClientError, ClientConnectionError, OSError) as exc:
        await socket.close_async()
        raise SlackError(phrase("ops.socket_unreachable", kind=type(exc).__name__)) from None
    return socket


async def close_socket_mode(socket) -> None:
    await socket.close_async()


# --- installs (OAuth: the app distributed to many workspaces) ---------------------------------------------
# handlers/slack/installs.py keeps installations as plain dicts in Redis; these are the SDK's shapes
# of them, Bolt's OAuth flow around our pages, and the token refresh call.

Find = Callable[[str | None, str | None, bool], Awaitable[dict | None]]


def bot_model(record: Mapping) -> Bot:
    """An installation record (installs.py) as slack_sdk's Bot."""
    return installation_model(record).to_bot()


def installation_model(record: Mapping) -> Installation:
    """An installation record as slack_sdk's Installation (bot only: the bot asks no user scopes)."""
    return Installation(
        app_id=record.get("app_id"),
        enterprise_id=record.get("enterprise_id"),
        enterprise_name=record.get("enterprise_name"),
        team_id=record.get("team_id"),
        team_name=record.get("team_name"),
        bot_token=record["bot_token"],
        bot_id=record.get("bot_id") or "",
        bot_user_id=record.get("bot_user_id") or "",
        bot_scopes=record.get("bot_scopes") or [],
        bot_refresh_token=record.get("bot_refresh_token"),
        bot_token_expires_at=record.get("bot_token_expires_at"),
        user_id=record.get("installer") or "",
        is_enterprise_install=bool(record.get("is_enterprise_install")),
        installed_at=float(record.get("installed_at") or 0),
    )


async def refresh_bot_token(client: AsyncWebClient, client_id: str, client_secret: str, refresh_token: str) -> dict:
    """oauth.v2.access with grant_type=refresh_token (client credentials by HTTP Basic): Slack
    answers a new access token, a new refresh token (the old one is spent) and `expires_in`."""
    try:
        response = await client.oauth_v2_access(
            client_id=client_id, client_secret=client_secret, grant_type="refresh_token", refresh_token=refresh_token
        )
    except SDK_ERRORS as exc:
        raise as_slack_error(exc, "oauth.v2.access") from None
    return dict(response.data) if isinstance(response.data, dict) else {}


class Authorizer(AsyncAuthorize):
    """Bolt's authorize for an installed app, on our installation store and token source
    (installs.py): Bolt's own would refresh a rotating token by itself, with whatever refresh
    token it read, outside our lock. The workspace (`tenant`) travels in the result."""

    def __init__(self, find: Find):
        self.find = find

    async def __call__(self, *, context, enterprise_id, team_id, user_id, **_actor) -> AuthorizeResult | None:
        try:
            record = await self.find(enterprise_id, team_id, bool(context.is_enterprise_install))
        except BotError as exc:  # a refused token refresh, Redis away: this request is not served
            log.warning("Slack request not authorized: %s", exc)
            return None
        if record is None:
            return None
        result = AuthorizeResult(
            enterprise_id=record.get("enterprise_id") or enterprise_id,
            team_id=team_id or record.get("team_id"),
            bot_user_id=record.get("bot_user_id"),
            bot_id=record.get("bot_id"),
            bot_token=record["bot_token"],
            bot_scopes=record.get("bot_scopes") or [],
            user_id=user_id,
        )
        result["tenant"] = record["tenant"]
        return result


class Pages(Protocol):
    """What the installing person's browser shows, each in their language (handlers/slack/pages.py)."""

    def install(self, url: str, headers: Mapping) -> str: ...
    def done(self, record: Mapping, headers: Mapping) -> str: ...
    def failed(self, reason: str, headers: Mapping) -> str: ...


class InstallFlow(AsyncOAuthFlow):
    """Bolt's OAuth flow with our install page (Bolt's is English only)."""

    pages: Pages

    async def build_install_page_html(self, url: str, request) -> str:
        return self.pages.install(url, request.headers)


def _page(status: int, html: str, cookie: str | None = None) -> BoltResponse:
    headers: dict = {"Content-Type": "text/html; charset=utf-8"}
    if cookie:
        headers["Set-Cookie"] = [cookie]
    return BoltResponse(status=status, body=html, headers=headers)


def oauth_app(
    client: AsyncWebClient,
    secret: str,
    *,
    client_id: str,
    client_secret: str,
    scopes: list[str],
    redirect_uri: str | None,
    authorization_url: str,
    installation_store,
    state_store,
    find: Find,
    pages: Pages,
) -> AsyncApp:
    """The Bolt app of an installed (distributed) app: `/slack/install` and `/slack/oauth_redirect`
    through Bolt's OAuth flow on our Redis stores; every request authorized by `find`."""
    logger = _bolt_logger()
    utils_holder: list = []

    async def success(args: AsyncSuccessArgs) -> BoltResponse:
        record = await find(
            args.installation.enterprise_id, args.installation.team_id, bool(args.installation.is_enterprise_install)
        )
        cookie = utils_holder[0].build_set_cookie_for_deletion()
        return _page(200, pages.done(record or {}, args.request.headers), cookie)

    async def failure(args: AsyncFailureArgs) -> BoltResponse:
        log.warning("Slack install did not complete: %s", args.reason)
        cookie = utils_holder[0].build_set_cookie_for_deletion()
        status = 200 if args.suggested_status_code == 200 else 400
        return _page(status, pages.failed(args.reason, args.request.headers), cookie)

    settings = AsyncOAuthSettings(
        client_id=client_id,
        client_secret=client_secret,
        scopes=scopes,
        user_scopes=[],
        redirect_uri=redirect_uri,
        authorization_url=authorization_url,
        installation_store=installation_store,
        installation_store_bot_only=True,
        state_store=state_store,
        callback_options=AsyncCallbackOptions(success=success, failure=failure),
        logger=logger,
    )
    utils_holder.append(settings.state_utils)
    flow = InstallFlow(client=client, logger=logger, settings=settings)
    flow.pages = pages
    return AsyncApp(
        client=client,
        signing_secret=secret or "unused-in-socket-mode",
        process_before_response=True,
        logger=logger,
        oauth_flow=flow,
        authorize=Authorizer(find),  # type: ignore[arg-type]  # Bolt takes an AsyncAuthorize as it is
    )


async def oauth_page(app: AsyncApp, request: web.Request, *, callback: bool) -> web.Response:
    """GET /slack/install or /slack/oauth_redirect through Bolt's flow."""
    flow = app.oauth_flow
    assert flow is not None  # oauth_app made it
    bolt_request = await to_bolt_request(request)
    answer = await (flow.handle_callback if callback else flow.handle_installation)(bolt_request)
    return await to_aiohttp_response(answer)
