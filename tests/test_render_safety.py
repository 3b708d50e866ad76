"""Small checks of the renderers' own guards (pure), each one a way an attacker's text could
otherwise change what a reader sees."""
from __future__ import annotations

import pytest

from bot.render import feishu as F
from bot.render import slack as S


@pytest.mark.parametrize("user,shown", [
    ("U0123ABC", "<@U0123ABC>"),
    ("W0123ABC", "<@W0123ABC>"),
    ("U0123ABC><!channel", "U0123ABC&gt;&lt;!channel"),  # an id followed by more is not an id
    ("xU0123ABC", "xU0123ABC"),
    ("U1", "U1"),  # too short for a Slack id
    ("u0123abc", "u0123abc"),
])
def test_only_a_whole_slack_user_id_becomes_a_mention(user, shown):
    assert S.mention(user) == shown


@pytest.mark.parametrize("url,target", [
    ("https://github.com/acme/widgets/commit/abc", "https://github.com/acme/widgets/commit/abc"),
    ("https://github.com/acme/w)[x](https://evil.example", "https://github.com/acme/w%29[x]%28https://evil.example"),
    ("https://example.com/a b", None),  # a space would end the link early
    ("javascript:alert(1)", None),
    ("xhttps://github.com/x", None),
])
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
