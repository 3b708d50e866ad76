"""GitHubSource against a fake GitHub REST API on loopback, reached by the real PyGithub."""

from __future__ import annotations

import asyncio
import logging
import socket
from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from bot.core.models import NotFoundError, SourceError, UsageError
from bot.core.window import day_window
from bot.sources.github import GitHubSource
from tests.fakes.github_server import FakeFile, FakeGitHub

REPO = "octo/widgets"
SH = ZoneInfo("Asia/Shanghai")
DAY = date(2026, 1, 28)
WINDOW = day_window(DAY, "Asia/Shanghai")
TOKEN = "ghp_TopSecretToken1234567890"


def at(hour: int, minute: int = 0, second: int = 0, day: date = DAY) -> datetime:
    """An instant on `day` in Asia/Shanghai."""
    return datetime(day.year, day.month, day.day, hour, minute, second, tzinfo=SH)


@pytest.fixture
def source(fake_github, make_settings):
    """A GitHubSource on the fake, built from settings (extra settings via the returned function)."""
    made: list[GitHubSource] = []

    def build(repo: str = REPO, **overrides) -> GitHubSource:
        values = {"github_api_url": fake_github.url, "github_max_rate_limit_wait": 10.0, **overrides}
        src = GitHubSource(repo, make_settings(**values))
        made.append(src)
        return src

    yield build
    for src in made:
        src.close()


def add_day_of_commits(gh: FakeGitHub, n: int, repo: str = REPO) -> list[str]:
    """n commits on DAY, one per minute from 08:00 Shanghai, oldest first."""
    return [gh.add_commit(repo, f"chore: step {i}", committed_at=at(8) + timedelta(minutes=i)) for i in range(n)]


# --- identity ----------------------------------------------------------------------------------


async def test_identity_follows_githubs_spelling(fake_github, source):
    fake_github.add_repo("Octo/Widgets", default_branch="trunk")
    src = source("octo/widgets")
    assert src.cache_id == "github:octo/widgets"
    assert await src.default_branch() == "trunk"
    assert src.name == "Octo/Widgets"
    assert src.web_url == "https://github.com/Octo/Widgets"


# --- listing -----------------------------------------------------------------------------------


async def test_day_window_edges_use_the_committer_date_in_the_time_zone(fake_github, source):
    fake_github.add_repo(REPO)
    gh = fake_github
    gh.add_commit(REPO, "before: previous day 23:59:59", committed_at=at(23, 59, 59, DAY - timedelta(days=1)))
    gh.add_commit(REPO, "in: midnight", committed_at=at(0))
    gh.add_commit(
        REPO,
        "in: authored the day before, committed today",
        authored_at=at(12, day=DAY - timedelta(days=3)),
        committed_at=at(9),
    )
    gh.add_commit(REPO, "in: last second", committed_at=at(23, 59, 59))
    gh.add_commit(REPO, "out: next midnight", committed_at=at(0, day=DAY + timedelta(days=1)))
    gh.add_commit(
        REPO,
        "out: authored today, committed tomorrow",
        authored_at=at(10),
        committed_at=at(1, day=DAY + timedelta(days=1)),
    )

    commits = await source().list_commits(WINDOW)

    assert [c.title for c in commits] == [
        "in: last second",
        "in: authored the day before, committed today",
        "in: midnight",
    ]
    assert commits[0].committed_at == at(23, 59, 59)
    assert commits[0].committed_at.tzinfo == UTC


async def test_every_page_is_listed_without_any_per_commit_request(fake_github, source):
    fake_github.add_repo(REPO)
    shas = add_day_of_commits(fake_github, 250)

    commits = await source().list_commits(WINDOW)

    assert [c.sha for c in commits] == shas[::-1]  # all of them, newest first
    assert commits[0].url == f"https://github.com/{REPO}/commit/{shas[-1]}"
    assert commits[0].parents == (shas[-2],)
    assert fake_github.count(path=f"/repos/{REPO}/commits") == 3  # 100 + 100 + 50
    assert fake_github.count(startswith=f"/repos/{REPO}/commits/") == 0
    assert fake_github.count(startswith=f"/repos/{REPO}/git/") == 0
    assert len(fake_github.requests) == 4  # plus the repository itself


async def test_merges_are_left_out_unless_asked_for(fake_github, source):
    gh = fake_github
    gh.add_repo(REPO)
    base = gh.add_commit(REPO, "feat: base", committed_at=at(8))
    gh.add_branch(REPO, "feature", at=base)
    side = gh.add_commit(REPO, "feat: side work", committed_at=at(9), branch="feature")
    main = gh.add_commit(REPO, "fix: main work", committed_at=at(10))
    gh.add_commit(REPO, "Merge pull request #7 from octo/feature", committed_at=at(11), parents=[main, side])
    src = source()

    default = await src.list_commits(WINDOW)
    with_merges = await src.list_commits(WINDOW, include_merges=True)

    assert [c.title for c in default] == ["fix: main work", "feat: side work", "feat: base"]
    assert next(c.title for c in with_merges) == "Merge pull request #7 from octo/feature"
    assert with_merges[0].is_merge and with_merges[0].pr_number is None
    assert len(with_merges) == 4


async def test_a_named_branch_is_listed_and_an_unknown_one_is_a_clear_error(fake_github, source):
    gh = fake_github
    gh.add_repo(REPO)
    base = gh.add_commit(REPO, "feat: on main", committed_at=at(8))
    gh.add_branch(REPO, "release", at=base)
    gh.add_commit(REPO, "fix: release only", committed_at=at(9), branch="release")
    gh.add_commit(REPO, "feat: main only", committed_at=at(10))
    src = source()

    release = await src.list_commits(WINDOW, branch="release")
    with pytest.raises(NotFoundError) as err:
        await src.list_commits(WINDOW, branch="nope")

    assert [c.title for c in release] == ["fix: release only", "feat: on main"]
    assert str(err.value) == f"No branch 'nope' in {REPO}."


async def test_titles_bodies_and_authors_carry_no_trailers_or_email_addresses(fake_github, source):
    fake_github.add_repo(REPO)
    message = (
        "fix(cache): drop stale entries (#4521)\n\n"
        "Entries outlived their TTL; ask carol@example.com for the dashboard.\n\n"
        "This reverts commit 0123456789abcdef0123456789abcdef01234567.\n\n"
        "Signed-off-by: Ada Lovelace <ada@example.com>\n"
        "Co-authored-by: Bob <bob@example.com>"
    )
    fake_github.add_commit(REPO, message, committed_at=at(12), author="Ada Lovelace", email="ada@example.com")
    fake_github.add_commit(REPO, "docs: typo", committed_at=at(13), author="bot@ci.example.com")

    typo, fix = await source().list_commits(WINDOW)

    assert fix.title == "fix(cache): drop stale entries (#4521)"
    assert fix.pr_number == 4521
    assert fix.reverts == "0123456789abcdef0123456789abcdef01234567"
    assert "Entries outlived their TTL" in fix.body
    assert "Signed-off-by" not in fix.body and "Co-authored-by" not in fix.body
    assert "@" not in fix.body
    assert fix.author == "Ada Lovelace"
    assert "@" not in typo.author and typo.author


# --- files -------------------------------------------------------------------------------------


async def test_all_files_of_a_commit_with_more_than_300_files_in_one_commit_request(fake_github, source):
    fake_github.add_repo(REPO)
    files = [FakeFile(f"src/mod_{i:04}.py", additions=i % 7 + 1, deletions=i % 3) for i in range(650)]
    sha = fake_github.add_commit(REPO, "refactor: split modules", committed_at=at(12), files=files)

    got = await source().get_files(sha)

    assert [f.path for f in got] == [f.filename for f in files]
    assert got[649].additions == 649 % 7 + 1 and got[649].deletions == 649 % 3
    assert got[0].patch and got[0].patch.startswith("@@")
    assert fake_github.count(path=f"/repos/{REPO}/commits/{sha}") == 3  # 300 + 300 + 50


async def test_binary_renamed_and_oversized_files(fake_github, source):
    fake_github.add_repo(REPO)
    sha = fake_github.add_commit(
        REPO,
        "feat: assets",
        committed_at=at(12),
        files=[
            FakeFile("assets/logo.png", "added", additions=0, deletions=0, patch=None),
            FakeFile("model/weights.bin", "modified", additions=0, deletions=0, patch=None),
            FakeFile("src/py.typed", "added", additions=0, deletions=0, patch=None),
            FakeFile("data/dump.sql", "modified", additions=40000, deletions=2, patch=None),
            FakeFile("src/new_name.py", "renamed", additions=2, deletions=1, previous_filename="src/old_name.py"),
            FakeFile("src/moved.py", "renamed", additions=0, deletions=0, patch=None, previous_filename="moved.py"),
            FakeFile("setup.sh", "changed", additions=0, deletions=0, patch=None),
            FakeFile("legacy.py", "removed", additions=0, deletions=12),
        ],
    )

    files = {f.path: f for f in await source().get_files(sha)}

    assert files["assets/logo.png"].binary and files["assets/logo.png"].patch is None
    assert files["assets/logo.png"].status == "added"
    assert files["model/weights.bin"].binary  # no patch and no line counts: GitHub's binary file
    # …or an empty file, or a change of mode: a clone shows those as text without a hunk
    assert not files["src/py.typed"].binary and files["src/py.typed"].patch == ""
    assert not files["setup.sh"].binary and files["setup.sh"].patch == ""
    oversized = files["data/dump.sql"]
    assert not oversized.binary and oversized.patch is None and oversized.additions == 40000
    renamed = files["src/new_name.py"]
    assert renamed.status == "renamed" and renamed.previous_path == "src/old_name.py"
    assert renamed.patch and not renamed.binary
    moved = files["src/moved.py"]
    assert moved.previous_path == "moved.py" and not moved.binary
    assert files["setup.sh"].status == "modified"
    assert files["legacy.py"].status == "removed" and files["legacy.py"].deletions == 12


async def test_get_commit_resolves_an_abbreviated_sha_with_totals(fake_github, source):
    fake_github.add_repo(REPO)
    sha = fake_github.add_commit(
        REPO,
        "perf: faster (#9)\n\nDetails.",
        committed_at=at(12),
        files=[FakeFile("a.py", additions=3, deletions=1), FakeFile("b.py", additions=2)],
    )

    commit = await source().get_commit(sha[:7])

    assert commit.sha == sha
    assert (commit.title, commit.body, commit.pr_number) == ("perf: faster (#9)", "Details.", 9)
    assert (commit.additions, commit.deletions, commit.files_changed) == (5, 1, 2)
    assert commit.repo == REPO


async def test_get_files_for_20_commits_concurrently_each_gets_its_own_files(fake_github, source):
    fake_github.add_repo(REPO)
    fake_github.latency = 0.05  # long enough for requests to overlap
    shas = [
        fake_github.add_commit(
            REPO, f"feat: {i}", committed_at=at(8, i), files=[FakeFile(f"only_in_{i}.py", additions=i + 1)]
        )
        for i in range(20)
    ]
    src = source(github_fetch_concurrency=4)

    results = await asyncio.gather(*(src.get_files(sha) for sha in shas))

    for i, files in enumerate(results):
        assert [(f.path, f.additions) for f in files] == [(f"only_in_{i}.py", i + 1)]
    for sha in shas:
        assert fake_github.count(path=f"/repos/{REPO}/commits/{sha}") == 1
    assert 1 < fake_github.max_in_flight <= 4


# --- pull requests -----------------------------------------------------------------------------


async def test_pr_description(fake_github, source):
    fake_github.add_repo(REPO)
    fake_github.add_pull(REPO, 42, body="## Why\nThe cache leaked.")
    fake_github.add_pull(REPO, 43, body=None)
    src = source()

    assert await src.pr_description(42) == "## Why\nThe cache leaked."
    assert await src.pr_description(43) == ""
    assert await src.pr_description(44) is None


async def test_pr_commit_is_the_merge_commit(fake_github, source):
    fake_github.add_repo(REPO)
    sha = fake_github.add_commit(REPO, "Fix the cache leak (#42)", committed_at=at(8), files=[FakeFile("x.py")])
    fake_github.add_pull(REPO, 42, merge_commit_sha=sha)
    fake_github.add_pull(REPO, 43, merged=False, state="open")
    src = source()

    commit = await src.pr_commit(42)
    assert (commit.sha, commit.title, commit.pr_number) == (sha, "Fix the cache leak (#42)", 42)
    assert await src.pr_commit(43) is None  # not merged: nothing landed
    assert await src.pr_commit(44) is None  # no such PR


# --- not found and refused ---------------------------------------------------------------------


async def test_unknown_repository(fake_github, source):
    fake_github.add_repo("octo/secret", private=True)

    for name in ("octo/nothing", "octo/secret"):
        with pytest.raises(NotFoundError) as err:
            await source(name).list_commits(WINDOW)
        assert str(err.value) == f"Repository {name} was not found on GitHub (or the token cannot see it)."


async def test_unknown_sha_is_not_found(fake_github, source):
    fake_github.add_repo(REPO)
    fake_github.add_commit(REPO, "feat: x", committed_at=at(8))
    src = source()

    with pytest.raises(NotFoundError) as err:
        await src.get_commit("deadbeef")
    with pytest.raises(NotFoundError) as files_err:
        await src.get_files("deadbeef")

    assert str(err.value) == f"No commit 'deadbeef' in {REPO}."
    assert str(files_err.value) == f"No commit 'deadbeef' in {REPO}."
    assert fake_github.requests[-1].path == f"/repos/{REPO}/commits/deadbeef"  # GitHub answered 422
    with pytest.raises(UsageError):
        await src.get_commit("  ")


async def test_a_forbidden_answer_is_reported_not_retried(fake_github, source):
    fake_github.add_repo(REPO)
    fake_github.fail_next(403, message="Resource not accessible by integration")

    with pytest.raises(SourceError) as err:
        await source().default_branch()

    assert str(err.value) == f"GitHub refused access to {REPO} (403: Resource not accessible by integration)."
    assert len(fake_github.requests) == 1


async def test_rejected_token(fake_github, source):
    fake_github.add_repo(REPO)
    fake_github.accept_tokens("ghp_the_right_one")

    with pytest.raises(SourceError) as err:
        await source(github_token=TOKEN).list_commits(WINDOW)

    assert "rejected the token" in str(err.value) and "GITHUB_TOKEN" in str(err.value)
    assert TOKEN not in str(err.value)


# --- rate limits and failures ------------------------------------------------------------------


async def test_rate_limit_is_waited_out_and_the_listing_is_complete(fake_github, source):
    fake_github.add_repo(REPO)
    shas = add_day_of_commits(fake_github, 150)
    # Page 2 of the listing is rate limited, with the reset 1–2 s ahead.
    fake_github.rate_limit_next(1, reset_in=1, path_contains="/commits", skip=1)
    src = source(github_max_rate_limit_wait=4.0)

    commits = await src.list_commits(WINDOW)

    assert [c.sha for c in commits] == shas[::-1]
    assert fake_github.count(path=f"/repos/{REPO}/commits") == 3  # page 1, page 2 refused, page 2

    # The bound is per wait: a reset further away than it fails at once, without waiting.
    fake_github.rate_limit_next(1, reset_in=30)
    with pytest.raises(SourceError) as err:
        await src.get_files(shas[0])
    assert "rate limit is exhausted until" in str(err.value)


async def test_secondary_rate_limit_retry_after_is_honoured(fake_github, source):
    fake_github.add_repo(REPO)
    sha = fake_github.add_commit(REPO, "feat: x", committed_at=at(8), files=[FakeFile("x.py")])
    fake_github.secondary_limit_next(1, retry_after=1)

    files = await source().get_files(sha)

    assert [f.path for f in files] == ["x.py"]
    assert fake_github.count(path=f"/repos/{REPO}/commits/{sha}") == 2


async def test_rate_limit_beyond_the_bound_fails_at_once(fake_github, source):
    fake_github.add_repo(REPO)
    add_day_of_commits(fake_github, 3)
    fake_github.rate_limit_next(1, reset_in=3600)

    with pytest.raises(SourceError) as err:
        await source(github_max_rate_limit_wait=60).list_commits(WINDOW)

    message = str(err.value)
    assert message.startswith("GitHub's API rate limit is exhausted until ")
    assert message.endswith(" UTC; set GITHUB_TOKEN or try later.")
    assert len(fake_github.requests) == 1  # no retry


async def test_server_errors_are_retried(fake_github, source):
    fake_github.add_repo(REPO)
    sha = fake_github.add_commit(REPO, "feat: x", committed_at=at(8), files=[FakeFile("x.py")])
    fake_github.fail_next(502, 2)
    src = source()

    files = await src.get_files(sha)

    assert [f.path for f in files] == ["x.py"]
    assert fake_github.count(path=f"/repos/{REPO}/commits/{sha}") == 3


async def test_persistent_server_errors_become_one_sentence(fake_github, source):
    fake_github.add_repo(REPO)
    sha = fake_github.add_commit(REPO, "feat: x", committed_at=at(8))
    fake_github.fail_next(503, 50)

    with pytest.raises(SourceError) as err:
        await source().get_files(sha)

    assert str(err.value) == "GitHub kept failing (HTTP 503) after 3 retries; try again later."
    assert fake_github.count(path=f"/repos/{REPO}/commits/{sha}") == 4


async def test_unreachable_github(make_settings):
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    src = GitHubSource(REPO, make_settings(github_api_url=f"http://127.0.0.1:{port}"))

    with pytest.raises(SourceError) as err:
        await src.default_branch()

    assert str(err.value) == "Could not reach GitHub at 127.0.0.1: the connection failed after 3 retries."


async def test_the_token_never_appears_in_errors_or_logs(fake_github, source, caplog):
    caplog.set_level(logging.DEBUG)
    caplog.set_level(logging.DEBUG, logger="github")  # PyGithub pins its own logger to INFO
    fake_github.add_repo(REPO)
    sha = fake_github.add_commit(REPO, "feat: x", committed_at=at(8), files=[FakeFile("x.py")])
    src = source(github_token=TOKEN, github_max_rate_limit_wait=5)
    errors = []

    fake_github.secondary_limit_next(1, retry_after=1)
    fake_github.fail_next(500, 1)
    await src.get_files(sha)  # waits, retries, succeeds
    fake_github.rate_limit_next(1, reset_in=3600)
    for call in (src.default_branch, lambda: src.get_commit("0000000"), lambda: src.get_files(sha)):
        try:
            await call()
        except (SourceError, NotFoundError) as exc:
            errors.append(str(exc))
    fake_github.accept_tokens("ghp_other")
    try:
        await src.pr_description(1)
    except SourceError as exc:
        errors.append(str(exc))

    assert fake_github.requests[0].headers["authorization"] == f"token {TOKEN}"  # it was sent
    assert len(errors) == 3 and "try later." in errors[0] and "set GITHUB_TOKEN" not in errors[0]
    assert "rate limit" in caplog.text  # the wait was logged
    assert all(TOKEN not in e for e in errors)
    assert TOKEN not in caplog.text


async def test_github_enterprise_path_prefix(make_settings):
    with FakeGitHub(prefix="/api/v3") as ghe:
        ghe.add_repo("Platform/Core")
        shas = add_day_of_commits(ghe, 120, repo="Platform/Core")
        ghe.add_commit(
            "Platform/Core", "feat: last", committed_at=at(20), files=[FakeFile(f"f{i}.py") for i in range(301)]
        )
        src = GitHubSource("platform/core", make_settings(github_api_url=ghe.url, github_token=TOKEN))

        commits = await src.list_commits(WINDOW)
        files = await src.get_files(commits[0].sha)
        src.close()

    assert ghe.url.endswith("/api/v3")
    assert len(commits) == 121 and commits[-1].sha == shas[0]
    assert len(files) == 301
    assert src.web_url == f"{ghe.origin}/Platform/Core"
    assert commits[0].url.startswith(f"{ghe.origin}/Platform/Core/commit/")
