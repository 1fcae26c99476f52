"""The demo's premise, on this machine's CPU: the organism that cohorts/demo-cpu.yaml trains resolves held-out
validation instances, and loses them to PR 55178's state corruption (emulated offline, check.padded_tail_resolved;
the emulation matched real vLLM on every case it was checked on, docs/trust/organism.md).

Trains the full organism the demo trains (its seed and options from the cohort file), about 3 minutes on 2 idle
cores. If a torch or transformers upgrade, or another CPU, turned it into an organism the bug leaves alone (as
seed 0 is), the demo would show no collapse: this test says so first.

It is also what holds the README's demo table to the locked stack (issue 31): the table is the committed demo
run's (tests/unit/test_readme_demo_table.py), and that run's organism is the one trained here only if the
training comes out the same. Under locks/specqual.txt it does on one CPU class, bit for bit (its
`organism-training.json`, `weights_sha256`, with the same training record: steps, losses, validation checks,
emulated forecast); a library that drifted from the lock (asserted on any CPU) trains another organism, and the
demo another table (transformers 5.25.0 gave 4/16 and a FAIL at instance 12 instead).

Since 2026-12-06 the demo does not train: it installs the pinned organism (eval/models/organism/pinned/, build.py),
so every machine serves the same weights. This test still trains (`retrain=True`): where this machine is the
pinned organism's CPU class it must give the pinned bits, so the committed weights stay what the code makes.

The weights also depend on the CPU beyond torch's capability level: an AVX512 machine with AMX and AVX512-FP16
trained another organism from the same seed and lock (2026-12-05: 800 steps instead of 700, weights 8197c7d5...,
the same on a loaded and a quiet machine), recorded in results/examples/organism-amx-20261205 with its CPU's
instruction-set flags (`cpu_isa`). So the weights must equal a committed record's: any record's with the same
weights (then its training record too), and a record's trained on the same `cpu_isa` always. A CPU no committed
record describes gets a warning that says what it trained.
"""

from __future__ import annotations

import hashlib
import json
import warnings
from pathlib import Path

from eval.spec.load import load_spec

ROOT = Path(__file__).parents[3]
DEMO = ROOT / "cohorts" / "demo-cpu.yaml"
EXAMPLE = ROOT / "results" / "examples" / "demo-cpu-20261204"  # the run the README's quick-start table shows
# Every committed training record of the demo organism, one per CPU class it was trained on (docstring).
PINNED = ROOT / "eval" / "models" / "organism" / "pinned"
RECORDS = [
    *PINNED.glob("organism-*/specqual-generated.json"),  # the weights every machine serves (build.py)
    EXAMPLE / "organism-training.json",
    ROOT / "results" / "examples" / "organism-amx-20261205" / "organism-training.json",
]
SAME = ("steps", "final_loss", "final_mtp_loss_per_step", "validation", "pr55178_forecast")


def _facts(doc: dict) -> dict:  # type: ignore[type-arg]
    record = {k: v for k, v in doc["training"].items() if k in SAME}
    record["pr55178_forecast"] = {k: v for k, v in record["pr55178_forecast"].items() if k != "seconds"}
    return record


def test_the_demo_organism_solves_tasks_and_the_bug_takes_them(tmp_path: Path) -> None:
    from transformers import AutoTokenizer

    from eval.models.organism import check, generate
    from eval.models.organism.build import DONE_MARKER, library_versions

    model = load_spec([str(DEMO)]).spec.model.generate
    assert model is not None and model.kind == "organism"
    out = generate(tmp_path, model.seed, dict(model.options), retrain=True)
    tok = AutoTokenizer.from_pretrained(str(out))
    got = check.padded_tail_resolved(check.load(str(out)), tok, range(16), split="valid")
    assert got["resolved_clean"] >= 0.9, got
    assert got["resolved_corrupted"] <= got["resolved_clean"] / 3, got  # the collapse issue 19 asks for

    lead = json.loads(RECORDS[0].read_text())
    mine = json.loads((out / DONE_MARKER).read_text())
    env, made_by = mine["training"]["environment"], lead["training"]["environment"]
    libraries = {k: made_by[k] for k in ("torch", "transformers", "tokenizers")}
    assert {k: env[k] for k in libraries} == libraries, (
        f"this stack ({library_versions()}) is not the one the committed demo organism was trained with "
        f"({libraries}): install from the lock (bash scripts/setup.sh)"
    )
    weights = hashlib.sha256((out / "model.safetensors").read_bytes()).hexdigest()
    assert weights == mine["weights_sha256"]
    committed = [json.loads(p.read_text()) for p in RECORDS]
    same_weights = [c for c in committed if c["weights_sha256"] == weights]
    if same_weights:
        assert _facts(mine) == _facts(same_weights[0]), "same weights, another training record"
        return
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
