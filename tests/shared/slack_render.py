"""Slack rendering: commits, analyses and digests to render, and what the Block Kit payloads show."""

from __future__ import annotations

import json
import re
from datetime import UTC, date, datetime, timedelta

from bot.core.models import Analysis, ChangeType, Commit, Coverage, Digest, Importance, Insights
from bot.core.window import day_window
from bot.render import slack as R
from tests.fakes.slack_server import CUMULATIVE_LIMIT, check_blocks

WHEN = datetime(2026, 1, 28, 3, 0, tzinfo=UTC)


def sha(n: int) -> str:
    return f"{n:040x}"


def commit(n: int, title: str = "", body: str = "", author: str = "Ada Lovelace", **kw) -> Commit:
    return Commit(
        repo="acme/widgets",
        sha=sha(n),
        title=title or f"feat: change number {n}",
        body=body,
        author=author,
        committed_at=WHEN - timedelta(minutes=n),
        url=f"https://github.com/acme/widgets/commit/{sha(n)}",
        **kw,
    )


def analysis(
    importance: Importance,
    *,
    summary: str = "Adds a flag.",
    reason: str = "Changes the public CLI.",
    origin: str = "llm",
    **kw,
) -> Analysis:
    return Analysis(
        change_type=ChangeType.FEATURE,
        importance=importance,
        importance_reason=reason,
        summary=summary,
        impact=kw.pop("impact", "Users of the CLI."),
        insights=kw.pop("insights", Insights(architecture="Keeps layers.", security="No new input.")),
        risks=kw.pop("risks", ("Locale parsing.",)),
        recommendations=kw.pop("recommendations", ("Document it.",)),
        origin=origin,
        coverage=kw.pop("coverage", Coverage(3, 3)),
        **kw,
    )


def digest(entries, lang: str = "en", headline=("Export gained a flag.",), repo: str = "acme/widgets") -> Digest:
    return Digest(
        repo=repo,
        branch="main",
        window=day_window(date(2026, 1, 28), "Asia/Shanghai"),
        lang=lang,
        entries=tuple(entries),
        headline=tuple(headline),
        headline_origin="llm",
        repo_url="https://github.com/acme/widgets",
    )


def check(payloads: list[dict]) -> None:
    """The limits Slack enforces (the fake's own validator) plus ours, for every payload."""
    assert payloads, "nothing rendered"
    for p in payloads:
        assert set(p) == {"text", "blocks"}
        assert p["text"].strip() and len(p["text"]) <= 4000
        assert check_blocks(p["blocks"]) == [], check_blocks(p["blocks"])
        assert len(p["blocks"]) <= 50
        assert sum(len(json.dumps(b, ensure_ascii=False).encode()) for b in p["blocks"]) <= CUMULATIVE_LIMIT
        for b in p["blocks"]:
            if b["type"] == "section":
                assert len(b["text"]["text"]) <= 3000
            if b["type"] == "header":
                assert len(b["text"]["text"]) <= 150
            if b["type"] == "context":
                assert len(b["elements"]) <= 10
            if b["type"] == "actions":
                assert len(b["elements"]) <= 25
                for e in b["elements"]:
                    if e["type"] == "button":
                        assert len(e["text"]["text"]) <= 75 and len(e["value"]) <= 2000


def visible(payloads: list[dict]) -> str:
    """All block text in order, as the reader sees it, whitespace removed (splits add breaks)."""
    marker = re.compile(r"\(continued \d+/\d+\)$|（续 \d+/\d+）$")
    texts = [
        x
        for i, p in enumerate(payloads)
        for j, b in enumerate(p["blocks"])
        if not (i and j == 0 and b["type"] == "context" and marker.search(b["elements"][0]["text"]))
        for x in R.plain_texts(b)
    ]
    return re.sub(r"\s+", "", R.unescape("".join(texts)))


def squash(text: str) -> str:
    return re.sub(r"\s+", "", text)


EVIL_TITLE = (
    "fix: <!channel> read <https://evil.example|docs> now <@U1> @here <!subteam^S1|team> [docs](https://evil.example)"
)


INJECTIONS = ("<!channel>", "<!here>", "<@U1>", "<https://evil.example|docs>", "<!subteam^S1|team>")


def assert_inert(text: str) -> None:
    for bad in INJECTIONS:
        assert bad not in text, bad
    assert not re.search(r"(?<![\w])@(here|channel|everyone)\b", text), text
    assert "](https://evil" not in text
