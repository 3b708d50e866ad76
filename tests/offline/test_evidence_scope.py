"""Scope: ceilings for non-runtime, tooling, mechanical and preview-only changes."""

from __future__ import annotations

import pytest

from bot.analysis.offline import analyse_offline
from bot.analysis.repo_config import parse_profile
from tests.offline.helpers import ENTRY_POINTS_V1, HIGH, LOW, MEDIUM, WHEN, T, analyse_last, commit, mod


@pytest.mark.parametrize(
    "lang,reason",
    [("en", "Docs-only change (2 files); no runtime code touched"), ("zh", "仅改动文档（2 个文件），不影响运行时代码")],
)
def test_docs_only_is_low_whatever_the_title(lang, reason):
    files = [mod("docs/architecture.md", 900, 300), mod("README.md", 40, 10)]
    a = analyse_offline(commit("feat!: document the new plugin API"), files, lang)
    assert (a.importance, a.change_type) == (LOW, T.FEATURE)
    assert a.importance_reason == reason
    assert a.risks == () and a.recommendations == () and a.impact == ""


def test_lockfile_only_is_low_dependencies():
    a = analyse_offline(
        commit("Update things"), [mod("poetry.lock", 812, 640), mod("frontend/yarn.lock", 90, 80)], "zh"
    )
    assert (a.importance, a.change_type) == (LOW, T.DEPENDENCIES)
    assert a.importance_reason == "仅更新锁文件（poetry.lock、frontend/yarn.lock），依赖声明未变"


def test_ci_only_is_low():
    a = analyse_offline(commit("Rework the release workflow"), [mod(".github/workflows/release.yml", 300, 200)], "en")
    assert (a.importance, a.change_type) == (LOW, T.CI_BUILD)
    assert a.importance_reason.startswith("CI-only change (1 file)")


def test_typo_and_lint_changes_are_low():
    a = analyse_offline(commit("Fix typo in error message"), [mod("src/app/errors.py", 1, 1)], "en")
    assert a.importance is LOW
    assert a.importance_reason.startswith("Formatting, spelling or lint change")
    big = analyse_offline(commit("style: reformat with ruff"), [mod(f"src/m{i}.py", 40, 40) for i in range(30)], "en")
    assert big.importance is MEDIUM  # 2,400 lines of churn: conflicts, not behaviour
    assert "conflict" in big.importance_reason


def test_zh_puts_a_space_before_latin_labels():
    a = analyse_offline(commit("[CI] Retry flaky jobs"), [mod(".buildkite/pipeline.yaml", 3, 1)], "zh")
    assert a.importance_reason == "仅改动 CI 配置（1 个文件），不影响运行时代码"


def test_tooling_only_commit_is_low(repo):
    repo.commit(
        "Rewrite the release script", {"scripts/release.py": "import sys\n" + "print('step')\n" * 400}, when=WHEN
    )
    a = analyse_last(repo)
    assert a.importance is LOW, a.importance_reason
    assert "tooling" in a.importance_reason


def test_vendored_stubs_are_not_user_facing():
    sync = analyse_offline(
        commit("Sync typeshed"), [mod(f"mypy/typeshed/stdlib/m{i}.pyi", 20, 10) for i in range(30)], "en"
    )
    assert sync.importance is LOW


def test_profile_preview_caps_at_medium_and_internal_paths_do_not_count(repo):
    profile = parse_profile('[preview]\ntags = ["preview"]\n[internal]\npaths = ["src/app/"]\n')
    repo.commit(
        "[preview] Reject reserved names in the new installer",
        {"src/app/entry_points.py": ENTRY_POINTS_V1.replace("in RESERVED", "in RESERVED | {'uv'}")},
        when=WHEN,
    )
    assert analyse_last(repo).importance is HIGH
    capped = analyse_last(repo, profile=parse_profile('[preview]\ntags = ["preview"]\n'))
    assert capped.importance is MEDIUM and "Preview-only" in capped.importance_reason
    internal = analyse_last(repo, profile=profile)
    assert internal.importance is LOW
