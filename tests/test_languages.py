"""One analysis per commit, whatever the readers' languages (issue 33 §3): a repository read in
Chinese and in English costs one analysis of each commit — its texts written in both by the
same LLM request when both languages are known, translated (a few requests for a whole day)
when one is asked later — never a second analysis; and each channel reads its own language, with
the same levels. Through Slack (fake Web API, real SDK), the fake LLM (counting what it is
asked), real Redis, a real git repository; the CLI as a process; the terminal chat offline.
"""

from __future__ import annotations

import asyncio
import json
import re
from datetime import UTC, datetime

import pytest

from bot.analysis.language import prose_counts
from bot.runtime.app import App
from bot.runtime.services import Services
from handlers.slack import build_slack
from handlers.web import bound_port, build_app, start_server
from tests.fakes.openai_server import (
    TRANSLATE_MARK,
    FakeOpenAI,
    Reply,
    commit_facts,
    default_responder,
    request_lang,
)
from tests.fakes.slack_server import FakeSlack, SlackSender
from tests.shared.slack import FAST, HIGH_TITLE, LOW_TITLE, MEDIUM_TITLE, SECRET, Bot, by_title, shown

NOW = datetime(2026, 1, 29, 1, 30, tzinfo=UTC)  # 09:30 on the 29th in Shanghai
ZH, EN = "C0ZH", "C0EN"
TITLES = (HIGH_TITLE, MEDIUM_TITLE, LOW_TITLE)


def system_of(request: dict) -> str:
    return next((m.get("content") or "" for m in request["messages"] if m.get("role") == "system"), "")


def kinds(llm: FakeOpenAI, since: int = 0) -> dict[str, int]:
    """The requests the endpoint was asked, by kind."""
    found = {"analysis": 0, "joint": 0, "translation": 0, "headline": 0}
    for r in llm.requests[since:]:
        system = system_of(r)
        if '"bullets"' in system:
            found["headline"] += 1
        elif TRANSLATE_MARK in system:
            found["translation"] += 1
        else:
            found["analysis"] += 1
            found["joint"] += '"translations"' in system
    return found


def tokens(llm: FakeOpenAI, since: int = 0) -> int:
    return sum(u["prompt_tokens"] + u["completion_tokens"] for u in llm.usages[since:])


def chinese(text: str) -> bool:
    cjk, latin = prose_counts(text)
    return cjk > latin


def english(text: str) -> bool:
    cjk, _ = prose_counts(text)
    return cjk == 0


@pytest.fixture
async def make_bot(make_settings, widgets):
    made: list[tuple[Bot, FakeSlack]] = []

    async def build(llm: FakeOpenAI, **overrides) -> tuple[Bot, FakeSlack]:
        slack = FakeSlack().start()
        settings = make_settings(
            slack_bot_token=slack.token,
            slack_signing_secret=SECRET,
            slack_api_url=slack.url,
            default_repo=str(widgets.path),
            default_lang="en",
            default_tz="Asia/Shanghai",
            openai_base_url=llm.url,
            openai_api_key="sk-test-languages",
            **overrides,
        )
        services = Services.build(settings, clock=lambda: NOW)
        chat = App.build(services, clock=lambda: NOW)
        adapter = build_slack(settings, chat.router, receive=True, pacing=FAST)
        chat.register(adapter.platform)
        runner = await start_server(build_app(services.store, adapter.http_routes()), "127.0.0.1", 0)
        sender = SlackSender(f"http://127.0.0.1:{bound_port(runner)}/slack/events", SECRET)
        bot = Bot(chat, adapter, sender, runner, services)
        made.append((bot, slack))
        return bot, slack

    yield build
    for bot, slack in made:
        await bot.close()
        slack.stop()


async def say(bot: Bot, command: str, channel: str) -> None:
    status, _ = await bot.sender.slash(command, channel=channel)
    assert status == 200
    await bot.settle()


def entries(slack: FakeSlack, channel: str) -> dict[str, str]:
    """title → what the channel's digest thread shows of that commit."""
    parent = slack.top_level(channel)[-1]
    replies = slack.replies(channel, parent.ts)
    return {t: shown(by_title(replies, t)) for t in TITLES[:2]}


LEVEL = re.compile(r"(🔴|🟡|🟢)")


def levels(texts: dict[str, str]) -> dict[str, str]:
    return {t: LEVEL.search(x).group(1) for t, x in texts.items()}


def summary_of(entry: str) -> str:
    """The summary's text in a commit's reply (the line after its heading, either language)."""
    lines = entry.splitlines()
    i = next(n for n, line in enumerate(lines) if "📋" in line)
    return " ".join(lines[i : i + 2]).split("📋", 1)[1]


async def test_a_second_language_asked_later_costs_translations_not_analyses(make_bot):
    with FakeOpenAI() as llm:
        bot, slack = await make_bot(llm)
        await say(bot, "config lang zh", ZH)
        await say(bot, "2026-01-28", ZH)
        first = kinds(llm)
        assert first == {"analysis": 3, "joint": 0, "translation": 0, "headline": 1}  # English was not read yet
        spent = tokens(llm)

        asked = len(llm.requests)
        await say(bot, "2026-01-28", EN)
        later = kinds(llm, asked)
        # The three commits' texts and the headline's bullets translated in one request; nothing
        # analysed again, no second headline.
        assert later == {"analysis": 0, "joint": 0, "translation": 1, "headline": 0}
        assert tokens(llm, asked) < 0.25 * spent

        zh, en = entries(slack, ZH), entries(slack, EN)
        assert levels(zh) == levels(en)  # one analysis: one level, in every language
        for title in zh:
            assert chinese(summary_of(zh[title])), zh[title]
            assert english(summary_of(en[title])), en[title]

        # Both languages are known now: a new day is analysed once, its texts in both.
        asked = len(llm.requests)
        await say(bot, "2026-01-27", EN)
        await say(bot, "2026-01-27", ZH)
        assert kinds(llm, asked) == {"analysis": 1, "joint": 1, "translation": 1, "headline": 1}


async def test_languages_known_in_advance_are_written_by_the_one_analysis(make_bot, widgets):
    with FakeOpenAI() as llm:
        bot, slack = await make_bot(llm)
        await say(bot, "config lang zh", ZH)
        await say(bot, f"subscribe {widgets.path}", ZH)  # the repository is read in Chinese…
        await say(bot, f"subscribe {widgets.path}", EN)  # …and in English
        await say(bot, "2026-01-28", EN)
        assert kinds(llm) == {"analysis": 3, "joint": 3, "translation": 0, "headline": 1}
        asked = len(llm.requests)
        await say(bot, "2026-01-28", ZH)  # its headline: the English one's bullets, translated
        assert kinds(llm, asked) == {"analysis": 0, "joint": 0, "translation": 1, "headline": 0}
        zh, en = entries(slack, ZH), entries(slack, EN)
        assert levels(zh) == levels(en)
        for title in zh:
            assert chinese(summary_of(zh[title])) and english(summary_of(en[title]))


async def test_two_languages_asked_at_once_share_one_analysis_of_each_commit(make_bot, widgets):
    with FakeOpenAI(latency=0.05) as llm:
        bot, slack = await make_bot(llm)
        await say(bot, "config lang zh", ZH)
        await say(bot, f"subscribe {widgets.path}", ZH)
        await say(bot, f"subscribe {widgets.path}", EN)
        statuses = await asyncio.gather(*(bot.sender.slash("2026-01-28", channel=c) for c in (ZH, EN)))
        assert [status for status, _ in statuses] == [200, 200]
        await bot.settle()
        asked = kinds(llm)
        assert asked["analysis"] == 3 and asked["joint"] == 3  # each commit once, both languages' texts
        titles = [commit_facts(r)[0] for r in llm.requests if commit_facts(r)[0]]
        assert sorted(titles) == sorted(set(titles))
        zh, en = entries(slack, ZH), entries(slack, EN)
        assert levels(zh) == levels(en)
        for title in zh:
            assert chinese(summary_of(zh[title])) and english(summary_of(en[title]))


def english_under_chinese(request: dict) -> Reply:
    """A model that writes the Chinese texts of a joint answer in English, and answers the
    translation of texts it was given with English too: both fail the language checks."""
    reply = default_responder(request)
    system = system_of(request)
    if '"translations"' in system and reply.content:
        data = json.loads(reply.content)
        english = {k: v for k, v in data.items() if k not in ("change_type", "importance", "translations")}
        data["translations"] = {"zh": english}
        return Reply(content=json.dumps(data))
    if TRANSLATE_MARK in system and request_lang(request) == "zh":
        entries = []
        for line in re.search(r"<analyses>\n(.*?)\n</analyses>", request["messages"][1]["content"], re.S)[1].split(
            "\n"
        ):
            item = json.loads(line)
            entries.append({"id": item["id"], "texts": [f"{t} (this stays in English, sorry)" for t in item["texts"]]})
        return Reply(content=json.dumps({"entries": entries}))
    return reply


async def test_texts_in_the_wrong_language_are_never_shown_the_commit_is_analysed_in_that_language(make_bot, widgets):
    with FakeOpenAI(english_under_chinese) as llm:
        bot, slack = await make_bot(llm)
        await say(bot, "config lang zh", ZH)
        await say(bot, f"subscribe {widgets.path}", ZH)
        await say(bot, "2026-01-28", EN)  # joint requests: their Chinese part is English, left out
        assert kinds(llm) == {"analysis": 3, "joint": 3, "translation": 0, "headline": 1}
        asked = len(llm.requests)
        await say(bot, "2026-01-28", ZH)
        # translated (and asked once more), still English: each commit is then analysed in Chinese,
        # and the headline made in Chinese
        assert kinds(llm, asked) == {"analysis": 3, "joint": 0, "translation": 2, "headline": 1}
        zh = entries(slack, ZH)
        for text in zh.values():
            assert chinese(summary_of(text)) and "sorry" not in text, text


async def test_the_cli_in_english_after_chinese_translates_instead_of_analysing_again(run, widgets):
    with FakeOpenAI() as llm:
        env = {"OPENAI_BASE_URL": llm.url, "OPENAI_API_KEY": "sk-test-cli-languages", "DEFAULT_TZ": "Asia/Shanghai"}
        zh = run("digest", "--repo", str(widgets.path), "--date", "2026-01-28", "--lang", "zh", env=env)
        assert zh.returncode == 0, zh.stderr
        assert kinds(llm) == {"analysis": 3, "joint": 0, "translation": 0, "headline": 1}
        asked = len(llm.requests)
        en = run("digest", "--repo", str(widgets.path), "--date", "2026-01-28", "--lang", "en", env=env)
        assert en.returncode == 0, en.stderr
        assert kinds(llm, asked) == {"analysis": 0, "joint": 0, "translation": 1, "headline": 0}
        assert "Adds a --since flag" not in en.stdout  # the analyses' texts, translated (not the zh answer's)
        assert "为 export 命令新增" in zh.stdout and "为 export 命令新增" not in en.stdout


async def test_offline_one_reading_of_the_commit_writes_every_language(widgets):
    """The offline analyser reads a commit's facts once and writes each language's sentences from
    them: the same analyses as reading it once per language, the level the same in both."""
    from bot.analysis.offline import analyse_offline, analyse_offline_langs
    from bot.sources.localgit import LocalGitSource

    source = LocalGitSource(str(widgets.path))
    for sha in widgets.shas.values():
        commit = await source.get_commit(sha)
        files = await source.get_files(sha)
        both = analyse_offline_langs(commit, files, ("zh", "en"))
        assert both == {lang: analyse_offline(commit, files, lang) for lang in ("zh", "en")}
        assert both["zh"].importance == both["en"].importance
        assert chinese(both["zh"].summary + both["zh"].importance_reason) and english(both["en"].importance_reason)


async def test_a_language_noted_is_known_at_once_here_and_from_redis_elsewhere(store):
    """The languages a process asks for commit after commit are kept a moment, but a language
    the process notes itself counts from its next question on, and another process reads it."""
    from bot.digest.readers import Readers

    now = NOW.timestamp()
    here, elsewhere = Readers(store, lambda: now), Readers(store, lambda: now)
    assert await here.languages("git:/r", "zh") == ("zh",)  # (kept for the next commits)
    await here.note("git:/r", "en")
    assert await here.languages("git:/r", "zh") == ("zh", "en")
    assert await elsewhere.languages("git:/r", "zh") == ("zh", "en")
