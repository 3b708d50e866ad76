"""The local git source against real repositories built with commits at exact instants."""

from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from bot.core.models import NotFoundError, UsageError
from bot.core.window import day_window
from bot.sources.localgit import LocalGitSource
from bot.sources.opened import open_source
from tests.gitrepo import GitRepo

SH = ZoneInfo("Asia/Shanghai")
NY = ZoneInfo("America/New_York")


@pytest.fixture
def repo(tmp_path):
    r = GitRepo(tmp_path / "widgets", bare_origin="https://github.com/acme/widgets.git")
    r.commit("init", {"src/a.py": "x = 1\n"}, when=datetime(2026, 1, 27, 12, 0, tzinfo=SH))
    r.shas = {
        "edge_in": r.commit(
            "feat: last second of the day (#12)\n\nExplains why.\n\n"
            "Signed-off-by: Ada <ada@example.com>\nCo-authored-by: Bob <bob@example.com>",
            {"src/a.py": "x = 2\n", "logo.png": b"\x89PNG\r\n\x1a\n\x00\x00"},
            when=datetime(2026, 1, 28, 23, 59, 59, tzinfo=SH),
        ),
        "first": r.commit(
            "first second of the day", {"src/b.py": "y = 1\n"}, when=datetime(2026, 1, 28, 0, 0, 0, tzinfo=SH)
        ),
        "next_day": r.commit(
            "next day", {"src/a.py": None, "docs/x y.md": "hi\n"}, when=datetime(2026, 1, 29, 0, 0, 0, tzinfo=SH)
        ),
    }
    return r


async def test_day_window_edges_shanghai(repo):
    src = LocalGitSource(str(repo.path))
    commits = await src.list_commits(day_window(date(2026, 1, 28), "Asia/Shanghai"))
    assert [c.sha for c in commits] == [repo.shas["edge_in"], repo.shas["first"]]  # newest first
    nxt = await src.list_commits(day_window(date(2026, 1, 29), "Asia/Shanghai"))
    assert [c.sha for c in nxt] == [repo.shas["next_day"]]


async def test_a_branch_named_like_a_folder_is_the_branch(repo):
    """The repository's `docs` branch beside its `docs/` folder: `git log docs` alone is ambiguous."""
    repo.git("branch", "-m", "docs")
    src = LocalGitSource(str(repo.path))
    for branch in ("docs", None):
        commits = await src.list_commits(day_window(date(2026, 1, 29), "Asia/Shanghai"), branch)
        assert [c.sha for c in commits] == [repo.shas["next_day"]]
    assert len(await src.history("docs", 10)) == 4


async def test_commit_metadata_is_clean(repo):
    src = LocalGitSource(str(repo.path))
    c = (await src.list_commits(day_window(date(2026, 1, 28), "Asia/Shanghai")))[0]
    assert c.title == "feat: last second of the day (#12)" and c.pr_number == 12
    assert c.body == "Explains why."  # trailers and their e-mail addresses are gone
    assert "@" not in c.body + c.author and c.author == "Ada Lovelace"
    assert c.url == f"https://github.com/acme/widgets/commit/{c.sha}"
    assert (src.name, src.web_url) == ("acme/widgets", "https://github.com/acme/widgets")
    assert c.committed_at == datetime(2026, 1, 28, 15, 59, 59, tzinfo=UTC)
    assert (c.files_changed, c.additions, c.deletions) == (2, 1, 1)


async def test_a_revert_pr_is_the_one_its_title_ends_with(tmp_path):
    """GitHub titles a revert PR `Revert "Add a flag (#901)" (#905)`: its squash merge is PR 905,
    not the reverted 901 (whose listing in the release notes is not this commit's)."""
    r = GitRepo(tmp_path / "r")
    when = datetime(2026, 1, 28, 12, tzinfo=SH)
    r.commit("Add a flag (#901)", {"a.py": "x = 1\n"}, when=when)
    r.commit('Revert "Add a flag (#901)" (#905)', {"a.py": "x = 0\n"}, when=when + timedelta(hours=1))
    r.commit("Fix (#7) in the parser", {"a.py": "x = 2\n"}, when=when + timedelta(hours=2))
    src = LocalGitSource(str(r.path))
    listed = await src.list_commits(day_window(date(2026, 1, 28), "Asia/Shanghai"))
    assert [c.pr_number for c in listed] == [7, 905, 901]
    assert [c.pr_number for c in await src.history("main", 10)] == [7, 905, 901]


async def test_files_binary_deleted_and_spaces(repo):
    src = LocalGitSource(str(repo.path))
    files = {f.path: f for f in await src.get_files(repo.shas["edge_in"])}
    assert files["logo.png"].binary and files["logo.png"].patch is None
    assert files["src/a.py"].patch == "@@ -1 +1 @@\n-x = 1\n+x = 2"
    nxt = {f.path: f for f in await src.get_files(repo.shas["next_day"])}
    assert nxt["src/a.py"].status == "removed" and nxt["src/a.py"].deletions == 1
    assert nxt["docs/x y.md"].status == "added" and nxt["docs/x y.md"].patch.endswith("+hi")


async def test_rename_and_root_commit(tmp_path):
    r = GitRepo(tmp_path / "r")
    root = r.commit("root", {"a.txt": "one\ntwo\nthree\n"}, when=datetime(2026, 2, 1, 9, tzinfo=SH))
    r.git("mv", "a.txt", "b.txt")
    moved = r.commit("move", when=datetime(2026, 2, 1, 10, tzinfo=SH))
    src = LocalGitSource(str(r.path))
    (f,) = await src.get_files(moved)
    assert (f.path, f.previous_path, f.status) == ("b.txt", "a.txt", "renamed")
    (g,) = await src.get_files(root)
    assert g.status == "added" and g.additions == 3
    assert src.web_url is None and src.name == "r"
    assert (await src.list_commits(day_window(date(2026, 2, 1), "Asia/Shanghai")))[0].url is None


async def test_new_york_dst_day(tmp_path):
    r = GitRepo(tmp_path / "ny")
    # 2026-03-08 in New York runs from 05:00 UTC to 04:00 UTC the next day (23 hours).
    inside = r.commit("late on the short day", when=datetime(2026, 3, 8, 23, 59, 59, tzinfo=NY))
    r.commit("midnight after", when=datetime(2026, 3, 9, 0, 0, 0, tzinfo=NY))
    early = r.commit("just after midnight", when=datetime(2026, 3, 8, 0, 0, 0, tzinfo=NY))
    src = LocalGitSource(str(r.path))
    got = await src.list_commits(day_window(date(2026, 3, 8), "America/New_York"))
    assert [c.sha for c in got] == [inside, early]


async def test_merges_excluded_unless_asked(tmp_path):
    r = GitRepo(tmp_path / "m")
    r.commit("base", {"a": "1\n"}, when=datetime(2026, 1, 28, 8, tzinfo=SH))
    r.git("checkout", "-q", "-b", "topic")
    r.commit("topic work", {"b": "1\n"}, when=datetime(2026, 1, 28, 9, tzinfo=SH))
    r.git("checkout", "-q", "main")
    r.commit("main work", {"c": "1\n"}, when=datetime(2026, 1, 28, 10, tzinfo=SH))
    r.git(
        "merge",
        "-q",
        "--no-ff",
        "topic",
        "-m",
        "Merge topic",
        env={"GIT_COMMITTER_DATE": "2026-01-28T11:00:00+08:00", "GIT_AUTHOR_DATE": "2026-01-28T11:00:00+08:00"},
    )
    src = LocalGitSource(str(r.path))
    window = day_window(date(2026, 1, 28), "Asia/Shanghai")
    assert "Merge topic" not in [c.title for c in await src.list_commits(window)]
    with_merges = await src.list_commits(window, include_merges=True)
    merge = next(c for c in with_merges if c.title == "Merge topic")
    assert merge.is_merge
    assert [f.path for f in await src.get_files(merge.sha)] == ["b"]  # against the first parent
    topic_only = await src.list_commits(window, branch="topic")
    assert [c.title for c in topic_only] == ["topic work", "base"]


async def test_bare_repository(tmp_path, repo):
    bare = tmp_path / "bare.git"
    repo.git("clone", "-q", "--bare", str(repo.path), str(bare))
    src = open_source(str(bare), None)
    assert src.name == "bare"
    commits = await src.list_commits(day_window(date(2026, 1, 28), "Asia/Shanghai"))
    assert len(commits) == 2


async def test_errors_are_clear(tmp_path, repo):
    with pytest.raises(UsageError, match="is not a git repository"):
        LocalGitSource(str(tmp_path))
    src = LocalGitSource(str(repo.path))
    with pytest.raises(NotFoundError, match="No commit 'deadbeef' in acme/widgets"):
        await src.get_commit("deadbeef")
    with pytest.raises(UsageError, match="is not a commit SHA"):
        await src.get_commit("HEAD; rm -rf /")
    with pytest.raises(NotFoundError, match="No branch 'nope' in acme/widgets"):
        await src.list_commits(day_window(date(2026, 1, 28), "Asia/Shanghai"), branch="nope")
    c = await src.get_commit(repo.shas["first"][:8])
    assert c.sha == repo.shas["first"]


async def test_empty_repository(tmp_path):
    r = GitRepo(tmp_path / "empty")
    src = LocalGitSource(str(r.path))
    assert await src.list_commits(day_window(date(2026, 1, 28), "Asia/Shanghai")) == []


def test_open_source_rejects_nonsense():
    with pytest.raises(UsageError, match="names no repository; name one as a local path"):
        open_source("not a repo!!", None)


# --- naming a local repository (issue 17: a mirror folder named `repo` showed as "repo", no links) --


def test_a_bare_repo_folder_is_named_by_the_folder_above(tmp_path, repo):
    for folder in ("repo", "repo.git"):
        mirror = tmp_path / "astral-uv" / folder
        repo.git("clone", "-q", "--bare", str(repo.path), str(mirror))
        repo.git("-C", str(mirror), "remote", "remove", "origin")  # a fetched snapshot has no remote
        src = LocalGitSource(str(mirror))
        assert (src.name, src.web_url) == ("astral-uv", None), folder


def test_a_repo_folder_with_a_github_origin_gets_its_name_and_links(tmp_path, repo):
    mirror = tmp_path / "mirrors" / "repo"
    repo.git("clone", "-q", "--mirror", str(repo.path), str(mirror))
    repo.git("-C", str(mirror), "remote", "set-url", "origin", "https://github.com/astral-sh/uv.git")
    src = LocalGitSource(str(mirror))
    assert (src.name, src.web_url) == ("astral-sh/uv", "https://github.com/astral-sh/uv")
    assert src.commit_url("abc123") == "https://github.com/astral-sh/uv/commit/abc123"


async def test_a_mirror_with_a_github_origin_renders_with_its_name_and_links(tmp_path, repo, make_services):
    from bot.render.markdown import render_report

    mirror = tmp_path / "astral-sh+uv" / "repo"
    repo.git("clone", "-q", "--mirror", str(repo.path), str(mirror))
    repo.git("-C", str(mirror), "remote", "set-url", "origin", "git@github.com:astral-sh/uv.git")
    services = await make_services()
    source = services.source(str(mirror))
    digest = await services.builder.build(source, day_window(date(2026, 1, 28), "Asia/Shanghai"), "en")
    shown = render_report([digest])
    sha = repo.shas["edge_in"]
    assert "## astral-sh/uv" in shown and "## repo" not in shown
    assert f"(https://github.com/astral-sh/uv/commit/{sha})" in shown
    assert "[#12](https://github.com/astral-sh/uv/pull/12)" in shown


async def test_history_of_a_clone_missing_a_blob_still_lists_every_commit(tmp_path):
    """A fetched snapshot or a damaged clone can lack a blob (files over a size limit). Finding a
    rename reads the blobs of an added/deleted pair; the profile's history must not fail over one
    missing blob: it lists every commit, that one's paths as an add and a delete."""
    r = GitRepo(tmp_path / "r")
    when = datetime(2026, 1, 28, 12, tzinfo=SH)
    body = "".join(f"line {i}\n" for i in range(40))
    r.commit("add (#1)", {"src/old.py": body}, when=when)
    r.commit(
        "move with an edit (#2)",
        {"src/old.py": None, "src/new.py": body + "one more\n"},
        when=when + timedelta(hours=1),
    )
    r.commit("later (#3)", {"src/other.py": "x = 1\n"}, when=when + timedelta(hours=2))
    src = LocalGitSource(str(r.path))
    assert [c.paths for c in await src.history("main", 10)][1] == ("src/new.py",)  # the rename, found
    blob = r.git("rev-parse", "HEAD~2:src/old.py").strip()
    (r.path / ".git" / "objects" / blob[:2] / blob[2:]).unlink()
    history = await src.history("main", 10)
    assert [c.pr_number for c in history] == [3, 2, 1]
    assert set(history[1].paths) == {"src/new.py", "src/old.py"}
