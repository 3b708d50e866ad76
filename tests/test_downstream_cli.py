"""`python -m bot digest … --fork`: a real process, real Redis, real git repositories; GitHub forks
through mirrors fetched from local bare repositories (FORK_GIT_URL=file://…), and a GitHub upstream
through the fake GitHub API."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from tests.downstream_repos import DAY, bare_copy, build, snapshot
from tests.fakes.github_server import FakeFile
from tests.gitrepo import GitRepo

ROOT = Path(__file__).resolve().parent.parent
USAGE = "Usage: --fork PATH@BRANCH or --fork OWNER/NAME@BRANCH"


@pytest.fixture
def repos(tmp_path):
    return build(tmp_path)


@pytest.fixture
def remotes(tmp_path):
    """Where FORK_GIT_URL points: bare repositories named owner/name.git."""
    path = tmp_path / "remotes"
    path.mkdir()
    return path


@pytest.fixture
def run(redis_url, tmp_path, remotes):
    base_env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("SLACK_", "FEISHU_", "OPENAI_", "GITHUB_", "LLM_", "REDIS_", "DEFAULT_", "FORK_"))
    }
    base_env.update(
        {
            "REDIS_URL": redis_url,
            "REDIS_PREFIX": f"ds{uuid.uuid4().hex[:6]}:",
            "DATA_DIR": str(tmp_path / "data"),
            "PYTHONPATH": str(ROOT),
            "FORK_GIT_URL": f"file://{remotes}/{{repo}}.git",
        }
    )

    def invoke(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", "bot", *args],
            capture_output=True,
            text=True,
            env={**base_env, **(env or {})},
            cwd=tmp_path,
            timeout=120,
        )

    return invoke


def one_clear_line(proc: subprocess.CompletedProcess) -> str:
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert "Traceback" not in proc.stderr, proc.stderr
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("error: ")
    return lines[0]


def entries_by_title(proc) -> dict[str, dict]:
    data = json.loads(proc.stdout)
    return {e["commit"]["title"]: e for e in data["digests"][0]["entries"]}


def assert_downstream_json(entries: dict[str, dict]) -> None:
    assert entries["perf: rewrite line two of a"]["downstream"] == {
        "patched_files": ["a.py"],
        "conflict": True,
        "hunks": 2,
    }
    assert entries["fix: line two of b"]["downstream"] == {"patched_files": ["b.py"], "conflict": False, "hunks": 1}
    assert "downstream" not in entries["docs: c only"]
    assert entries["feat: add fork_only upstream too"]["downstream"] == {
        "patched_files": ["fork_only.py"],
        "conflict": True,
        "hunks": 1,
    }


def test_local_upstream_and_local_fork(run, repos):
    before = {k: snapshot(repos[k]) for k in ("up", "fork")}
    proc = run(
        "digest", "--repo", str(repos["up"].path), "--date", DAY, "--lang", "en", "--fork", f"{repos['fork'].path}@ours"
    )
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "### ⬇️ Downstream: fork@ours" in out
    assert (
        "fork@ours patches 3 files since its merge base "
        f"{repos['shas']['base'][:7]} with upstream; 3 of these commits touch them, 2 conflict."
    ) in out
    assert "⚠️ touches a.py, which fork@ours patches in 2 hunks — conflicts" in out
    assert "ℹ️ touches b.py, which fork@ours patches in 1 hunk — applies cleanly" in out
    assert "docs: c only](#docs-c-only) `" not in out.split("### ⬇️ Downstream")[1].split("###")[0]
    # the flag on the commit's own card
    card = out.split("#### perf: rewrite line two of a", 1)[1].split("---", 1)[0]
    assert "⚠️ Downstream conflict: cherry-picking onto fork@ours conflicts (a.py)" in card
    assert "Downstream" not in out.split("#### docs: c only", 1)[1].split("---", 1)[0]
    assert {k: snapshot(repos[k]) for k in ("up", "fork")} == before  # nothing checked out or written

    proc = run(
        "digest",
        "--repo",
        str(repos["up"].path),
        "--date",
        DAY,
        "--format",
        "json",
        "--fork",
        f"{repos['fork'].path}@ours",
    )
    assert proc.returncode == 0, proc.stderr
    assert_downstream_json(entries_by_title(proc))
    assert json.loads(proc.stdout)["digests"][0]["fork"]["merge_base"] == repos["shas"]["base"]


def test_chinese_digest_with_a_fork(run, repos):
    proc = run(
        "digest", "--repo", str(repos["up"].path), "--date", DAY, "--lang", "zh", "--fork", f"{repos['fork'].path}@ours"
    )
    assert proc.returncode == 0, proc.stderr
    assert "### ⬇️ 下游：fork@ours" in proc.stdout
    assert "⚠️ 涉及 a.py，fork@ours 在其中有 2 处修改 — 冲突" in proc.stdout
    assert "⚠️ 下游冲突" in proc.stdout


def test_without_a_fork_nothing_changes(run, repos):
    proc = run("digest", "--repo", str(repos["up"].path), "--date", DAY, "--format", "json")
    assert proc.returncode == 0
    data = json.loads(proc.stdout)["digests"][0]
    assert "fork" not in data and all("downstream" not in e for e in data["entries"])


def test_a_commit_the_fork_already_has_is_not_flagged(run, repos):
    repos["fork"].git("fetch", "-q", str(repos["up"].path), repos["shas"]["C2"])
    repos["fork"].git("merge", "-q", "--no-edit", "-X", "ours", "FETCH_HEAD")  # C1 and C2, the fork's side kept
    proc = run(
        "digest",
        "--repo",
        str(repos["up"].path),
        "--date",
        DAY,
        "--format",
        "json",
        "--fork",
        f"{repos['fork'].path}@ours",
    )
    assert proc.returncode == 0, proc.stderr
    entries = entries_by_title(proc)
    assert "downstream" not in entries["fix: line two of b"]  # merged already
    assert "downstream" not in entries["perf: rewrite line two of a"]
    assert entries["feat: add fork_only upstream too"]["downstream"]["conflict"] is True


def test_a_github_fork_through_its_mirror(run, repos, remotes, tmp_path):
    bare_copy(repos["fork"], remotes / "org" / "our-fork.git")
    proc = run(
        "digest", "--repo", str(repos["up"].path), "--date", DAY, "--format", "json", "--fork", "org/our-fork@ours"
    )
    assert proc.returncode == 0, proc.stderr
    assert_downstream_json(entries_by_title(proc))
    mirror = tmp_path / "data" / "forks" / "org+our-fork.git"
    assert (mirror / "HEAD").exists()
    refs = subprocess.run(
        ["git", "--git-dir", str(mirror), "for-each-ref", "--format=%(refname)"], capture_output=True, text=True
    ).stdout.split()
    assert refs == ["refs/digest-bot/fork/ours"]


def test_a_gitlab_fork_through_its_mirror_with_the_gitlab_token(run, repos, tmp_path):
    """`gitlab:org/our-fork@ours`: fetched from GITLAB_URL/org/our-fork.git (a git server over HTTP
    that wants GITLAB_TOKEN as GitLab takes it: HTTP basic auth, user oauth2)."""
    from tests.fakes.git_http import GitHttpServer

    token = "glpat-fork-token-0001"
    with GitHttpServer(tmp_path / "gitlab", auth=("oauth2", token)) as srv:
        srv.add_repo("org/our-fork", repos["fork"].path)
        args = ("digest", "--repo", str(repos["up"].path), "--date", DAY, "--format", "json", "--lang", "en")
        refused = run(*args, "--fork", "gitlab:org/our-fork@ours", env={"GITLAB_URL": srv.url})
        assert refused.returncode == 2, refused.stderr  # what the fork names is not there, as for GitHub
        assert "The fork gitlab:org/our-fork does not exist (or the bot cannot see it)." in one_clear_line(refused)
        proc = run(*args, "--fork", "gitlab:org/our-fork@ours", env={"GITLAB_URL": srv.url, "GITLAB_TOKEN": token})
        assert proc.returncode == 0, proc.stderr
        assert_downstream_json(entries_by_title(proc))
        assert (tmp_path / "data" / "forks" / "gitlab+org+our-fork.git" / "HEAD").exists()
        assert token not in proc.stdout + proc.stderr


def test_a_fork_named_by_its_git_url_gets_no_host_token(run, repos, tmp_path):
    """Any git URL names a fork too; GitHub's and GitLab's tokens go to their own hosts only."""
    from tests.fakes.git_http import GitHttpServer

    with GitHttpServer(tmp_path / "srv") as srv:
        srv.add_repo("org/our-fork", repos["fork"].path)
        seen: list[str] = []
        handler = srv._server.RequestHandlerClass
        original = handler.parse_request

        def parse_request(self):  # the headers each request came with
            ok = original(self)
            seen.append(str(self.headers.get("Authorization")))
            return ok

        handler.parse_request = parse_request
        proc = run(
            "digest", "--repo", str(repos["up"].path), "--date", DAY, "--format", "json",
            "--fork", f"{srv.url_of('org/our-fork')}@ours",
            env={"GITHUB_TOKEN": "ghp_" + "x" * 36, "FORK_GIT_URL": f"{srv.url}/{{repo}}.git"},
        )  # fmt: skip
        assert proc.returncode == 0, proc.stderr
        assert_downstream_json(entries_by_title(proc))
        assert seen and set(seen) == {"None"}  # FORK_GIT_URL is GitHub's, but this URL was named as itself


def test_a_github_upstream_and_a_github_fork(run, repos, remotes, fake_github):
    """Upstream commits from the (fake) GitHub API, their objects fetched into the fork's mirror."""
    up = repos["up"]
    bare_copy(up, remotes / "octo" / "widgets.git")
    bare_copy(repos["fork"], remotes / "org" / "our-fork.git")
    fake_github.add_repo("octo/widgets")
    log = up.git("log", "--reverse", "--format=%H%x00%P%x00%cI%x00%s").strip().splitlines()
    from datetime import datetime

    for row in log:
        sha, parents, when, title = row.split("\0")
        files = [FakeFile(p) for p in up.git("diff-tree", "--root", "-r", "--name-only", "--no-commit-id", sha).split()]
        fake_github.add_commit(
            "octo/widgets",
            title,
            sha=sha,
            parents=parents.split(),
            committed_at=datetime.fromisoformat(when),
            files=files,
        )
    proc = run(
        "digest",
        "--repo",
        "octo/widgets",
        "--date",
        DAY,
        "--format",
        "json",
        "--fork",
        "org/our-fork@ours",
        env={"GITHUB_API_URL": fake_github.url},
    )
    assert proc.returncode == 0, proc.stderr
    assert_downstream_json(entries_by_title(proc))


def test_a_mirror_past_its_size_bound_is_refused_and_removed(run, repos, remotes, tmp_path):
    repos["fork"].commit(
        "fork: a big blob",
        {"big.bin": os.urandom(3 * 1024 * 1024)},
        when=__import__("datetime").datetime(2026, 1, 27, 14, 0),
    )
    bare_copy(repos["fork"], remotes / "org" / "our-fork.git")
    proc = run(
        "digest",
        "--repo",
        str(repos["up"].path),
        "--date",
        DAY,
        "--lang",
        "en",
        "--fork",
        "org/our-fork@ours",
        env={"FORK_MIRROR_MAX_MB": "1"},
    )
    assert proc.returncode == 1
    assert (
        "The mirror of org/our-fork would grow past 1 MB (FORK_MIRROR_MAX_MB), so it was not kept."
        in one_clear_line(proc)
    )
    assert not (tmp_path / "data" / "forks" / "org+our-fork.git").exists()


@pytest.mark.parametrize(
    "fork,sentence",
    [
        ("{fork}@nope", "Branch 'nope' does not exist in fork."),
        ("./nowhere/fork@main", "There is no folder ./nowhere/fork."),
        ("{plain}@main", "is not a git repository."),
        ("{unrelated}@main", "shares no history with upstream, so it cannot be a fork of it."),
        ("org/missing@main", "The fork org/missing does not exist (or the bot cannot see it)."),
        ("org/our-fork@nope", "Branch 'nope' does not exist in org/our-fork."),
        ("org/our-fork@", "'org/our-fork@' ends with @ but names no branch after it."),
        ("not a fork!", "'not a fork!' is neither a local git repository nor owner/name on GitHub."),
    ],
)
def test_bad_fork_input_is_one_sentence_and_the_usage(run, repos, remotes, tmp_path, fork, sentence):
    from datetime import datetime

    bare_copy(repos["fork"], remotes / "org" / "our-fork.git")
    (tmp_path / "plain").mkdir()
    other = GitRepo(tmp_path / "unrelated")
    other.commit("unrelated", {"x": "1"}, when=datetime(2026, 1, 1, 0, 0))
    value = fork.format(fork=repos["fork"].path, plain=tmp_path / "plain", unrelated=other.path)
    proc = run("digest", "--repo", str(repos["up"].path), "--date", DAY, "--lang", "en", "--fork", value)
    assert proc.returncode == 2, proc.stderr
    line = one_clear_line(proc)
    assert sentence in line and line.endswith(USAGE + " (without @BRANCH: the fork's default branch).")
    assert proc.stdout == ""


def test_a_fetch_past_its_time_bound_is_stopped(run, repos):
    """A remote that never answers (git's ext:: transport running `sleep`): killed at FORK_FETCH_TIMEOUT."""
    proc = run(
        "digest",
        "--repo",
        str(repos["up"].path),
        "--date",
        DAY,
        "--lang",
        "en",
        "--fork",
        "org/slow@main",
        env={"FORK_GIT_URL": "ext::sh -c sleep% 60 {repo}", "GIT_ALLOW_PROTOCOL": "ext", "FORK_FETCH_TIMEOUT": "1"},
    )
    assert proc.returncode == 1
    assert "Fetching org/slow took longer than 1 s (FORK_FETCH_TIMEOUT)" in one_clear_line(proc)


def test_bad_fork_input_in_chinese(run, repos):
    proc = run(
        "digest", "--repo", str(repos["up"].path), "--date", DAY, "--lang", "zh", "--fork", f"{repos['fork'].path}@nope"
    )
    assert proc.returncode == 2
    line = one_clear_line(proc) if proc.stderr.startswith("error: ") else proc.stderr.strip()
    assert "fork 中没有分支 'nope'。 用法：--fork 路径@分支 或 --fork OWNER/NAME@分支" in line, proc.stderr
