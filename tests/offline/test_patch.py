"""The diff scanners: what unified patches show, line by line (patch.py). The patches are the shape
git and GitHub print; the commits in real repositories are exercised through the evidence tests."""

from __future__ import annotations

from bot.analysis.offline.patch import (
    MAX_PATCH_LINE,
    assignments,
    change_blocks,
    diff_lines,
    lockfile_updates,
    manifest_blocks,
    new_refusals,
    requirements,
)
from bot.analysis.offline.scan import scan_source
from bot.analysis.offline.stats import file_stats
from bot.analysis.repo_config import RepoProfile, parse_profile
from tests.offline.helpers import commit, mod

PATCH = (
    "--- a/src/app/engine.py\n+++ b/src/app/engine.py\n"
    "@@ -10,4 +10,4 @@ class Engine:\n"
    "     def step(self):\n"
    "-        return 1\n"
    "+        return 2\n"
    "     x = 1\n"
    "-y = 1\n"
)


def test_diff_lines_marks_hunks_and_skips_file_headers():
    lines = list(diff_lines(PATCH))
    assert lines[0] == ("@", "@@ -10,4 +10,4 @@ class Engine:")
    assert ("-", "        return 1") in lines and ("+", "        return 2") in lines
    assert not any(text.startswith(("++", "--")) for _, text in lines)


def test_a_huge_line_is_a_blank_context_line():
    patch = "@@ -1 +1 @@\n-" + "a" * (MAX_PATCH_LINE + 1) + "\n+b"
    assert list(diff_lines(patch)) == [("@", "@@ -1 +1 @@"), (" ", ""), ("+", "b")]
    assert list(diff_lines(None)) == []


def test_change_blocks_pair_removed_lines_with_their_replacement():
    assert list(change_blocks(PATCH)) == [(["        return 1"], ["        return 2"]), (["y = 1"], [])]


def test_manifest_blocks_know_their_section_from_context_and_hunk_headers():
    patch = (
        "@@ -5,6 +5,6 @@ [project]\n"
        ' name = "app"\n-version = "1.0"\n+version = "1.1"\n'
        ' [dependency-groups]\n dev = [\n-  "pytest>=7",\n+  "pytest>=8",\n ]\n'
    )
    assert list(manifest_blocks(patch)) == [
        ("project", ['version = "1.0"'], ['version = "1.1"']),
        ("dev", ['  "pytest>=7",'], ['  "pytest>=8",']),
    ]


def test_assignments_read_literal_settings_not_prose_or_deep_code():
    found = assignments(
        [
            "max_num_seqs: int = 256",
            'description = "The cache"',
            "        deep = 3",
            'timeout = float(os.getenv("APP_TIMEOUT", 30))',
            "enabled = True  # why",
        ],
        False,
    )
    assert found == {"max_num_seqs": "256", "APP_TIMEOUT": "30", "enabled": "True"}


def test_requirements_read_names_and_versions_of_many_manifest_styles():
    assert requirements(
        [
            "pydantic>=2.7,<3",
            'serde = { version = "1.0.228", features = ["derive"] }',
            '"lodash": "^4.17.21",',
            "require github.com/x/y v1.2.3",
            "python_requires = 3.9",
        ]
    ) == {"pydantic": "2.7", "serde": "1.0.228", "lodash": "4.17.21", "github.com/x/y": "1.2.3"}


def test_lockfile_updates_name_each_package_whose_version_changed():
    patch = (
        '@@ -10,7 +10,7 @@\n [[package]]\n name = "serde"\n-version = "1.0.228"\n+version = "1.0.229"\n'
        ' source = "registry"\n@@ -40,3 +40,3 @@\n [[package]]\n name = "anyio"\n version = "4.0.0"\n'
    )
    assert lockfile_updates(mod("uv.lock", 1, 1, patch)) == [("serde", "1.0.228", "1.0.229")]


def test_scan_source_finds_public_definitions_flags_and_hunk_names():
    patch = (
        "@@ -1,6 +1,6 @@ def build_parser():\n"
        "-def old_api(x):\n+def new_api(x):\n"
        "-def _private(x):\n"
        '-    p.add_argument("--legacy")\n+    p.add_argument("--modern")\n'
        '     p.add_argument("--port")\n'  # a hidden flag is told apart by its change block
        '+    p.add_argument("--secret", help=argparse.SUPPRESS)\n'
        "@@ -40,2 +40,2 @@ def test_helper():\n-    a = 1\n+    a = 2\n"
    )
    stats = file_stats(
        commit("x"),
        [
            mod("src/app/cli.py", 4, 4, patch),
            mod("src/app/gone.py", 0, 2, "@@ -1,2 +0,0 @@\n-class Removed:\n-    pass", status="removed"),
        ],
    )
    scan = scan_source(stats, RepoProfile.inferred())
    assert scan.removed_defs == {"old_api": False, "Removed": True}  # `_private` is private by convention
    assert scan.added_defs == {"new_api"}
    assert (scan.flags_removed, scan.flags_added, scan.hidden_flags) == (
        {"--legacy"},
        {"--modern", "--secret"},
        {"--secret"},
    )
    assert scan.hunk_names == ["build_parser"]  # test helpers are not what a change is about


def test_scan_source_only_reads_definitions_on_the_public_surface():
    patch = "@@ -1,2 +0,0 @@\n-pub fn resolve() {}\n-pub struct Resolver;\n"
    stats = file_stats(commit("x"), [mod("crates/core/src/lib.rs", 0, 2, patch)])
    assert scan_source(stats, RepoProfile.inferred()).removed_defs == {}  # a workspace member: internal
    declared = parse_profile('[surface]\npackages = ["crates/core/"]\n')
    assert scan_source(stats, declared).removed_defs == {"resolve": False, "Resolver": False}


def refusals(path: str, patch: str) -> list[str]:
    return new_refusals(mod(path, 1, 1, patch))


def test_new_refusals_are_checks_the_code_adds():
    # A new check: a raise, a `return False`, a Rust error return, a thrown error under a condition.
    assert refusals(
        "src/app/budget.py",
        "@@ -3,2 +3,4 @@ def fit(prompt, limit):\n     n = count(prompt)\n"
        '+    if n > limit:\n+        raise ValueError(f"{n} > {limit}")\n     return n\n',
    ) == ['raise ValueError(f"")']
    assert refusals(
        "src/app/hashes.py",
        "@@ -1,3 +1,5 @@\n def verify(hashes, strict):\n"
        "+    if strict and set(hashes) == {'md5'}:\n+        return False\n     return True\n",
    ) == ["return False"]
    assert refusals(
        "crates/app/src/lib.rs",
        "@@ -8,2 +8,5 @@ impl Resolver {\n     fn add(&self, name: &str) -> Result<()> {\n"
        "+        if name.is_empty() {\n+            return Err(Error::Empty);\n+        }\n         Ok(())\n",
    ) == ["return Err(Error::Empty);"]
    assert refusals(
        "web/src/form.ts", '@@ -1,1 +1,2 @@\n function submit(x) {\n+  if (!x.name) throw new Error("name");\n'
    ) == ['if (!x.name) throw new Error("");']
    # A tightened condition over an existing raise refuses input that used to pass.
    assert refusals(
        "src/app/entry_points.py",
        "@@ -4,3 +4,3 @@ def check_entry_point(name):\n"
        "-    if name in RESERVED:\n+    if name.lower() in RESERVED:\n"
        '         raise ValueError(f"reserved entry point: {name}")\n',
    ) == ['if name.lower() in RESERVED: raise ValueError(f"")']


def test_words_in_comments_strings_and_docstrings_are_not_checks():
    # "refuse", "reject", "reserved", even "raise" in a comment, a string or a docstring do nothing.
    assert (
        refusals(
            "src/app/budget.py",
            "@@ -1,3 +1,8 @@\n def fit(prompt, limit):\n"
            '+    """Tokens are reserved for the output per request;\n'
            "+    if n > limit:\n+        raise ValueError  (an example in the docstring)\n"
            '+    """\n'
            "+    # if the prompt is too long we refuse it: raise ValueError\n"
            '+    note = "reject: output reserved per request"\n'
            "     return count(prompt)\n",
        )
        == []
    )
    assert (
        refusals(
            "web/src/form.ts",
            "@@ -1,1 +1,2 @@\n function submit(x) {\n+  // if (!x.name) throw new Error('reserved')\n",
        )
        == []
    )


def test_moved_reworded_or_translated_raises_are_not_new_checks():
    # The same check moved (or its message reworded) is not a new one.
    assert (
        refusals(
            "src/app/budget.py",
            "@@ -1,6 +1,6 @@\n def fit(prompt, limit):\n     if n > limit:\n"
            '-        raise ValueError("too long")\n+        raise ValueError("the prompt is too long")\n',
        )
        == []
    )
    # A raise that translates an exception is not a validation, and neither is an unconditional one.
    assert (
        refusals(
            "src/app/io.py",
            "@@ -1,3 +1,6 @@\n def read(p):\n     try:\n         return open(p).read()\n"
            "+    except OSError as e:\n+        raise ReadError(p) from e\n",
        )
        == []
    )
    assert refusals("src/app/io.py", "@@ -1,1 +1,2 @@\n def old():\n+    raise NotImplementedError\n") == []


def test_scan_names_what_each_file_adds_removes_and_changes_and_what_tests_and_docs_add():
    code = (
        "@@ -1,9 +1,12 @@ import os\n"
        " def keep(x):\n-    return x\n+    return x + 1\n"
        "-def gone(y):\n-    return y\n"
        '+def fresh(z):\n+    return os.environ.get("APP_DEPTH", z)\n'
        '     parser.add_argument(\n         "--format",\n-        choices=["md"],\n+        choices=["md", "changelog"],\n     )\n'
        "+#[test]\n+fn inline_case() {}\n"
    )
    tests = "@@ -0,0 +1,4 @@\n+def test_fresh():\n+    assert fresh(1)\n+def helper():\n+    pass\n"
    docs = "@@ -1,2 +1,4 @@\n # Guide\n+## Changelog output\n+Text.\n"
    stats = file_stats(
        commit("x"),
        [mod("src/app/cli.py", 7, 4, code), mod("tests/test_cli.py", 4, 0, tests), mod("docs/guide.md", 2, 0, docs)],
    )
    scan = scan_source(stats, RepoProfile.inferred())
    (delta,) = scan.deltas
    assert (delta.path, delta.added, delta.removed, delta.changed) == (
        "src/app/cli.py",
        ("fresh",),
        ("gone",),
        ("keep",),
    )
    assert scan.flags_changed() == [("--format", ("changelog",))]
    assert scan.flags_removed == scan.flags_added == set()
    assert sorted(scan.tests_added) == ["inline_case", "test_fresh"]
    assert scan.headings_added == ["Changelog output"]
    assert scan.env_added == ["APP_DEPTH"]


def test_a_package_entry_that_imports_a_name_keeps_it_importable():
    init = '@@ -0,0 +1,3 @@\n+from .core import Redactor, redact\n+\n+__all__ = ["Redactor", "redact"]\n'
    gone = "@@ -1,4 +0,0 @@\n-def redact(text):\n-    return text\n-class Redactor:\n-    pass\n"
    stats = file_stats(
        commit("x"),
        [
            mod("src/app/redact.py", 0, 4, gone, status="removed"),
            mod("src/app/redact/__init__.py", 3, 0, init, status="added"),
        ],
    )
    scan = scan_source(stats, RepoProfile.inferred())
    assert set(scan.removed_defs) == {"redact", "Redactor"}
    assert {"redact", "Redactor"} <= scan.added_defs  # re-exported: not removed


def test_requirements_in_poetry_style_parentheses():
    assert requirements(['    "poetry-core (==2.3.2)",', '    "build (>=1.2.1,<2.0.0)",']) == {
        "poetry-core": "2.3.2",
        "build": "1.2.1",
    }
