"""Report page benchmark: page bytes and render time for a synthetic 300-commit day.

The synthetic analyses repeat the same sentences, so the gzip figure is better than a real day's
would be; the raw bytes and the render time do not depend on that.

  python bench/bench_report.py [--commits 300] [--runs 20]

The day is tests/reportdata.py's: every commit with a full analysis (summary, impact, three
insights, two risks, a recommendation, a coverage line), a fifth of them high, two fifths each
medium and low, in English and in Chinese. Prints, per language:

  bytes     the HTML as served, raw and gzip-compressed (the web app compresses for browsers
            that accept it), and the digest's data as kept in Redis per published link
  render    `render_page` alone: the first call of a process (templates compiled) and the
            median / max wall time of the following runs, with their median CPU time (what other
            processes on a busy machine cannot inflate)
  served    a GET of the signed link from the running web app (aiohttp on loopback, the digest
            read back from an embedded Redis, verified, rendered in a worker thread, compressed):
            median / max wall time

Asserts nothing; there is no target in the issue beyond "report the figures".
"""

from __future__ import annotations

import argparse
import asyncio
import gzip
import json
import statistics
import sys
import tempfile
import time
import zlib
from pathlib import Path
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import aiohttp  # noqa: E402

from bot.core.models import to_dict  # noqa: E402
from bot.report.page import render_page  # noqa: E402
from bot.runtime.services import Services  # noqa: E402
from handlers.web import bound_port, build_app, report_routes, start_server  # noqa: E402
from settings import Settings  # noqa: E402
from tests.reportdata import day  # noqa: E402

EXPIRES = 2_000_000_000


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms"


def bench_render(n: int, runs: int, lang: str) -> dict:
    digest = day(n, lang=lang)
    start = time.perf_counter()
    html = render_page(digest, EXPIRES)
    first = time.perf_counter() - start
    times, cpu = [], []
    for _ in range(runs):
        start, start_cpu = time.perf_counter(), time.process_time()
        render_page(digest, EXPIRES)
        times.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    raw = html.encode()
    stored = len(zlib.compress(json.dumps(to_dict(digest), ensure_ascii=False).encode(), 6))  # as Store.set_blob
    return {
        "stored": stored,
        "bytes": len(raw),
        "gzip": len(gzip.compress(raw, 6)),
        "first": first,
        "median": statistics.median(times),
        "max": max(times),
        "cpu": statistics.median(cpu),
    }


async def bench_served(n: int, runs: int, lang: str, data_dir: Path) -> dict:
    settings = Settings(
        _env_file=None,
        data_dir=data_dir,
        redis_prefix=f"benchreport{lang}:",
        public_base_url="https://digest.example.com",
        log_level="WARNING",
    )
    services = Services.build(settings)
    runner = await start_server(build_app(services.store, report_routes(services.reports)), "127.0.0.1", 0)
    try:
        link = urlsplit(await services.reports.publish(day(n, lang=lang)))
        url = f"http://127.0.0.1:{bound_port(runner)}{link.path}?{link.query}"
        times, sizes = [], set()
        async with aiohttp.ClientSession(auto_decompress=False) as http:
            for _ in range(runs + 1):
                start = time.perf_counter()
                async with http.get(url, headers={"Accept-Encoding": "gzip"}) as resp:
                    body = await resp.read()
                    assert resp.status == 200, resp.status
                times.append(time.perf_counter() - start)
                sizes.add(len(body))
        times = times[1:]  # the first includes the templates' compilation
        return {"median": statistics.median(times), "max": max(times), "wire": max(sizes)}
    finally:
        await runner.cleanup()
        await services.aclose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--commits", type=int, default=300)
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    print(f"report page, synthetic day of {args.commits} commits, {args.runs} runs each")
    with tempfile.TemporaryDirectory() as tmp:
        for lang in ("en", "zh"):
            r = bench_render(args.commits, args.runs, lang)
            s = asyncio.run(bench_served(args.commits, args.runs, lang, Path(tmp) / "data"))
            print(
                f"  {lang}: page {r['bytes']:,} bytes ({r['bytes'] / args.commits:,.0f} per commit), "
                f"gzip {r['gzip']:,} bytes (on the wire {s['wire']:,}); kept in Redis: {r['stored']:,} bytes"
            )
            print(
                f"      render_page: first {ms(r['first'])}, then median {ms(r['median'])} "
                f"(CPU {ms(r['cpu'])}), max {ms(r['max'])}"
            )
            print(
                f"      served (GET of the signed link, Redis + verify + render + gzip): "
                f"median {ms(s['median'])}, max {ms(s['max'])}"
            )


if __name__ == "__main__":
    main()
