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


def test_the_agent_request_carries_temperature_top_p_and_the_unit_seed() -> None:
    import json

    from eval.agent.client import ClientConfig

    s = Sampling(temperature=0.7, top_p=0.95, seed=3, seed_policy="per_unit")
    seed = unit_seed(s, "a", 1)
    cfg = ClientConfig("http://x", "m", 64, [], None, {"temperature": s.temperature, "top_p": s.top_p, "seed": seed})
    body = json.loads(cfg.request_prefix().decode() + "]}")
    assert body["temperature"] == 0.7 and body["top_p"] == 0.95 and body["seed"] == seed
