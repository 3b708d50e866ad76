"""The learned profile: a repository's own release notes decide what its digests call important.

End to end on a real git repository (tests/taste_repo.py: weekly releases whose notes list the
resolver's fixes and never the panels's rewrites) and a real Redis, through the digest the
reader gets; plus the pure parts (notes, labelling) on the shapes real projects publish.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import pytest

from bot.core.models import Importance, PastCommit
from bot.core.window import day_window
from bot.sources.localgit import LocalGitSource
from bot.taste.examples import label_history
from bot.taste.notes import Category, fragment_category, parse_notes
from tests import taste_repo

DAY = date(2026, 3, 18)  # a Wednesday in the seventh week: six releases published before it


def entries_by_title(digest):
    return {e.commit.title: e.analysis for e in digest.entries}


@pytest.fixture(scope="module")
def released_repo(tmp_path_factory):
    return taste_repo.build(tmp_path_factory.mktemp("taste") / "repo", weeks=8)


async def digest_of(make_services, repo_path, lang="en", day=DAY, **settings):
    """The day's digest, its profile learnt first — as the clock learns it after midnight."""
    services = await make_services(**settings)
    source = LocalGitSource(str(repo_path))
    window = day_window(day, "UTC")
    if services.builder.taste is not None:
        await services.builder.taste.learn_days(source, window.start_utc, window.end_utc - timedelta(seconds=1))
    return await services.builder.build(source, window, lang)


# --- end to end: the digest a reader gets ------------------------------------------------------


async def test_release_notes_decide_what_the_rules_only_guessed(make_services, released_repo):
    rules = entries_by_title(await digest_of(make_services, released_repo.path, learn_from_release_notes=False))
    learned = entries_by_title(await digest_of(make_services, released_repo.path))
    fixes = [t for t in learned if t.startswith("Handle ")]
    rewrites = [t for t in learned if t.startswith("[panels]")]
    assert fixes and rewrites
    # The rules alone guess: a small resolver fix is medium (a fix of shipped code), and so is a
    # 300-line panel rewrite.
    assert {rules[t].importance for t in fixes} == {Importance.MEDIUM}
    assert {rules[t].importance for t in rewrites} == {Importance.MEDIUM}
    # This project's notes list every resolver fix under "Bug fixes" and never the panels.
    for title in fixes:
        assert learned[title].importance is Importance.MEDIUM, title
        assert learned[title].importance_reason == (
            "In this project's release notes, changes like this are listed under “Bug fixes”"
        )
    for title in rewrites:
        assert learned[title].importance is Importance.LOW, title
        assert learned[title].importance_reason == "This project's release notes rarely list changes like this"


async def test_the_reason_is_told_in_chinese(make_services, released_repo):
    learned = entries_by_title(await digest_of(make_services, released_repo.path, lang="zh"))
    fix = next(a for t, a in learned.items() if t.startswith("Handle "))
    assert fix.importance_reason == "在本项目的发布说明中，此类改动列在“Bug fixes”下"
    rewrite = next(a for t, a in learned.items() if t.startswith("[panels]"))
    assert rewrite.importance_reason == "本项目的发布说明很少列出此类改动"


async def test_firm_rules_stand_whatever_the_notes_say(make_services, tmp_path):
    repo = taste_repo.build(tmp_path / "repo", weeks=7)
    when = datetime.combine(DAY, datetime.min.time(), UTC) + timedelta(hours=3)
    # Worded like the listed fixes, but only tests change: nothing that ships, so low.
    repo.commit(
        "Handle markers in the resolver (#9001)", {"tests/test_markers.py": "def test_x():\n    pass\n"}, when=when
    )
    # Worded like the never-listed rewrites, but the author declares a breaking change.
    repo.commit(
        "[panels] Rework the extras panel!\n\nBREAKING CHANGE: the panel API is gone (#9002)",
        {"src/panels/extras_x.py": taste_repo.source_lines(3, "b")},
        when=when + timedelta(hours=1),
    )
    got = entries_by_title(await digest_of(make_services, repo.path))
    assert got["Handle markers in the resolver (#9001)"].importance is Importance.LOW
    assert "release notes" not in got["Handle markers in the resolver (#9001)"].importance_reason
    breaking = got["[panels] Rework the extras panel!"]
    assert breaking.importance is Importance.HIGH
    assert "release notes" not in breaking.importance_reason


async def test_no_peeking_a_later_release_does_not_change_an_earlier_day(make_services, tmp_path):
    repo = taste_repo.build(tmp_path / "repo", weeks=8)
    before = await digest_of(make_services, repo.path)
    # Months later the notes call every panel rewrite a breaking change.
    taste_repo.release_everything_as_breaking(repo, datetime(2026, 6, 1, tzinfo=UTC))
    after = await digest_of(make_services, repo.path)  # a fresh Redis prefix: nothing cached
    assert [(e.commit.sha, e.analysis.importance, e.analysis.importance_reason) for e in after.entries] == [
        (e.commit.sha, e.analysis.importance, e.analysis.importance_reason) for e in before.entries
    ]
    # …while a day after that release is judged by it.
    later = DAY + timedelta(weeks=12)
    repo.commit(
        "[panels] Rework the wheels panel (#9100)",
        {"src/panels/wheels_late.py": taste_repo.source_lines(150, "late")},
        when=datetime.combine(later, datetime.min.time(), UTC) + timedelta(hours=5),
    )
    got = entries_by_title(await digest_of(make_services, repo.path, day=later))
    late = got["[panels] Rework the wheels panel (#9100)"]
    assert (late.importance, late.importance_reason) == (
        Importance.HIGH,
        "In this project's release notes, changes like this are listed under “Breaking changes”",
    )


async def test_a_release_counts_from_the_next_day_on(make_services, tmp_path):
    repo = taste_repo.build(tmp_path / "repo", weeks=7)
    wednesday = datetime.combine(DAY, datetime.min.time(), UTC)
    # Mid-week, before the day's own commit, a release calls every panel rewrite breaking.
    taste_repo.release_everything_as_breaking(repo, wednesday + timedelta(hours=1))
    for day, n in ((DAY, 9201), (DAY + timedelta(days=1), 9202)):
        repo.commit(
            f"[panels] Rework the tags panel (#{n})",
            {f"src/panels/tags_{n}.py": taste_repo.source_lines(150, "t")},
            when=datetime.combine(day, datetime.min.time(), UTC) + timedelta(hours=6),
        )
    same_day = entries_by_title(await digest_of(make_services, repo.path))
    next_day = entries_by_title(await digest_of(make_services, repo.path, day=DAY + timedelta(days=1)))
    assert same_day["[panels] Rework the tags panel (#9201)"].importance is Importance.LOW  # not yet
    assert next_day["[panels] Rework the tags panel (#9202)"].importance is Importance.HIGH


async def test_a_repository_without_release_notes_gets_the_rules(make_services, tmp_path):
    from tests.gitrepo import GitRepo

    repo = GitRepo(tmp_path / "plain")
    when = datetime.combine(DAY, datetime.min.time(), UTC) + timedelta(hours=2)
    repo.commit("Handle markers in the resolver", {"src/resolver/markers.py": "x = 1\n"}, when=when)
    learned = await digest_of(make_services, repo.path)
    rules = await digest_of(make_services, repo.path, learn_from_release_notes=False)
    assert [(e.analysis.importance, e.analysis.importance_reason) for e in learned.entries] == [
        (e.analysis.importance, e.analysis.importance_reason) for e in rules.entries
    ]


# --- release notes as projects write them ----------------------------------------------------------

RUFF_STYLE = """# Changelog

## 0.16.4

Released on 2026-08-20.

### Preview features

- \\[`refurb`\\] Restrict `delete-full-slice` to lists (`FURB131`) ([#27711](https://github.com/o/r/pull/27711))

### Bug fixes

- Fix `InvalidInstruction` on Windows CPUs ([#27803](https://github.com/o/r/pull/27803))

### Documentation

- Add default indicator to rules table ([#27724](https://github.com/o/r/pull/27724))

### Breaking changes

- Remove the deprecated `--show-source` flag ([#27000](https://github.com/o/r/pull/27000))
"""

RST_STYLE = """Release Notes
=============

Unreleased
----------

Bug Fixes
~~~~~~~~~

- Fix the resolver on empty extras. (PR #501)

24.1 (2026-01-20)
-----------------

Deprecations and Removals
~~~~~~~~~~~~~~~~~~~~~~~~~

- Drop support for Python 3.8. (`#480 <https://github.com/o/r/pull/480>`_)

Security
~~~~~~~~

- Verify hashes of cached wheels. (`#470 <https://github.com/o/r/pull/470>`_)

Improved Documentation
~~~~~~~~~~~~~~~~~~~~~~

- Describe the cache layout. (`#460 <https://github.com/o/r/pull/460>`_)
"""


def test_markdown_headings_say_what_a_listing_means():
    notes = parse_notes(RUFF_STYLE)
    assert {n: (e.category, e.heading) for n, e in notes.entries.items()} == {
        27711: (Category.FEATURE, "Preview features"),
        27803: (Category.FIX, "Bug fixes"),
        27724: (Category.DOCS, "Documentation"),
        27000: (Category.BREAKING, "Breaking changes"),
    }
    assert all(e.released for e in notes.entries.values())
    assert [c.level for c in (Category.BREAKING, Category.FIX, Category.DOCS)] == [
        Importance.HIGH,
        Importance.MEDIUM,
        Importance.LOW,
    ]


def test_restructuredtext_notes_and_an_unreleased_section():
    notes = parse_notes(RST_STYLE)
    assert {n: (e.category, e.released) for n, e in notes.entries.items()} == {
        501: (Category.FIX, False),
        480: (Category.BREAKING, True),
        470: (Category.SECURITY, True),
        460: (Category.DOCS, True),
    }


def test_issue_links_are_not_pull_requests():
    notes = parse_notes("## 1.0\n\n### Fixes\n\n- Fix it ([issue](https://github.com/o/r/issues/77))\n")
    assert notes.entries == {}


def test_fragments_by_type():
    assert fragment_category("changelog.d/123.bugfix.md") is Category.FIX
    assert fragment_category("news/4567.removal.rst") is Category.BREAKING
    assert fragment_category("newsfragments/+hotfix.doc") is Category.DOCS
    assert fragment_category("changelog/10745.improvement.1.rst") is Category.FEATURE
    assert fragment_category("changelogs/0.1.x.md") is None  # a compiled changelog, not a fragment
    assert fragment_category("src/changes/123.bugfix.py") is None


def _history(n: int, start: datetime) -> list[PastCommit]:
    """n squash-merged commits, newest first, PR numbers 1..n."""
    return [
        PastCommit(f"{i:040x}", start + timedelta(hours=i), f"Change {i} (#{i})", i, (f"src/m{i % 7}.py",))
        for i in range(n, 0, -1)
    ]


def test_unlisted_commits_are_low_only_once_released():
    history = _history(120, datetime(2026, 1, 1, tzinfo=UTC))
    listed = "".join(f"- Change {i} (#{i})\n" for i in range(1, 101, 3))
    notes = parse_notes("## 1.0\n\n### Bug fixes\n\n" + listed)
    examples, verdict = label_history(history, notes)
    by_pr = {int(e.title.split("#")[1].rstrip(")")): e for e in examples}
    assert verdict.kind == "ok"
    assert by_pr[100].level is Importance.MEDIUM and by_pr[100].heading == "Bug fixes"
    assert by_pr[99].level is Importance.LOW and by_pr[99].source == "unlisted"
    # Newer than the newest listed PR: maybe in the next release, so not guessed.
    assert not any(n > 100 for n in by_pr)


def test_notes_that_list_every_pull_request_teach_nothing():
    history = _history(120, datetime(2026, 1, 1, tzinfo=UTC))
    generated = "".join(f"* Change {i} by @dev in https://github.com/o/r/pull/{i}\n" for i in range(1, 121))
    notes = parse_notes("## v1.0\n\n### What's Changed\n\n" + generated)
    examples, verdict = label_history(history, notes)
    assert verdict.kind == "lists_everything"
    assert not verdict.usable and examples == []


def test_corrections_outrank_the_notes():
    history = _history(120, datetime(2026, 1, 1, tzinfo=UTC))
    notes = parse_notes("## 1.0\n\n### Bug fixes\n\n" + "".join(f"- C (#{i})\n" for i in range(1, 101, 3)))
    corrected = {history[-1].sha: Importance.HIGH}  # PR 1, listed under Bug fixes
    examples, _ = label_history(history, notes, corrections=corrected)
    first = next(e for e in examples if e.sha == history[-1].sha)
    assert (first.level, first.source) == (Importance.HIGH, "correction")


# --- the LLM learns the same taste -------------------------------------------------------------------


async def test_the_llm_prompt_carries_the_projects_own_examples(make_services, released_repo):
    from tests.fakes.openai_server import FakeOpenAI

    with FakeOpenAI() as fake:
        services = await make_services(openai_base_url=fake.url, openai_api_key="sk-test-1", llm_model="m")
        source = LocalGitSource(str(released_repo.path))
        await services.builder.taste.learn_days(
            source, day_window(DAY, "UTC").start_utc, day_window(DAY, "UTC").start_utc
        )
        await services.builder.build(source, day_window(DAY, "UTC"), "en")
        prompts = {_user(r): r for r in fake.requests if "<project_taste>" in _user(r) or "Analyse commit" in _user(r)}
    fix = next(p for p in prompts if "title: Handle " in p)
    taste = fix.split("<project_taste>")[1].split("</project_taste>")[0]
    assert 'usually listed under "Bug fixes"' in taste
    # Earlier commits of the same area, as the maintainers listed them — and one they did not.
    examples = [line for line in taste.splitlines() if line.startswith("- ")]
    assert any('listed under "Bug fixes": Handle ' in line for line in examples)
    assert any(line.startswith("- low, ") for line in examples), taste
    # Only history from before the profile's day: never the day's own commits (no peeking).
    day_start = datetime(2026, 3, 18, tzinfo=UTC)
    recent = released_repo.git("log", f"--since={day_start.isoformat()}", "--format=%s").splitlines()
    assert recent and not any(title in line for title in recent for line in examples)


async def test_no_release_notes_no_taste_block(make_services, tmp_path):
    from tests.fakes.openai_server import FakeOpenAI
    from tests.gitrepo import GitRepo

    repo = GitRepo(tmp_path / "plain")
    when = datetime.combine(DAY, datetime.min.time(), UTC) + timedelta(hours=2)
    repo.commit("Handle markers in the resolver", {"src/resolver/markers.py": "x = 1\n"}, when=when)
    with FakeOpenAI() as fake:
        services = await make_services(openai_base_url=fake.url, openai_api_key="sk-test-1", llm_model="m")
        await services.builder.build(LocalGitSource(str(repo.path)), day_window(DAY, "UTC"), "en")
        sent = [_user(r) for r in fake.requests]
    assert any("Analyse commit" in s for s in sent)
    assert not any("<project_taste>" in s for s in sent)


def _user(request: dict) -> str:
    return "\n".join(m["content"] for m in request["messages"] if m["role"] == "user")


def test_the_report_card_shows_rules_learned_and_llm_side_by_side(released_repo, tmp_path, redis_url):
    import json
    import subprocess
    import sys

    log = released_repo.git("log", "--since=2026-03-18T00:00:00Z", "--until=2026-03-19T00:00:00Z", "--format=%H %s")
    labels = tmp_path / "labels.jsonl"
    with labels.open("w") as out:
        for line in log.splitlines():
            sha, title = line.split(" ", 1)
            level = "medium" if title.startswith(("Handle ", "Add `")) else "low"
            out.write(json.dumps({"repo": "acme/taste", "sha": sha, "level": level}) + "\n")
    env = {"PATH": "/usr/bin:/bin", "REDIS_URL": redis_url, "DEFAULT_LANG": "en"}
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "bot",
            "eval",
            "--labels",
            str(labels),
            "--repo",
            f"acme/taste={released_repo.path}",
            "--format",
            "json",
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    card = json.loads(proc.stdout)
    # The rules alone guess (the 300-line panel rewrites the notes never list are medium to them)
    assert card["rules"]["kappa"] < 0.7
    assert card["learned"]["kappa"] == 1.0  # as digests judge: their own notes, learned
    text = subprocess.run(
        [sys.executable, "-m", "bot", "eval", "--labels", str(labels), "--repo", f"acme/taste={released_repo.path}"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
    ).stdout
    assert "rules + learned profile, all commits" in text and "rules, all commits" in text


def test_the_operator_sees_what_the_profile_learned(released_repo, tmp_path, redis_url):
    import subprocess
    import sys

    env = {"PATH": "/usr/bin:/bin", "REDIS_URL": redis_url}

    def profile(*args):
        return subprocess.run(
            [sys.executable, "-m", "bot", "profile", *args], capture_output=True, text=True, env=env, cwd=tmp_path
        )

    shown = profile("--repo", str(released_repo.path), "--date", "2026-03-18", "--lang", "en")
    assert shown.returncode == 0, shown.stderr
    assert "learned profile as of 2026-03-17" in shown.stdout  # the Shanghai day starts at 16:00 UTC the day before
    assert "Announced under: “Bug fixes”" in shown.stdout
    quiet = shown.stdout.split("Words of changes the notes leave out:")[1]
    assert "tag:panels" in quiet or "dir:src/panels" in quiet
    # Before the first release, nothing was published to learn from: said in one sentence.
    early = profile("--repo", str(released_repo.path), "--date", "2026-02-03", "--lang", "zh")
    assert early.returncode == 0
    assert "重要程度只按规则判断" in early.stdout
    bad = profile("--repo", str(released_repo.path), "--date", "someday")
    assert bad.returncode == 2 and "Traceback" not in bad.stderr and len(bad.stderr.strip().splitlines()) == 1


# --- how the profile's word weighs against the rules (offline/learned.py) --------------------------


def _weigh(level, p, *, high=0.0, heading="Bug fixes", facts=(), cap=None):
    from types import SimpleNamespace

    from bot.analysis.offline.learned import weigh
    from bot.core.models import Judgement

    c = SimpleNamespace(judgement=Judgement(above_low=p, high=high, heading=heading, heading_share=0.9))
    got = weigh(c, list(facts), cap, level)
    return None if got is None else (got.level, got.text(False))


def _fact(level, size=False, firm=False):
    from bot.analysis.offline.context import Fact
    from bot.i18n import phrase

    return Fact(level, phrase("offline.scope.internal_only", files="1 file"), size=size, firm=firm)


LISTED_BUG_FIXES = "In this project's release notes, changes like this are listed under “Bug fixes”"


@pytest.mark.parametrize(
    "level, p, kwargs, expected",
    [
        # A low is raised from p = 0.5 on, naming the heading — or, without one, saying "announced".
        (Importance.LOW, 0.5, {}, (Importance.MEDIUM, LISTED_BUG_FIXES)),
        (Importance.LOW, 0.49, {}, None),
        (
            Importance.LOW,
            0.7,
            {"heading": ""},
            (Importance.MEDIUM, "In this project's release notes, changes like this are usually announced"),
        ),
        # Listed as breaking: high, from 0.5 on.
        (
            Importance.MEDIUM,
            0.9,
            {"high": 0.5, "heading": "Breaking changes"},
            (Importance.HIGH, "In this project's release notes, changes like this are listed under “Breaking changes”"),
        ),
        (Importance.MEDIUM, 0.9, {"high": 0.49, "facts": [_fact(Importance.MEDIUM)]}, None),
        # A medium guessed from size gives way below 0.5; one a specific fact asked for only below 0.2.
        (
            Importance.MEDIUM,
            0.49,
            {"facts": [_fact(Importance.MEDIUM, size=True)]},
            (Importance.LOW, "This project's release notes rarely list changes like this"),
        ),
        # … and from 0.5 on the notes confirm the guess in their own words (or, without a heading,
        # the rules' reason stands).
        (
            Importance.MEDIUM,
            0.5,
            {"facts": [_fact(Importance.MEDIUM, size=True)]},
            (Importance.MEDIUM, LISTED_BUG_FIXES),
        ),
        (Importance.MEDIUM, 0.5, {"heading": "", "facts": [_fact(Importance.MEDIUM, size=True)]}, None),
        (Importance.MEDIUM, 0.3, {"facts": [_fact(Importance.MEDIUM)]}, None),
        (Importance.MEDIUM, 0.3, {"facts": [_fact(Importance.MEDIUM, size=True), _fact(Importance.MEDIUM)]}, None),
        (
            Importance.MEDIUM,
            0.3,
            {"facts": [_fact(Importance.MEDIUM, size=True), _fact(Importance.HIGH)]},
            (Importance.LOW, "This project's release notes rarely list changes like this"),
        ),
        (
            Importance.MEDIUM,
            0.19,
            {"facts": [_fact(Importance.MEDIUM)]},
            (Importance.LOW, "This project's release notes rarely list changes like this"),
        ),
        # An announced medium keeps the rules' own reason.
        (Importance.MEDIUM, 0.9, {"facts": [_fact(Importance.MEDIUM)]}, None),
        # Every high stands; a firm ceiling stands; a ceiling that is not firm does not.
        (Importance.HIGH, 0.01, {}, None),
        (Importance.LOW, 0.99, {"cap": _fact(Importance.LOW, firm=True)}, None),
        (Importance.LOW, 0.99, {"cap": _fact(Importance.LOW)}, (Importance.MEDIUM, LISTED_BUG_FIXES)),
    ],
)
def test_the_profile_weighs_where_the_rules_only_guessed(level, p, kwargs, expected):
    assert _weigh(level, p, **kwargs) == expected


# --- labelling's edges (examples.py) -------------------------------------------------------------------


def _listed(numbers, heading="Bug fixes", version="## 1.0"):
    return parse_notes(f"{version}\n\n### {heading}\n\n" + "".join(f"- C (#{i})\n" for i in numbers))


def test_the_release_boundary_and_the_oldest_listing_bound_what_is_called_unlisted():
    history = _history(60, datetime(2026, 1, 1, tzinfo=UTC))  # PRs 60 (newest) … 1
    examples, verdict = label_history(history, _listed(range(10, 51, 2)))  # 10, 12, … 50 listed
    by_pr = {e.title: e for e in examples}
    assert "Change 50 (#50)" in by_pr and by_pr["Change 50 (#50)"].source == "notes"  # the boundary itself
    assert by_pr["Change 49 (#49)"].source == "unlisted"
    assert by_pr["Change 10 (#10)"].source == "notes"  # the oldest listing itself
    assert by_pr["Change 11 (#11)"].level is Importance.LOW
    assert not any(f"(#{n})" in t for t in by_pr for n in (51, 55, 60, 9, 5, 1))  # outside: not guessed
    assert (verdict.examples, verdict.above_low) == (41, 21)
    assert verdict.listed_share == pytest.approx(21 / 41)


@pytest.mark.parametrize(
    "listed, kind",
    [
        (range(1, 41, 2), "too_few"),  # 39 labelled commits (1 … 39): one short of 40
        (range(1, 41, 3), "ok"),  # 40 (1 … 40)
    ],
)
def test_too_few_labelled_commits_teach_nothing(listed, kind):
    history = _history(80, datetime(2026, 1, 1, tzinfo=UTC))
    assert label_history(history, _listed(listed))[1].kind == kind


@pytest.mark.parametrize(
    "listed, kind",
    [
        (range(10, 71, 10), "too_few"),  # 61 labelled, 7 announced: too few on that side
        (range(10, 81, 10), "ok"),  # 71 labelled, 8 announced
    ],
)
def test_either_side_needs_eight_examples(listed, kind):
    history = _history(100, datetime(2026, 1, 1, tzinfo=UTC))
    assert label_history(history, _listed(listed))[1].kind == kind


def test_listing_nine_in_ten_released_prs_is_listing_everything():
    history = _history(100, datetime(2026, 1, 1, tzinfo=UTC))
    ninety = [n for n in range(1, 101) if n % 10 != 5]  # 90 of 100 listed
    assert label_history(history, _listed(ninety))[1].kind == "lists_everything"
    fewer = [n for n in ninety if n not in (11, 21)]  # 88 of 100
    assert label_history(history, _listed(fewer))[1].kind == "ok"


def test_a_complete_listing_that_still_files_docs_under_documentation_carries_a_signal():
    history = _history(100, datetime(2026, 1, 1, tzinfo=UTC))
    notes = parse_notes(
        "## 1.0\n\n### Bug fixes\n\n"
        + "".join(f"- C (#{i})\n" for i in range(1, 101) if i % 5)
        + "\n### Documentation\n\n"
        + "".join(f"- D (#{i})\n" for i in range(5, 101, 5))
    )
    examples, verdict = label_history(history, notes)
    assert verdict.kind == "ok" and sum(e.level is Importance.LOW for e in examples) == 20


def test_generated_notes_list_everything_whatever_their_share():
    history = _history(100, datetime(2026, 1, 1, tzinfo=UTC))
    generated = "".join(f"* C by @dev in https://github.com/o/r/pull/{i}\n" for i in range(1, 80))
    notes = parse_notes("## v1.0\n\n## What's Changed\n\n" + generated)
    assert notes.looks_generated
    assert label_history(history, notes)[1].kind == "lists_everything"


def test_no_notes_no_fragments_no_profile():
    history = _history(100, datetime(2026, 1, 1, tzinfo=UTC))
    assert label_history(history, parse_notes("# Readme\n")) == ([], label_history(history, parse_notes(""))[1])
    assert label_history(history, parse_notes(""))[1].kind == "no_notes"


def test_fragments_label_each_commit_that_adds_one_and_the_rest_low():
    start = datetime(2026, 1, 1, tzinfo=UTC)
    history = [
        PastCommit(
            f"{i:040x}",
            start + timedelta(hours=i),
            f"Change {i}",
            None,
            (f"src/m{i}.py",),
            (f"changelog/{i}.bugfix.rst",) if i % 3 == 0 else (),
        )
        for i in range(120, 0, -1)
    ]
    examples, verdict = label_history(history, parse_notes(""))
    assert verdict.kind == "ok" and len(examples) == 120  # no release boundary needed
    assert {e.title: (e.level, e.heading) for e in examples}["Change 3"] == (Importance.MEDIUM, "bugfix")
    assert {e.title: e.level for e in examples}["Change 4"] is Importance.LOW


def test_a_tenth_of_the_announced_listed_low_is_enough_to_carry_a_signal():
    history = _history(100, datetime(2026, 1, 1, tzinfo=UTC))
    fixes = [n for n in range(1, 101) if n % 10 not in (0, 5)][:90]  # 80 of them
    fixes += [5, 15, 25, 35, 45, 55, 65, 75, 85, 95][:10]  # 90 announced
    docs = [10, 20, 30, 40, 50, 60, 70, 80, 90]  # 9 = a tenth of 90, listed under Documentation
    notes = parse_notes(
        "## 1.0\n\n### Bug fixes\n\n"
        + "".join(f"- C (#{i})\n" for i in fixes)
        + "\n### Documentation\n\n"
        + "".join(f"- D (#{i})\n" for i in docs)
    )
    assert label_history(history, notes)[1].kind == "ok"
    notes = parse_notes(
        "## 1.0\n\n### Bug fixes\n\n"
        + "".join(f"- C (#{i})\n" for i in fixes)
        + "\n### Documentation\n\n"
        + "".join(f"- D (#{i})\n" for i in docs[:8])
    )
    assert label_history(history, notes)[1].kind == "lists_everything"


def test_the_oldest_listed_commit_bounds_the_unlisted_ones_inclusively():
    history = _history(60, datetime(2026, 1, 1, tzinfo=UTC))
    examples, _ = label_history(history, _listed([1] + list(range(3, 60, 2))))
    levels = {e.title: e.level for e in examples}
    assert levels["Change 1 (#1)"] is Importance.MEDIUM and levels["Change 2 (#2)"] is Importance.LOW


def test_pr_labels_and_several_fragments():
    from bot.taste.notes import Category

    history = _history(60, datetime(2026, 1, 1, tzinfo=UTC))
    history[-5] = PastCommit(
        history[-5].sha,
        history[-5].committed_at,
        "Change 5 (#5)",
        5,
        ("src/x.py",),
        ("changelog.d/5.doc.md", "changelog.d/5.bugfix.md"),
    )
    examples, _ = label_history(history, _listed(range(10, 51, 2)), labels={11: Category.FEATURE})
    got = {e.title: (e.level, e.heading, e.source) for e in examples}
    assert got["Change 11 (#11)"] == (Importance.MEDIUM, "", "label")  # a label is no heading
    assert got["Change 5 (#5)"] == (Importance.MEDIUM, "bugfix", "fragment")  # the most serious fragment


def test_a_history_almost_all_announced_has_too_few_lows_to_learn_from():
    start = datetime(2026, 1, 1, tzinfo=UTC)
    history = [
        PastCommit(
            f"{i:040x}",
            start + timedelta(hours=i),
            f"Change {i}",
            None,
            (f"src/m{i}.py",),
            () if i <= 7 else (f"changelog/{i}.feature.rst",),
        )
        for i in range(120, 0, -1)
    ]
    assert label_history(history, parse_notes(""))[1].kind == "too_few"  # 113 announced, 7 not
