"""The product's import graph, read from the code: circles, floors, upward imports, long modules.

    python tools/import_graph.py            # the summary (exit 1 when a rule is broken)
    python tools/import_graph.py --edges    # every edge, for reading
    python tools/import_graph.py --chain    # the longest chain of imports

Every import counts: module level, inside functions and under `TYPE_CHECKING`, because each is a
dependency someone has to hold in their head (hiding one in a function hides it from tools, not from
readers). A package's `__init__` counts as the module `pkg`. `tests/test_structure.py` holds the
rules below; the figures go in docs/architecture.md.
"""

from __future__ import annotations

import argparse
import ast
import sys
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# The product: what ships. Tests, bench and tools may import anything.
PRODUCT = ("bot", "handlers", "settings")

MAX_FLOORS = 12
MAX_LINES = 600


@dataclass
class Graph:
    modules: dict[str, Path]
    edges: dict[str, set[str]] = field(default_factory=dict)

    def lines(self, module: str) -> int:
        return len(self.modules[module].read_text(encoding="utf-8").splitlines())


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def product_files() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for top in PRODUCT:
        single = ROOT / f"{top}.py"
        if single.exists():
            found[top] = single
            continue
        for path in sorted((ROOT / top).rglob("*.py")):
            if "__pycache__" not in path.parts:
                found[module_name(path)] = path
    return found


def _resolve(module: str, is_package: bool, level: int, target: str | None) -> str:
    if level == 0:
        return target or ""
    base = module.split(".")
    # `from . import x` in a package's __init__ is relative to the package itself.
    keep = len(base) - level + (1 if is_package else 0)
    prefix = ".".join(base[:keep])
    return f"{prefix}.{target}" if target else prefix


def read(modules: dict[str, Path] | None = None) -> Graph:
    modules = modules if modules is not None else product_files()
    graph = Graph(modules)
    for name, path in modules.items():
        is_package = path.name == "__init__.py"
        deps: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    deps.add(_nearest(alias.name, modules))
            elif isinstance(node, ast.ImportFrom):
                base = _resolve(name, is_package, node.level, node.module)
                for alias in node.names:
                    sub = f"{base}.{alias.name}"
                    deps.add(sub if sub in modules else _nearest(base, modules))
        deps.discard("")
        deps.discard(name)
        graph.edges[name] = {d for d in deps if d in modules}
    return graph


def _nearest(dotted: str, modules: dict[str, Path]) -> str:
    parts = dotted.split(".")
    while parts:
        candidate = ".".join(parts)
        if candidate in modules:
            return candidate
        parts.pop()
    return ""


def cycles(graph: Graph) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    sys.setrecursionlimit(10_000)
    for v in sorted(graph.edges):
        if v not in index:
            visit(v)
    return found


def floors(graph: Graph) -> dict[str, int]:
    """A module's floor: 1 + the highest floor it imports (modules importing nothing are floor 1).
    Members of a circle share a floor, so the figure stays defined while circles exist."""
    component_of: dict[str, str] = {}
    for members in cycles(graph):
        for m in members:
            component_of[m] = members[0]

    @cache
    def floor(v: str) -> int:
        group = [m for m in graph.edges if component_of.get(m, m) == component_of.get(v, v)]
        below = [floor(w) for m in group for w in graph.edges[m] if component_of.get(w, w) != component_of.get(v, v)]
        return 1 + max(below, default=0)

    return {v: floor(v) for v in graph.edges}


def longest_chain(graph: Graph) -> list[str]:
    level = floors(graph)
    top = max(level, key=lambda v: (level[v], v))
    chain = [top]
    while level[chain[-1]] > 1:
        here = chain[-1]
        nxt = max(
            (w for w in graph.edges[here] if level[w] == level[here] - 1),
            default=None,
        )
        if nxt is None:
            break
        chain.append(nxt)
    return chain


def _package(module: str) -> str:
    parts = module.split(".")
    return ".".join(parts[:2]) if len(parts) > 1 else parts[0]


def package_edges(graph: Graph) -> dict[str, set[str]]:
    """Imports between packages (`bot.render`, `handlers.slack`, the flat `bot.x` modules each
    their own), for the upward-import rule: a package graph without circles."""
    edges: dict[str, set[str]] = {}
    for v, deps in graph.edges.items():
        pv = _package(v)
        for w in deps:
            pw = _package(w)
            # A package's __init__ re-exporting its own members is not an upward import.
            if pw != pv and not pv.startswith(pw + ".") and not pw.startswith(pv + "."):
                edges.setdefault(pv, set()).add(pw)
        edges.setdefault(pv, set())
    return edges


def upward(graph: Graph) -> list[tuple[str, str]]:
    """Module imports that close a circle between packages: the edge v→w where w's package also
    reaches v's package. With none, every package sits on a floor above everything it imports."""
    pg = Graph(modules={}, edges=package_edges(graph))
    circle_of: dict[str, int] = {}
    for i, members in enumerate(cycles(pg)):
        for m in members:
            circle_of[m] = i
    return sorted(
        (v, w)
        for v, deps in graph.edges.items()
        for w in deps
        if _package(v) != _package(w)
        and _package(v) in circle_of
        and circle_of.get(_package(w)) == circle_of[_package(v)]
    )


def long_modules(graph: Graph, limit: int = MAX_LINES) -> list[tuple[str, int]]:
    return sorted(
        ((m, graph.lines(m)) for m in graph.modules if graph.lines(m) > limit),
        key=lambda item: -item[1],
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--edges", action="store_true")
    parser.add_argument("--chain", action="store_true")
    args = parser.parse_args(argv)
    graph = read()
    if args.edges:
        for v in sorted(graph.edges):
            for w in sorted(graph.edges[v]):
                print(f"{v} -> {w}")
        return 0
    level = floors(graph)
    found = cycles(graph)
    ups = upward(graph)
    big = long_modules(graph)
    flat = [m for m in graph.modules if m.count(".") == 1 and m.startswith("bot.")]
    flat = [m for m in flat if graph.modules[m].name not in ("__init__.py", "__main__.py")]
    print(f"modules: {len(graph.modules)}")
    print(f"floors: {max(level.values())} (at most {MAX_FLOORS})")
    print(f"circles: {len(found)}")
    for members in found:
        print("  " + " ↔ ".join(members))
    print(f"upward imports (between packages that import each other): {len(ups)}")
    for v, w in ups:
        print(f"  {v} -> {w}")
    print(f"modules over {MAX_LINES} lines: {len(big)}")
    for m, n in big:
        print(f"  {m}: {n}")
    print(f"flat modules in bot/: {len(flat)}")
    if args.chain:
        print("longest chain: " + " -> ".join(longest_chain(graph)))
    broken = found or ups or big or max(level.values()) > MAX_FLOORS
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
