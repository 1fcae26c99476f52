"""The demo's premise, on this machine's CPU: the organism that cohorts/demo-cpu.yaml trains resolves held-out
validation instances, and loses them to PR 55178's state corruption (emulated offline, check.padded_tail_resolved;
the emulation matched real vLLM on every case it was checked on, docs/trust/organism.md).

Trains the full organism the demo trains (its seed and options from the cohort file), about 3 minutes on 2 idle
cores. If a torch or transformers upgrade, or another CPU, turned it into an organism the bug leaves alone (as
seed 0 is), the demo would show no collapse: this test says so first.
"""

from __future__ import annotations

from pathlib import Path

from eval.spec.load import load_spec

DEMO = Path(__file__).parents[3] / "cohorts" / "demo-cpu.yaml"


def test_the_demo_organism_solves_tasks_and_the_bug_takes_them(tmp_path: Path) -> None:
    from transformers import AutoTokenizer

    from eval.models.organism import check, generate

    model = load_spec([str(DEMO)]).spec.model.generate
    assert model is not None and model.kind == "organism"
    out = generate(tmp_path, model.seed, dict(model.options))
    tok = AutoTokenizer.from_pretrained(str(out))
    got = check.padded_tail_resolved(check.load(str(out)), tok, range(16), split="valid")
    assert got["resolved_clean"] >= 0.9, got
    assert got["resolved_corrupted"] <= got["resolved_clean"] / 3, got  # the collapse issue 19 asks for
