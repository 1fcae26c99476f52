"""The packages of `eval` form layers: every import (at module level, inside a function or for types only) points
down, and no circle runs across packages.

A package is `eval.<name>` (a subpackage, or a top-level module such as `eval.plan`). `LAYERS` lists them from
the bottom up; an import may only point to a lower layer. A new package not listed yet is still checked for
circles; add it to the layer it belongs to. The top-level `store` package (the results directory) sits below all of
`eval` and imports nothing of it: tests/unit/test_boundaries.py checks that.
"""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

LAYERS: list[set[str]] = [
    {"eval", "eval.secrets", "eval.registry", "eval.progress"},  # names and helpers that import nothing of specqual
    {"eval.spec"},  # the cohort file
    {"eval.store"},  # the results directory
    {"eval.stacks"},  # builds and serving stacks
    {"eval.protocols"},  # the stages' shapes (names spec, store and stack types)
    {"eval.tasks", "eval.classify", "eval.stages"},
    {"eval.images", "eval.agent"},
    {"eval.sandbox", "eval.models"},  # models: generators of test models (the organism uses the agent's tools)
    {"eval.grading"},
    {"eval.rollout", "eval.canary", "eval.bisect"},  # the workloads (bisect: a judge over builds)
    {"eval.importers", "eval.uptime"},  # uptime: canary phases and a soak around a running stack
    {"eval.executors"},  # where stacks and rollouts run
    {"eval.plan", "eval.pipeline", "eval.render"},
    {"eval.commands"},
    {"eval.cli"},
]


def module_name(path: Path, base: Path) -> str:
    parts = list(path.relative_to(base).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def package_of(module: str) -> str:
    return ".".join(module.split(".")[:2])


def imported_modules(tree: ast.AST) -> set[str]:
    """Every absolute import in the tree, anywhere (inside functions and `if TYPE_CHECKING:` too)."""
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.add(node.module)
            out.update(f"{node.module}.{a.name}" for a in node.names)
    return out


def package_edges(root: Path = REPO / "eval") -> dict[tuple[str, str], list[str]]:
    """(importing package, imported package) -> the modules that make the arrow."""
    paths = {module_name(p, root.parent): p for p in root.rglob("*.py")}
    edges: dict[tuple[str, str], list[str]] = {}
    for module, path in sorted(paths.items()):
        for target in imported_modules(ast.parse(path.read_text(encoding="utf-8"))):
            if target in paths and package_of(target) != package_of(module):
                edges.setdefault((package_of(module), package_of(target)), []).append(f"{module} -> {target}")
    return edges


def circles(edges: dict[tuple[str, str], list[str]]) -> list[list[str]]:
    """Strongly connected sets of two packages or more (Tarjan)."""
    graph: dict[str, set[str]] = {}
    for a, b in edges:
        graph.setdefault(a, set()).add(b)
        graph.setdefault(b, set())
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while (w := stack.pop()) != v:
                component.append(w)
            component.append(v)
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def upward(edges: dict[tuple[str, str], list[str]]) -> list[str]:
    level = {pkg: i for i, layer in enumerate(LAYERS) for pkg in layer}
    return [
        f"{a} (layer {level[a]}) imports {b} (layer {level[b]}): {', '.join(why)}"
        for (a, b), why in sorted(edges.items())
        if a in level and b in level and level[b] >= level[a]
    ]


def test_no_circle_across_packages() -> None:
    edges = package_edges()
    found = circles(edges)
    detail = [f"{c}: " + "; ".join(w for (a, b), why in edges.items() if a in c and b in c for w in why) for c in found]
    assert not found, "\n".join(detail)


def test_every_import_points_down() -> None:
    assert not (bad := upward(package_edges())), "\n".join(bad)


def test_the_checks_see_a_circle_and_an_upward_arrow(tmp_path: Path) -> None:
    pkg = tmp_path / "eval"
    (pkg / "spec").mkdir(parents=True)
    (pkg / "spec" / "__init__.py").write_text("def f():\n    from eval.plan import x\n")
    (pkg / "plan.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from eval.spec import y\n")
    edges = package_edges(pkg)
    assert circles(edges) == [["eval.plan", "eval.spec"]]
    assert upward(edges) == ["eval.spec (layer 1) imports eval.plan (layer 12): eval.spec -> eval.plan"]
