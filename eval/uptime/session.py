"""One cohort's uptime session on a running stack, and its summary (`<run>/<cohort>/uptime.json`).

- `soak_cohort(loaded, run, cohort, stack)`: fresh phase, the soak (with its during phases), after phase, all under
  a /metrics recorder (workload `uptime` in metrics.jsonl); then `summarize`. The reference cohort runs the fresh
  phase only (`phases_only=True`).
- `around_rollouts(loaded, run, cohort, stack)`: the same phases around any other load (the pipeline's rollouts):
  the fresh phase on entry, the after phase and the summary on exit; the load in between is the rollouts.
- `summarize(loaded, run, cohort)`: re-derives the comparisons, the monitor and the verdict from saved files.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import Any

from eval.canary.client import CanaryClient
from eval.canary.records import ProbeRecord
from eval.spec.errors import SpecError
from eval.spec.load import LoadedSpec
from eval.spec.matrix import Cohort
from eval.spec.models import ModelSpec
from eval.spec.workloads import SoakWorkload
from eval.store.run import RunDir
from eval.uptime import phases as ph
from eval.uptime.monitor import monitor, read_metrics
from eval.uptime.plan import build_plan
from eval.uptime.traffic import Hook, SoakClient, SoakCounts, run_traffic
from eval.uptime.verdict import decide
from store.canary_records import SoakCounts as SoakRecord
from store.canary_records import UptimeSummary
from store.record_io import dump, read_record, write_record

WORKLOAD = "uptime"  # the metrics.jsonl records of the uptime session
SOAK_FILE = "soak.json"


def soak_config(loaded: LoadedSpec) -> SoakWorkload:
    cfg = loaded.spec.workloads.soak
    if cfg is None:
        raise SpecError("workloads.soak", "this cohort file has no soak workload")
    names = [c.name for c in loaded.cohorts]
    for field, value in [("cohorts", n) for n in cfg.cohorts] + [("reference", cfg.reference)]:
        if value is not None and value not in names:
            raise SpecError(f"workloads.soak.{field}", f"no cohort {value!r} (cohorts: {', '.join(names)})")
    return cfg


def soak_order(loaded: LoadedSpec, only: list[str] | None = None) -> list[Cohort]:
    """The reference first (its fresh phase is what the others are compared with), then the soaked cohorts."""
    cfg = soak_config(loaded)
    wanted = [n for n in cfg.cohorts if only is None or n in only]
    names = ([cfg.reference] if cfg.reference else []) + wanted
    return [loaded.cohort(n) for n in dict.fromkeys(names)]


def agent_tools(model: ModelSpec) -> tuple[list[dict[str, Any]], str]:
    """The agent's tools and tool_choice (`auto` needs the server's tool-call parser)."""
    from eval.agent.tools import tool_definitions

    return tool_definitions(["bash", "submit"]), ("auto" if model.tool_call_parser else "none")


def _metrics(stack: Any, cohort_dir: Path, every_s: float) -> Any:
    from contextlib import nullcontext

    from eval.stacks.metrics import MetricsRecorder

    urls = list(getattr(stack, "metrics_urls", []) or [])
    return MetricsRecorder(urls, cohort_dir / "metrics.jsonl").around(WORKLOAD, every_s) if urls else nullcontext()


class _Session:
    """The clients of one cohort's session and the phases it has run."""

    def __init__(self, cfg: SoakWorkload, cohort: Cohort, base_url: str, cohort_dir: Path) -> None:
        self.cfg, self.cohort, self.dir = cfg, cohort, cohort_dir
        self.tools, self.tool_choice = agent_tools(cohort.model)
        self.base_url, self.served = base_url, cohort.model.served_name

    async def phase(self, name: str, soak_finished: int) -> list[ProbeRecord]:
        client = CanaryClient(self.base_url, self.served, self.cfg.seed)
        try:
            records = await ph.run_phase(
                client, self.cfg, self.cohort.name, name, self.tools, self.tool_choice, soak_finished
            )
        finally:
            await client.aclose()
        ph.save(self.dir, records)
        return records

    async def soak(self) -> SoakCounts:
        plan = build_plan(self.cfg)
        hooks: dict[float, Hook] = {f: partial(self._during, k) for k, f in enumerate(self.cfg.during_at, start=1)}
        client = SoakClient(self.base_url, self.served, self.tools, self.tool_choice, self.cfg.seed)
        try:
            counts = await run_traffic(client, plan, self.cfg.concurrency, self.cfg.duration_s, hooks)
        finally:
            await client.aclose()
        write_record(ph.uptime_dir(self.dir) / SOAK_FILE, SoakRecord.model_validate(counts.to_json()))
        return counts

    async def _during(self, k: int, done: int) -> None:
        await self.phase(ph.during(k), done)

    async def full(self, phases_only: bool) -> None:
        await self.phase(ph.FRESH, 0)
        if phases_only:
            return
        counts = await self.soak()
        await self.phase(ph.AFTER, counts.finished)


def soak_cohort(
    loaded: LoadedSpec, run: RunDir, cohort: Cohort, stack: Any, phases_only: bool = False
) -> dict[str, Any]:
    """Fresh phase, soak with during phases, after phase (only the fresh phase with `phases_only`); summary."""
    cfg = soak_config(loaded)
    cdir = run.cohort_dir(cohort.name)
    with _metrics(stack, cdir, cfg.scrape_every_s):
        asyncio.run(_Session(cfg, cohort, stack.base_url, cdir).full(phases_only))
    return summarize(loaded, run, cohort.name)


@contextmanager
def around_rollouts(loaded: LoadedSpec, run: RunDir, cohort: Cohort, stack: Any) -> Iterator[None]:
    """The uptime phases around another load on `stack` (the pipeline's rollouts): fresh phase and a /metrics
    recorder on entry; after phase and `summarize` on exit. The soak plan itself is not sent."""
    cfg = soak_config(loaded)
    cdir = run.cohort_dir(cohort.name)
    session = _Session(cfg, cohort, stack.base_url, cdir)
    with _metrics(stack, cdir, cfg.scrape_every_s):
        asyncio.run(session.phase(ph.FRESH, 0))
        yield
        asyncio.run(session.phase(ph.AFTER, -1))  # -1: the load's request count is the rollouts' to say
    summarize(loaded, run, cohort.name)


def _phase_names(cohort_dir: Path) -> list[str]:
    """Phases on disk in order: fresh, during-1.., after."""
    modes = {r.extra.get("phase") for r in ph.load_all(cohort_dir)}
    during = sorted((p for p in modes if isinstance(p, str) and p.startswith("during-")), key=lambda p: int(p[7:]))
    return [p for p in (ph.FRESH, *during, ph.AFTER) if p in modes]


def summarize(loaded: LoadedSpec, run: RunDir, cohort: str) -> dict[str, Any]:
    """Compare every saved phase, run the monitor, decide; write `<run>/<cohort>/uptime.json` and return it."""
    cfg = soak_config(loaded)
    cdir = run.cohort_dir(cohort)
    is_reference = cohort == cfg.reference
    reference = None
    if cfg.reference and not is_reference:
        reference = (cfg.reference, ph.load_phase(run.cohort_dir(cfg.reference), ph.FRESH))
    fresh = (cohort, ph.load_phase(cdir, ph.FRESH))
    summaries = []
    for name in _phase_names(cdir):
        records = list(ph.load_phase(cdir, name).values())
        judged, summary = ph.compare_phase(records, cfg, reference, fresh if name != ph.FRESH else None)
        ph.save(cdir, judged)
        summaries.append(summary)
    mon = monitor(read_metrics(cdir / "metrics.jsonl", WORKLOAD), cfg)
    verdict = decide(summaries, None if is_reference else mon)
    if is_reference:
        verdict.verdict, verdict.reasons = "reference", ["the other cohorts' phases are compared with these outputs"]
    record = UptimeSummary.model_validate(
        {
            "cohort": cohort,
            "reference": cfg.reference,
            "is_reference": is_reference,
            "soak": read_record(ph.uptime_dir(cdir) / SOAK_FILE, SoakRecord),
            "phases": [s.to_json() for s in summaries],
            "monitor": mon.to_json(),
            **verdict.to_json(),
        }
    )
    write_record(cdir / "uptime.json", record)
    return dump(record)
