"""`run`, `serve`, `worker` and `clock`: which parts run in this process.

  run     everything: configured platforms (Socket Mode / Feishu long connection, or HTTP
          callbacks), the HTTP server with /healthz, and the scheduler. With no platform
          configured it opens the terminal chat instead (the embedded default).
  serve   the HTTP server only: Slack and Feishu callbacks + /healthz.
  worker  the platforms' outbound connections only (Socket Mode, Feishu long connection).
  clock   the scheduler only; platforms are used just to post. Safe to run more than once.
"""
from __future__ import annotations

import asyncio
import logging
import signal

from .chat import ChatService
from .models import UsageError
from .schedule import Clock
from .services import Services

log = logging.getLogger(__name__)


def build_adapters(settings, chat: ChatService, *, receive: bool) -> list:
    """Platform adapters for what is configured. Their SDKs are imported only here, lazily."""
    adapters = []
    if settings.slack_enabled:
        from handlers.slack import build_slack
        adapters.append(build_slack(settings, chat, receive=receive))
    if settings.feishu_enabled:
        from handlers.feishu import build_feishu
        adapters.append(build_feishu(settings, chat, receive=receive))
    for adapter in adapters:
        chat.register(adapter.platform)
    return adapters


async def run_command(command: str, settings) -> int:
    services = Services.build(settings)
    chat = ChatService(services)
    stop = asyncio.Event()
    _install_signal_handlers(stop)
    runners: list = []
    adapters: list = []
    tasks: list[asyncio.Task] = []
    try:
        if settings.subscriptions_file:
            n = await chat.subs.seed(settings.subscriptions_file)
            log.info("seeded %d subscriptions from %s", n, settings.subscriptions_file)
        adapters = build_adapters(settings, chat, receive=command != "clock")
        if command == "run" and not adapters:
            return await _console(chat, settings, stop)
        if not adapters and command in ("serve", "worker", "clock"):
            raise UsageError(f"'{command}' needs a chat platform: set SLACK_BOT_TOKEN or FEISHU_APP_ID/FEISHU_APP_SECRET.")
        if command == "worker" and not _has_outbound(settings):
            raise UsageError("'worker' holds Slack Socket Mode (SLACK_APP_TOKEN) or the Feishu long connection "
                             "(FEISHU_MODE=ws), and neither is configured; use 'serve' for HTTP callbacks.")
        if command in ("run", "serve"):
            from handlers.web import build_app, start_server
            routes = [r for a in adapters for r in a.http_routes()]
            runners.append(await start_server(build_app(services.store, routes), settings.host, settings.port))
        if command in ("run", "worker"):
            for adapter in adapters:
                await adapter.start()
        if command in ("run", "clock"):
            tasks.append(asyncio.create_task(Clock(chat, settings).run_forever(stop)))
        await stop.wait()
        return 0
    finally:
        stop.set()
        for task in tasks:
            await asyncio.gather(task, return_exceptions=True)
        await chat.drain()
        for adapter in adapters:
            await adapter.close()
        for runner in runners:
            await runner.cleanup()
        await services.aclose()


async def _console(chat: ChatService, settings, stop: asyncio.Event) -> int:
    from pathlib import Path

    from handlers.console import ConsoleChat, ConsolePlatform

    platform = ConsolePlatform(report_dir=Path(settings.data_dir) / "reports")
    chat.register(platform)
    clock = asyncio.create_task(Clock(chat, settings).run_forever(stop))
    try:
        await ConsoleChat(chat, platform).run(stop=stop)
    finally:
        stop.set()
        await asyncio.gather(clock, return_exceptions=True)
    return 0


def _has_outbound(settings) -> bool:
    return bool((settings.slack_enabled and settings.slack_app_token)
                or (settings.feishu_enabled and settings.feishu_mode == "ws"))


def _install_signal_handlers(stop: asyncio.Event) -> None:
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        try:
            loop.add_signal_handler(sig, stop.set)
        except (NotImplementedError, RuntimeError):
            pass
