"""`eval` (the pipeline) and `analysis` (reads results only) never import each other; both may import `store` (the
results directory), which imports nothing else of specqual."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def imported_roots(package: str) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for path in (REPO / package).rglob("*.py"):
        roots: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                roots.update(a.name.split(".")[0] for a in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                roots.add(node.module.split(".")[0])
            elif isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "import_module" and node.args:
                arg = node.args[0]
                if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                    roots.add(arg.value.split(".")[0])
        out[str(path.relative_to(REPO))] = roots
    return out


@pytest.mark.parametrize(("package", "forbidden"), [("eval", "analysis"), ("analysis", "eval")])
def test_packages_do_not_import_each_other(package: str, forbidden: str) -> None:
    offenders = [f for f, roots in imported_roots(package).items() if forbidden in roots]
    assert not offenders, f"{package} imports {forbidden} in {offenders}"


def test_store_imports_nothing_of_the_project() -> None:
    offenders = {f: roots & {"eval", "analysis", "scripts", "tests"} for f, roots in imported_roots("store").items()}
    assert not {f: r for f, r in offenders.items() if r}, offenders


def test_the_check_sees_imports() -> None:
    assert "eval" in imported_roots("eval")["eval/cli.py"]
