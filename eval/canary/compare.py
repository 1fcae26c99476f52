"""Token-by-token comparison with a reference cohort, the per-cohort summary and the canary verdict.

Comparison design (docs/trust/canary.md): a cohort with a control (from `comparisons` in the cohort file) is compared
with its control, probe by probe and request by request (the concurrent request too: a state bug can hit the
other request of the batch). A cohort without a control is compared with the canary's reference cohort
(`workloads.canary.reference`), so that speculation-off cohorts are checked as well. When the chosen cohort has no
output for a probe (its server failed), the canary reference is used instead, and the record names it.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import Any

from eval.canary.judge import judge
from eval.canary.records import ProbeRecord

# inconclusive: no corruption, but a bug class's trigger never ran or its drafts were never kept (fuzz mode)
VERDICTS = ("clean", "corrupted", "failed", "reference", "no-data", "inconclusive")


@dataclass(frozen=True)
class Divergence:
    compared_tokens: int
    first_divergence: int | None
    divergent_tokens: int

    @property
    def diverged(self) -> bool:
        return self.first_divergence is not None


def compare_tokens(output: list[int], reference: list[int]) -> Divergence:
    """Positions past the shorter sequence count as divergent (a truncated reply is a divergence)."""
    n = max(len(output), len(reference))
    diff = [i for i in range(n) if i >= len(output) or i >= len(reference) or output[i] != reference[i]]
    return Divergence(compared_tokens=n, first_divergence=diff[0] if diff else None, divergent_tokens=len(diff))


def has_output(rec: ProbeRecord | None) -> bool:
    return rec is not None and rec.infra_error is None and rec.output_token_ids is not None


def apply_comparison(
    rec: ProbeRecord,
    ref: ProbeRecord | None,
    ref_cohort: str | None,
    near_tie: float = 0.25,
    lp_tolerance: float = 0.5,
) -> None:
    """Fill the comparison fields of `rec` (in place); nothing to compare leaves `diverged` null.

    Then the judgement (eval/canary/judge.py): `rec.judgement` says whether the output is corrupted or only
    differs by a benign near-tie flip, and why."""
    rec.reference_cohort = ref_cohort
    rec.compared_tokens = rec.diverged = rec.first_divergence = rec.divergent_tokens = None
    rec.judgement = None
    rec.extra.pop("comparison_error", None)
    if ref_cohort is None or not has_output(rec) or not has_output(ref):
        return
    assert ref is not None and rec.output_token_ids is not None and ref.output_token_ids is not None
    prompts = (rec.prompt_token_ids, ref.prompt_token_ids)
    if None not in prompts and prompts[0] != prompts[1]:
        rec.extra["comparison_error"] = "prompt token ids differ from the reference's (different tokenizer?)"
        return
    d = compare_tokens(rec.output_token_ids, ref.output_token_ids)
    rec.compared_tokens, rec.first_divergence, rec.divergent_tokens = (
        d.compared_tokens,
        d.first_divergence,
        d.divergent_tokens,
    )
    rec.diverged = d.diverged
    rec.judgement = judge(rec, ref, near_tie, lp_tolerance).to_json()


def judged_corrupted(rec: ProbeRecord) -> bool:
    """Corrupted by the judgement; without one (older records), any divergence."""
    if rec.judgement is not None:
        return rec.judgement.get("verdict") == "corrupted"
    return bool(rec.diverged)


def pick_reference(
    probe: str, control: str | None, reference: str, outputs: dict[str, dict[str, ProbeRecord]]
) -> str | None:
    """The cohort to compare one probe with: the control when it has output, else the canary reference."""
    for candidate in (control, reference):
        if candidate is not None and has_output(outputs.get(candidate, {}).get(probe)):
            return candidate
    return control or reference


@dataclass
class ModeSummary:
    probes: int = 0
    compared: int = 0
    diverged: int = 0  # token-level: any difference from the reference
    infra_errors: int = 0
    corrupted: int = 0  # judged corrupted (a divergence that is no near-tie, or a sampler/logprobs violation)
    near_ties: int = 0  # diverged, judged a benign near-tie flip


@dataclass
class CohortSummary:
    """`<run>/<cohort>/canary.json`: what the canary found on one cohort."""

    cohort: str
    reference_cohorts: list[str]
    is_reference: bool
    probes: int
    compared: int
    diverged: int
    infra_errors: int
    cached_hits: int
    overlapped: int
    by_mode: dict[str, ModeSummary]
    first_divergence_histogram: dict[str, int]
    verdict: str
    reason: str
    corrupted: int = 0  # judged corrupted (the verdict counts these, not `diverged`)
    near_ties: int = 0  # diverged by a benign near-tie flip
    acceptance: float | None = None  # accepted / drafted tokens during the probes (/metrics)
    blind_to: list[str] = field(default_factory=list)  # bug classes this run could not see (low acceptance)
    wall_s: float | None = None
    server_error: str | None = None  # root cause found in the server logs when requests failed
    extra: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """canary.json as the typed record of the results directory (store.canary_records.CanarySummary)."""
        from store.canary_records import CanarySummary

        return CanarySummary.model_validate(asdict(self)).model_dump(mode="json")


def summarize(cohort: str, records: list[ProbeRecord], is_reference: bool, expected: int) -> CohortSummary:
    by_mode: dict[str, ModeSummary] = {}
    hist: Counter[int] = Counter()
    for r in records:
        m = by_mode.setdefault(r.mode, ModeSummary())
        m.probes += 1
        m.compared += r.diverged is not None
        m.diverged += bool(r.diverged)
        m.infra_errors += r.infra_error is not None and not expected_error(r)
        m.corrupted += r.diverged is not None and judged_corrupted(r)
        m.near_ties += (r.judgement or {}).get("verdict") == "near_tie"
        if r.first_divergence is not None:
            hist[r.first_divergence] += 1
    total = ModeSummary(
        probes=len(records),
        compared=sum(m.compared for m in by_mode.values()),
        diverged=sum(m.diverged for m in by_mode.values()),
        infra_errors=sum(m.infra_errors for m in by_mode.values()) + max(expected - len(records), 0),
        corrupted=sum(m.corrupted for m in by_mode.values()),
        near_ties=sum(m.near_ties for m in by_mode.values()),
    )
    verdict, reason = _verdict(total, is_reference, expected)
    expected_errors = sum(1 for r in records if r.infra_error is not None and expected_error(r))
    return CohortSummary(
        cohort=cohort,
        reference_cohorts=sorted(
            {r.reference_cohort for r in records if r.reference_cohort and r.diverged is not None}
        ),
        is_reference=is_reference,
        probes=total.probes,
        compared=total.compared,
        diverged=total.diverged,
        infra_errors=total.infra_errors,
        cached_hits=sum(1 for r in records if (r.cached_tokens or 0) > 0 and r.role == "target"),
        overlapped=sum(1 for r in records if r.overlapped),
        by_mode=by_mode,
        first_divergence_histogram={str(k): hist[k] for k in sorted(hist)},
        verdict=verdict,
        reason=reason,
        corrupted=total.corrupted,
        near_ties=total.near_ties,
        extra={"expected_errors": expected_errors} if expected_errors else {},
    )


def expected_error(rec: ProbeRecord) -> bool:
    """The request's error is what its server must answer, not a server failure: `kv_load_failure_policy` fail on
    a server with injected KV load faults (the crash oracle records it as a fact). A server that is gone is still
    a failure."""
    if rec.infra_error is None:
        return False
    from eval.canary.fuzz.oracles import kv_fail_policy, server_gone

    return kv_fail_policy(rec) and not server_gone(rec.infra_error)


def _verdict(t: ModeSummary, is_reference: bool, expected: int) -> tuple[str, str]:
    ties = f"; {t.near_ties} benign near-tie flip(s)" if t.near_ties else ""
    if t.corrupted:
        return "corrupted", (
            f"{t.corrupted}/{t.compared} compared requests judged corrupted "
            f"({t.diverged} diverged from the reference{ties})"
        )
    if t.infra_errors:
        return "failed", f"{t.infra_errors}/{max(expected, t.probes)} requests got no answer (server error)"
    if is_reference:
        return "reference", f"{t.probes} requests answered; other cohorts are compared with these outputs"
    if t.compared == 0:
        return "no-data", "nothing could be compared (no reference output)"
    if t.diverged:
        return "clean", f"0/{t.compared} compared requests corrupted ({t.diverged} diverged{ties})"
    return "clean", f"0/{t.compared} compared requests diverged"
