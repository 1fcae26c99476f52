"""The accuracy decision: an anytime-valid non-inferiority test on paired per-instance differences.

Instances are taken in one seeded order (store.order). For instance i, d_i = rate_control_i - rate_cohort_i
(each cohort's resolve rate over its graded repeats), in [-1, 1]; repeats and the intra-instance correlation stay
inside d_i's distribution, and instances are the independent units. Two bets run side by side on the sequence
(analysis.betting), each at level alpha:

- FAIL the first time the bet on "the drop is larger than the margin" reaches capital 1/alpha,
- PASS the first time the bet on "the drop is smaller than the margin" reaches capital 1/alpha,
- INCONCLUSIVE while neither has (whatever the sample size).

Both bets are test supermartingales under their null, so P(false PASS) <= alpha when the true drop is >= margin
and P(false FAIL) <= alpha when it is <= margin, at every sample size and every rate, however often the test
looks: a run may stop the moment one bet wins (eval's early stop) and keeps these error rates. The same bets on a
grid of margins give the confidence sequence [lower, upper] of the drop reported next to the verdict.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from analysis import betting

FAIL, PASS, INCONCLUSIVE = 1, 2, 0
DECISION_NAMES = {FAIL: "FAIL", PASS: "PASS", INCONCLUSIVE: "INCONCLUSIVE"}
METHOD = "anytime-valid betting confidence sequence over instances (Waudby-Smith & Ramdas 2024, aGRAPA bets)"


@dataclass(frozen=True)
class Design:
    margin: float
    alpha: float = 0.05


@dataclass(frozen=True)
class Outcome:
    decision: str
    instances: int  # where the decision was reached (all of them when INCONCLUSIVE)
    of: int  # instances in the sequence
    estimate: float  # mean drop over the instances used
    lower: float  # (1 - alpha) lower confidence-sequence bound of the drop, over the whole sequence
    upper: float  # (1 - alpha) upper bound


def run_paths(d: np.ndarray, design: Design) -> tuple[np.ndarray, np.ndarray]:
    """Many sequences at once: d is (paths, instances) -> (decision codes, instances used)."""
    d = np.atleast_2d(np.asarray(d, dtype=float))
    n = d.shape[1]
    fail_at = betting.first_crossing(betting.log_capital(d, design.margin, betting.UP), design.alpha)
    pass_at = betting.first_crossing(betting.log_capital(d, design.margin, betting.DOWN), design.alpha)
    fail_at = np.where(fail_at < 0, n, fail_at)
    pass_at = np.where(pass_at < 0, n, pass_at)
    decision = np.where(fail_at <= pass_at, FAIL, PASS)  # a tie (both at one instance) counts as FAIL
    decision = np.where(np.minimum(fail_at, pass_at) >= n, INCONCLUSIVE, decision)
    used = np.where(decision == INCONCLUSIVE, n, np.minimum(fail_at, pass_at) + 1)
    return decision, used


def monitor(d: np.ndarray, design: Design) -> Outcome:
    """The decision on one observed sequence of per-instance differences, with the drop's bounds."""
    d = np.asarray(d, dtype=float)
    decision, used = run_paths(d, design)
    n = int(used[0]) if d.size else 0
    return Outcome(
        decision=DECISION_NAMES[int(decision[0])] if d.size else "INCONCLUSIVE",
        instances=n,
        of=int(d.size),
        estimate=float(d[:n].mean()) if n else float("nan"),
        lower=betting.bound(d, betting.UP, design.alpha),
        upper=betting.bound(d, betting.DOWN, design.alpha),
    )


def simulate_pairs(
    rng: np.random.Generator,
    paths: int,
    instances: int,
    control_rate: float,
    cohort_rate: float,
    repeats: int = 3,
    rho: float = 0.5,
) -> np.ndarray:
    """Per-instance differences (control - cohort) from a Beta-Binomial model with ICC rho between repeats.

    Instance difficulty p_i ~ Beta with mean control_rate and 1/(a+b+1) = rho (rho 0: every instance has the
    control rate); the cohort's probability is a monotone transform of the same p_i with mean cohort_rate, so
    cohorts share instance difficulty as in a paired run.
    """
    p = latent_rates(rng, (paths, instances), control_rate, rho)
    if cohort_rate <= control_rate:
        q = p * (cohort_rate / control_rate) if control_rate > 0 else np.zeros_like(p)
    else:
        q = 1 - (1 - p) * ((1 - cohort_rate) / (1 - control_rate))
    yc = rng.binomial(repeats, p)
    yt = rng.binomial(repeats, q)
    return (yc - yt) / repeats


def latent_rates(rng: np.random.Generator, shape: tuple[int, int], rate: float, rho: float) -> np.ndarray:
    """Per-instance success probabilities with mean `rate` and ICC `rho` (Beta; a constant when degenerate)."""
    if rho <= 0 or rate <= 0 or rate >= 1:
        return np.full(shape, float(rate))
    s = 1 / rho - 1
    return rng.beta(rate * s, (1 - rate) * s, size=shape)
