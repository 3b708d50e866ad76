"""A fake Feishu/Lark OpenAPI for tests and benchmarks, plus builders for signed, encrypted
callbacks into the bot.

It is a real HTTP server (ThreadingHTTPServer on 127.0.0.1, port 0) answering in Feishu's own
shapes (`{"code": 0, "msg": "success", "data": {...}}`), so the real lark-oapi SDK reaches it
through `.domain(fake.url)` (the way lark-oapi's own tests do) and nothing is monkeypatched.

Routes::

    POST  /open-apis/auth/v3/tenant_access_token/internal   token (checks app_id / app_secret; a
                                                            self-built app's: refused to a store app)
    POST  /open-apis/auth/v3/app_ticket/resend              a store app asks for its app_ticket again
    POST  /open-apis/auth/v3/app_access_token               a store app's app token (app_id, app_secret,
                                                            app_ticket: the last one pushed, else 10012)
    POST  /open-apis/auth/v3/tenant_access_token            a tenant's token (app_access_token, tenant_key
                                                            of an installed tenant)
    GET   /open-apis/bot/v3/info                            {"bot": {...}} at the top level
    POST  /open-apis/im/v1/messages?receive_id_type=chat_id create
    POST  /open-apis/im/v1/messages/{id}/reply              reply (reply_in_thread)
    PATCH /open-apis/im/v1/messages/{id}                    patch (the card must have update_multi)
    POST  /open-apis/cardkit/v1/cards                       create a card entity
    PATCH /open-apis/cardkit/v1/cards/{id}/settings         e.g. streaming_mode off
    PUT   /open-apis/cardkit/v1/cards/{id}/elements/{eid}/content   streaming text (sequence must grow)
    POST  /open-apis/ephemeral/v1/send                      "only you can see this" cards (not in
                                                            topic groups: `fake.topic_chat(chat_id)`)
    GET   /open-apis/application/v6/scopes                  the app's scopes and their grant status
    GET   /open-apis/im/v1/messages?container_id_type=chat|thread&container_id=…   list a chat's
                                                            messages (from start_time, seconds; thread
                                                            roots only, as in a normal group) or a
                                                            thread's (no time range there), page_size
                                                            ≤ 50, page_token / has_more; cards as a
                                                            projection unless card_msg_content_type=
                                                            user_card_content (then the card as sent)
    GET   /open-apis/im/v1/messages/{id}                    one message (its thread_id)
    POST  /callback/ws/endpoint                             the long connection's gateway URL: a
                                                            websocket server on loopback speaking
                                                            Feishu's protobuf frames (`fake.ws_push`)

Reading messages needs one of im:message, im:message:readonly, im:message.history:readonly
(else 99991672); listing a group's messages also im:message.group_msg (else 230027), as the
list API's documentation says.

Every API call needs the tenant token it issued. Sends carrying a `uuid` seen in the last hour
(`fake.uuid_window` seconds of the fake's clock, which `fake.advance(s)` moves on) return the
earlier message instead of posting another; after that the same uuid posts again, as in Feishu.
Request bodies over 30 KB for cards (create, reply, patch, CardKit) are refused with 230025 —
the body as sent, where the card is an escaped JSON string, not the card itself.

Scripting::

    fake.throttle(3)                      # the next 3 API calls: HTTP 429, code 99991400,
                                          #   x-ogw-ratelimit-reset: 0.05
    fake.fail(2, status=500, code=1, path="/open-apis/im/")   # the next 2 matching calls fail
    fake.throttle(1, path="/open-apis/auth/")   # scripts reach the token endpoint only when named
    fake.gateway_error(2)                 # the next 2 calls: HTTP 502 with an HTML page, not JSON
    fake.lose(2, path="/open-apis/im/v1/messages/")   # the next 2 matching calls are carried out,
                                          #   but answered HTTP 500 (a reply lost on the way back)
    fake.deny_cardkit()                   # CardKit refuses (no cardkit:card:write scope)
    fake.deny_ephemeral()                 # the app may not send ephemeral cards at all (permission)
    fake.topic_chat(chat_id)              # a topic group: ephemeral cards refused in it only
    fake.p2p_chat(chat_id)                # a one-to-one chat: ephemeral cards are for groups only
    fake.pause("/open-apis/im/")          # hold every matching call until fake.resume() (to observe
                                          #   what the bot did before any of them was answered)
    fake.scopes["im:message.group_msg"] = 1   # grant a scope (1 granted, 2 not; absent: not requested)

Inspecting::

    fake.calls           # every request, in arrival order (Call: method, path, query, body, status, ...)
    fake.messages        # the messages that exist, in creation order (Message)
    fake.thread(root_id) # the replies in a thread, in order
    fake.card(message)   # what the message shows: its card (a CardKit card resolved, with the
                         #   streamed element contents)
    fake.shown(message)  # its Markdown as a reader sees it: numeric entities (&#60;) decoded, named
                         #   ones (&lt;) left literal, as Feishu's card Markdown does

A store app (`FakeFeishu(store=True)`)::

    fake.install("tk_a", "oc_a1")         # tenant tk_a installed the app; chat oc_a1 is tk_a's
    fake.push_app_ticket(url, ENCRYPT_KEY, TOKEN)   # a new app_ticket, POSTed (v1 event, encrypted,
                                          #   signed) to the bot's callback URL; returns the HTTP status
    fake.resends                          # how many times the app asked for its ticket again
    fake.token_calls("tenant_access_token")   # the calls to a token endpoint
    fake.token_life = 7200                # seconds a token lives (fake clock); asked with less than
                                          #   30 minutes left, a new one is issued, the old stays valid

A tenant's token is accepted only for that tenant's chats and messages: another tenant's chat
gets 230002 "The bot can not be outside the group." (the bot is not in any chat of that tenant
as far as the token's tenant goes); `call.tenant` is the tenant of the token a call carried.

Events over the long connection (FEISHU_MODE=ws)::

    fake.ws_connected.wait(5)             # the bot's lark.ws.Client has connected
    reply = fake.ws_push(message_event("digest"))   # blocking; {"code": 200, "data": <handler result>}
    fake.ws_drop()                        # Feishu closes the connection; fake.ws_connections counts them

Callbacks into the bot::

    body, headers = signed(message_event("@_user_1 digest", mentions=[mention("@_user_1", fake.bot_open_id,
                           "DigestBot", "bot")]), ENCRYPT_KEY)
"""

from __future__ import annotations

import base64
import hashlib
import itertools
import json
import os
import re
import threading
import time
import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

MAX_BODY_BYTES = 30 * 1024  # "卡片及富文本消息请求体最大不能超过30KB" (error 230025)
UUID_WINDOW = 3600.0  # a send's uuid deduplicates for one hour
READ_SCOPES = ("im:message", "im:message:readonly", "im:message.history:readonly")
# What Feishu lists for a JSON 2.0 card unless asked for the card as sent (user_card_content).
CARD_PROJECTION = "请升级至最新版本客户端，以查看内容"
GATEWAY_PAGE = "<html><head><title>502 Bad Gateway</title></head><body>502 Bad Gateway</body></html>"
PAGE = "__page__"  # a scripted answer that is an HTML page, not JSON
TOO_LONG = {"code": 230025, "msg": "The length of the message content reaches its limit."}
DEFAULT_SCOPES = {
    "im:message": 1,
    "im:message:send_as_bot": 1,
    "im:message.group_at_msg:readonly": 1,
    "im:message.p2p_msg:readonly": 1,
    "cardkit:card:write": 1,
}


@dataclass
class Call:
    method: str
    path: str
    query: dict[str, str]
    body: Any
    headers: dict[str, str]
    at: float
    status: int = 200
    code: int = 0
    deduped: bool = False  # a send whose uuid was seen before: no new message
    tenant: str | None = None  # a store app's call: the tenant its token belongs to
    size: int = 0  # bytes of the request body as sent


@dataclass
class Message:
    message_id: str
    chat_id: str
    msg_type: str
    content: str
    root_id: str = ""
    parent_id: str = ""
    thread_id: str = ""
    uuid: str = ""
    reply_in_thread: bool = False
    patches: list[str] = field(default_factory=list)
    created: float = 0.0
    user: str = ""  # the open_id of the user who sent it; "" for the bot's own messages

    @property
    def current(self) -> str:
        return self.patches[-1] if self.patches else self.content

    def as_data(self, app_id: str, *, as_sent: bool = True) -> dict:
        content = self.current if as_sent or self.msg_type != "interactive" else _projection(self.current)
        return {
            "message_id": self.message_id,
            "root_id": self.root_id,
            "parent_id": self.parent_id,
            "thread_id": self.thread_id,
            "msg_type": self.msg_type,
            "create_time": str(int(self.created * 1000)),
            "update_time": str(int(time.time() * 1000)),
            "deleted": False,
            "updated": bool(self.patches),
            "chat_id": self.chat_id,
            "sender": (
                {"id": self.user, "id_type": "open_id", "sender_type": "user", "tenant_key": "tenant-fake"}
                if self.user
                else {"id": app_id, "id_type": "app_id", "sender_type": "app", "tenant_key": "tenant-fake"}
            ),
            "body": {"content": content},
            "mentions": [],
            "upper_message_id": "",
        }


@dataclass
class CardEntity:
    card_id: str
    card: dict
    sequence: int = 0
    history: list[tuple[int, str]] = field(default_factory=list)  # (sequence, element content) updates
    settings: list[dict] = field(default_factory=list)
    tenant: str | None = None  # a store app's card: the tenant whose token created it

    @property
    def streaming(self) -> bool:
        return bool(self.card.get("config", {}).get("streaming_mode"))


@dataclass
class _Script:
    remaining: int
    path: str
    status: int
    code: int
    msg: str
    headers: dict[str, str]
    page: str | None = None  # an HTML page instead of JSON (a gateway error)


class FakeFeishu:
    def __init__(
        self,
        *,
        app_id: str | None = None,
        app_secret: str | None = None,
        bot_open_id: str = "ou_bot0000000000000000000000000001",
        bot_name: str = "DigestBot",
        latency: float = 0.0,
        store: bool = False,
    ):
        self.app_id = app_id
        self.app_secret = app_secret
        self.bot_open_id = bot_open_id
        self.bot_name = bot_name
        self.latency = latency
        self.calls: list[Call] = []
        self.messages: list[Message] = []
        self.cards: dict[str, CardEntity] = {}
        self.ephemerals: list[dict] = []
        self.tokens: set[str] = set()
        self._by_id: dict[str, Message] = {}
        self._uuids: dict[str, tuple[float, Message]] = {}
        self._scripts: list[_Script] = []
        self._cardkit_denied = False
        self._ephemeral_denied = False
        self._ids = itertools.count(1)
        self._lock = threading.RLock()
        self._server: ThreadingHTTPServer | None = None
        self._gateway: _WsGateway | None = None
        self.ws_connected = threading.Event()
        self.uuid_window = UUID_WINDOW
        self.scopes: dict[str, int] = dict(DEFAULT_SCOPES)
        self._topic_chats: set[str] = set()
        self._p2p_chats: set[str] = set()
        self._offset = 0.0  # advance(): the fake's clock runs ahead of the real one
        self._paused: str | None = None
        self._lost: list[list] = []  # [remaining, path]
        self._gate = threading.Event()
        self._gate.set()
        # a store app: its ticket, app tokens, tenants' tokens, and which tenant each chat is in
        self.store = store
        self.ticket: str | None = None
        self.resends = 0
        self.token_life = 7200.0
        self.app_tokens: dict[str, float] = {}  # token → expiry (fake clock)
        self.tenant_tokens: dict[str, tuple[str, float]] = {}  # token → (tenant, expiry)
        self.tenants: set[str] = set()
        self.chat_tenant: dict[str, str] = {}

    def install(self, tenant: str, *chats: str) -> None:
        """A store app installed by `tenant`, whose chats `chats` are."""
        with self._lock:
            self.tenants.add(tenant)
            for chat in chats:
                self.chat_tenant[chat] = tenant

    def push_app_ticket(self, url: str, encrypt_key: str, verification_token: str) -> int:
        """Feishu's hourly push: a new app_ticket as a v1 event (encrypted, signed) to `url`."""
        import urllib.error
        import urllib.request

        with self._lock:
            self.ticket = "ticket-" + uuid.uuid4().hex
            event = {"app_id": self.app_id or "cli_fake", "app_ticket": self.ticket, "type": "app_ticket"}
        payload = {
            "uuid": uuid.uuid4().hex,
            "token": verification_token,
            "ts": str(time.time()),
            "type": "event_callback",
            "event": event,
        }
        body, headers = signed(payload, encrypt_key)
        request = urllib.request.Request(url, data=body, headers=headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=10) as resp:
                return resp.status
        except urllib.error.HTTPError as exc:
            return exc.code

    def now(self) -> float:
        """The fake's clock (monotonic seconds), for its time-limited behaviour (uuid dedupe)."""
        return time.monotonic() + self._offset

    def advance(self, seconds: float) -> None:
        """Move the fake's clock on, e.g. past the uuid window, without waiting."""
        with self._lock:
            self._offset += seconds

    # --- lifecycle -----------------------------------------------------------------------------------
    @property
    def url(self) -> str:
        """The origin to give `.domain()` (no trailing slash)."""
        if self._server is None:
            raise RuntimeError("FakeFeishu is not started")
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def start(self) -> FakeFeishu:
        handler = type("Handler", (_Handler,), {"fake": self})
        self._server = _QuietServer(("127.0.0.1", 0), handler)
        threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        return self

    def stop(self) -> None:
        if self._gateway is not None:
            self._gateway.stop()
            self._gateway = None
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> FakeFeishu:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    # --- scripting -------------------------------------------------------------------------------------
    def throttle(self, n: int, *, reset: str = "0.05", path: str = "/open-apis/") -> None:
        """The next n calls under `path`: HTTP 429, code 99991400, x-ogw-ratelimit-reset."""
        with self._lock:
            self._scripts.append(
                _Script(
                    n,
                    path,
                    429,
                    99991400,
                    "request trigger frequency limit",
                    {"x-ogw-ratelimit-limit": "5", "x-ogw-ratelimit-reset": reset},
                )
            )

    def fail(
        self, n: int, *, status: int = 500, code: int = 1000004, msg: str = "internal error", path: str = "/open-apis/"
    ) -> None:
        with self._lock:
            self._scripts.append(_Script(n, path, status, code, msg, {}))

    def gateway_error(self, n: int, *, path: str = "/open-apis/") -> None:
        """The next n calls under `path`: HTTP 502 with an HTML page, as a gateway in front of the
        API answers when the service behind it is down (not Feishu's JSON)."""
        with self._lock:
            self._scripts.append(_Script(n, path, 502, -1, "bad gateway", {}, page=GATEWAY_PAGE))

    def user_message(self, message_id: str, chat_id: str, text: str = "", root_id: str | None = None) -> None:
        """A message a user sent (so the bot can reply to it, as in real Feishu)."""
        with self._lock:
            message = Message(
                message_id=message_id,
                chat_id=chat_id,
                msg_type="text",
                content=json.dumps({"text": text}, ensure_ascii=False),
                root_id=root_id or "",
                parent_id=root_id or "",
                created=time.time() + self._offset,
                user="ou_user_fake",
            )
            self._by_id[message_id] = message  # not in `messages`: those are what the bot posted

    def deny_cardkit(self) -> None:
        self._cardkit_denied = True

    def ws_push(self, payload: dict, timeout: float = 5.0) -> dict:
        """Deliver an event over the long connection as Feishu does (a DATA frame) and return the
        client's answer frame: {"code": 200, "data": the handler's result (a dict) or None}."""
        if self._gateway is None or not self.ws_connected.is_set():
            raise RuntimeError("no long connection: the bot has not connected")
        return self._gateway.push(payload, timeout)

    def ws_drop(self) -> None:
        """Close the long connection from Feishu's side; `fake.ws_connections` counts (re)connections."""
        if self._gateway is not None:
            self._gateway.drop()

    @property
    def ws_connections(self) -> int:
        return self._gateway.connections if self._gateway is not None else 0

    def deny_ephemeral(self) -> None:
        self._ephemeral_denied = True

    def lose(self, n: int, *, path: str = "/open-apis/") -> None:
        """The next n calls under `path` take effect, but their answer is an HTTP 500."""
        with self._lock:
            self._lost.append([n, path])

    def pause(self, path: str = "/open-apis/") -> None:
        """Hold calls under `path` (not the token endpoint) until `resume()` (at most 60 s)."""
        self._paused = path
        self._gate.clear()

    def resume(self) -> None:
        self._gate.set()

    def _hold(self, path: str) -> None:
        if self._paused and path.startswith(self._paused) and not path.startswith("/open-apis/auth/"):
            self._gate.wait(60)

    def drop_message(self, message_id: str) -> None:
        """Forget a message, as if its send never reached Feishu (its uuid forgotten too)."""
        with self._lock:
            message = self._by_id.pop(message_id)
            self.messages.remove(message)
            self._uuids = {k: v for k, v in self._uuids.items() if v[1] is not message}

    def p2p_chat(self, chat_id: str) -> None:
        """Make `chat_id` a one-to-one chat: ephemeral cards "can only be used in group chats"."""
        self._p2p_chats.add(chat_id)

    def topic_chat(self, chat_id: str) -> None:
        """Make `chat_id` a topic group, where ephemeral cards are not supported."""
        self._topic_chats.add(chat_id)

    # --- inspecting ------------------------------------------------------------------------------------
    def api_calls(self, path_part: str = "", method: str | None = None) -> list[Call]:
        with self._lock:
            return [
                c
                for c in self.calls
                if path_part in c.path
                and (method is None or c.method == method)
                and not c.path.startswith("/open-apis/auth/")
            ]

    def token_calls(self, path_part: str = "") -> list[Call]:
        """The calls to the token endpoints (`api_calls` leaves them out), e.g. "app_access_token"."""
        with self._lock:
            return [c for c in self.calls if c.path.startswith("/open-apis/auth/") and path_part in c.path]

    def top_level(self, chat_id: str | None = None) -> list[Message]:
        with self._lock:
            return [m for m in self.messages if not m.root_id and (chat_id is None or m.chat_id == chat_id)]

    def thread(self, root_id: str) -> list[Message]:
        with self._lock:
            return [m for m in self.messages if m.root_id == root_id]

    def message(self, message_id: str) -> Message:
        with self._lock:
            return self._by_id[message_id]

    def card(self, message: Message) -> dict:
        """What the message shows now: its card JSON, a CardKit card resolved (with its streamed text)."""
        content = json.loads(message.current)
        if content.get("type") == "card" and "card_id" in (content.get("data") or {}):
            return self.cards[content["data"]["card_id"]].card
        return content

    def text_of(self, message: Message) -> str:
        """Every markdown / plain text string on the message's card, joined by newlines."""
        return "\n".join(_texts(self.card(message)))

    def markdown_of(self, message: Message) -> str:
        """Only the markdown strings (the text Feishu interprets: mentions, links, tags)."""
        return "\n".join(_texts(self.card(message), ("markdown", "lark_md")))

    def shown(self, message: Message) -> str:
        """The markdown as a reader sees it: Feishu's card Markdown decodes the numeric escapes it
        documents (&#60; &#62; &#38;) and shows anything else, named entities included, literally."""
        return shown_markdown(self.markdown_of(message))

    # --- request handling (server threads) ---------------------------------------------------------------
    def _handle(self, method: str, raw_path: str, headers: dict[str, str], raw_body: bytes) -> tuple[int, dict, dict]:
        parts = urlsplit(raw_path)
        path = parts.path
        query = {k: v[0] for k, v in parse_qs(parts.query).items()}
        try:
            body = json.loads(raw_body) if raw_body else None
        except ValueError:
            body = None
        call = Call(method, path, query, body, headers, time.monotonic(), size=len(raw_body))
        with self._lock:
            self.calls.append(call)
            status, payload, extra = self._route(call, method, path, query, body, headers)
            for lost in self._lost:
                if lost[0] > 0 and path.startswith(lost[1]) and not path.startswith("/open-apis/auth/"):
                    lost[0] -= 1
                    status, payload, extra = 500, {"code": 1000004, "msg": "internal error"}, {}
                    break
            call.status, call.code = status, payload.get("code", 0)
        return status, payload, extra

    def _route(
        self, call: Call, method: str, path: str, query: dict, body: Any, headers: dict
    ) -> tuple[int, dict, dict]:
        for script in self._scripts:
            # the token endpoint only when a script names it (path="/open-apis/auth/")
            if (
                script.remaining > 0
                and path.startswith(script.path)
                and (script.path.startswith("/open-apis/auth/") or not path.startswith("/open-apis/auth/"))
            ):
                script.remaining -= 1
                if script.page is not None:
                    return script.status, {"code": script.code, PAGE: script.page}, dict(script.headers)
                return script.status, {"code": script.code, "msg": script.msg}, dict(script.headers)
        self._scripts = [s for s in self._scripts if s.remaining > 0]
        if path == "/open-apis/auth/v3/tenant_access_token/internal" and method == "POST":
            if self.store:
                return 400, {"code": 10003, "msg": "invalid app type: use the store app's token APIs"}, {}
            return self._token(body or {})
        if self.store and path.startswith("/open-apis/auth/v3/") and method == "POST":
            return self._store_auth(path, body or {})
        if path == "/callback/ws/endpoint" and method == "POST":
            return self._ws_endpoint(body or {})
        if self.store:
            call.tenant = self._token_tenant(headers)
            if call.tenant is None:
                return 400, {"code": 99991663, "msg": "Invalid access token for authorization."}, {}
            refused = self._other_tenant(call.tenant, path, query, body)
            if refused:
                return refused
        elif not self._authorised(headers):
            return (
                400,
                {
                    "code": 99991663,
                    "msg": "Invalid access token for authorization. Please make a request with token attached.",
                },
                {},
            )
        if path == "/open-apis/bot/v3/info" and method == "GET":
            return (
                200,
                {
                    "code": 0,
                    "msg": "ok",
                    "bot": {
                        "activate_status": 2,
                        "app_name": self.bot_name,
                        "avatar_url": "",
                        "ip_white_list": [],
                        "open_id": self.bot_open_id,
                    },
                },
                {},
            )
        if (
            call.size > MAX_BODY_BYTES
            and method in ("POST", "PATCH", "PUT")
            and (path.startswith("/open-apis/im/v1/messages") or path.startswith("/open-apis/cardkit/"))
        ):
            return 400, dict(TOO_LONG), {}
        if path == "/open-apis/application/v6/scopes" and method == "GET":
            scopes = [{"scope_name": name, "grant_status": status} for name, status in self.scopes.items()]
            return 200, {"code": 0, "msg": "success", "data": {"scopes": scopes}}, {}
        if path == "/open-apis/im/v1/messages" and method == "POST":
            return self._create(call, query, body or {})
        if path == "/open-apis/im/v1/messages" and method == "GET":
            return self._list(query)
        if path.startswith("/open-apis/im/v1/messages/"):
            rest = path[len("/open-apis/im/v1/messages/") :].split("/")
            if len(rest) == 1 and method == "GET":
                return self._get(rest[0], query)
            if len(rest) == 2 and rest[1] == "reply" and method == "POST":
                return self._reply(call, rest[0], body or {})
            if len(rest) == 1 and method == "PATCH":
                return self._patch(rest[0], body or {})
        if path == "/open-apis/cardkit/v1/cards" and method == "POST":
            created = self._card_create(body or {})
            if created[0] == 200:
                self.cards[created[1]["data"]["card_id"]].tenant = call.tenant
            return created
        if path.startswith("/open-apis/cardkit/v1/cards/"):
            rest = path[len("/open-apis/cardkit/v1/cards/") :].split("/")
            if len(rest) == 2 and rest[1] == "settings" and method == "PATCH":
                return self._card_settings(rest[0], body or {})
            if len(rest) == 4 and rest[1] == "elements" and rest[3] == "content" and method == "PUT":
                return self._card_content(rest[0], rest[2], body or {})
        if path == "/open-apis/ephemeral/v1/send" and method == "POST":
            return self._ephemeral(body or {})
        return 404, {"code": 1254000, "msg": f"no such API: {method} {path}"}, {}

    # --- a store app ---------------------------------------------------------------------------------
    def _store_auth(self, path: str, body: dict) -> tuple[int, dict, dict]:
        credentials_ok = body.get("app_id") == (self.app_id or body.get("app_id")) and body.get("app_secret") == (
            self.app_secret or body.get("app_secret")
        )
        if path == "/open-apis/auth/v3/app_ticket/resend":
            if not credentials_ok:
                return 400, {"code": 10014, "msg": "app secret invalid"}, {}
            self.resends += 1
            return 200, {"code": 0, "msg": "ok"}, {}
        if path == "/open-apis/auth/v3/app_access_token":
            if not credentials_ok:
                return 400, {"code": 10014, "msg": "app secret invalid"}, {}
            if not self.ticket or body.get("app_ticket") != self.ticket:
                return 400, {"code": 10012, "msg": "app_ticket is invalid"}, {}
            token, left = self._issue(self.app_tokens)
            return 200, {"code": 0, "msg": "ok", "app_access_token": token, "expire": left}, {}
        if path == "/open-apis/auth/v3/tenant_access_token":
            expiry = self.app_tokens.get(body.get("app_access_token") or "")
            if expiry is None or expiry <= self.now():
                return 400, {"code": 99991664, "msg": "invalid app access token"}, {}
            tenant = body.get("tenant_key") or ""
            if tenant not in self.tenants:
                return 400, {"code": 10013, "msg": "the tenant has not installed the app"}, {}
            mine = {t: (k, e) for t, (k, e) in self.tenant_tokens.items() if k == tenant}
            token, left = self._issue({t: e for t, (_k, e) in mine.items()})
            self.tenant_tokens[token] = (tenant, self.now() + left)
            return 200, {"code": 0, "msg": "ok", "tenant_access_token": token, "expire": left}, {}
        return 404, {"code": 1254000, "msg": f"no such API: POST {path}"}, {}

    def _issue(self, live: dict[str, float]) -> tuple[str, int]:
        """Feishu's rule: a token with 30 minutes or more left is returned again (its remaining
        life); with less, a new one is issued and the old one stays valid until its end."""
        now = self.now()
        for token, expiry in live.items():
            if expiry - now >= 1800:
                return token, int(expiry - now)
        token = ("a-" if live is self.app_tokens else "t-") + uuid.uuid4().hex
        if live is self.app_tokens:
            self.app_tokens[token] = now + self.token_life
        return token, int(self.token_life)

    def _token_tenant(self, headers: dict) -> str | None:
        value = headers.get("authorization", "")
        found = self.tenant_tokens.get(value[len("Bearer ") :]) if value.startswith("Bearer ") else None
        if found is None or found[1] <= self.now():
            return None
        return found[0]

    def _other_tenant(self, tenant: str, path: str, query: dict, body: Any) -> tuple[int, dict, dict] | None:
        """A chat or a message of another tenant, reached with this tenant's token: refused as
        Feishu does (the bot is not in that chat, as far as this tenant is concerned)."""
        chats: list[str] = []
        body = body if isinstance(body, dict) else {}
        if path == "/open-apis/im/v1/messages" and query.get("receive_id_type") == "chat_id":
            chats.append(body.get("receive_id") or "")
        if path == "/open-apis/im/v1/messages" and query.get("container_id_type") == "chat":
            chats.append(query.get("container_id") or "")
        if path == "/open-apis/ephemeral/v1/send":
            chats.append(body.get("chat_id") or "")
        if path.startswith("/open-apis/im/v1/messages/"):
            message = self._by_id.get(path[len("/open-apis/im/v1/messages/") :].split("/")[0])
            if message is not None:
                chats.append(message.chat_id)
        if any(self.chat_tenant.get(chat) != tenant for chat in chats):
            return 400, {"code": 230002, "msg": "The bot can not be outside the group."}, {}
        if path.startswith("/open-apis/cardkit/v1/cards/"):
            entity = self.cards.get(path[len("/open-apis/cardkit/v1/cards/") :].split("/")[0])
            if entity is not None and entity.tenant != tenant:  # another tenant's card: not found for this one
                return 400, {"code": 300301, "msg": "card not found"}, {}
        return None

    def _authorised(self, headers: dict) -> bool:
        value = headers.get("authorization", "")
        return value.startswith("Bearer ") and value[len("Bearer ") :] in self.tokens

    def _token(self, body: dict) -> tuple[int, dict, dict]:
        if (self.app_id and body.get("app_id") != self.app_id) or (
            self.app_secret and body.get("app_secret") != self.app_secret
        ):
            return 400, {"code": 10014, "msg": "app secret invalid"}, {}
        token = "t-" + uuid.uuid4().hex
        self.tokens.add(token)
        return 200, {"code": 0, "msg": "ok", "tenant_access_token": token, "expire": 7200}, {}

    # --- messages ----------------------------------------------------------------------------------------
    def _check_content(self, msg_type: str, content: Any) -> tuple[int, dict] | None:
        if msg_type != "interactive" or not isinstance(content, str):
            return 400, {"code": 230001, "msg": "invalid request parameter: msg_type/content"}
        try:
            card = json.loads(content)
        except ValueError:
            return 400, {"code": 230099, "msg": "Failed to create card content: invalid JSON"}
        if card.get("type") == "card":
            if (card.get("data") or {}).get("card_id") not in self.cards:
                return 400, {"code": 230099, "msg": "Failed to create card content: card_id not found"}
            return None
        if card.get("schema") != "2.0" or not isinstance((card.get("body") or {}).get("elements"), list):
            return 400, {"code": 230099, "msg": "Failed to create card content: not a card JSON 2.0"}
        ids = _element_ids(card)
        if len(ids) != len(set(ids)) or not all(isinstance(i, str) and ELEMENT_ID.fullmatch(i) for i in ids):
            # JSON 2.0: letters, digits and _, starting with a letter, at most 20, unique in the card
            return 400, {"code": 230099, "msg": f"Failed to create card content: invalid element_id in {ids}"}
        return None

    def _dedupe(self, call: Call, uid: str | None) -> Message | None:
        if not uid:
            return None
        if len(uid) > 50:
            raise ValueError("uuid longer than 50 characters")
        seen = self._uuids.get(uid)
        if seen and self.now() - seen[0] < self.uuid_window:
            call.deduped = True
            return seen[1]
        return None

    def _new_message(self, chat_id: str, body: dict, **links) -> Message:
        message = Message(
            message_id=f"om_{next(self._ids):06d}{uuid.uuid4().hex[:10]}",
            chat_id=chat_id,
            msg_type=body["msg_type"],
            content=body["content"],
            uuid=body.get("uuid") or "",
            created=time.time() + self._offset,
            **links,
        )
        self.messages.append(message)
        self._by_id[message.message_id] = message
        if message.uuid:
            self._uuids[message.uuid] = (self.now(), message)
        return message

    def _create(self, call: Call, query: dict, body: dict) -> tuple[int, dict, dict]:
        kind, receiver = query.get("receive_id_type"), body.get("receive_id") or ""
        if kind not in ("chat_id", "open_id") or not receiver or (kind == "open_id") != receiver.startswith("ou_"):
            return 400, {"code": 230001, "msg": "invalid receive_id_type / receive_id"}, {}
        try:
            earlier = self._dedupe(call, body.get("uuid"))
        except ValueError:
            return 400, {"code": 230001, "msg": "uuid too long"}, {}
        if earlier:
            return 200, {"code": 0, "msg": "success", "data": earlier.as_data(self.app_id or "cli_fake")}, {}
        problem = self._check_content(body.get("msg_type"), body.get("content"))
        if problem:
            return problem[0], problem[1], {}
        message = self._new_message(body["receive_id"], body)
        return 200, {"code": 0, "msg": "success", "data": message.as_data(self.app_id or "cli_fake")}, {}

    def _reply(self, call: Call, parent_id: str, body: dict) -> tuple[int, dict, dict]:
        parent = self._by_id.get(parent_id)
        if parent is None:
            return 400, {"code": 230011, "msg": "The message is not found, maybe not exist or deleted."}, {}
        try:
            earlier = self._dedupe(call, body.get("uuid"))
        except ValueError:
            return 400, {"code": 230001, "msg": "uuid too long"}, {}
        if earlier:
            return 200, {"code": 0, "msg": "success", "data": earlier.as_data(self.app_id or "cli_fake")}, {}
        problem = self._check_content(body.get("msg_type"), body.get("content"))
        if problem:
            return problem[0], problem[1], {}
        root = parent.root_id or parent.message_id
        in_thread = bool(body.get("reply_in_thread")) or bool(parent.thread_id)
        thread_id = ("omt_" + hashlib.sha1(root.encode()).hexdigest()[:12]) if in_thread else ""
        if thread_id and root in self._by_id:
            self._by_id[root].thread_id = thread_id  # the root belongs to the thread it opened
        message = self._new_message(
            parent.chat_id,
            body,
            root_id=root,
            parent_id=parent.message_id,
            thread_id=thread_id,
            reply_in_thread=bool(body.get("reply_in_thread")),
        )
        return 200, {"code": 0, "msg": "success", "data": message.as_data(self.app_id or "cli_fake")}, {}

    def _read_refused(self, chat_id: str, *, listing: bool = True) -> tuple[int, dict, dict] | None:
        """Reading needs a read scope; listing a group's messages also im:message.group_msg (the
        list API's own note: without it, only one-to-one chats)."""
        if not any(self.scopes.get(s) == 1 for s in READ_SCOPES):
            return (
                400,
                {
                    "code": 99991672,
                    "msg": f"Access denied. One of the following scopes is required: [{', '.join(READ_SCOPES)}].",
                },
                {},
            )
        if listing and chat_id not in self._p2p_chats and self.scopes.get("im:message.group_msg") != 1:
            return 400, {"code": 230027, "msg": "Lack of necessary permissions."}, {}
        return None

    def _list(self, query: dict) -> tuple[int, dict, dict]:
        kind, container = query.get("container_id_type"), query.get("container_id") or ""
        bad = lambda what: (400, {"code": 230001, "msg": f"invalid request parameter: {what}"}, {})  # noqa: E731
        if kind not in ("chat", "thread") or not container:
            return bad("container_id_type / container_id")
        if kind == "thread" and (query.get("start_time") or query.get("end_time")):
            return bad("the thread container does not support a time range")
        sort = query.get("sort_type") or "ByCreateTimeAsc"
        if sort not in ("ByCreateTimeAsc", "ByCreateTimeDesc"):
            return bad("sort_type")
        try:
            size = int(query.get("page_size") or 20)
            start = float(query.get("start_time") or 0)
            end = float(query.get("end_time") or "inf")
            offset = int(base64.urlsafe_b64decode(query["page_token"]).decode()) if query.get("page_token") else 0
        except (ValueError, TypeError):
            return bad("page_size / start_time / end_time / page_token")
        if not 1 <= size <= 50:
            return bad("page_size")
        if kind == "chat":
            chat_id = container
            items = [
                m
                for m in self._by_id.values()
                if m.chat_id == chat_id and not (m.root_id and m.thread_id) and start <= m.created <= end
            ]
        else:
            items = [m for m in self._by_id.values() if m.thread_id == container]
            chat_id = items[0].chat_id if items else ""
            if not items:
                return 400, {"code": 230011, "msg": "The thread is not found."}, {}
        refused = self._read_refused(chat_id)
        if refused:
            return refused
        items.sort(key=lambda m: m.created, reverse=sort == "ByCreateTimeDesc")
        page = items[offset : offset + size]
        more = offset + size < len(items)
        as_sent = query.get("card_msg_content_type") == "user_card_content"
        data = {"has_more": more, "items": [m.as_data(self.app_id or "cli_fake", as_sent=as_sent) for m in page]}
        if more:
            data["page_token"] = base64.urlsafe_b64encode(str(offset + size).encode()).decode()
        return 200, {"code": 0, "msg": "success", "data": data}, {}

    def _get(self, message_id: str, query: dict) -> tuple[int, dict, dict]:
        message = self._by_id.get(message_id)
        if message is None:
            return 400, {"code": 230011, "msg": "The message is not found, maybe not exist or deleted."}, {}
        refused = self._read_refused(message.chat_id, listing=False)
        if refused:
            return refused
        as_sent = query.get("card_msg_content_type") == "user_card_content"
        return (
            200,
            {
                "code": 0,
                "msg": "success",
                "data": {"items": [message.as_data(self.app_id or "cli_fake", as_sent=as_sent)]},
            },
            {},
        )

    def _patch(self, message_id: str, body: dict) -> tuple[int, dict, dict]:
        message = self._by_id.get(message_id)
        if message is None:
            return 400, {"code": 230011, "msg": "The message is not found, maybe not exist or deleted."}, {}
        problem = self._check_content("interactive", body.get("content"))
        if problem:
            return problem[0], problem[1], {}
        old = json.loads(message.current)
        new = json.loads(body["content"])
        for card in (old, new):
            if card.get("type") != "card" and not (card.get("config") or {}).get("update_multi"):
                return 400, {"code": 230099, "msg": "Failed to update card: update_multi must be true"}, {}
        message.patches.append(body["content"])
        return 200, {"code": 0, "msg": "success", "data": {}}, {}

    # --- CardKit -----------------------------------------------------------------------------------------
    def _card_create(self, body: dict) -> tuple[int, dict, dict]:
        if self._cardkit_denied:
            return (
                400,
                {
                    "code": 99991672,
                    "msg": "Access denied. One of the following scopes is required: [cardkit:card:write].",
                },
                {},
            )
        if body.get("type") != "card_json" or not isinstance(body.get("data"), str):
            return 400, {"code": 300001, "msg": "invalid card type or data"}, {}
        try:
            card = json.loads(body["data"])
        except ValueError:
            return 400, {"code": 300001, "msg": "card data is not JSON"}, {}
        if card.get("schema") != "2.0":
            return 400, {"code": 300001, "msg": "only card JSON 2.0 is supported"}, {}
        card_id = f"7{next(self._ids):06d}{uuid.uuid4().int % 10**12:012d}"
        self.cards[card_id] = CardEntity(card_id, card)
        return 200, {"code": 0, "msg": "success", "data": {"card_id": card_id}}, {}

    def _next_sequence(self, entity: CardEntity, body: dict) -> tuple[int, dict] | None:
        sequence = body.get("sequence")
        if not isinstance(sequence, int) or sequence <= entity.sequence:
            return 400, {"code": 300317, "msg": "sequence number must be greater than the last one"}
        entity.sequence = sequence
        return None

    def _card_content(self, card_id: str, element_id: str, body: dict) -> tuple[int, dict, dict]:
        entity = self.cards.get(card_id)
        if entity is None:
            return 400, {"code": 300301, "msg": "card not found"}, {}
        element = _find_element(entity.card, element_id)
        if element is None:
            return 400, {"code": 300302, "msg": "element not found"}, {}
        if not entity.streaming:
            return 400, {"code": 300309, "msg": "streaming mode is closed"}, {}
        problem = self._next_sequence(entity, body)
        if problem:
            return problem[0], problem[1], {}
        element["content"] = body.get("content", "")
        entity.history.append((entity.sequence, element["content"]))
        return 200, {"code": 0, "msg": "success", "data": {}}, {}

    def _card_settings(self, card_id: str, body: dict) -> tuple[int, dict, dict]:
        entity = self.cards.get(card_id)
        if entity is None:
            return 400, {"code": 300301, "msg": "card not found"}, {}
        try:
            settings = json.loads(body.get("settings") or "")
        except ValueError:
            return 400, {"code": 300001, "msg": "settings is not JSON"}, {}
        problem = self._next_sequence(entity, body)
        if problem:
            return problem[0], problem[1], {}
        entity.card.setdefault("config", {}).update(settings.get("config") or {})
        entity.settings.append(settings)
        return 200, {"code": 0, "msg": "success", "data": {}}, {}

    def _ws_endpoint(self, body: dict) -> tuple[int, dict, dict]:
        if (self.app_id and body.get("AppID") != self.app_id) or (
            self.app_secret and body.get("AppSecret") != self.app_secret
        ):
            return 200, {"code": 1000040345, "msg": "app id or secret invalid"}, {}
        if self._gateway is None:
            self._gateway = _WsGateway(self.ws_connected).start()
        url = f"ws://127.0.0.1:{self._gateway.port}/ws?device_id=fake-device-1&service_id=7"
        return (
            200,
            {
                "code": 0,
                "msg": "ok",
                "data": {
                    "URL": url,
                    "ClientConfig": {
                        "ReconnectCount": -1,
                        "ReconnectInterval": 1,
                        "ReconnectNonce": 1,
                        "PingInterval": 120,
                    },
                },
            },
            {},
        )

    def _ephemeral(self, body: dict) -> tuple[int, dict, dict]:
        if self._ephemeral_denied:
            return 400, {"code": 99991672, "msg": "Access denied: ephemeral cards are not enabled."}, {}
        if not (body.get("chat_id") and body.get("open_id") and isinstance(body.get("card"), dict)):
            return 400, {"code": 10002, "msg": "invalid parameters"}, {}
        if body["chat_id"] in self._p2p_chats:
            return 400, {"code": 10002, "msg": "ephemeral cards can only be sent in group chats"}, {}
        if body["chat_id"] in self._topic_chats:  # a refusal for this chat, not a permission error
            return 400, {"code": 10002, "msg": "ephemeral cards are not supported in topic groups"}, {}
        self.ephemerals.append(body)
        return 200, {"code": 0, "msg": "ok", "data": {"message_id": f"om_eph{next(self._ids):06d}"}}, {}


ELEMENT_ID = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,19}")


def _element_ids(node: Any) -> list:
    if isinstance(node, dict):
        own = [node["element_id"]] if "element_id" in node else []
        return own + [i for v in node.values() for i in _element_ids(v)]
    if isinstance(node, list):
        return [i for v in node for i in _element_ids(v)]
    return []


def _projection(content: str) -> str:
    """A JSON 2.0 card as Feishu lists it by default: its title and a placeholder, nothing else."""
    try:
        card = json.loads(content)
    except ValueError:
        card = {}
    title = (((card.get("header") or {}).get("title") or {}).get("content")) if isinstance(card, dict) else None
    return json.dumps(
        {"title": title or "", "elements": [[{"tag": "text", "text": CARD_PROJECTION}]]}, ensure_ascii=False
    )


def shown_markdown(markdown: str) -> str:
    """Card Markdown as Feishu displays it: numeric character references decoded, named entities
    (&lt;, &amp;) left as typed."""
    return re.sub(
        r"&#(\d{1,7});", lambda m: chr(int(m.group(1))) if int(m.group(1)) < 0x110000 else m.group(0), markdown
    )


def _find_element(node: Any, element_id: str) -> dict | None:
    if isinstance(node, dict):
        if node.get("element_id") == element_id:
            return node
        for value in node.values():
            found = _find_element(value, element_id)
            if found is not None:
                return found
    elif isinstance(node, list):
        for value in node:
            found = _find_element(value, element_id)
            if found is not None:
                return found
    return None


def _texts(node: Any, tags: tuple[str, ...] = ("markdown", "lark_md", "plain_text")) -> list[str]:
    out: list[str] = []
    if isinstance(node, dict):
        if node.get("tag") in tags and isinstance(node.get("content"), str):
            out.append(node["content"])
        for value in node.values():
            out.extend(_texts(value, tags))
    elif isinstance(node, list):
        for value in node:
            out.extend(_texts(value, tags))
    return out


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address) -> None:
        import sys

        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    fake: FakeFeishu
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _serve(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        if self.fake.latency:
            time.sleep(self.fake.latency)
        self.fake._hold(urlsplit(self.path).path)
        headers = {k.lower(): v for k, v in self.headers.items()}
        status, payload, extra = self.fake._handle(self.command, self.path, headers, raw)
        page = payload.get(PAGE)
        data = page.encode("utf-8") if page is not None else json.dumps(payload, ensure_ascii=False).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "text/html" if page is not None else "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("X-Tt-Logid", uuid.uuid4().hex)
        for key, value in extra.items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(data)

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _serve


# --- the long connection: a websocket gateway speaking Feishu's frames (pbbp2.Frame, protobuf) ----------


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        low, n = n & 0x7F, n >> 7
        out.append(low | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _bytes_field(number: int, data: bytes) -> bytes:
    return _varint(number << 3 | 2) + _varint(len(data)) + data


def _int_field(number: int, value: int) -> bytes:
    return _varint(number << 3) + _varint(value)


def encode_frame(
    method: int, headers: dict[str, str], payload: bytes = b"", *, service: int = 7, seq: int = 0, log_id: int = 0
) -> bytes:
    """Frame{SeqID=1, LogID=2, service=3, method=4 (0 control, 1 data), headers=5 {key=1, value=2},
    payload=8} — the fields lark.ws.Client reads."""
    out = _int_field(1, seq) + _int_field(2, log_id) + _int_field(3, service) + _int_field(4, method)
    for key, value in headers.items():
        out += _bytes_field(5, _bytes_field(1, key.encode()) + _bytes_field(2, value.encode()))
    if payload:
        out += _bytes_field(8, payload)
    return out


def _fields(data: bytes) -> list[tuple[int, int | bytes]]:
    """(field number, value) pairs of a protobuf message: varints as ints, the rest as bytes."""

    def varint(pos: int) -> tuple[int, int]:
        shift = value = 0
        while True:
            byte = data[pos]
            pos += 1
            value |= (byte & 0x7F) << shift
            shift += 7
            if not byte & 0x80:
                return value, pos

    out: list[tuple[int, int | bytes]] = []
    pos = 0
    while pos < len(data):
        tag, pos = varint(pos)
        number, wire = tag >> 3, tag & 7
        if wire == 0:
            value, pos = varint(pos)
            out.append((number, value))
        elif wire == 2:
            length, pos = varint(pos)
            out.append((number, data[pos : pos + length]))
            pos += length
        else:
            raise ValueError(f"unexpected protobuf wire type {wire}")
    return out


def decode_frame(data: bytes) -> dict:
    frame: dict = {"headers": {}, "payload": b""}
    names = {1: "seq", 2: "log_id", 3: "service", 4: "method"}
    for number, value in _fields(data):
        if number in names:
            frame[names[number]] = value
        elif number == 5:
            header = dict(_fields(value))
            frame["headers"][header.get(1, b"").decode()] = header.get(2, b"").decode()
        elif number == 8:
            frame["payload"] = value
    return frame


class _WsGateway:
    """A websocket server on loopback (its own thread and loop) that holds the bot's connection."""

    def __init__(self, connected: threading.Event):
        import asyncio

        self.asyncio = asyncio
        self.connected = connected
        self.loop = asyncio.new_event_loop()
        self.port = 0
        self._conn = None
        self._server = None
        self.connections = 0  # how many times the bot has connected
        self._waiting: dict[str, Any] = {}
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, name="fake-feishu-ws", daemon=True)

    def start(self) -> _WsGateway:
        self._thread.start()
        self._ready.wait(5)
        return self

    def _run(self) -> None:
        from websockets.asyncio.server import serve

        asyncio = self.asyncio
        asyncio.set_event_loop(self.loop)

        async def boot():
            self._server = await serve(self._handle, "127.0.0.1", 0)
            self.port = self._server.sockets[0].getsockname()[1]
            self._ready.set()

        self.loop.run_until_complete(boot())
        self.loop.run_forever()
        self.loop.close()

    async def _handle(self, conn) -> None:
        self._conn = conn
        self.connections += 1
        self.connected.set()
        try:
            async for message in conn:
                frame = decode_frame(message)
                kind = frame["headers"].get("type")
                if frame.get("method") == 0 and kind == "ping":
                    await conn.send(encode_frame(0, {"type": "pong"}))
                elif frame.get("method") == 1:
                    waiter = self._waiting.pop(frame["headers"].get("message_id", ""), None)
                    if waiter is not None and not waiter.done():
                        waiter.set_result(frame)
        except Exception:  # noqa: BLE001 — the client went away however it did: the fake just stops
            pass
        finally:
            self.connected.clear()

    def push(self, payload: dict, timeout: float) -> dict:
        message_id = uuid.uuid4().hex
        frame = encode_frame(
            1,
            {"type": "event", "message_id": message_id, "trace_id": uuid.uuid4().hex, "sum": "1", "seq": "0"},
            json.dumps(payload, ensure_ascii=False).encode(),
        )

        async def send_and_wait():
            waiter = self.loop.create_future()
            self._waiting[message_id] = waiter
            await self._conn.send(frame)
            return await self.asyncio.wait_for(waiter, timeout)

        answer = self.asyncio.run_coroutine_threadsafe(send_and_wait(), self.loop).result(timeout + 1)
        body = json.loads(answer["payload"] or b"{}")
        data = body.get("data")
        return {"code": body.get("code"), "data": json.loads(base64.b64decode(data)) if data else None}

    def drop(self) -> None:
        """Close the bot's connection from the server side, as Feishu does when it moves a client."""
        if self._conn is not None:
            self.asyncio.run_coroutine_threadsafe(self._conn.close(), self.loop).result(5)

    def stop(self) -> None:
        async def shutdown():
            if self._server is not None:
                self._server.close()
                await self._server.wait_closed()

        if self.loop.is_running():
            self.asyncio.run_coroutine_threadsafe(shutdown(), self.loop).result(5)
            self.loop.call_soon_threadsafe(self.loop.stop)
            self._thread.join(5)


# --- callbacks into the bot ------------------------------------------------------------------------------

_event_ids = itertools.count(1)


def mention(key: str, open_id: str, name: str, kind: str = "user") -> dict:
    """One `mentions[]` entry of a message event (`key` is the placeholder in the text, e.g. @_user_1)."""
    return {
        "key": key,
        "id": {"open_id": open_id, "union_id": "on_" + open_id[3:], "user_id": None},
        "name": name,
        "tenant_key": "tenant-fake",
        "mentioned_type": kind,
    }


def message_event(
    text: str | None = None,
    *,
    chat_id: str = "oc_group0000000000000000000000001",
    chat_type: str = "group",
    sender: str = "ou_alice000000000000000000000000001",
    sender_type: str = "user",
    mentions: Iterable[dict] = (),
    root_id: str | None = None,
    parent_id: str | None = None,
    thread_id: str | None = None,
    message_type: str = "text",
    content: dict | None = None,
    event_id: str | None = None,
    message_id: str | None = None,
    token: str = "",
    app_id: str = "cli_fake",
    tenant_key: str | None = "tenant-fake",
) -> dict:
    """An `im.message.receive_v1` event (schema 2.0) as Feishu sends it (`tenant_key=None`: none in it)."""
    now = str(int(time.time() * 1000))
    body = content if content is not None else {"text": text or ""}
    event = {
        "schema": "2.0",
        "header": {
            "event_id": event_id or f"ev_{next(_event_ids):08d}_{uuid.uuid4().hex[:8]}",
            "token": token,
            "create_time": now,
            "event_type": "im.message.receive_v1",
            "tenant_key": tenant_key or "",
            "app_id": app_id,
        },
        "event": {
            "sender": {
                "sender_id": {"union_id": "on_" + sender[3:], "user_id": "u_" + sender[-6:], "open_id": sender},
                "sender_type": sender_type,
                "tenant_key": tenant_key or "",
            },
            "message": {
                "message_id": message_id or f"om_user{uuid.uuid4().hex[:16]}",
                "root_id": root_id or "",
                "parent_id": parent_id or root_id or "",
                "create_time": now,
                "update_time": now,
                "chat_id": chat_id,
                "thread_id": thread_id or "",
                "chat_type": chat_type,
                "message_type": message_type,
                "content": json.dumps(body, ensure_ascii=False),
                "mentions": list(mentions),
                "user_agent": "Mozilla/5.0 Lark/7.30",
            },
        },
    }
    if tenant_key is None:
        del event["header"]["tenant_key"]
    return event


def card_action_event(
    value: dict | None,
    *,
    chat_id: str = "oc_group0000000000000000000000001",
    message_id: str = "",
    operator: str = "ou_alice000000000000000000000000001",
    form_value: dict | None = None,
    name: str | None = None,
    tag: str = "button",
    event_id: str | None = None,
    token: str = "",
    app_id: str = "cli_fake",
    tenant_key: str | None = "tenant-fake",
) -> dict:
    """A `card.action.trigger` callback (a button click or a form submission). `value=None`: a
    form submission that arrives without its submit button's value, as Feishu sometimes sends."""
    action: dict = {"tag": tag} if value is None else {"value": value, "tag": tag}
    if form_value is not None:
        action["form_value"] = form_value
    if name:
        action["name"] = name
    event = {
        "schema": "2.0",
        "header": {
            "event_id": event_id or f"ev_{next(_event_ids):08d}_{uuid.uuid4().hex[:8]}",
            "token": token,
            "create_time": str(int(time.time() * 1_000_000)),
            "event_type": "card.action.trigger",
            "tenant_key": tenant_key or "",
            "app_id": app_id,
        },
        "event": {
            "operator": {
                "tenant_key": tenant_key or "",
                "user_id": "u_" + operator[-6:],
                "open_id": operator,
                "union_id": "on_" + operator[3:],
            },
            "token": "c-" + uuid.uuid4().hex,
            "action": action,
            "host": "im_message",
            "delivery_type": "",
            "context": {"open_message_id": message_id, "open_chat_id": chat_id},
        },
    }
    if tenant_key is None:
        del event["header"]["tenant_key"]
    return event


def url_verification(challenge: str, token: str) -> dict:
    return {"challenge": challenge, "token": token, "type": "url_verification"}


def encrypt(payload: dict, encrypt_key: str) -> bytes:
    """The request body Feishu sends with an encrypt key: {"encrypt": base64(iv + AES-256-CBC)}, the
    AES key being SHA-256(encrypt key), PKCS#7 padding."""
    from cryptography.hazmat.primitives import padding
    from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

    key = hashlib.sha256(encrypt_key.encode("utf-8")).digest()
    iv = os.urandom(16)
    padder = padding.PKCS7(128).padder()
    data = padder.update(json.dumps(payload, ensure_ascii=False).encode("utf-8")) + padder.finalize()
    encryptor = Cipher(algorithms.AES(key), modes.CBC(iv)).encryptor()
    blob = iv + encryptor.update(data) + encryptor.finalize()
    return json.dumps({"encrypt": base64.b64encode(blob).decode("ascii")}).encode("utf-8")


def sign(body: bytes, encrypt_key: str, *, timestamp: int | str | None = None, nonce: str | None = None) -> dict:
    """Feishu's signature headers: X-Lark-Signature = sha256(timestamp + nonce + encrypt_key + body)."""
    ts = str(int(time.time()) if timestamp is None else timestamp)
    nonce = nonce or uuid.uuid4().hex[:16]
    signature = hashlib.sha256((ts + nonce + encrypt_key).encode("utf-8") + body).hexdigest()
    return {
        "X-Lark-Request-Timestamp": ts,
        "X-Lark-Request-Nonce": nonce,
        "X-Lark-Signature": signature,
        "X-Request-Id": uuid.uuid4().hex,
        "Content-Type": "application/json; charset=utf-8",
    }


def signed(payload: dict, encrypt_key: str, **kwargs) -> tuple[bytes, dict]:
    """An encrypted body and its signature headers, ready to POST to the bot."""
    body = encrypt(payload, encrypt_key)
    return body, sign(body, encrypt_key, **kwargs)
