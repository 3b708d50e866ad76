"""The speed budget's work, counted rather than timed (issue 26 item 5): how many git processes a
day's digest starts, how many times the rules run for one prompt, how much of a diff the meaning
check reads. Each count was proportional to the commits (or the renders) before the fix."""

from __future__ import annotations

import asyncio
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
    """Every `git` command the process starts from now on (subprocess.run or Popen, any thread)."""
    calls: list[list[str]] = []

    class Counted(subprocess.Popen):  # (subprocess.run starts its process through Popen too)
        def __init__(self, args, *a, **k):
            if args and args[0] == "git":
                calls.append(list(args))
            super().__init__(args, *a, **k)

    monkeypatch.setattr(subprocess, "Popen", Counted)
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
    for mirror in [ROOT] if (ROOT / ".git").exists() else []:  # (a scratch copy has no history)
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
    real = source._open_batch

    def counted(stdin: str):
        read.append(len(stdin.splitlines()))
        return real(stdin)

    source._open_batch = counted  # type: ignore[method-assign]
    source.expect_files(first)  # all cached: never asked for
    source.expect_files(second)
    await source.get_files(second[0].sha)
    await asyncio.gather(*source._batches)  # (the rest of the batch is given as git writes it)
    assert read == [len(second)]
    assert len(source._read) == len(second) - 1
    source.expect_files(first)
    await source.get_files(first[0].sha)
    await asyncio.gather(*source._batches)
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

    real = tokens._line_units
    scanned = _lines_scanned(monkeypatch)
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


# --- issue 33 §6, round 3: the same figures for less CPU -----------------------------------------


def _texts_to_estimate() -> list[str]:
    """Texts shaped like what prompts hold: this repository's source and prompts, a diff of it,
    blank-line runs of every length (9+ newlines cost more than one token), Chinese, hashes."""
    texts = [p.read_text() for p in sorted((ROOT / "bot" / "diffs").glob("*.py"))]
    texts += [p.read_text() for p in sorted((ROOT / "prompts").glob("analyze_commit.*.j2"))]
    source = texts[0].splitlines()
    texts.append(
        "@@ -1,40 +1,41 @@\n" + "\n".join(("+" if i % 3 else "-") + line for i, line in enumerate(source[:400]))
    )
    texts += ["a\n" + "\n" * k + "b" + "\n" * (k % 5) for k in range(20)]
    texts += ["\n" * k for k in range(1, 20)]
    texts.append(
        "变更摘要：新增 `--format changelog` 选项\n\n\n" + "sha 1234567890abcdef1234567890abcdef12345678\n" * 30
    )
    return texts


def test_a_texts_estimate_summed_from_known_lines_is_the_line_by_line_sum():
    """The estimate looks its lines' shares up all at once and counts the newline runs from the
    empty pieces between lines: the same tokens as adding them up line after line, for every
    text and every limit (estimate_within), whether the lines were seen before or not."""
    from bot.diffs import tokens

    for text in _texts_to_estimate():
        for seen in (False, True):
            if not seen:
                tokens._LINE_UNITS.clear()
            by_line = tokens._units_in_order(text.split("\n"), None)
            assert by_line is not None
            assert tokens._units(text, None) == by_line
            assert tokens.estimate_tokens(text) == max(1, -(-by_line // tokens._UNIT)) if text else 0
            for limit in (0, 1, 7, 50, 400, 5000):
                within = tokens.estimate_within(text, limit)
                whole = max(1, -(-by_line // tokens._UNIT))
                assert within == (whole if whole <= limit else None), (limit, whole)


def test_a_large_text_over_the_room_is_estimated_about_as_far_as_the_room():
    """A file the prompt has no room for is scanned about as far as the room (in growing slices),
    not whole — the first time and when its lines are known."""
    from bot.diffs import tokens

    tokens._LINE_UNITS.clear()
    big = "\n".join(f"+    value_{i} = compute_{i}(x)  # step {i}" for i in range(20_000))
    assert tokens.estimate_within(big, 100) is None
    assert len(tokens._LINE_UNITS) < 300  # ~10 tokens a line: 100 tokens are ~10 lines, and a slice or two
    assert tokens.estimate_within(big, 10**6) == tokens.estimate_tokens(big)


def test_the_copy_check_normalises_the_prompts_template_once_not_once_an_answer():
    """The copy check compares an answer with the prompt normalised (lower case, words only): the
    prompt's lines are normalised once and remembered, so the template's thousands of characters
    are not normalised again for every commit — and the text is the same as normalised whole."""
    answer_schema._norm_line.cache_clear()
    template = (ROOT / "prompts" / "analyze_commit.en.j2").read_text()
    first = template + "\n<offline_hint>low (chore): first commit ΑΣ Σ\n</offline_hint>"
    second = template + "\n<offline_hint>medium (fix): another commit İstanbul\n</offline_hint>"
    assert answer_schema._norm(first) == answer_schema._normalised(first)
    misses = answer_schema._norm_line.cache_info().misses
    assert answer_schema._norm(second) == answer_schema._normalised(second)
    assert answer_schema._norm_line.cache_info().misses - misses <= 2  # the hint's lines only


async def test_the_days_batch_does_not_diff_every_file_twice_for_its_line_counts(day_repo, tmp_path, monkeypatch):
    """git computes a diff once for the patch and once more for `--numstat`: the batch asks for the
    patches only and counts their lines. A file without a hunk that git may call binary — a
    binary file renamed or made executable untouched — is asked about (that commit's numstat):
    the files are the one-by-one reading's, field for field."""
    repo = GitRepo(tmp_path / "bin")
    t0 = datetime(2026, 1, 20, 1, 0, tzinfo=UTC)
    repo.commit("root", {"img.bin": bytes(range(256)) * 8, "notes.txt": "a\nb\n", "empty.txt": ""}, when=t0)
    repo.git("mv", "img.bin", "pic.bin")
    repo.commit("rename a binary file", {}, when=t0 + timedelta(minutes=5))
    (repo.path / "pic.bin").chmod(0o755)
    repo.git("add", "pic.bin")
    repo.commit("make it executable", {"notes.txt": "a\nc\nd\n"}, when=t0 + timedelta(minutes=10))
    for r in (repo, day_repo):
        source = LocalGitSource(str(r.path))
        commits = [await source.get_commit(sha) for sha in r.git("rev-list", "HEAD").split()]
        alone = {c.sha: await source._get_files_alone(c.sha) for c in commits}
        calls = git_calls(monkeypatch)
        source.expect_files(commits)
        assert {c.sha: await source.get_files(c.sha) for c in commits} == alone
        batch = [c for c in calls if "--stdin" in c and "diff-tree" in c]
        assert len(batch) == 1 and "--numstat" not in batch[0]
        asked = [c for c in calls if "diff-tree" in c and "--stdin" not in c]
        assert len(asked) == (2 if r is repo else 0), asked  # the two commits with a hunkless binary file
        monkeypatch.undo()


def test_a_files_dict_is_the_generic_walks():
    """A file is stored as a dict made field by field: every field, in order, as the generic walk
    over the dataclass's fields gives it (a field added to FileChange must be added there too)."""
    from dataclasses import fields

    from bot.core.models import to_dict

    for f in (*FILES, FileChange("a b/é.py", "renamed", 0, 0, None, "old.py", True)):
        assert list(to_dict(f).items()) == [(x.name, getattr(f, x.name)) for x in fields(f)]


def _walk(obj):
    """to_dict as the generic walk over dataclass fields wrote it before (the reference)."""
    import enum
    from dataclasses import fields

    if isinstance(obj, enum.Enum):
        return obj.value
    if isinstance(obj, datetime):
        return obj.isoformat()
    if hasattr(obj, "__dataclass_fields__"):
        return {f.name: _walk(getattr(obj, f.name)) for f in fields(obj)}
    if isinstance(obj, (list, tuple)):
        return [_walk(x) for x in obj]
    if isinstance(obj, dict):
        return {k: _walk(v) for k, v in obj.items()}
    return obj


async def test_a_kept_digests_dict_is_the_generic_walks(make_services, day_repo):
    """A digest is kept as the dict of its dataclasses, made with each class's field names
    remembered and plain values passed through: key for key, in order, the generic walk's."""
    import json

    from bot.core.models import to_dict

    services = await make_services(default_lang="en")
    digest = await services.builder.build(services.source(str(day_repo.path)), day_window(DAY, "UTC"), "en")
    assert digest.entries
    assert json.dumps(to_dict(digest)) == json.dumps(_walk(digest))
    for entry in digest.entries:
        files = await services.builder.files(services.source(str(day_repo.path)), entry.commit.sha)
        assert json.dumps([to_dict(f) for f in files]) == json.dumps(_walk(list(files)))


# --- issue 33 §6, round 5: a commit's work bounded by what its prompt can show ---------------------


def test_the_counted_lower_bound_is_never_above_the_estimate():
    """`tokens_at_least` (a few counts, no scan) never says more than the estimate does, so a file
    it rules out is one the estimate would have ruled out: the selection is the same."""
    import random

    from bot.diffs import tokens

    texts = _texts_to_estimate()
    texts += ["", " ", "\t", "\t" * 17, "a", "abcdef", "ABCDEFGH", "x" * 6000, " " * 300, "\r\n" * 9, "\x01\x7f"]
    texts += ["é" * 40, "中" * 40, "😀" * 9, "+" * 33, "1234567890" * 7, "aB3dE5gH7jK9mN1pQ3sT5vW7yZ" * 4]
    rng = random.Random(33)
    alphabet = "aZ09 \t\n\n+-_/=()[]é中😀\r\x00"
    texts += ["".join(rng.choice(alphabet) for _ in range(rng.randint(1, 400))) for _ in range(400)]
    for text in texts:
        estimate = tokens.estimate_tokens(text)
        assert tokens.tokens_at_least(text) <= estimate, (text[:40], estimate)
        for allowance in {0, 1, estimate - 1, estimate, estimate + 1}:
            if allowance >= 0 and tokens.surely_over(text, allowance):
                assert estimate > allowance, (text[:40], allowance)
    # and it is not a weak bound on code: at least a third of the estimate of a diff of this repository
    diff = "\n".join("+" + line for line in (ROOT / "bot" / "diffs" / "packing.py").read_text().splitlines())
    assert tokens.tokens_at_least(diff) * 3 >= tokens.estimate_tokens(diff)


def test_a_large_commit_is_read_about_as_far_as_its_prompt_shows(monkeypatch):
    """A 60-file commit of 400 lines a file against a budget that shows a few of them: the lines
    the estimate scans are about those shown (and the room's edge), not every file up to the room
    left; the selection is the same as when everything is scanned."""
    from bot.diffs import packing, tokens

    def commit(salt: str) -> list[FileChange]:
        return [
            FileChange(
                f"src/mod{i}.py",
                "modified",
                400,
                0,
                "@@ -1,0 +1,400 @@\n"
                + "\n".join(
                    f"+    result_{salt}{i}_{j} = compute_{j}(value_{i}, options)  # {salt}" for j in range(400)
                ),
            )
            for i in range(60)
        ]

    scanned = _lines_scanned(monkeypatch)
    selection = packing.select_diff(commit("a"), 6000)
    shown = selection.text.count("\n") + 1
    assert 0 < shown < 1000
    assert len(scanned) <= 2 * shown, (len(scanned), shown)  # was ~20 lines of every file left out (~3,000)
    # the same selection as with the bound switched off
    monkeypatch.setattr(tokens, "tokens_at_least", lambda text, chars=None: 0)
    monkeypatch.setattr(packing, "tokens_at_least", lambda text, chars=None: 0)
    monkeypatch.setattr(packing, "surely_over", lambda text, allowance: False)
    assert packing.select_diff(commit("a"), 6000) == selection


async def test_the_first_commits_files_come_before_git_has_written_the_whole_days(tmp_path):
    """One git process reads a day's diffs, and each commit's files are given as soon as git has
    written them: with git's output held back after the first commit's part, the first commit's
    files come (the day's first analyses start), the rest once git writes on — each the same as
    read one by one, and no commit read twice."""
    import threading

    repo = GitRepo(tmp_path / "many")
    bulk_commits(repo, 60, datetime(2026, 1, 20, 1, 0, tzinfo=UTC), step_seconds=60, files=7)
    source = LocalGitSource(str(repo.path))
    commits = [await source.get_commit(sha) for sha in repo.git("rev-list", "HEAD").split()]
    alone = {c.sha: await source._get_files_alone(c.sha) for c in commits}
    gate = threading.Event()
    read: list[int] = []
    real = source._open_batch

    def held_back(stdin: str):
        read.append(len(stdin.splitlines()))
        output = _output(real(stdin))
        second = stdin.splitlines()[1].split()[0].encode() + b"\0"
        cut = output.index(second) + len(second)

        def write(out) -> None:  # up to the second commit's start, then — once the gate opens — the rest
            out.write(output[:cut])
            out.flush()
            gate.wait(30)
            out.write(output[cut:])

        return _ScriptedGit(write, 0)

    source._open_batch = held_back  # type: ignore[method-assign]
    source.expect_files(commits)
    first = await asyncio.wait_for(source.get_files(commits[0].sha), 30)
    assert first == alone[commits[0].sha]
    assert not gate.is_set()  # was: the whole day's output read before any commit's files
    gate.set()
    assert {c.sha: await source.get_files(c.sha) for c in commits[1:]} == {c.sha: alone[c.sha] for c in commits[1:]}
    assert read == [60]  # one git process for the day, each commit read once


async def test_a_batch_cut_short_leaves_the_rest_to_be_read_one_by_one(tmp_path):
    """git dies halfway through the day's diffs: the commits it wrote whole are given, the one it
    was writing and the rest are read one by one — every commit's files are still the right ones."""

    repo = GitRepo(tmp_path / "cut")
    bulk_commits(repo, 12, datetime(2026, 1, 20, 1, 0, tzinfo=UTC), step_seconds=60, files=3)
    source = LocalGitSource(str(repo.path))
    commits = [await source.get_commit(sha) for sha in repo.git("rev-list", "HEAD").split()]
    alone = {c.sha: await source._get_files_alone(c.sha) for c in commits}
    real = source._open_batch

    given: list[str] = []

    real_part = source._part_files

    def part_files(sha, part, parents):
        given.append(sha)
        return real_part(sha, part, parents)

    def died(stdin: str):  # the first half of git's output, then an exit status of failure
        output = _output(real(stdin))
        return _ScriptedGit(lambda out: out.write(output[: len(output) // 2]), 128)

    source._open_batch = died  # type: ignore[method-assign]
    source._part_files = part_files  # type: ignore[method-assign]
    source.expect_files(commits)
    assert {c.sha: await source.get_files(c.sha) for c in commits} == alone
    assert 0 < len(given) < len(commits)  # some given by the batch, the rest read alone


class _ScriptedGit:
    """A batch's git process whose output is what `write` writes (from a thread, as git does)."""

    def __init__(self, write, returncode: int):
        import os
        import threading

        readable, writable = os.pipe()
        self.stdout = os.fdopen(readable, "rb")
        self.returncode = returncode

        def run() -> None:
            with os.fdopen(writable, "wb") as out:
                write(out)

        self.writer = threading.Thread(target=run, daemon=True)
        self.writer.start()

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.stdout.close()
        self.writer.join(30)


def _output(proc) -> bytes:
    """All a batch's git process writes (its input is written by a thread of the batch's own)."""
    with proc:
        return proc.stdout.read()


async def test_a_commit_asked_for_by_two_overlapping_days_reaches_both_readers(day_repo):
    """Two digests of overlapping windows at once: the second expectation's batch starts while the
    first's still reads. Each reader gets its commit's files, and neither waits for ever (the
    second batch used to put a new promise in place of the first's, so the first reader's was
    never kept: a digest hung in the suite under load)."""
    source = LocalGitSource(str(day_repo.path))
    commits = [await source.get_commit(sha) for sha in day_repo.git("rev-list", "HEAD").split()]
    alone = {c.sha: await source._get_files_alone(c.sha) for c in commits[:3]}

    async def read(sha: str, expect: list[Commit]):
        source.expect_files(expect)
        return await source.get_files(sha)

    got = await asyncio.wait_for(
        asyncio.gather(read(commits[0].sha, commits), read(commits[1].sha, commits[1:]), read(commits[2].sha, commits)),
        30,
    )
    assert got == [alone[c.sha] for c in commits[:3]]
    await asyncio.gather(*source._batches)
    assert not source._arriving


def _lines_scanned(monkeypatch) -> list[str]:
    """The lines the token estimate scans from now on (its memory of lines emptied first)."""
    from bot.diffs import tokens

    tokens._LINE_UNITS.clear()
    scanned: list[str] = []
    real = tokens._line_units

    def counted(line: str) -> int:
        scanned.append(line)
        return real(line)

    monkeypatch.setattr(tokens, "_line_units", counted)
    return scanned
