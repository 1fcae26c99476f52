"""Sampled rollouts (issue 28 item 5): temperature > 0 reaches the agent's requests with a seed per repeat."""

from __future__ import annotations

from eval.rollout.units import unit_seed
from eval.spec.models import Sampling


def test_per_unit_seeds_differ_across_repeats_and_instances_and_are_stable() -> None:
    s = Sampling(temperature=0.7, top_p=0.95, seed=3, seed_policy="per_unit")
    seeds = {unit_seed(s, inst, r) for inst in ("a", "b") for r in range(5)}
    assert len(seeds) == 10
    assert unit_seed(s, "a", 2) == unit_seed(s, "a", 2)
    assert unit_seed(Sampling(temperature=0.7, seed_policy="none"), "a", 0) is None
