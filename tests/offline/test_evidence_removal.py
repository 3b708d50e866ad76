"""Removals: public files, definitions and flags that are gone; moved modules."""

from __future__ import annotations

from bot.analysis.offline import analyse_offline
from bot.analysis.profile import parse_profile
from tests.offline.helpers import HIGH, LOW, MEDIUM, WHEN, analyse_last, commit, mod
from tests.offline.vllm_day import VLLM_DAY


def test_removal_reason_names_the_facts_and_the_consequence():
    title, files, *_ = VLLM_DAY[0]
    zh = analyse_offline(commit(title), files, "zh")
    en = analyse_offline(commit(title), files, "en")
    assert zh.importance_reason.startswith("移除了 5 个公开源码文件中的公开 API（−1,674 行）")
    assert "下游会失效" in zh.importance_reason
    assert "Removes public API in 5 source files (−1,674 lines)" in en.importance_reason
    assert any("gptq_marlin_24.py" in r for r in zh.risks)
    assert "删除了 5 个源码文件" in zh.insights.architecture


def test_removed_public_api_in_modified_files():
    patch = (
        "@@ -10,8 +10,2 @@ class Engine:\n"
        "-def generate_legacy(prompt):\n-    return run(prompt)\n"
        "-class LegacySampler:\n-    pass\n"
        "     def step(self):\n"
        "-def _private_helper():\n-    pass\n"
    )
    a = analyse_offline(commit("Clean up engine"), [mod("src/app/engine.py", 0, 6, patch)], "en")
    assert a.importance is MEDIUM
    assert "generate_legacy" in a.importance_reason and "LegacySampler" in a.importance_reason
    assert "_private_helper" not in a.importance_reason


def test_function_moved_between_files_is_not_a_removal():
    a = analyse_offline(
        commit("Move helper"),
        [
            mod("src/app/a.py", 0, 2, "@@ -1,2 +0,0 @@\n-def helper(x):\n-    return x"),
            mod("src/app/b.py", 2, 0, "@@ -0,0 +1,2 @@\n+def helper(x):\n+    return x"),
        ],
        "en",
    )
    assert a.importance is LOW


def test_removed_cli_flags():
    removed = '@@ -5,2 +5,1 @@\n-    parser.add_argument("--legacy-mode", action="store_true")\n     parser.add_argument("--port")\n'
    a = analyse_offline(commit("Simplify the CLI"), [mod("src/app/cli.py", 0, 1, removed)], "en")
    assert a.importance is HIGH and "--legacy-mode" in a.importance_reason


def test_moved_python_module_breaks_old_imports():
    a = analyse_offline(
        commit("Reorganise utils"),
        [mod("src/app/utils/text.py", 0, 0, status="renamed", previous_path="src/app/text_utils.py")],
        "en",
    )
    assert a.importance is MEDIUM
    assert any("src/app/text_utils.py moved to src/app/utils/text.py" in r for r in a.risks)


def test_internal_pub_fn_new_is_not_a_public_removal(repo):
    repo.commit(
        "Remove Resolver::new in favour of Default",
        {
            "crates/app_core/src/lib.rs": "pub struct Resolver {}\n\nimpl Default for Resolver {\n"
            "    fn default() -> Self {\n        Resolver {}\n    }\n}\n"
        },
        when=WHEN,
    )
    a = analyse_last(repo)
    assert a.importance is LOW, a.importance_reason
    assert "callers must migrate" not in a.importance_reason
    assert not any("Public definitions" in r for r in a.risks)


def test_removed_top_level_item_on_the_declared_surface_is_a_removal(repo):
    repo.commit("Remove the Resolver type", {"crates/app_core/src/lib.rs": "pub struct Other {}\n"}, when=WHEN)
    profile = parse_profile('[surface]\npackages = ["crates/app_core/"]\n')
    a = analyse_last(repo, profile=profile)
    assert a.importance is MEDIUM
    assert "Resolver" in a.importance_reason and "callers must migrate" in a.importance_reason
    # Without the profile, a member crate of a workspace is internal by default.
    assert analyse_last(repo).importance is LOW


def test_deleting_tests_is_low_and_not_a_removal(repo):
    repo.commit("Remove the resolver tests", {"tests/test_resolver.py": None}, when=WHEN)
    a = analyse_last(repo)
    assert a.importance is LOW
    assert a.importance_reason == "Test-only change (1 file); no runtime code touched"
