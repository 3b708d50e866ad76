"""Removals: public files, definitions and flags that are gone; moved modules."""

from __future__ import annotations

import pytest

from bot.analysis.offline import analyse_offline
from bot.analysis.repo_config import parse_profile
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


def test_a_pytest_option_dropped_is_a_removed_flag():
    patch = (
        "@@ -222,7 +222,1 @@ def pytest_addoption(parser: Parser) -> None:\n"
        '     group = parser.getgroup("general")\n'
        '-    group.addoption(\n-        "--invalidation-mode",\n-        default="timestamp",\n-    )\n'
    )
    a = analyse_offline(
        commit("Always use checked-hash pyc invalidation"), [mod("src/_pytest/rewrite.py", 0, 4, patch)], "en"
    )
    assert a.importance is HIGH and "--invalidation-mode" in a.importance_reason
    assert a.summary.startswith("Removes the `--invalidation-mode` option")


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


# --- issue 33: moved or re-exported code is not removed ------------------------------------------

CLI_ONE_LINE = """\
import argparse


def build_parser():
    parser = argparse.ArgumentParser()
    parser.add_argument("--format", choices=["markdown", "json"], default="markdown")
    parser.add_argument("--out")
    return parser
"""


@pytest.mark.parametrize(
    "title,new_cli,removed,added,summary",
    [
        # the call split across lines: `--format` is still there, and gains a value
        (
            "digest --format changelog",
            CLI_ONE_LINE.replace(
                '    parser.add_argument("--format", choices=["markdown", "json"], default="markdown")\n',
                '    parser.add_argument(\n        "--format",\n        choices=["markdown", "json", "changelog"],\n'
                '        default="markdown",\n    )\n',
            ),
            (),
            (),
            "`--format` accepts `changelog`",
        ),
        # the flag's name on the line after the call, as a new flag
        (
            "Add --since",
            CLI_ONE_LINE.replace(
                "    return parser", '    parser.add_argument(\n        "--since",\n    )\n    return parser'
            ),
            (),
            ("--since",),
            "adds the `--since` option",
        ),
        # a flag really removed, its call split across lines before
        (
            "Drop --out",
            CLI_ONE_LINE.replace('    parser.add_argument("--out")\n', ""),
            ("--out",),
            (),
            "removes the `--out` option",
        ),
    ],
)
def test_flags_are_read_from_whole_calls_split_across_lines(repo, title, new_cli, removed, added, summary):
    repo.commit("Add the CLI", {"src/app/cli.py": CLI_ONE_LINE}, when=WHEN)
    repo.commit(title, {"src/app/cli.py": new_cli}, when=WHEN)
    a = analyse_last(repo)
    assert summary.lower() in a.summary.lower()
    if removed:
        assert a.importance is HIGH and all(f in a.importance_reason for f in removed)
    else:
        assert a.importance is not HIGH and "Removes" not in a.importance_reason
        assert not any("Removed command-line flags" in r for r in a.risks)
    if added:
        assert all(f in a.importance_reason for f in added)


MODULE = """\
def redact(text):
    return text


class Redactor:
    pass


def scrub(value):
    return value
"""


def test_a_module_turned_into_a_package_that_re_exports_its_names_removes_nothing(repo):
    """Issue 33: `bot/redact.py` → the package `bot/redact/` whose `__init__.py` re-exports every
    name was rated high, "removed the public API of 2 public source files". The import path and
    every name still resolve: nothing is removed, and the summary says what happened."""
    repo.commit("Add the redactor", {"src/app/redact.py": MODULE}, when=WHEN)
    repo.commit(
        "src/app/redact.py → package src/app/redact/, one module per concern",
        {
            "src/app/redact.py": None,
            "src/app/redact/__init__.py": "from .core import Redactor, redact\nfrom .values import scrub\n\n"
            '__all__ = ["Redactor", "redact", "scrub"]\n',
            "src/app/redact/core.py": MODULE.split("\n\n\ndef scrub")[0] + "\n",
            "src/app/redact/values.py": "def scrub(value):\n    return value\n",
        },
        when=WHEN,
    )
    en, zh = analyse_last(repo), analyse_last(repo, "zh")
    assert en.importance is not HIGH, en.importance_reason
    for said in (en.importance_reason, *en.risks):
        assert "Removes public API" not in said and "Deletes" not in said and "moved to" not in said
    assert en.summary.startswith("Splits `src/app/redact.py` into the package `src/app/redact/` (3 modules)")
    assert zh.summary.startswith("`src/app/redact.py` 拆分为包 `src/app/redact/`（3 个模块）")


def test_a_name_the_new_package_does_not_re_export_is_removed(repo):
    repo.commit("Add the redactor", {"src/app/redact.py": MODULE}, when=WHEN)
    repo.commit(
        "Split the redactor",
        {
            "src/app/redact.py": None,
            "src/app/redact/__init__.py": "from .core import Redactor, redact\n",
            "src/app/redact/core.py": MODULE.split("\n\n\ndef scrub")[0] + "\n",
        },
        when=WHEN,
    )
    a = analyse_last(repo)
    assert a.importance is MEDIUM
    assert a.importance_reason == "Removes public definitions scrub; callers must migrate"


def test_an_option_moved_into_a_shared_options_module_is_not_removed():
    """pip's "Package selection CLI group": `list` stops defining `--pre` inline and takes the
    shared `cmdoptions.pre` listed in a new group — the flag moved, nothing users pass went away."""
    inline = (
        "@@ -90,9 +90,0 @@ class ListCommand(IndexGroupCommand):\n"
        '-        self.cmd_opts.add_option(\n-            "--pre",\n-            action="store_true",\n-        )\n'
    )
    group = '@@ -1202,0 +1203,5 @@ index_group = {\n+package_selection_group = {\n+    "options": [\n+        pre,\n+    ],\n+}\n'
    files = [
        mod("src/pip/_internal/commands/list.py", 0, 4, inline),
        mod("src/pip/_internal/cli/cmdoptions.py", 5, 0, group),
    ]
    a = analyse_offline(commit("Package selection CLI group"), files, "en")
    assert a.importance is not HIGH and "--pre" not in a.importance_reason
    # the same removal with no options module naming it is a removal
    alone = analyse_offline(commit("Drop --pre from list"), files[:1], "en")
    assert alone.importance is HIGH and "--pre" in alone.importance_reason
