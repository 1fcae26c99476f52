"""The bug zoo read from a cohort file (or a finished run's effective config): which cohorts carry a bug, which
clean speculative cohort is each one's control, and which historical PR each bug names. No table by hand.

A build's patch set is the ordered list of (file, reverse). A *bug cohort* runs a build whose patch set strictly
contains the patch set of another build that a cohort with the same speculative setting (and topology) runs; the
largest such build is its *control* build, and the extra patches are the bug. A speculative cohort on a build
that contains no other build's patch set is a *clean control*. Speculation-off cohorts are references.

The PR comes from the first `#NNNN` in the bug patch's header, else from `prNNNN` in its file name.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class ZooBug:
    cohort: str
    control: str  # the clean speculative cohort with the same speculative setting and topology
    pr: str
    patches: tuple[str, ...]
    summary: str  # first header line of the bug patch


@dataclass(frozen=True)
class Zoo:
    name: str
    reference: str | None
    bugs: tuple[ZooBug, ...]
    controls: tuple[str, ...]


def _patch_set(build: dict[str, Any]) -> frozenset[tuple[str, bool]]:
    return frozenset((Path(p["file"]).name, bool(p.get("reverse"))) for p in build.get("patches") or [])


def _header(path: Path) -> str:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError:
        return ""
    return text.split("\n--- ", 1)[0]


def _pr(header: str, files: list[str]) -> str:
    m = re.search(r"#(\d{3,6})", header)
    if m:
        return f"#{m.group(1)}"
    for f in files:
        m = re.search(r"pr(\d{3,6})", f)
        if m:
            return f"#{m.group(1)}"
    return "?"


def zoo_from_spec(spec: dict[str, Any], base_dir: Path) -> Zoo:
    """`spec` is a cohort file's effective config (run.json's `spec`, or a loaded file's model_dump())."""
    builds = spec["builds"]
    cohorts = spec["matrix"]["cohorts"]
    speculative = spec.get("speculative", {})
    sets = {name: _patch_set(b) for name, b in builds.items()}
    canary = (spec.get("workloads") or {}).get("canary") or {}
    reference = canary.get("reference") if isinstance(canary, dict) else None

    def is_off(c: dict[str, Any]) -> bool:
        return (speculative.get(c["speculative"]) or {}).get("method") is None

    spec_cohorts = [c for c in cohorts if not is_off(c)]
    bugs, controls = [], []
    for c in spec_cohorts:
        peers = [
            p for p in spec_cohorts if (p["speculative"], p.get("topology")) == (c["speculative"], c.get("topology"))
        ]
        smaller = [p for p in peers if sets[p["build"]] < sets[c["build"]]]
        if not smaller:
            controls.append(c["name"])
            continue
        ctl = max(smaller, key=lambda p: len(sets[p["build"]]))
        extra = sorted(sets[c["build"]] - sets[ctl["build"]])
        files = [f for f, _ in extra]
        header = "\n".join(_header(base_dir / "patches" / f) for f in files)
        summary = next((ln.strip() for ln in header.splitlines() if ln.strip()), "")
        bugs.append(ZooBug(c["name"], ctl["name"], _pr(header, files), tuple(files), summary))
    return Zoo(spec.get("name", "?"), reference, tuple(bugs), tuple(controls))


def zoo_from_file(path: Path) -> Zoo:
    from eval.spec.load import load_spec

    loaded = load_spec([str(path)])
    return zoo_from_spec(loaded.spec.model_dump(mode="json"), path.parent)
