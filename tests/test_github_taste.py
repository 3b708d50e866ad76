"""A GitHub repository's learned profile: its changelog, its Releases and its PR labels, read through
the real PyGithub from the fake GitHub API, judged in the digest a reader gets (real Redis).

The project (built in the fake): seven weeks of squash-merged work from START, each released the
next Monday at 09:00 UTC. The notes list every resolver fix under "Bug fixes", new options under
"Features", doc edits under "Documentation", and never the panel rewrites, the CI bumps (labelled
`internal`) or the cache guards (labelled `bug`). Where the notes are kept varies: CHANGELOG.md,
docs/source/changelog.md, or only the GitHub Releases' bodies.
"""

from __future__ import annotations

import logging
import math
from datetime import UTC, date, datetime, timedelta

import pytest

from bot.core.models import Importance, NotFoundError
from bot.core.window import day_window
from bot.sources.github import GitHubSource
from tests.fakes.github_server import FakeFile, FakeGitHub
from tests.taste_repo import THINGS, render_changelog

REPO = "octo/resolver"
TOKEN = "ghp_" + "x" * 36
START = datetime(2026, 2, 2, tzinfo=UTC)  # a Monday
WEEKS = 7  # of released work; the eighth week (from 2026-03-23) is the one under test
DAY = date(2026, 3, 25)  # its Wednesday: six releases were published before its Monday
LISTED = "In this project's release notes, changes like this are listed under “Bug fixes”"
NOT_LISTED = "This project's release notes rarely list changes like this"
HEADINGS = ("Breaking changes", "Bug fixes", "Features", "Documentation")


def at(day: date, hour: int) -> datetime:
    return datetime(day.year, day.month, day.day, hour, tzinfo=UTC)


class Project:
    def __init__(self, fake: FakeGitHub, notes: str):
        self.fake, self.notes, self.number = fake, notes, 100
        self.released: list[tuple[str, list[tuple[str, str]]]] = []
        self.panels: list[str] = []  # every panel rewrite's title
        fake.add_repo(REPO)
        fake.add_commit(
            REPO,
            "Initial commit",
            committed_at=START - timedelta(days=1),
            files=[FakeFile("README.md", "added")],
            contents={"README.md": "resolver\n"},
        )

    def pr(self, labels: tuple[str, ...] = (), pull: bool = True) -> int:
        self.number += 1
        if pull:
            self.fake.add_pull(REPO, self.number, title=f"PR {self.number}", body="", labels=labels)
        return self.number

    def commit(self, title: str, when: datetime, path: str, lines: int, contents: dict | None = None) -> str:
        return self.fake.add_commit(
            REPO, title, committed_at=when, files=[FakeFile(path, "added", additions=lines)], contents=contents
        )

    def week(self, w: int) -> None:
        """Twenty commits Tuesday to Thursday, released the next Monday."""
        monday = START + timedelta(weeks=w)
        listed: list[tuple[str, str]] = []
        t = monday + timedelta(days=1, hours=9)
        for i in range(6):
            n, name = self.pr(labels=("bug",)), THINGS[(i + w) % len(THINGS)]
            self.commit(f"Handle {name} in the resolver (#{n})", t, f"src/resolver/{name}_{w}.py", 4)
            listed.append(("Bug fixes", f"Handle {name} in the resolver ([#{n}](https://github.com/{REPO}/pull/{n}))"))
            t += timedelta(hours=2)
            n = self.pr()
            self.panels.append(f"[panels] Rework the {THINGS[i]} panel (#{n})")
            self.commit(self.panels[-1], t, f"src/panels/{THINGS[i]}_{w}.py", 300)
            t += timedelta(hours=2)
        for i in range(2):
            option = THINGS[i + w % 5]
            n = self.pr()
            self.commit(f"Add `--{option}-only` option (#{n})", t, f"src/cli/{option}_{w}.py", 6)
            listed.append(("Features", f"Add `--{option}-only` option (#{n})"))
            t += timedelta(hours=2)
            n = self.pr(pull=False)  # the title names an issue: GraphQL finds no PR by that number
            self.commit(
                f"Update docs for {THINGS[i]} (#{n})",
                t,
                f"docs/{THINGS[i]}.md",
                2,
                contents={f"docs/{THINGS[i]}.md": f"week {w}\n"},
            )
            listed.append(("Documentation", f"Update docs for {THINGS[i]} (#{n})"))
            t += timedelta(hours=2)
            n = self.pr(labels=("internal",))
            self.commit(f"Bump actions/checkout (#{n})", t, ".github/workflows/ci.yml", 1)
            t += timedelta(hours=2)
            guarded = THINGS[(2 * i + w) % len(THINGS)]
            n = self.pr(labels=("bug",))
            self.commit(f"Guard the {guarded} cache against stale entries (#{n})", t, f"src/cache/{guarded}_{w}.py", 5)
            t += timedelta(hours=2)
        version = f"0.{w + 1}.0"
        self.released.append((version, listed))
        release_at = monday + timedelta(weeks=1, hours=9)
        notes_file = {"changelog": "CHANGELOG.md", "docs": "docs/source/changelog.md"}.get(self.notes)
        if notes_file:
            self.commit(
                f"Release {version}", release_at, notes_file, 10, contents={notes_file: render_changelog(self.released)}
            )
            body = "See CHANGELOG.md for what changed."
        else:
            self.commit(f"Release {version}", release_at, "pyproject.toml", 1)
            body = release_body(listed)
        self.fake.add_release(REPO, f"v{version}", body=body, published_at=release_at + timedelta(minutes=5))

    def day_under_test(self, day: date = DAY) -> dict[str, str]:
        """Commits on `day`, titled like the listed fixes, the unlisted panel rewrites and the
        labelled cache guards; returns title → what it is."""
        kinds = {}
        for hour, (title, path, lines, kind) in enumerate(
            [
                ("Handle wheels in the resolver", "src/resolver/wheels_new.py", 4, "fix"),
                ("[panels] Rework the hashes panel", "src/panels/hashes_new.py", 300, "panel"),
                ("Handle pins in the resolver", "src/resolver/pins_new.py", 4, "fix"),
                ("[panels] Rework the urls panel", "src/panels/urls_new.py", 300, "panel"),
                ("Guard the locks cache against stale entries", "src/cache/locks_new.py", 5, "guard"),
            ],
            start=2,
        ):
            n = self.pr()
            full = f"{title} (#{n})"
            self.commit(full, at(day, hour), path, lines)
            kinds[full] = kind
            if kind == "panel":
                self.panels.append(full)
        return kinds


def release_body(entries: list[tuple[str, str]]) -> str:
    """A Release's body as projects write it: sections, no version heading (the tag names it)."""
    out = []
    for heading in HEADINGS:
        lines = [line for h, line in entries if h == heading]
        if lines:
            out += [f"### {heading}", ""] + [f"- {line}" for line in lines] + [""]
    return "\n".join(out)


def build(fake: FakeGitHub, notes: str = "changelog") -> Project:
    project = Project(fake, notes)
    for w in range(WEEKS):
        project.week(w)
    return project


async def digest_of(make_services, fake: FakeGitHub, day: date = DAY, **settings):
    values = {"github_api_url": fake.url, "github_token": TOKEN, **settings}
    services = await make_services(**values)
    window = day_window(day, "UTC")
    if services.builder.taste is not None:  # as the clock learns it, right after midnight
        await services.builder.taste.learn_days(services.source(REPO), window.start_utc, window.start_utc)
    return await services.builder.build(services.source(REPO), window, "en")


def judged(digest) -> dict[str, tuple[Importance, str]]:
    return {e.commit.title: (e.analysis.importance, e.analysis.importance_reason) for e in digest.entries}


def by_kind(got: dict[str, tuple[Importance, str]], kinds: dict[str, str], kind: str) -> list[tuple[Importance, str]]:
    found = [got[title] for title, k in kinds.items() if k == kind]
    assert found, kind
    return found


def profile_requests(fake: FakeGitHub, since: int = 0) -> list:
    """The requests a learned profile makes (the day's own listing, files, PR bodies,
    .digest.toml and the digest's CODEOWNERS excluded)."""
    out = []
    for r in fake.requests[since:]:
        history = r.path == f"/repos/{REPO}/commits" and "since" not in r.query
        notes = (
            (r.path.startswith(f"/repos/{REPO}/contents") and not r.path.endswith((".digest.toml", "CODEOWNERS")))
            or r.path.startswith(f"/repos/{REPO}/git/trees/")
            or r.path == f"/repos/{REPO}/releases"
        )
        labels = r.path == "/graphql" and "pullRequest(" in r.body
        if history or notes or labels:
            out.append(r)
    return out


# --- the digest a reader gets ----------------------------------------------------------------------


@pytest.mark.parametrize("notes", ["changelog", "docs", "releases"])
async def test_a_github_repository_is_judged_by_its_own_release_notes(make_services, fake_github, notes):
    project = build(fake_github, notes)
    kinds = project.day_under_test()
    rules = judged(await digest_of(make_services, fake_github, learn_from_release_notes=False))
    got = judged(await digest_of(make_services, fake_github))
    # The rules alone guess: a four-line resolver fix is medium (a fix of shipped code), and so is a
    # 300-line panel rewrite.
    assert {level for level, _ in by_kind(rules, kinds, "fix")} == {Importance.MEDIUM}
    assert {level for level, _ in by_kind(rules, kinds, "panel")} == {Importance.MEDIUM}
    # Its notes list every resolver fix under "Bug fixes" and never a panel rewrite.
    assert by_kind(got, kinds, "fix") == [(Importance.MEDIUM, LISTED)] * 2
    assert by_kind(got, kinds, "panel") == [(Importance.LOW, NOT_LISTED)] * 2


async def test_pr_labels_teach_what_the_notes_never_list(make_services, fake_github):
    project = build(fake_github)
    kinds = project.day_under_test()
    rules = judged(await digest_of(make_services, fake_github, learn_from_release_notes=False))
    got = judged(await digest_of(make_services, fake_github))
    # Never in the notes, but every cache guard so far was labelled `bug`: the rules' guess (a fix of
    # shipped code) is confirmed in the labels' words, where the notes alone would lower it.
    assert [level for level, _ in by_kind(rules, kinds, "guard")] == [Importance.MEDIUM]
    assert [level for level, _ in by_kind(got, kinds, "guard")] == [Importance.MEDIUM]


async def test_without_graphql_the_labels_are_left_out_and_the_notes_still_count(make_services, fake_github):
    project = build(fake_github)
    kinds = project.day_under_test()
    fake_github.graphql = False  # an Enterprise server without GraphQL
    got = judged(await digest_of(make_services, fake_github))
    rules = judged(await digest_of(make_services, fake_github, learn_from_release_notes=False))
    # Released and never listed: the notes lower the rules' guess.
    assert by_kind(rules, kinds, "guard")[0][0] is Importance.MEDIUM
    assert by_kind(got, kinds, "guard") == [(Importance.LOW, NOT_LISTED)]
    assert by_kind(got, kinds, "fix") == [(Importance.MEDIUM, LISTED)] * 2
    assert by_kind(got, kinds, "panel") == [(Importance.LOW, NOT_LISTED)] * 2


async def test_no_peeking_releases_published_after_the_day_began_are_not_read(make_services, fake_github):
    project = build(fake_github, "releases")
    kinds = project.day_under_test()
    # Published two days after the day under test, and a draft written before it: both call every
    # panel rewrite so far a breaking change.
    breaking = "### Breaking changes\n\n" + "".join(f"- {title}\n" for title in project.panels)
    fake_github.add_release(REPO, "v1.0.0", body=breaking, published_at=at(DAY + timedelta(days=2), 9))
    fake_github.add_release(
        REPO, "v0.9.0", body=breaking, published_at=None, draft=True, created_at=at(DAY - timedelta(days=20), 9)
    )
    got = judged(await digest_of(make_services, fake_github))
    assert by_kind(got, kinds, "fix") == [(Importance.MEDIUM, LISTED)] * 2
    assert by_kind(got, kinds, "panel") == [(Importance.LOW, NOT_LISTED)] * 2
    # …while a later day, whose profile is as of a moment after that release, is judged by it.
    later = DAY + timedelta(weeks=2)
    title = "[panels] Rework the wheels panel (#9100)"
    fake_github.add_commit(
        REPO, title, committed_at=at(later, 5), files=[FakeFile("src/panels/wheels_late.py", "added", additions=300)]
    )
    late = judged(await digest_of(make_services, fake_github, day=later))[title]
    assert late == (
        Importance.HIGH,
        "In this project's release notes, changes like this are listed under “Breaking changes”",
    )


# --- what a profile costs --------------------------------------------------------------------------


async def test_a_profile_costs_a_bounded_few_requests_once_a_day(make_services, fake_github):
    project = build(fake_github)
    kinds = project.day_under_test()
    history = 1 + WEEKS * 20 + WEEKS  # before the day: every week's work and its release
    got = judged(await digest_of(make_services, fake_github))
    assert by_kind(got, kinds, "fix") == [(Importance.MEDIUM, LISTED)] * 2
    spent = profile_requests(fake_github)
    pages = [r for r in spent if r.path == f"/repos/{REPO}/commits" and r.query.get("per_page") != "1"]
    assert len(pages) == math.ceil(history / 100)  # 100 commits a request, no request per commit
    label_queries = [r for r in spent if r.path == "/graphql"]
    assert len(label_queries) == math.ceil(WEEKS * 20 / 100)  # every PR number, 100 a query
    # The commit before the day, the root and docs/ listings, CHANGELOG.md, one page of releases.
    assert len(spent) == 1 + 2 + 1 + 1 + len(pages) + len(label_queries)

    # The same day again, in another process: its profile comes from Redis.
    asked = len(fake_github.requests)
    again = judged(await digest_of(make_services, fake_github))
    assert profile_requests(fake_github, since=asked) == []
    assert again == got

    # The next day learns anew (a release or a correction of today counts from tomorrow on), at
    # the same bounded cost.
    thursday = DAY + timedelta(days=1)
    more = project.day_under_test(thursday)
    asked = len(fake_github.requests)
    later = judged(await digest_of(make_services, fake_github, day=thursday))
    assert len(profile_requests(fake_github, since=asked)) <= len(spent) + 1
    assert by_kind(later, more, "fix") == [(Importance.MEDIUM, LISTED)] * 2
    assert by_kind(later, more, "panel") == [(Importance.LOW, NOT_LISTED)] * 2


# --- the source's edges ------------------------------------------------------------------------------


@pytest.fixture
def source(fake_github, make_settings):
    made: list[GitHubSource] = []

    def open_(**overrides) -> GitHubSource:
        values = {"github_api_url": fake_github.url, "github_token": TOKEN, **overrides}
        made.append(GitHubSource(REPO, make_settings(**values)))
        return made[-1]

    yield open_
    for src in made:
        src.close()


async def test_the_history_readers_answer_like_github(fake_github, source):
    build(fake_github)
    src = source()
    assert await src.tip_before(START - timedelta(days=2)) is None  # nothing committed yet
    tip = await src.tip_before(START + timedelta(weeks=1, hours=9))  # the first release's instant
    assert tip and tip == await src.tip_before(START + timedelta(weeks=1, hours=9, minutes=-1))
    after = await src.tip_before(START + timedelta(weeks=1, hours=9, seconds=1))
    assert after != tip and "Release 0.1.0" in [c.title for c in await src.history(after, 1)]
    paths = await src.list_paths(after)
    assert {"README.md", "CHANGELOG.md", "docs/markers.md"} <= set(paths)
    assert "CHANGELOG.md" not in await src.list_paths(tip)  # the tree as it stood then
    history = await src.history(after, 500)
    assert len(history) == 22 and history[0].title == "Release 0.1.0" and history[-1].title == "Initial commit"
    assert history[1].pr_number == 120 and history[1].paths == ()
    with pytest.raises(NotFoundError):
        await src.list_paths("0" * 40)
    with pytest.raises(NotFoundError):
        await src.history("no-such-branch", 10)
    # 114 names an issue, 999 nothing: left out (GraphQL's NOT_FOUND), the others still read.
    assert await src.pr_labels([101, 102, 113, 114, 999, 101]) == {101: ["bug"], 102: [], 113: []}
    bodies = await src.release_bodies(START + timedelta(weeks=2, hours=9, minutes=6))
    assert bodies == [
        "## v0.2.0\n\nSee CHANGELOG.md for what changed.",
        "## v0.1.0\n\nSee CHANGELOG.md for what changed.",
    ]


async def test_pr_labels_need_graphql_and_a_token(fake_github, source, caplog):
    caplog.set_level(logging.INFO, logger="bot.sources.github")
    build(fake_github)
    assert await source(github_token=None).pr_labels([101]) == {}
    fake_github.graphql = False
    src = source()
    assert await src.pr_labels([101]) == {}
    assert await src.pr_labels([103]) == {}
    said = [r.getMessage() for r in caplog.records if "PR labels of" in r.getMessage()]
    assert len(said) == 2  # once per source
    assert fake_github.count("POST", "/graphql") == 1  # no token: not even asked; then asked once


async def test_history_leaves_merges_out_and_reads_no_more_pages_than_it_needs(fake_github, source):
    fake_github.add_repo(REPO)
    base = fake_github.add_commit(REPO, "Initial commit", committed_at=START)
    side = fake_github.add_commit(
        REPO, "Work on a branch", committed_at=START + timedelta(hours=1), parents=[base], branch="feature"
    )
    for i in range(250):
        fake_github.add_commit(REPO, f"Step {i} (#{i + 1})", committed_at=START + timedelta(hours=2, minutes=i))
    merge = fake_github.add_commit(
        REPO,
        "Merge branch 'feature'",
        committed_at=START + timedelta(days=1),
        parents=[fake_github._repo(REPO).branches["main"], side],
    )
    src = source()
    history = await src.history(merge, 150)
    assert len(history) == 150 and "Merge branch 'feature'" not in [c.title for c in history]
    assert history[0].title == "Step 249 (#250)" and history[0].pr_number == 250
    assert fake_github.count("GET", f"/repos/{REPO}/commits") == 2  # 151 listed: two pages of 100
    everything = await src.history("main", 2000)
    assert len(everything) == 252 and "Work on a branch" in [c.title for c in everything]
