"""Early stop of a cohort's rollouts once the sequential test has decided its comparison with the control.

The scheduler takes units instance by instance in the shared seeded order (store/order.py) and tells the
`EarlyStop` of every finished unit. Every `every_units` finished units, or `every_s` seconds, it asks the analysis,
in its own process (eval never imports analysis), `python -m analysis decide RUN_DIR --json`: the decision of each
comparison on the longest prefix of instances complete in both cohorts. Once this cohort's comparison is FAIL or
PASS, no new unit starts (units in flight finish and are graded), and `<run>/<cohort>/early_stop.json` records where
and why. The decision reads only finished instances in a fixed order, so a resumed run asks first and takes the
same decision; the anytime-valid test keeps its error rates however often it is asked.

A cohort that is the control of another cohort never stops early: the others need all its instances.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from eval.store.run import now
from store.decisions import Comparison, Decisions
from store.layout import EARLY_STOP, INSTANCES
from store.order import SALT, ordered
from store.record_io import read_record, write_record
from store.records import InstanceOrder
from store.unit_records import EarlyStopRecord

RECORD = EARLY_STOP
ORDER_FILE = INSTANCES
Ask = Callable[[Path], Decisions]


def ask_analysis(run_dir: Path) -> Decisions:
    """The analysis's decisions on `run_dir` (a subprocess with this interpreter)."""
    cmd = [sys.executable, "-m", "analysis", "decide", str(run_dir), "--json"]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=600, check=False)
    if out.returncode != 0:
        raise RuntimeError(f"python -m analysis decide failed ({out.returncode}): {out.stderr.strip()[-500:]}")
    return Decisions.model_validate(json.loads(out.stdout))  # a ValidationError is a ValueError


def write_order(run_dir: Path, instance_ids: Sequence[str]) -> list[str]:
    """Record the run's instance order (`<run>/instances.json`) for the analysis; return it."""
    ids = ordered(instance_ids)
    write_record(run_dir / ORDER_FILE, InstanceOrder(salt=SALT, instances=ids))
    return ids


class EarlyStop:
    """Decides when one cohort's rollouts may stop; thread-safe, asks the analysis at most one at a time."""

    def __init__(
        self,
        run_dir: Path,
        cohort: str,
        every_units: int = 10,
        every_s: float = 30.0,
        ask: Ask = ask_analysis,
        log: Callable[[str], Any] = print,
    ) -> None:
        self.run_dir, self.cohort = Path(run_dir), cohort
        self.every_units, self.every_s, self.ask, self.log = every_units, every_s, ask, log
        self.record: EarlyStopRecord | None = None
        self.units_seen = 0
        self._since = 0
        self._last = time.monotonic()
        self._lock = threading.Lock()
        self._asking = threading.Lock()

    @property
    def stopped(self) -> bool:
        return self.record is not None

    def unit_done(self) -> bool:
        """Count a finished unit; ask when `every_units` have finished or `every_s` passed. True: stop."""
        with self._lock:
            self.units_seen += 1
            self._since += 1
            due = self._since >= self.every_units or time.monotonic() - self._last >= self.every_s
        return self.check() if due and not self.stopped else self.stopped

    def check(self) -> bool:
        """Ask the analysis now (skipped while another ask runs); True once this cohort's comparison is decided."""
        if self.stopped:
            return True
        if not self._asking.acquire(blocking=False):
            return False
        try:
            with self._lock:
                self._since, self._last = 0, time.monotonic()
            try:
                result = self.ask(self.run_dir)
            except (RuntimeError, OSError, ValueError, subprocess.TimeoutExpired) as e:
                self.log(f"{self.cohort}: early stop could not ask the analysis ({e}); rollouts go on")
                return False
            return self._decide(result)
        finally:
            self._asking.release()

    def _decide(self, result: Decisions) -> bool:
        if any(c.control == self.cohort for c in result.comparisons.values()):
            return False  # another cohort's control: it needs every instance
        mine = result.comparisons.get(self.cohort)
        if mine is None or mine.decision == "INCONCLUSIVE" or mine.decided_at is None:
            return False
        previous = read_record(self.run_dir / self.cohort / RECORD, EarlyStopRecord)
        if previous is not None and (previous.decision, previous.decided_at) == (mine.decision, mine.decided_at):
            self.record = previous  # a resumed run: the same decision, the record of when it was first taken
            self.log(f"{self.cohort}: early stop (resumed): {previous.reason}")
            return True
        self.record = EarlyStopRecord(
            cohort=self.cohort,
            **mine.model_dump(exclude={"decision", "decided_at"}),
            decision=mine.decision,
            decided_at=mine.decided_at,
            method=result.method,
            stopped_at=now(),
            units_finished_when_asked=self.units_seen,
            reason=_reason(mine),
        )
        write_record(self.run_dir / self.cohort / RECORD, self.record)
        self.log(f"{self.cohort}: early stop: {self.record.reason}; no new units start")
        return True


def _reason(mine: Comparison) -> str:
    return (
        f"{mine.decision} decided at instance {mine.decided_at} of {mine.planned} in the shared "
        f"order (the drop's {100 * (1 - 2 * mine.alpha):.0f}% confidence sequence there: "
        f"{100 * mine.lower:+.2f} .. {100 * mine.upper:+.2f} pts, margin {100 * mine.margin:.2f} pts)"
    )
