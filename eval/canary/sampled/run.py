"""Run the sampled mode over a cohort file: the reference stack stays up, each probed cohort's stack comes and goes.

The reference (speculation off) re-scores every draw, so it runs for the whole command; the other cohorts start one
after the other (the next one starting while the current one is probed, `eval.stages.serve_each`). The reference
is also probed itself, against its own re-scoring: that control checks the transforms and the test end to end
with no speculative decoding at all.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from eval.canary.sampled.probe import Target, probe_sampled
from eval.spec.errors import SpecError
from eval.spec.load import LoadedSpec
from eval.spec.matrix import Cohort
from eval.spec.workloads import SampledWorkload
from eval.stages import StackFactory, serve_each
from eval.store.run import RunDir


def sampled_config(loaded: LoadedSpec) -> SampledWorkload:
    cfg = loaded.spec.workloads.sampled
    if cfg is None:
        raise SpecError("workloads.sampled", "this cohort file has no sampled workload")
    loaded.cohort(cfg.reference)
    for name in cfg.cohorts or []:
        loaded.cohort(name)
    return cfg


def vocab_size(model: Path) -> int:
    cfg = json.loads((model / "config.json").read_text())
    return int(cfg.get("vocab_size") or cfg["text_config"]["vocab_size"])


def served_dtype(cohort: Cohort, model: Path) -> str:
    if cohort.model.dtype != "auto":
        return cohort.model.dtype
    cfg = json.loads((model / "config.json").read_text())
    return str(cfg.get("torch_dtype") or cfg.get("dtype") or "float32")


def run_sampled(
    loaded: LoadedSpec,
    run: RunDir,
    model: Path,
    *,
    stacks_factory: StackFactory,
    cohorts: list[str] | None = None,
    report: Any = print,
) -> dict[str, dict[str, Any]]:
    """Probe every cohort (`cohorts`, else `workloads.sampled.cohorts`, else the matrix); cohort -> summary."""
    cfg = sampled_config(loaded)
    names = cohorts or cfg.cohorts or [c.name for c in loaded.cohorts]
    ref_cohort = loaded.cohort(cfg.reference)
    vocab = vocab_size(model)
    summaries: dict[str, dict[str, Any]] = {}

    def probe(cohort: Cohort, target: Target, reference: Target) -> None:
        dtype = served_dtype(cohort, model)
        itself = target is reference
        for k in range(1 if itself else cfg.runs):  # the reference's own control: one run
            seed = cfg.seed + k
            one = cfg.model_copy(update={"seed": seed})
            out = run.cohort_dir(cohort.name) / "sampled" / f"seed{seed}"
            report(f"sampled: probing {cohort.name} ({dtype}, seed {seed}) at {target.base_url}")
            summary = asyncio.run(probe_sampled(target, reference, one, vocab, dtype, out, cohort.name, itself))
            summaries[f"{cohort.name}/seed{seed}"] = summary
            report(line(summary))

    with stacks_factory(ref_cohort) as ref_stack:
        reference = Target(ref_stack.base_url, ref_cohort.model.served_name)
        if cfg.reference in names:
            probe(ref_cohort, reference, reference)
        order = [loaded.cohort(n) for n in names if n != cfg.reference]

        def work(cohort: Cohort, stack: Any) -> None:
            probe(cohort, Target(stack.base_url, cohort.model.served_name), reference)

        def failed(cohort: Cohort, reason: str) -> None:
            summaries[cohort.name] = {"cohort": cohort.name, "seed": cfg.seed, "verdict": "INFRA", "error": reason}
            report(f"sampled: {cohort.name}: {reason}")

        serve_each(order, stacks_factory, work, failed)
    return summaries


def line(summary: dict[str, Any]) -> str:
    """One line per run: verdict, tokens tested, e-value, TV bounds, support violations, time."""
    if "test" not in summary:
        return f"{summary['cohort']}: {summary['verdict']} ({summary.get('error', '')})"
    t = summary["test"]
    text = (
        f"{summary['cohort']} seed {summary.get('seed')}: {summary['verdict']}  draws {summary['draws']}  "
        f"tokens {t['tokens']}  log e {t['log_e']:.2f} (FAIL at {t['e_threshold']:.0f})  "
        f"TV in [{t['tv_lower']:.4f}, {t['tv_upper']:.4f}]  support violations {t['support_violations']}  "
        f"greedy violations {summary['greedy_violations']}  boundary ties {summary['boundary_ties']}  "
        f"{summary['wall_s']} s"
    )
    tv, gap = summary.get("decode_tv", {}), summary.get("decode_logprob_gap", {})
    if tv.get("tokens"):
        text += f"  decode-vs-rescore TV mean {tv['mean']:.2e} p99 {tv['p99']:.2e} max {tv['max']:.2e}"
    if gap.get("tokens"):
        text += f"  logprob gap p99 {gap['p99']:.2e} max {gap['max']:.2e}"
    return text
