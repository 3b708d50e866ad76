"""Code owners: CODEOWNERS read with GitHub's rules, each digest entry's owners (JSON, Markdown,
the report page), and the `owners` command that maps them to the chat's people — mentioned once
per digest, in its parent message, for high and medium commits only."""

from __future__ import annotations

import dataclasses
import json
import re
from datetime import UTC, date, datetime

import pytest

from bot.core.chat_platform import DigestParent, OwnerPing
from bot.core.codeowners_file import parse
from bot.core.models import Window
from bot.render import feishu as F
from bot.render import slack as R
from bot.render.jsonout import render_json
from bot.render.markdown import render_report
from bot.render.text import render_text
from bot.report.page import render_page
from tests.fakes.github_server import FakeFile, FakeGitHub
from tests.shared.console import SH
from tests.shared.slack import (
    CHANNEL,
    HIGH_TITLE,
    LOW_TITLE,
    MEDIUM_TITLE,
    build_widgets,
    digest_thread,
    shown,
    shown_eph,
)

CODEOWNERS = """\
# everything, then narrower rules below: the last match wins
*                 @acme/everyone
/src/             @acme/core     # an inline comment
src/cli.py        @alice @acme/cli
README.md         @docs-team
!src/secret.py    @nobody
"""


@pytest.fixture
def widgets(tmp_path):
    """The Slack tests' widgets repository, with a CODEOWNERS in .github/ (one line unreadable)."""
    return build_widgets(tmp_path / "widgets", date(2026, 1, 28), extra={".github/CODEOWNERS": CODEOWNERS})


@pytest.fixture
def repo(widgets):
    return widgets  # the console's repository


# --- the file, with GitHub's rules ------------------------------------------------------------------


def test_the_last_matching_line_wins():
    owners = parse("*.py @py\n/src/ @core\nsrc/*.py @src-py\n")
    assert owners.owners_of("tools/x.py") == ("@py",)
    assert owners.owners_of("src/a.py") == ("@src-py",)
    assert owners.owners_of("src/a.txt") == ("@core",)
    assert parse("src/*.py @src-py\n/src/ @core\n").owners_of("src/a.py") == ("@core",)  # order decides


def test_anchors_depth_and_directories():
    owners = parse(
        "/build/logs/ @logs\n"  # anchored directory: everything under it, at the root only
        "apps/ @apps\n"  # no slash but the trailing one: an apps directory at any depth
        "docs/* @docs\n"  # the files directly in docs/ only
        "**/fixtures @fix\n"  # at any depth, file or directory
        "/lib/**/gen @gen\n"  # zero or more directories between
        "Makefile @make\n"  # a name at any depth
        "/VERSION @version\n"  # a root file
    )
    assert owners.owners_of("build/logs/2026/a.log") == ("@logs",)
    assert owners.owners_of("x/build/logs/a.log") == ()
    assert owners.owners_of("build/logs") == ()  # a directory pattern matches what is under it
    assert owners.owners_of("apps/web/main.go") == owners.owners_of("x/apps/main.go") == ("@apps",)
    assert owners.owners_of("docs/a.md") == ("@docs",)
    assert owners.owners_of("docs/build/b.md") == ()
    assert owners.owners_of("a/b/fixtures/x.json") == owners.owners_of("fixtures") == ("@fix",)
    assert owners.owners_of("lib/gen/x") == owners.owners_of("lib/a/b/gen/x") == ("@gen",)
    assert owners.owners_of("liba/gen/x") == ()
    assert owners.owners_of("sub/Makefile") == ("@make",)
    assert owners.owners_of("VERSION") == ("@version",) and owners.owners_of("sub/VERSION") == ()
    assert owners.owners_of("Src/x") == ()  # case-sensitive, like GitHub
    assert owners.owners_of("readme.MD") == ()


def test_trailing_and_lone_double_stars_and_single_character_wildcards():
    owners = parse("** @all\n/docs/** @docs\nlog?.txt @logs\n/gen/a**b @gen\n")
    assert owners.owners_of("x/y/z") == ("@all",)
    assert owners.owners_of("docs/a.md") == owners.owners_of("docs/x/y.md") == ("@docs",)
    assert owners.owners_of("docs") == ("@all",)  # `docs/**` is what is inside docs/
    assert owners.owners_of("x/log1.txt") == ("@logs",)
    assert owners.owners_of("log12.txt") == owners.owners_of("log/.txt") == ("@all",)
    assert owners.owners_of("gen/aXYb") == owners.owners_of("gen/ab") == ("@gen",)  # `**` inside a name is `*`
    assert owners.owners_of("gen/a/b") == ("@all",)


@pytest.mark.parametrize(
    "word, owner",
    [
        ("@octocat", True),
        ("@octo-cat", True),
        ("@org/team-name", True),
        ("@org/team_name.v2", True),
        ("dev@example.com", True),
        ("first.last+tag@mail.example.co.uk", True),
        ("a$b^c@example.com", True),
        ("octocat", False),
        ("@-octo", False),
        ("@octo-", False),
        ("@octo--cat", False),
        ("@org/", False),
        ("@org/team+x", False),
        ("x@org/team", False),
        ("@example.com", False),
        ("a@b", False),
        ("a@b.", False),
        ("a@@b.com", False),
        ("a@b.com!", False),
        ("<@U123>", False),
    ],
)
def test_owners_are_users_teams_or_e_mail_addresses(word, owner):
    from bot.core.codeowners_file import is_owner

    assert is_owner(word) is owner


def test_a_line_without_owners_un_owns():
    owners = parse("/apps/ @octocat\n/apps/github\n")
    assert owners.owners_of("apps/web/x") == ("@octocat",)
    assert owners.owners_of("apps/github/x") == ()


def test_lines_the_bot_cannot_read_are_skipped_and_counted():
    owners = parse(
        "# a comment\n\n"
        "* @everyone\n"
        "!keep.py @x\n"  # negation: not in CODEOWNERS
        "\\#hash @x\n"  # an escaped #: not in CODEOWNERS
        "[ab].py @x\n"  # a character range: not in CODEOWNERS
        "src/ not-an-owner\n"  # an owner in none of the three forms
        "src/ @bad-/team\n"
        "docs/ docs@example.com @org/docs-team @user  # three kinds of owner\n"
    )
    assert owners.skipped == 5
    assert owners.owners_of("keep.py") == ("@everyone",)  # the skipped lines change nothing
    assert owners.owners_of("src/a") == ("@everyone",)
    assert owners.owners_of("docs/a") == ("docs@example.com", "@org/docs-team", "@user")


def test_comments_and_marks_inside_patterns():
    owners = parse("x.py @a # a comment with #two marks\nwow!.txt @b\nc#d @c\n")
    assert owners.skipped == 0
    assert owners.owners_of("x.py") == ("@a",)
    assert owners.owners_of("wow!.txt") == ("@b",)  # only a leading ! negates
    assert owners.owners_of("c#d") == ("@c",)  # a # inside a pattern is part of it


async def test_without_codeowners_entries_have_no_owners_and_nothing_is_said(make_services, tmp_path):
    plain = build_widgets(tmp_path / "plain", date(2026, 1, 28))
    s = await make_services(default_repo=str(plain.path))
    window = Window(
        start=datetime(2026, 1, 28, tzinfo=SH), end=datetime(2026, 1, 29, tzinfo=SH), tz=str(SH), label="2026-01-28"
    )
    digest = await s.builder.build(s.source(str(plain.path)), window, "en")
    assert len(digest.entries) == 3 and all(e.owners == () for e in digest.entries)
    assert digest.notices == ()


def test_a_commit_is_owned_by_every_owner_of_its_paths_once():
    owners = parse("* @all\n/src/ @core @All\nREADME.md @docs\n")
    assert owners.owners_of_all(["src/a.py", "README.md", "src/b.py"]) == ("@core", "@All", "@docs")


# --- read as of the newest commit, through each source ----------------------------------------------


def _github_day(gh: FakeGitHub, codeowners: dict[str, str | None]) -> tuple[str, str]:
    gh.add_repo("octo/widgets")
    at = datetime(2026, 1, 28, 3, 0, tzinfo=UTC)
    first = gh.add_commit(
        "octo/widgets",
        "feat!: drop the v1 API\n\nBREAKING CHANGE: v1 is gone.",
        committed_at=at,
        files=[FakeFile("src/api.py", "modified", additions=1, deletions=40)],
        contents={"src/api.py": "x", **codeowners},
    )
    second = gh.add_commit(
        "octo/widgets",
        "docs: typo",
        committed_at=at.replace(hour=4),
        files=[FakeFile("docs/index.md", "modified", additions=1, deletions=1)],
        contents={"docs/CODEOWNERS": "* @docs-only\n"},  # a later place: the .github one still wins
    )
    return first, second


WINDOW = Window(
    start=datetime(2026, 1, 28, tzinfo=UTC), end=datetime(2026, 1, 29, tzinfo=UTC), tz="UTC", label="2026-01-28"
)


async def test_github_owners_in_json_read_once_as_of_the_newest_commit(make_services):
    with FakeGitHub() as gh:
        _first, second = _github_day(gh, {".github/CODEOWNERS": "* @octo/all\n/src/ @octo/api\n[x] @y\n"})
        gh.add_file("octo/widgets", ".github/CODEOWNERS", "* @on-the-branch-head\n")  # not this digest's
        s = await make_services(github_api_url=gh.url, github_token="ghp_" + "x" * 36)
        digest = await s.builder.build(s.source("octo/widgets"), WINDOW, "en")
        again = await s.builder.build(s.source("octo/widgets"), WINDOW, "zh")  # another language: cached
        reads = [r for r in gh.requests if r.path.endswith("CODEOWNERS")]
    data = json.loads(render_json([digest]))["digests"][0]
    owners = {e["commit"]["title"]: e["owners"] for e in data["entries"]}
    assert owners == {"feat!: drop the v1 API": ["@octo/api"], "docs: typo": ["@octo/all"]}
    assert [(r.path, r.query["ref"]) for r in reads] == [("/repos/octo/widgets/contents/.github/CODEOWNERS", second)]
    assert "⚠️ Left out 1 line of .github/CODEOWNERS that could not be read" in digest.notices[0]
    assert "行无法读取" in " ".join(again.notices)  # said in the digest's language
    # the Markdown report and the report page name them under each commit
    assert "Owners: @octo/api" in render_report([digest])
    assert '<p class="owners">Owners: @octo/api</p>' in render_page(digest)


async def test_github_without_codeowners_reads_the_three_places_and_404s(make_services):
    with FakeGitHub() as gh:
        _github_day(gh, {})
        s = await make_services(github_api_url=gh.url, github_token="ghp_" + "x" * 36)
        source = s.source("octo/widgets")
        assert await source.read_file("CODEOWNERS") is None  # the contents API's 404, as None
        digest = await s.builder.build(source, WINDOW, "en")
        statuses = [r.path.rsplit("/contents/", 1)[1] for r in gh.requests if r.path.endswith("CODEOWNERS")]
    assert statuses[-3:-1] == [".github/CODEOWNERS", "CODEOWNERS"]  # then docs/, which the later commit has
    assert {e.commit.title: e.owners for e in digest.entries}["feat!: drop the v1 API"] == ("@docs-only",)
    assert not any("CODEOWNERS" in n for n in digest.notices)


async def test_local_git_reads_the_file_as_of_the_commit(make_services, widgets):
    s = await make_services(default_repo=str(widgets.path))
    window = Window(
        start=datetime(2026, 1, 28, tzinfo=SH), end=datetime(2026, 1, 29, tzinfo=SH), tz=str(SH), label="2026-01-28"
    )
    digest = await s.builder.build(s.source(str(widgets.path)), window, "en")
    owners = {e.commit.title: e.owners for e in digest.entries}
    assert owners[HIGH_TITLE] == ("@acme/core",)
    assert owners[MEDIUM_TITLE] == ("@alice", "@acme/cli")
    assert owners[LOW_TITLE] == ("@docs-team",)
    assert digest.notices == (
        "⚠️ Left out 1 line of .github/CODEOWNERS that could not be read, so some paths may show fewer owners.",
    )


# --- GitLab's CODEOWNERS: sections ------------------------------------------------------------------

GITLAB_CODEOWNERS = """\
# before any heading: a section of its own
*                      @everyone
[Documentation][2] @docs-team @tech-writers
docs/
README.md              @tech-lead
^[Database] @dba
db/
config/db.yml          @group/sub/db-admins
[documentation]
*.txt
[Roles]
/ci/                   @@maintainer
[Broken] not-an-owner
broken/
"""


@pytest.mark.parametrize(
    "path,owners",
    [
        ("src/app.py", ("@everyone",)),  # only the unnamed section matches
        ("docs/guide.md", ("@everyone", "@docs-team", "@tech-writers")),  # the heading's default owners
        ("README.md", ("@everyone", "@tech-lead")),  # a line's own owners replace the defaults
        ("db/schema.sql", ("@everyone", "@dba")),  # an optional section still names owners
        ("config/db.yml", ("@everyone", "@group/sub/db-admins")),  # nested groups
        ("notes.txt", ("@everyone", "@docs-team", "@tech-writers")),  # `[documentation]` is the same section
        ("ci/deploy.yml", ("@everyone", "@@maintainer")),  # a role
        ("broken/x", ("@everyone",)),  # under an unreadable heading: not guessed into a section
    ],
)
def test_gitlab_sections_each_give_their_owners(path, owners):
    assert parse(GITLAB_CODEOWNERS, gitlab=True).owners_of(path) == owners


def test_gitlab_section_headings_are_read_and_bad_ones_counted():
    co = parse(GITLAB_CODEOWNERS, "CODEOWNERS", gitlab=True)
    docs, db = co.section("DOCUMENTATION"), co.section("database")
    assert docs is not None and (docs.name, docs.optional, docs.approvals) == ("Documentation", False, 2)
    assert docs.defaults == ("@docs-team", "@tech-writers")
    assert db is not None and (db.optional, db.approvals, db.defaults) == (True, 1, ("@dba",))
    assert [s.name for s in co.sections] == ["Documentation", "Database", "Roles"]
    assert co.skipped == 2  # `[Broken] not-an-owner` and the line under it


def test_github_reads_a_gitlab_heading_as_an_unreadable_line():
    co = parse(GITLAB_CODEOWNERS)  # GitHub's rules: the last match in the whole file wins
    assert co.sections == () and co.owners_of("src/app.py") == ("@everyone",)
    assert co.owners_of("docs/guide.md") == ()  # `docs/` with no owners un-owns, as GitHub reads it
    assert co.skipped >= 5


async def test_a_gitlab_digest_reads_gitlab_codeowners_with_sections(make_services, fake_gitlab):
    from tests.fakes.gitlab_server import FakeDiff

    project = "acme/api"
    fake_gitlab.add_project(project)
    fake_gitlab.add_commit(
        project,
        "init",
        committed_at=datetime(2026, 1, 27, 9, tzinfo=UTC),
        contents={".gitlab/CODEOWNERS": "* @everyone\n[Docs] @docs-team\ndocs/\n^[Src][2] @core\nsrc/\n"},
    )
    fake_gitlab.add_commit(
        project, "docs: a page", committed_at=datetime(2026, 1, 28, 10, tzinfo=UTC), diffs=[FakeDiff("docs/a.md")]
    )
    fake_gitlab.add_commit(
        project, "fix: the api", committed_at=datetime(2026, 1, 28, 11, tzinfo=UTC), diffs=[FakeDiff("src/api.py")]
    )
    s = await make_services(gitlab_url=fake_gitlab.url)
    digest = await s.builder.build(s.source(f"gitlab:{project}"), WINDOW, "en")
    data = json.loads(render_json([digest]))["digests"][0]
    owners = {e["commit"]["title"]: e["owners"] for e in data["entries"]}
    assert owners == {"docs: a page": ["@everyone", "@docs-team"], "fix: the api": ["@everyone", "@core"]}
    assert not any("CODEOWNERS" in n for n in digest.notices)


# --- the `owners` command and the parent message: the terminal --------------------------------------


async def test_console_owners_map_list_remove_and_the_digest_tells_each_owner_once(console_in):
    console = await console_in("en")
    assert "No code owners are mapped here." in await console("/digest owners")
    mapped = await console("/digest owners map @acme/core @core-oncall")
    assert "✅ @acme/core → @core-oncall: digests here mention them once" in mapped
    await console("/digest owners @alice @alice.w")
    listing = await console("/digest owners")
    assert "• @acme/core → @core-oncall" in listing and "• @alice → @alice.w" in listing
    shown_ = await console("/digest 2026-01-28")
    parent = shown_.split("↳", 1)[0]
    assert "👥 Code owners" in parent
    assert "@core-oncall: your paths are touched by 1 high commit." in parent
    assert "@alice.w: your paths are touched by 1 medium commit." in parent
    assert "@acme/cli: your paths are touched by 1 medium commit." in parent  # not mapped: its name
    assert "@docs-team" not in shown_.split("Owners:")[0]  # a low commit's owner is not told
    assert shown_.count("@core-oncall") == 1 and shown_.count("@alice.w") == 1  # once per digest
    assert "✅ @alice is no longer mapped here." in await console("/digest owners remove @alice")
    assert "@alice is not mapped in this conversation." in await console("/digest owners remove @alice")


@pytest.mark.parametrize(
    "typed, said",
    [
        ("owners map @acme/core", "Map @acme/core to whom? Put a mention after it."),
        ("owners map acme <@U0ALICE>", "'acme' is not a code owner: use @user, @org/team or an e-mail address"),
        ("owners map @acme/core alice", "'alice' is not a mention"),
        ("owners map @a <@U1X> <@U2Y>", "One mention per owner"),
        ("owners add @a <@U1X>", "Unknown owners action 'add'"),
        ("owners remove", "Name one code owner to remove."),
        ("owners map", "Name the code owner to map"),
    ],
)
async def test_bad_owners_input_is_one_sentence_and_the_usage(console_in, typed, said):
    console = await console_in("en")
    out = await console(f"/digest {typed}")
    assert f"⚠️ {said}" in out
    assert "Usage: `/digest owners [@org/team|@user|e-mail MENTION]" in out
    assert "Traceback" not in out and "[#" not in out  # nothing posted


async def test_bad_owners_input_in_chinese(console_in):
    console = await console_in("zh")
    out = await console("/digest owners map @acme/core")
    assert "⚠️ @acme/core 映射给谁？请在后面提及一个人。" in out and "用法" in out


# --- Slack: mentions in the parent, once, for high and medium commits ----------------------------------


async def test_slack_owners_are_mentioned_once_in_the_parent(make_bot, slack):
    bot = await make_bot(slack_admin_users="UADMIN")
    await bot.sender.slash("owners map @acme/core <!subteam^S0CORE|@core>", user="UADMIN")
    await bot.sender.slash("owners map @alice <@U0ALICE|alice>", user="UADMIN")
    await bot.sender.slash("owners map @docs-team <@U0DOCS>", user="UADMIN")
    await bot.settle()
    confirmations = [m for m in slack.top_level(CHANNEL)]
    assert len(confirmations) == 3 and "<@U0ALICE>" not in json.dumps([m.blocks for m in confirmations])
    assert "@alice → <@U0ALICE>" in shown(confirmations[1])  # shown as text: it pings no one

    parent, replies = await digest_thread(bot, slack)
    blocks = json.dumps(parent.blocks)
    assert "<!subteam^S0CORE>: your paths are touched by 1 high commit." in blocks
    assert "<@U0ALICE>: your paths are touched by 1 medium commit." in blocks
    assert "@acme/cli: your paths are touched by 1 medium commit." in blocks  # unmapped: plain text
    everything = json.dumps([m.blocks for m in [parent, *replies]]) + "".join(m.text for m in [parent, *replies])
    assert everything.count("<@U0ALICE>") == 1 and everything.count("<!subteam^S0CORE>") == 1
    assert "<@U0DOCS>" not in everything  # the README commit is low: its owner is not told
    assert len(replies) == 3  # the mentions cost no message of their own


async def test_slack_a_digest_posts_as_many_messages_with_owners_mapped_as_without(make_bot, slack):
    bot = await make_bot()
    _parent, _replies = await digest_thread(bot, slack)
    without = len(slack.calls_to("chat.postMessage"))
    assert without == 4  # the progress line (edited into the parent) and the thread's 3 replies
    assert "<@" not in json.dumps(_parent.blocks) and "<!subteam" not in json.dumps(_parent.blocks)
    assert "@acme/core: your paths are touched by 1 high commit." in shown(_parent)  # named, never pinged
    await bot.sender.slash("owners map @acme/core <!subteam^S0CORE>")
    await bot.sender.slash("owners map @alice <@U0ALICE>")
    await bot.settle()
    posted = len(slack.calls_to("chat.postMessage"))
    await digest_thread(bot, slack, "2026-01-28")
    assert len(slack.calls_to("chat.postMessage")) - posted == without  # progress, parent, 3 replies


async def test_slack_only_admins_map_owners_and_a_feishu_mention_is_refused(make_bot, slack):
    bot = await make_bot(slack_admin_users="UADMIN")
    await bot.sender.slash("owners map @alice <@U0ALICE>", user="U0001")
    await bot.sender.slash('owners map @alice <at user_id="ou_abc"></at>', user="UADMIN")
    await bot.settle()
    # two commands, answered in whichever order they finish: each answer to the one who asked
    said = {e["user"]: shown_eph(e) for e in slack.ephemerals}
    assert len(slack.ephemerals) == 2 and set(said) == {"U0001", "UADMIN"}
    assert "Only the bot's admins can change this channel's subscriptions." in said["U0001"]
    assert "mentions no one in this conversation" in R.unescape(said["UADMIN"])
    assert slack.top_level(CHANNEL) == []


# --- Feishu: the <at> form; and nobody is pinged without a mapping -----------------------------------


def _parent(pings: tuple[OwnerPing, ...]):
    from tests.reportdata import day

    return DigestParent(day(3), owners=pings)


def test_feishu_mentions_a_mapped_owner_with_at_and_names_the_others_inertly():
    pings = (OwnerPing("@alice", 1, 0, "feishu_user", "ou_alice"), OwnerPing("@all", 0, 2))
    card = json.dumps(F.render_cards(_parent(pings)), ensure_ascii=False)
    assert "<at id=ou_alice></at>: your paths are touched by 1 high commit." in card
    assert "your paths are touched by 2 medium commits." in card
    assert card.count("<at ") == 1  # @all is named, not mentioned
    slack_blocks = json.dumps(R.render(_parent(pings)))
    assert "<@" not in slack_blocks and "<!" not in slack_blocks  # a Feishu mapping pings no one on Slack


def test_a_hostile_owner_name_pings_no_one_anywhere():
    pings = (OwnerPing("@here", 1, 0), OwnerPing("<!channel>", 1, 0), OwnerPing("@x", 1, 0, "slack_user", "nope"))
    slack_blocks = json.dumps(R.render(_parent(pings)))
    assert "<!channel>" not in slack_blocks and "<@nope>" not in slack_blocks
    assert "@\u200dhere" in slack_blocks or "@\\u200dhere" in slack_blocks
    card = json.dumps(F.render_cards(_parent(pings)), ensure_ascii=False)
    assert "<at" not in card and "<!channel>" not in card
    assert "\x1b" not in render_text(_parent((OwnerPing("@a\x1b[2J", 1, 0),)))


def test_an_upgrade_report_tells_its_owners_on_every_surface_and_stays_inert_unmapped():
    from bot.render.upgrade import upgrade_report
    from tests.reportdata import day

    pings = (OwnerPing("@alice", 1, 0, "feishu_user", "ou_alice"), OwnerPing("@core", 0, 1, "slack_group", "S0CORE"))
    hostile = (OwnerPing("<!channel>", 1, 0), OwnerPing("@here", 0, 1))
    report = upgrade_report(day(3))
    told = dataclasses.replace(report, owners=pings, more_owners=2)
    card = json.dumps(F.render_cards(told), ensure_ascii=False)
    assert card.count("<at id=ou_alice></at>: your paths are touched by 1 high commit.") == 1
    assert "… and 2 more owners" in card and "<!subteam" not in card
    blocks = json.dumps(R.render(told))
    assert blocks.count("<!subteam^S0CORE>: your paths are touched by 1 medium commit.") == 1
    assert "<at" not in blocks
    terminal = render_text(told)
    assert "👥 Code owners" in terminal and "@core: your paths are touched by 1 medium commit." in terminal
    inert = dataclasses.replace(report, owners=hostile)
    assert "<!channel>" not in json.dumps(R.render(inert)) and "<at" not in json.dumps(F.render_cards(inert))
    assert "👥" not in render_text(report) and "👥" not in json.dumps(R.render(report), ensure_ascii=False)


def test_feishu_keeps_the_mentioned_persons_id_for_owners_map():
    from handlers.feishu.events import Incoming, Mention, message_text

    msg = Incoming(
        event_id="e1",
        message_id="m1",
        chat_id="oc_1",
        chat_type="group",
        root_id=None,
        sender="ou_admin",
        sender_type="user",
        message_type="text",
        content=json.dumps({"text": "@_user_1 owners map @acme/core @_user_2"}),
        mentions=(Mention("@_user_1", "ou_bot", "digest", "bot"), Mention("@_user_2", "ou_alice", "Alice", "user")),
    )
    assert message_text(msg, "ou_bot") == ("owners map @acme/core @Alice", True)
    text, _ = message_text(msg, "ou_bot", keep_ids=True)
    from bot.conversation.commands import parse_command

    args = parse_command(text or "").args
    assert (args.owner, args.kind, args.id) == ("@acme/core", "feishu_user", "ou_alice")


async def test_feishu_owners_map_by_at_mention_then_the_parent_card_mentions_once(make_settings, repo):
    from tests.fakes.feishu_server import mention, message_event
    from tests.shared.feishu import ALICE, GROUP, TOKEN, feishu_env, markdowns

    bob = "ou_bob0000000000000000000000000000001"
    async with feishu_env(make_settings, repo, feishu_admin_users=ALICE, default_lang="en") as env:
        await env.post(
            message_event(
                "@_user_1 owners map @acme/core @_user_2",
                sender=ALICE,
                token=TOKEN,
                mentions=[
                    mention("@_user_1", env.fake.bot_open_id, env.fake.bot_name, "bot"),
                    mention("@_user_2", bob, "Bob"),
                ],
            )
        )
        await env.settle()
        (confirmation,) = env.fake.top_level(GROUP)
        said = env.fake.text_of(confirmation)
        assert f'acme/core → &#60;at user_id="{bob}"&#62;' in said  # shown as text: pings no one
        assert "<at" not in said and "<at" not in env.fake.markdown_of(confirmation)
        parent, replies = await _feishu_digest(env)
        card = env.fake.markdown_of(parent)
        assert f"<at id={bob}></at>: your paths are touched by 1 high commit." in card
        assert "acme/cli: your paths are touched by 1 medium commit." in card  # unmapped: named
        everything = markdowns(env.fake, [parent, *replies])
        assert everything.count(f"<at id={bob}></at>") == 1
        assert set(re.findall(r"<at id=([^>]*)>", everything)) == {bob}  # nobody else is pinged


async def _feishu_digest(env):
    from tests.shared.feishu import GROUP

    status, _ = await env.say("digest 2026-01-28")
    assert status == 200
    await env.settle()
    parent = env.fake.top_level(GROUP)[-1]
    return parent, env.fake.thread(parent.message_id)


async def test_a_level_tap_redraws_the_parent_with_its_owner_lines_as_first_posted(make_bot, slack):
    from tests.shared.slack import by_title
    from tests.test_levels_slack import now, tap

    bot = await make_bot()
    await bot.sender.slash("owners map @alice <@U0ALICE>")
    await bot.settle()
    parent, replies = await digest_thread(bot, slack)
    assert "<@U0ALICE>: your paths are touched by 1 medium commit." in json.dumps(parent.blocks)
    await tap(bot, slack, by_title(replies, MEDIUM_TITLE), "too_high")
    redrawn = now(slack, parent)
    assert "🟡 medium 0 | 🟢 low 2" in shown(redrawn)  # the counts follow the correction…
    assert "<@U0ALICE>: your paths are touched by 1 medium commit." in json.dumps(redrawn.blocks)  # …who was told stays
