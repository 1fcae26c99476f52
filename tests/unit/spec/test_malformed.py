"""Malformed cohort files and overrides: one clear line naming the file and the field, exit 2, nothing started."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from eval.cli import app

Edit = Callable[[dict[str, Any]], None]


def _set(path: str, value: Any) -> Edit:
    def edit(d: dict[str, Any]) -> None:
        keys = path.split(".")
        node = d
        for k in keys[:-1]:
            node = node.setdefault(k, {})
        node[keys[-1]] = value

    return edit


def _del(path: str) -> Edit:
    def edit(d: dict[str, Any]) -> None:
        keys = path.split(".")
        node = d
        for k in keys[:-1]:
            node = node[k]
        del node[keys[-1]]

    return edit


def _cohorts(
    a: dict[str, Any],
    b: dict[str, Any] | None = None,
    *,
    models: bool = False,
    canary: bool = False,
    reference: str | None = None,
    compare: bool = True,
) -> Edit:
    """An explicit matrix: cohort `a` (MTP off) with `a`'s keys, optionally `b` (MTP 5) compared with it."""

    def edit(d: dict[str, Any]) -> None:
        cohorts = [{"name": "a", "build": "patched", "speculative": "off", **a}]
        if b is not None:
            cohorts.append({"name": "b", "build": "patched", "speculative": "mtp5", **b})
        d["matrix"] = {"cohorts": cohorts}
        d["comparisons"] = [{"cohort": "b", "control": "a"}] if b is not None and compare else []
        if models:
            d["models"] = {"small": {"path": "/models/small"}}
        if canary:
            d["workloads"]["canary"] = {"reference": reference}

    return edit


# (case id, edit of the minimal file, extra CLI args, text the error must contain)
CASES: list[tuple[str, Edit | None, list[str], str]] = [
    ("unknown top-level key", _set("modle", {}), [], "modle: Extra inputs are not permitted"),
    ("unknown nested key", _set("model.dtpe", "float32"), [], "model.dtpe"),
    ("missing model", _del("model"), [], "model: Field required"),
    ("missing builds", _del("builds"), [], "builds: Field required"),
    ("empty builds", _set("builds", {}), [], "builds: declare at least one build"),
    ("bad dtype", _set("model.dtype", "fp33"), [], "model.dtype"),
    ("model without path or generator", _del("model.path"), [], "model.path or model.generate"),
    ("build with two sources", _set("builds.patched.wheel", "x.whl"), [], "builds.patched"),
    ("build with no source", _set("builds.patched", {}), [], "exactly one source"),
    ("missing patch file", _set("builds.unpatched.patches", [{"file": "nope.patch"}]), [], "patches[0].file"),
    (
        "patch reverse not a bool",
        _set("builds.unpatched.patches", [{"file": "fix.patch", "reverse": "maybe"}]),
        [],
        "patches[0].reverse",
    ),
    ("speculative method without k", _set("speculative.mtp5", {"method": "mtp"}), [], "num_speculative_tokens"),
    ("speculative k not positive", _set("speculative.mtp5.num_speculative_tokens", 0), [], "num_speculative_tokens"),
    (
        "speculative k wrong type",
        _set("speculative.mtp5.num_speculative_tokens", "five"),
        [],
        "speculative.mtp5.num_speculative_tokens",
    ),
    (
        "off with extra fields",
        _set("speculative.off", {"method": None, "prompt_lookup_max": 4}),
        [],
        "speculation is off",
    ),
    ("unknown topology kind", _set("topologies", {"t": {"kind": "ring"}}), [], "topologies.t"),
    ("tp zero", _set("topologies", {"t": {"kind": "single", "tensor_parallel_size": 0}}), [], "tensor_parallel_size"),
    ("pd workers zero", _set("topologies", {"t": {"kind": "pd", "decode": {"workers": 0}}}), [], "decode.workers"),
    ("repeats zero", _set("workloads.swebench.repeats", 0), [], "workloads.swebench.repeats"),
    ("repeats wrong type", _set("workloads.swebench.repeats", [3]), [], "workloads.swebench.repeats"),
    ("bad instance regex", _set("workloads.swebench.filter", "django(["), [], "workloads.swebench.filter"),
    ("missing exclusion file", _set("workloads.swebench.exclude", "excl.txt"), [], "workloads.swebench.exclude"),
    ("unknown agent", _set("workloads.swebench.agent", {"kind": "genius"}), [], "workloads.swebench.agent.kind"),
    ("unknown sandbox", _set("workloads.swebench.sandbox", {"kind": "vm"}), [], "workloads.swebench.sandbox.kind"),
    ("unknown canary mode", _set("workloads.canary", {"modes": ["prefix_hot"]}), [], "workloads.canary.modes[0]"),
    ("temperature negative", _set("sampling.temperature", -1), [], "sampling.temperature"),
    ("policy margin above one", _set("policy.non_inferiority_margin", 3), [], "policy.non_inferiority_margin"),
    ("unknown executor", _set("executor", {"kind": "k8s"}), [], "executor.kind"),
    (
        "comparison with unknown cohort",
        _set("comparisons", [{"cohort": "x", "control": "patched-off"}]),
        [],
        "comparisons[0].cohort",
    ),
    (
        "uncompared factor difference",
        _set("comparisons", [{"cohort": "patched-mtp5", "control": "unpatched-off", "differs_in": ["speculative"]}]),
        [],
        "differ in undeclared factor 'build'",
    ),
    (
        "differs_in unknown factor",
        _set("comparisons", [{"cohort": "patched-mtp5", "control": "patched-off", "differs_in": ["weather"]}]),
        [],
        "comparisons[0].differs_in",
    ),
    ("matrix unknown factor value", _set("matrix", {"product": {"build": ["nightly"]}}), [], "matrix.product.build"),
    ("matrix unknown factor", _set("matrix", {"product": {"color": ["red"]}}), [], "matrix.product.color"),
    ("matrix both forms", _set("matrix", {"product": {"build": ["patched"]}, "cohorts": []}), [], "matrix"),
    ("label for unknown cohort", _set("matrix", {"labels": {"ghost": "Ghost"}}), [], "matrix.labels.ghost"),
    ("bad cohort name", _set("name", "has space"), [], "name"),
    ("reserved factor name", _set("factors", {"build": {"values": {"a": {}}}}), [], "factors"),
    ("schema version", _set("schema_version", 2), [], "schema_version"),
    ("models named default", _set("models", {"default": {"path": "/m"}}), [], "models: 'default' is the top-level"),
    ("model in models without source", _set("models", {"small": {"served_name": "s"}}), [], "models.small"),
    (
        "unknown generator in models",
        _set("models", {"small": {"generate": {"kind": "huge"}}}),
        [],
        "models.small.generate.kind",
    ),
    ("factor named model", _set("factors", {"model": {"values": {"a": {}}}}), [], "reserved"),
    ("cohort with unknown model", _cohorts({"model": "nope"}), [], "matrix.cohorts[0].model: unknown model 'nope'"),
    ("cohort workload not declared", _cohorts({"workloads": ["canary"]}), [], "matrix.cohorts[0].workloads"),
    ("cohort workload unknown", _cohorts({"workloads": ["bench"]}), [], "matrix.cohorts[0].workloads[0]"),
    ("cohort workloads empty", _cohorts({"workloads": []}), [], "matrix.cohorts[0].workloads"),
    (
        "comparison across models",
        _cohorts({}, {"model": "small"}, models=True),
        [],
        "use different models (small vs default)",
    ),
    (
        "control does not run the workload",
        _cohorts({"workloads": ["swebench"]}, {"workloads": ["canary"]}, canary=True),
        [],
        "runs ['canary'] but its control a does not",
    ),
    (
        "canary reference runs no canary",
        _cohorts({"workloads": ["canary"]}, {"workloads": ["swebench"]}, canary=True, reference="b", compare=False),
        [],
        "workloads.canary.reference: 'b' does not run the canary",
    ),
    (
        "canary cohorts of two models",
        _cohorts({}, {"model": "small"}, models=True, canary=True, compare=False),
        [],
        "every canary cohort needs the same model",
    ),
    (
        "no cohort runs the canary",
        _cohorts({"workloads": ["swebench"]}, {"workloads": ["swebench"]}, canary=True),
        [],
        "workloads.canary: no cohort runs the canary",
    ),
    ("override unknown key", None, ["-c", "sampling.temprature=0.5"], "sampling.temprature=0.5"),
    ("override wrong type", None, ["-c", "workloads.swebench.repeats=many"], "workloads.swebench.repeats"),
    ("override through a scalar", None, ["-c", "name.first=x"], "bad override path"),
    ("override empty path segment", None, ["-c", "sampling..seed=1"], "bad override path"),
    ("override list index out of range", None, ["-c", "comparisons.5.control=x"], "index '5'"),
]


@pytest.mark.parametrize(("edit", "args", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_malformed_file_gives_one_line_naming_the_field(write_spec, edit, args, expected) -> None:
    path = write_spec(edit)
    result = CliRunner().invoke(app, ["validate", str(path), *args])
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1, result.output
    assert lines[0].startswith("error: "), lines[0]
    assert expected in lines[0], lines[0]
    source = args[-1] if args else str(path)
    assert source in lines[0], f"error does not name its source: {lines[0]}"


RAW_CASES = [
    ("not yaml", "model: [unclosed\n", "not valid YAML"),
    ("top level is a list", "- a\n- b\n", "top level must be a mapping"),
    ("extends a missing file", "extends: nowhere.yaml\n", "no such cohort file"),
]


@pytest.mark.parametrize(("raw", "expected"), [c[1:] for c in RAW_CASES], ids=[c[0] for c in RAW_CASES])
def test_unreadable_files(write_spec, raw: str, expected: str) -> None:
    path = write_spec(raw=raw)
    result = CliRunner().invoke(app, ["validate", str(path)])
    assert result.exit_code == 2
    assert expected in result.output and len(result.output.strip().splitlines()) == 1


def test_missing_file_and_overrides_only(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["plan", str(tmp_path / "absent.yaml")])
    assert result.exit_code == 2 and "no such cohort file" in result.output
    result = CliRunner().invoke(app, ["plan", "sampling.seed=1"])
    assert result.exit_code == 2 and "at least one cohort file" in result.output


def test_bad_run_starts_nothing(write_spec, tmp_path: Path) -> None:
    path = write_spec(_set("model.dtype", "fp33"))
    results = tmp_path / "results"
    result = CliRunner().invoke(app, ["run", str(path), "--results", str(results)])
    assert result.exit_code == 2
    assert not results.exists()


def test_at_least_thirty_malformed_cases() -> None:
    assert len(CASES) + len(RAW_CASES) >= 30
