"""The Feishu adapter: receiving (FEISHU_MODE=ws: the SDK's long connection in its own thread with
its own event loop; FEISHU_MODE=http: `POST /feishu/events` on the shared aiohttp server, checked
by `verify` first and only then handed to the SDK's dispatcher) and the platform to send with.

A store app (FEISHU_APP_TYPE=store, HTTP only) also receives its hourly `app_ticket` on the same
route (a v1 event, verified like the rest) and keeps it in Redis (store_app.py); its events are
routed per tenant (events.py qualifies ids with the event's tenant_key) and every call carries
the tenant's own token.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from concurrent.futures import ThreadPoolExecutor

from aiohttp import web

from bot.i18n import phrase
from handlers.feishu.api import FeishuApi, lark, long_connection, store_client
from handlers.feishu.events import FeishuEvents, cancel_all
from handlers.feishu.platform import FeishuPlatform
from handlers.feishu.store_app import StoreApp
from handlers.feishu.verify import NONCE_HEADER, SIG_HEADER, TS_HEADER, CallbackVerifier
from handlers.pacing import Pacer
from settings import ConfigError, Settings

log = logging.getLogger(__name__)

HANDLED_EVENTS = frozenset({"im.message.receive_v1", "card.action.trigger"})


class FeishuAdapter:
    def __init__(self, settings: Settings, chat, *, receive: bool):
        self.settings = settings
        self.chat = chat
        self.receive = receive
        self.mode = settings.feishu_mode
        app_id, app_secret = settings.feishu_app_id, settings.feishu_app_secret
        assert app_id and app_secret  # built only when Feishu is enabled (FEISHU_APP_ID and FEISHU_APP_SECRET)
        secret = app_secret.get_secret_value()
        domain = settings.feishu_domain.rstrip("/")
        # A store app (FEISHU_APP_TYPE=store) serves every tenant that installs it, each with its own
        # tenant_access_token (handlers/feishu/store_app.py); a self-built app serves its own tenant.
        self.store_mode = settings.feishu_app_type == "store"
        try:
            if self.store_mode:
                client = store_client(app_id, secret, domain, 20)
            else:
                client = lark.Client.builder().app_id(app_id).app_secret(secret).domain(domain).timeout(20).build()
        except ValueError:
            raise ConfigError(
                phrase("ops.config_error", field="FEISHU_DOMAIN", detail=phrase("ops.feishu_domain"))
            ) from None
        self.executor = ThreadPoolExecutor(max_workers=8, thread_name_prefix="feishu-api")
        self.api = FeishuApi(client, self.executor, Pacer())
        self.store_app: StoreApp | None = None
        if self.store_mode:
            self.store_app = StoreApp(self.api, chat.store, app_id, secret)
            self.api.tokens = self.store_app
        self.platform = FeishuPlatform(self.api, default_lang=settings.default_lang)
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            loop = None
        self.events = FeishuEvents(chat, self.platform, loop, multi_tenant=self.store_mode)
        self.verifier: CallbackVerifier | None = None
        if self.mode == "http" and receive:
            token, key = settings.feishu_verification_token, settings.feishu_encrypt_key
            if not (token and key and token.get_secret_value() and key.get_secret_value()):
                raise ConfigError(
                    phrase("ops.config_error", field="FEISHU_MODE=http", detail=phrase("ops.feishu_http"))
                )
            self.verifier = CallbackVerifier(key.get_secret_value(), token.get_secret_value())
            self.dispatcher = self._dispatcher(key.get_secret_value(), token.get_secret_value())
        else:
            self.dispatcher = self._dispatcher("", "")  # the long connection is authenticated already
        self._ws_thread: threading.Thread | None = None
        self._ws_loop: asyncio.AbstractEventLoop | None = None
        self._ws_stopping = threading.Event()
        self._ws_closing_socket = False  # set and read on the long connection's thread only

    def _dispatcher(self, encrypt_key: str, token: str) -> lark.EventDispatcherHandler:
        return (
            lark.EventDispatcherHandler.builder(encrypt_key, token)
            .register_p2_im_message_receive_v1(self.events.on_message)
            .register_p2_card_action_trigger(self.events.on_card_action)
            .build()
        )

    # --- runner interface ---------------------------------------------------------------------------------
    def http_routes(self) -> list:
        if self.mode == "http" and self.receive:
            return [("POST", "/feishu/events", self.handle_http)]
        return []

    async def start(self) -> None:
        self.events.loop = asyncio.get_running_loop()
        if self.store_app is not None:
            # no identity of its own: a store app's bot is known per tenant, once a tenant writes
            await self.store_app.wait_for_ticket()
        else:
            await self.platform.ensure_identity()
        if self.mode == "ws" and self.receive and self._ws_thread is None:
            self._ws_loop = asyncio.new_event_loop()
            self._ws_thread = threading.Thread(
                target=self._run_ws, args=(self._ws_loop,), name="feishu-ws", daemon=True
            )
            self._ws_thread.start()

    async def close(self) -> None:
        if self._ws_thread is not None:
            await asyncio.to_thread(self._stop_ws, self._ws_thread, 5.0)
        self.executor.shutdown(wait=False, cancel_futures=True)

    def _stop_ws(self, thread: threading.Thread, timeout: float) -> None:
        """Cancel the long connection's tasks until its thread ends. Once is not enough: the SDK runs
        its loop in steps (connect, then wait forever), and a cancel that lands as the connect step
        ends finds the connection's tasks but not the wait that the SDK starts next."""
        self._ws_stopping.set()
        deadline = time.monotonic() + timeout
        loop = self._ws_loop
        while thread.is_alive() and time.monotonic() < deadline:
            if loop is not None and not loop.is_closed():
                try:
                    loop.call_soon_threadsafe(self._cancel_the_sdk, loop)
                except RuntimeError:
                    pass  # the loop closed meanwhile
            thread.join(0.1)

    def _cancel_the_sdk(self, loop: asyncio.AbstractEventLoop) -> None:
        """On the long connection's thread: cancel the SDK's tasks, not the socket's closing."""
        if not self._ws_closing_socket:
            cancel_all(loop)

    # --- long connection -------------------------------------------------------------------------------------
    def _run_ws(self, loop: asyncio.AbstractEventLoop) -> None:
        app_id, app_secret = self.settings.feishu_app_id, self.settings.feishu_app_secret
        assert app_id and app_secret  # as __init__ checked
        client = long_connection(
            loop,
            app_id,
            app_secret.get_secret_value(),
            self.dispatcher,
            self.settings.feishu_domain,
        )
        try:
            if not self._ws_stopping.is_set():  # closed before it started: never connect
                client.start()  # runs until close() cancels its tasks
        except (asyncio.CancelledError, RuntimeError):
            pass
        except Exception as exc:  # noqa: BLE001 — e.g. wrong credentials: one line, never the secret
            log.error("The Feishu long connection stopped: %s", exc)
        finally:
            self._ws_closing_socket = True  # close()'s repeated cancels leave this part alone
            try:  # 1.7.5 has no public stop(): close the socket with the client's own coroutine
                loop.run_until_complete(asyncio.wait_for(client._disconnect(), 2))
            except BaseException:  # noqa: BLE001 — best effort on a loop being torn down
                pass
            cancel_all(loop)
            pending = asyncio.all_tasks(loop)
            if pending:
                loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
            loop.close()

    # --- HTTP callbacks ---------------------------------------------------------------------------------------
    async def handle_http(self, request: web.Request) -> web.Response:
        body = await request.read()
        assert self.verifier is not None
        verdict = self.verifier.check(body, request.headers)
        if not verdict.ok:
            log.warning("Feishu callback rejected: %s", verdict.reason)
            return web.json_response({"code": verdict.status, "msg": verdict.reason}, status=verdict.status)
        header = verdict.payload.get("header") or {}
        if verdict.payload.get("type") == "event_callback":  # a v1 event: for us, only the app_ticket
            return await self._v1_event(verdict.payload)
        if verdict.payload.get("type") != "url_verification" and header.get("event_type") not in HANDLED_EVENTS:
            return web.json_response({"msg": "ignored"})  # acknowledged, so Feishu does not re-push it
        raw = lark.RawRequest()
        raw.uri = request.path
        raw.body = body
        # The SDK reads these from a plain dict, case-sensitively: pass them in its spelling.
        raw.headers = {
            name: request.headers[name]
            for name in (TS_HEADER, NONCE_HEADER, SIG_HEADER, "X-Request-Id")
            if name in request.headers
        }
        self.events.loop = asyncio.get_running_loop()
        resp = self.dispatcher.do(raw)
        if resp.status_code != 200:
            log.warning("Feishu callback not handled by the SDK (HTTP %s)", resp.status_code)
            return web.json_response({"code": 400, "msg": "not handled"}, status=400)
        return web.Response(body=resp.content, status=200, content_type="application/json", charset="utf-8")

    async def _v1_event(self, payload: dict) -> web.Response:
        """Feishu pushes a store app's `app_ticket` hourly as a v1 event (verified like every
        callback): kept in Redis for every process. Anything else in v1 is acknowledged and ignored."""
        found = payload.get("event")
        event: dict = found if isinstance(found, dict) else {}
        if event.get("type") == "app_ticket" and self.store_app is not None:
            if event.get("app_id") != self.store_app.app_id or not event.get("app_ticket"):
                log.warning("Feishu app_ticket refused: it names another app (or no ticket)")
                return web.json_response({"code": 400, "msg": "refused"}, status=400)
            await self.store_app.save_ticket(str(event["app_ticket"]))
        return web.json_response({"msg": "ok"})
