"""`run`, `serve`, `worker` and `clock`: which parts run in this process.

  run     everything: configured platforms (Socket Mode / Feishu long connection, or HTTP
          callbacks), the HTTP server with /healthz, the scheduler and a job worker, all in one
          event loop. With no platform configured it opens the terminal chat instead (the
          embedded default), still with the scheduler and the worker.
  serve   the HTTP server only: Slack and Feishu callbacks, /healthz. It verifies, acknowledges
          and enqueues; nothing slow runs here.
  worker  runs queued jobs (commands, questions, deliveries, builds); also holds Socket Mode /
          the Feishu long connection when configured. Run any number, on any number of machines.
  clock   enqueues due pushes. Safe to run more than once.

Any of them, with METRICS_PORT set, also serves /metrics and its own /healthz on that port
(METRICS_HOST, this machine only by default): never on the public PORT.
"""

from __future__ import annotations

import asyncio
import logging
import signal

from settings import Settings

from ..core import platform_registry
from ..core.models import BotError, UsageError
from ..core.platform_registry import Adapter
from ..i18n import phrase
from . import health
from .app import App
from .queue import Jobs, JobWorker
from .schedule import Clock
from .services import Services

log = logging.getLogger(__name__)


def build_adapters(settings: Settings, app: App, *, receive: bool) -> list[Adapter]:
    """The adapters of the platforms these settings enable (bot/core/platform_registry.py), in
    the registry's order. Their SDKs are imported only here, lazily, by the entries' factories."""
    adapters = [entry.build(settings, app.router, receive=receive) for entry in platform_registry.enabled(settings)]
    for adapter in adapters:
        app.register(adapter.platform)
    return adapters


def public_routes(settings: Settings, app: App, adapters: list[Adapter]) -> list[tuple]:
    """The public server's routes: the adapters' callbacks, the report pages and, when
    GITHUB_WEBHOOK_SECRET is set, GitHub's signed push webhook (it wakes the alert polls)."""
    from handlers.web import github_webhook_routes, gitlab_webhook_routes, report_routes

    routes = [r for a in adapters for r in a.http_routes()] + report_routes(app.services.reports)
    if settings.github_webhook_secret is not None:
        routes += github_webhook_routes(settings.github_webhook_secret.get_secret_value(), app.wake_alerts)
    if settings.gitlab_webhook_secret is not None:
        routes += gitlab_webhook_routes(settings.gitlab_webhook_secret.get_secret_value(), app.wake_alerts)
    return routes


async def run_command(command: str, settings: Settings, log_file=None) -> int:
    """Run `command`'s parts until a signal (or, for the terminal chat, `quit`/EOF); `log_file`:
    where this process logs when not to stderr (the terminal chat says it once, at start)."""
    services = Services.build(settings)
    app = App.build(services)
    stop = asyncio.Event()
    _install_signal_handlers(stop)
    runners: list = []
    adapters: list[Adapter] = []
    tasks: list[asyncio.Task] = []
    worker: JobWorker | None = None
    jobs: Jobs | None = None
    try:
        if settings.metrics_port and settings.metrics_port == settings.port and command in ("run", "serve"):
            raise UsageError(phrase("ops.metrics_port_is_public", port=settings.port))
        if settings.subscriptions_file:
            n = await app.subs.seed(settings.subscriptions_file)
            log.info("seeded %d subscriptions from %s", n, settings.subscriptions_file)
        receive = command in ("run", "serve") or (command == "worker" and _has_outbound(settings))
        adapters = build_adapters(settings, app, receive=receive)
        if not adapters and command in ("serve", "worker", "clock"):
            raise UsageError(
                phrase("ops.needs_platform", command=command, settings=platform_registry.enabling_settings())
            )
        if not adapters and command == "run" and _no_terminal():
            raise UsageError(phrase("ops.run_no_terminal", settings=platform_registry.enabling_settings()))
        jobs = await Jobs.connect(settings)
        app.jobs = jobs
        if command in ("run", "worker"):
            worker = JobWorker(settings, app)
            await worker.start()
            app.worker = worker
        clock = app.make_clock(jobs=jobs) if command in ("run", "clock") else None
        if settings.metrics_port:
            runners.append(await _ops_server(settings, services.store, jobs, worker, clock))
        if command == "run" and not adapters:
            assert clock is not None  # "run" always has its clock
            return await _console(app, settings, stop, clock, runners, log_file)
        if command in ("run", "serve"):
            from handlers.web import build_app, start_server

            routes = public_routes(settings, app, adapters)
            runners.append(await start_server(build_app(services.store, routes), settings.host, settings.port))
        if command in ("run", "worker") and receive:
            for adapter in adapters:
                await adapter.start()
        if clock is not None:
            tasks.append(asyncio.create_task(clock.run_forever(stop)))
        await stop.wait()
        return 0
    finally:
        stop.set()
        for task in tasks:
            await asyncio.gather(task, return_exceptions=True)
        if worker is not None:
            await worker.close()  # running jobs go back to the queue for the next worker
        await app.drain_local()
        for adapter in adapters:
            await adapter.close()
        for runner in runners:
            await runner.cleanup()
        if jobs is not None:
            await jobs.close()
        await services.aclose()


async def _console(
    app: App, settings: Settings, stop: asyncio.Event, clock: Clock, runners: list, log_file=None
) -> int:
    from pathlib import Path

    from handlers.console import ConsoleChat, ConsolePlatform

    if settings.public_base_url:  # the terminal's digests link their report pages: serve them
        from handlers.web import build_app, report_routes, start_server

        runners.append(
            await start_server(build_app(app.store, report_routes(app.services.reports)), settings.host, settings.port)
        )
    platform = ConsolePlatform(report_dir=Path(settings.data_dir) / "reports", lang=settings.default_lang)
    app.register(platform)
    ticking = asyncio.create_task(clock.run_forever(stop))
    try:
        await ConsoleChat(app.router, platform, log_file=log_file).run(stop=stop)
    finally:
        stop.set()
        await asyncio.gather(ticking, return_exceptions=True)
    return 0


async def _ops_server(settings: Settings, store, jobs, worker: JobWorker | None, clock: Clock | None):
    """/metrics and this process's /healthz on METRICS_PORT: Redis answers, and this process's
    worker polls the queue and its clock ticks (their health keys are fresh)."""
    from handlers.web import build_ops_app, start_server

    async def parts() -> dict[str, str]:
        state = {"redis": "up" if await store.ping() else "unreachable"}
        for kind, part in (("worker", worker), ("clock", clock)):
            if part is not None:
                try:
                    state[kind] = "alive" if await health.is_alive(store, kind, part.id) else "silent"
                except BotError:
                    state[kind] = "unknown"
        return state

    token = settings.metrics_token.get_secret_value() if settings.metrics_token is not None else None
    if token is None and settings.metrics_host not in ("127.0.0.1", "::1", "localhost"):
        log.warning(
            "metrics: /metrics on %s:%d without METRICS_TOKEN: whoever reaches that port reads "
            "queue and repository names",
            settings.metrics_host,
            settings.metrics_port,
        )
    from ..analysis.cost import Budget
    from ..digest.builder import utcnow

    month = Budget(store, settings.llm_monthly_token_budget, utcnow)
    return await start_server(
        build_ops_app(parts, jobs, token, refresh=month.refresh_gauge), settings.metrics_host, settings.metrics_port
    )


def _no_terminal() -> bool:
    """`run` with no platform chats in the terminal: is there none (a container's empty stdin)?"""
    import sys

    from handlers.console import no_input

    return no_input(sys.stdin)


def _has_outbound(settings: Settings) -> bool:
    """An enabled platform connects out to receive (Socket Mode, Feishu's long connection): a
    worker holds that connection."""
    return any(entry.outbound(settings) for entry in platform_registry.enabled(settings))


def _install_signal_handlers(stop: asyncio.Event) -> None:
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        try:
            loop.add_signal_handler(sig, stop.set)
        except (NotImplementedError, RuntimeError):
            pass
