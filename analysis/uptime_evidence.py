"""How a cohort's uptime result (`<run>/<cohort>/uptime.json`, written by `specqual soak` or by the phases run
around the rollouts) weighs in its qualification verdict (analysis/verdict.py), as one sentence in one of the
verdict's three lists:

| uptime verdict | list | why |
|---|---|---|
| `uptime-corruption`, `corrupted-at-start` | fails | a probe's output differs from the reference: damage |
| `performance-bug` | notes | acceptance collapsed while every phase equals the reference: slower, not wrong |
| `not-exercised`, `failed` | missing | blind is not clean: the soak saw nothing, or its probes got no answer |
| `clean` | notes | |
| `reference` (or no uptime.json) | none | |

A collapse of acceptance is named in the sentence whatever the verdict (the monitor's reason), so it is evidence
in the verdict's reasons, and the canary phases decide whether it is corruption or a performance bug.
No imports from the rest of analysis, so the verdict and the report section can both use it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

FAILS, MISSING, NOTES = "fails", "missing", "notes"
_LIST = {
    "uptime-corruption": FAILS,
    "corrupted-at-start": FAILS,
    "performance-bug": NOTES,
    "not-exercised": MISSING,
    "failed": MISSING,
    "clean": NOTES,
}


def _collapse(record: Mapping[str, Any]) -> str | None:
    return next((str(r) for r in record.get("reasons") or [] if str(r).startswith("acceptance collapsed")), None)


def evidence(record: Mapping[str, Any] | None) -> tuple[str, str] | None:
    """(`fails` | `missing` | `notes`, sentence) for one cohort's uptime.json; None for a reference or nothing."""
    if not record or record.get("is_reference") or record.get("verdict") not in _LIST:
        return None
    verdict = str(record["verdict"])
    reasons = [str(r) for r in record.get("reasons") or []]
    first = (record.get("first_divergence") or {}).get("text")
    if verdict in ("uptime-corruption", "corrupted-at-start"):
        what = "corruption that grows with uptime" if verdict == "uptime-corruption" else "corrupted from the start"
        text = f"uptime: {what}: {first or '; '.join(reasons)}"
        collapse = _collapse(record)
        if collapse:
            text += f"; {collapse}"
    elif verdict == "performance-bug":
        text = "uptime: performance bug, not corruption: " + "; ".join(r for r in reasons if "collapsed" in r)
    elif verdict == "not-exercised":
        text = "uptime inconclusive: the soak exercised nothing (" + "; ".join(reasons) + ")"
    elif verdict == "failed":
        text = "uptime: " + "; ".join(reasons or ["the soak failed"])
    else:
        text = "uptime clean: " + "; ".join(reasons)
    return _LIST[verdict], text
