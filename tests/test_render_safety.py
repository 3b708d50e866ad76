"""Small checks of the renderers' own guards (pure), each one a way an attacker's text could
otherwise change what a reader sees."""

from __future__ import annotations

from datetime import UTC

import pytest

from bot.render import feishu as F
from bot.render import slack as S


@pytest.mark.parametrize(
    "user,shown",
    [
        ("U0123ABC", "<@U0123ABC>"),
        ("W0123ABC", "<@W0123ABC>"),
        ("U0123ABC><!channel", "U0123ABC&gt;&lt;!channel"),  # an id followed by more is not an id
        ("xU0123ABC", "xU0123ABC"),
        ("U1", "U1"),  # too short for a Slack id
        ("u0123abc", "u0123abc"),
    ],
)
def test_only_a_whole_slack_user_id_becomes_a_mention(user, shown):
    assert S.mention(user) == shown


@pytest.mark.parametrize(
    "url,target",
    [
        ("https://github.com/acme/widgets/commit/abc", "https://github.com/acme/widgets/commit/abc"),
        (
            "https://github.com/acme/w)[x](https://evil.example",
            "https://github.com/acme/w%29[x]%28https://evil.example",
        ),
        ("https://example.com/a b", None),  # a space would end the link early
        ("javascript:alert(1)", None),
        ("xhttps://github.com/x", None),
        ("https://", None),
    ],
)
def test_feishu_links_cannot_be_closed_early(url, target):
    assert F.safe_url(url) == target
    if target:
        rendered = F.link("the commit", url)
        assert rendered.startswith("[the commit](") and rendered.endswith(")") and rendered.count("](") == 1


@pytest.mark.parametrize("render", [S.esc, F.md_escape])
def test_bidi_overrides_and_terminal_controls_never_reach_a_message(render):
    text = render("safe\u202etxt.exe\u2066x\u2069 \x1b[2J\x07\x00 done")
    for bad in ("\u202e", "\u2066", "\u2069", "\x1b", "\x07", "\x00"):
        assert bad not in text
    assert "safe" in text and "txt.exe" in text and "done" in text


def test_only_real_broadcasts_are_defused_in_slack():
    assert S.esc("@channels and @hereafter and @everyone1") == "@channels and @hereafter and @everyone1"
    assert "@channel" not in S.esc("ping @channel now") and "channel" in S.esc("ping @channel now")
    assert "@HERE" not in S.esc("@HERE")


def test_slack_labels_use_the_language_s_colon():
    assert (S.colon("zh"), S.colon("en")) == ("：", ": ")


# --- Slack's limits, at their exact edges (a message over one is refused whole) -----------------------


def _section_texts(blocks):
    return [b["text"]["text"] for b in blocks if b["type"] == "section"]


@pytest.mark.parametrize("total,sections", [(3000, 1), (3001, 2)])
def test_sections_are_packed_up_to_exactly_3000_characters(total, sections):
    lines = ["a" * 1499, "b" * (total - 1500)]  # joined by one newline
    packed = S.packed_sections(lines)
    assert len(packed) == sections and "\n".join(_section_texts(packed)).replace("\n", "") == "a" * 1499 + "b" * (
        total - 1500
    )
    assert all(len(t) <= 3000 for t in _section_texts(packed))


@pytest.mark.parametrize("size,kind", [(2000, "context"), (2001, "section")])
def test_a_context_line_up_to_2000_characters_stays_small(size, kind):
    blocks = S.context("x" * size)
    assert [b["type"] for b in blocks] == [kind]


def test_button_values_keep_optional_parts_while_they_fit():
    value = {"sha": "a" * 40, "repo": "acme/widgets", "thread": "1700000000.000100"}
    full = S.compact_json(value, 10_000, optional=("thread",))
    assert S.compact_json(value, len(full), optional=("thread",)) == full  # exactly at the limit: kept
    assert "thread" not in S.compact_json(value, len(full) - 1, optional=("thread",))


def test_slack_parent_and_commit_meta():
    from datetime import date, datetime

    from bot.core.chat_platform import CommitDetail, DigestParent
    from bot.core.models import Commit, Digest, DigestEntry
    from bot.core.window import day_window

    c = Commit(
        repo="acme/widgets",
        sha="c" * 40,
        title="fix: x",
        body="",
        author="Ada",
        committed_at=datetime(2026, 1, 28, 3, 0, tzinfo=UTC),
        url=None,
    )
    d = Digest(
        repo="acme/widgets",
        branch="release/2.1",
        window=day_window(date(2026, 1, 28), "Asia/Shanghai"),
        lang="en",
        entries=(DigestEntry(c, None, error="offline"),),
        headline=(),
        headline_origin="llm",
        repo_url=None,
    )
    parent = str(S.render(DigestParent(d)))
    assert "branch release/2.1" in parent
    assert "2026-01-28 11:00" in str(S.render(CommitDetail(d, d.entries[0])))  # the channel's local time
