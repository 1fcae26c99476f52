"""The qualification verdict: PASS / FAIL / INCONCLUSIVE per cohort, from the cohort file's policy.

The rule (written into every report):
1. FAIL when the canary diverged (if `canary_must_be_clean`), or when the share of corrupted trajectories
   exceeds `corruption_ceiling` with significance alpha: evidence of damage fails a build whatever else is
   missing. With a control, the test is on the per-instance excess over the control's share, paired by
   instance (what the compared factor added: a model that loops on its own fails its control, not every cohort
   compared with it); without one, on the share itself. Corrupted trajectories are counted and shown whatever
   the test says; a share (or excess) above the ceiling that is not yet significant makes the cohort
   INCONCLUSIVE, never PASS.
2. INCONCLUSIVE when more than `max_infra_rate` of the units have no grade (infra failures, ungraded), or of
   the instances are not graded in both the cohort and its control, or when the cohort's server kept dying and
   the stack gave up restarting it (`server.max_restarts`): the accuracy test is not run on a sample the
   infrastructure chose. Infra failures never count as unresolved.
3. With a control: drop = accuracy(control) - accuracy(cohort), tested on the per-instance drops in the run's
   seeded instance order by two anytime-valid bets at level alpha each (a betting confidence sequence,
   Waudby-Smith & Ramdas 2024). FAIL when the drop is larger than the margin with significance alpha; PASS when
   a drop as large as the margin is excluded at level alpha; otherwise INCONCLUSIVE, with the number of
   instances a verdict would need at the observed rates. Valid at every sample size and rate, and however
   often a run looked before it stopped: a run that stopped a cohort's rollouts once this test decided
   (`early_stop.json`) is judged on what it ran, and the reason says where it stopped.
4. Without a control (the controls themselves) or without SWE-bench units, the verdict rests on the checks
   that exist (canary, corruption, infra) and says so.
"""

from __future__ import annotations

from analysis import fmt, planning
from analysis.fmt import pct
from analysis.paired import PairedComparison
from analysis.summary import CohortSummary
from analysis.uptime_evidence import evidence as uptime_evidence
from store.unit_records import EarlyStopRecord

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
    corrupted = s.probes_diverged if s.probes_corrupted is None else s.probes_corrupted
    ties = f" ({s.probes_near_ties} benign near-tie flips)" if s.probes_near_ties else ""
    if corrupted:
        first = min(s.first_divergences) if s.first_divergences else None
        at = f", first divergent token at index {first}" if first is not None else ""
        why = f"; {s.probe_corruption_reason}" if s.probe_corruption_reason else ""
        # Without benign flips every divergence is corruption: the plain wording of token equality.
        what = "diverged" if corrupted == s.probes_diverged else f"judged corrupted ({s.probes_diverged} diverged)"
        msg = f"canary: {corrupted}/{s.probes_compared} probes {what}{ref}{at}{ties}{why}"
        (fails if s.policy.get("canary_must_be_clean", True) else notes).append(msg)
    elif s.canary_blind:
        # Blind is not clean: no divergence where the canary could not see (no accepted drafts, a trigger never
        # sent) is no evidence, so the cohort cannot PASS on it.
        missing.append(f"canary inconclusive: 0/{s.probes_compared} probes corrupted{ref}, but {s.canary_blind}")
    else:
        what = "diverged" if not s.probes_diverged else "judged corrupted"
        notes.append(f"canary clean: 0/{s.probes_compared} probes {what}{ref}{ties}")


def _corruption(s: CohortSummary, fails: list[str], notes: list[str], missing: list[str]) -> None:
    rate, t = s.corruption_rate, s.corruption_test
    if rate is None:
        return
    ceiling = float(s.policy["corruption_ceiling"])
    msg = f"corrupted trajectories {s.corrupted_trajectories}/{s.classified} = {pct(rate)}"
    if t is not None and t.paired and s.control_corruption_rate is not None:
        msg = f"{msg}, {s.control} {pct(s.control_corruption_rate)}: excess {pts(t.excess)}"
        bound = f"{100 * (1 - float(s.policy['alpha'])):.0f}% lower bound {pts(t.lower)}"
        limit = f"ceiling {100 * ceiling:.2f} pts"
    else:
        bound = f"{100 * (1 - float(s.policy['alpha'])):.0f}% lower bound {pct(t.lower) if t else 'n/a'}"
        limit = f"ceiling {pct(ceiling)}"
    if t is not None and t.significant:
        fails.append(f"{msg} > {limit} ({bound}, significant after {t.decided_at} instances)")
    elif (t.excess if t is not None else rate) > ceiling:
        # Not evidence enough to fail, and not a clean bill either: a share above the ceiling cannot PASS.
        n = t.instances if t else 0
        missing.append(f"{msg} above the {limit} but not significantly ({bound}, {n} instances): cannot tell yet")
    else:
        notes.append(f"{msg} <= {limit}")


def stop_sentence(early_stop: EarlyStopRecord) -> str:
    """Where a run stopped a cohort's rollouts (its `early_stop.json`), without bounds: the accuracy sentence
    quotes the drop's one confidence sequence, over everything graded (the stop's own record quotes the bounds
    of the moment it asked, which differ once the units in flight are graded)."""
    s = early_stop
    return f"{s.decision} decided at instance {s.decided_at} of {s.planned} in the shared order"


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
    if s.early_stop:
        # The run stopped scheduling this cohort once the test had decided: the instances it left out are not
        # missing data but the saving; the decision below is the one it stopped on (the same prefix, same order).
        notes.append(f"rollouts stopped early: {stop_sentence(s.early_stop)}")
        if s.after_stop_units:
            notes.append(f"{s.after_stop_units} units that finished after the decision are not counted")
    elif unshared > float(s.policy["max_infra_rate"]):
        missing.append(
            f"only {cmp.instances} of {cmp.instances_union} instances were graded in both this cohort and "
            f"{s.control} ({pct(unshared)} unpaired > max {pct(float(s.policy['max_infra_rate']))})"
        )
        return
    margin = float(s.policy["non_inferiority_margin"])
    lo, hi = cmp.drop_ci
    # The one bound a reason prints: the drop's confidence sequence over every instance both cohorts graded (the
    # two one-sided (1 - alpha) bounds the test decides on). The early stop's own record quotes the bounds at the
    # moment it asked, before the units in flight finished; the reason says only where it stopped.
    level = f"{100 * cmp.drop_ci_level:.0f}% confidence sequence"
    msg = (
        f"drop vs {s.control} {pts(-cmp.diff)} ({level} {pts(lo)} .. {pts(hi)}: the anytime-valid bounds of the drop "
        f"over the {cmp.instances:,} instances both graded, margin {100 * margin:.2f} pts)"
    )
    seq = cmp.sequential
    at = f"decided at instance {seq.instances:,} of {seq.of:,}" if seq else ""
    if seq is not None and seq.decision == "FAIL":
        fails.append(f"accuracy {msg}: significantly beyond the margin, {at}")
    elif seq is not None and seq.decision == "PASS":
        notes.append(f"non-inferior: {msg}, {at}")
    else:
        alpha = float(s.policy["alpha"])
        need = planning.plan(margin, alpha, cmp.rate_control, -cmp.diff, cmp.icc, round(cmp.repeats))
        missing.append(f"accuracy {msg}: cannot tell yet; {planning.needed_sentence(need, cmp.instances)}")


def _server(s: CohortSummary, notes: list[str], missing: list[str]) -> None:
    if s.server is None:
        return
    if s.server.gave_up:
        missing.append(s.server.reason())
    elif s.server.restarts:
        notes.append(f"server restarted {s.server.restarts} times mid-run (units in flight retried as infra)")


def _uptime(s: CohortSummary, fails: list[str], notes: list[str], missing: list[str]) -> None:
    """A soak's result (uptime.json) is evidence like the canary's: corruption that grows with uptime FAILs, a soak
    that exercised nothing is missing evidence (blind is not clean), a collapse with clean phases is a note."""
    got = uptime_evidence(s.uptime)
    if got is not None:
        {"fails": fails, "missing": missing, "notes": notes}[got[0]].append(got[1])


def decide(s: CohortSummary, cmp: PairedComparison | None) -> tuple[str, str]:
    """The verdict and its reason, a sentence per check."""
    fails: list[str] = []
    notes: list[str] = []
    missing: list[str] = []
    _canary(s, fails, notes, missing)
    _uptime(s, fails, notes, missing)
    _corruption(s, fails, notes, missing)
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
