"""A digest says what went wrong while it was built — GitHub's rate limit, an LLM that failed —
at the top, in its language, on every surface, escaped; such a digest is kept as published (every
reader gets the same one) and improved in place by the improve pass, its notices counted again."""

from __future__ import annotations

import json
import logging
from dataclasses import replace
from datetime import UTC, date, datetime
from zoneinfo import ZoneInfo

import pytest

from bot.core.chat_platform import DigestParent, Platforms
from bot.core.models import Digest
from bot.core.window import day_window
from bot.render import feishu, markdown, slack, text
from bot.render.jsonout import render_json
from tests.fakes.github_server import FakeFile

SH = ZoneInfo("Asia/Shanghai")
REPO = "acme/widgets"
WINDOW = day_window(date(2026, 1, 28), "Asia/Shanghai")
LATER = lambda: datetime(2026, 2, 1, tzinfo=UTC)  # noqa: E731 — the window is finished


def day(fake):
    fake.add_repo(REPO)
    return [
        fake.add_commit(
            REPO,
            f"feat: add option {i}",
            committed_at=datetime(2026, 1, 28, 9 + i, tzinfo=SH),
            files=[FakeFile(f"src/option_{i}.py", "modified", 30, 2)],
        )
        for i in range(3)
    ]


@pytest.fixture
def services_for(make_services):
    """Services whose clock is past the day under test (the window is finished)."""
    return lambda **overrides: make_services(LATER, **overrides)


@pytest.mark.parametrize(
    "lang,expected",
    [
        ("en", "⚠️ GitHub's API rate limit ran out: the changes of 3 of 3 commits could not be read"),
        ("zh", "⚠️ GitHub API 调用额度已用完：3 个提交中有 3 个未能读取改动内容"),
    ],
)
async def test_github_rate_limit_is_said_in_the_digest_logged_and_read_again_by_the_improve_pass(
    fake_github, services_for, caplog, lang, expected
):
    day(fake_github)
    # the listing works; then GitHub's primary limit (429 + remaining 0) with the reset an hour away
    fake_github.rate_limit_next(100, reset_in=3600, path_contains="/commits/", status=429)
    s = await services_for(github_api_url=fake_github.url, github_max_rate_limit_wait=60, default_lang=lang)
    with caplog.at_level(logging.WARNING):
        digest = await s.builder.build(s.source(REPO), WINDOW, lang)

    assert len(digest.entries) == 3 and len(digest.notices) == 1
    notice = digest.notices[0]
    assert notice.startswith(expected)
    assert "(Asia/Shanghai)" in notice  # when to try again, in the digest's time zone
    report = markdown.render_report([digest])
    assert report.index(notice) < report.index("feat: add option")  # at the top
    assert json.loads(render_json([digest]))["digests"][0]["notices"] == [notice]
    assert any("rate limit" in r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING)

    # kept as published: the next reader gets the same digest without asking GitHub again …
    asked = fake_github.count(startswith=f"/repos/{REPO}/commits/")
    again = await s.builder.build(s.source(REPO), WINDOW, lang)
    assert again.notices == digest.notices and fake_github.count(startswith=f"/repos/{REPO}/commits/") == asked
    # … and the improve pass reads the changes once GitHub answers again: the notice goes
    from bot.improve.runner import Improver

    fake_github.heal()
    assert (
        await Improver(s.store, s.settings, Platforms(), LATER, s.sources, s.builder, s.corrections).run(
            digest.kept_as, LATER()
        )
        == "3 of 3 improved"
    )
    better = await s.builder.build(s.source(REPO), WINDOW, lang)
    assert better.notices == () and better.revision == 1
    assert all(e.analysis.origin == "offline" and e.analysis.improved_from == "rate_limited" for e in better.entries)


async def test_a_digest_without_trouble_has_no_notice_and_is_cached(fake_github, services_for):
    day(fake_github)
    s = await services_for(github_api_url=fake_github.url)
    digest = await s.builder.build(s.source(REPO), WINDOW, "en")
    assert digest.notices == ()
    asked = len(fake_github.requests)
    await s.builder.build(s.source(REPO), WINDOW, "en")
    assert len(fake_github.requests) == asked  # served from the cache


HOSTILE = '⚠️ LLM failed <!channel> @all <at user_id="all"></at> [x](https://evil.example) *bold*'


async def test_every_renderer_shows_notices_first_and_escaped(fake_github, services_for):
    day(fake_github)
    s = await services_for(github_api_url=fake_github.url)
    digest: Digest = replace(await s.builder.build(s.source(REPO), WINDOW, "en"), notices=(HOSTILE,))

    md = markdown.render_report([digest])
    assert "LLM failed" in md and md.index("LLM failed") < md.index("feat: add option")
    assert "[x](https://evil.example)" not in md

    blocks = json.dumps(slack.render_parent(DigestParent(digest)), ensure_ascii=False)
    assert "LLM failed" in blocks and "<!channel>" not in blocks
    card = json.dumps(feishu.digest_cards(digest), ensure_ascii=False)
    assert "LLM failed" in card and '<at user_id=\\"all\\">' not in card
    shown = text.render_text(DigestParent(digest))
    assert shown.splitlines()[2].startswith("⚠️ LLM failed")  # after the title and the stats


async def test_llm_failures_are_said_in_the_channels_language_then_improved_in_place(fake_github, services_for):
    from tests.fakes.openai_server import Behaviour, FakeOpenAI

    day(fake_github)
    with FakeOpenAI(Behaviour("hang")) as llm:
        s = await services_for(
            github_api_url=fake_github.url,
            openai_base_url=llm.url,
            openai_api_key="sk-test-notices-000",
            llm_timeout=0.5,
            llm_max_retries=1,
        )
        digest = await s.builder.build(s.source(REPO), WINDOW, "zh")
        assert digest.notices == ("⚠️ LLM 未能分析 3 个提交中的 3 个（LLM 请求超时），这些提交显示的是离线分析。",)
        card = json.dumps(feishu.digest_cards(digest), ensure_ascii=False)
        assert "LLM 未能分析 3 个提交中的 3 个" in card
        asked = len(llm.requests)
        # the endpoint is back (the same one: another endpoint would be another digest): readers
        # still get the digest as published; the improve pass makes it again by the LLM, in place,
        # and the notice goes
        from bot.improve.runner import Improver
        from tests.fakes.openai_server import default_responder

        llm.responder = default_responder
        s = await services_for(
            github_api_url=fake_github.url,
            openai_base_url=llm.url,
            openai_api_key="sk-test-notices-000",
            redis_prefix=s.settings.redis_prefix,
        )
        same = await s.builder.build(s.source(REPO), WINDOW, "zh")
        assert same.notices == digest.notices and len(llm.requests) == asked
        await Improver(s.store, s.settings, Platforms(), LATER, s.sources, s.builder, s.corrections).run(
            digest.kept_as, LATER()
        )
        again = await s.builder.build(s.source(REPO), WINDOW, "zh")
    assert asked <= 2 * 3 and again.notices == ()
    assert [e.analysis.origin for e in again.entries] == ["llm"] * 3
    assert (
        markdown.render_report([again]).count("✏️ 已于 02-01 08:00 由 LLM 重新分析（原为离线兜底分析：LLM 请求超时）")
        == 3
    )


def test_cli_says_the_rate_limit_on_stderr_and_at_the_top_of_the_report(fake_github, redis_url, tmp_path):
    import os
    import subprocess
    import sys
    import uuid
    from pathlib import Path

    day(fake_github)
    fake_github.rate_limit_next(100, reset_in=3600, path_contains="/commits/")
    root = Path(__file__).resolve().parent.parent
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "GITHUB_", "LLM_", "REDIS_"))}
    env.update(
        {
            "REDIS_URL": redis_url,
            "REDIS_PREFIX": f"rl{uuid.uuid4().hex[:6]}:",
            "PYTHONPATH": str(root),
            "DATA_DIR": str(tmp_path / "data"),
            "GITHUB_API_URL": fake_github.url,
            "GITHUB_MAX_RATE_LIMIT_WAIT": "60",
        }
    )
    proc = subprocess.run(
        [sys.executable, "-m", "bot", "digest", "--repo", REPO, "--date", "2026-01-28", "--lang", "en"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=120,
    )
    assert proc.returncode == 0 and "Traceback" not in proc.stderr
    assert "Some commits could not be read: GitHub's API rate limit is exhausted until" in proc.stderr
    top = proc.stdout.split("feat: add option", 1)[0]
    assert "GitHub's API rate limit ran out" in top and "Try again after" in top
