"""A published report: the digest's data, compressed, under `report:{id}` for REPORT_LINK_TTL.

The data (not the HTML) is kept, so a page is always drawn by the current templates and the
stored form is the digest's own JSON shape (`models.to_dict`), which the rest of the bot reads.

A page published for a conversation of one workspace of a platform serving several keeps that
workspace's scope under `report:{id}:scope` (same expiry): its level-correction form records into,
and the page shows, that workspace's corrections (and the shared ones), never another's. No key:
the shared scope "" (a single-workspace conversation, the CLI) — the page of before.
"""

from __future__ import annotations

from ..core.models import Digest, digest_from_dict, to_dict


def _key(store, report_id: str) -> str:
    return store.k("report", report_id)


async def keep(store, report_id: str, digest: Digest, ttl: int) -> None:
    await store.set_blob(_key(store, report_id), to_dict(digest), ttl=ttl)


def _scope_key(store, report_id: str) -> str:
    return store.k("report", report_id, "scope")


async def keep_scope(store, report_id: str, scope: str, ttl: int) -> None:
    """The workspace scope of the conversation the page was published for (nothing for "")."""
    if scope:
        await store.set_json(_scope_key(store, report_id), scope, ttl=ttl)


async def scope(store, report_id: str) -> str:
    return str(await store.get_json(_scope_key(store, report_id)) or "")


async def load(store, report_id: str) -> Digest | None:
    data = await store.get_blob(_key(store, report_id))
    return digest_from_dict(data) if data else None


async def remaining(store, report_id: str) -> int | None:
    """Seconds the report's link has left (None: gone): an improved copy keeps its expiry."""
    return await store.ttl(_key(store, report_id))
