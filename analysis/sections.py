"""The sections of the qualification report, each a list of document blocks."""

from __future__ import annotations

import json
from collections import Counter

from analysis import stats, tables, verdict
from analysis.document import Block, Bullets, Code, Heading, Image, Para, Table
from analysis.fmt import num, pts
from analysis.qualify import Analysis

MAX_EXAMPLES_PER_COHORT = 2


def header(result: Analysis) -> list[Block]:
    meta = result.run.meta
    what = []
    if result.has_units:
        what.append("SWE-bench rollouts")
    if result.has_probes:
        what.append("canary probes")
    counts = _verdict_counts(result)
    return [
        Heading(1, f"Qualification report: {meta.get('name') or meta.get('run_id')}"),
        Para(
            f"Run `{meta.get('run_id')}` · spec hash `{str(meta.get('spec_hash') or 'not recorded')[:16]}` · "
            f"started {meta.get('started_at') or 'not recorded'} · ended {meta.get('ended_at') or 'still running'} · "
            f"workloads: {', '.join(what) or 'none recorded'}."
        ),
        Para("**Verdicts:** " + (", ".join(f"{n} {v}" for v, n in counts.items()) or "none (no cohorts)")),
    ]


def _verdict_counts(result: Analysis) -> dict[str, int]:
    out: dict[str, int] = {}
    for v in result.verdicts().values():
        out[v] = out.get(v, 0) + 1
    return out


def cohort_table(result: Analysis, accuracy_plot: str | None = None) -> list[Block]:
    """The cohort table (and the accuracy plot after it); when some cohorts run only the canary and others only
    SWE-bench (cohort.json's `workloads`), one table per workload, each with its own cohorts and columns."""
    split = (
        result.has_units
        and result.has_probes
        and not all(s.runs("canary") and s.runs("swebench") for s in result.summaries.values())
    )
    plot = [Image(f"plots/{accuracy_plot}", "resolved accuracy per cohort")] if accuracy_plot else []
    if not split:
        return [Heading(2, "Cohorts"), tables.cohort_table(result), *_cohort_notes(result), *plot]
    return [
        Heading(2, "SWE-bench cohorts"),
        tables.cohort_table(result, "swebench"),
        *_cohort_notes(result),
        *plot,
        Heading(2, "Canary cohorts"),
        tables.cohort_table(result, "canary"),
    ]


def _cohort_notes(result: Analysis) -> list[Block]:
    blocks: list[Block] = []
    if result.has_units:
        blocks.append(
            Para(
                "Accuracy = resolved / graded units; infra failures are left out of the denominator and counted in "
                "their own column, never as unresolved. 95% CIs: cluster bootstrap over instances (repeats of an "
                f"instance resampled together), {stats.BOOTSTRAP_REPLICATES} replicates, seed "
                f"{stats.BOOTSTRAP_SEED}, percentile; Wilson on the instance count when every unit has one outcome."
            )
        )
    if not result.has_units and result.has_probes:
        blocks.append(Para("This run has no SWE-bench units: the verdicts rest on the canary probes."))
    elif not result.has_units:
        blocks.append(Para("This run has neither SWE-bench units nor canary probes yet: nothing to judge."))
    return blocks


def verdicts(result: Analysis) -> list[Block]:
    return [
        Heading(2, "Verdicts"),
        tables.verdict_table(result),
        Para("The rule, from each cohort file's `policy`:"),
        Code(verdict.RULE),
        Para("Policy: " + _policy_text(result)),
    ]


def _policy_text(result: Analysis) -> str:
    policies = {str(sorted(s.policy.items())): s.policy for s in result.summaries.values()}
    parts = []
    for p in policies.values():
        parts.append(", ".join(f"`{k}` = {v}" for k, v in sorted(p.items())))
    return " | ".join(parts)


def comparisons(result: Analysis, plots: dict[str, str]) -> list[Block]:
    if not result.comparisons:
        return []
    blocks: list[Block] = [
        Heading(2, "Paired comparisons against each control"),
        tables.comparison_table(result),
        Bullets(
            [
                "Difference = cohort - control on the instances both cohorts graded; its 95% interval and the drop "
                "bounds are anytime-valid betting confidence sequences over instances (valid at any size, never a "
                "point).",
                "Drop bounds: the two one-sided (1 - alpha) bounds of control - cohort the verdict uses, the "
                "confidence sequence its reason quotes (the only bound it quotes).",
                "McNemar: exact binomial test on instances whose majority outcome (resolved in more than half of "
                "the repeats) differs between the cohorts.",
                "MDD: minimum detectable difference of a paired two-sided test at alpha 0.05 and power 0.8 for this "
                "many instances and repeats, with the control's observed ICC (instance effect shared by both "
                "cohorts).",
            ]
        ),
    ]
    for name, c in result.comparisons.items():
        blocks += [Heading(3, f"{result.summaries[name].label} vs {result.summaries[c.control].label}")]
        blocks.append(tables.flip_table(result, name))
        ties = f"; {c.flips['ties']} instances with a tied majority left out" if c.flips["ties"] else ""
        blocks.append(Para(f"Exact McNemar p = {c.mcnemar_p:.3g}{ties}. Relative accuracy {num(c.relative, '.3f')}."))
        margin = float(result.summaries[name].policy["non_inferiority_margin"])
        if c.mdd > margin:
            blocks.append(
                Para(
                    f"**Power note:** the minimum detectable difference ({100 * c.mdd:.1f} pts) is larger than the "
                    f"margin ({100 * margin:.1f} pts): at this size a build with no real effect reaches PASS only "
                    "part of the time (INCONCLUSIVE otherwise). More instances or repeats shrink it."
                )
            )
    if "flips.png" in plots.values():
        blocks.append(Image("plots/flips.png", "flip tables"))
    return blocks


def sequential(result: Analysis) -> list[Block]:
    rows = []
    for name, c in result.comparisons.items():
        if c.sequential is None:
            continue
        s = result.summaries[name]
        o = c.sequential
        rows.append([s.label, o.decision, f"{o.instances:,} of {o.of:,}", pts(o.estimate), f"{pts(o.upper)}"])
    if not rows:
        return []
    stops = [f"{s.label}: {verdict.stop_sentence(s.early_stop)}" for s in result.summaries.values() if s.early_stop]
    said: list[Block] = [Para("The run stopped these cohorts' rollouts once the test had decided:"), Bullets(stops)]
    return [
        Heading(2, "Early stopping (anytime-valid sequential test)"),
        *(said if stops else []),
        Para(
            "The accuracy decision is sequential: instances enter in the run's seeded order, and two bets on the "
            "per-instance drop run side by side (a betting confidence sequence, Waudby-Smith & Ramdas 2024): FAIL "
            "when the bet on a drop beyond the margin reaches 1/alpha, PASS when the bet on a drop below it does. "
            "Each error is at most alpha at every sample size, however often the run looks, so a run may stop "
            "where the decision was reached. `benchmarks/bench_verdicts.py` measures the error rates."
        ),
        Table(["Cohort", "Decision", "Decided at instance", "Drop there, pts", "Upper bound of the drop, pts"], rows),
    ]


def corruption(result: Analysis, plots: dict[str, str]) -> list[Block]:
    table = tables.labels_table(result)
    blocks: list[Block] = []
    if table is not None or "labels" in plots:
        blocks += [Heading(2, "Corruption labels"), Para("Trajectories carrying each label (advisory: labels never "
                   "change a grade or a denominator; a trajectory is corrupted when it has a label of severity "
                   "error).")]  # fmt: skip
        if table is not None:
            blocks.append(table)
        if "labels" in plots:
            blocks.append(Image(f"plots/{plots['labels']}", "corruption labels per cohort"))
    if "acceptance_vs_corruption" in plots:
        blocks += [Heading(3, "Speculative acceptance vs corruption"), _acceptance_table(result)]
        blocks.append(Image(f"plots/{plots['acceptance_vs_corruption']}", "acceptance vs corruption"))
    return blocks


def _acceptance_table(result: Analysis) -> Table:
    """The plot's points as numbers: every cohort with an acceptance rate (canary-only ones included)."""
    rows = [[s.label, tables.pct(s.acceptance), tables.pct(s.corruption_rate),
             tables.pct((s.probes_corrupted or 0) / s.probes_compared if s.probes_compared else None)]
            for s in result.summaries.values() if s.acceptance is not None]  # fmt: skip
    header = ["Cohort", "Acceptance over the rollouts (canary-only cohorts: the canary)", "Corrupted trajectories",
              "Canary probes corrupted"]  # fmt: skip
    return Table(header, rows, {1, 2, 3})


def canary(result: Analysis, plots: dict[str, str]) -> list[Block]:
    table = tables.canary_table(result)
    if table is None:
        return []
    blocks: list[Block] = [Heading(2, "Canary probes"), table]
    if "first_divergence" in plots:
        blocks.append(Image(f"plots/{plots['first_divergence']}", "first divergence histogram"))
    from analysis import canary_coverage

    labels = {c: s.label for c, s in result.summaries.items()}
    return blocks + canary_coverage.blocks(result.run.path, list(result.summaries), labels)


def repos(result: Analysis, plots: dict[str, str]) -> list[Block]:
    table = tables.repo_table(result)
    if table is None:
        return []
    blocks: list[Block] = [Heading(2, "Accuracy per repository"), table]
    if "repos" in plots:
        blocks.append(Image(f"plots/{plots['repos']}", "accuracy per repository"))
    return blocks


def provenance(result: Analysis) -> list[Block]:
    blocks: list[Block] = [Heading(2, "Provenance of every stack")]
    for row in result.run.cohorts.itertuples():
        label = result.summaries[str(row.cohort)].label
        blocks.append(Heading(3, f"{label} (`{row.cohort}`)"))
        if _missing(row.vllm_version) and _missing(row.patches):
            blocks.append(Para("Stack provenance not recorded (no stack.json)."))
            continue
        patches = [f"`{p.get('file')}` sha256 `{str(p.get('sha256'))[:16]}`{' (reversed)' if p.get('reverse') else ''}"
                   for p in row.patches or []]  # fmt: skip
        files = [f"`{f}` sha256 `{str(h)[:16]}`" for f, h in (row.patched_files or {}).items()]
        kinds = Counter(f"{g.get('name')} (driver {g.get('driver')})" for g in row.gpus or [])
        gpus = ", ".join(f"{n} x {k}" for k, n in kinds.items()) or "none"
        items = [
            f"vLLM {row.vllm_version} from `{row.vllm_path}` (wheel sha256 `{str(row.wheel_sha256)[:16]}`)",
            "patches: " + ("; ".join(patches) if patches else "none"),
            "patched files verified at launch: " + ("; ".join(files) if files else "none"),
            f"torch {row.torch}; GPUs: {gpus}; host {row.stack_host}; launched {row.launched_at}",
            f"speculative config: `{json.dumps(row.speculative_config)}`",
        ]
        commands = result.run.cohort_meta(str(row.cohort)).commands
        blocks.append(Bullets(items))
        if commands:
            blocks.append(Code("\n".join(str(c) for c in commands)))
    return blocks


def _missing(value: object) -> bool:
    return value is None or (isinstance(value, float) and value != value)


def examples(result: Analysis) -> list[Block]:
    """A few corrupted turns per cohort with the classifier's evidence spans."""
    units = result.run.units
    if units.empty:
        return []
    blocks: list[Block] = []
    for cohort in result.summaries:
        bad = units[(units["cohort"] == cohort) & units["corrupted"].fillna(False).astype(bool)]
        for unit in bad.sort_values(["instance_id", "repeat"]).head(MAX_EXAMPLES_PER_COHORT).itertuples():
            udir = result.run.path / str(unit.unit_dir)
            for turn in result.run.unit_turns(cohort, udir, str(unit.instance_id)):
                if turn["labels"]:
                    blocks += _example(result.summaries[cohort].label, unit, turn)
                    break
    return [Heading(2, "Example corrupted turns"), *blocks] if blocks else []


def _example(label: str, unit: object, turn: dict) -> list[Block]:
    ev = [f"`{e.get('label')}` in `{e.get('field')}` [{e.get('start')}:{e.get('end')}]: `{json.dumps(e.get('text'))}`"
          for e in turn["evidence"]]  # fmt: skip
    content = repr(str(turn.get("content") or ""))[:600]
    where = f"{label}: `{getattr(unit, 'instance_id', '')}` repeat {getattr(unit, 'repeat', '')}, turn {turn['turn']}"
    return [Heading(3, where), Bullets(ev or ["(no evidence recorded)"]), Code(f"content: {content}")]
