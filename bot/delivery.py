"""Post a digest into a channel: one parent message (title, stats, headline, high items), then in
its thread one reply per high/medium commit and the low ones grouped, optionally the Markdown
report as a file.

Delivery is resumable: with a `progress_key`, the parent's id and how many thread messages went
out are written to Redis after each step, so a delivery interrupted by a crash or a platform
outage continues where it stopped instead of posting the parent twice.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass

from .models import Digest, Importance
from .platform import (ChatPlatform, CommitDetail, DigestParent, LowCommits, MessageRef, Notice,
                       entries_at_least)
from .render.labels import t

log = logging.getLogger(__name__)

LOW_PER_MESSAGE = 15  # low commits per grouped message: compact, and well inside block/card limits
PROGRESS_TTL = 7 * 86400


@dataclass(frozen=True)
class Plan:
    digest: Digest
    min_importance: str = "low"
    attach_report: bool = False


def thread_contents(plan: Plan) -> list:
    """The thread replies, in order: high then medium commits in full, then low ones grouped."""
    d = plan.digest
    wanted = entries_at_least(d.entries, plan.min_importance)
    notable = sorted((e for e in wanted if e.importance is not Importance.LOW), key=lambda e: e.importance.rank)
    replies: list = [CommitDetail(d, e) for e in notable]  # stable: newest first within a level
    low = tuple(e for e in wanted if e.importance is Importance.LOW)
    for i in range(0, len(low), LOW_PER_MESSAGE):
        replies.append(LowCommits(d, low[i:i + LOW_PER_MESSAGE]))
    return replies


async def deliver_digest(platform: ChatPlatform, store, channel: str, plan: Plan, *,
                         replace_ref: MessageRef | None = None, thread: str | None = None,
                         progress_key: str | None = None) -> MessageRef | None:
    """Post (or finish posting) a digest. Returns the parent message, None for a skipped empty day."""
    state = (await store.get_json(progress_key) if progress_key else None) or {}
    d = plan.digest
    if not d.entries:
        notice = Notice(t(d.lang, "empty", repo=d.repo, label=d.window.label, tz=d.window.tz), lang=d.lang)
        return await _post_or_replace(platform, channel, notice, replace_ref, thread)

    if state.get("parent"):
        parent = MessageRef(channel, state["parent"], thread)
    else:
        parent = await _post_or_replace(platform, channel, DigestParent(d, plan.min_importance), replace_ref, thread,
                                        key=f"{progress_key}:parent" if progress_key else None)
        state = {"parent": parent.id, "sent": 0}
        await _save(store, progress_key, state)

    root = parent.thread_root
    replies = thread_contents(plan)
    for index in range(state.get("sent", 0), len(replies)):
        await platform.send(channel, replies[index], thread=root,
                            key=f"{progress_key}:{index}" if progress_key else None)
        state["sent"] = index + 1
        await _save(store, progress_key, state)

    if plan.attach_report and platform.supports_files and not state.get("file"):
        from .render.markdown import render_report

        name = f"{d.repo.replace('/', '_')}-{d.window.label}.md"
        await platform.upload(channel, root, name, render_report([d]), title=name)
        state["file"] = True
        await _save(store, progress_key, state)
    return parent


async def _post_or_replace(platform, channel, content, replace_ref, thread, key=None) -> MessageRef:
    if replace_ref is not None:
        return await platform.update(replace_ref, content)
    return await platform.send(channel, content, thread=thread, key=key)


async def _save(store, key: str | None, state: dict) -> None:
    if key:
        await store.set_json(key, state, ttl=PROGRESS_TTL)
