"""Block Kit rendering (pure): every payload within every limit, nothing dropped, untrusted text inert."""

from __future__ import annotations

import json
import re
from datetime import date

import pytest

from bot.core.chat_platform import (
    AnswerHeader,
    CommitChoice,
    CommitDetail,
    CommitDetails,
    DigestParent,
    LowCommits,
    Notice,
)
from bot.core.models import Analysis, ChangeType, Coverage, Digest, DigestEntry, Importance, Insights
from bot.core.window import day_window
from bot.render import slack as R
from tests.fakes.slack_server import check_blocks
from tests.shared.slack_render import (
    EVIL_TITLE,
    analysis,
    assert_inert,
    check,
    commit,
    digest,
    sha,
    squash,
    visible,
)


def raw(payloads: list[dict]) -> str:
    return json.dumps(payloads, ensure_ascii=False)


# --- limits -------------------------------------------------------------------------------------


def test_sixty_high_commits_digest_parent_splits_and_keeps_every_item():
    entries = [
        DigestEntry(commit(n), analysis(Importance.HIGH, reason=f"Reason {n} " + "because " * 20)) for n in range(60)
    ]
    payloads = R.render(DigestParent(digest(entries)))
    check(payloads)
    assert len(payloads) > 1
    seen = visible(payloads)
    for n in range(60):
        assert squash(f"feat: change number {n}") in seen and squash(f"Reason {n} ") in seen
    assert "(continued 2/" in payloads[1]["text"]
    assert payloads[0]["blocks"][0]["type"] == "header"
    assert "<https://github.com/acme/widgets/commit/" + sha(7) + "|`" in raw(payloads)


def test_sixty_low_commits_get_a_menu_per_payload():
    entries = [DigestEntry(commit(n), analysis(Importance.LOW, summary=f"Summary {n}.")) for n in range(60)]
    d = digest(entries)
    payloads = R.render(LowCommits(d, tuple(entries)), thread="1700000000.000100")
    check(payloads)
    seen = visible(payloads)
    menus = [e for p in payloads for b in p["blocks"] if b["type"] == "actions" for e in b["elements"]]
    options = [o["value"] for m in menus for g in m["option_groups"] for o in g["options"]]
    for n in range(60):
        assert squash(f"feat: change number {n}") in seen and squash(f"Summary {n}.") in seen
        assert f"ask:{sha(n)}" in options and f"details:{sha(n)}" in options
    block_id = json.loads(next(b for p in payloads for b in p["blocks"] if b["type"] == "actions")["block_id"])
    assert block_id == {"repo": "acme/widgets", "lang": "en", "tz": "Asia/Shanghai", "thread": "1700000000.000100"}


def test_twenty_thousand_character_analysis_is_split_not_cut():
    words = " ".join(f"word{i}" for i in range(3000))  # ~23k characters
    a = analysis(
        Importance.HIGH,
        summary=words,
        impact="Impact & <more> " * 300,
        risks=tuple(f"risk {i} " + "x" * 200 for i in range(40)),
    )
    entry = DigestEntry(commit(1), a)
    for content in (CommitDetail(digest([entry]), entry), CommitDetails(digest([entry]), entry)):
        payloads = R.render(content, thread="1.2")
        check(payloads)
        assert len(payloads) >= 3
        seen = visible(payloads)
        assert squash(words) in seen
        assert squash("Impact & <more> " * 300) in seen
        for i in range(40):
            assert squash(f"risk {i} " + "x" * 200) in seen
        # the buttons come last, once
        last = payloads[-1]["blocks"][-1]
        assert last["type"] == "actions"
        assert sum(1 for p in payloads for b in p["blocks"] if b["type"] == "actions") == 1


def test_one_enormous_word_is_cut_hard_but_completely():
    blob = "&" * 7000 + "y" * 5000
    payloads = R.render(Notice(blob))
    check(payloads)
    assert visible(payloads) == blob
    assert all(
        not re.search(r"&[a-z]{0,3}$", b["text"]["text"])
        for p in payloads
        for b in p["blocks"]
        if b["type"] == "section"
    )


def test_long_title_header_and_buttons():
    title = "feat: " + "a very long title " * 12  # 200+ characters
    entry = DigestEntry(commit(1, title=title), analysis(Importance.HIGH))
    long_repo = "acme/" + "w" * 150
    d = digest([entry], repo=long_repo)
    payloads = R.render(DigestParent(d))
    check(payloads)
    assert squash(f"Daily update report (2026-01-28) · {long_repo}") in visible(payloads)
    assert squash(title) in visible(payloads)
    choice = R.render(CommitChoice("which one?", (entry.commit, commit(2)), ("acme/widgets", "acme/widgets")))
    check(choice)
    assert squash(title) in visible(choice)  # full title in the list, a shortened one on the button
    buttons = [e for b in choice[-1]["blocks"] if b["type"] == "actions" for e in b["elements"]]
    assert buttons[0]["text"]["text"].endswith("…") and len(buttons[0]["text"]["text"]) == 75
    assert json.loads(buttons[0]["value"]) == {"repo": "acme/widgets", "sha": sha(1), "question": "which one?"}


def test_button_values_are_compact_json_within_limits():
    entry = DigestEntry(commit(3), analysis(Importance.MEDIUM))
    payloads = R.render(CommitDetail(digest([entry]), entry), thread="1700000000.000200")
    buttons = {e["action_id"]: e for b in payloads[-1]["blocks"] if b["type"] == "actions" for e in b["elements"]}
    assert set(buttons) == {"digest_ask", "digest_details", "digest_level_too_high", "digest_level_too_low"}
    assert buttons["digest_level_too_low"]["value"] == buttons["digest_ask"]["value"]  # the direction: its action_id
    assert json.loads(buttons["digest_ask"]["value"]) == {
        "repo": "acme/widgets",
        "sha": sha(3),
        "lang": "en",
        "tz": "Asia/Shanghai",
        "thread": "1700000000.000200",
    }

    def choice_value(question: str) -> str:
        payloads = R.render(CommitChoice(question, (commit(3),), ("acme/widgets",)), thread="1.1")
        check(payloads)
        return payloads[-1]["blocks"][-1]["elements"][0]["value"]

    assert json.loads(choice_value("what breaks?")) == {
        "repo": "acme/widgets",
        "sha": sha(3),
        "thread": "1.1",
        "question": "what breaks?",
    }
    # a question too long for a button value is left out (the user is then asked to mention the
    # bot with it), never cut
    value = choice_value("why " * 600)
    assert len(value) <= 2000 and json.loads(value) == {"repo": "acme/widgets", "sha": sha(3)}


# --- content ------------------------------------------------------------------------------------


def test_commit_detail_shows_the_whole_analysis():
    c = commit(5, pr_number=42, reverts=sha(9))
    a = analysis(
        Importance.HIGH,
        origin="fallback",
        note="LLM timed out",
        coverage=Coverage(4, 2, omitted=(("big.lock", "lockfile"),)),
    )
    entry = DigestEntry(c, a)
    payloads = R.render(CommitDetail(digest([entry]), entry))
    check(payloads)
    seen = visible(payloads)
    for piece in (
        "🔴",
        "feat: change number 5",
        "🎯 Change type",
        "Feature",
        "⚡ Importance",
        "🔴 High",
        "Changes the public CLI.",
        "📋 Summary",
        "Adds a flag.",
        "🧭 Impact",
        "Users of the CLI.",
        "🔍 Technical insight",
        "Architecture",
        "Keeps layers.",
        "Security",
        "⚠️ Risks",
        "Locale parsing.",
        "💡 Recommendations",
        "Document it.",
        "📁 Coverage",
        "⚠️ The LLM analysis failed",
        "LLM timed out",
        "↩️ Reverts",
        "PR",
        "#42",
        "Ada Lovelace",
    ):
        assert squash(piece) in seen, piece
    text = raw(payloads)
    assert "<https://github.com/acme/widgets/pull/42|#42>" in text
    assert f"<https://github.com/acme/widgets/commit/{sha(9)}|`{sha(9)[:7]}`>" in text


def test_offline_origin_note_and_low_commit_details():
    entry = DigestEntry(commit(6), analysis(Importance.LOW, origin="offline"))
    payloads = R.render(CommitDetails(digest([entry]), entry))
    check(payloads)
    seen = visible(payloads)
    assert squash("Rule-based analysis (no LLM configured)") in seen
    assert squash("Users of the CLI.") in seen  # Details shows everything, even for a low commit
    ids = [e["action_id"] for b in payloads[-1]["blocks"] if b["type"] == "actions" for e in b["elements"]]
    assert ids == ["digest_ask"]


def test_unanalysed_commit_says_why():
    entry = DigestEntry(commit(7), None, error="the diff could not be read")
    payloads = R.render(CommitDetail(digest([entry]), entry))
    check(payloads)
    assert squash("This commit could not be analysed: the diff could not be read") in visible(payloads)


@pytest.mark.parametrize(
    "lang,words",
    [
        ("zh", ["每日更新报告（2026-01-28）", "2026-01-28 共 2 个提交", "🔴 高重要度变更 (1)", "📌 要点"]),
        (
            "en",
            ["Daily update report (2026-01-28)", "2 commits on 2026-01-28", "🔴 High importance (1)", "📌 Headlines"],
        ),
    ],
)
def test_parent_in_both_languages(lang, words):
    entries = [DigestEntry(commit(1), analysis(Importance.HIGH)), DigestEntry(commit(2), analysis(Importance.LOW))]
    payloads = R.render(DigestParent(digest(entries, lang=lang)))
    check(payloads)
    seen = visible(payloads)
    for w in words:
        assert squash(w) in seen, w
    assert "feat: change number 2" not in R.unescape(raw(payloads))  # low items live in the thread


@pytest.mark.parametrize(
    "lang,ask,details,levels",
    [
        ("zh", "就此提交提问", "详情 / 风险", ["⬇️ 等级偏高", "⬆️ 等级偏低"]),
        ("en", "Ask about this commit", "Details / risks", ["⬇️ Level too high", "⬆️ Level too low"]),
    ],
)
def test_buttons_in_both_languages(lang, ask, details, levels):
    entry = DigestEntry(commit(1), analysis(Importance.MEDIUM))
    payloads = R.render(CommitDetail(digest([entry], lang=lang), entry))
    labels = [e["text"]["text"] for b in payloads[-1]["blocks"] if b["type"] == "actions" for e in b["elements"]]
    assert labels == [ask, details, *levels]


def test_answer_header_and_notice():
    p = R.render(AnswerHeader("U123ABC", "what could this break?", commit(4)))
    check(p)
    assert "❓ <@U123ABC> asked: what could this break?" in p[0]["blocks"][0]["text"]["text"]
    zh = R.render(AnswerHeader("U123ABC", "这个改动会影响什么？", commit(4)))
    assert "<@U123ABC> 问：这个改动会影响什么？" in zh[0]["blocks"][0]["text"]["text"]
    n = R.render(Notice("⚠️ Unknown command 'frob'.\nUsage: `/digest help`", "usage"))
    check(n)
    assert n[0]["blocks"][0]["type"] == "section" and "`/digest help`" in n[0]["blocks"][0]["text"]["text"]


def test_ask_modal_fits_slack():
    view = R.ask_modal({"repo": "acme/widgets", "sha": sha(1), "lang": "zh"}, '{"v":{}}')
    assert view["callback_id"] == "digest_ask_modal" and len(view["title"]["text"]) <= 24
    assert check_blocks(view["blocks"]) == []
    assert view["blocks"][1]["element"]["placeholder"]["text"].startswith("例如")


# --- escaping -----------------------------------------------------------------------------------


def test_untrusted_text_is_inert_everywhere():
    evil_analysis = Analysis(
        change_type=ChangeType.SECURITY,
        importance=Importance.HIGH,
        importance_reason="see <!here> and @channel",
        summary="<@U1> said [docs](https://evil.example)",
        impact="<!everyone> @everyone",
        insights=Insights(security="<https://evil.example|docs>"),
        risks=("<!channel>",),
        recommendations=("@here",),
    )
    c = commit(1, title=EVIL_TITLE, body="<!channel>", author="<@U1> @here")
    entry = DigestEntry(c, evil_analysis)
    d = Digest(
        repo="acme/widgets",
        branch="main",
        window=day_window(date(2026, 1, 28), "UTC"),
        lang="en",
        entries=(entry, DigestEntry(commit(2, title=EVIL_TITLE), analysis(Importance.LOW))),
        headline=("<!channel> headline @here",),
        headline_origin="llm",
        repo_url="https://github.com/acme/widgets",
    )
    contents = [
        DigestParent(d),
        CommitDetail(d, entry),
        CommitDetails(d, entry),
        LowCommits(d, d.entries[1:]),
        CommitChoice(EVIL_TITLE, (c,), ("acme/widgets",)),
        AnswerHeader("<!channel>", EVIL_TITLE, c),
        Notice(EVIL_TITLE),
    ]
    for content in contents:
        payloads = R.render(content, thread="1.1")
        check(payloads)
        text = json.dumps(payloads, ensure_ascii=False)
        assert_inert(text)
        # …and still readable: the reader sees the original characters
        assert "<!channel>" in R.unescape(text)


def test_escape_function():
    assert R.esc("a & b <c> @here @Channel @everyone <!channel>") == (
        "a &amp; b &lt;c&gt; @\u200dhere @\u200dChannel @\u200deveryone &lt;!channel&gt;"
    )
    assert R.esc("[docs](https://evil)") == "[docs]\u200b(https://evil)"
    assert R.esc("&lt;!channel&gt;") == "&amp;lt;!channel&amp;gt;"  # pre-escaped text cannot sneak through
    assert R.unescape(R.esc("x <@U1> & @here")) == "x <@U1> & @here"
    assert R.link("https://evil.example|x", "label") == "label"  # a URL that would split <url|label>
    assert R.mention("U0123ABC") == "<@U0123ABC>" and R.mention("<!channel>") == "&lt;!channel&gt;"


def test_streamed_text_is_escaped_exactly_like_whole_text():
    import random

    from handlers.slack import StreamEscaper

    text = (EVIL_TITLE + " & more @everyone\n") * 20 + "x" * 700 + "@here" + "y" * 400 + "[a](https://evil.example)"
    rng = random.Random(7)
    for _ in range(50):
        escaper, out, i = StreamEscaper(), [], 0
        while i < len(text):
            step = rng.randint(1, 40)
            out.append(escaper.feed(text[i : i + step]))
            i += step
        out.append(escaper.flush())
        assert "".join(out) == R.esc(text)
