"""The change type: the author's label, then files of one kind, then the verb."""

from __future__ import annotations

import pytest

from bot.analysis.offline import analyse_offline
from tests.offline.helpers import LOW, MEDIUM, SRC, T, commit, mod


@pytest.mark.parametrize(
    "title,expected",
    [
        ("feat: add streaming replies", T.FEATURE),
        ("feat(api)!: drop the v1 endpoints", T.FEATURE),
        ("fix(parser): handle empty bodies", T.BUGFIX),
        ("perf: cache compiled regexes", T.PERFORMANCE),
        ("refactor(core): split the scheduler", T.REFACTOR),
        ("docs: explain the cache", T.DOCS),
        ("test: cover the retry path", T.TESTS),
        ("ci: run on 3.12", T.CI_BUILD),
        ("build: switch to hatchling", T.CI_BUILD),
        ("revert: feat: add streaming replies", T.REVERT),
        ("deps: bump openai", T.DEPENDENCIES),
        ("chore(deps): bump lodash from 4.17.20 to 4.17.21", T.DEPENDENCIES),
        ("build(deps-dev): bump pytest from 7.4.0 to 8.0.0", T.DEPENDENCIES),
        ("style: reorder imports", T.REFACTOR),
        ("security: escape user names in the HTML report", T.SECURITY),
        ("[BugFix][CI] Fix flaky retry", T.BUGFIX),
        ("[ROCm][CI] Pin the runner image", T.CI_BUILD),
        ("[CI/Build] Cache wheels", T.CI_BUILD),
        ("[Performance] Fuse the two kernels", T.PERFORMANCE),
        ("[Kernel][Perf] Faster top-k", T.PERFORMANCE),
        ("[Model] Add support for Qwen3-Next", T.FEATURE),
        ("[Frontend] Fix tool-call parsing", T.BUGFIX),
        ("[Core] Refactor the block manager", T.REFACTOR),
        ("[Deprecation] Remove the legacy sampler", T.REMOVAL),
        ("[Refactor] Move helpers into utils", T.REFACTOR),
        ("[Feature] Streaming tool calls", T.FEATURE),
        ("[Test] Cover the scheduler", T.TESTS),
        ("Fix the scheduler [Bugfix]", T.BUGFIX),  # tags in any position
        ('Revert "Add streaming replies"', T.REVERT),
        ("Fix race in the cache", T.BUGFIX),
        ("Add a /health endpoint", T.FEATURE),
        ("Remove the legacy sampler", T.REMOVAL),
        ("Bump numpy from 1.26.4 to 2.0.0", T.DEPENDENCIES),
        ("Update dependency eslint to v9", T.DEPENDENCIES),
        ("Fix CVE-2025-12345 in token parsing", T.SECURITY),
        ("net/http: fix header parsing", T.BUGFIX),  # Go-style area prefix is not a type
        ("Memoize the statement line numbers of a parsed module", T.PERFORMANCE),
        ("Tweak things", T.OTHER),
    ],
)
def test_change_type_from_title(title, expected):
    assert analyse_offline(commit(title), SRC, "en").change_type is expected


def test_reverts_named_by_the_source_are_reverts_whatever_the_title():
    a = analyse_offline(
        commit("Back out the cache change", reverts="1f33e38e81a1b29bb4261a5e4e1fa430198b251a"),
        [mod("src/app/core.py", 30, 12)],
        "zh",
    )
    assert a.change_type is T.REVERT
    assert any("1f33e38" in r for r in a.risks)


@pytest.mark.parametrize(
    "files,expected",
    [
        ([mod("docs/guide.md", 30, 2), mod("README.md", 3, 1)], T.DOCS),
        ([mod("tests/test_cache.py", 40, 2), mod("tests/conftest.py", 5)], T.TESTS),
        ([mod(".github/workflows/ci.yml", 4, 1)], T.CI_BUILD),
        ([mod("CMakeLists.txt", 4, 1), mod(".github/workflows/wheels.yml", 2)], T.CI_BUILD),
        ([mod("requirements.txt", 1, 1), mod("poetry.lock", 300, 280)], T.DEPENDENCIES),
        ([mod("config/app.yaml", 3, 3)], T.CONFIG),
    ],
)
def test_change_type_from_files_when_the_title_says_nothing(files, expected):
    assert analyse_offline(commit("Update things"), files, "en").change_type is expected


def test_title_tag_wins_over_files():
    # "[Bugfix]" touching only tests is still a bug fix (of the tests) — and low.
    a = analyse_offline(commit("[Bugfix] Fix flaky scheduler test"), [mod("tests/test_sched.py", 5, 5)], "en")
    assert (a.change_type, a.importance) == (T.BUGFIX, LOW)
    # A verb, though, yields to files that are all of one kind.
    a = analyse_offline(commit("Add tests for the scheduler"), [mod("tests/test_sched.py", 120)], "en")
    assert a.change_type is T.TESTS


def test_merge_commit_reads_the_pr_title_from_the_body():
    a = analyse_offline(
        commit("Merge pull request #12 from alice/fix-cache", "Fix stale cache entries\n\nDetails."), SRC, "en"
    )
    assert a.change_type is T.BUGFIX


@pytest.mark.parametrize(
    "title,expected",
    [
        ("[Attention][3/n] Remove usage of deprecated `seq_lens_cpu`", T.REFACTOR),
        ("[Quantization][MoE] remove unused ep logic from moe marlin", T.REFACTOR),
        ("[Model] Cleanup: Remove redundant manual definition of `make_empty_intermediate_tensors`", T.REFACTOR),
        ("Remove the TPU backend", T.REMOVAL),
    ],
)
def test_cleanup_is_not_a_feature_removal(title, expected):
    assert analyse_offline(commit(title), SRC, "en").change_type is expected


def test_revert_of_a_lint_fix_is_still_a_revert():
    a = analyse_offline(commit('Revert "Fix ruff warnings"'), [mod("src/app/core.py", 10, 10)], "en")
    assert (a.change_type, a.importance) == (T.REVERT, MEDIUM)
