"""The sampled probe end to end against a toy sampling server (tests/doubles/toy_sampler.py): a correct sampler
is never failed, a shifted one is, greedy draws are re-scored, and the decode-vs-rescore TV is measured."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from eval.canary.sampled.probe import Target, probe_sampled
from eval.spec.workloads import SampledWorkload
from tests.doubles.toy_sampler import ToySampler, V


def _cfg(**kw: object) -> SampledWorkload:
    base: dict[str, object] = {
        "reference": "ref",
        "prompt_tokens": (2, 6),
        "max_tokens": 12,
        "batch": 16,
        "greedy_fraction": 0.1,
        "budget_s": 60,
        "max_draws": 320,
        "settings": [{"temperature": 1.0}, {"temperature": 0.7, "top_p": 0.9, "top_k": 10}],
    }
    return SampledWorkload.model_validate({**base, **kw})


def _probe(shift: float, cfg: SampledWorkload, out: Path, measure: bool = False) -> dict[str, object]:
    with ToySampler() as ref, ToySampler(shift=shift) as cohort:
        target, reference = Target(cohort.base_url, "toy"), Target(ref.base_url, "toy")
        return asyncio.run(probe_sampled(target, reference, cfg, V, "float32", out, "c", measure))


def test_a_correct_sampler_is_not_failed_and_its_decode_law_matches_the_rescoring(tmp_path: Path) -> None:
    summary = _probe(0.0, _cfg(), tmp_path, measure=True)
    assert summary["verdict"] in ("PASS", "INCONCLUSIVE")
    assert summary["greedy_violations"] == 0 and summary["errors"] == 0
    assert summary["decode_tv"]["max"] < 1e-9  # type: ignore[index]
    lines = (tmp_path / "draws.jsonl").read_text().splitlines()
    assert len(lines) == summary["draws"]
    assert json.loads((tmp_path / "sampled.json").read_text())["schema_version"] == 1


def test_a_sampler_that_moves_probability_to_the_top_token_fails(tmp_path: Path) -> None:
    summary = _probe(0.2, _cfg(settings=[{"temperature": 1.0}]), tmp_path)
    assert summary["verdict"] == "FAIL"
    assert summary["draws"] < 320  # it stopped once decided


def test_top_k_reference_logprobs_with_a_rest_bucket_judge_the_same_way(tmp_path: Path) -> None:
    settings = [{"temperature": 1.0}, {"temperature": 0.7, "top_p": 0.9, "top_k": 5}]
    clean = _probe(0.0, _cfg(reference_logprobs=16, settings=settings, max_draws=160), tmp_path / "clean")
    assert clean["verdict"] in ("PASS", "INCONCLUSIVE") and clean["inexact_tokens"] == 0
    shifted = _probe(0.2, _cfg(reference_logprobs=8, settings=settings), tmp_path / "shifted")
    assert shifted["verdict"] == "FAIL"


def test_prefix_hit_draws_wait_for_the_rest_of_their_batch(tmp_path: Path) -> None:
    """hit_delay_s: the one-token tails are sent after the other draws, to meet running decodes (PR 55178)."""
    cfg = _cfg(prefix_hit_fraction=1.0, warm_tokens=8, hit_tokens=4, hit_delay_s=0.5, batch=4, max_draws=4)
    summary = _probe(0.0, cfg, tmp_path)
    assert summary["errors"] == 0 and summary["draws"] == 4
    assert float(summary["wall_s"]) >= 0.5  # type: ignore[arg-type]
    records = [json.loads(line) for line in (tmp_path / "draws.jsonl").read_text().splitlines()]
    assert all(r["prefix_hit"] and len(r["prompt"]) == 5 for r in records)
