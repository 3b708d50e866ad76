"""The new contents (bot lines, the roll-up, the low overflow line) as Slack and Feishu render them:
hostile commit text and bot names stay inert, the only links are the bot's own, and a big week
stays inside each platform's limits (the fakes' checks)."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, date, datetime, timedelta

from bot.core.chat_platform import BotGroup, BotUpdates, LowCommits, WeekRollup
from bot.core.models import DigestEntry, Importance
from bot.core.window import week_window
from bot.render import feishu as F
from bot.render import slack as S
from bot.render.text import render_text
from tests.shared import feishu_render as FR
from tests.shared import slack_render as SR

REPORT = "https://digest.example.com/r/abc?exp=1&sig=x"


def test_slack_bot_lines_and_the_rollup_are_inert_and_fit():
    evil_bot = "<!channel>[bot]"
    bot = DigestEntry(
        SR.commit(3, title=SR.EVIL_TITLE, author=evil_bot),
        SR.analysis(Importance.LOW),
        updates=("<!here> 1 → 2", "[x](https://evil.example) 3 → 4"),
    )
    high = DigestEntry(SR.commit(1, title=SR.EVIL_TITLE), SR.analysis(Importance.HIGH, reason="<!everyone> why"))
    low = DigestEntry(SR.commit(2, title=SR.EVIL_TITLE), SR.analysis(Importance.LOW))
    d = SR.digest([high, low, bot])
    group = BotGroup(evil_bot, (bot,))
    contents = [
        BotUpdates(d, (group,)),
        LowCommits(d, (low,), total=9, more=8, more_how="link", report_url=REPORT),
        LowCommits(d, (low,), total=9, more=8, more_how="page"),
        WeekRollup(d, (("<!here>/x", (high,)),), (group,), 5, "link", REPORT),
    ]
    for content in contents:
        payloads = S.render(content, thread="1.1")
        SR.check(payloads)
        text = json.dumps(payloads, ensure_ascii=False)
        SR.assert_inert(text)
        assert "<!channel>" in S.unescape(text)  # still readable
        links = [x.split("|")[0] for x in __import__("re").findall(r"<(https?://[^>]+)>", text)]
        assert all(u.startswith(("https://github.com/acme/widgets", "https://digest.example.com/r/")) for u in links)
    shown = S.unescape(json.dumps(S.render(contents[1]), ensure_ascii=False))
    assert f"… and 8 more of low importance — full report: <{REPORT}|📄 Full report>" in shown  # (unescaped)
    assert "🟢 Low importance (9)" in shown


def test_feishu_bot_lines_and_the_rollup_are_inert_and_fit():
    evil_bot = FR.EVIL + "[bot]"
    bot = DigestEntry(
        replace(FR.commit(3, title=FR.EVIL), author=evil_bot), FR.analysis(Importance.LOW), updates=(FR.EVIL,)
    )
    high = DigestEntry(FR.commit(1, title=FR.EVIL), FR.analysis(Importance.HIGH, importance_reason=FR.EVIL))
    d = FR.digest([high, bot], lang="zh")
    group = BotGroup(evil_bot, (bot,))
    cards = []
    for content in (
        BotUpdates(d, (group,)),
        WeekRollup(d, ((FR.EVIL, (high,)),), (group,), 5, "page"),
        LowCommits(d, (bot,), total=2, more=1, more_how="page"),
    ):
        rendered = F.render_cards(content, thread="om_t", lang="zh")
        FR.assert_fits(rendered)
        cards += rendered
    FR.assert_inert(cards)  # the only links: the commits'
    assert "click me" in FR.markdown_of(cards)
    linked = F.render_cards(LowCommits(d, (bot,), total=2, more=1, more_how="link", report_url=REPORT))
    assert REPORT in FR.built_links(linked)  # …and the report page's, where there is one


def test_a_big_week_stays_one_message_until_slack_and_feishu_say_otherwise():
    t0 = datetime(2026, 1, 26, 2, tzinfo=UTC)
    entries = tuple(
        DigestEntry(
            replace(SR.commit(i, title=f"feat: change number {i} " + "x" * 60), committed_at=t0 + timedelta(hours=i)),
            SR.analysis(Importance.MEDIUM if i % 4 else Importance.HIGH),
        )
        for i in range(60)
    )
    d = replace(SR.digest(entries), window=week_window(date(2026, 1, 26), "UTC"))
    areas = tuple((f"crates/area-{a}", entries[a::6]) for a in range(6))
    week = WeekRollup(d, areas, (), 200, "link", REPORT)
    payloads = S.render(week)
    SR.check(payloads)  # every payload within Slack's limits (continued, never cut)
    shown = S.unescape(json.dumps(payloads, ensure_ascii=False))
    assert all(f"change number {i} " in shown for i in range(60))
    cards = F.render_cards(replace(week, digest=replace(d, repo_url=None)))
    FR.assert_fits(cards)
    text = render_text(week)
    assert text.count("\n  🟡 ") + text.count("\n  🔴 ") == 60 and "Low importance, not listed: 200" in text


def test_the_report_page_and_markdown_report_say_the_filter():
    from bot.render.markdown import render_report
    from bot.report.page import render_page

    d = replace(
        SR.digest([DigestEntry(SR.commit(1), SR.analysis(Importance.MEDIUM))]),
        paths=("crates/uv-resolver/**",),
        filtered_out=79,
    )
    assert "🔎 paths crates/uv-resolver/** — 1 of 80 commits" in render_page(d, 2_000_000_000)
    assert "> 🔎 paths crates/uv-resolver/\\*\\* — 1 of 80 commits" in render_report([d])
