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

from aiohttp import web

from bot.core.chat_platform import Conversation, Notice
from bot.core.models import BotError, UsageError
from bot.i18n import localize, phrase, text
from bot.render import slack as R
from handlers.slack import api
from handlers.slack.api import SlackError
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
        assert settings.slack_bot_token is not None  # built only when Slack is enabled (SLACK_BOT_TOKEN)
        token = settings.slack_bot_token.get_secret_value()
        self.client = api.make_client(token, settings.slack_api_url)
        self.platform = SlackPlatform(self.client, chat.store, pacing)
        self.secret = secret
        self._socket = None
        self.app = None
        if receive:  # the clock only posts: no Bolt app, no listeners
            self.app = api.bolt_app(self.client, secret)
            self._register(self.app)

    # --- lifecycle ----------------------------------------------------------------------------------
    def http_routes(self) -> list:
        if not self.receive or self.socket_mode:
            return []
        return [("POST", "/slack/events", self._http)]

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

    async def _on_command(self, ack, command: dict) -> None:
        await ack()
        if not await self._first_request("cmd", command):
            return  # the same signed command again (a replay, or Slack retrying): it ran once
        conv = Conversation(
            "slack",
            command.get("channel_id", ""),
            command.get("user_id", ""),
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
        text = event.get("text") or ""
        mentioned = mention_event or (bool(bot_user) and f"<@{bot_user}" in text)
        is_dm = channel.startswith("D")  # a DM's id starts with D (as for commands and clicks)
        thread = event.get("thread_ts") if event.get("thread_ts") not in (None, "", ts) else None
        # A top-level channel message that does not mention the bot is not addressed to it.
        if not (mentioned or is_dm or thread):
            return
        if not await self._first(body.get("event_id")) or not await self._first(f"msg:{channel}:{ts}"):
            return
        question = _strip_mention(text, bot_user)
        conv = Conversation(
            "slack",
            channel,
            user,
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
    def _action_conv(self, body: dict, value: dict | None = None) -> Conversation:
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
            channel,
            user.get("id", ""),
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

    async def _on_ask_button(self, ack, body: dict, action: dict) -> None:
        await ack()
        if not await self._first_request("act", body):
            return
        value = R.parse_value(action.get("value"))
        self.chat.spawn(self._open_question_form(body, value))

    async def _on_details_button(self, ack, body: dict, action: dict) -> None:
        await ack()
        if not await self._first_request("act", body):
            return
        value = R.parse_value(action.get("value"))
        conv = self._action_conv(body, value)
        await self._details(conv, value)

    async def _details(self, conv: Conversation, value: dict) -> None:
        await self._submit_action(conv, "details", self._value_for(value))

    async def _on_choose_button(self, ack, body: dict, action: dict) -> None:
        await ack()
        if not await self._first_request("act", body):
            return
        value = R.parse_value(action.get("value"))
        conv = self._action_conv(body, value)
        await self._submit_action(conv, "choose", value)

    async def _on_low_menu(self, ack, body: dict, action: dict) -> None:
        await ack()
        if not await self._first_request("act", body):
            return
        choice = (action.get("selected_option") or {}).get("value") or ""
        verb, _, sha = choice.partition(":")
        value = {**R.parse_value(action.get("block_id")), "sha": sha}
        if verb == "ask":
            self.chat.spawn(self._open_question_form(body, value))
        elif verb == "details":
            await self._details(self._action_conv(body, value), value)

    async def _on_level_button(self, ack, body: dict, action: dict) -> None:
        await ack()
        if not await self._first_request("act", body):
            return  # Slack delivered the same click again
        match = R.ACTION_LEVEL_PATTERN.match(action.get("action_id") or "")
        value = R.parse_value(action.get("value"))
        await self._level(body, value, match.group(1) if match else "")

    async def _on_level_menu(self, ack, body: dict, action: dict) -> None:
        await ack()
        if not await self._first_request("act", body):
            return
        choice = (action.get("selected_option") or {}).get("value") or ""
        direction, _, sha = choice.partition(":")
        await self._level(body, {**R.parse_value(action.get("block_id")), "sha": sha}, direction)

    async def _level(self, body: dict, value: dict, direction: str) -> None:
        """A level tap: the core checks the commit against what the tapped message showed (its
        ts), so nothing in the value is trusted beyond naming the commit and the direction."""
        conv = self._action_conv(body, value)
        container = body.get("container") or {}
        message = container.get("message_ts") or (body.get("message") or {}).get("ts") or ""
        tap = {"sha": value.get("sha"), "dir": direction, "lang": value.get("lang"), "message": message}
        await self.chat.submit("action", conv, action="level", value=tap)

    async def _open_question_form(self, body: dict, value: dict) -> None:
        conv = self._action_conv(body, value)
        value = {**value, "thread": value.get("thread") or conv.thread}
        metadata = R.compact_json({"v": value, "c": conv.channel}, 3000)
        try:
            await self.platform.call("views.open", trigger_id=body.get("trigger_id"), view=R.ask_modal(value, metadata))
        except SlackError as exc:  # the trigger expired (3 s): say how to ask instead
            log.warning("could not open the question form: %s", exc)
            lang = value.get("lang") or self.settings.default_lang
            hint = text(lang, "notices.ask_hint", sha=str(value.get("sha", ""))[:7])
            await self.platform.reply_private(conv, Notice(hint, lang=lang))

    async def _on_question_form(self, ack, body: dict, view: dict) -> None:
        await ack()
        if not await self._first_request("view", body):
            return
        meta = R.parse_value(view.get("private_metadata"))
        value = meta.get("v") or {}
        state = ((view.get("state") or {}).get("values") or {}).get(R.MODAL_BLOCK) or {}
        question = ((state.get(R.MODAL_INPUT) or {}).get("value") or "").strip()
        user = body.get("user") or {}
        conv = Conversation(
            "slack",
            meta.get("c") or "",
            user.get("id", ""),
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
