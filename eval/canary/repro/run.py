"""Make a reproducer: confirm the failing case on live servers, shrink it, measure how often it shows, write it.

With both servers (URLs, or stacks the command starts) the failing case is re-run on both, shrunk with the
fuzzer's delta debugging (each check in a fresh `cache_salt`, so a check sees only the prefix cache it filled
itself, as the standalone reproducer will), and the minimal case is run `repeats` times. Without servers the
recorded requests are replayed into the reproducer as they are (expected = the reference's recorded output).
"""

from __future__ import annotations

import asyncio
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from eval.canary.client import HEALTH_WAIT_S, wait_healthy
from eval.canary.fuzz.api import judge_case
from eval.canary.fuzz.case import Case, Finding
from eval.canary.fuzz.execute import records_of, run_case_async
from eval.canary.fuzz.oracles import default_oracles
from eval.canary.fuzz.rescore import rescore_greedy
from eval.canary.fuzz.shrink import shrink
from eval.canary.records import ProbeRecord
from eval.canary.repro.evidence import Evidence, find, outputs
from eval.canary.repro.write import report, servers_of, write_dir


@dataclass
class Live:
    cohort_url: str
    reference_url: str
    model: str
    near_tie: float = 0.25
    lp_tolerance: float = 0.5
    rescore_nats: float = 1.0

    def run(self, case: Case) -> tuple[list[ProbeRecord], list[ProbeRecord], list[Finding]]:
        salt = uuid.uuid4().hex
        ref = records_of(case, asyncio.run(run_case_async(case, self.reference_url, self.model, salt=salt)), "ref", "")
        mine = records_of(case, asyncio.run(run_case_async(case, self.cohort_url, self.model, salt=salt)), "cohort", "")
        for recs, url in ((mine, self.cohort_url), (ref, self.reference_url)):  # the `rescore` oracle reads these
            asyncio.run(rescore_greedy(recs, url, self.model, self.rescore_nats))
        oracles = default_oracles(None, self.near_tie, self.lp_tolerance)  # the crash oracle included
        findings = judge_case(case, mine, ref, oracles)
        if any(r.infra_error for r in mine + ref):  # a crashed engine restarts (the stack's watchdog): wait for it
            for url in (self.cohort_url, self.reference_url):
                asyncio.run(wait_healthy(url, HEALTH_WAIT_S))
        return mine, ref, findings

    def fails(self, case: Case) -> bool:
        return any(f.failed for f in self.run(case)[2])


@dataclass
class Made:
    path: Path
    requests: int
    shrunk_from: int
    rate: str
    checks: int


def make_repro(
    run_path: Path,
    cohort: str,
    facts: dict[str, Any],
    model: str,
    live: Live | None = None,
    group: str | None = None,
    max_checks: int = 30,
    repeats: int = 3,
) -> Made:
    ev = find(run_path, cohort, group)
    servers = {"cohort": servers_of(run_path, cohort), "reference": servers_of(run_path, ev.reference)}
    case, checks = ev.case, 0
    if live is None:
        expected, actual = outputs(ev.reference_records), outputs(ev.cohort_records)
        rate = "Replayed from the recorded run (1 failing run); not re-run here: no servers were given."
    else:
        case, checks, expected, actual, rate = _confirm_and_shrink(ev, live, max_checks, repeats)
    title = (
        f"Speculative decoding changes output: {cohort} vs {ev.reference} ({ev.group}, {len(case.requests)} request(s))"
    )
    data = {
        "case": case.model_dump(mode="json"),
        "servers": servers,
        "expected": expected,
        "recorded_actual": actual,
        "model": model,
        "logprob_tolerance": 0.5,
    }
    md = report(
        title,
        {**facts, "evidence": f"{run_path}/{cohort}/probes ({ev.group})"},
        case,
        servers,
        expected,
        actual,
        rate,
        ev.reason,
    )
    out = write_dir(run_path / cohort / "repro", data, title, md, case)
    return Made(out, len(case.requests), len(ev.case.requests), rate, checks)


def _confirm_and_shrink(
    ev: Evidence, live: Live, max_checks: int, repeats: int
) -> tuple[Case, int, dict[str, Any], dict[str, Any], str]:
    shown = sum(live.fails(ev.case) for _ in range(repeats))
    case, checks = ev.case, repeats
    if shown:
        case, used = shrink(ev.case, live.fails, max_checks)
        checks += used
    runs = [live.run(case) for _ in range(repeats)]
    bad = [r for r in runs if any(f.failed for f in r[2])]
    mine, ref, findings = (bad or runs)[0]
    failed = [f"{f.role}: {f.oracle}: {f.reason}" for f in findings if f.failed]
    rate = (
        f"The recorded case failed in {shown}/{repeats} re-runs on the live servers; the minimal case "
        f"({len(case.requests)} request(s), from {len(ev.case.requests)}, {checks} runs of shrinking and checking) "
        f"failed in {len(bad)}/{repeats} runs. " + ("; ".join(failed[:3]) if failed else "")
    )
    return case, checks, outputs(ref), outputs(mine), rate
