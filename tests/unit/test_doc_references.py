"""The docs name files, modules and functions that exist: a path (`eval/stacks/launch.py`), a path with a name
(`eval/stacks/launch.py:launch`) or a dotted name (`store.acceptance.windows`) in README.md, docs/ or
results/README.md that points at nothing fails here (a renamed function, a removed module)."""

from __future__ import annotations

import ast
import re
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("eval", "analysis", "store")
TOPS = (*PACKAGES, "scripts", "tests", "benchmarks", "cohorts", "docs", "results", "locks", ".ci")
PATH = re.compile(r"(?<![\w./-])((?:" + "|".join(re.escape(t) for t in TOPS) + r")/[\w./-]*\w)(?::(\w+))?")
# `eval/spec/checks.py`, `registry_errors`: a name given right after the file it lives in
CODE_DIRS = "|".join((*PACKAGES, "scripts", "benchmarks", "tests"))
PAIR = re.compile(r"`((?:" + CODE_DIRS + r")/[\w./-]+\.py)`,? `([A-Za-z_]\w*)(?:\(\))?`")
DOTTED = re.compile(r"`((?:" + "|".join(PACKAGES) + r")(?:\.\w+)+)`")
PLACEHOLDER = re.compile(r"[<>{}*]|\.\.\.|/N\b|XXX|/x\.\w+$")
# Run outputs (results/<run>/ is ignored by git) and made environments are not in the tree: not checked.
GENERATED = re.compile(r"^results/(?!examples/|README\.md)|/\.venv")


def pages() -> list[Path]:
    return [ROOT / "README.md", ROOT / "results" / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


@cache
def top_names(path: Path) -> dict[str, set[str]]:
    """Names defined at a module's top level, and for each class its own names."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: dict[str, set[str]] = {"": set()}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names[""].add(node.name)
            if isinstance(node, ast.ClassDef):
                names[node.name] = {n.name for n in node.body if hasattr(n, "name")} | {
                    t.id
                    for n in node.body
                    if isinstance(n, ast.AnnAssign | ast.Assign)
                    for t in (n.targets if isinstance(n, ast.Assign) else [n.target])
                    if isinstance(t, ast.Name)
                }
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names[""].update(t.id for t in targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.Import | ast.ImportFrom):
            names[""].update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, ast.If | ast.Try):  # names defined under `if TYPE_CHECKING:` or try/except imports
            for sub in ast.walk(node):
                if isinstance(sub, ast.ImportFrom | ast.Import):
                    names[""].update((a.asname or a.name).split(".")[0] for a in sub.names)
                elif isinstance(sub, ast.FunctionDef | ast.ClassDef):
                    names[""].add(sub.name)
    return names


def module_file(parts: list[str]) -> Path | None:
    base = ROOT.joinpath(*parts)
    if base.with_suffix(".py").is_file():
        return base.with_suffix(".py")
    if (base / "__init__.py").is_file():
        return base / "__init__.py"
    return None


def dotted_missing(name: str) -> str | None:
    parts = name.split(".")
    for cut in range(len(parts), 0, -1):
        found = module_file(parts[:cut])
        if found is None:
            continue
        rest = parts[cut:]
        if not rest:
            return None
        names = top_names(found)
        if rest[0] not in names[""] and not (found.name == "__init__.py" and module_file([*parts[:cut], rest[0]])):
            return f"{'.'.join(parts[:cut])} has no {rest[0]}"
        if len(rest) > 1 and rest[0] in names and rest[1] not in names[rest[0]]:
            return f"{'.'.join(parts[: cut + 1])} has no {rest[1]}"
        return None
    return "no such module"


def path_missing(target: str, name: str | None) -> str | None:
    target = target.rstrip(".")
    if PLACEHOLDER.search(target):
        return None
    path = ROOT / target
    if not path.exists():
        return "no such file"
    if name and path.suffix == ".py" and name not in top_names(path)[""]:
        return f"no {name} in it"
    return None


def broken(text: str) -> list[str]:
    out = []
    for m in PATH.finditer(text):
        if text[m.end() : m.end() + 2].lstrip("-")[:1] in ("*", "<", "{") or GENERATED.search(m.group(1)):
            continue  # a pattern (`cohorts/bugzoo-*.yaml`, `results/<run>/`) or a run's output
        if (why := path_missing(m.group(1), m.group(2))) is not None:
            out.append(f"{m.group(0)}: {why}")
    for m in PAIR.finditer(text):
        path = ROOT / m.group(1)
        if path.is_file() and not any(m.group(2) in names for names in top_names(path).values()):
            out.append(f"{m.group(1)}, {m.group(2)}: no {m.group(2)} in it")
    for m in DOTTED.finditer(text):
        if PLACEHOLDER.search(m.group(1)):
            continue
        if (why := dotted_missing(m.group(1))) is not None:
            out.append(f"{m.group(1)}: {why}")
    return out


def test_docs_name_only_files_and_functions_that_exist() -> None:
    found = [f"{page.relative_to(ROOT)}: {b}" for page in pages() for b in broken(page.read_text(encoding="utf-8"))]
    assert not found, f"{len(found)} references to nothing:\n" + "\n".join(found)


def test_the_check_sees_a_renamed_function_and_a_removed_file() -> None:
    text = (
        "See `eval/stacks/launch.py:find_cohort`, eval/stacks/launch.py:launch, analysis/order.py, "
        "`store.acceptance.windows`, `store.acceptance.window`, `eval.pipeline.select_cohorts` and results/<run>/; "
        "(`eval/spec/load.py`, `_registry_errors`), (`eval/spec/checks.py`, `registry_errors`)."
    )
    assert broken(text) == [
        "eval/stacks/launch.py:find_cohort: no find_cohort in it",
        "analysis/order.py: no such file",
        "eval/spec/load.py, _registry_errors: no _registry_errors in it",
        "store.acceptance.window: store.acceptance has no window",
    ]
