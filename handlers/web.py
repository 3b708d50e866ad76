"""The HTTP side: one aiohttp server for Slack's and Feishu's callbacks and `/healthz`.

Adapters contribute their routes; `/healthz` answers 200 only while Redis answers, so a load
balancer or supervisor sees a storage outage (and its recovery) without reading logs.
"""
from __future__ import annotations

import logging

from aiohttp import web

log = logging.getLogger(__name__)


def build_app(store, routes) -> web.Application:
    app = web.Application(client_max_size=2 * 1024 * 1024)
    for method, path, handler in routes:
        app.router.add_route(method, path, handler)

    async def healthz(_request: web.Request) -> web.Response:
        if await store.ping():
            return web.json_response({"ok": True, "redis": "up"})
        log.error("healthz: Redis (%s) is unreachable", store.description)
        return web.json_response({"ok": False, "redis": "unreachable"}, status=503)

    app.router.add_get("/healthz", healthz)
    return app


async def start_server(app: web.Application, host: str, port: int) -> web.AppRunner:
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, host, port)
    await site.start()
    log.info("HTTP server listening on %s:%d", host, port)
    return runner


def bound_port(runner: web.AppRunner) -> int:
    """The real port (tests bind port 0)."""
    for site in runner.sites:
        server = getattr(site, "_server", None)
        if server and server.sockets:
            return server.sockets[0].getsockname()[1]
    raise RuntimeError("server not started")
