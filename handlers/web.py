"""The HTTP side: two aiohttp servers.

The public one (PORT) takes Slack's and Feishu's callbacks, serves the digests' report pages
(`report_routes`), takes GitHub's signed push webhook when GITHUB_WEBHOOK_SECRET is set
(`github_webhook_routes`: it wakes the pushed repository's alert polls), GitLab's push webhook
when GITLAB_WEBHOOK_SECRET is set (`gitlab_webhook_routes`, the same) and answers `/healthz`: adapters
contribute their routes; `/healthz` answers 200 only while Redis answers, so a load balancer or
supervisor sees a storage outage (and its recovery) without reading logs.

The operations one (METRICS_PORT, bound to METRICS_HOST — this machine only by default) serves
`/metrics`, the Prometheus text format of this process's counters plus the queue's depth, and
`/healthz` for this process (is its worker polling, is its clock ticking). Metrics name queues,
repositories and platforms, so they are never on the public port; METRICS_TOKEN, when set, makes
`/metrics` ask for `Authorization: Bearer <token>`.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
from collections.abc import Awaitable, Callable
from urllib.parse import parse_qs

from aiohttp import web

log = logging.getLogger(__name__)

LISTEN_BACKLOG = 2048


def build_app(store, routes) -> web.Application:
    """The public server: the adapters' callback routes, the report pages and `/healthz`."""
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


Health = Callable[[], Awaitable[dict[str, str]]]  # part → state; "up"/"alive" are the healthy ones
HEALTHY = ("up", "alive")


def build_ops_app(
    health: Health, jobs=None, token: str | None = None, refresh: Callable[[], Awaitable[None]] | None = None
) -> web.Application:
    """The operations server: `/metrics` (behind `token` when one is set) and this process's
    `/healthz` (200 when every part `health()` reports is up or alive, else 503). `refresh` reads
    deployment-wide figures from Redis before each scrape (the month's LLM tokens)."""
    app = web.Application(client_max_size=64 * 1024)

    async def healthz(_request: web.Request) -> web.Response:
        parts = await health()
        ok = all(state in HEALTHY for state in parts.values())
        return web.json_response({"ok": ok, **parts}, status=200 if ok else 503)

    async def metrics_page(request: web.Request) -> web.Response:
        from bot.core import metrics

        if token is not None and not _bearer_matches(request.headers.get("Authorization", ""), token):
            return web.json_response({"error": "unauthorized"}, status=401, headers={"WWW-Authenticate": "Bearer"})
        if jobs is not None:
            try:
                metrics.gauge("jobs_in_queue", await jobs.pending())
            except Exception:  # noqa: BLE001 — a scrape must not fail because Redis is slow
                log.warning("metrics: could not read the queue depth")
        if refresh is not None:
            try:
                await refresh()
            except Exception:  # noqa: BLE001 — a scrape must not fail because Redis is slow
                log.warning("metrics: could not read the month's LLM tokens")
        body, content_type = metrics.exposition()
        return web.Response(body=body, headers={"Content-Type": content_type})

    app.router.add_get("/healthz", healthz)
    app.router.add_get("/metrics", metrics_page)
    return app


def _bearer_matches(header: str, token: str) -> bool:
    scheme, _, given = header.partition(" ")
    return scheme.lower() == "bearer" and hmac.compare_digest(given.strip().encode(), token.encode())


def github_webhook_routes(secret: str, wake: Callable[[str], Awaitable[int]]) -> list[tuple]:
    """POST /github/webhook — GitHub's push webhook, checked against `secret` (X-Hub-Signature-256:
    `sha256=` and the HMAC-SHA256 of the raw body). Unsigned or badly signed: 401 and nothing
    happens. Either content type GitHub offers (JSON, or the form field `payload`). `ping`: 200. `push`: `wake(repository.full_name)` polls the subscriptions that alert
    on it (queued, so the answer is quick): 202. Any other event: 204."""
    key = secret.encode()

    async def webhook(request: web.Request) -> web.Response:
        body = await request.read()
        given = request.headers.get("X-Hub-Signature-256", "")
        if not given.startswith("sha256="):
            log.warning("github webhook refused: no X-Hub-Signature-256 signature")
            return web.json_response({"error": "signature-required"}, status=401)
        expected = hmac.new(key, body, hashlib.sha256).hexdigest()
        if not hmac.compare_digest(given.removeprefix("sha256=").strip().lower().encode(), expected.encode()):
            log.warning("github webhook refused: the signature does not match the configured secret")
            return web.json_response({"error": "bad-signature"}, status=401)
        event = request.headers.get("X-GitHub-Event", "")
        if event == "ping":
            return web.json_response({"ok": True})
        if event != "push":
            return web.Response(status=204)
        try:
            if request.content_type == "application/x-www-form-urlencoded":  # GitHub's form's default
                body = parse_qs(body.decode()).get("payload", [""])[0].encode()
            full_name = str(json.loads(body)["repository"]["full_name"])
        except (ValueError, KeyError, TypeError):
            return web.json_response({"error": "bad-payload"}, status=400)
        woken = await wake(full_name)
        log.info("github push to %s: %d alert poll(s) woken", full_name, woken)
        return web.json_response({"ok": True, "polls": woken}, status=202)

    return [("POST", "/github/webhook", webhook)]


def gitlab_webhook_routes(secret: str, wake: Callable[[str, str], Awaitable[int]]) -> list[tuple]:
    """POST /gitlab/webhook — GitLab's push webhook, its secret token in `X-Gitlab-Token` compared
    with `secret` in constant time. Missing: 401; another token: 403; nothing happens either way.
    `Push Hook` (and `System Hook` pushes): `wake(project.path_with_namespace, "gitlab")` polls
    the subscriptions that alert on that project (queued): 202. Any other event: 204."""
    key = secret.encode()

    async def webhook(request: web.Request) -> web.Response:
        given = request.headers.get("X-Gitlab-Token")
        if not given:
            log.warning("gitlab webhook refused: no X-Gitlab-Token")
            return web.json_response({"error": "token-required"}, status=401)
        if not hmac.compare_digest(given.encode(), key):
            log.warning("gitlab webhook refused: the token does not match the configured secret")
            return web.json_response({"error": "bad-token"}, status=403)
        event = request.headers.get("X-Gitlab-Event", "")
        if event not in ("Push Hook", "System Hook"):
            return web.Response(status=204)
        try:
            payload = json.loads(await request.read())
            if payload.get("object_kind") != "push":
                return web.Response(status=204)
            path = str(payload["project"]["path_with_namespace"])
        except (ValueError, KeyError, TypeError, AttributeError):
            return web.json_response({"error": "bad-payload"}, status=400)
        woken = await wake(path, "gitlab")
        log.info("gitlab push to %s: %d alert poll(s) woken", path, woken)
        return web.json_response({"ok": True, "polls": woken}, status=202)

    return [("POST", "/gitlab/webhook", webhook)]


async def start_server(app: web.Application, host: str, port: int) -> web.AppRunner:
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    # A burst of callbacks (a team all asking at once) opens hundreds of connections together:
    # with aiohttp's default backlog (128) the kernel drops the rest's SYNs and their clients
    # retry a second later — a 1 s ack for no reason.
    site = web.TCPSite(runner, host, port, backlog=LISTEN_BACKLOG)
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


def report_routes(reports) -> list[tuple]:
    """GET /r/{id}?exp=…&sig=… — a digest's report page (bot/report/); POST to the same signed URL
    — a commit's level-correction form; GET /r/{id}/changelog.md with the same query — the page's
    release notes to save. Only signed links: no listing, no unsigned form; anything
    else under /r/ or /reports/ is aiohttp's plain 404."""

    async def answer(request: web.Request, **how) -> web.Response:
        """The page (or its release notes, or a tap's answer) for the signed link in `request`."""
        q = request.query
        result = await reports.respond(
            request.match_info["id"],
            q.get("exp", ""),
            q.get("sig", ""),
            request.headers.get("Accept-Language", ""),
            **how,
        )
        return web.Response(
            status=result.status,
            text=result.body,
            content_type=result.content_type,
            charset="utf-8",
            headers=result.headers,
        )

    async def report_page(request: web.Request) -> web.Response:
        response = await answer(request)
        response.enable_compression()  # gzip when the browser accepts it: a long day's page is mostly markup
        return response

    async def report_tap(request: web.Request) -> web.Response:
        """A level-correction form posted from the page: to the page's own signed URL, which
        answers with the page again, saying what became of the tap."""
        form = {k: v for k, v in (await request.post()).items() if isinstance(v, str)}
        return await answer(request, form=form)

    async def report_changelog(request: web.Request) -> web.Response:
        """The page's release notes as a Markdown file, behind the page's own signature."""
        return await answer(request, changelog=True)

    return [
        ("GET", "/r/{id}", report_page),
        ("POST", "/r/{id}", report_tap),
        ("GET", "/r/{id}/changelog.md", report_changelog),
    ]
