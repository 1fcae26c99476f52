"""The report's view of the generated canary: per bug class PASS / FAIL / INCONCLUSIVE, and what the fuzz run
exercised (features against case size, tokens per engine step, drafts per step, accepted tokens per position,
parameters the build refused). Read from each cohort's `canary.json` (`extra.classes`, `extra.fuzz`,
written by eval/canary/fuzz/coverage.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from analysis.document import Block, Bullets, Heading, Para, Table
from store.atomic import read_json

BUCKETS = ("1", "2-3", "4-7", "8-16")


def _canaries(run_path: Path, cohorts: list[str]) -> dict[str, dict[str, Any]]:
    out = {}
    for c in cohorts:
        data = read_json(run_path / c / "canary.json")
        if isinstance(data, dict) and (data.get("extra") or {}).get("fuzz"):
            out[c] = data
    return out


def class_table(canaries: dict[str, dict[str, Any]], labels: dict[str, str]) -> Table | None:
    rows = []
    for cohort, data in canaries.items():
        for name, v in ((data.get("extra") or {}).get("classes") or {}).items():
            rows.append([labels.get(cohort, cohort), name, v["verdict"], v["reason"]])
    return Table(["Cohort", "Bug class", "Verdict", "Why"], rows) if rows else None


def feature_table(fuzz: dict[str, Any]) -> Table:
    rows = [[f"`{f}`", *(str(by.get(b, 0)) for b in BUCKETS)] for f, by in fuzz["features_by_concurrency"].items()]
    return Table(["Feature (requests)", *(f"case of {b}" for b in BUCKETS)], rows, set(range(1, 5)))


def coverage_lines(fuzz: dict[str, Any]) -> list[str]:
    steps = ", ".join(f"{k}: {v}" for k, v in fuzz["tokens_per_step"].items()) or "—"
    drafts = fuzz.get("drafts_per_step") or {}
    hist = ", ".join(f"{k}: {v}" for k, v in (drafts.get("histogram") or {}).items()) or "—"
    acc = fuzz.get("accepted_per_position") or {}
    pos = ", ".join(f"{r:.2f}" for r in acc.get("per_position_rate") or []) or "—"
    lines = [
        f"{fuzz['cases']} cases, {fuzz['requests']} requests ({fuzz['answered']} answered)",
        f"tokens per streamed chunk (one engine step; t tokens = t - 1 drafts kept): {steps}",
        f"draft tokens per drafting request, per 1 s /metrics window: {hist} "
        f"({drafts.get('windows_below_k', 0)} of {drafts.get('windows', 0)} windows below K)",
        f"accepted per draft position (rate): {pos}; overall {acc.get('rate')}",
    ]
    engine = fuzz.get("steps")
    if engine:
        top = ", ".join(f"{k}: {v}" for k, v in list(engine["histogram"].items())[:10])
        lines.append(
            f"engine steps with decoding requests (vLLM iteration log): {engine['decode_steps']}, "
            f"{engine['steps_mixing_draft_counts']} of them mixing draft counts, {engine['steps_below_k']} below K "
            f"drafts per request; most common: {top}"
        )
    lines += [f"refused ({n}x): {what}" for what, n in (fuzz.get("refused") or {}).items()]
    return lines


def blocks(run_path: Path, cohorts: list[str], labels: dict[str, str]) -> list[Block]:
    canaries = _canaries(Path(run_path), cohorts)
    if not canaries:
        return []
    out: list[Block] = [Heading(3, "Generated cases: bug classes and coverage")]
    table = class_table(canaries, labels)
    if table is not None:
        out += [
            Para("PASS needs the class's trigger to have run, with drafts kept where the class lives on them."),
            table,
        ]
    for cohort, data in canaries.items():
        fuzz = data["extra"]["fuzz"]
        out += [Heading(4, labels.get(cohort, cohort)), Bullets(coverage_lines(fuzz)), feature_table(fuzz)]
    return out
