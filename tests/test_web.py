"""The HTTP side as a load balancer, a scraper and a platform see it: /healthz says whether Redis
answers, /metrics is on the operations server only and shows the counters and the queue's depth
(and is served when the queue cannot be read), the operations /healthz says which part of the
process is silent, adapters' routes answer their method only, and a body over 2 MiB is refused.
(tests/test_ops.py runs the same through real processes, with METRICS_PORT and METRICS_TOKEN.)"""

from __future__ import annotations

import logging

import aiohttp
import pytest
from aiohttp import web

from bot.runtime.queue import Jobs
from bot.runtime.services import Services
from handlers.web import bound_port, build_app, build_ops_app, start_server

LIMIT = 2 * 1024 * 1024  # the largest request body the server reads (documented in handlers/web.py)


async def echo_size(request: web.Request) -> web.Response:
    return web.json_response({"read": len(await request.read())})


def redis_only(store):
    async def parts():
        return {"redis": "up" if await store.ping() else "unreachable"}

    return parts


@pytest.fixture
async def served(make_settings):
    """Start the app with one adapter route and a real job queue; yields (get/post helper, jobs)."""
    settings = make_settings()
    services = Services.build(settings)
    jobs = await Jobs.connect(settings)
    runner = await start_server(build_app(services.store, [("POST", "/hook", echo_size)]), "127.0.0.1", 0)
    ops = await start_server(build_ops_app(redis_only(services.store), jobs=jobs), "127.0.0.1", 0)
    base = f"http://127.0.0.1:{bound_port(runner)}"
    async with aiohttp.ClientSession() as http:
        yield http, base, jobs, f"http://127.0.0.1:{bound_port(ops)}"
    await ops.cleanup()
    await runner.cleanup()
    await jobs.close()
    await services.aclose()


async def test_healthz_says_redis_is_up(served):
    http, base, _jobs, _ops = served
    async with http.get(base + "/healthz") as resp:
        assert resp.status == 200 and await resp.json() == {"ok": True, "redis": "up"}


async def test_metrics_show_the_queue_depth_and_the_counters(served):
    http, base, jobs, ops = served
    for n in range(3):
        await jobs.enqueue("deliver", {"n": n}, defer=3600)  # queued, not started
    async with http.get(base + "/metrics") as resp:
        assert resp.status == 404  # never on the public port
    async with http.get(ops + "/metrics") as resp:
        assert resp.status == 200 and resp.headers["Content-Type"].startswith("text/plain")
        page = await resp.text()
    assert "digestbot_jobs_in_queue 3.0" in page.splitlines()
    assert any(line.startswith("digestbot_jobs_total{") for line in page.splitlines())


async def test_metrics_are_served_when_the_queue_cannot_be_read(make_settings, tmp_path, caplog):
    from tests.shared.redis_proc import RedisProcess, free_port

    queue_redis = RedisProcess(free_port(), tmp_path)
    queue_redis.start()
    services = Services.build(make_settings())
    jobs = await Jobs.connect(make_settings(redis_url=f"redis://127.0.0.1:{queue_redis.port}/0"))
    runner = await start_server(build_ops_app(redis_only(services.store), jobs=jobs), "127.0.0.1", 0)
    try:
        queue_redis.stop()  # the queue's Redis is gone; the scrape still gets the counters
        async with aiohttp.ClientSession() as http:
            with caplog.at_level(logging.WARNING):
                async with http.get(f"http://127.0.0.1:{bound_port(runner)}/metrics") as resp:
                    assert resp.status == 200
                    page = await resp.text()
    finally:
        await runner.cleanup()
        await jobs.close()
        await services.aclose()
    assert "# TYPE digestbot_deliveries_total counter" in page.splitlines()
    assert any("could not read the queue depth" in r.getMessage() for r in caplog.records)


async def test_the_operations_healthz_names_the_silent_part():
    async def parts():
        return {"redis": "up", "worker": "alive", "clock": "silent"}

    runner = await start_server(build_ops_app(parts), "127.0.0.1", 0)
    try:
        async with aiohttp.ClientSession() as http, http.get(f"http://127.0.0.1:{bound_port(runner)}/healthz") as resp:
            assert resp.status == 503
            assert await resp.json() == {"ok": False, "redis": "up", "worker": "alive", "clock": "silent"}
    finally:
        await runner.cleanup()


@pytest.mark.parametrize("size,status", [(LIMIT, 200), (LIMIT + 1, 413)])
async def test_a_body_over_two_mebibytes_is_refused(served, size, status):
    http, base, _jobs, _ops = served
    async with http.post(base + "/hook", data=b"x" * size) as resp:
        assert resp.status == status
        if status == 200:
            assert await resp.json() == {"read": LIMIT}


async def test_an_adapter_route_answers_its_own_method_only(served):
    http, base, _jobs, _ops = served
    async with http.get(base + "/hook") as resp:
        assert resp.status == 405
    async with http.post(base + "/healthz") as resp:
        assert resp.status == 405


async def test_a_server_that_could_not_bind_has_no_port_to_report():
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        runner = web.AppRunner(web.Application())
        await runner.setup()
        try:
            with pytest.raises(OSError, match=r"(?i)address already in use"):  # the port is in use
                await web.TCPSite(runner, "127.0.0.1", taken.getsockname()[1]).start()
            with pytest.raises(RuntimeError, match="server not started"):
                bound_port(runner)
        finally:
            await runner.cleanup()
