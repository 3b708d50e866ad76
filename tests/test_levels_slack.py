"""Level corrections on Slack, end to end: signed block actions into the real endpoint, the real
slack_sdk/Bolt against the fake Slack Web API, real Redis, a real git repository. What is asserted
is what people see: the tapper's ephemeral sentence, the digest messages as Slack now holds them
(chat.update), and the digests posted afterwards — also by a restarted bot on the same Redis."""

from __future__ import annotations

import asyncio
import json

from bot.render import slack as R
from tests.fakes.slack_server import FakeSlack
from tests.shared.slack import (
    CHANNEL,
    HIGH_TITLE,
    LOW_TITLE,
    MEDIUM_TITLE,
    buttons,
    by_title,
    digest_thread,
    shown,
    shown_eph,
)

ANA, BOB = "U0ANA", "U0BOB"


async def tap(
    bot,
    slack: FakeSlack,
    message,
    direction: str,
    *,
    user: str = ANA,
    root: str | None = None,
    value: str | None = None,
) -> str:
    """Press a commit's "level too high/low" button in `message`; returns the sentence the tapper
    alone was shown."""
    before = len(slack.ephemerals)
    button = buttons(message)[f"digest_level_{direction}"]
    status, _ = await bot.sender.block_action(
        f"digest_level_{direction}",
        value=value or button["value"],
        user=user,
        message_ts=message.ts,
        thread_ts=root or message.thread_ts,
    )
    assert status == 200
    await bot.settle()
    said = slack.ephemerals[before:]
    assert len(said) == 1 and said[0]["user"] == user, said
    return R.unescape(shown_eph(said[0]))


def now(slack: FakeSlack, message):
    return slack.message(CHANNEL, message.ts)


async def test_too_high_on_a_medium_commit_corrects_it_everywhere_from_then_on(make_bot, slack, widgets):
    bot = await make_bot()
    parent, replies = await digest_thread(bot, slack)
    medium = by_title(replies, MEDIUM_TITLE)
    assert "🟡 medium 1 | 🟢 low 1" in shown(parent)

    said = await tap(bot, slack, medium, "too_high")
    assert said == f"✅ Recorded: {widgets.shas['medium'][:7]} {MEDIUM_TITLE} will be shown as 🟢 Low from now on."

    # the tapped message shows the new level and who set it; the parent's counts follow
    updated = now(slack, medium)
    assert updated.edits == 1
    assert shown(updated).startswith("🟢 ")
    assert f"✏️ Level corrected to 🟢 Low by <@{ANA}> (was 🟡 Medium)" in shown(updated)
    assert "*⚡ Importance*: 🟢 Low" in shown(updated)
    assert "3 commits on 2026-01-28 | 🔴 high 1 | 🟡 medium 0 | 🟢 low 2" in shown(now(slack, parent))
    assert slack.block_errors == []

    # the next digest of that day (the cached one) shows it too: a low commit now, with who said so
    parent2, replies2 = await digest_thread(bot, slack)
    assert "🟡 medium 0 | 🟢 low 2" in shown(parent2)
    low = by_title(replies2, LOW_TITLE)
    assert "🟢 Low importance (2)" in shown(low)
    assert MEDIUM_TITLE in shown(low) and f"Level corrected to 🟢 Low by <@{ANA}> (was 🟡 Medium)" in shown(low)
    assert all(MEDIUM_TITLE not in shown(r) for r in replies2 if r is not low)  # no detail message of its own

    # a restart: a new bot process on the same Redis shows it still
    restarted = await make_bot()
    parent3, _ = await digest_thread(restarted, slack)
    assert "🟡 medium 0 | 🟢 low 2" in shown(parent3)


async def test_the_latest_tap_wins_for_one_person_and_between_people(make_bot, slack, widgets):
    bot = await make_bot()
    parent, replies = await digest_thread(bot, slack)
    high = by_title(replies, HIGH_TITLE)

    assert "will be shown as 🟡 Medium" in await tap(bot, slack, high, "too_high")  # Ana: high → medium
    assert "will be shown as 🔴 High" in await tap(bot, slack, now(slack, high), "too_low")  # Ana again: her latest
    assert "✏️" not in shown(now(slack, high))  # back at the analysis's own level: nothing to say
    assert "🔴 high 1 | 🟡 medium 1 | 🟢 low 1" in shown(now(slack, parent))

    await tap(bot, slack, now(slack, high), "too_high", user=ANA)  # high → medium (Ana)
    await asyncio.sleep(1.05)  # corrections are timed to the second: Bob's is the later one
    assert "will be shown as 🟢 Low" in await tap(bot, slack, now(slack, high), "too_high", user=BOB)
    assert f"Level corrected to 🟢 Low by <@{BOB}> (was 🔴 High)" in shown(now(slack, high))
    assert "🔴 high 0 | 🟡 medium 1 | 🟢 low 2" in shown(now(slack, parent))
    parent2, _ = await digest_thread(bot, slack)
    assert "🔴 high 0 | 🟡 medium 1 | 🟢 low 2" in shown(parent2)


async def test_a_tap_at_the_end_of_the_scale_records_nothing(make_bot, slack, widgets):
    bot = await make_bot()
    parent, replies = await digest_thread(bot, slack)
    high = by_title(replies, HIGH_TITLE)
    said = await tap(bot, slack, high, "too_low")
    assert said == f"{widgets.shas['high'][:7]} is already at the highest level (🔴 High): nothing recorded."
    assert now(slack, high).edits == 0
    # "too high" on a low commit (from a message drawn before someone else lowered it, say)
    low = by_title(replies, LOW_TITLE)
    before = len(slack.ephemerals)
    block = next(
        b for b in low.blocks if b["type"] == "actions" and b["elements"][0]["action_id"] == "digest_level_menu"
    )
    await bot.sender.block_action(
        "digest_level_menu",
        selected=f"too_high:{widgets.shas['low']}",
        block_id=block["block_id"],
        message_ts=low.ts,
        thread_ts=parent.ts,
        user=ANA,
    )
    await bot.settle()
    assert shown_eph(slack.ephemerals[before]) == (
        f"{widgets.shas['low'][:7]} is already at the lowest level (🟢 Low): nothing recorded."
    )
    parent2, _ = await digest_thread(bot, slack)
    assert "🔴 high 1 | 🟡 medium 1 | 🟢 low 1" in shown(parent2)


async def test_the_low_commits_menu_raises_a_low_commit(make_bot, slack, widgets):
    bot = await make_bot()
    parent, replies = await digest_thread(bot, slack)
    low = by_title(replies, LOW_TITLE)
    block = next(
        b for b in low.blocks if b["type"] == "actions" and b["elements"][0]["action_id"] == "digest_level_menu"
    )
    groups = block["elements"][0]["option_groups"]
    assert [g["label"]["text"] for g in groups] == ["Level too low"]  # a low commit can only go up
    option = groups[0]["options"][0]
    assert option["value"] == f"too_low:{widgets.shas['low'][:12]}" and LOW_TITLE[:20] in option["text"]["text"]
    await bot.sender.block_action(
        "digest_level_menu",
        selected=option["value"],
        block_id=block["block_id"],
        message_ts=low.ts,
        thread_ts=parent.ts,
        user=ANA,
    )
    await bot.settle()
    assert "will be shown as 🟡 Medium from now on." in shown_eph(slack.ephemerals[-1])
    line = [x for x in shown(now(slack, low)).splitlines() if LOW_TITLE in x]
    assert line and line[0].startswith("🟡 ")
    assert f"Level corrected to 🟡 Medium by <@{ANA}> (was 🟢 Low)" in shown(now(slack, low))
    assert "🟡 medium 2 | 🟢 low 0" in shown(now(slack, parent))
    # redrawn, the menu offers it both ways now
    block = next(
        b
        for b in now(slack, low).blocks
        if b["type"] == "actions" and b["elements"][0]["action_id"] == "digest_level_menu"
    )
    assert [g["label"]["text"] for g in block["elements"][0]["option_groups"]] == ["Level too high", "Level too low"]


async def test_forged_or_repeated_taps_record_nothing_more(make_bot, slack, widgets):
    bot = await make_bot()
    parent, replies = await digest_thread(bot, slack)
    medium, high = by_title(replies, MEDIUM_TITLE), by_title(replies, HIGH_TITLE)
    parent_edits = now(slack, parent).edits

    # a value naming a commit the tapped message does not show
    value = json.loads(buttons(medium)["digest_level_too_high"]["value"])
    forged = json.dumps({**value, "sha": widgets.shas["high"]})
    said = await tap(bot, slack, medium, "too_high", value=forged)
    assert said == (
        f"⚠️ Commit {widgets.shas['high'][:12]} is not in that message, so its level cannot be "
        "corrected there: nothing recorded."
    )
    # a direction that does not exist (a menu option no menu of ours holds)
    before = len(slack.ephemerals)
    low = by_title(replies, LOW_TITLE)
    block = next(
        b for b in low.blocks if b["type"] == "actions" and b["elements"][0]["action_id"] == "digest_level_menu"
    )
    await bot.sender.block_action(
        "digest_level_menu",
        selected=f"sideways:{widgets.shas['low']}",
        block_id=block["block_id"],
        message_ts=low.ts,
        thread_ts=parent.ts,
    )
    await bot.settle()
    assert shown_eph(slack.ephemerals[before]).startswith("⚠️ That level button is not one of mine")
    # a tap naming a message that is no digest message of ours
    before = len(slack.ephemerals)
    await bot.sender.block_action(
        "digest_level_too_high",
        value=buttons(medium)["digest_level_too_high"]["value"],
        message_ts="1.000099",
        thread_ts=parent.ts,
        user=ANA,
    )
    await bot.settle()
    assert shown_eph(slack.ephemerals[before]).startswith("⚠️ That message is too old to correct from")
    assert now(slack, medium).edits == 0 and now(slack, parent).edits == parent_edits  # nothing redrawn

    assert "will be shown as 🟡 Medium" in await tap(bot, slack, high, "too_high")  # a genuine one

    # Slack delivering the same click twice: it counts once
    body = bot.sender.block_action_body(
        "digest_level_too_high",
        value=buttons(medium)["digest_level_too_high"]["value"],
        message_ts=medium.ts,
        thread_ts=parent.ts,
        user=ANA,
    )
    before = len(slack.ephemerals)
    for _ in range(2):
        status, _ = await bot.sender.post(body, "application/x-www-form-urlencoded")
        assert status == 200
    await bot.settle()
    assert len(slack.ephemerals) == before + 1 and "will be shown as 🟢 Low" in shown_eph(slack.ephemerals[-1])
    parent2, _ = await digest_thread(bot, slack)
    assert "🔴 high 0 | 🟡 medium 1 | 🟢 low 2" in shown(parent2)  # high → medium, medium → low: once each


async def test_a_chinese_channel_taps_and_reads_in_chinese(make_bot, slack, widgets):
    bot = await make_bot()
    status, _ = await bot.sender.slash("config lang zh")
    assert status == 200
    await bot.settle()
    _parent, replies = await digest_thread(bot, slack)
    medium = by_title(replies, MEDIUM_TITLE)
    labels = [e["text"]["text"] for b in medium.blocks if b["type"] == "actions" for e in b["elements"]]
    assert labels[-2:] == ["⬇️ 等级偏高", "⬆️ 等级偏低"]
    said = await tap(bot, slack, medium, "too_high")
    assert said == f"✅ 已记录：{widgets.shas['medium'][:7]} {MEDIUM_TITLE} 今后将显示为 🟢 低。"
    assert f"✏️ 等级已由 <@{ANA}> 纠正为 🟢 低（原为 🟡 中）" in shown(now(slack, medium))
