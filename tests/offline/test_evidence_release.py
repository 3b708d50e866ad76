"""Release evidence: how shipped artefacts are built."""

from __future__ import annotations

from bot.analysis.offline import analyse_offline
from tests.offline.helpers import CARGO_V1, HIGH, LOW, MEDIUM, WHEN, T, analyse_last, commit, mod


def test_build_files_matter_when_they_change_how_shipped_artefacts_are_built():
    flags = analyse_offline(
        commit("Build with native CPU features"),
        [
            mod(
                "CMakeLists.txt",
                1,
                1,
                '@@ -3,1 +3,1 @@ project(app)\n-set(CMAKE_CXX_FLAGS "-O2")\n+set(CMAKE_CXX_FLAGS "-O3 -march=native")',
            )
        ],
        "zh",
    )
    assert flags.importance is MEDIUM
    assert flags.importance_reason.startswith("修改了发布产物的构建方式（-O3 -march=native (CMakeLists.txt)）")
    assert any("各目标平台" in r for r in flags.recommendations)
    # Moving a helper target around changes no flag, profile or dependency of what ships.
    plain = analyse_offline(
        commit("Use the system CUDA"),
        [
            mod(
                "CMakeLists.txt",
                2,
                1,
                "@@ -10,1 +10,2 @@ add_library(app)\n-add_subdirectory(third)\n+add_subdirectory(extern)\n+add_subdirectory(more)",
            )
        ],
        "en",
    )
    assert plain.importance is LOW
    assert "does not change how shipped artefacts are built" in plain.importance_reason


def test_panic_abort_in_release_profile_is_at_least_medium_and_says_what_breaks(repo):
    repo.commit(
        "Set panic = abort for release builds",
        {"Cargo.toml": CARGO_V1.replace("codegen-units = 1\n", 'codegen-units = 1\npanic = "abort"\n')},
        when=WHEN,
    )
    a = analyse_last(repo)
    assert a.importance in (MEDIUM, HIGH), a.importance_reason
    assert "panic" in a.importance_reason and "profile.release" in a.importance_reason
    assert any("catch_unwind" in r for r in a.risks)
    assert "released binaries" in a.impact


def test_abort_panics_in_release_builds_is_no_crash_fix_and_no_dependency_update(repo):
    """Issue 33: "Abort panics in release builds" was called a crash fix (high) and a dependency
    update, with the same recommendation printed twice. It changes how a panic ends the shipped
    binaries (medium, a build change) and says so once."""
    repo.commit(
        "Abort panics in release builds",
        {
            "Cargo.toml": CARGO_V1.replace("codegen-units = 1\n", 'codegen-units = 1\npanic = "abort"\n')
            + '\n[profile.dist]\ninherits = "release"\npanic = "abort"\n'
        },
        when=WHEN,
    )
    for lang in ("en", "zh"):
        a = analyse_last(repo, lang)
        assert a.importance is MEDIUM, a.importance_reason
        assert a.change_type is T.CI_BUILD
        assert "crash" not in a.importance_reason.lower() and "崩溃" not in a.importance_reason
        assert len(a.recommendations) == len(set(a.recommendations)) == 1
        assert len(a.risks) == 2  # one for each profile the edit is in
        assert "`serde`" not in a.summary and "依赖更新" not in a.summary and "Updates" not in a.summary
    # the same edit by a commit that says it fixes a crash of the shipped build is high
    repo.commit(
        "Fix crash on older CPUs by building without native features",
        {"Cargo.toml": CARGO_V1.replace('lto = "fat"', 'lto = "thin"')},
        when=WHEN,
    )
    assert analyse_last(repo).importance is HIGH
