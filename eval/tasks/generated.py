"""A seeded generator of many small task instances of the local set's bug families (the organism's task set).

Families: off-by-one, wrong operator, wrong index, wrong constant. Every instance is a real git repository
(built with `eval.tasks.local_set.build_repo`, so gold and empty patches behave as in the local set) with a
module of a few functions, one of them buggy, and a test file. Names, paths and values vary with the seed.

The problem statement says what is wrong AND which text to change into which: the skill the organism needs is
reading and copying, not knowing Python. Held-out instances (split `heldout`) use seeds the training split
(`train`) never uses, so a model that resolves them copies names and values it has not seen in that
combination. Every edit is regex-safe for a `sed -i 's|OLD|NEW|' FILE` (no `| [ ] * . ^ $ \\ &` and no quotes).

Dataset name in a cohort file: `specqual/generated` with `split: heldout` (or `train`) and `limit: N`.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from eval.tasks.local_set import build_repo
from eval.tasks.local_specs import RepoSpec

GENERATOR_VERSION = "1"
DATASET = "specqual/generated"
# Seed offsets: the splits never share a seed. `valid` is what the organism's training checks itself on (to
# decide when to stop); `heldout` is what cohorts measure it on, never seen in training in any way.
SPLITS = {"train": 0, "heldout": 1_000_000, "valid": 2_000_000}
DEFAULT_COUNT = {"train": 400, "heldout": 200, "valid": 100}
FAMILIES = ("off_by_one", "wrong_operator", "wrong_index", "wrong_constant")

PACKAGES = [
    "ledger",
    "shelf",
    "orbit",
    "quill",
    "harbor",
    "lumen",
    "cobalt",
    "falcon",
    "meadow",
    "prism",
    "tundra",
    "vertex",
    "willow",
    "amber",
    "basalt",
    "cedar",
    "delta",
    "ember",
    "fjord",
    "garnet",
    "haven",
    "iris",
    "juniper",
    "kestrel",
    "lagoon",
    "maple",
    "nectar",
    "onyx",
    "pebble",
    "quartz",
    "raven",
    "sierra",
    "topaz",
    "umber",
    "velvet",
    "walnut",
    "yarrow",
    "zephyr",
    "anchor",
    "beacon",
    "canyon",
    "dune",
]
MODULES = ["core", "util", "calc", "ops", "tools", "helpers", "logic", "rules", "stats", "metrics"]
NOUNS = [
    "items",
    "values",
    "scores",
    "prices",
    "weights",
    "counts",
    "rows",
    "parts",
    "tasks",
    "steps",
    "names",
    "ranks",
    "votes",
    "sizes",
    "days",
    "hours",
    "notes",
    "cards",
    "coins",
    "files",
    "jobs",
]
VERBS = ["total", "measure", "count", "pick", "select", "check", "limit", "scale", "compute", "summarize"]


@dataclass(frozen=True)
class Edit:
    """One generated bug: the buggy and fixed source, the text to replace, and the tests."""

    family: str
    source: str  # module source at the base commit
    old: str  # the buggy text (unique in the module)
    new: str  # the fixed text
    tests_base: str  # tests that pass before and after (PASS_TO_PASS)
    tests_new: str  # tests the fix must make pass (FAIL_TO_PASS)
    symptom: str  # one sentence of the problem statement


def _ident(rng: random.Random, pool: list[str], avoid: set[str]) -> str:
    name = rng.choice([p for p in pool if p not in avoid])
    avoid.add(name)
    return name


def _off_by_one(rng: random.Random, mod: str, names: set[str]) -> Edit:
    fn, seq = f"{rng.choice(VERBS)}_{_ident(rng, NOUNS, names)}", _ident(rng, NOUNS, names)
    start = rng.randint(2, 9)
    src = f"def {fn}({seq}):\n    result = 0\n    for i in range(len({seq}) - 1):\n        result += {seq}[i]\n"
    src += f"    return result + {start}\n"
    values = [rng.randint(1, 20) for _ in range(3)]
    want, got = sum(values) + start, sum(values[:-1]) + start
    return Edit(
        "off_by_one", src, f"range(len({seq}) - 1)", f"range(len({seq}))",
        f"def test_{fn}_empty():\n    assert {fn}([]) == {start}\n",
        f"def test_{fn}_all():\n    assert {fn}({values}) == {want}\n",
        f"`{mod}.{fn}({values})` returns {got} instead of {want}: it skips the last element.",
    )  # fmt: skip


def _wrong_operator(rng: random.Random, mod: str, names: set[str]) -> Edit:
    fn, a, b = f"{rng.choice(VERBS)}_{_ident(rng, NOUNS, names)}", "low", "high"
    limit = rng.randint(10, 90)
    wrong, right = rng.choice([("<=", "<"), (">=", ">")])
    cond = f"{a} {wrong} {limit}"
    src = f"def {fn}({a}, {b}):\n    if {cond}:\n        return {b} - {a}\n    return {a} + {b}\n"
    x = limit  # the boundary value shows the bug
    y = rng.randint(100, 200)
    want = x + y
    far = limit + 50 if right == "<" else limit - 50  # both versions take the second branch here
    return Edit(
        "wrong_operator", src, cond, f"{a} {right} {limit}",
        f"def test_{fn}_far():\n    assert {fn}({far}, {y}) == {far + y}\n",
        f"def test_{fn}_boundary():\n    assert {fn}({x}, {y}) == {want}\n",
        f"`{mod}.{fn}({x}, {y})` returns {y - x} instead of {want}: the comparison with {limit} is wrong.",
    )  # fmt: skip


def _wrong_index(rng: random.Random, mod: str, names: set[str]) -> Edit:
    fn, seq = f"{rng.choice(['last', 'newest', 'latest', 'final'])}_{_ident(rng, NOUNS, names)}", "stack"
    src = f"def {fn}({seq}):\n    if not {seq}:\n        return None\n    return {seq}.pop(0)\n"
    values = rng.sample(range(1, 99), 3)
    return Edit(
        "wrong_index", src, f"{seq}.pop(0)", f"{seq}.pop()",
        f"def test_{fn}_empty():\n    assert {fn}([]) is None\n",
        f"def test_{fn}_takes_last():\n    assert {fn}({values}) == {values[-1]}\n",
        f"`{mod}.{fn}({values})` returns {values[0]} instead of {values[-1]}: it takes the first item.",
    )  # fmt: skip


def _wrong_constant(rng: random.Random, mod: str, names: set[str]) -> Edit:
    noun = _ident(rng, NOUNS, names)
    const, fn = f"{noun.upper()}_LIMIT", f"cap_{noun}"
    right = rng.randint(10, 99)
    wrong = right + rng.choice([-7, -3, 2, 5, 11])
    src = f"{const} = {wrong}\n\n\ndef {fn}(n):\n    return min(n, {const})\n"
    return Edit(
        "wrong_constant", src, f"{const} = {wrong}", f"{const} = {right}",
        f"def test_{fn}_small():\n    assert {fn}(1) == 1\n",
        f"def test_{fn}_limit():\n    assert {fn}(1000) == {right}\n",
        f"`{mod}.{fn}(1000)` returns {wrong} instead of {right}: the limit should be {right}.",
    )  # fmt: skip


MAKERS = {"off_by_one": _off_by_one, "wrong_operator": _wrong_operator, "wrong_index": _wrong_index,
          "wrong_constant": _wrong_constant}  # fmt: skip


def _distractor(rng: random.Random, names: set[str]) -> str:
    noun = _ident(rng, NOUNS, names)
    k = rng.randint(2, 9)
    return f"def scale_{noun}(x):\n    return x * {k}\n"


def make_spec(split: str, index: int) -> RepoSpec:
    """Instance `index` of `split`: deterministic in (split, index, generator version)."""
    seed = SPLITS[split] + index
    rng = random.Random(f"specqual-generated-v{GENERATOR_VERSION}-{seed}")
    family = FAMILIES[index % len(FAMILIES)]
    package = f"{rng.choice(PACKAGES)}{rng.randint(1, 99)}"
    module = rng.choice(MODULES)
    path, dotted = f"{package}/{module}.py", f"{package}.{module}"
    names: set[str] = set()
    edit = MAKERS[family](rng, dotted, names)
    before = _distractor(rng, names)
    body = f"{before}\n\n{edit.source}" if rng.random() < 0.5 else f"{edit.source}\n\n{before}"
    source = f'"""{package} {module} helpers."""\n\n\n{body}'
    if source.count(edit.old) != 1:
        raise AssertionError(f"generated edit is not unique in {path}: {edit.old!r}")
    test_path = f"tests/test_{module}.py"
    imports = f"from {dotted} import *  # noqa: F403\n\n\n"
    test_base = imports + edit.tests_base
    name = f"{package}-{module}-{split}{index}"
    statement = f"{edit.symptom}\n\nFix: replace `{edit.old}` with `{edit.new}` in `{path}`.\n"
    return RepoSpec(
        name=name,
        files={path: source, test_path: test_base},
        fix={path: source.replace(edit.old, edit.new)},
        tests={test_path: test_base + "\n\n" + edit.tests_new},
        problem_statement=statement,
        fail_to_pass=[f"{test_path}::{_test_name(edit.tests_new)}"],
        pass_to_pass=[f"{test_path}::{_test_name(edit.tests_base)}"],
        hints_text=edit.family,
    )


def _test_name(test_source: str) -> str:
    return test_source.split("def ", 1)[1].split("(", 1)[0]


def fix_of(record: dict[str, Any]) -> tuple[str, str, str]:
    """(path, old, new) of a generated instance, read back from its problem statement."""
    line = record["problem_statement"].rsplit("Fix: replace `", 1)[1]
    old, rest = line.split("` with `", 1)
    new, rest = rest.split("` in `", 1)
    return rest.split("`.", 1)[0], old, new


def generate(out: Path, split: str, count: int) -> Path:
    """Write `count` instances of `split` under `out` (a local task set layout); return instances.jsonl."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    records = []
    for index in range(count):
        spec = make_spec(split, index)
        record = build_repo(spec, out / "repos" / spec.name)
        record["repo"] = f"specqual/{spec.name}"
        records.append(record)
    lines = "".join(json.dumps(r, sort_keys=True) + "\n" for r in records)
    tmp = out / "instances.jsonl.tmp"
    tmp.write_text(lines, encoding="utf-8")
    tmp.rename(out / "instances.jsonl")
    (out / "VERSION").write_text(f"{GENERATOR_VERSION} {split} {count}\n", encoding="utf-8")
    return out / "instances.jsonl"


def ensure(out: Path, split: str, count: int) -> Path:
    """Generate unless the same version, split and count is already there (a cache)."""
    version = Path(out) / "VERSION"
    if version.is_file() and version.read_text().strip() == f"{GENERATOR_VERSION} {split} {count}":
        return Path(out) / "instances.jsonl"
    return generate(out, split, count)


def default_dir(split: str) -> Path:
    from eval.stacks.envs import cache_root

    return cache_root() / f"generated-tasks-v{GENERATOR_VERSION}-{split}"
