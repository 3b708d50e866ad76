"""Receiving from Slack: Socket Mode when SLACK_APP_TOKEN is set, else HTTP at `POST /slack/events`
(Bolt checks the signature and a 5-minute timestamp window: anything else is a 401 and causes
nothing). Every listener acknowledges at once and hands the work to `chat.spawn`; events are
deduplicated on `event_id` and on (channel, ts), so Slack's retries and the app_mention + message
pair that one mention produces give one answer.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import traceback
from collections.abc import Callable

from aiohttp import web

from bot.core import tenants
from bot.core.chat_platform import Conversation, Notice
from bot.core.models import BotError, UsageError
from bot.i18n import localize, phrase, text
from bot.render import slack as R
from handlers.slack import api
from handlers.slack.api import SlackError
from handlers.slack.installs import InstallationStore, StateStore, Tokens, Workspaces, tenant_of
from handlers.slack.pages import InstallPages, authorize_url
from handlers.slack.platform import SlackPlatform
from handlers.slack.poster import Pacing
from settings import Settings

log = logging.getLogger(__name__)

# Our own code: a failure that passed through it is a bug worth a traceback; one raised only
# inside Bolt while it read a request is a malformed request.
_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OWN_DIRS = tuple(os.path.join(_ROOT, package) + os.sep for package in ("handlers", "bot"))
DEDUPE_TTL = 3600  # > Slack's 5-minute signature window: a replayed request is always caught
DROPPED_SUBTYPES = {
    "message_changed",
    "message_deleted",
    "bot_message",
    "channel_join",
    "channel_leave",
    "channel_topic",
    "channel_purpose",
    "channel_name",
    "pinned_item",
    "unpinned_item",
    "ekm_access_denied",
    "me_message",
    "message_replied",
    "thread_broadcast_deleted",
    "assistant_app_thread",
    "group_join",
    "group_leave",
    "tombstone",
}


class SlackAdapter:
    def __init__(self, settings: Settings, chat, *, receive: bool, pacing: Pacing | None = None):
        self.settings = settings
        self.chat = chat
        self.receive = receive
        self.socket_mode = settings.slack_app_token is not None
        secret = settings.slack_signing_secret.get_secret_value() if settings.slack_signing_secret else ""
        if receive and not self.socket_mode and not secret:
            raise UsageError(phrase("ops.slack_http_secret"))
        # Installed into many workspaces (OAuth): each workspace's token from the installation
        # store, ids qualified with their workspace. Else the one SLACK_BOT_TOKEN, ids bare.
        self.oauth = settings.slack_oauth
        if bool(settings.slack_client_id) != bool(settings.slack_client_secret):
            field = "SLACK_CLIENT_SECRET" if settings.slack_client_id else "SLACK_CLIENT_ID"
            raise UsageError(phrase("ops.config_error", field=field, detail=phrase("slack_install.needs_both")))
        if self.oauth and settings.slack_bot_token is not None:
            log.warning("SLACK_BOT_TOKEN is ignored: the app is installed through OAuth (SLACK_CLIENT_ID)")
        self.installs: InstallationStore | None = None
        self.tokens: Tokens | None = None
        workspaces = None
        if self.oauth:
            assert settings.slack_client_id and settings.slack_client_secret  # slack_oauth says both are set
            self.client = api.make_client(None, settings.slack_api_url)  # tokenless: OAuth calls only
            self.installs = InstallationStore(chat.store, settings.slack_client_id)
            self.tokens = Tokens(
                self.installs, self.client, settings.slack_client_id, settings.slack_client_secret.get_secret_value()
            )
            workspaces = Workspaces(self.tokens, settings.slack_api_url)
        else:
            assert settings.slack_bot_token is not None  # built only when Slack is enabled (SLACK_BOT_TOKEN)
            self.client = api.make_client(settings.slack_bot_token.get_secret_value(), settings.slack_api_url)
        self.platform = SlackPlatform(self.client, chat.store, pacing, workspaces)
        self.secret = secret
        self._socket = None
        self.app = None
        if receive:  # the clock only posts: no Bolt app, no listeners
            self.app = self._oauth_app(settings, secret) if self.oauth else api.bolt_app(self.client, secret)
            self._register(self.app)

    def _oauth_app(self, settings: Settings, secret: str) -> api.AsyncApp:
        assert self.installs is not None and self.tokens is not None and settings.slack_client_secret is not None
        base = settings.public_base_url.rstrip("/") if settings.public_base_url else None
        return api.oauth_app(
            self.client,
            secret,
            client_id=self.installs.client_id,
            client_secret=settings.slack_client_secret.get_secret_value(),
            scopes=[s.strip() for s in settings.slack_scopes.split(",") if s.strip()],
            redirect_uri=f"{base}/slack/oauth_redirect" if base else None,
            authorization_url=authorize_url(settings.slack_api_url),
            installation_store=self.installs,
            state_store=StateStore(self.installs.store),
            find=self.tokens.find,
            pages=InstallPages(settings.default_lang),
        )

    # --- lifecycle ----------------------------------------------------------------------------------
    def http_routes(self) -> list:
        if not self.receive:
            return []
        routes = []
        if self.oauth:  # the install pages, in Socket Mode too
            routes += [("GET", "/slack/install", self._install), ("GET", "/slack/oauth_redirect", self._redirect)]
        if not self.socket_mode:
            routes.append(("POST", "/slack/events", self._http))
        return routes

    async def _install(self, request: web.Request) -> web.Response:
        return await self._oauth_page(request, callback=False)

    async def _redirect(self, request: web.Request) -> web.Response:
        return await self._oauth_page(request, callback=True)

    async def _oauth_page(self, request: web.Request, *, callback: bool) -> web.Response:
        """Bolt's OAuth flow; whatever goes wrong (Slack or Redis unreachable) is a page that
        says so in the person's language, never a traceback."""
        assert self.app is not None
        try:
            return await api.oauth_page(self.app, request, callback=callback)
        except Exception as exc:  # noqa: BLE001 — the browser gets one sentence, the log the kind
            log.warning("Slack install page failed: %s", type(exc).__name__)
            html = InstallPages(self.settings.default_lang).failed("unavailable", request.headers)
            return web.Response(status=503, text=html, content_type="text/html")

    async def start(self) -> None:
        app_token = self.settings.slack_app_token
        if self.app is None or app_token is None:  # self.app: receiving; the app-level token: Socket Mode
            return
        self._socket = await api.connect_socket_mode(self.app, app_token.get_secret_value())
        log.info("Slack Socket Mode connected")

    async def close(self) -> None:
        if self._socket is not None:
            await api.close_socket_mode(self._socket)
            self._socket = None

    async def _http(self, request: web.Request) -> web.Response:
        """Requests Bolt would turn into a 500 and a traceback (a non-numeric timestamp, a signed
        body that is not a JSON object) are refused here with a 4xx and one log line."""
        body = await request.text()
        problem = api.request_problem(body, request.headers, self.secret)
        if problem is not None:
            status, reason = problem
            log.warning("Slack request refused (HTTP %d): %s", status, reason)
            return web.json_response({"ok": False, "error": reason}, status=status)
        assert self.app is not None  # the route exists only when receiving (http_routes)
        try:
            return await api.dispatch_http(self.app, request)
        except Exception as exc:  # noqa: BLE001 — a payload shape Bolt could not handle
            log.warning("Slack request not handled (HTTP 400): %s", type(exc).__name__)
            return web.json_response({"ok": False, "error": "unreadable request"}, status=400)

    # --- listeners ------------------------------------------------------------------------------------
    def _register(self, app: api.AsyncApp) -> None:
        app.error(self._on_bolt_error)
        app.command(re.compile(r"^/"))(self._on_command)
        app.event("app_mention")(self._on_mention)
        app.event("message")(self._on_message)
        app.action(R.ACTION_ASK)(self._on_ask_button)
        app.action(R.ACTION_DETAILS)(self._on_details_button)
        app.action(R.ACTION_CHOOSE_PATTERN)(self._on_choose_button)
        app.action(R.ACTION_LOW)(self._on_low_menu)
        app.action(R.ACTION_LEVEL_PATTERN)(self._on_level_button)
        app.action(R.ACTION_LEVEL_MENU)(self._on_level_menu)
        app.view(R.MODAL_CALLBACK)(self._on_question_form)
        if self.oauth:  # the workspace removed the app, or revoked its bot token: forget it
            app.event("app_uninstalled")(self._on_uninstalled)
            app.event("tokens_revoked")(self._on_tokens_revoked)

    async def _on_bolt_error(self, error: Exception, response=None) -> None:
        """A signed request Bolt could not read (a field of the wrong type, a missing key) is the
        sender's mistake: a 400 and one line. A failure in our own listeners keeps its traceback."""
        frames = [f.f_code.co_filename for f, _ in traceback.walk_tb(error.__traceback__)]
        if any(os.path.abspath(name).startswith(OWN_DIRS) for name in frames):  # noqa: ASYNC240 — string work, no I/O
            log.error("Slack listener failed", exc_info=error)
            return
        log.warning("Slack request not readable (HTTP 400): %s: %s", type(error).__name__, str(error)[:200])
        if response is not None and response.status >= 500:
            response.status = 400

    # --- workspaces ---------------------------------------------------------------------------------
    def _qualifier(self, context) -> Callable[[str], str] | None:
        """How this request's ids become addresses: `T1/C1` in the workspace Bolt's authorize
        verified (installs.Tokens.find: an org-wide install is its enterprise's), never from an id
        inside the payload; bare with one workspace. None: an installed app's request without a
        verified workspace, which is refused."""
        if not self.oauth:
            return lambda local: local
        result = context.get("authorize_result") if context is not None else None
        tenant = result.get("tenant") if result else None
        if not tenant:
            log.warning("Slack request without a verified workspace refused")
            return None
        return lambda local: tenants.qualify(tenant, tenants.local_id(local)) if local else local

    async def _on_uninstalled(self, ack, context) -> None:
        await ack()
        assert self.installs is not None
        tenant = tenant_of(context.enterprise_id, context.team_id, bool(context.is_enterprise_install))
        await self.installs.remove(tenant, "app_uninstalled")

    async def _on_tokens_revoked(self, ack, event: dict, context) -> None:
        """Bot tokens revoked: the bot's installation goes (no user tokens are kept)."""
        await ack()
        assert self.installs is not None
        if (event.get("tokens") or {}).get("bot"):
            tenant = tenant_of(context.enterprise_id, context.team_id, bool(context.is_enterprise_install))
            await self.installs.remove(tenant, "tokens_revoked")

    async def _on_command(self, ack, command: dict, context) -> None:
        await ack()
        q = self._qualifier(context)
        if q is None:
            return
        if not await self._first_request("cmd", command):
            return  # the same signed command again (a replay, or Slack retrying): it ran once
        conv = Conversation(
            "slack",
            q(command.get("channel_id", "")),
            q(command.get("user_id", "")),
            is_dm=str(command.get("channel_id", "")).startswith("D"),
            extra={"response_url": command.get("response_url"), "team_id": command.get("team_id")},
        )
        await self.chat.submit(
            "command", conv, text=command.get("text") or "", prefix=command.get("command") or "/digest"
        )

    async def _on_mention(self, body: dict, event: dict, context) -> None:
        await self._on_user_message(body, event, context, mention_event=True)

    async def _on_message(self, body: dict, event: dict, context) -> None:
        await self._on_user_message(body, event, context, mention_event=False)

    async def _on_user_message(self, body: dict, event: dict, context, *, mention_event: bool) -> None:
        if event.get("subtype") in DROPPED_SUBTYPES or event.get("bot_id") or event.get("bot_profile"):
            return
        bot_user = context.get("bot_user_id") or ""
        user, channel, ts = event.get("user") or "", event.get("channel") or "", event.get("ts") or ""
        if not user or not channel or (bot_user and user == bot_user):
            return
        q = self._qualifier(context)
        if q is None:
            return
        text = event.get("text") or ""
        mentioned = mention_event or (bool(bot_user) and f"<@{bot_user}" in text)
        is_dm = channel.startswith("D")  # a DM's id starts with D (as for commands and clicks)
        thread = event.get("thread_ts") if event.get("thread_ts") not in (None, "", ts) else None
        # A top-level channel message that does not mention the bot is not addressed to it.
        if not (mentioned or is_dm or thread):
            return
        if not await self._first(body.get("event_id")) or not await self._first(f"msg:{q(channel)}:{ts}"):
            return
        question = _strip_mention(text, bot_user)
        conv = Conversation(
            "slack",
            q(channel),
            q(user),
            thread=thread,
            is_dm=is_dm,
            extra={"team_id": body.get("team_id") or event.get("team"), "ts": ts},
        )
        await self.chat.submit("message", conv, text=question, mentioned=mentioned)

    async def _first(self, key: str | None) -> bool:
        """Event dedupe (Slack re-sends events it thinks we missed)."""
        return await self.chat.first_time("slack", key or "", ttl=DEDUPE_TTL)

    async def _first_request(self, kind: str, payload: dict) -> bool:
        """Commands and clicks carry no event id, but each one is unique (its trigger_id, its
        action_ts): an identical payload is the same request again."""
        digest = hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode()).hexdigest()
        return await self._first(f"{kind}:{digest}")

    # --- interactivity ---------------------------------------------------------------------------------
    def _action_conv(self, body: dict, value: dict | None, q: Callable[[str], str]) -> Conversation:
        container = body.get("container") or {}
        message = body.get("message") or {}
        channel = (body.get("channel") or {}).get("id") or container.get("channel_id") or ""
        thread = (
            (value or {}).get("thread")
            or container.get("thread_ts")
            or message.get("thread_ts")
            or container.get("message_ts")
            or message.get("ts")
        )
        user = body.get("user") or {}
        return Conversation(
            "slack",
            q(channel),
            q(user.get("id", "")),
            thread=thread,
            is_dm=channel.startswith("D"),
            extra={
                "response_url": body.get("response_url"),
                "team_id": (body.get("team") or {}).get("id") or user.get("team_id"),
            },
        )

    def _value_for(self, value: dict) -> dict:
        """Button values name the repository as the digest showed it; the core prefers the one
        its thread remembers. With neither (an old thread, a value that had to drop the name),
        the default repository is the only one a chat user can reach without naming it."""
        return value if value.get("repo") else {**value, "repo": self.settings.default_repo}

    async def _on_ask_button(self, ack, body: dict, action: dict, context) -> None:
        await ack()
        q = self._qualifier(context)
        if q is None or not await self._first_request("act", body):
            return
        value = R.parse_value(action.get("value"))
        self.chat.spawn(self._open_question_form(body, value, q))

    async def _on_details_button(self, ack, body: dict, action: dict, context) -> None:
        await ack()
        q = self._qualifier(context)
        if q is None or not await self._first_request("act", body):
            return
        value = R.parse_value(action.get("value"))
        conv = self._action_conv(body, value, q)
        await self._details(conv, value)

    async def _details(self, conv: Conversation, value: dict) -> None:
        await self._submit_action(conv, "details", self._value_for(value))

    async def _on_choose_button(self, ack, body: dict, action: dict, context) -> None:
        await ack()
        q = self._qualifier(context)
        if q is None or not await self._first_request("act", body):
            return
        value = R.parse_value(action.get("value"))
        conv = self._action_conv(body, value, q)
        await self._submit_action(conv, "choose", value)

    async def _on_low_menu(self, ack, body: dict, action: dict, context) -> None:
        await ack()
        q = self._qualifier(context)
        if q is None or not await self._first_request("act", body):
            return
        choice = (action.get("selected_option") or {}).get("value") or ""
        verb, _, sha = choice.partition(":")
        value = {**R.parse_value(action.get("block_id")), "sha": sha}
        if verb == "ask":
            self.chat.spawn(self._open_question_form(body, value, q))
        elif verb == "details":
            await self._details(self._action_conv(body, value, q), value)

    async def _on_level_button(self, ack, body: dict, action: dict, context) -> None:
        await ack()
        q = self._qualifier(context)
        if q is None or not await self._first_request("act", body):
            return  # Slack delivered the same click again
        match = R.ACTION_LEVEL_PATTERN.match(action.get("action_id") or "")
        value = R.parse_value(action.get("value"))
        await self._level(body, value, match.group(1) if match else "", q)

    async def _on_level_menu(self, ack, body: dict, action: dict, context) -> None:
        await ack()
        q = self._qualifier(context)
        if q is None or not await self._first_request("act", body):
            return
        choice = (action.get("selected_option") or {}).get("value") or ""
        direction, _, sha = choice.partition(":")
        await self._level(body, {**R.parse_value(action.get("block_id")), "sha": sha}, direction, q)

    async def _level(self, body: dict, value: dict, direction: str, q: Callable[[str], str]) -> None:
        """A level tap: the core checks the commit against what the tapped message showed (its
        ts), so nothing in the value is trusted beyond naming the commit and the direction."""
        conv = self._action_conv(body, value, q)
        container = body.get("container") or {}
        message = container.get("message_ts") or (body.get("message") or {}).get("ts") or ""
        tap = {"sha": value.get("sha"), "dir": direction, "lang": value.get("lang"), "message": message}
        await self.chat.submit("action", conv, action="level", value=tap)

    async def _open_question_form(self, body: dict, value: dict, q: Callable[[str], str]) -> None:
        conv = self._action_conv(body, value, q)
        value = {**value, "thread": value.get("thread") or conv.thread}
        # the bare channel: the form's answer is qualified with its own verified workspace
        metadata = R.compact_json({"v": value, "c": tenants.local_id(conv.channel)}, 3000)
        try:
            view = R.ask_modal(value, metadata)
            await self.platform.call_in(conv.channel, "views.open", trigger_id=body.get("trigger_id"), view=view)
        except SlackError as exc:  # the trigger expired (3 s): say how to ask instead
            log.warning("could not open the question form: %s", exc)
            lang = value.get("lang") or self.settings.default_lang
            hint = text(lang, "notices.ask_hint", sha=str(value.get("sha", ""))[:7])
            await self.platform.reply_private(conv, Notice(hint, lang=lang))

    async def _on_question_form(self, ack, body: dict, view: dict, context) -> None:
        await ack()
        q = self._qualifier(context)
        if q is None or not await self._first_request("view", body):
            return
        meta = R.parse_value(view.get("private_metadata"))
        value = meta.get("v") or {}
        state = ((view.get("state") or {}).get("values") or {}).get(R.MODAL_BLOCK) or {}
        question = ((state.get(R.MODAL_INPUT) or {}).get("value") or "").strip()
        user = body.get("user") or {}
        conv = Conversation(
            "slack",
            q(tenants.local_id(str(meta.get("c") or ""))),
            q(user.get("id", "")),
            thread=value.get("thread"),
            is_dm=str(meta.get("c") or "").startswith("D"),
            extra={"team_id": (body.get("team") or {}).get("id") or user.get("team_id")},
        )
        await self._submit_action(conv, "ask", self._value_for(value), question=question or None)

    async def _tell(self, conv: Conversation, notice: Notice) -> None:
        try:
            await self.platform.reply_private(conv, notice)
        except SlackError as exc:
            log.warning("could not tell a user their click was refused: %s", exc)

    async def _submit_action(self, conv: Conversation, action: str, value: dict, question: str | None = None) -> None:
        """A click is signed by Slack but its value is what our message carried — or what a
        forger put there: the repository it names must pass the same policy as a repository a
        chat user types (GitHub owner/name or the default, never another local path)."""
        repo = value.get("repo")
        if repo is not None:
            lang = value.get("lang")
            if lang not in ("zh", "en"):
                lang = self.settings.default_lang
            try:
                self.chat.check_repo(conv, str(repo))
            except BotError as exc:
                log.warning("Slack action refused: its value names a repository chat users may not reach")
                self.chat.spawn(self._tell(conv, Notice(f"⚠️ {localize(exc, lang)}", "error", lang)))
                return
        await self.chat.submit("action", conv, action=action, value=value, question=question)


def _strip_mention(text: str, bot_user: str) -> str:
    if bot_user:
        text = re.sub(rf"<@{re.escape(bot_user)}(?:\|[^>]*)?>", " ", text)
    return " ".join(text.split())
