"""A run directory: `run.json`, one directory per cohort, one per unit; resume by what is on disk.

Layout (schema_version 1, documented in results/README.md):

    <run>/run.json                                  effective config, output hash, versions, host, times
    <run>/<cohort>/cohort.json                      factors, labels, control, policy, commands
    <run>/<cohort>/stack.json                       provenance of the launch (eval.stacks)
    <run>/<cohort>/metrics.jsonl                    scraped /metrics snapshots
    <run>/<cohort>/probes/<probe_id>.json           canary probes (eval.canary)
    <run>/<cohort>/units/<instance_id>/r<k>/        SWE-bench units: trajectory.jsonl, patch.diff,
                                                    verdict.json (written last), grade.json, labels.json
"""

from __future__ import annotations

import getpass
import platform
import socket
import sys
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any

from eval.secrets import REDACTED, is_secret_name, redact_argv, redact_env, redact_tree
from eval.spec.errors import SpecError
from eval.spec.load import LoadedSpec
from eval.spec.matrix import Cohort, columns
from store.atomic import atomic_write_json, read_json, sweep_temp_files
from store.layout import SCHEMA_VERSION, VERDICT, RunLayout, safe_name
from store.records import CohortRecord, RunRecord

__all__ = [
    "SCHEMA_VERSION",
    "RunDir",
    "default_run_id",
    "now",
    "open_run",
    "redact_source",
    "safe_name",
    "sweep_temp_files",
    "versions",
]


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def versions() -> dict[str, str]:
    out = {"python": platform.python_version()}
    for dist in ("specqual", "pydantic", "openai", "pandas", "swebench"):
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            continue
    return out


@dataclass(frozen=True)
class RunDir(RunLayout):
    """A run directory the pipeline writes: the layout (store.layout) plus run.json and cohort.json."""

    def unit_done(self, cohort: str, instance_id: str, repeat: int) -> bool:
        """A unit is done when its verdict file exists and parses (it is written last, atomically)."""
        verdict = read_json(self.unit_dir(cohort, instance_id, repeat) / VERDICT)
        return isinstance(verdict, dict) and verdict.get("schema_version") == SCHEMA_VERSION

    def meta(self) -> dict[str, Any]:
        data = read_json(self.run_json)
        if not isinstance(data, dict):
            raise SpecError("run.json", "missing or unreadable: not a specqual run directory", str(self.path))
        return data

    def mark(self, **fields: Any) -> None:
        """Update fields of run.json (timestamps, stage status) atomically."""
        data = self.meta()
        data.update(fields)
        atomic_write_json(self.run_json, data)

    def write_cohort(self, loaded: LoadedSpec, cohort: Cohort, commands: list[str]) -> None:
        spec = loaded.spec
        cols = columns(spec)
        record = CohortRecord(
            name=cohort.name,
            label=cohort.label,
            factors=cohort.factors,
            factor_labels=cohort.factor_labels,
            columns={k: cols[k] for k in cohort.factors},
            control=cohort.control,
            policy=spec.policy.model_dump(mode="json"),
            speculative_config=cohort.speculative.vllm_config(),
            build=cohort.build.model_dump(mode="json"),
            env=redact_env(cohort.env),
            topology=cohort.topology.model_dump(mode="json"),
            model=cohort.model_name,
            served_name=cohort.model.served_name,
            workloads=list(cohort.workloads),
            tool_call_parser=cohort.model.tool_call_parser,
            gpus=cohort.gpus,
            commands=commands,
        )
        atomic_write_json(self.cohort_json(cohort.name), record.record())


def default_run_id(loaded: LoadedSpec) -> str:
    return f"{loaded.spec.name}-{datetime.now(UTC).strftime('%Y%m%d-%H%M%S')}"


def open_run(loaded: LoadedSpec, results: Path, run_id: str | None = None) -> RunDir:
    """Create a run directory, or resume one whose output hash matches (refuse otherwise)."""
    run = RunDir(Path(results) / (run_id or default_run_id(loaded)))
    sweep_temp_files(run.path)
    digest = loaded.output_hash
    existing = read_json(run.run_json)
    if existing is not None:
        if not isinstance(existing, dict) or existing.get("spec_hash") != digest:
            old = existing.get("spec_hash", "?") if isinstance(existing, dict) else "?"
            raise SpecError(
                "spec_hash",
                f"run {run.path} was started with a different cohort file (hash {str(old)[:12]} != "
                f"{digest[:12]}): use a new --run-id, or the same files and overrides",
                str(run.run_json),
            )
        run.mark(resumed_at=[*existing.get("resumed_at", []), now()], ended_at=None)
        return run
    record = RunRecord(
        run_id=run.path.name,
        name=loaded.spec.name,
        spec_hash=digest,
        spec=redact_tree(loaded.spec.model_dump(mode="json")),
        sources=[redact_source(s) for s in loaded.sources],
        base_dir=str(loaded.spec.base_dir),
        cohorts=[c.name for c in loaded.cohorts],
        columns=columns(loaded.spec),
        versions=versions(),
        host={"name": socket.gethostname(), "platform": platform.platform(), "user": _user()},
        argv=redact_argv([redact_source(a) for a in sys.argv]),
        started_at=now(),
    )
    atomic_write_json(run.run_json, record.model_dump(mode="json"))
    return run


def redact_source(source: str) -> str:
    """An override `server.env.HF_TOKEN=...` is recorded with its value redacted."""
    key, eq, _ = source.partition("=")
    return f"{key}={REDACTED}" if eq and is_secret_name(key) else source


def _user() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "unknown"
