"""Release evidence: how shipped artefacts are built."""

from __future__ import annotations

from bot.analysis.offline import analyse_offline
from tests.offline.helpers import CARGO_V1, HIGH, LOW, MEDIUM, WHEN, analyse_last, commit, mod


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
