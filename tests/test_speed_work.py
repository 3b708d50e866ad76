"""The speed budget's work, counted rather than timed (issue 26 item 5): how many git processes a
day's digest starts, how many times the rules run for one prompt, how much of a diff the meaning
check reads. Each count was proportional to the commits (or the renders) before the fix."""

from __future__ import annotations

import subprocess
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pytest

from bot.analysis import analyze, answer_schema, hints
from bot.analysis.offline import analyse_offline
from bot.core.models import Commit, FileChange
from bot.core.window import day_window
from bot.sources.localgit import LocalGitSource
from tests.gitrepo import GitRepo, bulk_commits

ROOT = Path(__file__).resolve().parent.parent
DAY = date(2026, 1, 20)
N = 12


def git_calls(monkeypatch) -> list[list[str]]:
    """Every `git` command the process starts from now on (subprocess.run, any thread)."""
    calls: list[list[str]] = []
    real = subprocess.run

    def counted(args, *a, **k):
        if args and args[0] == "git":
            calls.append(list(args))
        return real(args, *a, **k)

    monkeypatch.setattr(subprocess, "run", counted)
    return calls


@pytest.fixture
def day_repo(tmp_path) -> GitRepo:
    repo = GitRepo(tmp_path / "day")
    bulk_commits(repo, N, datetime(2026, 1, 20, 1, 0, tzinfo=UTC), step_seconds=1800, files=5)
    return repo


async def test_a_days_diffs_are_read_by_one_git_call_not_one_per_commit(make_services, day_repo, monkeypatch):
    services = await make_services(default_lang="en")
    source = services.source(str(day_repo.path))
    calls = git_calls(monkeypatch)
    digest = await services.builder.build(source, day_window(DAY, "UTC"), "en")
    assert len(digest.entries) == N
    diffs = [c for c in calls if "diff-tree" in c or "--parents" in c]
    assert len(diffs) == 1, diffs  # was 3 a commit: rev-list --parents, diff-tree --raw, diff-tree -p
    assert all(e.analysis.coverage is not None for e in digest.entries)
    # the other language's digest reads the files from the cache: no git call for them at all
    calls.clear()
    await services.builder.build(source, day_window(DAY, "UTC"), "zh")
    assert not [c for c in calls if "diff-tree" in c or "--parents" in c]


async def test_the_batch_reads_what_one_commit_alone_reads(day_repo, tmp_path):
    """Renames, binary files, paths with spaces and non-ASCII, a merge (its first parent), the
    root commit: the batch's files are the one-by-one reading's, field for field."""
    repo = GitRepo(tmp_path / "odd")
    t0 = datetime(2026, 1, 20, 1, 0, tzinfo=UTC)
    repo.commit("root", {"a b.txt": "one\ntwo\n", "é ü.py": "x = 1\n", "bin.dat": b"\x00\x01\x02"}, when=t0)
    repo.commit("edit", {"é ü.py": "x = 2\ny = 3\n", "bin.dat": b"\x00\x09"}, when=t0 + timedelta(minutes=5))
    repo.git("mv", "a b.txt", "c d.txt")
    repo.commit("rename", {}, when=t0 + timedelta(minutes=10))
    source = LocalGitSource(str(repo.path))
    commits = [await source.get_commit(sha) for sha in repo.git("rev-list", "HEAD").split()]
    alone = {c.sha: await source._get_files_alone(c.sha) for c in commits}
    source.expect_files(commits)
    batch = {c.sha: await source.get_files(c.sha) for c in commits}
    assert batch == alone
    # and the mirror of a real history with merges, when the machine has one
    for mirror in (ROOT,):
        real = LocalGitSource(str(mirror))
        shas = subprocess.run(
            ["git", "-C", str(mirror), "rev-list", "-n", "40", "HEAD"], capture_output=True, text=True
        ).stdout.split()
        listed = [await real.get_commit(sha) for sha in shas]
        one_by_one = {c.sha: await real._get_files_alone(c.sha) for c in listed}
        real.expect_files(listed)
        assert {c.sha: await real.get_files(c.sha) for c in listed} == one_by_one


async def test_a_batch_reads_only_the_latest_expectation_and_keeps_one_batch_at_most(day_repo):
    """A day whose files were cached (expected, never asked for) is not read by the next day's
    batch, and what a batch read that nobody took is gone once the next batch runs: a running bot
    does not accumulate patches."""
    source = LocalGitSource(str(day_repo.path))
    commits = [await source.get_commit(sha) for sha in day_repo.git("rev-list", "HEAD").split()]
    first, second = commits[: N // 2], commits[N // 2 :]
    read: list[int] = []
    real = source._run_input

    def counted(stdin: str) -> str:
        read.append(len(stdin.splitlines()))
        return real(stdin)

    source._run_input = counted  # type: ignore[method-assign]
    source.expect_files(first)  # all cached: never asked for
    source.expect_files(second)
    await source.get_files(second[0].sha)
    assert read == [len(second)]
    assert len(source._read) == len(second) - 1
    source.expect_files(first)
    await source.get_files(first[0].sha)
    assert read == [len(second), len(first)]
    assert set(source._read) == {c.sha for c in first[1:]}  # the second half's leftovers are gone


def _commit(title: str, body: str = "") -> Commit:
    return Commit(
        repo="o/r",
        sha="d" * 40,
        title=title,
        body=body,
        author="a",
        committed_at=datetime(2026, 1, 20, 9, 0, tzinfo=UTC),
    )


FILES = (
    FileChange(
        path="src/app/resolver.py",
        status="modified",
        additions=3,
        deletions=1,
        patch="@@ -1,2 +1,4 @@\n-def resolve(x):\n+def resolve(x, strict=False):\n+    if strict:\n+        raise ValueError(x)\n",
    ),
    FileChange(path="CHANGELOG.md", status="modified", additions=1, deletions=0, patch="@@ -1 +1,2 @@\n+- 1.2.0\n"),
)


def test_the_prompt_runs_the_rules_once_however_many_renders(monkeypatch):
    """Fitting the diff renders the prompt two to eight times; the rules' hint, the title parse,
    the redacted texts are the same each time and are worked out once a commit."""
    from bot.analysis import offline

    runs = {"hint": 0, "title": 0}
    real_hint, real_title = hints.offline_hint, offline.parse_title

    def hint(*a, **k):
        runs["hint"] += 1
        return real_hint(*a, **k)

    def title(*a, **k):
        runs["title"] += 1
        return real_title(*a, **k)

    monkeypatch.setattr(hints, "offline_hint", hint)
    monkeypatch.setattr(hints, "parse_title", title)
    commit = _commit("release: 1.2.0 with strict resolve", "Adds a strict mode to resolve().")
    memo: dict = {}
    for shrink in analyze.SHRINK_STEPS:
        for selection in (None, None):
            analyze.prompt_variables(
                commit, FILES, pr_body=None, reverted=None, selection=selection, shrink=shrink, memo=memo
            )
    assert runs == {"hint": 1, "title": 1}  # were 8 and 16: twice a render (the hint's, the changelog's)


@pytest.mark.parametrize(
    "title, body, files",
    [
        ("release: 1.2.0 with strict resolve", "Adds a strict mode.", FILES),
        ("feat!: remove the legacy API", "BREAKING CHANGE: gone", FILES[:1]),
        (
            "docs: typo",
            "",
            (FileChange(path="README.md", status="modified", additions=1, deletions=1, patch="@@\n-a\n+b\n"),),
        ),
        ("fix(security): escape the path", "CVE-2026-0001", FILES[:1]),
    ],
)
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_hint_says_what_the_full_rules_say(title, body, files, lang):
    """The hint works out only the level, type and reason: the same as the whole analysis's."""
    commit = _commit(title, body)
    full = analyse_offline(commit, files, lang)
    assert hints.offline_hint(commit, files, None, None, lang) == (
        f"{full.importance.value} ({full.change_type.value}): {full.importance_reason}"
    )


def test_the_summary_check_stops_reading_the_diff_once_the_commit_is_named(monkeypatch):
    """A summary naming the commit by its title or a path is accepted without splitting every
    changed line of the diff into words (it was: every line, every answer)."""
    split: list[str] = []
    real = answer_schema._words

    def words(text):
        split.append(text)
        return real(text)

    monkeypatch.setattr(answer_schema, "_words", words)
    big = FileChange(
        path="src/app/resolver.py",
        status="modified",
        additions=500,
        deletions=0,
        patch="@@ -0,0 +1,500 @@\n" + "".join(f"+value_{i} = compute({i})\n" for i in range(500)),
    )
    commit = _commit("Make resolve strict")
    assert answer_schema.names_the_commit("The resolver is now strict about input.", commit, (big,))
    assert len(split) < 10  # the summary, the title, a path or two — not 500 lines
    split.clear()
    assert not answer_schema.names_the_commit("Nothing related at all here.", commit, (big,))
    assert len(split) > 500  # no shortcut when the summary names nothing: every line is read


# --- issue 33 §6: the prompt's texts scanned once, whatever the diff's size ---------------------


def test_the_estimate_counts_in_twentieths_so_sums_are_exact():
    """Ten hashes of 13 digits and 3 letters cost 10 × 15.4 tokens and the space run left where
    they were 1: 155. Summed in floating point the ten 15.4s came to 154.00000000000003, rounded
    up to 156."""
    from bot.diffs.tokens import estimate_tokens

    assert estimate_tokens(" ".join(["1234567890123abc"] * 10)) == 155


def test_a_line_is_scanned_once_however_many_texts_hold_it(monkeypatch):
    """A diff's lines are estimated in the file's patch, again in the selection joining the
    patches and again in the prompt around it: each line is scanned the first time only, and the
    estimate of a text is the same as when it was scanned whole."""
    from bot.diffs import tokens

    tokens._LINE_UNITS.clear()
    scanned: list[str] = []
    real = tokens._line_units

    def counted(line: str) -> int:
        scanned.append(line)
        return real(line)

    monkeypatch.setattr(tokens, "_line_units", counted)
    patch = "\n".join(f"+    value_{i} = compute_{i}(x, 'é')  # 步骤 {i}" for i in range(200))
    alone = tokens._estimate(patch)
    assert len(scanned) == 200
    prompt = "<diff>\n### src/app.py (modified, +200 −0)\n" + patch + "\n\n\n</diff>\n"
    in_prompt = tokens._estimate(prompt)
    assert len(scanned) == 203  # the three lines around it, not the diff again
    tokens._LINE_UNITS.clear()
    monkeypatch.setattr(tokens, "_line_units", real)
    assert (tokens._estimate(patch), tokens._estimate(prompt)) == (alone, in_prompt)


def test_fitting_one_prompt_prepares_its_files_once(monkeypatch):
    """Fitting a prompt selects the diff again at every shrinking step: the files are classified,
    redacted and parsed once for all of them (select_diff's `cache`), not once per selection."""
    from bot.diffs import packing

    packing._redacted_patch.cache_clear()
    calls: list[str] = []
    real = packing._prepare_one

    def counted(index, f, *args):
        calls.append(f.path)
        return real(index, f, *args)

    monkeypatch.setattr(packing, "_prepare_one", counted)
    files = [
        FileChange(f"src/m{i}.py", "modified", 40, 2, "@@ -1,2 +1,40 @@\n" + "+x = 1\n" * 40 + "-y\n-z")
        for i in range(5)
    ]
    memo: dict = {}
    first = packing.select_diff(files, 400, cache=memo)
    second = packing.select_diff(files, 200, cache=memo)
    assert len(calls) == 5
    assert (first.text, second.text) == (packing.select_diff(files, 400).text, packing.select_diff(files, 200).text)


async def test_the_prompt_and_the_rules_are_built_off_the_event_loop(make_services, day_repo, monkeypatch):
    """CPU-bound work never holds the loop that acknowledges requests (issue 33 §6): the rules'
    hint (inside the prompt, with the LLM) and the rules themselves (without it) run in worker
    threads, the event loop's thread only awaits them."""
    import threading

    from tests.fakes.openai_server import FakeOpenAI, good_answer

    loop_thread = threading.get_ident()
    threads: dict[str, set[int]] = {"hint": set(), "rules": set()}
    real_hint, real_rules = hints.offline_hint, analyze.analyse_offline_langs

    def hint(*args, **kwargs):
        threads["hint"].add(threading.get_ident())
        return real_hint(*args, **kwargs)

    def rules(*args, **kwargs):
        threads["rules"].add(threading.get_ident())
        return real_rules(*args, **kwargs)

    monkeypatch.setattr(hints, "offline_hint", hint)
    monkeypatch.setattr(analyze, "analyse_offline_langs", rules)
    window = day_window(DAY, "UTC")
    with FakeOpenAI(good_answer) as fake:
        with_llm = await make_services(openai_base_url=fake.url, openai_api_key="sk-x", redis_prefix="t-llm:")
        digest = await with_llm.builder.build(LocalGitSource(str(day_repo.path)), window, "en")
    offline = await make_services(redis_prefix="t-off:")
    rules_only = await offline.builder.build(LocalGitSource(str(day_repo.path)), window, "en")
    assert len(digest.entries) == len(rules_only.entries) == N
    assert threads["hint"] and loop_thread not in threads["hint"]
    assert threads["rules"] and loop_thread not in threads["rules"]
