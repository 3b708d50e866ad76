"""A fake Slack Web API for tests and benchmarks, plus helpers that sign and send requests into
the bot's own HTTP endpoint the way Slack does.

It is a real HTTP server (ThreadingHTTPServer on 127.0.0.1, port 0), like bolt-python's own
`tests/mock_web_api_server`: the real `slack_sdk` AsyncWebClient reaches it through
`base_url=fake.url` (SLACK_API_URL), nothing is monkeypatched. It answers every method the adapter
uses with Slack's response shapes, accepts JSON and form bodies as slack_sdk sends them, checks
the bot token, validates Block Kit limits like Slack does (so a renderer that overflows fails
the post), refuses what Slack refuses — a duplicate action_id anywhere in a message or view
(invalid_blocks), blocks over 12,000 UTF-8 bytes (msg_blocks_too_long), posting where the bot is
not a member (not_in_channel: `not_joined`, or any id starting with CNOTIN) — pages
conversations.history / replies with cursors (`page_size` lowers the page), and keeps the
resulting conversation state::

    with FakeSlack() as slack:
        settings = make_settings(slack_bot_token=slack.token, slack_api_url=slack.url, ...)
        ...
        slack.calls                      # every Web API call, in arrival order (Call objects)
        slack.calls_to("chat.postMessage")
        slack.top_level("C1")            # the channel's top-level messages, oldest first
        slack.replies("C1", root_ts)     # a thread's replies, oldest first
        slack.ephemerals, slack.webhook_posts, slack.views, slack.uploads

Scripting failures::

    slack.fail("chat.postMessage", times=5, status=429, retry_after="0.05")   # rate limited
    slack.fail("chat.startStream", error="method_not_found")                  # every call
    slack.fail("response_url", status=404, error="expired_url")                 # response_url posts
    slack.delay("chat.postMessage", 0.3)                                      # slow answers

Inbound helpers (`SlackSender`): signed slash commands, events, block actions and view
submissions, with `SignatureVerifier.generate_signature`, sent with aiohttp (async, so the bot's
server in the same event loop keeps serving).
"""

from __future__ import annotations

import itertools
import json
import threading
import time
import uuid
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlencode, urlparse

JSON_FIELDS = ("blocks", "metadata", "chunks", "files", "attachments", "view")
CUMULATIVE_LIMIT = 12000  # Slack answered msg_blocks_too_long at ~13k; it does not say characters or
# bytes, so this fake counts UTF-8 bytes of the blocks' JSON (the stricter reading)
TEXT_LIMIT = 40000  # chat.postMessage: `text` over 40,000 characters is msg_too_long
STREAM_TEXT_LIMIT = 12000  # chat.startStream / appendStream / stopStream: markdown_text per call


@dataclass
class Call:
    method: str
    params: dict
    headers: dict
    at: float


@dataclass
class Failure:
    status: int = 200
    error: str | None = None  # ok:false with this error (status 200 unless `status` says otherwise)
    retry_after: str | None = None
    times: int | None = 1  # None: every call


@dataclass
class Message:
    channel: str
    ts: str
    text: str = ""
    blocks: list = field(default_factory=list)
    thread_ts: str | None = None
    metadata: dict | None = None
    user: str = ""
    bot_id: str | None = None
    edits: int = 0
    streaming: bool = False
    streamed: bool = False
    unfurl_links: Any = None

    def as_api(self, with_metadata: bool = True) -> dict:
        out = {"type": "message", "ts": self.ts, "text": self.text, "user": self.user}
        if self.blocks:
            out["blocks"] = self.blocks
        if self.bot_id:
            out["bot_id"] = self.bot_id
        if self.thread_ts:
            out["thread_ts"] = self.thread_ts
        if self.metadata and with_metadata:
            out["metadata"] = self.metadata
        return out


class FakeSlack:
    def __init__(
        self,
        *,
        token: str = "xoxb-fake-token",
        bot_user_id: str = "UBOT",
        bot_id: str = "BBOT",
        team_id: str = "T0001",
        latency: float = 0.0,
        app_token: str = "xapp-fake-app-token",
    ):
        self.token = token
        self.app_token = app_token
        self.socket_url: str | None = None  # what apps.connections.open hands out (a FakeSocketMode URL)
        self.bot_user_id = bot_user_id
        self.bot_id = bot_id
        self.team_id = team_id
        self.latency = latency
        self.calls: list[Call] = []
        self.messages: list[Message] = []  # every message, in posting order
        self.ephemerals: list[dict] = []
        self.webhook_posts: list[dict] = []  # what arrived at response_url targets
        self.views: list[dict] = []
        self.uploads: dict[str, dict] = {}
        self.block_errors: list[dict] = []  # payloads refused for breaking a Block Kit limit
        # Channels the bot is not a member of (posting there is not_in_channel); channel ids
        # starting with CNOTIN are never joined. DMs with the bot are always open.
        self.not_joined: set[str] = set()
        # The most messages one conversations.history / replies page holds, whatever `limit`
        # asks (Slack's own ceiling is 999 / 1000); tests lower it to exercise cursors.
        self.page_size = 999
        self._failures: dict[str, list[Failure]] = {}
        self._delays: dict[str, float] = {}
        self._lock = threading.RLock()
        self._ts = itertools.count(1)
        self._base = int(time.time())
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        # The app installed into many workspaces (OAuth): its credentials and configured Redirect
        # URL, each workspace (`add_team`) with its channels, and the tokens Slack issued. A token
        # works only for its own workspace's channels; the fixed `token` is `team_id`'s.
        self.client_id = "1111.2222"
        self.client_secret = "fake-client-secret"
        self.redirect_uri: str | None = None
        self.rotation = True  # token rotation on: access tokens expire, refresh tokens work once
        self.token_lifetime = 43200  # seconds (Slack: 12 h)
        self.deny_next = False  # the next person at the authorize page presses Cancel
        self.teams: dict[str, dict] = {}  # workspace (team, or enterprise when org-wide) → its record
        self.tokens: dict[str, str] = {token: team_id}  # live access token → workspace
        self.token_owner: dict[str, str] = {token: team_id}  # every token ever issued → workspace
        self.refresh_tokens: dict[str, str] = {}  # unspent refresh token → workspace
        self.codes: dict[str, str] = {}  # unspent authorization code → workspace
        self.channel_team: dict[str, str] = {}  # channel → its workspace (unlisted: any token's)
        self.refreshes = 0  # refresh grants answered
        self._issued = itertools.count(1)

    # --- lifecycle -------------------------------------------------------------------------------
    @property
    def origin(self) -> str:
        if self._server is None:
            raise RuntimeError("FakeSlack is not started")
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    @property
    def url(self) -> str:
        """The Web API base URL for slack_sdk (SLACK_API_URL); ends with a slash like Slack's."""
        return self.origin + "/api/"

    def response_url(self, name: str | None = None) -> str:
        return f"{self.origin}/response/{name or uuid.uuid4().hex[:8]}"

    def start(self) -> FakeSlack:
        handler = type("Handler", (_Handler,), {"fake": self})
        self._server = _Server(("127.0.0.1", 0), handler)
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> FakeSlack:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    # --- installs (OAuth) -------------------------------------------------------------------------
    def add_team(
        self,
        team_id: str,
        *,
        name: str | None = None,
        channels: tuple[str, ...] = (),
        enterprise_id: str | None = None,
        org_wide: bool = False,
        bot_user_id: str | None = None,
    ) -> str:
        """A workspace that may install the app; its key (the enterprise id for an org-wide
        install, else the team id) owns `channels`. Returns the key."""
        key = enterprise_id if org_wide and enterprise_id else team_id
        with self._lock:
            self.teams[key] = {
                "team_id": None if org_wide else team_id,
                "name": name or f"Team {team_id}",
                "enterprise_id": enterprise_id,
                "org_wide": org_wide,
                "bot_user_id": bot_user_id or f"UBOT{team_id}",
                "bot_id": f"B{team_id}",
            }
            for channel in channels:
                self.channel_team[channel] = key
        return key

    def revoke(self, key: str) -> None:
        """The workspace removed the app: every token of it stops working."""
        with self._lock:
            for token in [t for t, owner in self.tokens.items() if owner == key]:
                del self.tokens[token]
            for token in [t for t, owner in self.refresh_tokens.items() if owner == key]:
                del self.refresh_tokens[token]

    def calls_by(self, key: str) -> list[Call]:
        """Calls made with any token of workspace `key`."""
        return [c for c in self.calls if self.token_owner.get(_bearer(c.headers, c.params)) == key]

    def _issue(self, key: str, *, code_grant: bool) -> dict:
        team = self.teams[key]
        n = next(self._issued)
        token = f"xoxb-{key}-{n}" if not self.rotation else f"xoxe.xoxb-1-{key}-{n}"
        self.tokens[token] = self.token_owner[token] = key
        answer: dict = {
            "ok": True,
            "app_id": "A0001",
            "scope": "chat:write,commands",
            "token_type": "bot",
            "access_token": token,
            "bot_user_id": team["bot_user_id"],
            "team": None if team["org_wide"] else {"id": team["team_id"], "name": team["name"]},
            "enterprise": {"id": team["enterprise_id"], "name": "Grid"} if team["enterprise_id"] else None,
            "is_enterprise_install": team["org_wide"],
        }
        if self.rotation:
            refresh = f"xoxe-1-{key}-{n}"
            self.refresh_tokens[refresh] = key
            answer.update(refresh_token=refresh, expires_in=self.token_lifetime)
        if code_grant:
            answer["authed_user"] = {"id": "UINSTALLER"}
        return answer

    def _oauth_access(self, headers: dict, p: dict) -> dict:
        """oauth.v2.access: client credentials by HTTP Basic (or the form), then a code grant or,
        with rotation on, a refresh grant (each refresh token works once)."""
        import base64

        given = headers.get("authorization", "")
        if given.startswith("Basic "):
            client_id, _, secret = base64.b64decode(given[6:]).decode().partition(":")
        else:
            client_id, secret = p.get("client_id", ""), p.get("client_secret", "")
        if client_id != self.client_id:
            return {"ok": False, "error": "invalid_client_id"}
        if secret != self.client_secret:
            return {"ok": False, "error": "bad_client_secret"}
        with self._lock:
            if p.get("grant_type") == "refresh_token":
                key = self.refresh_tokens.pop(p.get("refresh_token") or "", None)
                if key is None:
                    return {"ok": False, "error": "invalid_refresh_token"}
                self.refreshes += 1
                return self._issue(key, code_grant=False)
            key = self.codes.pop(p.get("code") or "", None)
            if key is None:
                return {"ok": False, "error": "invalid_code"}
            if p.get("redirect_uri") and p["redirect_uri"] != self.redirect_uri:
                return {"ok": False, "error": "bad_redirect_uri"}
            return self._issue(key, code_grant=True)

    def _authorize_page(self, query: dict) -> tuple[int, dict]:
        """GET /oauth/v2/authorize: the person (of workspace `team`) approves at once and is sent
        to the Redirect URL with a code and the state (or `error=access_denied`)."""
        if query.get("client_id") != self.client_id:
            return 400, {}
        key = query.get("team") or ""
        key = next((k for k, t in self.teams.items() if key in (k, t["team_id"])), "")
        redirect = query.get("redirect_uri") or self.redirect_uri
        if not key or not redirect:
            return 400, {}
        with self._lock:
            if self.deny_next:
                self.deny_next = False
                answer = {"error": "access_denied", "state": query.get("state", "")}
            else:
                code = uuid.uuid4().hex
                self.codes[code] = key
                answer = {"code": code, "state": query.get("state", "")}
        return 302, {"Location": f"{redirect}?{urlencode(answer)}"}

    # --- scripting -------------------------------------------------------------------------------
    def fail(
        self,
        method: str,
        *,
        times: int | None = 1,
        status: int = 200,
        error: str | None = None,
        retry_after: str | None = None,
    ) -> None:
        """The next `times` calls of `method` (None: all) fail: HTTP 429 with Retry-After when
        status=429 (error `ratelimited`), else `ok: false` with `error`."""
        if status == 429 and error is None:
            error = "ratelimited"
            retry_after = retry_after or "1"
        with self._lock:
            self._failures.setdefault(method, []).append(Failure(status, error or "fatal_error", retry_after, times))

    def clear_failures(self) -> None:
        with self._lock:
            self._failures.clear()

    def delay(self, method: str, seconds: float) -> None:
        self._delays[method] = seconds

    # --- reading the state -----------------------------------------------------------------------
    def calls_to(self, method: str) -> list[Call]:
        with self._lock:
            return [c for c in self.calls if c.method == method]

    def methods(self) -> list[str]:
        with self._lock:
            return [c.method for c in self.calls]

    def top_level(self, channel: str) -> list[Message]:
        with self._lock:
            return [m for m in self.messages if m.channel == channel and not m.thread_ts]

    def replies(self, channel: str, root: str) -> list[Message]:
        with self._lock:
            return [m for m in self.messages if m.channel == channel and m.thread_ts == root]

    def message(self, channel: str, ts: str) -> Message | None:
        with self._lock:
            return next((m for m in self.messages if m.channel == channel and m.ts == ts), None)

    def all_text(self) -> str:
        """Everything the bot made visible (messages, ephemerals, response_url posts, views)."""
        with self._lock:
            parts = [json.dumps(m.as_api(), ensure_ascii=False) for m in self.messages]
            parts += [json.dumps(e, ensure_ascii=False) for e in self.ephemerals + self.webhook_posts + self.views]
        return "\n".join(parts)

    # --- internals -------------------------------------------------------------------------------
    def _next_ts(self) -> str:
        return f"{self._base}.{next(self._ts):06d}"

    def _record(self, method: str, params: dict, headers: dict) -> None:
        with self._lock:
            self.calls.append(Call(method, params, headers, time.monotonic()))

    def _take_failure(self, method: str) -> Failure | None:
        with self._lock:
            queue = self._failures.get(method) or []
            if not queue:
                return None
            failure = queue[0]
            if failure.times is not None:
                failure.times -= 1
                if failure.times <= 0:
                    queue.pop(0)
            return failure

    def _answer(self, method: str, p: dict) -> dict:
        """Slack's answer to one authenticated call."""
        handler = getattr(self, "_m_" + method.replace(".", "_"), None)
        if handler is None:
            return {"ok": False, "error": "unknown_method"}
        with self._lock:
            return handler(p)

    # Each _m_* runs under the lock and returns Slack's JSON.
    def _m_auth_test(self, p: dict) -> dict:
        team = self.teams.get(p.get("__workspace") or "")
        if team is not None:  # an installed workspace's token
            return {
                "ok": True,
                "url": "https://fake.slack.com/",
                "team": team["name"],
                "user": "digestbot",
                "team_id": team["team_id"] or team["enterprise_id"],
                "enterprise_id": team["enterprise_id"],
                "user_id": team["bot_user_id"],
                "bot_id": team["bot_id"],
                "is_enterprise_install": team["org_wide"],
            }
        return {
            "ok": True,
            "url": "https://fake.slack.com/",
            "team": "Fake",
            "user": "digestbot",
            "team_id": self.team_id,
            "user_id": self.bot_user_id,
            "bot_id": self.bot_id,
            "is_enterprise_install": False,
        }

    def _m_apps_connections_open(self, p: dict) -> dict:
        if not self.socket_url:
            return {"ok": False, "error": "socket_mode_not_available"}
        return {"ok": True, "url": self.socket_url}

    def _joined(self, channel: str | None) -> bool:
        return bool(channel) and channel not in self.not_joined and not str(channel).startswith("CNOTIN")

    def _m_chat_postMessage(self, p: dict) -> dict:
        channel = p.get("channel")
        if not channel:
            return {"ok": False, "error": "channel_not_found"}
        if not self._joined(channel):
            return {"ok": False, "error": "not_in_channel"}
        problem = self._check_message(p)
        if problem:
            return problem
        msg = Message(
            channel=channel,
            ts=self._next_ts(),
            text=p.get("text") or "",
            blocks=p.get("blocks") or [],
            thread_ts=p.get("thread_ts") or None,
            metadata=p.get("metadata"),
            user=self.bot_user_id,
            bot_id=self.bot_id,
            unfurl_links=p.get("unfurl_links"),
        )
        self.messages.append(msg)
        return {"ok": True, "channel": channel, "ts": msg.ts, "message": msg.as_api()}

    def _m_chat_update(self, p: dict) -> dict:
        if not self._joined(p.get("channel")):
            return {"ok": False, "error": "not_in_channel"}
        msg = self.message(p.get("channel"), p.get("ts"))
        if msg is None:
            return {"ok": False, "error": "message_not_found"}
        problem = self._check_message(p)
        if problem:
            return problem
        msg.text = p.get("text") or ""
        if "blocks" in p:
            msg.blocks = p.get("blocks") or []
        msg.edits += 1
        return {"ok": True, "channel": msg.channel, "ts": msg.ts, "text": msg.text, "message": msg.as_api()}

    def _m_chat_postEphemeral(self, p: dict) -> dict:
        if not self._joined(p.get("channel")):
            return {"ok": False, "error": "channel_not_found"}
        problem = self._check_message(p)
        if problem:
            return problem
        ts = self._next_ts()
        self.ephemerals.append(
            {
                "channel": p.get("channel"),
                "user": p.get("user"),
                "text": p.get("text") or "",
                "blocks": p.get("blocks") or [],
                "thread_ts": p.get("thread_ts"),
                "ts": ts,
            }
        )
        return {"ok": True, "message_ts": ts}

    def _m_chat_startStream(self, p: dict) -> dict:
        channel, thread = p.get("channel"), p.get("thread_ts")
        if not channel or not thread:
            return {"ok": False, "error": "invalid_arguments"}
        if not self._joined(channel):
            return {"ok": False, "error": "not_in_channel"}
        if not str(channel).startswith("D") and not (p.get("recipient_team_id") and p.get("recipient_user_id")):
            # "Required when streaming to channels" (chat.startStream's documentation; the error code
            # Slack answers is not documented: this one is Slack's generic refusal)
            return {"ok": False, "error": "invalid_arguments"}
        if len(_chunk_text(p)) > STREAM_TEXT_LIMIT:
            return {"ok": False, "error": "msg_too_long"}
        msg = Message(
            channel=channel,
            ts=self._next_ts(),
            text=_chunk_text(p),
            thread_ts=thread,
            user=self.bot_user_id,
            bot_id=self.bot_id,
            streaming=True,
            streamed=True,
        )
        self.messages.append(msg)
        return {"ok": True, "channel": channel, "ts": msg.ts}

    def _m_chat_appendStream(self, p: dict) -> dict:
        msg = self.message(p.get("channel"), p.get("ts"))
        if msg is None or not msg.streaming:
            return {"ok": False, "error": "message_not_in_streaming_state"}
        if len(_chunk_text(p)) > STREAM_TEXT_LIMIT:
            return {"ok": False, "error": "msg_too_long"}
        msg.text += _chunk_text(p)
        return {"ok": True, "channel": msg.channel, "ts": msg.ts}

    def _m_chat_stopStream(self, p: dict) -> dict:
        msg = self.message(p.get("channel"), p.get("ts"))
        if msg is None or not msg.streaming:
            return {"ok": False, "error": "message_not_in_streaming_state"}
        msg.text += _chunk_text(p)
        if p.get("blocks"):
            msg.blocks = p["blocks"]
        msg.streaming = False
        return {"ok": True, "channel": msg.channel, "ts": msg.ts, "message": msg.as_api()}

    def _m_views_open(self, p: dict) -> dict:
        if not p.get("trigger_id"):
            return {"ok": False, "error": "invalid_trigger_id"}
        view = p.get("view") or {}
        problem = check_blocks(view.get("blocks") or [])
        if problem:
            return {"ok": False, "error": "invalid_arguments", "response_metadata": {"messages": problem}}
        view_id = f"V{len(self.views) + 1:08d}"
        self.views.append({"trigger_id": p["trigger_id"], "view": view, "id": view_id})
        return {"ok": True, "view": {"id": view_id, **view}}

    def _m_files_getUploadURLExternal(self, p: dict) -> dict:
        file_id = f"F{len(self.uploads) + 1:08d}"
        self.uploads[file_id] = {"filename": p.get("filename"), "length": int(p.get("length") or 0), "content": None}
        return {"ok": True, "upload_url": f"{self.origin}/upload/{file_id}", "file_id": file_id}

    def _m_files_completeUploadExternal(self, p: dict) -> dict:
        files = p.get("files") or []
        out = []
        for f in files:
            record = self.uploads.get(f.get("id"))
            if record is None or record["content"] is None:
                return {"ok": False, "error": "file_not_found"}
            record.update(title=f.get("title"), channel=p.get("channel_id"), thread_ts=p.get("thread_ts"))
            out.append({"id": f["id"], "name": record["filename"], "title": f.get("title")})
        return {"ok": True, "files": out}

    def _m_conversations_open(self, p: dict) -> dict:
        """The bot's IM with one user (`users`): always the same id for the same user."""
        users = [u for u in str(p.get("users") or "").split(",") if u]
        if not users and not p.get("channel"):
            return {"ok": False, "error": "users_list_not_supplied"}
        if len(users) > 1:
            return {"ok": True, "channel": {"id": "G" + "".join(users)[:10], "is_mpim": True}}
        return {"ok": True, "channel": {"id": "D" + (users[0] if users else str(p["channel"])[1:]), "is_im": True}}

    def _m_conversations_history(self, p: dict) -> dict:
        """Newest first, a page at a time: `limit` (≤ page_size) per page, then `cursor`."""
        channel = p.get("channel")
        found = [m.as_api(bool(p.get("include_all_metadata"))) for m in reversed(self.top_level(channel))]
        return self._page(found, p, default_limit=100)

    def _m_conversations_replies(self, p: dict) -> dict:
        """The parent first, then its replies oldest first, paged like history."""
        channel, root = p.get("channel"), p.get("ts")
        parent = self.message(channel, root)
        if parent is None:
            return {"ok": False, "error": "thread_not_found"}
        with_meta = bool(p.get("include_all_metadata"))
        found = [parent.as_api(with_meta)] + [m.as_api(with_meta) for m in self.replies(channel, root)]
        return self._page(found, p, default_limit=1000)

    def _page(self, found: list[dict], p: dict, *, default_limit: int) -> dict:
        try:
            limit = int(p.get("limit") or default_limit)
            start = int(p["cursor"].removeprefix("off:")) if p.get("cursor") else 0
        except (TypeError, ValueError):
            return {"ok": False, "error": "invalid_cursor"}
        size = max(1, min(limit, self.page_size))
        page = found[start : start + size]
        more = start + size < len(found)
        return {
            "ok": True,
            "messages": page,
            "has_more": more,
            "response_metadata": {"next_cursor": f"off:{start + size}" if more else ""},
        }

    def _check_message(self, p: dict) -> dict | None:
        blocks = p.get("blocks") or []
        if not isinstance(blocks, list):
            return {"ok": False, "error": "invalid_blocks_format"}
        problems = check_blocks(blocks)
        if problems:
            self.block_errors.append({"params": p, "problems": problems})
            return {"ok": False, "error": "invalid_blocks", "errors": problems}
        if sum(len(json.dumps(b, ensure_ascii=False).encode("utf-8")) for b in blocks) > CUMULATIVE_LIMIT:
            self.block_errors.append({"params": p, "problems": ["cumulative size"]})
            return {"ok": False, "error": "msg_blocks_too_long"}
        if len(p.get("text") or "") > TEXT_LIMIT:
            return {"ok": False, "error": "msg_too_long"}
        if not blocks and not (p.get("text") or "").strip():
            return {"ok": False, "error": "no_text"}
        return None


def _chunk_text(p: dict) -> str:
    text = p.get("markdown_text") or ""
    for chunk in p.get("chunks") or []:
        if isinstance(chunk, dict) and chunk.get("type") == "markdown_text":
            text += chunk.get("text") or ""
    return text


# --- Block Kit validation (the limits Slack enforces) ---------------------------------------------


def _text_len(obj: Any) -> int:
    return len(obj.get("text", "")) if isinstance(obj, dict) else 0


def _action_ids(node: Any) -> list[str]:
    """Every interactive element's action_id in a message or view, in order."""
    found: list[str] = []
    if isinstance(node, dict):
        if isinstance(node.get("action_id"), str):
            found.append(node["action_id"])
        for value in node.values():
            found += _action_ids(value)
    elif isinstance(node, list):
        for item in node:
            found += _action_ids(item)
    return found


def check_blocks(blocks: list) -> list[str]:
    problems: list[str] = []
    if len(blocks) > 50:
        problems.append(f"{len(blocks)} blocks (max 50)")
    action_ids = _action_ids(blocks)
    duplicates = sorted({a for a in action_ids if action_ids.count(a) > 1})
    if duplicates:  # Slack refuses the whole message or view (invalid_blocks)
        problems.append(f"duplicate action_id {', '.join(duplicates)}")
    ids: set[str] = set()
    for i, b in enumerate(blocks):
        kind = b.get("type")
        bid = b.get("block_id")
        if bid is not None:
            if len(bid) > 255:
                problems.append(f"block {i}: block_id longer than 255")
            if bid in ids:
                problems.append(f"block {i}: duplicate block_id")
            ids.add(bid)
        if kind == "header":
            text = b.get("text") or {}
            if text.get("type") != "plain_text" or not 0 < len(text.get("text", "")) <= 150:
                problems.append(f"block {i}: header text must be plain_text of 1-150 characters")
        elif kind == "section":
            if "text" in b and not 0 < _text_len(b["text"]) <= 3000:
                problems.append(f"block {i}: section text must be 1-3000 characters ({_text_len(b['text'])})")
            fields = b.get("fields") or []
            if len(fields) > 10 or any(_text_len(f) > 2000 for f in fields):
                problems.append(f"block {i}: too many or too long fields")
            if "text" not in b and not fields:
                problems.append(f"block {i}: section needs text or fields")
        elif kind == "context":
            elements = b.get("elements") or []
            if not 0 < len(elements) <= 10:
                problems.append(f"block {i}: context needs 1-10 elements")
            if any(_text_len(e) > 3000 for e in elements):
                problems.append(f"block {i}: context element longer than 3000")
        elif kind == "actions":
            elements = b.get("elements") or []
            if not 0 < len(elements) <= 25:
                problems.append(f"block {i}: actions need 1-25 elements")
            for e in elements:
                problems += [f"block {i}: {p}" for p in _check_element(e)]
        elif kind == "input":
            if _text_len(b.get("label")) > 2000:
                problems.append(f"block {i}: input label too long")
        elif kind in ("divider", "markdown", "rich_text", "image"):
            if kind == "markdown" and len(b.get("text", "")) > 12000:
                problems.append(f"block {i}: markdown block longer than 12000")
        else:
            problems.append(f"block {i}: unknown block type {kind!r}")
    return problems


def _check_element(e: dict) -> list[str]:
    problems = []
    if len(e.get("action_id", "")) > 255:
        problems.append("action_id longer than 255")
    if e.get("type") == "button":
        if not 0 < _text_len(e.get("text")) <= 75:
            problems.append(f"button text must be 1-75 characters ({_text_len(e.get('text'))})")
        if len(e.get("value", "")) > 2000:
            problems.append("button value longer than 2000")
    elif e.get("type") in ("static_select", "overflow"):
        options = list(e.get("options") or [])
        for group in e.get("option_groups") or []:
            if _text_len(group.get("label")) > 75:
                problems.append("option group label longer than 75")
            options += group.get("options") or []
        limit = 5 if e["type"] == "overflow" else 100
        if not 0 < len(options) <= limit:
            problems.append(f"{e['type']} needs 1-{limit} options")
        for o in options:
            if not 0 < _text_len(o.get("text")) <= 75:
                problems.append(f"option text must be 1-75 characters ({_text_len(o.get('text'))})")
            if len(o.get("value", "")) > 150:
                problems.append("option value longer than 150")
    return problems


# --- the HTTP side ------------------------------------------------------------------------------------


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address) -> None:
        import sys

        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    fake: FakeSlack
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        path = urlparse(self.path).path
        if path == "/oauth/v2/authorize":
            status, extra = self.fake._authorize_page(
                {k: v[-1] for k, v in parse_qs(urlparse(self.path).query).items()}
            )
            return self._send(status, b"" if status == 302 else b"invalid request", "text/plain", extra)
        if path.startswith("/response/"):
            return self._webhook(path, raw)
        if path.startswith("/upload/"):
            return self._upload(path, raw)
        if not path.startswith("/api/"):
            return self._send(404, b"not found", "text/plain")
        method = path[len("/api/") :]
        params = _parse_params(self.headers.get("Content-Type") or "", raw, urlparse(self.path).query)
        headers = {k.lower(): v for k, v in self.headers.items()}
        fake = self.fake
        fake._record(method, params, headers)
        if fake.latency:
            time.sleep(fake.latency)
        if method == "oauth.v2.access":  # the app's credentials, not a token
            return self._json(200, fake._oauth_access(headers, params))
        if not self._authorised(headers, params, method):
            return self._json(
                200,
                {
                    "ok": False,
                    "error": "not_authed"
                    if "authorization" not in headers and "token" not in params
                    else "invalid_auth",
                },
            )
        owner = fake.tokens.get(_bearer(headers, params))
        channel = params.get("channel")
        if method != "apps.connections.open" and channel and fake.channel_team.get(channel, owner) != owner:
            return self._json(200, {"ok": False, "error": "channel_not_found"})  # another workspace's
        failure = fake._take_failure(method)
        if failure is not None:
            extra = {"Retry-After": failure.retry_after} if failure.retry_after else {}
            return self._json(failure.status, {"ok": False, "error": failure.error}, extra)
        answer = fake._answer(method, {**params, "__workspace": owner} if method == "auth.test" else params)
        delay = fake._delays.get(method, 0.0)
        if delay:
            time.sleep(delay)
        self._json(200, answer)

    do_GET = do_POST

    def _authorised(self, headers: dict, params: dict, method: str) -> bool:
        token = _bearer(headers, params)
        # apps.connections.open takes the app-level token (xapp-), everything else a live bot token
        if method == "apps.connections.open":
            return token == self.fake.app_token
        with self.fake._lock:
            return token in self.fake.tokens

    def _webhook(self, path: str, raw: bytes) -> None:
        """A response_url: answers `ok` in plain text; scripted failures (method "response_url")
        answer their status with the error as the body, as Slack's webhooks do."""
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            return self._send(400, b"invalid_payload", "text/plain")
        self.fake._record("response_url", body, {k.lower(): v for k, v in self.headers.items()})
        failure = self.fake._take_failure("response_url")
        if failure is not None:
            extra = {"Retry-After": failure.retry_after} if failure.retry_after else {}
            return self._send(failure.status, (failure.error or "").encode(), "text/plain", extra)
        with self.fake._lock:
            self.fake.webhook_posts.append({"name": path.rsplit("/", 1)[-1], **body})
        self._send(200, b"ok", "text/plain")

    def _upload(self, path: str, raw: bytes) -> None:
        file_id = path.rsplit("/", 1)[-1]
        with self.fake._lock:
            record = self.fake.uploads.get(file_id)
            if record is None:
                return self._send(404, b"not found", "text/plain")
            record["content"] = raw
        self._send(200, f"OK - {len(raw)}".encode(), "text/plain")

    def _json(self, status: int, payload: dict, headers: dict | None = None) -> None:
        self._send(status, json.dumps(payload, ensure_ascii=False).encode(), "application/json; charset=utf-8", headers)

    def _send(self, status: int, body: bytes, content_type: str, headers: dict | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)
        self.wfile.flush()


def _bearer(headers: dict, params: dict) -> str:
    given = headers.get("authorization", "")
    return given[len("Bearer ") :] if given.startswith("Bearer ") else params.get("token", "")


def _parse_params(content_type: str, raw: bytes, query: str) -> dict:
    """slack_sdk sends JSON for message methods and form bodies for most others; nested values
    (blocks, metadata, files…) arrive JSON-encoded inside forms."""
    params: dict = {k: v[-1] for k, v in parse_qs(query).items()}
    if "application/json" in content_type:
        params.update(json.loads(raw or b"{}"))
    elif raw:
        params.update({k: v[-1] for k, v in parse_qs(raw.decode("utf-8"), keep_blank_values=True).items()})
    for key in JSON_FIELDS:
        if isinstance(params.get(key), str) and params[key][:1] in "[{":
            try:
                params[key] = json.loads(params[key])
            except ValueError:
                pass
    for key in ("include_all_metadata", "unfurl_links", "unfurl_media"):
        if isinstance(params.get(key), str):
            params[key] = params[key].lower() in ("1", "true")
    return params


# --- signed requests into the bot's endpoint -----------------------------------------------------------


class SlackSender:
    """Sends what Slack sends to `/slack/events`, signed with the app's signing secret."""

    def __init__(self, endpoint: str, signing_secret: str, *, team_id: str = "T0001", api_app_id: str = "A0001"):
        self.endpoint = endpoint
        self.signing_secret = signing_secret
        self.team_id = team_id
        self.api_app_id = api_app_id
        self._ids = itertools.count(1)
        self._session = None

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None

    def sign(self, body: str, timestamp: int | None = None, secret: str | None = None) -> dict[str, str]:
        from slack_sdk.signature import SignatureVerifier

        ts = str(int(time.time()) if timestamp is None else timestamp)
        signature = SignatureVerifier(secret or self.signing_secret).generate_signature(timestamp=ts, body=body)
        return {"X-Slack-Request-Timestamp": ts, "X-Slack-Signature": signature}

    async def post(
        self,
        body: str,
        content_type: str,
        *,
        timestamp: int | None = None,
        secret: str | None = None,
        signed: bool = True,
        headers: dict | None = None,
    ) -> tuple[int, str]:
        import aiohttp

        if self._session is None:
            self._session = aiohttp.ClientSession()
        all_headers = {
            "Content-Type": content_type,
            **(self.sign(body, timestamp, secret) if signed else {}),
            **(headers or {}),
        }
        async with self._session.post(self.endpoint, data=body.encode("utf-8"), headers=all_headers) as resp:
            return resp.status, await resp.text()

    # --- what Slack sends ------------------------------------------------------------------------
    def slash_body(
        self,
        text: str,
        *,
        channel: str = "C0001",
        user: str = "U0001",
        command: str = "/digest",
        response_url: str = "https://hooks.invalid/commands/1",
        trigger_id: str | None = None,
    ) -> str:
        return urlencode(
            {
                "token": "legacy-verification-token",
                "team_id": self.team_id,
                "team_domain": "fake",
                "channel_id": channel,
                "channel_name": "general",
                "user_id": user,
                "user_name": "ada",
                "command": command,
                "text": text,
                "api_app_id": self.api_app_id,
                "is_enterprise_install": "false",
                "response_url": response_url,
                "trigger_id": trigger_id or f"trigger-{next(self._ids)}",
            }
        )

    async def slash(self, text: str, **kwargs) -> tuple[int, str]:
        signing = {k: kwargs.pop(k) for k in ("timestamp", "secret", "signed") if k in kwargs}
        return await self.post(self.slash_body(text, **kwargs), "application/x-www-form-urlencoded", **signing)

    def event_body(self, event: dict, *, event_id: str | None = None, bot_user_id: str = "UBOT") -> str:
        event = {"event_ts": event.get("ts", f"{time.time():.6f}"), **event}
        return json.dumps(
            {
                "token": "legacy-verification-token",
                "team_id": self.team_id,
                "api_app_id": self.api_app_id,
                "event": event,
                "type": "event_callback",
                "event_id": event_id or f"Ev{next(self._ids):08d}",
                "event_time": int(time.time()),
                "authorizations": [
                    {
                        "enterprise_id": None,
                        "team_id": self.team_id,
                        "user_id": bot_user_id,
                        "is_bot": True,
                        "is_enterprise_install": False,
                    }
                ],
                "is_ext_shared_channel": False,
                "event_context": "4-fake",
            }
        )

    async def event(
        self,
        event: dict,
        *,
        event_id: str | None = None,
        retry_num: int | None = None,
        retry_reason: str = "http_timeout",
        **signing,
    ) -> tuple[int, str]:
        headers = {"X-Slack-Retry-Num": str(retry_num), "X-Slack-Retry-Reason": retry_reason} if retry_num else {}
        return await self.post(
            self.event_body(event, event_id=event_id), "application/json", headers=headers, **signing
        )

    def message_event(
        self,
        text: str,
        *,
        channel: str = "C0001",
        user: str = "U0001",
        ts: str | None = None,
        thread_ts: str | None = None,
        kind: str = "message",
        channel_type: str = "channel",
        **extra,
    ) -> dict:
        event = {
            "type": kind,
            "user": user,
            "text": text,
            "ts": ts or f"{time.time():.6f}",
            "channel": channel,
            "team": self.team_id,
        }
        if kind == "message":
            event["channel_type"] = channel_type
        if thread_ts:
            event["thread_ts"] = thread_ts
        event.update(extra)
        return event

    def _interactive_body(self, payload: dict) -> str:
        return urlencode({"payload": json.dumps(payload)})

    def block_action_body(
        self,
        action_id: str,
        *,
        value: str | None = None,
        selected: str | None = None,
        block_id: str = "b1",
        channel: str = "C0001",
        user: str = "U0001",
        message_ts: str = "1.000001",
        thread_ts: str | None = None,
        response_url: str = "https://hooks.invalid/actions/1",
        trigger_id: str | None = None,
    ) -> str:
        action: dict = {"action_id": action_id, "block_id": block_id, "action_ts": f"{time.time():.6f}"}
        if selected is not None:
            action.update(
                type="static_select", selected_option={"text": {"type": "plain_text", "text": "x"}, "value": selected}
            )
        else:
            action.update(type="button", value=value or "", text={"type": "plain_text", "text": "x"})
        container = {"type": "message", "message_ts": message_ts, "channel_id": channel, "is_ephemeral": False}
        message = {"type": "message", "ts": message_ts, "user": "UBOT", "bot_id": "BBOT", "text": "…"}
        if thread_ts:
            container["thread_ts"] = thread_ts
            message["thread_ts"] = thread_ts
        payload = {
            "type": "block_actions",
            "user": {"id": user, "username": "ada", "team_id": self.team_id},
            "api_app_id": self.api_app_id,
            "token": "legacy-verification-token",
            "container": container,
            "trigger_id": trigger_id or f"trigger-{next(self._ids)}",
            "team": {"id": self.team_id},
            "enterprise": None,
            "is_enterprise_install": False,
            "channel": {"id": channel, "name": "general"},
            "message": message,
            "response_url": response_url,
            "actions": [action],
        }
        return self._interactive_body(payload)

    async def block_action(self, action_id: str, **kwargs) -> tuple[int, str]:
        signing = {k: kwargs.pop(k) for k in ("timestamp", "secret", "signed") if k in kwargs}
        return await self.post(
            self.block_action_body(action_id, **kwargs), "application/x-www-form-urlencoded", **signing
        )

    async def view_submission(self, view: dict, values: dict, *, user: str = "U0001", **signing) -> tuple[int, str]:
        """Submit a modal the bot opened (`view` as sent to views.open) with `values`:
        {block_id: {action_id: text}}."""
        return await self.post(
            self.view_submission_body(view, values, user=user), "application/x-www-form-urlencoded", **signing
        )

    def view_submission_body(self, view: dict, values: dict, *, user: str = "U0001") -> str:
        state = {
            "values": {
                b: {a: {"type": "plain_text_input", "value": v} for a, v in acts.items()} for b, acts in values.items()
            }
        }
        payload = {
            "type": "view_submission",
            "team": {"id": self.team_id, "domain": "fake"},
            "user": {"id": user, "username": "ada", "team_id": self.team_id},
            "api_app_id": self.api_app_id,
            "token": "legacy-verification-token",
            "trigger_id": f"trigger-{next(self._ids)}",
            "view": {
                "id": "V00000001",
                "team_id": self.team_id,
                "type": "modal",
                "callback_id": view.get("callback_id"),
                "private_metadata": view.get("private_metadata", ""),
                "blocks": view.get("blocks", []),
                "state": state,
                "hash": "h1",
                "title": view.get("title"),
                "app_id": self.api_app_id,
            },
            "response_urls": [],
            "is_enterprise_install": False,
            "enterprise": None,
        }
        return self._interactive_body(payload)


# --- Socket Mode ------------------------------------------------------------------------------------


class FakeSocketMode:
    """Slack's Socket Mode side: a WebSocket endpoint (aiohttp, in the test's event loop) that
    greets with `hello`, pushes envelopes (slash_commands, events_api, interactive) and records
    the acknowledgements the app sends back. Point FakeSlack.socket_url at `url`."""

    def __init__(self) -> None:
        self.acks: list[dict] = []
        self.url = ""
        self._ws = None
        self._runner = None
        self._ids = itertools.count(1)
        self.connected = None
        self.disconnected = None  # set when the app closes its connection

    async def start(self) -> FakeSocketMode:
        import asyncio

        from aiohttp import web

        self.connected = asyncio.Event()
        self.disconnected = asyncio.Event()
        app = web.Application()
        app.router.add_get("/link", self._handle)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]
        self.url = f"ws://127.0.0.1:{port}/link"
        return self

    async def stop(self) -> None:
        if self._ws is not None:
            await self._ws.close()
        if self._runner is not None:
            await self._runner.cleanup()

    async def _handle(self, request):
        from aiohttp import WSMsgType, web

        ws = web.WebSocketResponse()
        await ws.prepare(request)
        self._ws = ws
        await ws.send_json(
            {
                "type": "hello",
                "num_connections": 1,
                "debug_info": {"host": "fake", "approximate_connection_time": 3600},
                "connection_info": {"app_id": "A0001"},
            }
        )
        self.connected.set()
        async for message in ws:
            if message.type == WSMsgType.TEXT:
                self.acks.append(json.loads(message.data))
        self.disconnected.set()
        return ws

    async def push(
        self, kind: str, payload: dict, *, accepts_response_payload: bool = True, retry_attempt: int = 0
    ) -> str:
        """Send one envelope; returns its envelope_id (the app must ack it)."""
        import asyncio

        await asyncio.wait_for(self.connected.wait(), 10)
        envelope_id = f"env-{next(self._ids)}"
        await self._ws.send_json(
            {
                "envelope_id": envelope_id,
                "type": kind,
                "payload": payload,
                "accepts_response_payload": accepts_response_payload,
                "retry_attempt": retry_attempt,
                "retry_reason": "",
            }
        )
        return envelope_id

    async def ack_for(self, envelope_id: str, timeout: float = 10.0) -> dict:
        import asyncio

        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for ack in self.acks:
                if ack.get("envelope_id") == envelope_id:
                    return ack
            await asyncio.sleep(0.01)
        raise AssertionError(f"no acknowledgement for {envelope_id}")
