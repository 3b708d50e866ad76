"""Questions about a period in chat, end to end: signed Slack requests and Feishu callbacks into
the real HTTP endpoints, the real SDKs against the fake platforms, real Redis, a real git
repository (and the fake GitHub for a repository named with `in owner/repo`), offline analyses or
the fake LLM. The chat's clock is fixed: Wednesday 2026-01-28, 10:00 in Shanghai."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from zoneinfo import ZoneInfo

import pytest

from bot.render import slack as R
from bot.runtime.app import App
from bot.runtime.services import Services
from handlers.slack import Pacing, build_slack
from handlers.web import bound_port, build_app, start_server
from tests.fakes.github_server import FakeFile
from tests.fakes.openai_server import FakeOpenAI, Reply, default_responder
from tests.fakes.slack_server import FakeSlack, SlackSender
from tests.gitrepo import GitRepo
from tests.shared.feishu import GROUP, feishu_env

SH = ZoneInfo("Asia/Shanghai")
NOW = datetime(2026, 1, 28, 2, 0, tzinfo=UTC)
SECRET = "test-signing-secret"
CHANNEL = "C0001"
FAST = Pacing(per_second=500, burst=100, edit_interval=0.05, stream_interval=0.02)


@pytest.fixture
def engine(tmp_path) -> GitRepo:
    r = GitRepo(tmp_path / "engine", bare_origin="https://github.com/acme/engine.git")
    at = lambda d, h=10: datetime(2026, 1, d, h, 0, tzinfo=SH)  # noqa: E731
    r.commit("init", {"vllm/core/scheduler.py": "def schedule():\n    return []\n"}, when=at(10))
    r.shas = {
        "rocm": r.commit(
            "[ROCm] Add FP8 GEMM kernels for MI300 (#102)",
            {"vllm/platforms/rocm.py": "FP8 = True\n", "csrc/rocm/fp8_gemm.cu": "// kernel\n"},
            when=at(20),
        ),
        "attn": r.commit(
            "Refactor FlashAttentionBackend metadata builder",
            {"vllm/attention/backends/flash_attn.py": "class FlashAttentionBackend:\n    pass\n"},
            when=at(23),
        ),
        "sched": r.commit(
            "Scheduler: chunked prefill budget (#105)", {"vllm/core/scheduler.py": "BUDGET = 512\n"}, when=at(26)
        ),
        "docs": r.commit("docs: fix typos in the quickstart", {"README.md": "engine\n"}, when=at(27)),
    }
    return r


@pytest.fixture
async def slack_bot(make_settings, engine):
    with FakeSlack() as slack:
        made = []

        async def build(**overrides):
            settings = make_settings(
                slack_bot_token=slack.token,
                slack_signing_secret=SECRET,
                slack_api_url=slack.url,
                default_repo=str(engine.path),
                default_lang="en",
                default_tz="Asia/Shanghai",
                **overrides,
            )
            services = Services.build(settings)
            chat = App.build(services, clock=lambda: NOW)
            adapter = build_slack(settings, chat.router, receive=True, pacing=FAST)
            chat.register(adapter.platform)
            runner = await start_server(build_app(services.store, adapter.http_routes()), "127.0.0.1", 0)
            sender = SlackSender(f"http://127.0.0.1:{bound_port(runner)}/slack/events", SECRET)
            made.append((chat, adapter, runner, sender, services))
            return slack, chat, sender

        yield build
        for chat, adapter, runner, sender, services in made:
            await sender.close()
            await chat.drain()
            await adapter.close()
            await runner.cleanup()
            await services.aclose()


def shown(message) -> str:
    texts = [x for b in message.blocks for x in R.plain_texts(b)] if message.blocks else [message.text]
    return R.unescape("\n".join(texts))


def listed(text: str) -> list[str]:
    part = re.split(r"\*?(?:Sources|来源)\*?", text)[-1]
    return re.findall(r"^• `([0-9a-f]{7})`", part, re.M)


async def test_slash_ask_answers_in_a_thread_and_follow_ups_keep_the_period(slack_bot, engine):
    slack, chat, sender = await slack_bot()
    status, _ = await sender.slash("ask what changed in the scheduler this week?")
    assert status == 200
    await chat.drain()
    (header,) = slack.top_level(CHANNEL)
    assert "❓ <@U0001> asked: what changed in the scheduler this week?" in header.blocks[0]["text"]["text"]
    (answer,) = [m for m in slack.replies(CHANNEL, header.ts) if m.streamed]
    text = R.unescape(answer.text)
    assert "acme/engine · 2026-01-26..2026-01-28 (Asia/Shanghai) · 2 commits" in text
    assert listed(text) == [engine.shas["sched"][:7]]
    assert slack.ephemerals == []

    # A follow-up keeps this week: the FlashAttention refactor (the 23rd) is outside it, though
    # inside the default last 7 days.
    await sender.event(
        sender.message_event("<@UBOT> any flash attention work?", kind="app_mention", thread_ts=header.ts)
    )
    await chat.drain()
    answers = [m for m in slack.replies(CHANNEL, header.ts) if m.streamed]
    assert len(answers) == 2
    assert R.unescape(answers[1].text).startswith(
        "Nothing in that period matches: none of the 2 commits of acme/engine in 2026-01-26..2026-01-28"
    )
    # One that names another period moves the thread there.
    await sender.event(
        sender.message_event("<@UBOT> and FP8 on ROCm last week?", kind="app_mention", thread_ts=header.ts)
    )
    await chat.drain()
    answers = [m for m in slack.replies(CHANNEL, header.ts) if m.streamed]
    assert "2026-01-19..2026-01-25" in R.unescape(answers[2].text)
    assert listed(R.unescape(answers[2].text)) == [engine.shas["rocm"][:7]]
    # And a question naming one of the answer's sources by SHA is about that commit.
    await sender.event(
        sender.message_event(
            f"<@UBOT> what could {engine.shas['rocm'][:7]} break?", kind="app_mention", thread_ts=header.ts
        )
    )
    await chat.drain()
    answers = [m for m in slack.replies(CHANNEL, header.ts) if m.streamed]
    about = R.unescape(answers[3].text)  # no word of it is in the diff: the commit's main code changes
    assert f"No LLM is configured, and the diff of {engine.shas['rocm'][:7]}" in about and "+FP8 = True" in about


async def test_bad_periods_get_one_private_sentence_and_the_usage(slack_bot):
    slack, chat, sender = await slack_bot()
    await sender.slash("ask what changed in the last 40 days?")
    await chat.drain()
    (reply,) = slack.ephemerals
    text = R.unescape(reply["text"] + "\n".join(x for b in reply["blocks"] for x in R.plain_texts(b)))
    assert "spans 40 days; the limit is 31 (MAX_RANGE_DAYS)." in text
    assert "/digest ask [<sha|#PR>] <question>" in text
    assert slack.top_level(CHANNEL) == []  # nothing posted for everyone


async def test_a_bad_period_in_a_mention_or_a_follow_up_is_one_sentence_and_the_usage(slack_bot):
    slack, chat, sender = await slack_bot()
    await sender.event(sender.message_event("<@UBOT> what changed in the last 40 days?", kind="app_mention"))
    await chat.drain()
    (reply,) = slack.ephemerals
    text = R.unescape(reply["text"] + "\n".join(x for b in reply["blocks"] for x in R.plain_texts(b)))
    assert "spans 40 days; the limit is 31 (MAX_RANGE_DAYS)." in text and "Usage: `/digest ask [<sha|#PR>]" in text
    assert slack.top_level(CHANNEL) == []

    await sender.slash("ask what changed in the scheduler?")
    await chat.drain()
    (header,) = slack.top_level(CHANNEL)
    await sender.event(
        sender.message_event("<@UBOT> and from 2026-01-25 to 2026-01-20?", kind="app_mention", thread_ts=header.ts)
    )
    await chat.drain()
    reply = slack.ephemerals[-1]
    text = R.unescape(reply["text"] + "\n".join(x for b in reply["blocks"] for x in R.plain_texts(b)))
    assert "The period ends (2026-01-20) before it starts (2026-01-25)." in text and "Usage:" in text
    assert len([m for m in slack.replies(CHANNEL, header.ts) if m.streamed]) == 1  # no second answer


async def test_a_dm_names_its_repository_with_in_owner_repo(slack_bot, fake_github, engine):
    fake_github.add_repo("octo/widgets")
    sha = fake_github.add_commit(
        "octo/widgets",
        "Speed up the tokenizer (#12)",
        committed_at=datetime(2026, 1, 21, 3, 0, tzinfo=UTC),
        files=[FakeFile("widgets/tokenize.py", "modified", additions=5)],
    )
    fake_github.add_pull("octo/widgets", 12, body="Detokenization now streams incrementally.")
    fake_github.add_commit(
        "octo/widgets",
        "Bump the version",
        committed_at=datetime(2026, 1, 22, 3, 0, tzinfo=UTC),
        files=[FakeFile("pyproject.toml", "modified")],
    )
    slack, chat, sender = await slack_bot(github_api_url=fake_github.url)
    event = sender.message_event(
        "what changed in detokenization last week in octo/widgets?", channel="D0001", channel_type="im"
    )
    await sender.event(event)
    await chat.drain()
    (header,) = slack.top_level("D0001")
    (answer,) = [m for m in slack.replies("D0001", header.ts) if m.streamed]
    text = R.unescape(answer.text)
    assert "octo/widgets · 2026-01-19..2026-01-25 (Asia/Shanghai) · 2 commits" in text
    assert listed(text) == [sha[:7]]  # found by its PR's text
    assert f"https://github.com/octo/widgets/commit/{sha}" in text
    # A DM that is not a question still gets the help.
    await sender.event(sender.message_event("hello", channel="D0001", channel_type="im"))
    await chat.drain()
    assert "/digest subscribe owner/repo" in shown(slack.top_level("D0001")[-1])


def _citing(request: dict):
    """A model that cites the first commit it was given, and one it was not."""
    if not request.get("stream"):
        return default_responder(request)
    given = re.findall(r"^\[([0-9a-f]{7})\]", request["messages"][-1]["content"], re.M)
    text = f"ROCm 上新增了 FP8 GEMM 内核 [{given[0]}]，另见 [f00dbabe]。"
    return Reply(chunks=[text[i : i + 6] for i in range(0, len(text), 6)], chunk_delay=0.01)


async def test_feishu_mention_in_chinese_streams_a_cited_answer(make_settings, engine):
    with FakeOpenAI(_citing) as llm:
        async with feishu_env(
            make_settings,
            engine,
            openai_base_url=llm.url,
            openai_api_key="sk-test",
            default_lang="zh",
            default_tz="Asia/Shanghai",
        ) as env:
            env.chat.clock = lambda: NOW
            status, _ = await env.say("上周 FP8 在 ROCm 上有什么改动？")
            assert status == 200
            await env.settle()
            (header,) = env.fake.top_level(GROUP)
            assert "上周 FP8 在 ROCm 上有什么改动？" in env.fake.shown(header)
            replies = env.fake.thread(header.message_id)
            text = "\n".join(env.fake.shown(m) for m in replies).replace("\u200b", "")  # not seen by a reader
            short = engine.shas["rocm"][:7]
            assert f"ROCm 上新增了 FP8 GEMM 内核 [{short}]，另见 [非来源]。" in text
            assert "f00dbabe" not in text
            assert "2026-01-19..2026-01-25" in text and listed(text) == [short]
            streams = [r for r in llm.requests if r.get("stream")]
            assert len(streams) == 1 and f"[{short}]" in streams[0]["messages"][-1]["content"]
