"""The repository profile (.digest.toml): bad ones are one clear sentence; read through the source."""

from __future__ import annotations

import asyncio

import pytest

from bot.analysis.repo_config import ProfileError, parse_profile
from bot.sources.localgit import LocalGitSource
from tests.gitrepo import GitRepo
from tests.offline.helpers import WHEN


@pytest.mark.parametrize(
    "text,message",
    [
        ("[surface\ncli = 1", "is not valid TOML"),
        ("[publc]\npaths = []", "unknown section [publc]"),
        ("[surface]\ncli = 3", "surface.cli must be a list of paths"),
        ("[internal]\ndirs = ['x/']", "unknown key 'dirs'"),
    ],
)
def test_a_bad_profile_is_one_clear_sentence(text, message):
    with pytest.raises(ProfileError) as err:
        parse_profile(text)
    assert message in str(err.value)
    assert str(err.value).endswith("the default profile is used.")
    assert "\n" not in str(err.value)


def test_profile_is_read_from_the_default_branch_through_the_source(tmp_path, caplog):
    from bot.analysis.repo_config import load_profile

    r = GitRepo(tmp_path / "with-profile")
    r.commit(
        "Add a profile",
        {
            ".digest.toml": '[surface]\ncli = ["src/cli.py"]\n[internal]\npaths = ["scripts/"]\n',
            "src/cli.py": "x = 1\n",
        },
        when=WHEN,
    )
    profile, problem = asyncio.run(load_profile(LocalGitSource(str(r.path))))
    assert problem == "" and profile.declared
    assert profile.surface_kind("src/cli.py") == "cli" and profile.is_internal("scripts/x.py")

    bare = GitRepo(tmp_path / "no-profile")
    bare.commit("Start", {"README.md": "hi\n"}, when=WHEN)
    profile, problem = asyncio.run(load_profile(LocalGitSource(str(bare.path))))
    assert (profile.declared, problem) == (False, "")

    r.commit("Break the profile", {".digest.toml": "[surface\n"}, when=WHEN)
    with caplog.at_level("WARNING"):
        profile, problem = asyncio.run(load_profile(LocalGitSource(str(r.path))))
    assert not profile.declared  # the defaults, never a crash
    assert problem.startswith(".digest.toml is not valid TOML") and problem.endswith("the default profile is used.")
    assert problem in caplog.text
    override, problem = asyncio.run(load_profile(LocalGitSource(str(r.path)), override='[internal]\npaths = ["x/"]\n'))
    assert override.is_internal("x/y.py") and problem == ""
