"""The conversation's router, platform-neutral: adapters in handlers/ acknowledge the platform at
once, then hand each request here. It routes commands to their modules (bot/conversation/commands/, one per
command, one table), thread messages and buttons to the questions family (bot/conversation/questions.py),
and keeps what crosses them: the job queue, event dedupe, the policy (who may change a channel,
which repositories chat may name), and errors.

Every user-facing failure ends as one short line in the channel's language (plus the usage of
the command concerned) shown to the person who caused it; nothing already posted is lost.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

from settings import Settings

from ..channels.subscriptions import Subscriptions
from ..channels.threads import Threads
from ..core.chat_platform import ChatPlatform, Conversation, Notice, Platforms
from ..core.current_job import CURRENT_JOB
from ..core.models import BotError, RetryLater, UsageError, to_dict
from ..core.store import Store, StoreBusy, StoreUnavailable
from ..core.tenants import acting_for, scope_of
from ..i18n import localize, text
from .commands import CommandError, help_text, looks_like_command, parse_command, usage
from .commands.base import CommandTools, Request
from .grammar import typed_level
from .level_taps import LevelTaps
from .policy import ChannelPolicy
from .questions import Questions

log = logging.getLogger(__name__)


class RequestQueue(Protocol):
    """The job queue as the router uses it (bot/runtime/queue.py's Jobs): hand a request to the
    workers, and tell where it stands."""

    async def enqueue(self, function: str, *args: Any, job_id: str | None = None) -> Any: ...

    async def position(self, job_id: str) -> int: ...


class Worker(Protocol):
    """This process's job worker, as `drain` waits for it (bot/runtime/queue.py's JobWorker)."""

    async def idle(self) -> bool: ...


@dataclass
class Router:
    """Routes each request to its command, the questions family or a level tap, and answers every
    failure with one sentence. It holds only what routing needs; the commands get theirs
    (`tools`) through their Request."""

    settings: Settings
    store: Store
    subs: Subscriptions
    threads: Threads
    platforms: Platforms
    policy: ChannelPolicy
    questions: Questions
    levels: LevelTaps
    tools: CommandTools
    clock: Callable[[], datetime]
    jobs: RequestQueue | None = None  # the job queue, when this process hands requests to workers
    worker: Worker | None = None  # the job worker running in this process, if any

    def __post_init__(self) -> None:
        self._tasks: set[asyncio.Task] = set()

    @staticmethod
    def looks_like_command(text_: str) -> bool:
        """The adapters ask before queueing a top-level message (the commands' grammar decides)."""
        return looks_like_command(text_)

    def check_repo(self, conv: Conversation, repo: str) -> str:
        """The adapters check a button's repository before queueing it (the policy's rule)."""
        return self.policy.check_repo(conv, repo)

    # --- background work (adapters ack first, then hand the work here) -------------------------------
    def spawn(self, coro) -> asyncio.Task:
        task = asyncio.create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def submit(self, kind: str, conv: Conversation, **args) -> None:
        """Adapters hand every user request here once they have acknowledged the platform:
        kind "command" (text, prefix), "message" (text, mentioned, prefix) or "action"
        (action, value, question). The arguments are JSON values: with a job queue the request
        runs in a worker (any process); without one (tests, a single process without a queue)
        it runs here in the background. An overloaded bot says "queued, position n"."""
        if self.jobs is None:
            self.spawn(self.run_request(kind, to_dict(conv), args))
            return
        platform = self.platforms[conv.platform]
        try:
            job = await self.jobs.enqueue("request", kind, to_dict(conv), args)
        except BaseException as exc:  # noqa: BLE001 — one sentence, never silence
            await self.report(platform, conv, self.settings.default_lang, exc)
            return
        # Where it stands is told in the background: the platform's acknowledgement (which may
        # wait for this call) never waits for a message to be posted.
        self.spawn(self._tell_position(self.jobs, platform, conv, job.job_id))

    async def _tell_position(self, jobs: RequestQueue, platform, conv: Conversation, job_id: str) -> None:
        lang: str = self.settings.default_lang
        try:
            position = await jobs.position(job_id)
            if position > 0:
                lang = (await self.subs.config(conv.platform, conv.channel)).lang
                await platform.reply_private(conv, Notice(text(lang, "progress.queued", n=position), "progress", lang))
        except BaseException as exc:  # noqa: BLE001 — report() re-raises cancellation, says one sentence for the rest
            await self.report(platform, conv, lang, exc)

    async def run_request(self, kind: str, conv: dict, args: dict, job_id: str | None = None) -> None:
        """Run a request handed over by `submit` (in a worker, or here). The LLM tokens it
        spends count for its workspace's month too (bot/analysis/cost.py)."""
        token = CURRENT_JOB.set(job_id)
        try:
            c = Conversation(**conv)
            with acting_for(scope_of(c.platform, c.channel)):
                await self._run(kind, c, args)
        finally:
            CURRENT_JOB.reset(token)

    async def _run(self, kind: str, c: Conversation, args: dict) -> None:
        if kind == "command":
            await self.on_command(c, args["text"], prefix=args.get("prefix") or "/digest")
        elif kind == "message":
            await self.on_message(
                c, args["text"], mentioned=bool(args.get("mentioned")), prefix=args.get("prefix") or "/digest"
            )
        elif kind == "action":
            await self.on_action(c, args["action"], args.get("value") or {}, question=args.get("question"))
        else:
            log.error("unknown request kind %r dropped", kind)

    async def drain_local(self) -> None:
        """Wait for the requests running in this process's background (shutdown)."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)

    async def drain(self) -> None:
        """Wait for every handed-off request, and for this process's worker to run out of due
        jobs (tests, shutdown)."""
        while True:
            while self._tasks:
                await asyncio.gather(*list(self._tasks), return_exceptions=True)
            if self.worker is None or await self.worker.idle():
                if not self._tasks:
                    return
            else:
                await asyncio.sleep(0.05)

    async def first_time(self, platform: str, event_id: str, ttl: int) -> bool:
        """Event dedupe: platforms re-send events they think we missed. With Redis down the
        event is let through, so the user is told the storage is unreachable instead of nothing."""
        if not event_id:
            return True
        try:
            return await self.store.claim(self.store.k("event", platform, event_id), ttl)
        except StoreUnavailable as exc:
            log.error("event dedupe skipped: %s", exc)
            return True

    # --- entry points --------------------------------------------------------------------------------
    async def on_command(self, conv: Conversation, text_: str, *, prefix: str = "/digest") -> None:
        platform = self.platforms[conv.platform]
        lang: str = self.settings.default_lang
        verb = None
        try:
            cfg = await self.subs.config(conv.platform, conv.channel)
            lang = cfg.lang
            if typed_level(text_) is not None:  # a level correction names a digest: typed in its thread
                return await platform.reply_private(conv, Notice(text(lang, "levels.thread_usage"), "usage", lang))
            parsed = parse_command(text_)
            verb = parsed.command.name
            await parsed.command.run(Request(self.tools, conv, platform, cfg, prefix), parsed.args)
        except CommandError as exc:  # malformed: the sentence, then how to type it
            line = f"⚠️ {localize(exc, lang)}\n" + (
                text(lang, "usage.line", usage=usage(lang, exc.command, prefix))
                if exc.command
                else help_text(lang, prefix)
            )
            await platform.reply_private(conv, Notice(line, "usage", lang))
        except UsageError as exc:  # well-formed but unusable (a future date, an unknown repo…)
            line = f"⚠️ {localize(exc, lang)}" + (
                f"\n{text(lang, 'usage.line', usage=usage(lang, verb, prefix))}" if verb else ""
            )
            await platform.reply_private(conv, Notice(line, "usage", lang))
        except BaseException as exc:  # noqa: BLE001 — every failure gets one sentence, never silence
            await self.report(platform, conv, lang, exc)

    async def on_message(self, conv: Conversation, text_: str, *, mentioned: bool, prefix: str = "/digest") -> None:
        """A message the bot can see: in a bot-started thread, a DM, or a mention. Decides whether
        it is a command, a question, or none of the bot's business."""
        platform = self.platforms[conv.platform]
        lang: str = self.settings.default_lang
        try:
            cfg = await self.subs.config(conv.platform, conv.channel)
            lang = cfg.lang
            command = looks_like_command(text_) or typed_level(text_) is not None
            if (mentioned or conv.is_dm) and not conv.thread and command:
                return await self.on_command(conv, text_, prefix=prefix)
            if not conv.thread and not (mentioned or conv.is_dm):
                return  # ordinary channel chatter
            info = await self.threads.get(conv.platform, conv.channel, conv.thread) if conv.thread else None
            if info is None:
                if conv.thread and not (mentioned or conv.is_dm):
                    return  # someone else's thread: not for us
                if looks_like_command(text_):
                    return await self.on_command(conv, text_, prefix=prefix)
                if conv.thread:
                    await platform.send(
                        conv.channel,
                        Notice(text(lang, "notices.unknown_thread", prefix=prefix), lang=lang),
                        thread=conv.thread,
                    )
                    return
                return await self.questions.outside_thread(conv, platform, text_, lang, prefix)
            if not (mentioned or conv.is_dm or cfg.questions == "all"):
                return
            if (typed := typed_level(text_)) is not None:  # `level SHA 太高` in a digest's thread
                return await self.levels.typed(conv, platform, typed[0], typed[1], lang)
            await self.questions.in_thread(conv, platform, info, text_, prefix=prefix)
        except BaseException as exc:  # noqa: BLE001 — report() re-raises cancellation, says one sentence for the rest
            await self.report(platform, conv, lang, exc)

    async def on_action(self, conv: Conversation, action: str, value: dict, question: str | None = None) -> None:
        """Buttons: ask (with the question when the platform collected one), details, choose,
        and a level correction (whose repository is the tapped message's, not the value's)."""
        platform = self.platforms[conv.platform]
        lang = value.get("lang") or self.settings.default_lang
        try:
            if action == "level":
                return await self.levels.tap(conv, platform, value)
            root = value.get("thread") or conv.thread
            info = await self.threads.get(conv.platform, conv.channel, root) if root else None
            if info is not None:  # the thread knows how commands name its repository
                value = {**value, "repo": info.repo}
            elif value.get("repo") is not None:  # only the click's value names it: as typed, re-checked
                value = {**value, "repo": self.policy.check_repo(conv, str(value["repo"]))}
            await self.questions.button(conv, platform, action, value, info, root, question, lang)
        except BaseException as exc:  # noqa: BLE001 — report() re-raises cancellation, says one sentence for the rest
            await self.report(platform, conv, lang, exc)

    # --- failures ------------------------------------------------------------------------------------
    async def report(self, platform: ChatPlatform, conv: Conversation, lang: str, exc: BaseException) -> None:
        """One sentence to the person whose request failed, in their channel's language."""
        if isinstance(exc, (asyncio.CancelledError, KeyboardInterrupt, SystemExit)):
            raise exc
        if isinstance(exc, RetryLater) and CURRENT_JOB.get():
            raise exc  # the queue runs this request again (and it resumes): nothing to tell yet
        if isinstance(exc, StoreBusy):
            line = text(lang, "errors.busy")
        elif isinstance(exc, StoreUnavailable):
            log.error("storage unavailable: %s", exc)
            line = text(lang, "errors.storage_down")
        elif isinstance(exc, BotError):
            line = f"⚠️ {localize(exc, lang)}"
        else:
            log.exception("unexpected failure handling a %s request", conv.platform)
            line = text(lang, "errors.internal", kind=type(exc).__name__)
        try:
            await platform.reply_private(conv, Notice(line, "error", lang))
        except Exception:  # the platform itself is down: the log is all we have
            log.exception("could not tell the user about a failure")
