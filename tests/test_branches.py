"""Several branches per subscription (issue 36 §4), end to end: `subscribe REPO branch main
release/*` typed into the real Slack adapter (signed slash commands, the fake Slack Web API) over
a real git repository with a release branch; `/digest DAY REPO branch …`; the weekly roll-up; an
alert on a release branch; the CLI's `--branch main 'release/*'`; GitHub's branches API (paginated)
through PyGithub and GitLab's through python-gitlab; bad patterns in one sentence.

What a reader must see: a commit on both branches listed once, naming both; a fix cherry-picked
onto the release branch listed once, naming both branches and its backport (by git's
`cherry picked from` line, or by the same patch when the line is missing).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pytest

from bot.core.window import day_window, week_window
from bot.render import slack as R
from bot.render.jsonout import render_json
from bot.runtime.app import App
from bot.runtime.services import Services
from handlers.slack import build_slack
from handlers.web import bound_port, build_app, start_server
from tests.fakes.github_server import FakeFile
from tests.fakes.gitlab_server import FakeDiff
from tests.fakes.slack_server import FakeSlack, SlackSender
from tests.gitrepo import GitRepo
from tests.shared.slack import FAST, SECRET, SH, Bot, shown, shown_eph

DAY = date(2026, 1, 28)
CHANNEL = "C0001"
SHARED = "feat: add --since flag to export"
FIX = "fix: guard the parser against empty rows"
SAME = "fix: clamp the page size"


def at(hour: int, minute: int = 0) -> datetime:
    return datetime(DAY.year, DAY.month, DAY.day, hour, minute, tzinfo=SH)


@dataclass
class Released:
    repo: GitRepo
    shared: str  # on main, and on release/1.0 (branched after it)
    fix: str  # on main
    pick: str  # `cherry-pick -x` of fix onto release/1.0
    same: str  # on main
    reapplied: str  # the same patch on release/1.0, without the cherry-pick line
    only: str  # on release/1.0 alone


def build_released(path: Path) -> Released:
    """main and release/1.0 on DAY: a shared commit, a fix picked with -x, a fix re-applied by hand
    (the same patch, no line), and a commit of the release branch alone."""
    r = GitRepo(path, bare_origin="https://github.com/acme/widgets.git")
    r.commit(
        "init",
        {
            "src/cli.py": "import argparse\nparser = argparse.ArgumentParser()\n",
            "src/parse.py": "def rows(x):\n    return x\n",
            "src/page.py": "SIZE = 50\n",
            "README.md": "hi\n",
        },
        when=at(1) - timedelta(days=1),
    )
    shared = r.commit(
        SHARED,
        {"src/cli.py": "import argparse\nparser = argparse.ArgumentParser()\nparser.add_argument('--since')\n"},
        when=at(9),
    )
    r.git("branch", "release/1.0")
    fix = r.commit(FIX, {"src/parse.py": "def rows(x):\n    return x or []\n"}, when=at(10))
    same = r.commit(SAME, {"src/page.py": "SIZE = min(50, 100)\n"}, when=at(11))
    r.git("checkout", "-q", "release/1.0")
    stamp = {"GIT_COMMITTER_DATE": at(12).isoformat(), "GIT_AUTHOR_DATE": at(12).isoformat()}
    r.git("cherry-pick", "-x", fix, env=stamp)
    pick = r.git("rev-parse", "HEAD").strip()
    reapplied = r.commit(f"{SAME} (1.0)", {"src/page.py": "SIZE = min(50, 100)\n"}, when=at(13))
    only = r.commit("docs: 1.0 release notes", {"README.md": "hi\n\n1.0.1\n"}, when=at(14))
    r.git("checkout", "-q", "main")
    return Released(r, shared, fix, pick, same, reapplied, only)


@pytest.fixture
def released(tmp_path) -> Released:
    return build_released(tmp_path / "widgets")


@dataclass
class Time:
    now: datetime

    def __call__(self) -> datetime:
        return self.now


@pytest.fixture
def slack():
    with FakeSlack() as fake:
        yield fake


@pytest.fixture
async def make_bot(make_settings, slack, released):
    bots: list[Bot] = []

    async def build(clock=None, **overrides) -> Bot:
        values = dict(
            slack_bot_token=slack.token,
            slack_signing_secret=SECRET,
            slack_api_url=slack.url,
            default_repo=str(released.repo.path),
            default_lang="en",
            default_tz="Asia/Shanghai",
        )
        values.update(overrides)
        settings = make_settings(**values)
        services = Services.build(settings, clock=clock) if clock else Services.build(settings)
        chat = App.build(services, clock=clock) if clock else App.build(services)
        adapter = build_slack(settings, chat.router, receive=True, pacing=FAST)
        chat.register(adapter.platform)
        runner = await start_server(build_app(services.store, adapter.http_routes()), "127.0.0.1", 0)
        sender = SlackSender(f"http://127.0.0.1:{bound_port(runner)}/slack/events", SECRET)
        bot = Bot(chat, adapter, sender, runner, services)
        bots.append(bot)
        return bot

    yield build
    for bot in bots:
        await bot.close()


async def command(bot: Bot, text: str) -> None:
    status, _ = await bot.sender.slash(text, channel=CHANNEL)
    assert status == 200
    await bot.settle()


def everything(slack: FakeSlack) -> list[str]:
    """Every message of the channel, threads included, as a reader sees it."""
    out = []
    for parent in slack.top_level(CHANNEL):
        out.append(R.unescape(shown(parent)))
        out += [R.unescape(shown(m)) for m in slack.replies(CHANNEL, parent.ts)]
    return out


def ephemeral(slack: FakeSlack) -> list[str]:
    """What the asker alone was told (ephemeral messages, response_url posts)."""
    found = [shown_eph(e) if e.get("blocks") else e.get("text", "") for e in slack.ephemerals]
    return [R.unescape(t) for t in found] + [R.unescape(json.dumps(p, ensure_ascii=False)) for p in slack.webhook_posts]


# --- a subscription on main release/* ---------------------------------------------------------------


async def test_a_subscription_on_main_and_release_lists_each_change_once_naming_its_branches(make_bot, slack, released):
    bot = await make_bot()
    # A subscription stored before several branches existed (no `branch` key) is the default
    # branch's: its digest names no branch per commit, then `branch main release/*` updates it.
    store = bot.services.store
    path = str(released.repo.path)  # `acme/widgets` is the default repository, this clone
    old = {"platform": "slack", "channel": CHANNEL, "repo": path, "at": "09:00", "lang": "en"}
    await store.hset_json(store.k("subs"), f"slack:{CHANNEL}:{path.lower()}", old)
    (sub,) = await bot.chat.subs.all()
    assert sub.branch is None
    await bot.chat.deliver_subscription(sub, day_window(DAY, "Asia/Shanghai"), "progress:b0")
    before = "\n".join(everything(slack))
    assert FIX in before and "release notes" not in before and "on main" not in before and "backport" not in before
    seen_before = len(everything(slack))

    await command(bot, "subscribe acme/widgets branch main release/*")
    (sub,) = await bot.chat.subs.all()
    assert sub.branch == "main release/*"
    assert "branch main release/*" in everything(slack)[seen_before]
    await bot.chat.deliver_subscription(sub, day_window(DAY, "Asia/Shanghai"), "progress:b1")
    seen = everything(slack)[seen_before + 1 :]
    said = "\n".join(seen)
    pick, reapplied = released.pick[:7], released.reapplied[:7]
    # the cherry-picked fix: once (its own reply), both branches named, its backport named
    fix_replies = [m for m in seen if FIX in m and "Summary" in m]
    assert len(fix_replies) == 1, seen
    assert f"on main, release/1.0 · backported as {pick}" in fix_replies[0]
    # the same patch re-applied by hand (no cherry-pick line): found by its patch id
    same_replies = [m for m in seen if SAME in m and "Summary" in m]
    assert len(same_replies) == 1 and f"on main, release/1.0 · backported as {reapplied}" in same_replies[0]
    assert f"{SAME} (1.0)" not in said  # folded into its original
    # a commit on both branches: listed once, naming both; the release branch's own: naming it
    shared_replies = [m for m in seen if SHARED in m and "Summary" in m]
    assert len(shared_replies) == 1 and "on main, release/1.0" in shared_replies[0]
    assert "docs: 1.0 release notes" in said and "on release/1.0" in said
    assert released.pick[:7] not in [line.split()[1] for line in said.splitlines() if line.startswith("🟡")]


async def test_digest_on_demand_takes_several_patterns(make_bot, slack, released):
    bot = await make_bot()
    await command(bot, f"{DAY.isoformat()} acme/widgets branch main release/*")
    said = "\n".join(everything(slack))
    assert f"backported as {released.pick[:7]}" in said and "on release/1.0" in said
    # main alone: the release branch's commits are not there, and no commit names a branch
    await command(bot, f"{DAY.isoformat()} acme/widgets branch main")
    last = slack.top_level(CHANNEL)[-1]
    alone = "\n".join(R.unescape(shown(m)) for m in [last, *slack.replies(CHANNEL, last.ts)])
    assert FIX in alone and "release notes" not in alone and "backported" not in alone


async def test_a_pattern_matching_no_branch_is_one_sentence_naming_the_branches(make_bot, slack, released):
    bot = await make_bot()
    await command(bot, "subscribe acme/widgets branch main hotfix/*")
    assert await bot.chat.subs.all() == []
    said = ephemeral(slack) + everything(slack)
    assert any(
        "No branch of acme/widgets matches 'hotfix/*'; its branches include main, release/1.0." in s for s in said
    ), said
    await command(bot, "subscribe acme/widgets branch main ../x")
    assert any("'../x' is not a valid branch name." in s for s in ephemeral(slack) + everything(slack))


async def test_too_many_matching_branches_is_one_sentence(make_bot, slack, released):
    for n in range(21):
        released.repo.git("branch", f"release/0.{n}", released.shared)
    bot = await make_bot()
    await command(bot, "subscribe acme/widgets branch release/*")
    said = ephemeral(slack) + everything(slack)
    assert any("'release/*' matches 22 branches, more than the 20 one digest follows; name fewer." in s for s in said)
    assert await bot.chat.subs.all() == []


async def test_the_weekly_rollup_names_the_branches(make_bot, slack, released):
    bot = await make_bot()
    await command(bot, "subscribe acme/widgets weekly mon branch main release/*")
    (sub,) = await bot.chat.subs.all()
    await bot.chat.deliver_subscription(sub, week_window(DAY, "Asia/Shanghai", DAY), "progress:w1")
    rollup = R.unescape(shown(slack.top_level(CHANNEL)[-1]))
    line = next(ln for ln in rollup.splitlines() if SHARED in ln and released.shared[:7] in ln)
    assert "on main, release/1.0" in line


async def test_an_alert_on_a_release_branch_names_the_branch(make_bot, slack, released):
    t0 = at(15).astimezone(UTC)
    clock = Time(t0)
    bot = await make_bot(clock=clock, alert_poll_seconds=600.0)
    await command(bot, "subscribe acme/widgets branch release/1.0 alerts high")
    await bot.chat.make_clock(now=lambda: t0).tick_alerts(t0)
    repo = released.repo
    repo.git("checkout", "-q", "release/1.0")
    high = repo.commit(
        "feat!: remove the legacy export API\n\nBREAKING CHANGE: export_v1 is gone.",
        {"src/export.py": "def export_v2(rows):\n    return list(rows)\n"},
        when=(t0 + timedelta(minutes=2)).astimezone(SH),
    )
    repo.git("checkout", "-q", "main")
    clock.now = t0 + timedelta(minutes=11)
    outcome = [o for _, o in await bot.chat.make_clock(now=lambda: clock.now).tick_alerts(clock.now)]
    assert outcome == ["sent 1"], outcome
    alert = R.unescape(shown(slack.top_level(CHANNEL)[-1]))
    assert "remove the legacy export API" in alert and high[:7] in alert
    assert "on release/1.0" in alert


# --- the CLI ------------------------------------------------------------------------------------------


def _entries(stdout: str) -> dict[str, dict]:
    (digest,) = json.loads(stdout)["digests"]
    return {e["commit"]["title"]: e for e in digest["entries"]}


@pytest.mark.parametrize("flags", [("--branch", "main", "release/*"), ("--branch", "main", "--branch", "release/*")])
def test_cli_branch_takes_several_patterns(run, released, flags):
    # one branch (the default): the output it always had, no branch keys
    proc = run("digest", "--repo", str(released.repo.path), "--date", DAY.isoformat(), "--format", "json")
    entries = _entries(proc.stdout)
    assert set(entries) == {SHARED, FIX, SAME}
    assert not any(k in e for e in entries.values() for k in ("branches", "backports", "backport_of"))
    proc = run(
        "digest",
        "--repo",
        str(released.repo.path),
        "--date",
        DAY.isoformat(),
        "--format",
        "json",
        "--lang",
        "en",
        *flags,
    )
    assert proc.returncode == 0, proc.stderr
    entries = _entries(proc.stdout)
    assert set(entries) == {SHARED, FIX, SAME, "docs: 1.0 release notes"}
    assert entries[FIX]["branches"] == ["main", "release/1.0"] and entries[FIX]["backports"] == [released.pick]
    assert entries[SAME]["backports"] == [released.reapplied]
    assert entries[SHARED]["branches"] == ["main", "release/1.0"] and "backports" not in entries[SHARED]
    assert entries["docs: 1.0 release notes"]["branches"] == ["release/1.0"]


def test_cli_bad_pattern_is_one_sentence(run, released):
    proc = run(
        "digest",
        "--repo",
        str(released.repo.path),
        "--date",
        DAY.isoformat(),
        "--lang",
        "en",
        "--branch",
        "main",
        "nope/*",
    )
    assert proc.returncode == 2
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert lines == ["error: No branch of acme/widgets matches 'nope/*'; its branches include main, release/1.0."], (
        proc.stderr
    )


# --- GitHub and GitLab: their branches APIs ----------------------------------------------------------


def _patch(line: str) -> str:
    return f"@@ -1 +1 @@\n-SIZE = 50\n+{line}\n"


async def test_github_branches_are_listed_through_the_api_and_a_backport_found_by_its_patch(make_settings, fake_github):
    gh = fake_github
    gh.add_repo("octo/widgets")
    base = gh.add_commit("octo/widgets", "init", committed_at=at(1) - timedelta(days=1))
    for n in range(120):  # more than one page of branches (100 a page at most)
        gh.add_branch("octo/widgets", f"feature/{n:02d}", base)
    shared = gh.add_commit(
        "octo/widgets", SHARED, committed_at=at(9), files=[FakeFile("src/cli.py", patch="@@ -1 +1 @@\n+x\n")]
    )
    gh.add_branch("octo/widgets", "release/1.0", shared)
    fix = gh.add_commit(
        "octo/widgets", SAME, committed_at=at(10), files=[FakeFile("src/page.py", patch=_patch("SIZE = min(50, 100)"))]
    )
    pick = gh.add_commit(
        "octo/widgets",
        f"{SAME} (1.0)",
        committed_at=at(12),
        branch="release/1.0",
        files=[FakeFile("src/page.py", patch="@@ -3 +3 @@\n-SIZE = 50\n+SIZE = min(50,  100)\n")],
    )
    settings = make_settings(github_api_url=gh.url, default_lang="en")
    services = Services.build(settings)
    try:
        source = services.source("octo/widgets")
        digest = await services.builder.build(source, day_window(DAY, "Asia/Shanghai"), "en", "main release/*")
    finally:
        await services.aclose()
    entries = {e["commit"]["title"]: e for e in json.loads(render_json([digest]))["digests"][0]["entries"]}
    assert set(entries) == {SHARED, SAME}
    assert entries[SHARED]["branches"] == ["main", "release/1.0"]
    assert entries[SAME]["commit"]["sha"] == fix and entries[SAME]["backports"] == [pick]
    assert any(r.path.endswith("/branches") and r.query.get("page") == "2" for r in gh.requests)


async def test_gitlab_branches_are_listed_through_python_gitlab(make_settings, fake_gitlab):
    gl = fake_gitlab
    if True:
        gl.add_project("group/widgets")
        gl.add_commit("group/widgets", "init", committed_at=at(1) - timedelta(days=1))
        shared = gl.add_commit(
            "group/widgets", SHARED, committed_at=at(9), diffs=[FakeDiff("src/cli.py", "@@ -1 +1 @@\n+x\n")]
        )
        gl.add_branch("group/widgets", "release/1.0", shared)
        fix = gl.add_commit(
            "group/widgets", FIX, committed_at=at(10), diffs=[FakeDiff("src/parse.py", "@@ -1 +1 @@\n+y\n")]
        )
        pick = gl.add_commit(
            "group/widgets",
            f"{FIX}\n\n(cherry picked from commit {fix})",
            committed_at=at(12),
            branch="release/1.0",
            diffs=[FakeDiff("src/parse.py", "@@ -1 +1 @@\n+y\n")],
        )
        settings = make_settings(gitlab_url=gl.url, default_lang="en")
        services = Services.build(settings)
        try:
            source = services.source("gitlab:group/widgets")
            digest = await services.builder.build(source, day_window(DAY, "Asia/Shanghai"), "en", "main release/*")
        finally:
            await services.aclose()
    (fixed, both) = digest.entries
    assert fixed.commit.sha == fix and fixed.branches == ("main", "release/1.0") and fixed.backports == (pick,)
    assert both.commit.sha == shared and both.branches == ("main", "release/1.0")


# --- every surface names the branches ---------------------------------------------------------------


@pytest.mark.parametrize("lang", ["en", "zh"])
async def test_every_surface_names_the_branches_and_the_backport(make_settings, released, lang):
    from bot.core.chat_platform import CommitDetail
    from bot.render.feishu import commit_cards, digest_cards
    from bot.render.markdown import render_report
    from bot.render.text import render_text
    from bot.report.page import render_page

    services = Services.build(make_settings(default_lang=lang))
    try:
        source = services.source(str(released.repo.path))
        digest = await services.builder.build(source, day_window(DAY, "Asia/Shanghai"), lang, "main release/*")
    finally:
        await services.aclose()
    fix = next(e for e in digest.entries if e.commit.sha == released.fix)
    pick = released.pick[:7]
    said = (
        f"on main, release/1.0 · backported as {pick}" if lang == "en" else f"分支 main, release/1.0 · 已回移为 {pick}"
    )
    cards = json.dumps(commit_cards(digest, fix, thread=None, full=True), ensure_ascii=False)
    parent = json.dumps(digest_cards(digest), ensure_ascii=False)
    surfaces = {
        "feishu": cards,
        "markdown": render_report([digest]),
        "terminal": render_text(CommitDetail(digest, fix)),
        "page": render_page(digest),
    }
    for name, shown_there in surfaces.items():
        assert said in shown_there, name
        if lang == "zh":
            assert "backport" not in shown_there and " on main" not in shown_there, name
    assert len([e for e in digest.entries if e.commit.title == FIX]) == 1 and released.pick not in parent


def test_an_upgrade_report_of_a_release_range_names_its_backports(run, released):
    repo = released.repo
    repo.git("tag", "v1.0.0", released.shared)
    repo.git("tag", "v1.0.1", "release/1.0")
    base = ("digest", "--repo", str(repo.path), "--range", "v1.0.0..v1.0.1", "--lang", "en")
    proc = run(*base, "--format", "json")
    assert proc.returncode == 0, proc.stderr
    entries = {e["commit"]["sha"]: e for e in json.loads(proc.stdout)["digests"][0]["entries"]}
    assert entries[released.pick]["backport_of"] == released.fix
    assert "backport_of" not in entries[released.reapplied]  # no cherry-pick line: nothing on the other side to match
    markdown = run(*base).stdout
    assert f"backport of {released.fix[:7]}" in markdown
