"""The columns of every tidy table, declared once with the results-directory field each one comes from.

A source is `file:dotted.path` relative to the record the grain is built from (see results/README.md);
`derived` columns are computed by `analysis.load` and say from what. Loaders build their rows from these
declarations only, so a column's origin is written in exactly one place.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Column:
    name: str
    source: str
    doc: str = ""

    @property
    def file(self) -> str:
        return self.source.split(":", 1)[0]

    @property
    def path(self) -> list[str]:
        return self.source.split(":", 1)[1].split(".") if ":" in self.source else []


def pick(record: dict[str, Any] | None, path: list[str]) -> Any:
    """The value at a dotted path of a JSON record, or None where any step is missing."""
    value: Any = record
    for key in path:
        if not isinstance(value, dict):
            return None
        value = value.get(key)
    return value


RUNS = [
    Column("run_id", "run.json:run_id"),
    Column("name", "run.json:name"),
    Column("spec_hash", "run.json:spec_hash"),
    Column("started_at", "run.json:started_at"),
    Column("ended_at", "run.json:ended_at"),
    Column("cohorts", "run.json:cohorts"),
    Column("versions", "run.json:versions"),
    Column("host", "run.json:host.name"),
]

COHORTS = [
    Column("cohort", "cohort.json:name"),
    Column("label", "cohort.json:label"),
    Column("control", "cohort.json:control"),
    Column("factors", "cohort.json:factors"),
    Column("factor_labels", "cohort.json:factor_labels"),
    Column("columns", "cohort.json:columns"),
    Column("policy", "cohort.json:policy"),
    Column("speculative_config", "cohort.json:speculative_config"),
    Column("vllm_version", "stack.json:vllm_version"),
    Column("vllm_path", "stack.json:vllm_path"),
    Column("wheel_sha256", "stack.json:wheel_sha256"),
    Column("patches", "stack.json:patches"),
    Column("patched_files", "stack.json:patched_files"),
    Column("torch", "stack.json:torch"),
    Column("gpus", "stack.json:gpus"),
    Column("stack_host", "stack.json:host"),
    Column("launched_at", "stack.json:launched_at"),
]

UNITS = [
    Column("instance_id", "verdict.json:instance_id"),
    Column("unit_dir", "derived", "the unit's directory, relative to the run directory"),
    Column("repeat", "verdict.json:repeat"),
    Column("repo", "verdict.json:repo"),
    Column("rollout_status", "verdict.json:status", "completed | infra_error"),
    Column("infra_reason", "verdict.json:infra_reason"),
    Column("exit_reason", "verdict.json:exit_reason"),
    Column("turns", "verdict.json:turns"),
    Column("prompt_tokens", "verdict.json:prompt_tokens"),
    Column("completion_tokens", "verdict.json:completion_tokens"),
    Column("wall_s", "verdict.json:wall_s"),
    Column("patch_files", "verdict.json:patch_files"),
    Column("patch_lines_added", "verdict.json:patch_lines_added"),
    Column("patch_lines_removed", "verdict.json:patch_lines_removed"),
    Column("attempts", "verdict.json:attempts"),
    Column("grade_status", "grade.json:status", "resolved | unresolved | empty_patch | patch_failed | infra_error"),
    Column("resolved", "grade.json:resolved", "bool; None for infra errors and ungraded units"),
    Column("grade_infra_reason", "grade.json:infra_reason"),
    Column("classified", "derived", "labels.json exists"),
    Column("corrupted", "labels.json:corrupted", "any label of severity error"),
    Column("first_corrupted_turn", "labels.json:first_corrupted_turn"),
    Column("labels", "labels.json:labels", "label -> number of turns with it"),
    Column("infra", "derived", "rollout_status == infra_error or grade_status == infra_error"),
    Column("outcome", "derived", "resolved | unresolved | infra | ungraded (infra never counts as unresolved)"),
]

TURNS = [
    Column("turn", "trajectory.jsonl:turn"),
    Column("request_id", "trajectory.jsonl:request_id"),
    Column("server", "trajectory.jsonl:server"),
    Column("latency_s", "trajectory.jsonl:latency_s"),
    Column("finish_reason", "trajectory.jsonl:finish_reason"),
    Column("content", "trajectory.jsonl:content"),
    Column("reasoning_content", "trajectory.jsonl:reasoning_content"),
    Column("tool_calls", "trajectory.jsonl:tool_calls"),
    Column("prompt_tokens", "trajectory.jsonl:usage.prompt_tokens"),
    Column("completion_tokens", "trajectory.jsonl:usage.completion_tokens"),
    Column("error", "trajectory.jsonl:error"),
    Column("labels", "labels.json:turns[].labels", "labels of this turn ([] when none)"),
    Column("evidence", "labels.json:turns[].evidence"),
]

PROBES = [
    Column("probe_id", "probe:probe_id"),
    Column("mode", "probe:mode"),
    Column("index", "probe:index"),
    Column("role", "probe:role"),
    Column("prompt_tokens", "probe:prompt_tokens"),
    Column("cached_tokens", "probe:cached_tokens"),
    Column("output_text", "probe:output_text"),
    Column("reference_cohort", "probe:reference_cohort"),
    Column("compared_tokens", "probe:compared_tokens"),
    Column("diverged", "probe:diverged", "bool; None when nothing was compared"),
    Column("first_divergence", "probe:first_divergence"),
    Column("divergent_tokens", "probe:divergent_tokens"),
    Column("infra_error", "probe:infra_error"),
    Column("judgement", "probe:judgement.verdict", "exact | near_tie | corrupted | None (token equality only)"),
    Column("judgement_reason", "probe:judgement.reason"),
]

METRICS = [
    Column("t", "metrics.jsonl:t"),
    Column("phase", "metrics.jsonl:phase"),
    Column("workload", "metrics.jsonl:workload"),
    Column("spec_decode_num_drafts", "metrics.jsonl:spec_decode_num_drafts"),
    Column("spec_decode_num_draft_tokens", "metrics.jsonl:spec_decode_num_draft_tokens"),
    Column("spec_decode_num_accepted_tokens", "metrics.jsonl:spec_decode_num_accepted_tokens"),
    Column("spec_decode_accepted_per_pos", "metrics.jsonl:spec_decode_accepted_per_pos"),
    Column("prefix_cache_queries", "metrics.jsonl:prefix_cache_queries"),
    Column("prefix_cache_hits", "metrics.jsonl:prefix_cache_hits"),
    Column("generation_tokens", "metrics.jsonl:generation_tokens"),
    Column("prompt_tokens", "metrics.jsonl:prompt_tokens"),
    Column("errors", "metrics.jsonl:errors"),
]


def names(columns: list[Column]) -> list[str]:
    return [c.name for c in columns]
