"""Size: measured on source only, per-type thresholds, and the generic risks."""

from __future__ import annotations

import pytest

from bot.analysis.offline import analyse_offline
from tests.offline.helpers import LOW, MEDIUM, commit, mod


def test_size_counts_source_not_tests_docs_or_lockfiles():
    small_src = [mod("src/app/core.py", 20, 5)]
    padding = [
        mod("tests/test_core.py", 900, 100),
        mod("docs/core.md", 400),
        mod("package-lock.json", 5000, 4000),
        mod("src/app/api_pb2.py", 800, 700),
    ]
    a = analyse_offline(commit("fix: handle empty bodies"), small_src + padding, "en")
    assert a.importance is LOW
    assert "(1 file, +20/−5)" in a.importance_reason
    assert (a.files_changed, a.additions, a.deletions) == (5, 7120, 4805)  # totals still reported


@pytest.mark.parametrize(
    "title,lines,expected",
    [
        ("feat: add retries", 20, LOW),  # a tiny feat is not automatically high
        ("feat: add retries", 120, MEDIUM),
        ("feat: add retries", 700, MEDIUM),  # size alone is never high
        ("fix: handle empty bodies", 60, LOW),
        ("fix: handle empty bodies", 250, LOW),
        ("fix: handle empty bodies", 900, MEDIUM),
        ("refactor: split the scheduler", 400, LOW),
        ("refactor: split the scheduler", 700, MEDIUM),
        ("perf: cache compiled regexes", 60, MEDIUM),
    ],
)
def test_size_thresholds_on_source(title, lines, expected):
    files = [mod("src/app/core.py", lines // 2, lines - lines // 2), mod("tests/test_core.py", 30)]
    assert analyse_offline(commit(title), files, "en").importance is expected


def test_the_same_lines_in_tests_only_stay_low():
    a = analyse_offline(
        commit("feat: add retries"), [mod("tests/test_core.py", 700), mod("tests/test_io.py", 300)], "en"
    )
    assert a.importance is LOW
    assert a.importance_reason == "Test-only change (2 files); no runtime code touched"


def test_many_source_files_is_medium_even_when_each_change_is_small():
    files = [mod(f"src/app/m{i}.py", 2, 1) for i in range(22)]
    a = analyse_offline(commit("Update call sites"), files, "en")
    assert a.importance is MEDIUM
    assert "22 source files" in a.importance_reason


def test_commit_totals_are_used_when_the_file_list_is_missing():
    a = analyse_offline(commit("feat: add retries", additions=400, deletions=20, files_changed=6), [], "en")
    assert (a.files_changed, a.additions, a.deletions) == (6, 400, 20)
    assert a.importance is MEDIUM
    assert "file list unavailable" in a.importance_reason
    bare = analyse_offline(commit("docs: typo"), [], "zh")
    assert bare.importance is LOW and bare.importance_reason.startswith("未获取到改动文件")


def test_source_change_without_tests_is_a_risk():
    a = analyse_offline(commit("feat: add retries"), [mod("src/app/retry.py", 150, 10)], "en")
    assert a.importance is MEDIUM
    assert "+150/−10 source lines changed (src/app/retry.py) without any test change" in a.risks
    with_tests = analyse_offline(
        commit("feat: add retries"), [mod("src/app/retry.py", 150, 10), mod("tests/test_retry.py", 80)], "en"
    )
    assert not any("without any test" in r for r in with_tests.risks)


def test_perf_insight_and_advice():
    a = analyse_offline(
        commit("[Perf] Fuse MoE kernels"), [mod("csrc/moe/fused.cu", 200, 90), mod("vllm/moe.py", 20, 5)], "en"
    )
    assert a.importance is MEDIUM
    assert "Marked as a performance change" in a.insights.performance
    assert "csrc/moe/fused.cu" in a.insights.performance
    assert any("csrc/moe/fused.cu" in r for r in a.risks)
    assert any("throughput" in r for r in a.recommendations)


def test_rust_test_modules_and_snapshots_are_not_source_size():
    # `mod tests;` in tests.rs and insta snapshots are tests: a small fix stays small.
    files = [
        mod("crates/app/src/resolver.rs", 12, 4),
        mod("crates/app/src/resolver/tests.rs", 420, 10),
        mod("crates/app/tests/snapshots/app__resolver.snap", 300, 120),
    ]
    a = analyse_offline(commit("Fix resolver ordering"), files, "en")
    assert a.importance is LOW
    assert a.importance_reason == "Bug fix with a small source change (1 file, +12/−4)"
