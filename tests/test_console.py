"""The terminal chat, driven as a user types: what it prints is what the user sees. Also the
conversation core's flows that every platform shares (commands, threads, deliveries, clock)."""

from __future__ import annotations

import asyncio
import io
import os
import subprocess
import sys
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from bot.core.models import Subscription
from bot.runtime.app import App
from bot.runtime.services import Services
from handlers.console import ConsoleChat, ConsolePlatform
from tests.shared.console import NOW, SH, console_repo


@pytest.fixture
def repo(tmp_path):
    return console_repo(tmp_path)


ROOT = Path(__file__).resolve().parent.parent


async def test_digest_then_thread_questions(console, repo):
    shown = await console("/digest 2026-01-28")
    assert "[#1] ⏳ Building the 2026-01-28 digest for acme/widgets" in shown
    assert "[#1] (updated) Daily update report (2026-01-28) · acme/widgets" in shown
    assert "3 commits on 2026-01-28" in shown
    # thread replies under #1: the high/medium commits in full, the low one grouped
    assert "↳ [#2 in #1]" in shown and "Remove the legacy exporter" in shown
    assert "Fix typo in README" in shown
    assert "<!channel>" not in shown.replace("Handle <!channel>", "")  # only the literal title text

    unclear = await console("reply 1 hmm")  # no commit named, none discussed yet: ask which
    assert "Which commit do you mean? “hmm”" in unclear
    assert "Remove the legacy exporter" in unclear and "Fix typo in README" in unclear

    answer = await console("reply 1 what did #41 remove?")
    assert "in #1]" in answer and "No LLM is configured" in answer
    assert "legacy_export.py" in answer

    follow_up = await console("reply 1 and is anything else affected?")
    assert "No LLM is configured" in follow_up and "legacy_export.py" in follow_up  # same commit (focus)


async def test_commands_and_bad_input(console, repo):
    assert "Unknown command 'frobnicate'" in await console("/digest frobnicate")
    bad_date = await console("/digest 2026-02-30")
    assert "(only you) ⚠️ '2026-02-30' is not a real calendar date." in bad_date
    assert "Usage: `/digest [DATE|A..B|today|yesterday|last-week|this-week]" in bad_date
    future = await console("/digest 2027-01-01")
    assert "is in the future" in future and "[#" not in future  # nothing posted
    subscribed = await console(f"/digest subscribe {repo.path} at 9:00 min medium")
    assert f"✅ Subscribed to {repo.path}: the previous day's digest every day at 09:00 (Asia/Shanghai)" in subscribed
    assert "minimum importance medium" in subscribed
    again = await console(f"/digest subscribe {repo.path} lang zh")
    assert "✅ Updated the" in again and "language zh · minimum importance medium" in again
    listing = await console("/digest list")
    assert f"• {repo.path} — daily at 09:00 (Asia/Shanghai) · zh · min medium" in listing
    assert "Channel settings: language en" in listing
    assert "✅ Unsubscribed" in await console(f"/digest unsubscribe {repo.path}")
    assert "is not subscribed to" in await console(f"/digest unsubscribe {repo.path}")
    assert "No subscriptions here yet" in await console("/digest list")
    assert "time zone America/New_York" in await console("/digest config tz America/New_York")
    assert "usage: reply N <question>" in await console("reply x")
    assert "There is no message #99 yet." in await console("reply 99 why?")
    assert "Commands (`/digest`" in await console("/digest help")


async def test_local_paths_only_from_the_operators_terminal(console, repo, tmp_path):
    chat = console.chat
    from bot.core.chat_platform import Conversation

    slack_like = Conversation(platform="console", channel="c", user="u")
    # The console may name any local repository path…
    shown = await console(f"/digest 2026-01-28 {repo.path}")
    assert "Daily update report (2026-01-28) · acme/widgets" in shown
    # …a chat platform may not (it would read the bot host's disk).
    from bot.core.models import UsageError

    with pytest.raises(UsageError, match="In chat you can name GitHub repositories"):
        chat.router.check_repo(Conversation(platform="slack", channel="c", user="u"), str(tmp_path))
    assert chat.router.check_repo(slack_like, str(tmp_path)) == str(tmp_path)


async def test_clock_posts_once_with_two_clocks_and_a_restart(make_settings, repo):
    settings = make_settings(default_repo=str(repo.path), default_lang="en", catchup_minutes=60)
    services = Services.build(settings, clock=lambda: NOW)
    out = io.StringIO()
    platform = ConsolePlatform(out=out)
    chat = App.build(services, {"console": platform}, clock=lambda: NOW)
    await chat.subs.upsert(
        Subscription("console", "console", str(repo.path), at="09:20", tz="Asia/Shanghai", lang="en")
    )
    # Two clocks tick at the same moment (two replicas), then a restarted one ticks again.
    first, second = (
        chat.make_clock(settings=settings, now=lambda: NOW),
        chat.make_clock(settings=settings, now=lambda: NOW),
    )
    results = await asyncio.gather(first.tick(), second.tick())
    outcomes = sorted(r[0][2] for r in results)
    assert outcomes == ["another worker is delivering", "delivered"]
    restarted = chat.make_clock(settings=settings, now=lambda: NOW + timedelta(minutes=5))
    assert [r[2] for r in await restarted.tick()] == ["already delivered"]
    text = out.getvalue()
    assert text.count("Daily update report (2026-01-28)") == 1
    # Too late for catch-up the next day at noon: nothing is posted for the 28th again, nor the 29th.
    late = chat.make_clock(settings=settings, now=lambda: NOW + timedelta(days=1, hours=3))
    assert await late.tick() == []
    await services.aclose()


async def test_empty_day_posts_one_line_or_nothing(make_settings, repo):
    settings = make_settings(default_repo=str(repo.path), default_lang="en")
    services = Services.build(settings, clock=lambda: NOW)
    out = io.StringIO()
    chat = App.build(services, {"console": ConsolePlatform(out=out)}, clock=lambda: NOW)
    from datetime import date

    from bot.core.window import day_window

    quiet = Subscription("console", "console", str(repo.path), lang="en")
    await chat.deliver_subscription(quiet, day_window(date(2026, 1, 20), "Asia/Shanghai"), "k1")
    assert out.getvalue().strip().endswith("No new commits in acme/widgets on 2026-01-20 (Asia/Shanghai).")
    skip = Subscription("console", "console", str(repo.path), lang="en", post_empty=False)
    before = out.getvalue()
    await chat.deliver_subscription(skip, day_window(date(2026, 1, 21), "Asia/Shanghai"), "k2")
    assert out.getvalue() == before
    await services.aclose()


def test_run_opens_the_console_by_default(redis_url, repo, tmp_path):
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("SLACK_", "FEISHU_", "OPENAI_", "GITHUB_", "REDIS_", "DEFAULT_"))
    }
    env.update(
        {
            "REDIS_URL": redis_url,
            "REDIS_PREFIX": "runconsole:",
            "DEFAULT_REPO": str(repo.path),
            "DEFAULT_LANG": "en",
            "PYTHONPATH": str(ROOT),
        }
    )
    proc = subprocess.run(
        [sys.executable, "-m", "bot", "run"],
        input="/digest 2026-01-28\nreply 1 what happened to the legacy exporter?\nquit\n",
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert "Type a command: /digest" in proc.stdout
    assert "Daily update report (2026-01-28) · acme/widgets" in proc.stdout
    assert "No LLM is configured" in proc.stdout
    assert "Traceback" not in proc.stderr


async def test_no_subscription_and_no_usable_default_repo(make_settings, tmp_path):
    settings = make_settings(default_repo=str(tmp_path / "not-a-repo"), default_lang="en")
    (tmp_path / "not-a-repo").mkdir()
    services = Services.build(settings)
    out = io.StringIO()
    platform = ConsolePlatform(out=out)
    chat = App.build(services, {"console": platform})
    await ConsoleChat(chat.router, platform).handle("/digest")
    text = out.getvalue()
    assert "This channel has no subscriptions yet; name a repository" in text
    assert "Usage: `/digest [DATE" in text and "[#" not in text  # nothing posted
    await services.aclose()


class Terminal(io.StringIO):
    """Where the console writes, as a pipe or terminal shows it: text appears once flushed.
    As stdin, `tty` says whether a person is typing (then the console prompts)."""

    def __init__(self, text: str = "", tty: bool = False):
        super().__init__(text)
        self.shown, self.tty = "", tty

    def flush(self) -> None:
        self.shown = self.getvalue()

    def isatty(self) -> bool:
        return self.tty


@pytest.fixture
async def session(make_settings, repo, tmp_path):
    """A typed session through `ConsoleChat.run`: returns (type_lines, out) where
    `await type_lines(lines, tty=...)` feeds the lines and returns once the console has left."""
    services = Services.build(make_settings(default_repo=str(repo.path), default_lang="en"), clock=lambda: NOW)
    out = Terminal()
    platform = ConsolePlatform(out=out, report_dir=tmp_path / "data" / "reports")  # not there yet
    chat = App.build(services, {"console": platform}, clock=lambda: NOW)

    async def type_lines(lines: list[str], tty: bool = False) -> str:
        await asyncio.wait_for(
            ConsoleChat(chat.router, platform).run(stdin=Terminal("".join(f"{x}\n" for x in lines), tty)), 120
        )
        await chat.drain()
        return out.getvalue()

    yield type_lines, out
    await services.aclose()


async def test_a_typed_session_goes_on_after_every_kind_of_line_until_quit(session, repo, tmp_path):
    type_lines, out = session
    sha = repo.git("log", "-1", "--format=%H").strip()  # the "[Bugfix] Handle <!channel>…" commit
    shown = await type_lines(
        [
            "config file on",  # without the slash, as typed
            "/digest 2026-01-28",
            f"details #2 {sha[:10]}",  # message #1 is the settings line
            "reply #2 what did #41 remove?",
            "",
            "reply x",
            "reply 1",
            "details x",
            "details 1",
            "reply 99 why?",
            f"details 99 {sha[:10]}",  # no such message (yet)
            "help",
            "/digest 2026-01-27",  # a second report file, beside the first
            "quit",
            "/digest help",  # after quit: never read
        ]
    )
    assert shown.startswith("Type a command: /digest")
    assert "report file on" in shown
    assert "[#2] (updated) Daily update report (2026-01-28) · acme/widgets" in shown
    assert sorted(f.name for f in (tmp_path / "data" / "reports").glob("*.md")) == [
        "acme_widgets-2026-01-27.md",
        "acme_widgets-2026-01-28.md",
    ]
    assert shown.count("↳ 📎 ") == 2
    assert "(only you) 🟢 fb4f569 [Bugfix] Handle <!channel>" in shown  # the details of the commit named
    answer = [line for line in shown.splitlines() if "No LLM is configured" in line]
    assert len(answer) == 1 and " in #2] " in answer[0] and "legacy_export.py" in shown  # the question, answered
    assert shown.count("usage: reply N <question>") == 2 and shown.count("usage: details N <sha>") == 2
    assert shown.count("There is no message #99 yet.") == 2
    assert shown.count("(only you) 🟢 fb4f569 [Bugfix]") == 1  # details only for a message that exists:
    assert shown.index("(only you) 🟢 fb4f569 [Bugfix]") < shown.index("There is no message #99 yet.")  # #2's
    assert shown.count("Commands (`/digest`") == 1  # `help` ran; `/digest help` after quit did not
    assert out.shown == shown  # everything printed was flushed: a pipe shows it as it happens


async def test_a_person_at_a_terminal_is_prompted_before_each_line(session):
    type_lines, out = session
    shown = await type_lines(["help", "quit"], tty=True)
    prompts = [line for line in shown.split("\n") if line.startswith("> ")]
    assert len(prompts) == 2 and shown.startswith("Type a command")  # before `help`, before `quit`
    assert out.shown == shown


async def test_stop_ends_a_session_waiting_for_input(make_settings, repo):
    services = Services.build(make_settings(default_repo=str(repo.path), default_lang="en"), clock=lambda: NOW)
    out = Terminal()
    platform = ConsolePlatform(out=out)
    chat = App.build(services, {"console": platform}, clock=lambda: NOW)
    read_end, write_end = os.pipe()  # nobody types: a read would wait for ever
    stdin = os.fdopen(read_end)
    stop = asyncio.Event()
    try:
        running = asyncio.create_task(ConsoleChat(chat.router, platform).run(stdin=stdin, stop=stop))
        while "Type a command" not in out.shown:
            await asyncio.sleep(0.01)
        stop.set()  # Ctrl-C / SIGTERM
        await asyncio.wait_for(running, 30)
        await asyncio.sleep(0)  # let cancellations land
        assert _left_over_tasks() == []  # the read it was waiting for is given up
    finally:
        os.close(write_end)
        await services.aclose()
    assert (
        out.getvalue().strip() == "Type a command: /digest [DATE|A..B|today] [owner/repo or path] · /digest help · "
        "reply N <question> · details N <sha> · level N too-high|too-low [sha] · quit"
    )


class Snapshots(Terminal):
    """A Terminal that keeps what was shown at each flush."""

    def __init__(self):
        super().__init__()
        self.seen: list[str] = []

    def flush(self) -> None:
        super().flush()
        self.seen.append(self.shown)


async def test_a_streamed_answer_is_shown_piece_by_piece_without_terminal_controls(make_settings, repo):
    from tests.fakes.openai_server import FakeOpenAI, Reply, default_responder

    pieces = ["The legacy exporter \x1b]0;pwned\x07", "was removed in #41, ", "with its tests."]
    with FakeOpenAI() as llm:
        llm.responder = lambda req: Reply(chunks=pieces) if req.get("stream") else default_responder(req)
        settings = make_settings(
            default_repo=str(repo.path), default_lang="en", openai_base_url=llm.url, openai_api_key="sk-test-1"
        )
        services = Services.build(settings, clock=lambda: NOW)
        out = Snapshots()
        platform = ConsolePlatform(out=out)
        chat = App.build(services, {"console": platform}, clock=lambda: NOW)
        typed = ConsoleChat(chat.router, platform)
        try:
            await typed.handle("/digest 2026-01-28")
            await chat.drain()
            before = out.getvalue()
            await typed.handle("reply 1 what did #41 remove?")
            await chat.drain()
        finally:
            await services.aclose()
    answer = out.getvalue()[len(before) :]
    assert answer.startswith("  ↳ [#") and " in #1] " in answer
    assert "The legacy exporter ]0;pwnedwas removed in #41, with its tests." in answer
    assert answer.endswith("src/legacy_export.py\n")  # the answer's line is ended: what follows starts afresh
    assert "\x1b" not in answer and "\x07" not in answer  # the LLM's text cannot retitle the terminal
    partial = [
        s[len(before) :]
        for s in out.seen
        if s.startswith(before) and "The legacy exporter" in s[len(before) :] and "with its tests." not in s
    ]
    assert partial, "the start of the answer was shown before its end arrived"
    assert out.shown == out.getvalue()


async def test_a_piped_script_ends_at_its_last_line_without_quit(session):
    type_lines, _out = session
    shown = await type_lines(["help"])  # EOF after it: the console leaves by itself (else: wait_for times out)
    assert shown.count("Commands (`/digest`") == 1


def _left_over_tasks() -> list:
    return [t for t in asyncio.all_tasks() if t is not asyncio.current_task() and not t.done()]


async def test_a_session_leaves_no_task_behind(session):
    type_lines, _out = session
    await type_lines(["help", "help", "quit"])
    await asyncio.sleep(0)  # let cancellations land
    assert _left_over_tasks() == []  # no waiter per typed line piling up for the process's life


def test_sigterm_ends_the_console_while_it_waits_for_input(redis_url, repo, tmp_path):
    import signal

    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("SLACK_", "FEISHU_", "OPENAI_", "GITHUB_", "REDIS_", "DEFAULT_"))
    }
    env.update(
        {
            "REDIS_URL": redis_url,
            "REDIS_PREFIX": "sigconsole:",
            "DEFAULT_REPO": str(repo.path),
            "DEFAULT_LANG": "en",
            "PYTHONPATH": str(ROOT),
            "PYTHONUNBUFFERED": "1",
        }
    )
    proc = subprocess.Popen(
        [sys.executable, "-m", "bot", "run"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=tmp_path,
    )
    try:
        assert "Type a command" in proc.stdout.readline()  # it waits for a line that never comes
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=60) == 0  # stdin still open: the reader must not keep it alive
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.stdin.close()
        proc.stdout.close()
        proc.stderr.close()


async def test_a_chosen_commit_outside_any_thread_is_answered_in_a_thread_of_its_own(console, repo):
    # A click whose message names no thread (a Feishu card posted outside one): the answer needs a
    # thread to go into, so the header opens one — and a follow-up there is answered too.
    from bot.core.chat_platform import Conversation

    sha = repo.git("rev-parse", "HEAD~2").strip()
    start = console.platform.out.tell()
    await console.chat.router.on_action(
        Conversation("console", "console", "you"),
        "choose",
        {"sha": sha, "repo": str(repo.path), "question": "what did #41 remove?"},
    )
    await console.chat.drain()
    shown = console.platform.out.getvalue()[start:]
    assert "#None" not in shown
    assert "[#1]" in shown and "what did #41 remove?" in shown  # the header, top level
    assert "↳ [#2 in #1]" in shown and "legacy_export.py" in shown  # the answer, in its thread
    follow_up = await console("reply 1 and is anything else affected?")
    assert "No LLM is configured" in follow_up and "legacy_export.py" in follow_up


# --- issue 26: what a newcomer meets ---------------------------------------------------------------


@pytest.mark.parametrize(
    "lang,lines",
    [
        (
            "en",
            [
                "In this terminal (N is a message's number, the [#N] before it):",
                "• reply N <question> — ask about the commits of message #N, as a question in its thread",
                "• details N <sha> — everything about one commit of message #N, shown to you only",
                "• level N too-high|too-low [sha] — say that a commit of message #N is rated too high or too low",
                "• quit — leave",
            ],
        ),
        (
            "zh",
            [
                "在这个终端里（N 是消息编号，即消息前面的 [#N]）：",
                "• reply N <问题> — 就第 N 条消息里的提交提问",
                "• details N <sha> — 第 N 条消息里某个提交的完整分析，仅你可见",
                "• level N 太高|太低 [sha] — 指出第 N 条消息里某个提交的重要度评得太高或太低（也可写 too-high|too-low，或 等级 N 太高）",
                "• quit — 退出",
            ],
        ),
    ],
)
async def test_help_explains_the_terminals_own_commands_one_line_each(console_in, lang, lines):
    console = await console_in(lang)
    shown = await console("help")
    for line in lines:
        assert line in shown, shown
    assert shown.index("/digest help") < shown.index(lines[0])  # after the bot's own commands


async def test_the_consoles_own_words_are_in_a_chinese_chats_language(console_in, repo):
    console = await console_in("zh")
    digest = await console("/digest 2026-01-28")
    assert "[#1] （已更新） 每日更新报告（2026-01-28）" in digest
    bad = await console("/digest 2026-02-30")
    assert bad.startswith("（仅你可见） ⚠️ ")
    sha = repo.git("log", "-1", "--format=%h").strip()
    asked = await console(f"/digest ask {sha} 为什么要改？")
    assert "❓ 你：为什么要改？" in asked
    for english in ("(updated)", "(only you)", "❓ you"):
        assert english not in digest + bad + asked


@pytest.mark.parametrize(
    "lang,usage",
    [
        ("en", "`/digest [DATE|A..B|today|yesterday|last-week|this-week] [owner/repo …]"),
        ("zh", "`/digest [日期|A..B|今天|昨天|前天|上周|本周] [owner/repo …]"),
    ],
)
async def test_the_digest_usage_names_the_command_once(console_in, lang, usage):
    console = await console_in(lang)
    bad_date = await console("/digest 2026-02-30")
    helped = await console("help")
    assert usage in bad_date and f"• {usage}" in helped
    assert "/digest digest" not in bad_date + helped
    assert "[#" in await console(usage.strip("`").split(" [")[0] + " 2026-01-28")  # the line, as typed, works


@pytest.mark.parametrize("lang,said", [("en", "⚠️ Unknown command '{word}'."), ("zh", "⚠️ 未知命令“{word}”。")])
async def test_a_pasted_page_is_not_echoed_back_whole(console_in, lang, said):
    console = await console_in(lang)
    shown = await console("/digest " + "x" * 5000)
    assert said.format(word="x" * 79 + "…") in shown and "x" * 81 not in shown
    repo = await console("/digest 2026-01-28 " + "a/" * 2500)  # a path that is not there
    assert "a/" * 39 + "a…" in repo and "a/" * 41 not in repo


@pytest.mark.parametrize(
    "lang,quiet,reply,details",
    [
        (
            "en",
            "[#1] (updated) No new commits in acme/widgets on 2026-01-29 (Asia/Shanghai). "
            "Try `/digest last-week` for the whole of last week.",
            "↳ [#2 in #1] That digest (2026-01-29, acme/widgets) has no commits to ask about. "
            "To ask about any commit: `/digest ask <sha> <question>`.",
            "(only you) That digest (2026-01-29, acme/widgets) lists no commits, so there are no details to show.",
        ),
        (
            "zh",
            "[#1] （已更新） acme/widgets 在 2026-01-29（Asia/Shanghai）没有新的提交。可以试试 `/digest 上周`，看上周全部的提交。",
            "↳ [#2，回复 #1] 这份报告（2026-01-29，acme/widgets）里没有提交，无从提问。要问任意一个提交：`/digest ask <sha> <问题>`。",
            "（仅你可见） 这份报告（2026-01-29，acme/widgets）里没有提交，没有可显示的详情。",
        ),
    ],
)
async def test_the_readmes_first_session_on_a_quiet_day_is_answered_truthfully(
    console_in, repo, lang, quiet, reply, details
):
    # The README's first session, on a day without commits: `/digest today`, then `reply 1 …`.
    console = await console_in(lang)
    assert quiet in await console("/digest today")
    replied = await console("reply 1 what could this break?")
    assert reply in replied and "30" not in replied.replace("2026-01-29", "")  # not "older than 30 days"
    assert details in await console("details 1 abcdef1")
    sha = repo.git("log", "-1", "--format=%h").strip()  # a commit named by its SHA is still answered
    assert f"{sha} " in await console(f"reply 1 what does {sha} do?")
    assert "last-week" not in await console("/digest 2026-01-01..2026-01-02")  # no hint for a range


async def test_a_scheduled_quiet_day_suggests_nothing(make_settings, repo):
    settings = make_settings(default_repo=str(repo.path), default_lang="en")
    services = Services.build(settings, clock=lambda: NOW)
    out = io.StringIO()
    chat = App.build(services, {"console": ConsolePlatform(out=out)}, clock=lambda: NOW)
    from datetime import date

    from bot.core.window import day_window

    await chat.deliver_subscription(
        Subscription("console", "console", str(repo.path), lang="en"),
        day_window(date(2026, 1, 20), "Asia/Shanghai"),
        "k1",
    )
    assert out.getvalue().strip().endswith("No new commits in acme/widgets on 2026-01-20 (Asia/Shanghai).")
    await services.aclose()


@pytest.mark.parametrize(
    "lang,said",
    [
        (
            "en",
            {
                "past": "3 commits on 2026-01-28 | ",
                "today": "1 commit today | ",
                "range": "4 commits | ",
                "this_week": "5 commits this week | ",
                "past_week": "1 commit in 2026-01-19..2026-01-25 | ",
            },
        ),
        (
            "zh",
            {
                "past": "2026-01-28 共 3 个提交 | ",
                "today": "今日共 1 个提交 | ",
                "range": "共 4 个提交 | ",
                "this_week": "本周共 5 个提交 | ",
                "past_week": "2026-01-19..2026-01-25 共 1 个提交 | ",
            },
        ),
    ],
)
async def test_the_stats_line_says_which_day_or_week_it_counts(console_in, repo, lang, said):
    repo.commit("[Docs] A word from last week", {"docs/a.md": "a\n"}, when=datetime(2026, 1, 21, 9, tzinfo=SH))
    repo.commit("[Docs] A word this morning", {"docs/b.md": "b\n"}, when=datetime(2026, 1, 29, 8, tzinfo=SH))
    console = await console_in(lang)
    yesterday = await console("/digest 2026-01-28")
    assert (
        said["past"] in yesterday and "today" not in yesterday and "今日" not in yesterday and "本日" not in yesterday
    )
    assert said["today"] in await console("/digest 2026-01-29")  # NOW is 09:30 on the 29th
    assert said["range"] in await console("/digest 2026-01-28..2026-01-29")
    week = await console("/digest week 2026-01-28")
    assert said["this_week"] in week, week
    last_week = await console("/digest week 2026-01-21")
    assert said["past_week"] in last_week and "this week" not in last_week and "本周" not in last_week


@pytest.mark.parametrize(
    "lang,day,span,week",
    [
        (
            "en",
            "⏳ Building the 2026-01-28 digest for acme/widgets…",
            "⏳ Building the 2026-01-27..2026-01-28 digest for acme/widgets…",
            "⏳ Building the 2026-01-26..2026-01-29 weekly roll-up for acme/widgets…",
        ),
        (
            "zh",
            "⏳ 正在生成 acme/widgets 2026-01-28 的日报…",
            "⏳ 正在生成 acme/widgets 2026-01-27..2026-01-28 的更新报告…",
            "⏳ 正在生成 acme/widgets 2026-01-26..2026-01-29 的周报…",
        ),
    ],
)
async def test_the_building_line_names_a_roll_up_and_a_range_for_what_they_are(console_in, lang, day, span, week):
    console = await console_in(lang)
    assert f"[#1] {day}" in await console("/digest 2026-01-28")
    assert span in await console("/digest 2026-01-27..2026-01-28")
    assert week in await console("/digest week 2026-01-28")
