"""A server that died and came back is a note; a server the stack gave up on makes the cohort INCONCLUSIVE with
the reason (deaths, restarts, the log's last line), never a low score. Events as the stack's watchdog writes
them (eval.stacks.watchdog)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from analysis import analyze
from store.stack_records import ServerEvent


def events(cohort_dir: Path, deaths: int, gave_up: bool, max_restarts: int = 3) -> None:
    lines = []
    for n in range(1, deaths + 1):
        base = {"schema_version": 1, "time": "2026-12-02T20:00:00.000+00:00", "stack_id": "abc", "process": "server.0"}
        base |= {"max_restarts": max_restarts}
        tail = f"INFO step {n}\nRuntimeError: worker {n} crashed"
        lines.append({**base, "event": "died", "exit_code": -9, "deaths": n, "restarts": n - 1, "log_tail": tail})
        if n <= max_restarts:
            lines.append({**base, "event": "restarted", "deaths": n, "restarts": n, "ready_s": 31.5})
        elif gave_up:
            lines.append(
                {**base, "event": "gave_up", "deaths": n, "restarts": n - 1, "exit_code": -9, "log_tail": tail}
            )
    written = [ServerEvent.model_validate(x).model_dump(mode="json") for x in lines]  # as the stack writes them
    text = "".join(json.dumps(x) + "\n" for x in written)
    (cohort_dir / "server_events.jsonl").write_text(text + '{"torn', encoding="utf-8")  # a torn last line is skipped


def test_restarts_are_a_note_and_giving_up_is_inconclusive_with_the_reason(small_run: Path, tmp_path: Path):
    run = shutil.copytree(small_run, tmp_path / "run")
    before = analyze(run).summaries
    name = next(n for n, s in before.items() if s.verdict == "PASS")
    events(run / name, deaths=2, gave_up=False)
    after = analyze(run).summaries[name]
    assert after.verdict == "PASS" and "server restarted 2 times mid-run" in (after.reason or "")
    assert after.resolved == before[name].resolved  # a restart changes no count

    events(run / name, deaths=4, gave_up=True)
    gave_up = analyze(run).summaries[name]
    assert gave_up.verdict == "INCONCLUSIVE"
    reason = gave_up.reason or ""
    assert "server died 4 times (restarted 3, max_restarts 3); gave up restarting" in reason
    assert "last log: RuntimeError: worker 4 crashed" in reason
    assert gave_up.resolved == before[name].resolved and gave_up.infra_failures == before[name].infra_failures
