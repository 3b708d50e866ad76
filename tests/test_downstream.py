"""Downstream impact, engine level: real git repositories, no checkout, nothing of the user's written."""

from __future__ import annotations

import pytest

from bot.fork.conflict import MODES, cherry_pick_conflicts, default_mode
from bot.fork.git import ObjectView, git_version, objects_dir
from bot.fork.naming import ForkError, ForkNotFound, parse_fork
from bot.fork.patches import read_patches
from tests.downstream_repos import build, snapshot

# The modes this git can run: --merge-base needs git ≥ 2.40, --write-tree 2.38.
RUNNABLE = [
    m
    for m in MODES
    if (m != "merge-base" or git_version() >= (2, 40)) and (m != "synthetic" or git_version() >= (2, 38))
]


@pytest.fixture
def repos(tmp_path):
    return build(tmp_path)


def view_of(repos) -> ObjectView:
    return ObjectView(repos["up"].path / ".git", [objects_dir(repos["fork"].path / ".git")])


@pytest.mark.parametrize("mode", RUNNABLE)
def test_cherry_pick_conflicts_as_git_would(repos, mode):
    shas = repos["shas"]
    with view_of(repos) as view:
        got = {
            name: cherry_pick_conflicts(view, shas[name], shas["fork"], mode=mode) for name in ("C1", "C2", "C3", "C4")
        }
    assert got["C1"].conflict and got["C1"].files == ("a.py",)
    assert not got["C2"].conflict and not got["C3"].conflict
    assert got["C4"].conflict and got["C4"].files == ("fork_only.py",)


def test_the_prediction_matches_a_real_cherry_pick(repos, tmp_path):
    """What `git cherry-pick` says in a scratch clone (the thing we predict without one)."""
    import subprocess

    scratch = tmp_path / "scratch"
    subprocess.run(["git", "clone", "-q", "-b", "ours", str(repos["fork"].path), str(scratch)], check=True)
    subprocess.run(["git", "-C", str(scratch), "fetch", "-q", str(repos["up"].path), "main"], check=True)
    with view_of(repos) as view:
        for name in ("C1", "C2", "C3", "C4"):
            sha = repos["shas"][name]
            real = subprocess.run(
                [
                    "git",
                    "-C",
                    str(scratch),
                    "-c",
                    "user.name=t",
                    "-c",
                    "user.email=t@e",
                    "cherry-pick",
                    "--no-commit",
                    sha,
                ],
                capture_output=True,
            )
            subprocess.run(["git", "-C", str(scratch), "reset", "-q", "--hard"], check=True)
            predicted = cherry_pick_conflicts(view, sha, repos["shas"]["fork"])
            assert predicted.conflict == (real.returncode != 0), name


def test_the_fork_patches_files_and_hunks(repos):
    shas = repos["shas"]
    with view_of(repos) as view:
        base = view.merge_base(shas["C4"], shas["fork"])
        patches = read_patches(view, base, shas["fork"])
    assert base == shas["base"]
    assert patches.hunks == {"a.py": 2, "b.py": 1, "fork_only.py": 1}


def test_nothing_of_the_users_is_written(repos):
    before = {k: snapshot(repos[k]) for k in ("up", "fork")}
    with view_of(repos) as view:
        for mode in RUNNABLE:
            cherry_pick_conflicts(view, repos["shas"]["C1"], repos["shas"]["fork"], mode=mode)
        scratch = view.scratch
    assert {k: snapshot(repos[k]) for k in ("up", "fork")} == before
    import os

    assert not os.path.exists(scratch)  # the synthetic objects went with the scratch store


def test_default_mode_follows_the_git_version():
    expected = "merge-base" if git_version() >= (2, 40) else "synthetic" if git_version() >= (2, 38) else "trivial"
    assert default_mode() == expected


@pytest.mark.parametrize(
    "raw,kind,where,branch",
    [
        ("org/our-fork@main", "github", "org/our-fork", "main"),
        ("org/our-fork@release/v1.2", "github", "org/our-fork", "release/v1.2"),
        ("org/our-fork", "github", "org/our-fork", None),
    ],
)
def test_fork_names(raw, kind, where, branch):
    spec = parse_fork(raw, "en")
    assert (spec.kind, spec.where, spec.branch) == (kind, where, branch)


def test_a_local_fork_is_a_path(repos):
    spec = parse_fork(f"{repos['fork'].path}@ours", "en")
    assert (spec.kind, spec.branch, spec.name, spec.display) == ("path", "ours", "fork", "fork@ours")


@pytest.mark.parametrize(
    "raw,error,sentence",
    [
        ("", ForkError, "No fork given"),
        ("org/our-fork@", ForkError, "ends with @ but names no branch"),
        ("org/our-fork@bad..branch", ForkError, "'bad..branch' is not a valid branch name."),
        ("not a fork!", ForkError, "is neither a local git repository nor owner/name"),
        ("./nowhere/fork@main", ForkNotFound, "There is no folder ./nowhere/fork."),
    ],
)
def test_bad_fork_names_are_one_sentence(raw, error, sentence):
    with pytest.raises(error) as info:
        parse_fork(raw, "en")
    assert sentence in str(info.value)


def test_bad_fork_names_are_said_in_the_readers_language():
    from bot.i18n import localize

    with pytest.raises(ForkError) as info:
        parse_fork("org/our-fork@", "zh")
    assert "@ 后面没有分支名" in localize(info.value, "zh")
    assert "ends with @ but names no branch" in localize(info.value, "en")


def test_a_subscriptions_file_may_name_a_fork_and_its_owner(tmp_path, make_settings):
    from bot.channels.subscriptions import load_subscription_file

    path = tmp_path / "subscriptions.toml"
    path.write_text(
        '[[subscription]]\nplatform = "slack"\nchannel = "C1"\nrepo = "octo/widgets"\n'
        'fork = "org/our-fork@main"\nowner = "U0123"\n',
        encoding="utf-8",
    )
    [sub] = load_subscription_file(path, make_settings())
    assert (sub.fork, sub.owner) == ("org/our-fork@main", "U0123")
