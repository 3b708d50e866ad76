"""One message sent once under a key, across crashes and restarts, and the run around such sends
done once under a lease (a watch's day, bot/watch/runs.py; an alert poll, bot/alerts/runs.py).

Before a send, the state under `key` records that it is being tried and when; after it, that it
is done (and the message's id). A run killed in between is run again and re-sends with the same
key, which the platform recognises while it deduplicates (Slack: the key in the message's
metadata; Feishu: the `uuid`, for an hour); after that the conversation is read back, and a
message that cannot be found out is not sent again. The runs hold a lease while they send, so a
state found "trying" is always a dead run's.
"""

from __future__ import annotations

import asyncio
import logging
import os
import uuid
from collections.abc import Awaitable, Callable

from ..channels.threads import Threads
from ..core.chat_platform import MessageRef
from ..core.models import BotError, Digest, RetryLater
from ..core.store import Store, StoreUnavailable
from .post import DEDUPE_MARGIN
from .posted import PostedMessages
from .spec import MAX_ATTEMPTS, STORE_RETRY

log = logging.getLogger(__name__)


async def send_once(
    store: Store,
    threads: Threads,
    platform,
    channel: str,
    content,
    key: str,
    *,
    now: Callable[[], float],
    ttl: int,
    what: str,
    digest: Digest | None = None,
    state: dict | None = None,
    mark: dict | None = None,
) -> MessageRef | None:
    """Send `content` once under `key`; None when it was sent before or cannot be known to be
    missing. A commit message (`digest` given) has its thread remembered for questions and its
    content for its level buttons. `state`: the key's state as the caller already read it (used
    when Redis has none); `mark`: fields kept with the state (an alert's `alerted`); `what`
    names the message in the log."""
    state = await store.get_json(key) or state or {}
    if state.get("done"):
        return None
    mark = mark or {}
    at = now()
    window = platform.send_dedupe_window
    if state.get("at") is not None and window is not None and at - float(state["at"]) >= window - DEDUPE_MARGIN:
        ref = await platform.send_unless_posted(channel, content, key=key, since=float(state["at"]))
        if ref is None:
            log.warning(
                "%s %s may be missing: its send had no answer, the platform no longer deduplicates it "
                "and the conversation could not be read back; not sent again",
                what,
                key,
            )
    else:
        if state.get("at") is None:
            await store.set_json(key, {"at": at, **mark}, ttl=ttl)  # trying, before the send
        ref = await platform.send(channel, content, key=key)
    if ref is not None and digest is not None:
        await threads.remember_digest(platform.name, channel, ref.thread_root, digest.repo_id, digest)
        await PostedMessages(store).remember(platform.name, ref, content, None)  # its level buttons redraw it
    await store.set_json(key, {"done": True, "id": ref.id if ref else None, "at": at, **mark}, ttl=ttl)
    return ref


async def keep_lease(store: Store, lock: str, owner: str, lease: int) -> None:
    """Renew the run's lease every third of it until cancelled; a failed renewal is tried again."""
    while True:
        await asyncio.sleep(lease / 3)
        try:
            await store.renew(lock, owner, lease)
        except BotError:
            continue


async def run_once(
    store: Store,
    work: Callable[[], Awaitable[str]],
    *,
    lock: str,
    busy: str,
    done_key: str,
    attempts_key: str,
    ttl: int,
    lease: int,
    retry_after: float,
    now: Callable[[], str],
    what: str,
) -> str:
    """Run `work` once, holding `lock` while it runs; what happened, for logs and tests.

    Already done (`done_key`): "already done". Another runner holds the lock: RetryLater(`busy`).
    Redis away: RetryLater, to resume later. Any other failure: RetryLater after `retry_after` ×
    2^attempts, and after MAX_ATTEMPTS the run is closed as "gave up (…)" (logged as `what`)."""
    owner = f"{os.getpid()}-{uuid.uuid4().hex[:8]}"
    if not await store.lease(lock, owner, lease):
        raise RetryLater(busy, lease / 2)
    keeper = asyncio.create_task(keep_lease(store, lock, owner, lease))
    try:
        if await store.get_json(done_key):
            return "already done"
        outcome = await work()
        await store.set_json(done_key, {"at": now()}, ttl=ttl)
        return outcome
    except (asyncio.CancelledError, RetryLater):
        raise
    except StoreUnavailable:
        raise RetryLater("storage unavailable", STORE_RETRY) from None
    except Exception as exc:  # retried a few times, then logged and closed
        attempts = await store.incr(attempts_key, ttl)
        if not isinstance(exc, BotError):
            log.exception("%s failed", what)
        if attempts < MAX_ATTEMPTS:
            raise RetryLater(f"failed ({exc}); will retry", retry_after * 2**attempts) from None
        await store.set_json(done_key, {"failed": str(exc)}, ttl=ttl)
        return f"gave up ({exc})"
    finally:
        keeper.cancel()
        try:
            await store.release(lock, owner)
        except BotError:
            pass  # it lapses by itself
