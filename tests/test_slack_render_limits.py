"""Block Kit limits at their exact edges, and the small pieces of a message a reader relies on.

Content of exactly a limit is kept whole; one more character (block, byte) is cut visibly or split.
Slack's documented limits: 50 blocks per message, header text 150, button text 75, option text 75,
button value 2,000 characters. The 11,000-byte page budget, the two blocks of headroom, the 300-character
notification preview and the 200-character preview in a continuation marker are this bot's own margins.
"""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import date

from bot.core.chat_platform import CommitChoice, CommitDetail, DigestParent, LowCommits, Notice
from bot.core.models import Digest, DigestEntry, Importance
from bot.core.window import day_window
from bot.render import slack as R
from tests.shared.slack_render import analysis, check, commit, digest, sha, squash, visible


def _parent(notices=(), repo="acme/widgets", headline_origin="llm", headline=("Export gained a flag.",)):
    d = Digest(
        repo=repo,
        branch="main",
        window=day_window(date(2026, 1, 28), "Asia/Shanghai"),
        lang="en",
        entries=(),
        headline=tuple(headline),
        headline_origin=headline_origin,
        repo_url="https://github.com/acme/widgets",
        notices=tuple(notices),
    )
    return DigestParent(d)


def _content_blocks(payloads):
    """Blocks without the continuation markers."""
    return [b for i, p in enumerate(payloads) for j, b in enumerate(p["blocks"]) if not (i and j == 0)]


# --- 50 blocks, two of headroom ------------------------------------------------------------------------


def test_many_small_blocks_never_exceed_fifty_per_message():
    payloads = R.render(_parent(notices=[f"notice {n}" for n in range(120)]))
    check(payloads)  # a page of 52 blocks would be refused
    for n in range(120):
        assert squash(f"notice {n}") in visible(payloads)


def test_a_page_holds_forty_eight_blocks_leaving_room_for_the_marker():
    base = len(_content_blocks(R.render(_parent())))
    fits = R.render(_parent(notices=[f"n{n}" for n in range(48 - base)]))
    assert len(fits) == 1 and len(fits[0]["blocks"]) == 48
    over = R.render(_parent(notices=[f"n{n}" for n in range(49 - base)]))
    check(over)
    assert len(over) == 2 and len(over[0]["blocks"]) == 48
    assert (
        over[1]["blocks"][0]["type"] == "context" and "(continued 2/2)" in over[1]["blocks"][0]["elements"][0]["text"]
    )


# --- the 11,000-byte budget ----------------------------------------------------------------------------


def _parent_of_bytes(total: int):
    """A one-page digest parent whose blocks weigh exactly `total` UTF-8 bytes (the last notice is padded)."""
    notices = ["x" * 2500 for _ in range(3)]
    size = sum(R.block_size(b) for b in R.render(_parent(notices=notices + ["y"]))[0]["blocks"])
    return _parent(notices=notices + ["y" * (1 + total - size)])


def test_blocks_of_exactly_the_byte_budget_stay_in_one_message_one_more_byte_splits():
    whole = R.render(_parent_of_bytes(11000))
    assert len(whole) == 1 and sum(R.block_size(b) for b in whole[0]["blocks"]) == 11000
    split = R.render(_parent_of_bytes(11001))
    check(split)
    assert len(split) == 2
    assert visible(split).count("y") == visible(whole).count("y") + 1  # split, nothing dropped


# --- header: 150 characters ----------------------------------------------------------------------------


def _title_of(repo: str) -> str:
    return f"Daily update report (2026-01-28) · {repo}"


def test_header_of_exactly_150_characters_is_a_header_151_is_a_bold_section():
    prefix = len(_title_of("acme/"))
    exact = R.render(_parent(repo="acme/" + "w" * (150 - prefix)))
    assert exact[0]["blocks"][0] == {"type": "header", "text": R.plain(_title_of("acme/" + "w" * (150 - prefix)))}
    longer = R.render(_parent(repo="acme/" + "w" * (151 - prefix)))
    check(longer)  # a 151-character header would be refused
    first = longer[0]["blocks"][0]
    assert first["type"] == "section" and first["text"]["text"] == f"*{_title_of('acme/' + 'w' * (151 - prefix))}*"


# --- button and option labels: 75 characters -----------------------------------------------------------


def _choice_button(title: str) -> dict:
    c = commit(1, title=title)
    payloads = R.render(CommitChoice("which?", (c,), ("acme/widgets",)))
    check(payloads)
    return payloads[-1]["blocks"][-1]["elements"][0]


def test_button_label_of_exactly_75_characters_is_kept_whole_76_is_shortened():
    title = "t" * (75 - len(sha(1)[:7]) - 1)
    assert _choice_button(title)["text"]["text"] == f"{sha(1)[:7]} {title}"
    label = _choice_button(title + "u")["text"]["text"]
    assert label == f"{sha(1)[:7]} {title[:-1]}…" and len(label) == 75


def test_menu_options_are_at_most_75_characters():
    title = "feat: " + "option label " * 10
    entry = DigestEntry(commit(1, title=title), analysis(Importance.LOW))
    payloads = R.render(LowCommits(digest([entry]), (entry,)))
    check(payloads)
    menu = next(e for b in payloads[0]["blocks"] if b["type"] == "actions" for e in b["elements"])
    texts = [o["text"]["text"] for g in menu["option_groups"] for o in g["options"]]
    assert texts and all(len(x) == 75 and x.endswith("…") for x in texts), texts


# --- button value: 2,000 characters --------------------------------------------------------------------


def test_button_value_of_exactly_2000_characters_keeps_everything_2001_drops_the_thread_first():
    def value(question: str) -> str:
        payloads = R.render(CommitChoice(question, (commit(3),), ("acme/widgets",)), thread="1.1")
        check(payloads)
        return payloads[-1]["blocks"][-1]["elements"][0]["value"]

    overhead = len(R.compact_json({"repo": "acme/widgets", "sha": sha(3), "thread": "1.1", "question": "q"}, 10**6)) - 1
    exact = "q" * (2000 - overhead)
    assert len(value(exact)) == 2000
    assert json.loads(value(exact)) == {"repo": "acme/widgets", "sha": sha(3), "thread": "1.1", "question": exact}
    longer = json.loads(value(exact + "q"))
    assert longer == {"repo": "acme/widgets", "sha": sha(3), "question": exact + "q"}  # no thread: fits again


# --- the notification text and the continuation marker -------------------------------------------------


def test_notification_text_of_exactly_300_characters_is_whole_301_is_shortened():
    assert R.render(Notice("n" * 300))[0]["text"] == "n" * 300
    assert R.render(Notice("n" * 301))[0]["text"] == "n" * 299 + "…"


def test_continuation_marker_previews_200_characters_of_the_first_line():
    def marker(first_line: str) -> str:
        payloads = R.render(Notice(first_line + "\n" + "\n".join("z" * 2900 for _ in range(5))))
        check(payloads)
        assert len(payloads) >= 2
        return payloads[1]["blocks"][0]["elements"][0]["text"]

    assert marker("p" * 200) == "p" * 200 + " (continued 2/2)"
    assert marker("p" * 201) == "p" * 199 + "… (continued 2/2)"


# --- what a reader sees --------------------------------------------------------------------------------


def test_rule_based_headline_says_so_an_llm_headline_does_not():
    offline = visible(R.render(_parent(headline_origin="offline")))
    assert squash("📌 Headlines (rule-based)") in offline and squash("Export gained a flag.") in offline
    llm = visible(R.render(_parent(headline_origin="llm")))
    assert squash("📌 Headlines") in llm and "rule-based" not in llm


def test_commit_with_a_url_links_view_commit_one_without_shows_no_dead_link():
    with_url = DigestEntry(commit(4), analysis(Importance.MEDIUM))
    text = json.dumps(R.render(CommitDetail(digest([with_url]), with_url)), ensure_ascii=False)
    assert f"<https://github.com/acme/widgets/commit/{sha(4)}|View commit>" in text
    without = DigestEntry(replace(commit(4), url=None), analysis(Importance.MEDIUM))
    payloads = R.render(CommitDetail(digest([without]), without))
    check(payloads)
    assert "View commit" not in json.dumps(payloads, ensure_ascii=False)
    assert f"`{sha(4)[:7]}`" in json.dumps(payloads, ensure_ascii=False)


def test_low_commit_line_shows_its_change_type():
    entry = DigestEntry(commit(1), analysis(Importance.LOW, summary="Adds a flag."))
    payloads = R.render(LowCommits(digest([entry]), (entry,)))
    line = payloads[0]["blocks"][0]["text"]["text"].split("\n")[1]
    assert R.unescape(line).endswith("feat: change number 1 · _Feature_ · Adds a flag.")


def test_ask_button_is_primary_details_is_plain():
    entry = DigestEntry(commit(3), analysis(Importance.MEDIUM))
    payloads = R.render(CommitDetail(digest([entry]), entry))
    buttons = {e["action_id"]: e for b in payloads[-1]["blocks"] if b["type"] == "actions" for e in b["elements"]}
    assert buttons["digest_ask"]["style"] == "primary"
    assert "style" not in buttons["digest_details"]  # Slack refuses a style other than primary/danger


def test_empty_fields_are_left_out_not_shown_empty():
    a = analysis(Importance.HIGH, impact="  ", risks=(), recommendations=())
    entry = DigestEntry(commit(2), a)
    payloads = R.render(CommitDetail(digest([entry]), entry))
    check(payloads)
    seen = visible(payloads)
    assert squash("Adds a flag.") in seen
    for gone in ("Impact", "Risks", "Recommendations"):
        assert gone not in seen, gone


def test_four_asterisks_from_the_llm_stay_as_written():
    a = analysis(Importance.HIGH, summary="The token is **now** masked as ****")
    entry = DigestEntry(commit(2), a)
    text = json.dumps(R.render(CommitDetail(digest([entry]), entry)), ensure_ascii=False)
    assert "The token is *now* masked as ****" in text


def test_a_clicked_value_reads_back_as_rendered_and_a_foreign_one_as_empty():
    entry = DigestEntry(commit(3), analysis(Importance.MEDIUM))
    payloads = R.render(CommitDetail(digest([entry]), entry), thread="1.1")
    value = payloads[-1]["blocks"][-1]["elements"][0]["value"]
    assert R.parse_value(value) == {
        "repo": "acme/widgets",
        "sha": sha(3),
        "lang": "en",
        "tz": "Asia/Shanghai",
        "thread": "1.1",
    }
    for foreign in (None, "", "not json", "[1, 2]", '"text"', "42"):  # the handler then uses its defaults
        assert R.parse_value(foreign) == {}


def test_a_label_full_of_escaped_characters_is_shortened_visibly_and_no_more_than_needed():
    """`&`, `<`, `>` grow to 4–5 characters when escaped: the label keeps as much of the title as fits in 75,
    ends with '…', and never ends inside an entity (found: labels cut to 17 characters, or hard-cut
    without '…' and through an `&amp;`)."""
    import random
    import re

    rng = random.Random(1)
    for _ in range(200):
        title = "".join(rng.choice("ab &<>@ ") for _ in range(rng.randint(70, 120)))
        label = _choice_button(title)["text"]["text"]
        assert len(label) <= 75 and label.endswith("…"), label
        assert not re.search(r"&(?!amp;|lt;|gt;)", label), label  # no entity cut in half
        shown = R.unescape(label[:-1]).rstrip()
        full = " ".join(f"{sha(1)[:7]} {title}".split())
        assert full.startswith(shown)
        assert len(label) >= 75 - 5, label  # one more character would overflow: at most one entity short


def test_twenty_six_commits_to_choose_from_need_two_rows_of_buttons():
    commits = tuple(commit(n) for n in range(26))
    payloads = R.render(CommitChoice("which?", commits, ("acme/widgets",) * 26))
    check(payloads)  # Slack refuses more than 25 elements in one actions block
    rows = [b for p in payloads for b in p["blocks"] if b["type"] == "actions"]
    assert [len(r["elements"]) for r in rows] == [25, 1]
    assert [e["action_id"] for r in rows for e in r["elements"]] == [f"digest_choose_{i}" for i in range(26)]


def test_commit_text_is_verbatim_so_slack_does_not_link_channel_names_or_urls():
    entry = DigestEntry(commit(1, title="fix #general handling, see https://example.com"), analysis(Importance.HIGH))
    for content in (DigestParent(digest([entry])), CommitDetail(digest([entry]), entry)):
        texts = [
            x
            for p in R.render(content)
            for b in p["blocks"]
            for x in (
                [b["text"]] if b["type"] == "section" else b.get("elements", []) if b["type"] == "context" else []
            )
        ]
        assert texts and all(x["verbatim"] is True for x in texts if x["type"] == "mrkdwn")


def test_a_bullet_of_exactly_3000_characters_is_one_section():
    risk = "r" * (3000 - 2)  # "• " + 2,998 characters
    entry = DigestEntry(commit(1), analysis(Importance.HIGH, risks=(risk,)))
    payloads = R.render(CommitDetail(digest([entry]), entry))
    check(payloads)
    assert any(b["type"] == "section" and b["text"]["text"] == "• " + risk for p in payloads for b in p["blocks"])


def test_a_chinese_question_fits_in_the_button_value_as_characters_not_escapes():
    question = "这个改动会影响什么" * 100  # 900 characters; as \\u escapes it would be 5,400
    payloads = R.render(CommitChoice(question, (commit(3),), ("acme/widgets",)), thread="1.1")
    check(payloads)
    value = payloads[-1]["blocks"][-1]["elements"][0]["value"]
    assert question in value and json.loads(value)["question"] == question


def test_an_analysed_commit_does_not_claim_it_could_not_be_analysed():
    entry = DigestEntry(commit(1), analysis(Importance.HIGH))
    seen = visible(R.render(CommitDetail(digest([entry]), entry)))
    assert "couldnotbeanalysed" not in seen and squash("Adds a flag.") in seen
