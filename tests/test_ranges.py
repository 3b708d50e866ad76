"""Release ranges (issue 27): `digest A..B` and `release [TAG]` digest exactly the first-parent
commits between two refs, as an upgrade report — through the git source, the GitHub source (the
fake GitHub REST API), the CLI, Slack and Feishu end to end; bad input is one sentence in the
channel's language; a range reuses every cached analysis."""

from __future__ import annotations

import json
import re
from datetime import datetime, timedelta

import pytest

from bot.core.models import NotFoundError, UsageError, to_dict, window_from_dict
from bot.core.window import day_window, is_date_token, is_ref_range
from bot.i18n import localize, text
from bot.sources.localgit import LocalGitSource
from bot.sources.refrange import (
    family,
    is_final,
    later_release,
    main_family,
    newest_release,
    previous_release,
    range_window,
    release_window,
    version_key,
)
from tests.fakes.openai_server import FakeOpenAI
from tests.gitrepo import GitRepo
from tests.shared.cli import SH
from tests.shared.slack import CHANNEL, shown, shown_eph

TZ = "Asia/Shanghai"
REMOVE = "feat!: remove the legacy export API"
FIX = "fix: handle empty rows in the CLI"
SIDE = "feat: add a CSV writer"
TYPO = "docs: fix a typo"
JSON_FEAT = "feat: add JSON export"
JSON_DOCS = "docs: explain the JSON export"


def at(day: int, hour: int) -> datetime:
    return datetime(2026, 1, day, hour, 0, tzinfo=SH)


def build_tagged(path) -> GitRepo:
    """v0.1.0 (init) → a side branch merged with --no-ff, a breaking removal, a fix, a typo → v0.2.0
    → a feature and its docs → v0.3.0. The side branch's own commit is not first-parent."""
    r = GitRepo(path, bare_origin="https://github.com/acme/widgets.git")
    r.commit(
        "init",
        {
            "src/export.py": "def export_v1(rows):\n    return rows\n\n\ndef export_v2(rows):\n    return list(rows)\n",
            "src/cli.py": "import argparse\n",
            "README.md": "hi\n",
            ".github/CODEOWNERS": "/src/ @acme/core\n/lib/ @acme/lib\nREADME.md @docs-team\n",
        },
        when=at(19, 9),
    )
    r.git("tag", "v0.1.0")
    r.git("checkout", "-q", "-b", "side")
    r.commit(SIDE, {"lib/csv_writer.py": "import csv\n"}, when=at(20, 8))
    r.git("checkout", "-q", "main")
    r.shas = {
        "remove": r.commit(
            f"{REMOVE}\n\nBREAKING CHANGE: export_v1 is gone.",
            {"src/export.py": "def export_v2(rows):\n    return list(rows)\n"},
            when=at(20, 10),
        )
    }
    r.commit(FIX, {"src/cli.py": "import argparse\n\ndef rows(x):\n    return x or []\n"}, when=at(20, 11))
    stamp = at(20, 12).isoformat()
    r.git(
        "merge",
        "-q",
        "--no-ff",
        "-m",
        "Merge branch 'side'",
        "side",
        env={"GIT_AUTHOR_DATE": stamp, "GIT_COMMITTER_DATE": stamp},
    )
    r.commit(TYPO, {"README.md": "hi!\n"}, when=at(20, 13))
    r.git("tag", "v0.2.0")
    r.commit(
        JSON_FEAT,
        {"src/json_export.py": "import json\n\ndef export_json(rows):\n    return json.dumps(rows)\n"},
        when=at(21, 10),
    )
    r.commit(JSON_DOCS, {"README.md": "hi!\n\nJSON export.\n"}, when=at(21, 11))
    r.git("tag", "v0.3.0")
    return r


@pytest.fixture
def tagged(tmp_path) -> GitRepo:
    return build_tagged(tmp_path / "widgets")


# --- the words ------------------------------------------------------------------------------------


def test_a_range_of_refs_is_not_a_range_of_days():
    for word in ("0.11.8..0.11.9", "v1.2..main", "abc1234..def5678", "release/1.0..HEAD"):
        assert is_ref_range(word) and not is_date_token(word), word
    for word in ("2026-01-01..2026-01-05", "yesterday..today", "1月1日..1月3日"):
        assert not is_ref_range(word) and is_date_token(word), word


def test_versions_sort_as_versions():
    tags = ["v0.11.9", "v0.11.10", "v0.11.8", "v1.0rc1", "v1.0", "v1.0.1", "v0.9"]
    assert sorted(tags, key=version_key) == ["v0.9", "v0.11.8", "v0.11.9", "v0.11.10", "v1.0rc1", "v1.0", "v1.0.1"]
    # a final release's previous release is final; a pre-release's is whatever came before it
    assert previous_release(tags, "v1.0") == "v0.11.10" and previous_release(tags, "v1.0.1") == "v1.0"
    assert previous_release(tags, "v1.0rc1") == "v0.11.10" and previous_release(tags, "v0.9") is None


def test_a_release_is_compared_within_its_family_of_tags():
    # pydantic's repository holds its own v2.x tags and pydantic-core's core-v2.x; pytest tags a
    # dev0 at the start of each cycle: none of those is "the release before"
    tags = ["v2.12.5", "v2.13.0b3", "v2.13.0", "core-v2.46.0", "core-v2.48.0", "9.1.0.dev0", "v2.13.1"]
    assert [family(t) for t in ("v2.13.0", "V2.1", "core-v2.46.0", "9.1.0.dev0")] == ["v", "v", "core-v", ""]
    assert [is_final(t) for t in ("v2.13.0", "26.1", "v2.13.0b3", "9.1.0.dev0", "1.0rc1")] == [1, 1, 0, 0, 0]
    assert previous_release(tags, "v2.13.0") == "v2.12.5" and previous_release(tags, "core-v2.48.0") == "core-v2.46.0"
    assert newest_release(tags) == "v2.13.1"  # the main family's highest final release, not core-v2.48.0
    assert newest_release(["1.0rc1", "1.0rc2"]) == "1.0rc2" and newest_release([]) is None
    assert not is_final("stable") and not is_final("v") and not is_final("1.0.") and not is_final("1.0-")
    # the main family: the most final releases, then the most tags, then `v`, then bare numbers
    assert main_family(["core-v1.0a1", "core-v1.0a2", "core-v1.0a3", "v1.0"]) == "v"
    assert main_family(["x1.0", "x1.1a1", "v1.0"]) == "x"
    assert main_family(["x1.0", "v1.0"]) == "v" and main_family(["1.0", "x1.0"]) == ""


def test_only_two_versions_of_one_family_can_be_the_wrong_way_round():
    # on diverged lines a range is refused as backwards only when both ends are versions of one
    # family and the first is the later: SHAs that begin with digits, or equal versions, are not
    assert later_release("v1.20.0", "v1.19.1") and later_release("release-1.2", "release-1.1.9")
    assert not later_release("v1.19.1", "v1.20.0") and not later_release("V1.0", "v1.0")
    assert not later_release("2.0.0", "1abcdef") and not later_release("1234abcd", "9f3e2a1b")
    assert not later_release("v2.0", "core-v1.0")


def build_release_branches(path) -> GitRepo:
    """The release-branch workflow (mypy, pytest): main moves on; each release is branched off
    main and tagged on its branch, with fixes cherry-picked there. v1.0.1 is not an ancestor of
    v1.1.0."""
    r = GitRepo(path, bare_origin="https://github.com/acme/gadgets.git")
    r.commit("init", {"src/core.py": "X = 1\n"}, when=at(10, 9))
    r.shas = {"feat_a": r.commit("feat: add the A reader", {"src/a.py": "A = 1\n"}, when=at(11, 9))}
    r.git("checkout", "-q", "-b", "release-1.0")
    r.commit("Bump the version to 1.0.0", {"VERSION": "1.0.0\n"}, when=at(12, 9))
    r.git("tag", "v1.0.0")
    r.git("checkout", "-q", "main")
    r.shas["fix_b"] = r.commit("fix: the B writer drops rows", {"src/core.py": "X = 2\n"}, when=at(13, 9))
    r.git("checkout", "-q", "release-1.0")
    r.shas["pick"] = r.commit("fix: the B writer drops rows (cherry-pick)", {"src/core.py": "X = 2\n"}, when=at(14, 9))
    r.git("tag", "v1.0.1")
    r.git("checkout", "-q", "main")
    r.shas["remove_c"] = r.commit(
        "feat!: remove the C API\n\nBREAKING CHANGE: C is gone.", {"src/a.py": "A = 2\n"}, when=at(15, 9)
    )
    r.git("checkout", "-q", "-b", "release-1.1")
    r.shas["rc"] = r.commit("Bump the version to 1.1.0rc1", {"VERSION": "1.1.0rc1\n"}, when=at(16, 9))
    r.git("tag", "v1.1.0rc1")
    r.shas["final"] = r.commit("Bump the version to 1.1.0", {"VERSION": "1.1.0\n"}, when=at(17, 9))
    r.git("tag", "v1.1.0")
    r.git("checkout", "-q", "main")
    r.commit("feat: after the branch", {"src/d.py": "D = 1\n"}, when=at(18, 9))
    return r


async def test_git_release_on_a_release_branch_is_the_upgrade_from_the_previous_release(tmp_path):
    repo = build_release_branches(tmp_path / "gadgets")
    source = LocalGitSource(str(repo.path))
    window = await release_window(source, None, TZ)  # the newest final release, not the rc
    assert window.label == "v1.0.1..v1.1.0"  # git describe on the branch would say v1.1.0rc1 (or years back)
    titles = [c.title for c in await source.list_commits(window)]
    # what 1.1.0 has and 1.0.1 has not: main since the 1.0 branch point, and the 1.1 branch
    assert titles == [
        "Bump the version to 1.1.0",
        "Bump the version to 1.1.0rc1",
        "feat!: remove the C API",
        "fix: the B writer drops rows",
    ]
    assert (await release_window(source, "v1.1.0rc1", TZ)).label == "v1.0.1..v1.1.0rc1"
    typed = await range_window(source, "v1.0.1..v1.1.0", TZ)  # diverged ends with common history
    assert (typed.base, typed.head) == (window.base, window.head)
    with pytest.raises(UsageError) as err:  # the same two releases the wrong way round
        await range_window(source, "v1.1.0..v1.0.1", TZ)
    assert localize(err.value, "en") == text(
        "en", "errors.range_reversed", value="v1.1.0..v1.0.1", first="v1.1.0", last="v1.0.1"
    )
    # unrelated histories: an orphan branch shares nothing with main
    repo.git("checkout", "-q", "--orphan", "pages")
    repo.git("rm", "-rq", "--cached", ".")
    repo.commit("the docs site", {"index.html": "<p>hi</p>\n"}, when=at(19, 9))
    with pytest.raises(UsageError) as err:
        await range_window(source, "v1.0.0..pages", TZ)
    assert localize(err.value, "zh") == text(
        "zh", "errors.range_unrelated", first="v1.0.0", last="pages", repo="acme/gadgets"
    )


def test_cli_release_on_a_release_branch(run, tmp_path):
    repo = build_release_branches(tmp_path / "gadgets")
    proc = run("digest", "--repo", str(repo.path), "--release", "v1.1.0", "--format", "json", "--lang", "en")
    assert proc.returncode == 0, proc.stderr
    [d] = json.loads(proc.stdout)["digests"]
    assert d["window"]["label"] == "v1.0.1..v1.1.0"
    breaking = next(s for s in d["upgrade"]["sections"] if s["key"] == "breaking")
    assert breaking["commits"] == [repo.shas["remove_c"]]


# --- the git source -------------------------------------------------------------------------------


async def test_git_range_is_exactly_the_first_parent_commits(tagged):
    source = LocalGitSource(str(tagged.path))
    window = await range_window(source, "v0.1.0..v0.2.0", TZ)
    assert window.label == "v0.1.0..v0.2.0" and window.is_range
    assert window.base == tagged.git("rev-parse", "v0.1.0").strip()
    assert window.head == tagged.git("rev-parse", "v0.2.0").strip()
    assert window_from_dict(to_dict(window)) == window  # a delivery carries it as JSON
    commits = await source.list_commits(window)
    assert [c.title for c in commits] == [TYPO, "Merge branch 'side'", FIX, REMOVE]  # newest first, no SIDE
    # SHAs work as ends too, and the same range by SHA lists the same commits
    by_sha = await range_window(source, f"{window.base[:10]}..{window.head[:10]}", TZ)
    assert [c.sha for c in await source.list_commits(by_sha)] == [c.sha for c in commits]


async def test_release_is_the_range_from_the_tag_before(tagged):
    source = LocalGitSource(str(tagged.path))
    assert (await release_window(source, None, TZ)).label == "v0.2.0..v0.3.0"
    assert (await release_window(source, "v0.2.0", TZ)).label == "v0.1.0..v0.2.0"


@pytest.mark.parametrize("lang", ["en", "zh"])
async def test_bad_ranges_are_one_sentence_in_the_readers_language(tagged, tmp_path, lang):
    source = LocalGitSource(str(tagged.path))
    cases = [
        ("v9.9.9..v0.2.0", NotFoundError, text(lang, "errors.no_ref", ref="v9.9.9", repo="acme/widgets")),
        (
            "v0.2.0..v0.1.0",
            UsageError,
            text(lang, "errors.range_reversed", value="v0.2.0..v0.1.0", first="v0.2.0", last="v0.1.0"),
        ),
        ("v0.1.0...v0.2.0", UsageError, text(lang, "errors.bad_ref_range", value="v0.1.0...v0.2.0")),
    ]
    for spec, kind, sentence in cases:
        with pytest.raises(kind) as err:
            await range_window(source, spec, TZ)
        said = localize(err.value, lang)
        assert said == sentence and "\n" not in said, said
    # two ends on diverging lines: neither is an ancestor of the other
    side = tagged.git("rev-parse", "side").strip()
    with pytest.raises(UsageError) as err:
        await range_window(source, f"{side[:10]}..v0.1.0", TZ)
    assert localize(err.value, lang) == text(
        lang, "errors.range_reversed", value=f"{side[:10]}..v0.1.0", first=side[:10], last="v0.1.0"
    )
    with pytest.raises(UsageError) as err:
        await release_window(source, "v0.1.0", TZ)
    assert localize(err.value, lang) == text(lang, "errors.first_tag", tag="v0.1.0", repo="acme/widgets")
    bare = GitRepo(tmp_path / "untagged")
    bare.commit("init", {"a": "a"}, when=at(19, 9))
    with pytest.raises(NotFoundError) as err:
        await release_window(LocalGitSource(str(bare.path)), None, TZ)
    assert localize(err.value, lang) == text(lang, "errors.no_tags", repo="untagged")


# --- the command line -----------------------------------------------------------------------------


def test_cli_range_leads_with_the_upgrade_report(run, tagged):
    proc = run("digest", "--repo", str(tagged.path), "--range", "v0.1.0..v0.2.0", "--lang", "en")
    assert proc.returncode == 0, proc.stderr
    md = proc.stdout
    upgrade = md.index(text("en", "upgrade.title", repo="acme/widgets", label="v0.1.0..v0.2.0"))
    breaking = md.index(text("en", "upgrade.group", section=text("en", "upgrade.breaking"), n=1))
    assert upgrade < breaking < md.index("### 🗂")  # it leads, before the commit table
    assert tagged.shas["remove"][:7] in md[breaking : md.index("\n\n", breaking + 40)]
    assert SIDE not in md  # not a first-parent commit
    assert FIX in md and TYPO in md
    assert re.search(r"🟢 \d+ low-impact commits?, not listed\.", md)


def test_cli_range_as_json_and_changelog(run, tagged):
    proc = run("digest", "--repo", str(tagged.path), "--range", "v0.1.0..v0.2.0", "--format", "json")
    assert proc.returncode == 0, proc.stderr
    [d] = json.loads(proc.stdout)["digests"]
    assert d["window"]["label"] == "v0.1.0..v0.2.0"
    assert d["window"]["head"] == tagged.git("rev-parse", "v0.2.0").strip()
    # the range spans its ends' committer dates: from v0.1.0's to just after v0.2.0's
    start, end = (datetime.fromisoformat(d["window"][k]) for k in ("start", "end"))
    assert (start, end) == (at(19, 9), at(20, 13) + timedelta(seconds=1))
    assert [e["commit"]["title"] for e in d["entries"]] == [TYPO, "Merge branch 'side'", FIX, REMOVE]
    sections = d["upgrade"]["sections"]
    assert sections[0]["key"] == "breaking" and sections[0]["commits"] == [tagged.shas["remove"]]
    assert d["upgrade"]["low"] == sum(1 for e in d["entries"] if e["importance"] == "low")

    notes = run("digest", "--repo", str(tagged.path), "--range", "v0.1.0..v0.2.0", "--format", "changelog")
    assert notes.returncode == 0, notes.stderr
    assert notes.stdout.startswith(f"# {text('zh', 'changelog.title', repo='acme/widgets', label='v0.1.0..v0.2.0')}")
    assert text("zh", "changelog.breaking") in notes.stdout and SIDE not in notes.stdout


def test_cli_release_defaults_to_the_newest_tag(run, tagged):
    proc = run("digest", "--repo", str(tagged.path), "--release", "--format", "json")
    assert proc.returncode == 0, proc.stderr
    [d] = json.loads(proc.stdout)["digests"]
    assert d["window"]["label"] == "v0.2.0..v0.3.0"
    assert [e["commit"]["title"] for e in d["entries"]] == [JSON_DOCS, JSON_FEAT]
    proc = run("digest", "--repo", str(tagged.path), "--release", "v0.2.0", "--format", "json")
    assert json.loads(proc.stdout)["digests"][0]["window"]["label"] == "v0.1.0..v0.2.0"


@pytest.mark.parametrize(
    "args,key,fields",
    [
        (("--range", "v9..v0.2.0"), "errors.no_ref", dict(ref="v9", repo="acme/widgets")),
        (
            ("--range", "v0.2.0..v0.1.0"),
            "errors.range_reversed",
            dict(value="v0.2.0..v0.1.0", first="v0.2.0", last="v0.1.0"),
        ),
        (("--range", "v0.1.0..v0.2.0", "--date", "2026-01-20"), "errors.range_and_date", {}),
        (("--release", "v0.1.0"), "errors.first_tag", dict(tag="v0.1.0", repo="acme/widgets")),
    ],
)
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_cli_bad_range_is_one_line_and_exit_2(run, tagged, args, key, fields, lang):
    proc = run("digest", "--repo", str(tagged.path), "--lang", lang, *args)
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr and proc.stdout == ""
    assert text(lang, key, **fields) in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr


# --- the cache --------------------------------------------------------------------------------------


async def test_a_range_reuses_the_daily_analyses_and_then_itself(make_services, tagged):
    with FakeOpenAI() as llm:
        services = await make_services(openai_base_url=llm.url, openai_api_key="sk-test")
        source = services.source(str(tagged.path))
        day = await services.builder.build(source, day_window(at(21, 0).date(), TZ), "en")
        assert {e.commit.title for e in day.entries} == {JSON_FEAT, JSON_DOCS}
        analyses = sum(1 for r in llm.requests if '"bullets"' not in r["messages"][0]["content"])
        assert analyses == 2
        before = len(llm.requests)
        window = await range_window(source, "v0.2.0..v0.3.0", TZ)
        ranged = await services.builder.build(source, window, "en")
        assert [e.commit.title for e in ranged.entries] == [JSON_DOCS, JSON_FEAT]
        assert all(e.analysis and e.analysis.origin == "llm" for e in ranged.entries)
        new = llm.requests[before:]
        assert not [r for r in new if '"bullets"' not in r["messages"][0]["content"]]  # no analysis again
        after = len(llm.requests)
        again = await services.builder.build(source, await range_window(source, "v0.2.0..v0.3.0", TZ), "en")
        assert len(llm.requests) == after  # the range's digest is kept: not one LLM call
        assert [e.commit.sha for e in again.entries] == [e.commit.sha for e in ranged.entries]


# --- Slack, end to end ----------------------------------------------------------------------------


@pytest.fixture
def widgets(tmp_path):  # make_bot's default repository: the tagged one
    return build_tagged(tmp_path / "widgets")


async def test_slack_digest_of_a_range_posts_the_upgrade_report(make_bot, slack, widgets):
    bot = await make_bot()
    status, _ = await bot.sender.slash("v0.1.0..v0.2.0")
    assert status == 200
    await bot.settle()
    [parent] = slack.top_level(CHANNEL)
    said = shown(parent)
    assert text("en", "upgrade.title", repo="acme/widgets", label="v0.1.0..v0.2.0") in said
    breaking = said.index(text("en", "upgrade.group", section=text("en", "upgrade.breaking"), n=1))
    assert widgets.shas["remove"][:7] in said[breaking:]
    assert SIDE not in said
    replies = [shown(m) for m in slack.replies(CHANNEL, parent.ts)]
    assert any(REMOVE in r for r in replies)  # the thread holds the commits in full, as a digest's


async def test_slack_release_and_bad_input(make_bot, slack, widgets):
    bot = await make_bot()
    await bot.sender.slash("release")
    await bot.settle()
    [parent] = slack.top_level(CHANNEL)
    assert text("en", "upgrade.title", repo="acme/widgets", label="v0.2.0..v0.3.0") in shown(parent)

    await bot.sender.slash("digest v0.2.0..v0.1.0")
    await bot.sender.slash("release v0.1.0")
    await bot.settle()
    # Commands run concurrently once acknowledged: the language change is stored before the next
    # command is sent, as a person typing them would see it (its confirmation first).
    await bot.sender.slash("config lang zh")
    await bot.settle()
    await bot.sender.slash("digest nope..v0.2.0")
    await bot.settle()
    said = [shown_eph(e) for e in slack.ephemerals]
    reversed_ = text("en", "errors.range_reversed", value="v0.2.0..v0.1.0", first="v0.2.0", last="v0.1.0")
    assert any(reversed_ in s for s in said), said
    assert any(text("en", "errors.first_tag", tag="v0.1.0", repo="acme/widgets") in s for s in said), said
    assert any(text("zh", "errors.no_ref", ref="nope", repo="acme/widgets") in s for s in said), said
    assert not any("Traceback" in s for s in said)
    assert len(slack.top_level(CHANNEL)) == 2  # the release, and the config confirmation: nothing half-done
    assert "zh" in shown(slack.top_level(CHANNEL)[-1])


async def test_slack_an_upgrade_report_tells_the_mapped_owners_once(make_bot, slack, widgets):
    # the range's high and medium commits under src/ are @acme/core's: mapped, it is mentioned once
    # in the parent; the README's owner (a low commit) is told nothing; the thread mentions no one
    bot = await make_bot()
    await bot.sender.slash("owners @acme/core <!subteam^S0CORE>")
    await bot.sender.slash("owners @docs-team <@U0DOCS>")
    await bot.settle()
    posted = len(slack.top_level(CHANNEL))
    await bot.sender.slash("v0.1.0..v0.2.0")
    await bot.settle()
    parent = slack.top_level(CHANNEL)[posted]
    said = shown(parent)
    assert text("en", "upgrade.title", repo="acme/widgets", label="v0.1.0..v0.2.0") in said
    assert re.search(r"<!subteam\^S0CORE>: your paths are touched by \d+ high", json.dumps(parent.blocks))
    replies = slack.replies(CHANNEL, parent.ts)
    everything = json.dumps([m.blocks for m in [parent, *replies]]) + "".join(m.text or "" for m in [parent, *replies])
    assert everything.count("<!subteam^S0CORE>") == 1
    assert "<@U0DOCS>" not in everything


async def test_a_range_over_the_request_limit_names_a_narrower_range(make_bot, slack, widgets):
    bot = await make_bot(request_max_commits=2)
    await bot.sender.slash("v0.1.0..v0.2.0")
    await bot.settle()
    assert slack.top_level(CHANNEL) == []
    [line] = [shown_eph(e) for e in slack.ephemerals]
    base = widgets.git("rev-parse", "v0.2.0~2").strip()  # the first-parent commit two below v0.2.0
    narrower = f"/digest {base[:12]}..v0.2.0"
    assert line.count(".") >= 1 and f"`{narrower}`" in line, line
    assert "v0.1.0..v0.2.0 has 4 commits in acme/widgets" in line, line
    await bot.sender.slash(narrower.removeprefix("/digest "))
    await bot.settle()
    [parent] = slack.top_level(CHANNEL)
    assert "2 commits" in shown(parent), shown(parent)


# --- Feishu -----------------------------------------------------------------------------------------


async def test_feishu_digest_of_a_range_is_the_upgrade_card(make_settings, tagged):
    from tests.shared.feishu import GROUP, feishu_env

    async with feishu_env(make_settings, tagged, default_lang="zh") as env:
        status, _ = await env.say("digest v0.1.0..v0.2.0")
        assert status == 200
        await env.settle()
        parent = env.fake.top_level(GROUP)[0]
        md = env.fake.shown(parent)
        card = json.dumps(env.fake.card(parent), ensure_ascii=False)
        assert text("zh", "upgrade.title", repo="acme/widgets", label="v0.1.0..v0.2.0") in card
        assert text("zh", "upgrade.group", section=text("zh", "upgrade.breaking"), n=1) in md
        assert tagged.shas["remove"][:7] in md and SIDE not in md


# --- the GitHub source, through the fake GitHub REST API ------------------------------------------------

GH_REPO = "octo/widgets"


@pytest.fixture
def github(fake_github, make_settings):
    """A fake repository like the tagged one: v0.1.0, a side branch merged, a removal, a fix → v0.2.0;
    a feature → v0.3.0. Returns (source, shas)."""
    from bot.sources.github import GitHubSource
    from tests.fakes.github_server import FakeFile

    gh = fake_github
    gh.add_repo(GH_REPO)
    shas = {
        "init": gh.add_commit(GH_REPO, "init", committed_at=at(19, 9), files=[FakeFile("README.md", "added", 1, 0)])
    }
    gh.add_tag(GH_REPO, "v0.1.0", shas["init"])
    shas["side"] = gh.add_commit(
        GH_REPO,
        SIDE,
        committed_at=at(20, 8),
        parents=[shas["init"]],
        branch="side",
        files=[FakeFile("lib/csv.py", "added", 3, 0)],
    )
    shas["remove"] = gh.add_commit(
        GH_REPO,
        f"{REMOVE}\n\nBREAKING CHANGE: export_v1 is gone.",
        committed_at=at(20, 10),
        files=[FakeFile("src/export.py", "modified", 0, 4)],
    )
    shas["fix"] = gh.add_commit(GH_REPO, FIX, committed_at=at(20, 11), files=[FakeFile("src/cli.py", "modified", 2, 1)])
    shas["merge"] = gh.add_commit(
        GH_REPO, "Merge pull request #3 from octo/side", committed_at=at(20, 12), parents=[shas["fix"], shas["side"]]
    )
    gh.add_tag(GH_REPO, "v0.2.0", shas["merge"])
    shas["json"] = gh.add_commit(
        GH_REPO, JSON_FEAT, committed_at=at(21, 10), files=[FakeFile("src/json.py", "added", 4, 0)]
    )
    gh.add_tag(GH_REPO, "v0.3.0", shas["json"])
    source = GitHubSource(GH_REPO, make_settings(github_api_url=gh.url, github_max_rate_limit_wait=10.0))
    yield source, shas
    source.close()


async def test_github_range_is_the_first_parent_line_of_the_compare(github, fake_github):
    source, shas = github
    window = await range_window(source, "v0.1.0..v0.2.0", TZ)
    assert (window.base, window.head) == (shas["init"], shas["merge"])
    commits = await source.list_commits(window)
    assert [c.sha for c in commits] == [shas["merge"], shas["fix"], shas["remove"]]  # not the side commit
    assert fake_github.count(startswith=f"/repos/{GH_REPO}/compare/") >= 2  # the ancestry check, the listing


async def test_what_a_push_brought_is_every_new_commit_and_none_after_a_rewrite(github, tmp_path):
    """`pushed_since` (the alert poll's listing): on GitHub and in git alike, every commit the
    newer head reaches and the older does not (the merged side commit too, the merge itself not),
    newest first; nothing for the same head; None when the older is not on the newer's line."""
    source, shas = github
    pushed = await source.pushed_since(shas["init"], shas["merge"])
    assert [c.sha for c in pushed] == [shas["fix"], shas["remove"], shas["side"]]
    assert await source.pushed_since(shas["merge"], shas["merge"]) == []
    assert await source.pushed_since(shas["side"], shas["json"]) is not None  # merged in: an ancestor
    assert await source.pushed_since(shas["json"], shas["merge"]) is None  # behind: a rewritten branch
    assert await source.pushed_since("f" * 40, shas["merge"]) is None  # gone

    repo = GitRepo(tmp_path / "pushed")
    first = repo.commit("init", {"a.py": "A = 1\n"}, when=at(19, 9))
    old = repo.commit("feat: made long ago", {"b.py": "B = 1\n"}, when=at(19, 10))
    new = repo.commit("fix: made now", {"a.py": "A = 2\n"}, when=at(21, 10))
    git = LocalGitSource(str(repo.path))
    assert [c.sha for c in await git.pushed_since(first, new)] == [new, old]
    assert await git.pushed_since(new, first) is None and await git.pushed_since(new, new) == []


async def test_github_release_and_bad_ranges(github):
    source, _shas = github
    assert (await release_window(source, None, TZ)).label == "v0.2.0..v0.3.0"
    assert (await release_window(source, "v0.2.0", TZ)).label == "v0.1.0..v0.2.0"
    with pytest.raises(NotFoundError) as err:
        await range_window(source, "v9..v0.2.0", TZ)
    assert localize(err.value, "en") == text("en", "errors.no_ref", ref="v9", repo=GH_REPO)
    with pytest.raises(UsageError) as err:
        await range_window(source, "v0.3.0..v0.1.0", TZ)
    assert localize(err.value, "zh") == text(
        "zh", "errors.range_reversed", value="v0.3.0..v0.1.0", first="v0.3.0", last="v0.1.0"
    )
    with pytest.raises(NotFoundError) as err:
        await release_window(source, "v7", TZ)
    assert localize(err.value, "en") == text("en", "errors.no_tag", tag="v7", repo=GH_REPO)
    with pytest.raises(UsageError):
        await release_window(source, "v0.1.0", TZ)


async def test_github_release_on_a_release_branch(fake_github, make_settings):
    from bot.sources.github import GitHubSource

    gh, repo = fake_github, "octo/gadgets"
    gh.add_repo(repo)
    init = gh.add_commit(repo, "init", committed_at=at(10, 9))
    feat = gh.add_commit(repo, "feat: add the A reader", committed_at=at(11, 9))
    v100 = gh.add_commit(repo, "Bump to 1.0.0", committed_at=at(12, 9), parents=[feat], branch="release-1.0")
    gh.add_tag(repo, "v1.0.0", v100)
    fix = gh.add_commit(repo, "fix: the B writer", committed_at=at(13, 9), parents=[feat])
    pick = gh.add_commit(repo, "fix: the B writer (pick)", committed_at=at(14, 9), parents=[v100], branch="release-1.0")
    gh.add_tag(repo, "v1.0.1", pick)
    remove = gh.add_commit(repo, "feat!: remove the C API", committed_at=at(15, 9), parents=[fix])
    final = gh.add_commit(repo, "Bump to 1.1.0", committed_at=at(17, 9), parents=[remove], branch="release-1.1")
    gh.add_tag(repo, "v1.1.0", final)
    gh.add_tag(repo, "core-v9.0.0", init)  # another family: never "the newest release"
    orphan = gh.add_commit(repo, "the docs site", committed_at=at(19, 9), parents=[], branch="pages")
    source = GitHubSource(repo, make_settings(github_api_url=gh.url))
    try:
        window = await release_window(source, None, TZ)
        assert window.label == "v1.0.1..v1.1.0"
        assert [c.sha for c in await source.list_commits(window)] == [final, remove, fix]
        with pytest.raises(UsageError) as err:
            await range_window(source, "v1.1.0..v1.0.1", TZ)
        assert "backwards" in localize(err.value, "en")
        with pytest.raises(UsageError) as err:  # GitHub's 404 "No common ancestor": one sentence
            await range_window(source, f"v1.0.0..{orphan[:12]}", TZ)
        assert localize(err.value, "en") == text(
            "en", "errors.range_unrelated", first="v1.0.0", last=orphan[:12], repo=repo
        )
    finally:
        source.close()


async def test_github_without_tags_has_no_release(fake_github, make_settings):
    from bot.sources.github import GitHubSource

    fake_github.add_repo("octo/bare")
    fake_github.add_commit("octo/bare", "init", committed_at=at(19, 9))
    source = GitHubSource("octo/bare", make_settings(github_api_url=fake_github.url))
    try:
        with pytest.raises(NotFoundError) as err:
            await release_window(source, None, TZ)
        assert localize(err.value, "zh") == text("zh", "errors.no_tags", repo="octo/bare")
    finally:
        source.close()


# --- a subscription's fork: the upgrade's impact on it --------------------------------------------


async def test_a_range_in_a_channel_subscribed_with_a_fork_names_conflicts(make_bot, slack, tmp_path):
    from tests.downstream_repos import bare_copy, build

    repos = build(tmp_path / "fork-case")
    remotes = tmp_path / "remotes"
    bare_copy(repos["fork"], remotes / "org" / "our-fork.git")
    up = repos["up"]
    up.git("tag", "1.0", repos["shas"]["base"])
    up.git("tag", "1.1", repos["shas"]["C4"])
    bot = await make_bot(
        slack_admin_users="UADMIN", fork_git_url=f"file://{remotes}/{{repo}}.git", default_repo=str(up.path)
    )
    await bot.sender.slash(f"subscribe {up.path} lang en fork org/our-fork@ours", user="UADMIN")
    await bot.settle()
    await bot.sender.slash(f"digest 1.0..1.1 {up.path}", user="UADMIN")
    await bot.settle()
    parent = next(m for m in slack.top_level(CHANNEL) if "Upgrade report" in shown(m))
    said = shown(parent)
    fork = "org/our-fork@ours"
    conflicts = said.index(text("en", "upgrade.fork_conflicts", fork=fork, n=2))
    touches = said.index(text("en", "upgrade.fork_touches", fork=fork, n=1))
    assert conflicts < touches
    shas = repos["shas"]
    assert shas["C1"][:7] in said[conflicts:touches] and shas["C4"][:7] in said[conflicts:touches]
    assert shas["C2"][:7] not in said[conflicts:touches] and shas["C2"][:7] in said[touches:]
    assert shas["C1"][:7] not in said[touches:] and shas["C4"][:7] not in said[touches:]  # each commit once
    assert "files: a.py" in said[conflicts:touches]
