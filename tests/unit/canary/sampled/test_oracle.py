"""The sampled mode as an oracle of the generated canary: it judges sampled fuzz requests run-wide."""

from __future__ import annotations

import httpx

from eval.canary.records import ProbeRecord
from eval.canary.sampled.oracle import SampledOracle, judgeable
from tests.doubles.toy_sampler import ToySampler, V


def test_only_requests_shaped_by_temperature_top_k_top_p_alone_are_judged() -> None:
    assert judgeable({"temperature": 0.8, "top_k": 5, "seed": 3, "max_tokens": 8})
    assert not judgeable({"temperature": 0.0})
    assert not judgeable({"temperature": 0.8, "presence_penalty": 0.5})
    assert not judgeable({"temperature": 0.8, "n": 2})


def _records(url: str, n: int) -> list[ProbeRecord]:
    out = []
    with httpx.Client(base_url=url) as http:
        for i in range(n):
            params = {"temperature": 1.0, "seed": i + 1, "max_tokens": 12}
            prompt = [1 + i % 7, 2 + i % 5]
            ids = http.post("/v1/completions", json={"prompt": prompt, **params}).json()["choices"][0]["token_ids"]
            rec = ProbeRecord(probe_id=f"p{i}", cohort="c", mode="fuzz", index=i, role="r0")
            rec.params, rec.prompt_token_ids, rec.output_token_ids = params, prompt, ids
            out.append(rec)
    return out


def test_the_oracle_fails_a_shifted_sampler_and_not_a_correct_one() -> None:
    with ToySampler() as ref, ToySampler(shift=0.3) as bad, ToySampler() as good:
        verdicts = {}
        for name, server in (("bad", bad), ("good", good)):
            oracle = SampledOracle(ref.base_url, "toy", V)
            findings = [oracle.judge(None, rec, None) for rec in _records(server.base_url, 40)]
            verdicts[name] = {f.verdict for f in findings if f is not None}
    assert "fail" in verdicts["bad"]
    assert "fail" not in verdicts["good"]
