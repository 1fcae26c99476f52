"""The qualification verdict: PASS / FAIL / INCONCLUSIVE per cohort, from the cohort file's policy.

The rule (written into every report):
1. FAIL when the canary diverged (if `canary_must_be_clean`), or when the share of corrupted trajectories
   exceeds `corruption_ceiling`: evidence of damage fails a build whatever else is missing. With a control,
   the ceiling bounds the excess over the control's share (what the compared factor added: a model that loops
   on its own fails its control, not every cohort compared with it); without one, the share itself.
2. INCONCLUSIVE when more than `max_infra_rate` of the units have no grade (infra failures, ungraded), or of
   the instances are not graded in both the cohort and its control, or when the cohort's server kept dying and
   the stack gave up restarting it (`server.max_restarts`): the accuracy test is not run on a sample the
   infrastructure chose. Infra failures never count as unresolved.
3. With a control: let drop = accuracy(control) - accuracy(cohort) and [lo, hi] its two-sided (1 - 2 alpha)
   paired cluster-bootstrap interval (each bound is a one-sided alpha bound). FAIL when lo > margin (the drop is
   significantly larger than the margin); PASS when hi < margin (a drop as large as the margin is excluded);
   otherwise INCONCLUSIVE (not enough data to tell).
4. Without a control (the controls themselves) or without SWE-bench units, the verdict rests on the checks
   that exist (canary, corruption, infra) and says so.
"""

from __future__ import annotations

from analysis import fmt
from analysis.fmt import pct
from analysis.paired import PairedComparison
from analysis.summary import CohortSummary

RULE = __doc__.split("The rule (written into every report):\n", 1)[1] if __doc__ else ""


def pts(x: float) -> str:
    return f"{fmt.pts(x)} pts"


def _canary(s: CohortSummary, fails: list[str], notes: list[str], missing: list[str]) -> None:
    if s.probes_total is None:
        return
    ref = f" vs {s.probe_reference}" if s.probe_reference else ""
    if s.server_error and s.probes_infra:
        # The engine under test died on valid requests: a finding about the build, not an infrastructure hiccup.
        fails.append(f"canary: the server failed {s.probes_infra}/{s.probes_total} requests: {s.server_error}")
        return
    if s.probes_compared == 0:
        if s.probes_total and s.probes_infra == s.probes_total:
            missing.append(f"canary: all {s.probes_total} probes failed on infrastructure")
        else:
            notes.append(f"canary: {s.probes_total} probes ran, none compared (this is a reference cohort)")
        return
    if s.probes_diverged:
        first = min(s.first_divergences) if s.first_divergences else None
        at = f", first divergent token at index {first}" if first is not None else ""
        msg = f"canary: {s.probes_diverged}/{s.probes_compared} probes diverged{ref}{at}"
        (fails if s.policy.get("canary_must_be_clean", True) else notes).append(msg)
    else:
        notes.append(f"canary clean: 0/{s.probes_compared} probes diverged{ref}")


def _corruption(s: CohortSummary, fails: list[str], notes: list[str]) -> None:
    rate = s.corruption_rate
    if rate is None:
        return
    ceiling = float(s.policy["corruption_ceiling"])
    msg = f"corrupted trajectories {s.corrupted_trajectories}/{s.classified} = {pct(rate)}"
    base = s.control_corruption_rate
    if base is not None:
        excess = rate - base
        msg = f"{msg}, {s.control} {pct(base)}: excess {pts(excess)}"
        if excess > ceiling:
            fails.append(f"{msg} > ceiling {100 * ceiling:.2f} pts")
        else:
            notes.append(f"{msg} <= ceiling {100 * ceiling:.2f} pts")
    elif rate > ceiling:
        fails.append(f"{msg} > ceiling {pct(ceiling)}")
    else:
        notes.append(f"{msg} <= ceiling {pct(ceiling)}")


def _accuracy(s: CohortSummary, cmp: PairedComparison | None, fails: list[str], notes: list[str], missing: list[str]):
    if s.units is None:
        if s.probes_total:
            notes.append("no SWE-bench units: the verdict rests on the canary")
        else:
            missing.append("no SWE-bench units and no canary probes: nothing to judge")
        return
    if s.control is None:
        notes.append("no control: accuracy is not compared (own canary, corruption and infra checks only)")
        return
    if cmp is None:
        missing.append(f"no graded instance shared with control {s.control}")
        return
    unshared = 1 - cmp.instances / cmp.instances_union if cmp.instances_union else 0.0
    if unshared > float(s.policy["max_infra_rate"]):
        missing.append(
            f"only {cmp.instances} of {cmp.instances_union} instances were graded in both this cohort and "
            f"{s.control} ({pct(unshared)} unpaired > max {pct(float(s.policy['max_infra_rate']))})"
        )
        return
    margin = float(s.policy["non_inferiority_margin"])
    lo, hi = cmp.drop_ci
    level = f"{100 * cmp.drop_ci_level:.0f}% CI"
    msg = f"drop vs {s.control} {pts(-cmp.diff)} ({level} {pts(lo)} .. {pts(hi)}, margin {100 * margin:.2f} pts)"
    if lo > margin:
        fails.append(f"accuracy {msg}: significantly beyond the margin")
    elif hi < margin:
        notes.append(f"non-inferior: {msg}")
    else:
        missing.append(f"accuracy {msg}: cannot tell yet (minimum detectable difference {100 * cmp.mdd:.1f} pts)")


def _server(s: CohortSummary, notes: list[str], missing: list[str]) -> None:
    if s.server is None:
        return
    if s.server.gave_up:
        missing.append(s.server.reason())
    elif s.server.restarts:
        notes.append(f"server restarted {s.server.restarts} times mid-run (units in flight retried as infra)")


def decide(s: CohortSummary, cmp: PairedComparison | None) -> tuple[str, str]:
    """The verdict and its reason, a sentence per check."""
    fails: list[str] = []
    notes: list[str] = []
    missing: list[str] = []
    _canary(s, fails, notes, missing)
    _corruption(s, fails, notes)
    _server(s, notes, missing)
    infra = s.missing_rate
    if infra is not None and infra > float(s.policy["max_infra_rate"]):
        missing.append(
            f"{s.infra_failures} infra failures and {s.ungraded} ungraded of {s.units} units = {pct(infra)} "
            f"> max {pct(float(s.policy['max_infra_rate']))}: accuracy not judged"
        )
    else:
        _accuracy(s, cmp, fails, notes, missing)
    if fails:
        return "FAIL", "; ".join(fails + missing + notes)
    if missing:
        return "INCONCLUSIVE", "; ".join(missing + notes)
    if not notes:
        return "INCONCLUSIVE", "nothing to judge: no units and no probes"
    return "PASS", "; ".join(notes)
