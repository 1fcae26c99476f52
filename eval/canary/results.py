"""After probing: compare every cohort's records with its reference, rewrite them, write `canary.json`s."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from eval.canary.compare import CohortSummary, apply_comparison, pick_reference, summarize
from eval.canary.records import SAMPLER_ROLES, ProbeRecord, probe_id, read_records, write_record
from eval.spec.errors import SpecError
from eval.spec.load import LoadedSpec
from eval.spec.matrix import Cohort, canary_reference
from eval.spec.models import CanaryWorkload
from eval.store import atomic_write_json
from eval.store.run import RunDir

ROLES_BY_MODE: dict[str, tuple[str, ...]] = {
    "fuzz": (),  # generated: each case has its own requests (eval/canary/fuzz)
    "prefix_hit": ("target",),
    "prefix_hit_concurrent": ("target", "concurrent"),
    "fresh": ("target",),
    "tool_aba": ("tool_a1", "tool_b", "tool_a2"),
    "sampler_mix": SAMPLER_ROLES,
    "chunked_tail": ("target", "concurrent"),
}


def expected_records(mode: str, index: int) -> list[str]:
    return [probe_id(mode, index, role) for role in ROLES_BY_MODE[mode]]


def reference_cohort(loaded: LoadedSpec) -> str:
    """`workloads.canary.reference`, else the first canary cohort without a control (checked at load)."""
    ref = canary_reference(loaded.spec, loaded.cohorts)
    if ref is None:
        raise SpecError("workloads.canary", "this cohort file has no enabled canary workload")
    return ref


def canary_cohorts(loaded: LoadedSpec) -> list[Cohort]:
    """The cohorts that run the canary, in matrix order."""
    return [c for c in loaded.cohorts if c.runs("canary")]


def compare_and_summarize(loaded: LoadedSpec, run: RunDir, walls: dict[str, float]) -> dict[str, CohortSummary]:
    """Fill the comparison fields of every record on disk and write one summary per cohort."""
    cfg = loaded.spec.workloads.canary
    assert cfg is not None
    reference = reference_cohort(loaded)
    cohorts = canary_cohorts(loaded)
    outputs = {c.name: read_records(run.cohort_dir(c.name)) for c in cohorts}
    expected = sum(len(expected_records(m, 0)) for m in cfg.modes) * cfg.probes_per_mode
    summaries: dict[str, CohortSummary] = {}
    for cohort in cohorts:
        records = outputs[cohort.name]
        if not records:
            continue
        is_ref = cohort.name == reference
        run_wide = _run_wide_oracles(cfg)  # one instance per cohort: its test accumulates over the cohort's records
        for pid, rec in records.items():
            _compare_one(rec, pid, None if is_ref else cohort.control, reference, is_ref, outputs, cfg, run_wide)
            write_record(run.cohort_dir(cohort.name), rec)
        summary = summarize(cohort.name, list(records.values()), is_ref, expected)
        summary.wall_s = walls.get(cohort.name)
        if cohort.speculative.method is not None:
            note_acceptance(summary, probe_acceptance(run.cohort_dir(cohort.name)), cfg.acceptance_floor)
        summary.extra["control"] = cohort.control
        if "fuzz" in cfg.modes:
            _fuzz_summary(summary, list(records.values()), run.cohort_dir(cohort.name), loaded, cohort, cfg)
        if summary.infra_errors:
            summary.server_error = server_error(run.cohort_dir(cohort.name))
        atomic_write_json(run.cohort_dir(cohort.name) / "canary.json", summary.to_json())
        summaries[cohort.name] = summary
    return summaries


def _run_wide_oracles(cfg: CanaryWorkload) -> list[Any]:
    """Oracles that judge a cohort's records together (workloads.canary.fuzz_sampled_oracle: the sampled PIT test)."""
    if not (cfg.fuzz_sampled_oracle and "fuzz" in cfg.modes):
        return []
    from eval.canary.sampled.oracle import SampledOracle

    return [SampledOracle()]


def _compare_one(
    rec: ProbeRecord,
    pid: str,
    control: str | None,
    reference: str,
    is_ref: bool,
    outputs: dict[str, dict[str, ProbeRecord]],
    cfg: CanaryWorkload,
    run_wide: Sequence[Any] = (),
) -> None:
    if is_ref:
        apply_comparison(rec, None, None)
        return
    chosen = pick_reference(pid, control, reference, outputs)
    ref = outputs.get(chosen or "", {}).get(pid) if chosen else None
    if rec.mode == "fuzz":
        from eval.canary.fuzz.oracles import default_oracles, judge_request

        rec.reference_cohort = rec.compared_tokens = rec.diverged = rec.first_divergence = None
        rec.divergent_tokens, rec.judgement = None, None
        judge_request(None, rec, ref, default_oracles(None, cfg.near_tie_nats, cfg.logprob_tolerance, run_wide))
        return
    apply_comparison(rec, ref, chosen, cfg.near_tie_nats, cfg.logprob_tolerance)


def _fuzz_summary(
    summary: CohortSummary,
    records: list[ProbeRecord],
    cdir: Path,
    loaded: LoadedSpec,
    cohort: Cohort,
    cfg: CanaryWorkload,
) -> None:
    """Coverage of the fuzz run; per bug class PASS / FAIL / INCONCLUSIVE ("blind is not clean")."""
    from eval.canary.fuzz.coverage import class_verdicts, fuzz_coverage
    from eval.canary.fuzz.mode import stack_facts

    metrics = [r for r in _metrics_records(cdir) if r.get("workload") == "canary"]
    k = cohort.speculative.num_speculative_tokens or stack_facts(loaded)["spec_tokens"]
    summary.extra["fuzz"] = fuzz_coverage(records, metrics, k, cdir)
    if cohort.speculative.method is None:
        return
    classes = class_verdicts(
        records, summary.acceptance, cfg.acceptance_floor, reasoning_parser=bool(cohort.model.reasoning_parser)
    )
    summary.extra["classes"] = classes
    blind = [n for n, v in classes.items() if v["verdict"] == "INCONCLUSIVE"]
    if summary.verdict == "clean" and blind:
        summary.verdict = "inconclusive"
        summary.reason += f"; {len(blind)} bug class(es) not exercised: " + "; ".join(
            f"{n} ({classes[n]['reason']})" for n in blind
        )


def _metrics_records(cdir: Path) -> list[dict[str, Any]]:
    path = Path(cdir) / "metrics.jsonl"
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


# What a speculative cohort cannot show when (almost) no draft is accepted: the verify path of the rejection
# sampler never keeps a draft token (docs/trust/bugzoo.md).
BLIND_WITHOUT_ACCEPTANCE = [
    "logits processors on draft rows (penalties, min_tokens, logit_bias: PR 19482, PR 32642)",
    "logprobs of accepted drafts (PR 30846)",
    "state rollback after partial acceptance (short_conv / Mamba: PR 50272)",
]


def probe_acceptance(cohort_dir: Path) -> float | None:
    """Accepted / drafted tokens over the canary's /metrics snapshots: store.acceptance, restart-safe and the same
    computation the report makes (analysis.summary), so the gate and the report never disagree."""
    from store.acceptance import acceptance
    from store.atomic import read_jsonl

    canary = [r for r in read_jsonl(Path(cohort_dir) / "metrics.jsonl") if r.get("workload") == "canary"]
    found = acceptance(canary)
    return None if found is None else found.rate


def note_acceptance(summary: CohortSummary, rate: float | None, floor: float) -> None:
    """Record the acceptance; below `floor` (or unknown) name the bug classes the run could not see."""
    summary.acceptance = None if rate is None else round(rate, 4)
    if rate is not None and rate >= floor:
        return
    summary.blind_to = list(BLIND_WITHOUT_ACCEPTANCE)
    seen = "unknown" if rate is None else f"{rate:.2f}"
    summary.reason += f"; draft acceptance {seen} < {floor}: could not see {len(summary.blind_to)} bug classes"


_ERROR_LINE = re.compile(r"\b([A-Z][A-Za-z]*(?:Error|Exception)): (.+)$")
_NOT_ROOT = ("EngineDeadError", "RuntimeError: Worker failed", "InternalServerError")


def server_error(cohort_dir: Path) -> str | None:
    """The first root-cause error line in the cohort's server logs (why its engine died), if any."""
    logs = sorted((Path(cohort_dir) / "logs").glob("*.log"))
    for log in logs:
        try:
            lines = log.read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            continue
        for line in lines:
            m = _ERROR_LINE.search(line)
            if m and not any(n in line for n in _NOT_ROOT) and "ulimit" not in line:
                return f"{m.group(1)}: {m.group(2).strip()}"[:300]
    return None
