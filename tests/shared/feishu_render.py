"""Feishu rendering: the limits a card must fit and the markup it must not carry."""

from __future__ import annotations

import json
import re

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
