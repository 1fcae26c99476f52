"""The probe record (`<run>/<cohort>/probes/<probe_id>.json`, see results/README.md) and its file helpers."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from eval.store import SCHEMA_VERSION, atomic_write_json, read_json
from store.canary_records import ProbeResult

ROLES = ("target", "concurrent", "tool_a1", "tool_b", "tool_a2")
# sampler_mix: one request per kind of per-request sampling parameters, all in one batch (eval/canary/sampler.py)
SAMPLER_ROLES = ("plain", "penalties", "min_tokens", "allowed_tokens")


@dataclass
class ProbeRecord:
    """One request of one probe: what was sent, what came back, and how it compares with the reference."""

    probe_id: str
    cohort: str
    mode: str
    index: int
    role: str
    prompt_token_ids: list[int] | None = None
    prompt_tokens: int | None = None
    cached_tokens: int | None = None
    output_token_ids: list[int] | None = None
    output_text: str | None = None
    finish_reason: str | None = None
    latency_s: float | None = None
    overlapped: bool | None = None  # concurrent modes: both requests of the batch were in flight together
    server: str | None = None
    infra_error: str | None = None
    reference_cohort: str | None = None
    compared_tokens: int | None = None
    diverged: bool | None = None
    first_divergence: int | None = None
    divergent_tokens: int | None = None
    params: dict[str, Any] | None = None  # per-request sampling parameters sent on top of greedy (sampler_mix)
    output_token_logprobs: list[float | None] | None = None
    output_top_logprobs: list[dict[str, float]] | None = None  # per position: token id (string) -> logprob
    judgement: dict[str, Any] | None = None  # eval.canary.judge: what was judged and why
    extra: dict[str, Any] = field(default_factory=dict)

    def record(self) -> ProbeResult:
        """The typed record of the results directory (store.canary_records.ProbeResult)."""
        return ProbeResult.model_validate(asdict(self))

    def to_json(self) -> dict[str, Any]:
        return self.record().model_dump(mode="json")

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ProbeRecord:
        known = set(cls.__dataclass_fields__)
        return cls(**{k: v for k, v in data.items() if k in known})


def probe_id(mode: str, index: int, role: str) -> str:
    return f"{mode}-{index:03d}-{role}"


def probes_dir(cohort_dir: Path) -> Path:
    return Path(cohort_dir) / "probes"


def write_record(cohort_dir: Path, record: ProbeRecord) -> Path:
    path = probes_dir(cohort_dir) / f"{record.probe_id}.json"
    atomic_write_json(path, record.to_json())
    return path


def read_records(cohort_dir: Path) -> dict[str, ProbeRecord]:
    """probe_id -> record for every readable probe file of a cohort (missing directory: empty)."""
    out: dict[str, ProbeRecord] = {}
    folder = probes_dir(cohort_dir)
    if not folder.is_dir():
        return out
    for path in sorted(folder.glob("*.json")):
        data = read_json(path)
        if isinstance(data, dict) and data.get("schema_version") == SCHEMA_VERSION:
            rec = ProbeRecord.from_json(data)
            out[rec.probe_id] = rec
    return out
