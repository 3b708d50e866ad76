"""Feishu cards (bot/render/feishu.py): sizes, splitting without loss, panels, escaping, zh/en."""

from __future__ import annotations

import json
import re
from dataclasses import replace

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
from bot.core.models import DigestEntry, Importance, Insights
from bot.render import feishu as R
from bot.render.labels import t
from tests.fakes.feishu_server import shown_markdown
from tests.shared.feishu_render import (
    EVIL,
    LIMIT,
    REPO_URL,
    analysis,
    assert_fits,
    assert_inert,
    commit,
    digest,
    markdown_of,
)

CODE_HEAVY = "\n".join(
    f'    cfg["key_{i:04d}"] = "C:\\\\path\\\\to\\\\{i}" if x == "\\"q\\"" else {{"a": "b"}}' for i in range(900)
)  # quotes, backslashes, newlines: each costs double when escaped


# --- sizes and splitting -------------------------------------------------------------------------


def test_a_60_commit_digest_fits_and_keeps_every_commit():
    entries = [
        DigestEntry(commit(i, pr=100 + i), analysis(Importance.HIGH, importance_reason=f"reason-{i:03d} " * 20))
        for i in range(60)
    ]
    d = digest(entries)
    parent = R.render_cards(DigestParent(d))
    assert_fits(parent)
    text = markdown_of(parent)
    for i in range(60):
        assert f"reason-{i:03d}" in text and f"change number {i}" in text and f"/pull/{100 + i}" in text
    if len(parent) > 1:  # continuation cards say so in their header
        assert parent[1]["header"]["title"]["content"].endswith(f"(2/{len(parent)})")
    for e in entries:
        assert_fits(R.render_cards(CommitDetail(d, e), thread="om_root"))
    lows = [DigestEntry(commit(i), analysis(Importance.LOW, summary=f"low-{i:02d} " * 200)) for i in range(15)]
    low_cards = R.render_cards(LowCommits(digest(lows), tuple(lows)))
    assert_fits(low_cards)
    assert all(f"low-{i:02d}" in markdown_of(low_cards) for i in range(15))


def test_a_50000_character_analysis_is_split_across_cards_without_loss():
    words = [f"w{i:05d}" for i in range(7000)]  # ~49,000 characters
    long = " ".join(words)
    a = analysis(Importance.HIGH, summary=long, risks=tuple(" ".join(words[i : i + 700]) for i in range(0, 7000, 700)))
    e = DigestEntry(commit(1), a)
    cards = R.render_cards(CommitDetail(digest([e]), e), thread="om_root")
    assert len(cards) >= 2
    assert_fits(cards)
    text = markdown_of(cards)
    missing = [w for w in words if w not in text]
    assert not missing, f"{len(missing)} words dropped, first {missing[:3]}"
    # the buttons come once, at the very end
    buttons = [b for c in cards for b in _walk(c) if b.get("tag") == "button"]
    assert [b["behaviors"][0].get("value", {}).get("action") for b in buttons][:2] == ["ask", "details"]
    assert all(b.get("tag") != "button" for b in _walk(cards[0])) or len(cards) == 1


def test_a_single_enormous_word_is_cut_hard_but_kept():
    blob = "x" * 80_000
    e = DigestEntry(commit(2), analysis(Importance.MEDIUM, summary=blob))
    cards = R.render_cards(CommitDetail(digest([e]), e))
    assert_fits(cards)
    assert sum(s.count("x") for s in R.all_markdown(cards)) >= 80_000


def test_long_answers_become_several_cards_and_reopen_code_fences():
    code = "\n".join(f"line_{i:05d} = {i}" for i in range(4000))
    answer = "Here is the code:\n```python\n" + code + "\n```\nThat is all."
    segments = R.answer_segments(answer)
    assert len(segments) >= 2
    for seg in segments:
        assert_fits([R.answer_card(seg, streaming=True)])
    joined = "".join(segments)
    assert all(f"line_{i:05d}" in joined for i in range(4000))
    assert segments[1].startswith("```python\n")  # the code block continues as code on the next card
    assert "That is all." in segments[-1]


def test_a_code_heavy_commit_is_measured_as_the_request_body_it_travels_in():
    # card JSON whose quotes, backslashes and newlines grow by a third or more once it is an
    # escaped string inside the request body (Feishu's 230025): split by that size, kept whole.
    e = DigestEntry(commit(11), analysis(Importance.HIGH, summary="```python\n" + CODE_HEAVY + "\n```"))
    cards = R.render_cards(CommitDetail(digest([e]), e), thread="om_root")
    assert_fits(cards)
    text = markdown_of(cards)
    assert all(f'cfg["key_{i:04d}"]' in text for i in range(900))  # split, never truncated


def test_a_code_heavy_answer_streams_in_cards_whose_bodies_fit():
    segments = R.answer_segments("```python\n" + CODE_HEAVY * 2 + "\n```")
    assert len(segments) >= 3
    for seg in segments:
        assert_fits([R.answer_card(seg, streaming=True), R.answer_card(seg, streaming=False)])
        content_update = {"content": R.md_escape(seg), "sequence": 99, "uuid": "u" * 32}
        assert R.request_bytes(content_update) <= LIMIT
    assert all(f'cfg["key_{i:04d}"]' in "".join(segments) for i in range(900))


# --- native structure ---------------------------------------------------------------------------


def test_commit_card_has_panels_links_and_buttons():
    c = replace(commit(3, pr=42), reverts="f" * 40)
    e = DigestEntry(c, analysis(Importance.HIGH, origin="fallback", note="the LLM timed out"))
    d = digest([e])
    card = R.render_cards(CommitDetail(d, e), thread="om_thread_root")[0]
    assert card["header"]["template"] == "red"
    panels = [x for x in _walk(card) if x.get("tag") == "collapsible_panel"]
    titles = " ".join(p["header"]["title"]["content"] for p in panels)
    for key in ("insights", "risks", "recommendations"):
        assert t("en", key) in titles
    assert all(p["expanded"] is False for p in panels)
    text = markdown_of([card])
    assert f"]({c.url})" in text and f"]({REPO_URL}/pull/42)" in text and f"]({REPO_URL}/commit/{'f' * 40})" in text
    assert "the LLM timed out" in text and "3 files" in text.lower()  # origin note, coverage line
    buttons = [b for b in _walk(card) if b.get("tag") == "button"]
    ask, details = (b["behaviors"][0]["value"] for b in buttons[:2])
    assert ask["action"] == "ask" and details["action"] == "details"
    assert (
        ask["sha"] == c.sha
        and ask["thread"] == "om_thread_root"
        and ask["lang"] == "en"
        and ask["tz"] == "Asia/Shanghai"
    )
    assert buttons[2]["behaviors"][0] == {"type": "open_url", "default_url": c.url}


def test_details_card_expands_everything_and_shows_the_message_body():
    e = DigestEntry(commit(4, body="Why: the old flag was confusing."), analysis(Importance.MEDIUM))
    card = R.render_cards(CommitDetails(digest([e]), e), thread="om_r")[0]
    panels = [x for x in _walk(card) if x.get("tag") == "collapsible_panel"]
    assert panels and all(p["expanded"] for p in panels)
    assert "the old flag was confusing" in markdown_of([card])
    actions = [b["behaviors"][0].get("value", {}).get("action") for b in _walk(card) if b.get("tag") == "button"]
    assert "details" not in actions and "ask" in actions


def test_offline_analysis_is_labelled():
    e = DigestEntry(commit(5), analysis(Importance.MEDIUM, origin="offline"))
    assert t("zh", "origin_offline") in markdown_of(R.render_cards(CommitDetail(digest([e], lang="zh"), e)))


def test_choice_and_answer_header_and_notice():
    c1, c2 = commit(6, "fix: cache expiry"), commit(7, "fix: cache warmup")
    cards = R.render_cards(
        CommitChoice("which cache fix broke the build?", (c1, c2), ("acme/rocket", "acme/rocket")), thread="om_t"
    )
    values = [b["behaviors"][0]["value"] for b in _walk(cards[0]) if b.get("tag") == "button"]
    assert [v["sha"] for v in values] == [c1.sha, c2.sha]
    assert all(
        v["action"] == "choose"
        and v["question"] == "which cache fix broke the build?"
        and v["thread"] == "om_t"
        and v["repo"] == "acme/rocket"
        for v in values
    )
    header = R.render_cards(AnswerHeader("ou_asker123", "what could break?", c1))
    assert "<at id=ou_asker123></at>" in markdown_of(header)
    forged = R.render_cards(AnswerHeader("all", "q", c1))
    assert "<at" not in markdown_of(forged)
    usage = R.render_cards(Notice("⚠️ Unknown command 'x'.\nUsage: `@DigestBot digest [DATE]`", "usage"))
    assert "`@\u200bDigestBot digest [DATE]`" in markdown_of(usage)  # code stays code


# --- escaping -----------------------------------------------------------------------------------


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_hostile_commit_text_and_llm_output_are_inert(lang):
    c = commit(8, title=f"feat: {EVIL}", body=EVIL)
    a = analysis(
        Importance.HIGH,
        importance_reason=EVIL,
        summary=EVIL + "\n```\n" + EVIL + "\n```",
        impact=EVIL,
        insights=Insights(EVIL, EVIL, EVIL),
        risks=(EVIL,),
        recommendations=(EVIL + " `" + EVIL + "`",),
        note=EVIL,
        origin="fallback",
    )
    e = DigestEntry(c, a, error=EVIL)
    low = DigestEntry(commit(9, title=EVIL), analysis(Importance.LOW, summary=EVIL))
    d = digest([e, low], lang=lang, headline=(EVIL,))
    rendered = []
    for content in (
        DigestParent(d),
        CommitDetail(d, e),
        CommitDetails(d, e),
        LowCommits(d, (low,)),
        CommitChoice(EVIL, (c,), ("acme/rocket",)),
        AnswerHeader("ou_x1", EVIL, c),
        Notice(EVIL),
    ):
        cards = R.render_cards(content, thread="om_t", lang=lang)
        assert_fits(cards)
        rendered += cards
    assert_inert(rendered, allowed_mentions=("ou_x1",))
    assert_inert([R.answer_card(EVIL + "\n```\n" + EVIL, streaming=True)])
    assert_inert([R.ephemeral_card(EVIL)])
    # …and still readable: the words are there
    assert "click me" in markdown_of(rendered) and 'user_id="all"' in markdown_of(rendered)


def test_card_markdown_uses_the_numeric_escapes_feishu_documents():
    out = R.md_escape("if a < b && c > d: see <at id=all></at> or &#60;at id=all&#62; or &lt;")
    assert "&#60;" in out and "&#62;" in out and "&#38;" in out
    assert not re.search(r"&(lt|gt|amp);", out)  # named entities may show literally
    # a reader sees exactly what was written, an entity in the input included, and no tag forms
    assert shown_markdown(out) == "if a < b && c > d: see <at id=all></at> or &#60;at id=all&#62; or &lt;"
    assert "<" not in out.replace("&#60;", "")
    assert R.ephemeral_card("a < b")["elements"][0]["text"]["content"] == "a &#60; b"


def test_escaping_keeps_code_blocks_and_closes_unterminated_ones():
    out = R.md_escape("Look:\n```diff\n+ a < b && c\n- [x](y)\n")
    assert out.startswith("Look:\n```diff\n+ a < b && c\n- [x]\u200b(y)\n")
    assert out.endswith("```")
    # a fence cannot be closed early by the content to smuggle markup out of it
    out = R.md_escape("```\n<at id=all></at>\n```\n<at id=all></at>")
    assert "<at" not in out.replace("<\u200bat", "")


@pytest.mark.parametrize(
    "lang,words",
    [
        ("zh", ["每日更新报告", "2026-01-28 共", "查看提交"]),
        ("en", ["Daily update report", "commit on 2026-01-28", "View commit"]),
    ],
)
def test_labels_follow_the_digest_language(lang, words):
    e = DigestEntry(commit(10), analysis(Importance.HIGH))
    d = digest([e], lang=lang)
    cards = R.render_cards(DigestParent(d)) + R.render_cards(CommitDetail(d, e))
    everything = json.dumps(cards, ensure_ascii=False)
    assert all(w in everything for w in words)
    ask = next(b for b in _walk(cards[-1]) if b.get("tag") == "button")
    assert ask["text"]["content"] == R.ft(lang, "ask")


def test_streaming_card_and_form():
    card = R.answer_card("partial answer", streaming=True)
    assert card["config"]["streaming_mode"] is True
    assert card["body"]["elements"][0]["element_id"] == R.ANSWER_ELEMENT
    form = R.ask_form_card(
        {
            "action": "ask",
            "sha": "abc1234def",
            "repo": "acme/rocket",
            "thread": "om_t",
            "lang": "en",
            "title": "feat: x",
        },
        "en",
    )
    inner = [x for x in _walk(form) if x.get("tag") in ("input", "button")]
    assert inner[0]["name"] == "question"
    submit = inner[1]
    assert submit["form_action_type"] == "submit"
    assert submit["behaviors"][0]["value"]["action"] == "ask_submit"
    assert submit["behaviors"][0]["value"]["thread"] == "om_t"


def _walk(node):
    if isinstance(node, dict):
        yield node
        for value in node.values():
            yield from _walk(value)
    elif isinstance(node, list):
        for value in node:
            yield from _walk(value)


def test_a_parenthesis_in_a_link_url_cannot_end_the_link_early():
    # GitHub URLs may contain ")" (a branch or a path); unencoded it would close `[label](url)` and
    # let the rest of the URL become Markdown of its own
    url = f"{REPO_URL}/tree/fix)[x](https://evil.example/p"
    text = R.link("label", url)
    target = re.fullmatch(r"\[label\]\((\S+)\)", text).group(1)
    assert ")" not in target and "(" not in target and "%29" in target and "%28" in target
    assert R.link("label", "javascript:alert(1)") == "label"  # not http(s): no link at all
    c = replace(commit(12), url=url)
    e = DigestEntry(c, analysis(Importance.HIGH))
    cards = R.render_cards(CommitDetail(digest([e]), e))
    links = re.findall(r"\]\(([^)]*)\)", markdown_of(cards))  # every link target, up to its first ")"
    assert links and all(link.startswith(REPO_URL + "/") for link in links)
    assert "](https://evil" not in markdown_of(cards)


# --- exact edges (each kills a mutant that a looser test let through) ---------------------------

BUDGET = 28_000  # the bot's own budget for a card's request body, below Feishu's 30 KiB


def _answer_of_body(target: int) -> str:
    """An answer whose streaming card costs exactly `target` bytes in the request body."""
    base = R.body_bytes(R.answer_card("x", streaming=True))
    return "x" * (1 + target - base)


def test_an_answer_exactly_at_the_budget_streams_in_one_card_and_one_byte_more_in_two():
    whole = _answer_of_body(BUDGET)
    assert R.body_bytes(R.answer_card(whole, streaming=True)) == BUDGET
    assert R.answer_segments(whole) == [whole]
    over = whole + "x"
    segments = R.answer_segments(over)
    assert len(segments) == 2 and "".join(segments) == over
    assert R.body_bytes(R.answer_card(segments[0], streaming=True)) == BUDGET  # the first is filled to the edge


def test_a_fence_line_with_a_language_inside_a_code_block_does_not_close_it():
    out = R.md_escape("```\ncode\n```python\n<b>still code</b>\n```\nafter <b>")
    lines = out.split("\n")
    assert lines[:5] == ["```", "code", "ʼʼʼpython", "<\u200bb>still code<\u200b/b>", "```"]
    assert lines[5] == "after &#60;b&#62;"  # prose again after the real closing fence


def test_a_card_holds_exactly_120_components_and_the_121st_starts_another():
    divider = R.Fixed({"tag": "hr"})
    assert len(R.pack([divider] * 120, None, "", "en")) == 1
    cards = R.pack([divider] * 121, None, "", "en")
    assert [len(c["body"]["elements"]) for c in cards] == [120, 1]
    # a panel counts with what it holds: 1 + its 3 items
    panel = R.Panel("**p**", [divider] * 3)
    cards = R.pack([divider] * 116 + [panel, divider], None, "", "en")
    assert [len(c["body"]["elements"]) for c in cards] == [117, 1]


def test_the_chat_list_preview_is_cut_at_120_characters():
    preview = R.card([], None, "a" * 119 + "bc")["config"]["summary"]["content"]
    assert preview == "a" * 119 + "…" and len(preview) == 120
    assert R.card([], None, "a" * 120)["config"]["summary"]["content"] == "a" * 120


def test_a_panel_with_one_item_too_big_for_a_card_continues_in_panels_on_the_next_cards():
    words = " ".join(f"w{i:05d}" for i in range(8000))
    panel = R.Panel("**Details**", [R.Md(words)], cont=" (cont.)")
    cards = R.pack([panel], None, "", "en")
    assert len(cards) >= 2
    panels = [el for c in cards for el in c["body"]["elements"]]
    titles = [p["header"]["title"]["content"] for p in panels]
    assert titles[0] == "**Details**" and all(t == "**Details** (cont.)" for t in titles[1:])
    text = " ".join(item["content"] for p in panels for item in p["elements"])
    assert all(f"w{i:05d}" in text for i in range(8000))


def test_the_digest_headlines_sit_under_their_heading():
    e = DigestEntry(commit(1), analysis(Importance.HIGH))
    text = markdown_of(R.render_cards(DigestParent(digest([e], headline_origin="llm"))))
    assert "**📌 Headlines**\n- Exports gained a --since flag." in text
    assert "offline" not in text.split("**📌 Headlines**")[1].split("\n")[0]


def test_only_the_streamed_answer_card_is_in_streaming_mode():
    assert "streaming_mode" not in R.notice_cards("Done.", "en")[0]["config"]
    assert R.answer_card("Hi", streaming=True)["config"]["streaming_mode"] is True
    assert "streaming_mode" not in R.answer_card("Hi", streaming=False)["config"]


def test_a_commit_card_gives_the_importance_reason_beside_type_and_importance():
    e = DigestEntry(commit(2), analysis(Importance.HIGH))
    text = markdown_of(R.render_cards(CommitDetail(digest([e]), e), thread="om_root"))
    assert "**⚡ Importance**：" in text and " — Touches the public API." in text
    e = DigestEntry(commit(2), analysis(Importance.HIGH, importance_reason="  "))
    text = markdown_of(R.render_cards(CommitDetail(digest([e]), e), thread="om_root"))
    assert "**⚡ Importance**：" in text and " — " not in text.split("**⚡ Importance**：")[1].split("\n")[0]


def test_a_commit_that_could_not_be_analysed_says_why_on_its_card():
    e = DigestEntry(commit(3), None, error="the model timed out")
    text = markdown_of(R.render_cards(CommitDetail(digest([e]), e), thread="om_root"))
    assert "This commit could not be analysed: the model timed out" in text


def test_the_form_is_replaced_by_a_note_that_the_question_was_sent():
    text = markdown_of([R.form_submitted_card("en")])
    assert "Question sent; the answer follows below." in text
    assert "问题已提交" in markdown_of([R.form_submitted_card("zh")])


def test_a_resent_request_carries_the_same_dedupe_uuid_and_another_request_another():
    # Feishu drops a second request with the same uuid: a retry must reuse it, a new send must not
    first = R.stable_id("send", "oc_1", "digest:42")
    assert first == R.stable_id("send", "oc_1", "digest:42") and len(first) == 40
    assert first != R.stable_id("send", "oc_1", "digest:43")
    assert len(R.stable_id("content", "card_1", 7, length=32)) == 32


def test_an_answer_header_speaks_the_language_of_the_question():
    c = commit(8)
    asked_zh = markdown_of(R.render_cards(AnswerHeader("ou_asker123", "这个提交改了什么？", c), lang="en"))
    assert asked_zh == markdown_of(R.render_cards(AnswerHeader("ou_asker123", "这个提交改了什么？", c, lang="zh")))
    asked_en = markdown_of(R.render_cards(AnswerHeader("ou_asker123", "what changed?", c), lang="zh"))
    assert asked_en == markdown_of(R.render_cards(AnswerHeader("ou_asker123", "what changed?", c, lang="en")))
    assert asked_zh.replace("这个提交改了什么？", "") != asked_en.replace("what changed?", "")
