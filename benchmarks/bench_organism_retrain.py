"""Retrain the demo's organism on this machine and hold it to the committed records (moved out of CI: a full
training takes 9-20 minutes on the 2-core CI machine, and the demo itself installs the pinned weights).

    .venv/bin/python benchmarks/bench_organism_retrain.py [OUT_DIR]

The demo's premise on this CPU: the organism that cohorts/demo-cpu.yaml names resolves held-out validation
instances (>= 90% of 16) and loses them to PR 55178's state corruption (emulated offline,
`check.padded_tail_resolved`: at most a third kept). And the pin's claim: where this machine is a committed
record's CPU class (`cpu_isa`), training gives that record's weights bit for bit with the same training record
(steps, losses, validation, forecast); any record with the same weights must also have the same training record.
A CPU class no record describes gets a warning naming what it trained (an AVX512 + AMX machine trained other bits
from the same seed and lock, results/examples/organism-amx-20261205). A stack that drifted from the lock fails
first (torch, transformers, tokenizers must be the record's). Exit 0 when every check holds; 1 otherwise.

Run it after a change to the organism's libraries or its code (docs/develop/testing.md), beside the demo from an
empty cache. CI keeps the fast checks: the pinned organism installs and is refused when damaged
(tests/unit/models/test_organism.py), and the README's table is the committed run's
(tests/unit/test_readme_demo_table.py).
"""

from __future__ import annotations

import hashlib
import json
import sys
import tempfile
import warnings
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "cohorts" / "demo-cpu.yaml"
EXAMPLE = ROOT / "results" / "examples" / "demo-cpu-20261204"  # the run the README's quick-start table shows
PINNED = ROOT / "eval" / "models" / "organism" / "pinned"
SAME = ("steps", "final_loss", "final_mtp_loss_per_step", "validation", "pr55178_forecast")


def records() -> list[Path]:
    """Every committed training record of the demo organism, one per CPU class it was trained on."""
    return [
        *PINNED.glob("organism-*/specqual-generated.json"),  # the weights every machine serves (build.py)
        EXAMPLE / "organism-training.json",
        ROOT / "results" / "examples" / "organism-amx-20261205" / "organism-training.json",
    ]


def facts(doc: dict[str, Any]) -> dict[str, Any]:
    record = {k: v for k, v in doc["training"].items() if k in SAME}
    record["pr55178_forecast"] = {k: v for k, v in record["pr55178_forecast"].items() if k != "seconds"}
    return record


def check_retrain(out_dir: Path) -> str:
    """Train into `out_dir` and check; returns what held (raises AssertionError on a failed check)."""
    from transformers import AutoTokenizer

    from eval.models.organism import check, generate
    from eval.models.organism.build import DONE_MARKER, library_versions
    from eval.spec.load import load_spec

    model = load_spec([str(DEMO)]).spec.model.generate
    assert model is not None and model.kind == "organism"
    out = generate(out_dir, model.seed, dict(model.options), retrain=True)
    tok = AutoTokenizer.from_pretrained(str(out))
    got = check.padded_tail_resolved(check.load(str(out)), tok, range(16), split="valid")
    assert got["resolved_clean"] >= 0.9, got
    assert got["resolved_corrupted"] <= got["resolved_clean"] / 3, got  # the collapse issue 19 asks for

    paths = records()
    lead = json.loads(paths[0].read_text())
    mine = json.loads((out / DONE_MARKER).read_text())
    env, made_by = mine["training"]["environment"], lead["training"]["environment"]
    libraries = {k: made_by[k] for k in ("torch", "transformers", "tokenizers")}
    assert {k: env[k] for k in libraries} == libraries, (
        f"this stack ({library_versions()}) is not the one the committed demo organism was trained with "
        f"({libraries}): install from the lock (bash scripts/setup.sh)"
    )
    weights = hashlib.sha256((out / "model.safetensors").read_bytes()).hexdigest()
    assert weights == mine["weights_sha256"]
    committed = [json.loads(p.read_text()) for p in paths]
    same_weights = [c for c in committed if c["weights_sha256"] == weights]
    if same_weights:
        assert facts(mine) == facts(same_weights[0]), "same weights, another training record"
        return f"weights {weights[:12]} = a committed record's, same training record; validation {got}"
    isa = env.get("cpu_isa")
    same_cpu = [c for c in committed if isa is not None and c["training"]["environment"].get("cpu_isa") == isa]
    assert not same_cpu, (
        f"the demo organism trained here ({weights[:12]}) differs from the committed one trained on this CPU class "
        f"({same_cpu[0]['weights_sha256'][:12] if same_cpu else ''}): the README's demo table no longer describes "
        "what the demo trains"
    )
    warnings.warn(
        f"this CPU (capability {env['cpu_capability']}, {isa}) trained an organism no committed record has: "
        f"weights {weights[:12]}, {mine['training']['steps']} steps, validation {mine['training']['validation']}",
        stacklevel=1,
    )
    return f"new CPU class: weights {weights[:12]} (warning above); validation {got}"


def main() -> int:
    sys.path.insert(0, str(ROOT))
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(tempfile.mkdtemp(prefix="organism-retrain-"))
    try:
        print("ok:", check_retrain(out))
    except AssertionError as e:
        print(f"FAILED: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
