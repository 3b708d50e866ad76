"""Level corrections on Feishu, end to end: signed, encrypted card callbacks into the real HTTP
endpoint, the real lark-oapi SDK against the fake Feishu OpenAPI, real Redis, a real git
repository. Asserted is what people see: the toast answering the click, the ephemeral card only
the tapper sees, the digest's cards as Feishu now holds them (patched), and later digests."""

from __future__ import annotations

import pytest

from tests.fakes.feishu_server import card_action_event, shown_markdown
from tests.shared.feishu import ALICE, GROUP, TOKEN, buttons, feishu_env, markdowns, rocket_repo


@pytest.fixture
def repo(tmp_path):
    return rocket_repo(tmp_path)


BOB = "ou_bob00000000000000000000000000001"


def level_value(card: dict, sha_start: str, direction: str) -> dict:
    found = [
        b["behaviors"][0]["value"]
        for b in buttons(card)
        if b["behaviors"][0].get("value", {}).get("action") == "level"
        and b["behaviors"][0]["value"]["dir"] == direction
        and b["behaviors"][0]["value"]["sha"].startswith(sha_start)
    ]
    assert len(found) == 1, found
    return found[0]


def said(env, before: int) -> str:
    """What the tapper alone was shown since `before` (ephemeral cards), as read."""
    cards = env.fake.ephemerals[before:]
    assert len(cards) == 1 and cards[0]["open_id"] in (ALICE, BOB) and cards[0]["chat_id"] == GROUP, cards
    return shown_markdown(cards[0]["card"]["elements"][0]["text"]["content"]).replace("\u200b", "")


async def tap(env, message, value: dict, *, operator: str = ALICE, event_id: str | None = None) -> dict:
    status, body = await env.post(
        card_action_event(
            value, chat_id=GROUP, message_id=message.message_id, operator=operator, token=TOKEN, event_id=event_id
        )
    )
    assert status == 200
    await env.settle()
    return body


async def test_too_high_on_a_medium_commit_in_a_chinese_group(make_settings, repo):
    async with feishu_env(make_settings, repo) as env:
        parent, replies = await env.digest()
        detail, _low = replies
        card = env.fake.card(detail)
        assert "🟡" in card["header"]["title"]["content"]
        labels = [b["text"]["content"] for b in buttons(card)]
        assert labels[-2:] == ["⬇️ 等级偏高", "⬆️ 等级偏低"]
        sha = level_value(card, "", "too_high")["sha"]

        before = len(env.fake.ephemerals)
        body = await tap(env, detail, level_value(card, "", "too_high"))
        assert body["toast"]["content"] == "正在记录你的纠正…"
        assert said(env, before).startswith(f"✅ 已记录：{sha[:7]} feat: add export --since flag")
        assert said(env, before).endswith("今后将显示为 🟢 低。")

        # the clicked card is patched: the new level, and who set it (a mention of the tapper)
        now = env.fake.card(detail)
        assert now["header"]["title"]["content"].startswith("🟢 ")
        assert f"✏️ 等级已由 <at id={ALICE}></at> 纠正为 🟢 低（原为 🟡 中）" in env.fake.markdown_of(detail)
        # …and the digest card's counts follow
        assert "🟡 中 0 | 🟢 低 3" in env.fake.markdown_of(parent)

        # the next digest of that day lists it with the low commits, corrected
        _status, _ = await env.say("digest 2026-01-28")
        await env.settle()
        parent2 = env.fake.top_level(GROUP)[-1]
        (low2,) = env.fake.thread(parent2.message_id)
        assert "🟡 中 0 | 🟢 低 3" in env.fake.markdown_of(parent2)
        assert f"<at id={ALICE}></at> 纠正为 🟢 低（原为 🟡 中）" in env.fake.markdown_of(low2)

    # a restart: a new bot on the same Redis (same settings: the same key prefix) still shows it
    async with feishu_env(make_settings, repo) as env:
        parent3, _ = await env.digest()
        assert "🟡 中 0 | 🟢 低 3" in env.fake.markdown_of(parent3)


async def test_low_commits_have_their_own_buttons_and_the_latest_tap_wins(make_settings, repo):
    async with feishu_env(make_settings, repo) as env:
        parent, (_detail, low) = await env.digest()
        card = env.fake.card(low)
        fix = next(v for v in (b["behaviors"][0].get("value", {}) for b in buttons(card)) if v.get("action") == "level")
        sha = fix["sha"]
        before = len(env.fake.ephemerals)
        await tap(env, low, level_value(card, sha, "too_low"))  # Alice: low → medium
        assert said(env, before).endswith("今后将显示为 🟡 中。")
        assert f"<at id={ALICE}></at> 纠正为 🟡 中（原为 🟢 低）" in env.fake.markdown_of(low)
        assert "🟡 中 2 | 🟢 低 1" in env.fake.markdown_of(parent)

        import asyncio

        await asyncio.sleep(1.05)  # corrections are timed to the second: Bob's is the later one
        before = len(env.fake.ephemerals)
        await tap(env, low, level_value(env.fake.card(low), sha, "too_low"), operator=BOB)  # medium → high
        assert said(env, before).endswith("今后将显示为 🔴 高。")
        assert f"<at id={BOB}></at> 纠正为 🔴 高（原为 🟢 低）" in env.fake.markdown_of(low)
        assert "🔴 高 1 | 🟡 中 1 | 🟢 低 1" in env.fake.markdown_of(parent)


async def test_end_of_scale_forged_and_repeated_clicks_record_nothing_more(make_settings, repo):
    async with feishu_env(make_settings, repo) as env:
        parent, (detail, low) = await env.digest()
        low_card = env.fake.card(low)
        low_sha = next(
            v for v in (b["behaviors"][0].get("value", {}) for b in buttons(low_card)) if v.get("action") == "level"
        )["sha"]

        before = len(env.fake.ephemerals)
        await tap(env, low, level_value(low_card, low_sha, "too_high"))
        assert said(env, before) == f"{low_sha[:7]} 已是最低等级（🟢 低），未记录任何内容。"
        assert not low.patches

        # a value naming a commit the clicked card does not show, and a direction no button has
        detail_value = level_value(env.fake.card(detail), "", "too_high")
        before = len(env.fake.ephemerals)
        await tap(env, detail, {**detail_value, "sha": low_sha})
        assert said(env, before).startswith(f"⚠️ 提交 {low_sha[:12]} 不在那条消息中")
        before = len(env.fake.ephemerals)
        await tap(env, detail, {**detail_value, "dir": "sideways"})
        assert said(env, before).startswith("⚠️ 这个等级按钮无效")
        assert not detail.patches

        # Feishu pushing the same callback again (same event id): one correction, one answer
        before = len(env.fake.ephemerals)
        for _ in range(2):
            await tap(env, detail, detail_value, event_id="ev_level_once")
        assert said(env, before).endswith("今后将显示为 🟢 低。")
        assert "🟡 中 0 | 🟢 低 3" in env.fake.markdown_of(parent)
        assert len(detail.patches) == 1
        assert "🟡 中 0 | 🟢 低 3" in markdowns(env.fake, [parent])
