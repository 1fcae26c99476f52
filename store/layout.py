"""The file layout of a run directory (results/README.md): every path a writer or a reader needs, named once.

layout = RunLayout(Path("results/my-run"))
layout.metrics("patched-mtp5")                    # results/my-run/patched-mtp5/metrics.jsonl
layout.unit_dir("patched-mtp5", "django__django-11099", 0) / VERDICT
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

SCHEMA_VERSION = 1
_SAFE = re.compile(r"[^A-Za-z0-9_.-]")

RUN_JSON = "run.json"
INSTANCES = "instances.json"  # the seeded instance order (store.order)
COHORT_JSON = "cohort.json"
STACK_JSON = "stack.json"
METRICS = "metrics.jsonl"
SERVER_EVENTS = "server_events.jsonl"
CANARY_JSON = "canary.json"
EARLY_STOP = "early_stop.json"
PREDICTIONS = "predictions.jsonl"
TRAJECTORY = "trajectory.jsonl"
PATCH = "patch.diff"
VERDICT = "verdict.json"  # written last: a unit is done when it parses
GRADE = "grade.json"
LABELS = "labels.json"


def safe_name(text: str) -> str:
    """A path component for an instance id such as `django__django-11099` (kept) or `a/b` (escaped)."""
    return _SAFE.sub("_", text)


@dataclass(frozen=True)
class RunLayout:
    """Paths of one run directory; it neither reads nor writes."""

    path: Path

    @property
    def run_json(self) -> Path:
        return self.path / RUN_JSON

    @property
    def instances_json(self) -> Path:
        return self.path / INSTANCES

    def cohort_dir(self, cohort: str) -> Path:
        return self.path / safe_name(cohort)

    def cohort_json(self, cohort: str) -> Path:
        return self.cohort_dir(cohort) / COHORT_JSON

    def metrics(self, cohort: str) -> Path:
        return self.cohort_dir(cohort) / METRICS

    def server_events(self, cohort: str) -> Path:
        return self.cohort_dir(cohort) / SERVER_EVENTS

    def probes_dir(self, cohort: str) -> Path:
        return self.cohort_dir(cohort) / "probes"

    def probe_path(self, cohort: str, probe_id: str) -> Path:
        return self.probes_dir(cohort) / f"{safe_name(probe_id)}.json"

    def units_dir(self, cohort: str) -> Path:
        return self.cohort_dir(cohort) / "units"

    def unit_dir(self, cohort: str, instance_id: str, repeat: int) -> Path:
        return self.units_dir(cohort) / safe_name(instance_id) / f"r{repeat}"
