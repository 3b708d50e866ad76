"""Readers' level corrections (issue 24, item 3): the store over a real Redis, and
`python -m bot feedback import|export` as an operator runs it — a real process, a real git repository."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from bot.core.store import open_store
from bot.evaluation.card import load_labels
from bot.taste.corrections import TOO_HIGH, TOO_LOW, Correction, Corrections, nudge
from tests.gitrepo import GitRepo

ROOT = Path(__file__).resolve().parent.parent
SH = ZoneInfo("Asia/Shanghai")
REPO = "acme/widgets"
T0 = datetime(2026, 2, 1, 9, 0, tzinfo=UTC)
SHA_A = "a" * 40
SHA_B = "b" * 40


# --- the store ---------------------------------------------------------------------------------------


@pytest.fixture
def corrections(store):
    return Corrections(store)


async def test_the_latest_correction_of_a_person_wins_and_is_the_only_one_kept(corrections):
    await corrections.record(REPO, SHA_A, "high", "alice", "breaks the API", at=T0)
    kept = await corrections.record(REPO, SHA_A, "low", "alice", "only docs after all", at=T0 + timedelta(minutes=5))
    assert kept == Correction(REPO, SHA_A, "low", "alice", "only docs after all", T0 + timedelta(minutes=5))
    assert await corrections.for_commit(REPO, SHA_A) == kept
    # An older correction of hers arriving late (an old file imported again) does not undo the newer one.
    late = await corrections.record(REPO, SHA_A, "medium", "alice", "stale", at=T0 - timedelta(days=1))
    assert late == kept
    assert [c async for c in corrections.export()] == [kept]  # one correction per person per commit


async def test_the_effective_correction_is_the_latest_across_people(corrections):
    alice = await corrections.record(REPO, SHA_A, "high", "alice", at=T0)
    bob = await corrections.record(REPO, SHA_A, "low", "bob", at=T0 + timedelta(hours=1))
    carol = await corrections.record(REPO, SHA_B, "medium", "carol", at=T0)
    assert await corrections.for_commit(REPO, SHA_A) == bob
    assert await corrections.effective(REPO) == {SHA_A: bob, SHA_B: carol}
    again = await corrections.record(REPO, SHA_A, "medium", "alice", at=T0 + timedelta(hours=2))
    assert again != alice and await corrections.for_commit(REPO, SHA_A) == again
    assert await corrections.for_commit(REPO, "c" * 40) is None
    assert await corrections.for_commit("acme/other", SHA_A) is None  # per repository


async def test_a_correction_without_a_time_is_now_in_utc_to_the_second(corrections):
    before = datetime.now(UTC).replace(microsecond=0)
    made = await corrections.record(REPO, SHA_A.upper(), "high", "alice")
    assert made.sha == SHA_A and made.at.tzinfo is not None and made.at.microsecond == 0
    assert before <= made.at <= datetime.now(UTC)
    local = await corrections.record(REPO, SHA_B, "low", "bob", at=datetime(2026, 2, 1, 17, 0, 0, 999, tzinfo=SH))
    assert local.at == T0 and local.as_dict()["at"] == "2026-02-01T09:00:00+00:00"


async def test_corrections_survive_a_new_connection_and_never_expire(make_settings, corrections, store):
    await corrections.record(REPO, SHA_A, "high", "alice", "security fix", at=T0)
    again = open_store(make_settings())  # the same Redis and prefix: a restarted bot
    try:
        assert await Corrections(again).for_commit(REPO, SHA_A) == Correction(
            REPO, SHA_A, "high", "alice", "security fix", T0
        )
        assert await Corrections(again).repos() == [REPO]
    finally:
        await again.close()
    assert await store.r.ttl(store.k("corrections", "repo", REPO)) == -1
    assert await store.r.ttl(store.k("corrections", "repos")) == -1


async def test_only_full_shas_and_known_levels_are_recorded(corrections):
    with pytest.raises(ValueError, match="not a full SHA"):
        await corrections.record(REPO, "abc1234", "high", "alice")  # the caller resolves abbreviations
    with pytest.raises(ValueError, match="unknown level"):
        await corrections.record(REPO, SHA_A, "critical", "alice")
    with pytest.raises(ValueError, match="time zone"):
        await corrections.record(REPO, SHA_A, "high", "alice", at=datetime(2026, 2, 1, 9, 0))  # naive: whose 9:00?
    assert [c async for c in corrections.export()] == []


async def test_a_workspace_s_corrections_are_its_own_over_the_shared_ones(corrections):
    """Issue 35 §4: a correction made in one workspace (scope `platform:tenant`) shows to that
    workspace alone, over the shared scope's (its own wins for the same commit); the shared scope
    (single-workspace conversations, the CLI) sees none of them, and nor does another workspace."""
    from bot.core.tenants import scope_of

    a, b = scope_of("slack", "TAAAA1/C1"), scope_of("slack", "TBBBB2/C2")
    assert (a, b, scope_of("slack", "C0001"), scope_of("feishu", "tk1/oc_1")) == (
        "slack:TAAAA1",
        "slack:TBBBB2",
        "",
        "feishu:tk1",
    )
    shared = await corrections.record(REPO, SHA_A, "low", "ops", at=T0)
    mine = await corrections.record(REPO, SHA_A, "high", "TAAAA1/U1", at=T0 - timedelta(days=1), scope=a)
    only_mine = await corrections.record(REPO, SHA_B, "medium", "TAAAA1/U1", at=T0, scope=a)
    assert await corrections.effective(REPO, a) == {SHA_A: mine, SHA_B: only_mine}  # its own wins, even older
    assert await corrections.effective(REPO, b) == {SHA_A: shared}
    assert await corrections.effective(REPO) == {SHA_A: shared}
    assert await corrections.for_commit(REPO, SHA_B, b) is None
    assert [c async for c in corrections.export()] == [shared]  # the CLI exports the shared scope
    assert await corrections.repos() == [REPO] and await corrections.repos(a) == [REPO]
    assert await corrections.repos(b) == []


@pytest.mark.parametrize(
    "level,direction,result",
    [
        ("high", TOO_HIGH, "medium"),
        ("medium", TOO_HIGH, "low"),
        ("low", TOO_HIGH, None),
        ("low", TOO_LOW, "medium"),
        ("medium", TOO_LOW, "high"),
        ("high", TOO_LOW, None),
    ],
)
def test_nudge_moves_one_step_and_says_none_at_the_end(level, direction, result):
    assert nudge(level, direction) == result


def test_nudge_refuses_unknown_words():
    with pytest.raises(ValueError, match="unknown level"):
        nudge("urgent", TOO_HIGH)
    with pytest.raises(ValueError, match="unknown direction"):
        nudge("high", "too_loud")


# --- the command ---------------------------------------------------------------------------------------


@pytest.fixture
def widgets(tmp_path):
    """A local clone of acme/widgets (its origin says so) with three commits."""
    repo = GitRepo(tmp_path / "widgets", bare_origin="https://github.com/acme/widgets.git")
    shas = [
        repo.commit(title, {path: body}, when=datetime(2026, 1, 28, 9 + i, 0, tzinfo=SH))
        for i, (title, path, body) in enumerate(
            [
                ("feat: CSV export", "src/export.py", "def export(rows):\n    return rows\n"),
                ("docs: typo", "README.md", "# Widgets\n"),
                ("fix: token check", "src/auth.py", "def check(token):\n    return bool(token)\n"),
            ]
        )
    ]
    return repo, shas


@pytest.fixture
def prefix() -> str:
    return f"fb{uuid.uuid4().hex[:6]}:"


@pytest.fixture
def run(redis_url, tmp_path, prefix):
    base_env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("SLACK_", "FEISHU_", "OPENAI_", "GITHUB_", "LLM_", "REDIS_", "DEFAULT_"))
    }
    base_env.update(
        {"REDIS_URL": redis_url, "REDIS_PREFIX": prefix, "DATA_DIR": str(tmp_path / "data"), "PYTHONPATH": str(ROOT)}
    )
    base_env["DEFAULT_LANG"] = "en"  # the English lines (a run speaks DEFAULT_LANG; Chinese: --lang zh)

    def invoke(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
        proc = subprocess.run(
            [sys.executable, "-m", "bot", "feedback", *args],
            capture_output=True,
            text=True,
            env={**base_env, **(env or {})},
            cwd=tmp_path,
            timeout=120,
        )
        assert "Traceback" not in proc.stderr, proc.stderr
        return proc

    return invoke


@pytest.fixture
def stored(make_settings, prefix):
    """Every correction under the command's prefix, read with a Store of this process."""

    def read(repo: str | None = None) -> list[Correction]:
        async def go():
            store = open_store(make_settings(redis_prefix=prefix))
            try:
                corrections = Corrections(store)
                repos = [repo] if repo else await corrections.repos()
                return [c for r in repos for c in sorted(await corrections.all_of(r), key=lambda c: (c.sha, c.who))]
            finally:
                await store.close()

        return asyncio.run(go())

    return read


def write_lines(path: Path, lines: list) -> Path:
    path.write_text(
        "".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines), encoding="utf-8"
    )
    return path


def stderr_lines(proc: subprocess.CompletedProcess) -> list[str]:
    return [line for line in proc.stderr.splitlines() if line.strip()]


def test_import_keeps_the_good_lines_and_names_each_bad_one(run, widgets, tmp_path, stored):
    repo, (export_sha, docs_sha, auth_sha) = widgets
    unknown = "0123456789" * 4
    path = write_lines(
        tmp_path / "fb.jsonl",
        [
            {"repo": REPO, "sha": export_sha[:8], "level": "high", "reason": "new public API", "who": "alice"},
            "",
            "{not json",
            {"repo": REPO, "level": "low"},
            {"repo": REPO, "sha": docs_sha, "level": "critical"},
            {"repo": REPO, "sha": unknown, "level": "low"},
            {"repo": "no/such/place", "sha": docs_sha, "level": "low"},
            {"repo": REPO, "sha": docs_sha, "level": "low"},
            {"repo": REPO, "sha": auth_sha, "level": "high", "at": "yesterday"},
            {"repo": str(repo.path), "sha": auth_sha, "level": "high", "who": "bob", "at": "2026-01-29T10:00:00+08:00"},
            {"repo": REPO, "sha": "xyz", "level": "low"},
        ],
    )
    proc = run("import", str(path), "--repo", f"{REPO}={repo.path}")
    assert proc.returncode == 2
    assert stderr_lines(proc) == [
        f"Line 3 of {path} was not imported: it is not a JSON object.",
        f"Line 4 of {path} was not imported: it has no sha (a correction needs repo, sha and level).",
        f"Line 5 of {path} was not imported: its level 'critical' is not high, medium or low.",
        f"Line 6 of {path} was not imported: commit {unknown} is not in {REPO} as read from {repo.path}.",
        f"Line 7 of {path} was not imported, as no/such/place cannot be opened: "
        "'no/such/place' names no repository; name one as a local path (the terminal only), "
        "gitlab:group/project or a GitLab URL, owner/name (GitHub), a git URL (https://…, ssh://…, git@host:path).",
        f"Line 9 of {path} was not imported: its time 'yesterday' is not an ISO 8601 time with a time zone "
        "(such as 2026-01-28T09:30:00+08:00).",
        f"Line 11 of {path} was not imported, as commit xyz could not be looked up: "
        "'xyz' is not a commit SHA (4–40 hexadecimal characters).",
        f"Imported 3 corrections from {path}; refused 7 lines.",
    ]
    kept = stored()
    assert [(c.repo, c.sha, c.level, c.who, c.reason) for c in kept] == sorted(
        [
            (REPO, export_sha, "high", "alice", "new public API"),  # the abbreviated SHA, resolved
            (REPO, docs_sha, "low", "import", ""),  # no `who`: "import"
            (REPO, auth_sha, "high", "bob", ""),  # a local path: stored under its origin's owner/name
        ],
        key=lambda row: (row[1], row[3]),
    )
    assert next(c for c in kept if c.who == "bob").at == datetime(2026, 1, 29, 2, 0, tzinfo=UTC)


def test_a_clean_file_exits_0_and_says_so_in_chinese_when_asked(run, widgets, tmp_path, stored):
    repo, (export_sha, _, _) = widgets
    path = write_lines(tmp_path / "fb.jsonl", [{"repo": str(repo.path), "sha": export_sha, "level": "medium"}])
    proc = run("import", str(path), "--lang", "zh")
    assert proc.returncode == 0
    assert stderr_lines(proc) == [f"已从 {path} 导入 1 条更正；拒绝 0 行。"]
    assert [(c.sha, c.level) for c in stored(REPO)] == [(export_sha, "medium")]


def test_bad_lines_are_named_in_chinese_too(run, widgets, tmp_path, stored):
    repo, (export_sha, _, _) = widgets
    path = write_lines(tmp_path / "fb.jsonl", [{"repo": str(repo.path), "sha": export_sha, "level": "urgent"}, "[1]"])
    proc = run("import", str(path), "--lang", "zh")
    assert proc.returncode == 2
    assert stderr_lines(proc) == [
        f"{path} 第 1 行未导入：级别“urgent”不是 high、medium 或 low。",
        f"{path} 第 2 行未导入：它不是 JSON 对象。",
        f"已从 {path} 导入 0 条更正；拒绝 2 行。",
    ]
    assert stored() == []


@pytest.mark.parametrize(
    "make,message",
    [
        (lambda tmp: tmp / "missing.jsonl", "error: The corrections file {path} does not exist."),
        (lambda tmp: tmp, "error: The corrections file {path} cannot be read (Is a directory)."),
        (
            lambda tmp: (tmp / "latin1.jsonl", (tmp / "latin1.jsonl").write_bytes(b'{"repo": "caf\xe9"}\n'))[0],
            "error: The corrections file {path} cannot be read (UnicodeDecodeError).",
        ),
    ],
)
def test_an_unreadable_file_is_one_sentence_and_exit_2(run, tmp_path, make, message, stored):
    path = make(tmp_path)
    proc = run("import", str(path))
    assert proc.returncode == 2
    assert stderr_lines(proc) == [message.format(path=path)]
    assert stored() == []


def test_a_repo_flag_the_file_does_not_name_is_bad_input(run, widgets, tmp_path, stored):
    repo, (export_sha, _, _) = widgets
    path = write_lines(tmp_path / "fb.jsonl", [{"repo": REPO, "sha": export_sha, "level": "low"}])
    proc = run("import", str(path), "--repo", f"acme/other={repo.path}")
    assert proc.returncode == 2
    assert stderr_lines(proc) == [
        f"error: --repo names acme/other, which the labels file does not label (it labels {REPO})."
    ]
    assert stored() == []


def test_export_is_the_effective_correction_per_commit_and_round_trips(run, widgets, tmp_path, stored):
    repo, (export_sha, docs_sha, _) = widgets
    path = write_lines(
        tmp_path / "fb.jsonl",
        [
            {"repo": REPO, "sha": export_sha, "level": "high", "who": "alice", "at": "2026-02-01T09:00:00Z"},
            {
                "repo": REPO,
                "sha": export_sha,
                "level": "low",
                "who": "bob",
                "reason": "tests only",
                "at": "2026-02-01T10:00:00Z",
            },
            {
                "repo": REPO,
                "sha": docs_sha,
                "level": "medium",
                "who": "alice",
                "reason": "说明文档",
                "at": "2026-02-01T08:00:00Z",
            },
            # alice changes her mind, but this line is older than her correction above: it does not win
            {"repo": REPO, "sha": docs_sha, "level": "high", "who": "alice", "at": "2026-01-31T08:00:00Z"},
        ],
    )
    assert run("import", str(path), "--repo", f"{REPO}={repo.path}").returncode == 0
    assert len(stored()) == 3  # alice's two lines of one commit are one correction

    proc = run("export")
    assert proc.returncode == 0 and stderr_lines(proc) == ["Exported 2 corrections."]
    rows = [json.loads(line) for line in proc.stdout.splitlines()]
    assert rows == [
        {
            "repo": REPO,
            "sha": docs_sha,
            "level": "medium",
            "reason": "说明文档",
            "who": "alice",
            "at": "2026-02-01T08:00:00+00:00",
        },
        {
            "repo": REPO,
            "sha": export_sha,
            "level": "low",
            "reason": "tests only",
            "who": "bob",
            "at": "2026-02-01T10:00:00+00:00",
        },  # bob's is the latest of the two people's
    ]

    out = tmp_path / "out.jsonl"
    proc = run("export", "--repo", REPO, "--out", str(out))
    assert proc.returncode == 0 and stderr_lines(proc) == [f"Wrote {out} (2 corrections)."]
    assert out.read_text(encoding="utf-8") == run("export").stdout

    # …usable as eval labels,
    labels = load_labels(out)
    assert [(lb.repo, lb.sha, lb.level, lb.reason, lb.line) for lb in labels] == [
        (REPO, docs_sha, "medium", "说明文档", 1),
        (REPO, export_sha, "low", "tests only", 2),
    ]
    # …and imported into another bot's Redis unchanged (who and at kept).
    elsewhere = {"REDIS_PREFIX": f"fb{uuid.uuid4().hex[:6]}:"}
    proc = run("import", str(out), "--repo", f"{REPO}={repo.path}", env=elsewhere)
    assert proc.returncode == 0 and stderr_lines(proc) == [f"Imported 2 corrections from {out}; refused 0 lines."]
    assert run("export", env=elsewhere).stdout == out.read_text(encoding="utf-8")


def test_eval_labels_import_as_corrections(run, widgets, tmp_path, stored):
    repo, (export_sha, docs_sha, _) = widgets
    labels = write_lines(
        tmp_path / "labels.jsonl",
        [
            {"repo": REPO, "sha": export_sha, "level": "high", "type": "feature", "reason": "new API"},
            {"repo": REPO, "sha": docs_sha[:10], "level": "low", "type": "docs"},
        ],
    )
    assert [lb.level for lb in load_labels(labels)] == ["high", "low"]
    proc = run("import", str(labels), "--repo", f"{REPO}={repo.path}")
    assert proc.returncode == 0, proc.stderr
    assert [(c.sha, c.level, c.who, c.reason) for c in stored()] == sorted(
        [(export_sha, "high", "import", "new API"), (docs_sha, "low", "import", "")]
    )


def test_export_says_what_it_did_not_find(run, tmp_path):
    proc = run("export")
    assert proc.returncode == 0 and proc.stdout == ""
    assert stderr_lines(proc) == ["No corrections are stored.", "Exported 0 corrections."]
    proc = run("export", "--repo", "acme/nothing", "--lang", "zh")
    assert proc.returncode == 0 and proc.stdout == ""
    assert stderr_lines(proc) == ["没有保存 acme/nothing 的更正。", "已导出 0 条更正。"]
    proc = run("export", "--out", str(tmp_path / "no" / "such" / "dir.jsonl"))
    assert proc.returncode == 2
    assert stderr_lines(proc) == [
        f"error: Cannot write {tmp_path / 'no' / 'such' / 'dir.jsonl'}: "
        f"the folder {tmp_path / 'no' / 'such'} does not exist."
    ]


def test_feedback_without_an_action_is_one_line():
    proc = subprocess.run(
        [sys.executable, "-m", "bot", "feedback"],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT), "DEFAULT_LANG": "en"},
        cwd=ROOT,
        timeout=60,
    )
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        "error: the following arguments are required: ACTION (see python -m bot feedback --help)"
    ]
