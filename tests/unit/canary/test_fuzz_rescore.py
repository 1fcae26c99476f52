"""Greedy re-scoring of fuzz records (issue 28 item 4): every greedy token must be the prefill's argmax."""

from __future__ import annotations

import asyncio

import httpx

from eval.canary.fuzz.oracles import default_oracles, judge_request
from eval.canary.fuzz.rescore import EXTRA_KEY, GreedyRescoreOracle, greedy_judgeable, judge_rows, rescore_greedy
from eval.canary.records import ProbeRecord
from tests.doubles.toy_sampler import ToySampler


def test_only_greedy_requests_whose_argmax_is_the_raw_models_are_judged() -> None:
    assert greedy_judgeable({"temperature": 0.0, "max_tokens": 8, "stop": ["x"], "logprobs": 2, "top_k": 5})
    assert greedy_judgeable({"temperature": 0, "tools": [{"type": "function"}], "tool_choice": "auto"})
    assert greedy_judgeable({"temperature": 0, "response_format": {"type": "text"}, "repetition_penalty": 1.0})
    assert not greedy_judgeable({"max_tokens": 8})  # the server's default temperature may sample
    assert not greedy_judgeable({"temperature": 0.7})
    assert not greedy_judgeable({"temperature": 0, "n": 2})
    for moved in (
        {"presence_penalty": 0.5},
        {"repetition_penalty": 1.3},
        {"logit_bias": {"5": 3}},
        {"bad_words": ["a"]},
        {"min_tokens": 4},
        {"allowed_token_ids": [1, 2]},
        {"response_format": {"type": "json_object"}},
        {"structured_outputs": {"regex": "a+"}},
        {"tools": [{"type": "function"}], "tool_choice": "required"},
        {"some_future_processor": 2},  # unknown: not judged rather than judged wrongly
        {"thinking_token_budget": 0},  # forces the reasoning end at any value, 0 and 1 included
        {"thinking_token_budget": 1},
    ):
        assert not greedy_judgeable({"temperature": 0, **moved}), moved


def test_judge_rows_fails_a_token_beyond_the_near_tie_and_forgives_one_within() -> None:
    rows = [
        {"5": {"logprob": -0.1}},
        {"7": {"logprob": -0.5}, "8": {"logprob": -0.6}},  # chosen 8: a near tie (0.1)
        {"2": {"logprob": -0.2}, "9": {"logprob": -2.0}},  # chosen 9: loses by 1.8
    ]
    verdict = judge_rows([5, 8, 9], rows, 0.25)
    assert verdict["violations"] == [2]
    assert verdict["near_ties"] == 1
    assert verdict["margin_at_first"] == 1.8


def _greedy_records(url: str, n: int, cohort: str) -> list[ProbeRecord]:
    out = []
    with httpx.Client(base_url=url) as http:
        for i in range(n):
            params = {"temperature": 0.0, "max_tokens": 10}
            prompt = [1 + i % 7, 2 + i % 5, 3]
            ids = http.post("/v1/completions", json={"prompt": prompt, **params}).json()["choices"][0]["token_ids"]
            rec = ProbeRecord(probe_id=f"fuzz-{i:03d}-r0", cohort=cohort, mode="fuzz", index=i, role="r0")
            rec.params, rec.prompt_token_ids, rec.output_token_ids = params, prompt, ids
            rec.extra["sampled"] = False
            out.append(rec)
    return out


def test_a_greedy_fault_after_the_first_tokens_fails_and_a_correct_server_passes() -> None:
    """The toy server's fault starts at output position 4 (its logits are multiples of 0.25 nats: near tie 0.1): the
    reference oracle would stop at a first flip; the re-scoring sees every later token too."""
    verdicts = {}
    for name, fault in (("bad", 4), ("good", None)):
        with ToySampler(greedy_fault_after=fault) as server:
            recs = _greedy_records(server.base_url, 6, name)
            assert asyncio.run(rescore_greedy(recs, server.base_url, "toy", 0.1)) == 6
        findings = [GreedyRescoreOracle().judge(None, r, None) for r in recs]
        assert all(f is not None for f in findings)
        verdicts[name] = {f.verdict for f in findings if f is not None}
        if name == "bad":
            assert all(r.extra[EXTRA_KEY]["violations"][0] == 4 for r in recs if r.extra[EXTRA_KEY]["violations"])
    assert "fail" in verdicts["bad"]
    assert verdicts["good"] == {"pass"}


def test_the_rescore_oracle_is_a_default_oracle_and_a_reference_failing_alike_makes_it_a_fact() -> None:
    assert "rescore" in {o.name for o in default_oracles(None, 0.25, 0.5)}
    with ToySampler(greedy_fault_after=2) as server:
        mine = _greedy_records(server.base_url, 1, "c")[0]
        ref = _greedy_records(server.base_url, 1, "ref")[0]
        for r in (mine, ref):
            asyncio.run(rescore_greedy([r], server.base_url, "toy", 0.1))
    oracles = [GreedyRescoreOracle()]
    (finding,) = judge_request(None, mine, ref, oracles)
    assert finding.verdict == "fact"  # speculation off fails it too: not a speculative failure
    (alone,) = judge_request(None, mine, None, oracles)
    assert alone.verdict == "fail"


def test_a_record_that_could_not_be_rescored_says_so_and_is_not_judged() -> None:
    rec = ProbeRecord(probe_id="fuzz-000-r0", cohort="c", mode="fuzz", index=0, role="r0")
    rec.params, rec.prompt_token_ids, rec.output_token_ids = {"temperature": 0.0}, [1, 2], [3]
    assert asyncio.run(rescore_greedy([rec], "http://127.0.0.1:9", "toy", 0.25)) == 1
    assert "error" in rec.extra[EXTRA_KEY]
    assert GreedyRescoreOracle().judge(None, rec, None) is None
