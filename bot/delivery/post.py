"""Post a digest into a channel: one parent message (title, stats, headline, high items), then in
its thread one reply per high/medium commit, the dependency bots' lines (bot/digest/noise.py), the first
LOW_PER_MESSAGE low commits with one line saying how many more there are and where (the report
link), optionally the Markdown report as a file. A weekly roll-up (bot/digest/rollup.py) is the parent
alone.

Delivery is resumable: with a `progress_key`, the parent's id and how many thread messages went
out are written to Redis after each step, so a delivery interrupted by a crash or a platform
outage continues where it stopped instead of posting the parent twice.

The progress state, not the platform, decides whether a message may be sent again. Before each
send it records which step is being tried and when. A send whose outcome is unknown (a crash, a
timeout after Feishu accepted it) is re-sent with the same key only while the platform still
deduplicates that key (`send_dedupe_window`: Feishu's `uuid` lasts one hour). Later, the platform
reads the conversation back (`send_unless_posted`) and posts only what is not there: nothing
lost, nothing doubled. Only when it cannot read it back (a scope missing) would a re-send risk a
double, so then a thread reply is counted as sent (logged as possibly missing) and a parent ends
the delivery as `UncertainSend` — at most once, never twice.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from ..core.chat_platform import (
    BotUpdates,
    ChatPlatform,
    CommitDetail,
    DigestParent,
    LowCommits,
    MessageRef,
    Notice,
    OwnerPing,
    entries_at_least,
)
from ..core.codeowners_file import owner_key
from ..core.models import BotError, Digest, DigestEntry, Importance
from ..digest.noise import collapse
from ..digest.rollup import rollup
from ..render.labels import t
from ..render.upgrade import upgrade_report
from .posted import PostedMessages

log = logging.getLogger(__name__)

LOW_PER_MESSAGE = 15  # low commits listed in the thread; the rest are one line with the report link
OWNER_LINES = 10  # code owners told in a parent message; one more line counts the rest
PROGRESS_TTL = 7 * 86400
DEDUPE_MARGIN = 600.0  # seconds: a retry must reach the platform well inside its dedupe window


class UncertainSend(BotError):
    """A message may or may not have been posted, and the platform no longer deduplicates it."""


@dataclass(frozen=True)
class Plan:
    digest: Digest
    min_importance: str  # "high", "medium" or "low": the least important commit shown
    attach_report: bool
    # Publishes the report page and returns its link (None: no page); called once, just before
    # the parent is posted, so a resumed delivery does not publish again.
    report: Callable[[Digest], Awaitable[str | None]] | None = None
    bots: str = "collapse"  # collapse | show (bot/digest/noise.py)
    week: dict[str, str] | None = None  # a weekly roll-up: sha → area of its commits (bot/digest/rollup.py)
    # A range of refs: its parent is the upgrade report (bot/render/upgrade.py), features and fixes
    # grouped by these areas (sha → area); its thread is a digest's.
    upgrade: dict[str, str] | None = None
    files_supported: bool = False  # the platform can attach the Markdown report
    empty_hint: str = ""  # said after "no new commits" (on demand: what to try instead)
    # The conversation's code-owner mappings (bot/channels/owner_mentions.py): owner (lower case) → (kind, id).
    owner_map: Mapping[str, tuple[str, str]] = field(default_factory=dict)


def more_how(plan: Plan, report_url: str | None) -> str:
    """Where the commits a message does not list can be read."""
    if report_url:
        return "link"
    if plan.attach_report and plan.files_supported:
        return "attached"
    return "file_on" if plan.files_supported else "page"


def parent_content(plan: Plan, report_url: str | None):
    d = plan.digest
    if plan.week is not None:
        return rollup(
            d,
            plan.week,
            min_importance=plan.min_importance,
            bots=plan.bots,
            report_url=report_url,
            more_how=more_how(plan, report_url),
        )
    pings = owner_pings(entries_at_least(d.entries, plan.min_importance), plan.owner_map)
    told, more = tuple(pings[:OWNER_LINES]), max(0, len(pings) - OWNER_LINES)
    if plan.upgrade is not None:  # a range tells the owners of its high and medium commits too
        return replace(upgrade_report(d, plan.upgrade), report_url=report_url, owners=told, more_owners=more)
    return DigestParent(d, plan.min_importance, report_url, told, more)


def owner_pings(entries: Sequence[DigestEntry], owner_map: Mapping[str, tuple[str, str]]) -> list[OwnerPing]:
    """Each owner of the high and medium commits once, with how many of each touch its paths:
    the mapped owners first, then the most concerned. Low commits tell no one."""
    counts: dict[str, list] = {}
    for e in entries:
        if e.importance is Importance.LOW:
            continue
        for owner in e.owners:
            held = counts.setdefault(owner_key(owner), [owner, 0, 0])
            held[1 if e.importance is Importance.HIGH else 2] += 1
    pings = [OwnerPing(o, h, m, *owner_map.get(k, ("", ""))) for k, (o, h, m) in counts.items()]
    return sorted(pings, key=lambda p: (not p.kind, -p.high, -p.medium, p.owner.lower()))


def thread_contents(plan: Plan, report_url: str | None = None) -> list:
    """The thread replies, in order: high then medium commits in full, the bots' lines, then the
    first LOW_PER_MESSAGE low ones grouped with one line for the rest. A roll-up has none."""
    if plan.week is not None:
        return []
    d = plan.digest
    wanted, bots = collapse(entries_at_least(d.entries, plan.min_importance), plan.bots)
    notable = sorted((e for e in wanted if e.importance is not Importance.LOW), key=lambda e: e.importance.rank)
    replies: list = [CommitDetail(d, e) for e in notable]  # stable: newest first within a level
    if bots:
        replies.append(BotUpdates(d, tuple(bots)))
    low = tuple(e for e in wanted if e.importance is Importance.LOW)
    if low:
        more = max(0, len(low) - LOW_PER_MESSAGE)
        replies.append(
            LowCommits(
                d,
                low[:LOW_PER_MESSAGE],
                total=len(low),
                more=more,
                more_how=more_how(plan, report_url) if more else "",
                report_url=report_url,
            )
        )
    return replies


async def deliver_digest(
    platform: ChatPlatform,
    store,
    channel: str,
    plan: Plan,
    *,
    replace_ref: MessageRef | None = None,
    thread: str | None = None,
    progress_key: str | None = None,
    now: Callable[[], float] = time.time,
) -> MessageRef | None:
    """Post (or finish posting) a digest. Returns the parent message, None for a skipped empty day.
    `now` (epoch seconds) dates the attempts recorded in the progress state."""
    state = (await store.get_json(progress_key) if progress_key else None) or {}
    window = platform.send_dedupe_window

    def unsafe_to_retry(step) -> bool:
        """`step` was tried before with an unknown outcome, too long ago for a keyed re-send."""
        tried = state.get("trying") or {}
        return window is not None and tried.get("step") == step and now() - float(tried["at"]) >= window - DEDUPE_MARGIN

    async def send_checked(step, content, thread_ref) -> MessageRef | None:
        """After the dedupe window: the platform looks the message up before sending it; None
        when it cannot tell whether the message is there."""
        return await platform.send_unless_posted(
            channel, content, thread=thread_ref, key=f"{progress_key}:{step}", since=float(state["trying"]["at"])
        )  # set: unsafe_to_retry said so

    async def trying(step) -> None:
        if progress_key:
            tried = state.get("trying") or {}
            if tried.get("step") != step:  # a retry within the window keeps the first attempt's time
                state["trying"] = {"step": step, "at": now()}
            await _save(store, progress_key, state)

    posted = PostedMessages(store)  # what each message shows, for a level tap to redraw it
    d = plan.digest
    if not d.entries:
        line = t(d.lang, "empty", repo=d.repo, label=d.window.label, tz=d.window.tz)
        if plan.empty_hint:
            line += ("" if d.lang == "zh" else " ") + plan.empty_hint
        notice = Notice(line, lang=d.lang)
        return await _post_or_replace(platform, channel, notice, replace_ref, thread)

    if state.get("parent"):
        parent = MessageRef(channel, state["parent"], thread)
        report_url = state.get("report")
    else:
        report_url = await plan.report(d) if plan.report else None
        content = parent_content(plan, report_url)
        if unsafe_to_retry("parent"):
            checked = await send_checked("parent", content, thread)
            if checked is None:
                raise UncertainSend(
                    f"the digest of {d.repo} for {d.window.label} may already be in the channel "
                    f"(its first send had no answer over an hour ago, and the channel could not "
                    f"be read back); not posting it again"
                )
            parent = checked
        else:
            if replace_ref is None:
                await trying("parent")
            parent = await _post_or_replace(
                platform, channel, content, replace_ref, thread, key=f"{progress_key}:parent" if progress_key else None
            )
        await posted.remember(platform.name, parent, content, thread)
        state = {"parent": parent.id, "sent": 0, "report": report_url}  # the thread links it too
        await _save(store, progress_key, state)

    root = parent.thread_root
    replies = thread_contents(plan, report_url)
    for index in range(state["sent"], len(replies)):
        if unsafe_to_retry(index):
            if (checked_reply := await send_checked(index, replies[index], root)) is not None:
                await posted.remember(platform.name, checked_reply, replies[index], root)
            else:
                log.warning(
                    "thread message %d of %s %s in %s may be missing: its send had no answer, the "
                    "platform no longer deduplicates it and the thread could not be read back, so it "
                    "is not sent again",
                    index + 1,
                    d.repo,
                    d.window.label,
                    channel,
                )
        else:
            await trying(index)
            ref = await platform.send(
                channel, replies[index], thread=root, key=f"{progress_key}:{index}" if progress_key else None
            )
            await posted.remember(platform.name, ref, replies[index], root)
        state["sent"] = index + 1  # the "trying" record left behind names a step below "sent": never read
        await _save(store, progress_key, state)

    if plan.attach_report and platform.supports_files and not state.get("file"):
        from ..render.markdown import render_report

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
