"""Planning: how many instances a comparison needs before the sequential test decides, by fast simulation.

From the policy (alpha, margin), the control's resolve rate, the ICC between repeats, the repeats per instance
and a true drop, `plan` simulates paired Beta-Binomial runs (analysis.sequential.simulate_pairs) up to a cap and
monitors each with the anytime-valid test: P(PASS), P(FAIL), P(INCONCLUSIVE within the cap) and the instances
used (median, p90). The same function writes the "a verdict would need about N instances" of an INCONCLUSIVE
reason and the cost table of `specqual plan` (`python -m analysis plan-cost`).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np

from analysis import sequential

DEFAULT_ICC = 0.35  # used when the ICC is not known (the synthetic SWE-bench runs realise about 0.35)
SEED_CONTROL, SEED_COHORT = 0.3867, 0.0380  # vLLM PR 55178: SWE-bench Verified, MTP off vs MTP 5


@dataclass(frozen=True)
class Plan:
    drop: float
    p_pass: float
    p_fail: float
    p_inconclusive: float
    median_instances: float  # instances used (the cap for paths that never decide)
    p90_instances: float
    cap: int
    paths: int

    def as_dict(self) -> dict[str, float]:
        return asdict(self)


def plan(
    margin: float,
    alpha: float,
    control_rate: float,
    drop: float,
    icc: float = DEFAULT_ICC,
    repeats: int = 3,
    cap: int = 2000,
    paths: int = 400,
    seed: int = 0,
) -> Plan:
    """Operating characteristics of one comparison up to `cap` instances (simulated in chunks, stops early)."""
    rng = np.random.default_rng(seed)
    rate = min(max(control_rate, 0.0), 1.0)
    cohort = min(max(rate - drop, 0.0), 1.0)
    icc = DEFAULT_ICC if icc is None or math.isnan(icc) else icc
    d = sequential.simulate_pairs(rng, paths, cap, rate, cohort, max(int(repeats), 1), icc)
    decision, used = sequential.run_paths(d, sequential.Design(margin, alpha))
    med, p90 = np.percentile(used, [50, 90])
    return Plan(
        drop=rate - cohort,
        p_pass=float(np.mean(decision == sequential.PASS)),
        p_fail=float(np.mean(decision == sequential.FAIL)),
        p_inconclusive=float(np.mean(decision == sequential.INCONCLUSIVE)),
        median_instances=float(med),
        p90_instances=float(p90),
        cap=cap,
        paths=paths,
    )


def needed_sentence(p: Plan, have: int) -> str:
    """'a verdict would need about N instances ...' for an INCONCLUSIVE reason."""
    if p.p_inconclusive > 0.5:
        return (
            f"at the observed rates a verdict would need more than {p.cap:,} instances "
            f"(P(verdict within {p.cap:,}) = {100 * (1 - p.p_inconclusive):.0f}%); this run has {have:,}"
        )
    likely = "PASS" if p.p_pass >= p.p_fail else "FAIL"
    spread = (
        f"90% of simulated runs by {p.p90_instances:,.0f}"
        if p.p90_instances < p.cap
        else f"{100 * (1 - p.p_inconclusive):.0f}% of simulated runs decide within {p.cap:,}"
    )
    return (
        f"at the observed rates a verdict would need about {p.median_instances:,.0f} instances "
        f"({spread}; {likely} likely); this run has {have:,}"
    )


def scenarios(margin: float, control_rate: float) -> dict[str, float]:
    """The three drops `specqual plan` prices: none, the margin, and the seed's effect (38.67% -> 3.80%: the same
    relative loss at this rate)."""
    return {
        "no effect": 0.0,
        "drop = margin": min(margin, control_rate),
        "seed effect": control_rate * (1 - SEED_COHORT / SEED_CONTROL),
    }
