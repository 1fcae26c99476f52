"""The soak tables of docs/trust/uptime.md, from kept (or live) soak runs: one row per cohort's uptime.json.

    python benchmarks/uptime/table.py benchmarks/uptime/runs/up-bf16-c1 [more run dirs]

Columns: verdict, soak requests (sent / completed / aborted / errors, wall seconds), probes corrupted vs the
reference per phase (first wrong token indices), probes served from a cached prefix per phase, the acceptance
baseline, the windows the detector tested and its largest e-value (alarm at 1 / alpha = 1,000).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any


def _phases(d: dict[str, Any]) -> tuple[str, str]:
    corrupted, hits = [], []
    for p in d.get("phases") or []:
        ref = p.get("vs_reference") or {}
        cell = f"{ref.get('corrupted', '-')}/{ref.get('compared', '-')}" if ref else "ref"
        if ref.get("first_divergence"):
            cell += f" (at {sorted(ref['first_divergence'])})"
        corrupted.append(f"{p['phase']} {cell}")
        hits.append(str(p.get("prefix_hits")))
    return "; ".join(corrupted), "/".join(hits)


def rows(run_dir: Path) -> list[list[str]]:
    out = []
    for path in sorted(run_dir.glob("*/uptime.json")):
        d = json.loads(path.read_text(encoding="utf-8"))
        s, det = d.get("soak") or {}, (d.get("monitor") or {}).get("detector") or {}
        soak = f"{s['sent']}/{s['completed']}/{s['aborted']}/{s['errors']} in {s['wall_s']:.0f} s" if s else "-"
        corrupted, hits = _phases(d)
        base = f"{det['baseline']:.1%}" if isinstance(det.get("baseline"), int | float) else "-"
        e = f"{det['max_e_value']:.2f}" if isinstance(det.get("max_e_value"), int | float) else "-"
        out.append([run_dir.name, d["cohort"], d["verdict"], soak, corrupted, hits, base,
                    str(det.get("tested_windows", "-")), e])  # fmt: skip
    return out


def main(argv: list[str]) -> int:
    head = ["run", "cohort", "verdict", "soak sent/done/aborted/errors", "corrupted vs reference", "prefix hits",
            "baseline", "tested windows", "max e"]  # fmt: skip
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for run_dir in argv:
        for r in rows(Path(run_dir)):
            print("| " + " | ".join(r) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
