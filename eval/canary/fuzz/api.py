"""Run generated cases against one running cohort stack and its reference: the entry point for other stages.

`run_cases(cases, cohort_url, reference_url, model)` sends each case to the reference, then to the cohort
(the same requests, the same timing), and returns every oracle's findings. `judge_case` judges records that
were already collected. Used by `specqual repro` (shrinking) and by canary phases on a long-running stack.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from eval.canary.fuzz.case import Case, Finding
from eval.canary.fuzz.derive import resolve
from eval.canary.fuzz.execute import records_of, run_case_async
from eval.canary.fuzz.oracles import Oracle, default_oracles, judge_request
from eval.canary.records import ProbeRecord


def judge_case(
    case: Case | None,
    cohort_records: Sequence[ProbeRecord],
    reference_records: Sequence[ProbeRecord],
    oracles: Sequence[Oracle] | None = None,
    near_tie: float = 0.25,
    lp_tolerance: float = 0.5,
) -> list[Finding]:
    """Findings for every cohort record, each judged against the reference record of the same request role."""
    use = list(oracles) if oracles is not None else default_oracles(None, near_tie, lp_tolerance)
    refs = {r.role: r for r in reference_records}
    findings: list[Finding] = []
    for rec in cohort_records:
        for f in judge_request(case, rec, refs.get(rec.role), use):
            f.case_id = case.case_id if case is not None else rec.probe_id.rsplit("-", 1)[0]
            findings.append(f)
    return findings


async def run_cases_async(
    cases: Sequence[Case],
    cohort_url: str,
    reference_url: str,
    model: str,
    oracles: Sequence[Oracle] | None = None,
    cohort: str = "cohort",
    reference: str = "reference",
    near_tie: float = 0.25,
    lp_tolerance: float = 0.5,
    salt: str | None = None,
) -> list[Finding]:
    findings: list[Finding] = []
    for case in cases:
        case = await resolve(case, reference_url, model)  # output-guided parameters, from pilots on the reference
        ref_out = await run_case_async(case, reference_url, model, salt=salt)
        ref = records_of(case, ref_out, reference, reference_url)
        mine = records_of(case, await run_case_async(case, cohort_url, model, salt=salt), cohort, cohort_url)
        findings += judge_case(case, mine, ref, oracles, near_tie, lp_tolerance)
    return findings


def run_cases(
    cases: Sequence[Case],
    cohort_url: str,
    reference_url: str,
    model: str,
    oracles: Sequence[Oracle] | None = None,
    cohort: str = "cohort",
    reference: str = "reference",
    near_tie: float = 0.25,
    lp_tolerance: float = 0.5,
    salt: str | None = None,
) -> list[Finding]:
    """Send every case to the reference, then to the cohort; every oracle's findings (fail = corruption).
    `salt`: vLLM's `cache_salt` on every request (a fresh prefix-cache namespace; None: the server's shared one)."""
    return asyncio.run(
        run_cases_async(
            cases, cohort_url, reference_url, model, oracles, cohort, reference, near_tie, lp_tolerance, salt
        )
    )
