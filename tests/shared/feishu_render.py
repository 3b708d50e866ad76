"""Feishu rendering: the limits a card must fit and the markup it must not carry."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from datetime import UTC, datetime, timedelta, timezone

from bot.core.models import Analysis, ChangeType, Commit, Coverage, Digest, Importance, Insights, Window
from bot.render import feishu as R

REPO_URL = "https://github.com/acme/rocket"
LIMIT = 30 * 1024  # Feishu's limit on a card message's request body (error 230025)


def markdown_of(cards) -> str:
    return "\n".join(R.all_markdown(cards))


def sent_bodies(card: dict) -> list[int]:
    """The sizes of the request bodies that carry this card, serialised as lark-oapi does
    (json.dumps, ensure_ascii=False): create, reply, patch and CardKit create."""
    content = json.dumps(card, ensure_ascii=False, separators=(",", ":"))
    bodies = [
        {"receive_id": "oc_" + "g" * 32, "msg_type": "interactive", "content": content, "uuid": "u" * 50},
        {"msg_type": "interactive", "content": content, "reply_in_thread": True, "uuid": "u" * 50},
        {"content": content},
        {"type": "card_json", "data": content},
    ]
    return [len(json.dumps(b, ensure_ascii=False).encode("utf-8")) for b in bodies]


def assert_fits(cards) -> None:
    assert cards, "nothing rendered"
    for card in cards:
        size = max(sent_bodies(card))
        assert size <= LIMIT, f"a request body of {size} bytes"
        assert card["schema"] == "2.0" and card["config"]["update_multi"] is True


def built_links(cards) -> set[str]:
    return set(re.findall(r"\]\((https?://[^)\s]+)\)", markdown_of(cards)))


def assert_inert(cards, allowed_mentions: tuple[str, ...] = ()) -> None:
    """No mention, no link except the bot's own commit/PR links, no tag from untrusted text."""
    text = markdown_of(cards)
    for bad in ("@all", "<at user_id", "<at id=all", "<a href", "](https://evil", "://evil", "![img]("):
        assert bad not in text, f"{bad!r} survived escaping"
    ats = re.findall(r"<at id=([^>]*)>", text)
    assert set(ats) <= set(allowed_mentions)
    for url in built_links(cards):
        assert url.startswith(REPO_URL + "/"), url
    # nothing that could open a tag remains, except the bot's own <font> and <at> markup
    for tag in re.findall(r"<(/?[A-Za-z][A-Za-z_]*)", text):
        assert tag in ("font", "/font", "at", "/at"), tag


EVIL = '@all <at user_id="all"></at> <at id=all></at> [click me](https://evil.example/x) ![img](https://evil.example/i.png) &#60;at id=all&#62; <a href="https://evil.example">a</a>'


def window(lang_tz: str = "Asia/Shanghai") -> Window:
    start = datetime(2026, 1, 28, tzinfo=timezone(timedelta(hours=8)))
    return Window(start, start + timedelta(days=1), lang_tz, "2026-01-28")


def commit(i: int, title: str | None = None, body: str = "", pr: int | None = None) -> Commit:
    sha = f"{i:07x}" + "abcdef0123456789abcdef0123456789a"[:33]
    return Commit(
        repo="acme/rocket",
        sha=sha,
        title=title or f"feat: change number {i}",
        body=body,
        author=f"Dev {i}",
        committed_at=datetime(2026, 1, 28, 3, tzinfo=UTC),
        url=f"{REPO_URL}/commit/{sha}",
        pr_number=pr,
    )


def analysis(importance: Importance, **overrides) -> Analysis:
    base = Analysis(
        change_type=ChangeType.FEATURE,
        importance=importance,
        importance_reason="Touches the public API.",
        summary="Adds a flag.",
        impact="CLI users.",
        insights=Insights("New module boundary.", "Faster export.", "No new input paths."),
        risks=("Date parsing differs by locale.",),
        recommendations=("Document the formats.",),
        coverage=Coverage(files_total=3, files_shown=3),
    )
    return replace(base, **overrides)


def digest(entries, lang: str = "en", **kw) -> Digest:
    return Digest(
        repo="acme/rocket",
        branch="main",
        window=window(),
        lang=lang,
        entries=tuple(entries),
        headline=kw.pop("headline", ("Exports gained a --since flag.",)),
        repo_url=REPO_URL,
        **kw,
    )
