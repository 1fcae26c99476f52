"""The sampled mode as an oracle of the generated canary: it judges sampled fuzz requests run-wide."""

from __future__ import annotations

import asyncio

import httpx

from eval.canary.records import ProbeRecord
from eval.canary.sampled.oracle import EXTRA_KEY, SampledOracle, judgeable, rescore_records
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


def test_records_rescored_while_the_stack_is_up_are_judged_afterwards_per_cohort() -> None:
    """The fuzzer's order: re-score on the live server (the cohort's own: prompt logprobs never speculate), judge
    the stored PITs after the stacks are gone; one sequential test per cohort."""
    with ToySampler(shift=0.3) as bad, ToySampler() as good:
        recs = {"bad": _records(bad.base_url, 40), "good": _records(good.base_url, 40)}
        for name, server in (("bad", bad), ("good", good)):
            for r in recs[name]:
                r.cohort = name
            assert asyncio.run(rescore_records(recs[name], server.base_url, "toy")) == 40
    assert all("pits" in r.extra[EXTRA_KEY] for rs in recs.values() for r in rs)
    oracle = SampledOracle()  # no live reference: only the stored judgements
    verdicts: dict[str, set[str]] = {"bad": set(), "good": set()}
    for r in recs["bad"] + recs["good"]:  # interleaving cohorts does not mix their tests
        f = oracle.judge(None, r, None)
        assert f is not None
        verdicts[r.cohort].add(f.verdict)
    assert "fail" in verdicts["bad"]
    assert "fail" not in verdicts["good"]
    assert set(oracle.tests) == {"bad", "good"}


def test_a_server_without_max_logprobs_minus_one_is_rescored_with_its_top_20() -> None:
    """vLLM refuses prompt_logprobs -1 unless `max_logprobs: -1` (HTTP 400); the fallback re-scores with the top 20,
    which judges T=1 requests through a 'rest' bucket, and still fails a shifted sampler and not a correct one."""
    verdicts = {}
    for name, shift in (("bad", 0.3), ("good", 0.0)):
        with ToySampler(shift=shift, max_logprobs=20) as server:
            recs = _records(server.base_url, 40)
            assert asyncio.run(rescore_records(recs, server.base_url, "toy")) == 40
        assert all("error" not in r.extra[EXTRA_KEY] and r.extra[EXTRA_KEY]["pits"] for r in recs)
        oracle = SampledOracle()
        verdicts[name] = {f.verdict for r in recs if (f := oracle.judge(None, r, None)) is not None}
    assert "fail" in verdicts["bad"]
    assert "fail" not in verdicts["good"]


def test_fuzz_records_keep_their_sampled_flag_and_are_judged_without_error() -> None:
    """The fuzzer's records carry extra["sampled"] (a bool its own oracles read): the re-scoring stores its judgement
    under a key of its own, and the oracle skips a greedy record flagged False instead of failing on it."""
    with ToySampler(shift=0.3) as bad:
        recs = _records(bad.base_url, 40)
    greedy = ProbeRecord(probe_id="g", cohort="c", mode="fuzz", index=99, role="r0")
    greedy.params, greedy.prompt_token_ids, greedy.output_token_ids = {"temperature": 0.0}, [1, 2], [3, 4]
    greedy.extra["sampled"] = False
    for r in recs:
        r.extra["sampled"] = True
    with ToySampler(shift=0.3) as bad:
        asyncio.run(rescore_records([*recs, greedy], bad.base_url, "toy"))
    assert all(r.extra["sampled"] is True and "pits" in r.extra[EXTRA_KEY] for r in recs)
    assert greedy.extra["sampled"] is False and EXTRA_KEY not in greedy.extra
    oracle = SampledOracle()
    assert oracle.judge(None, greedy, None) is None
    findings = [oracle.judge(None, r, None) for r in recs]
    assert "fail" in {f.verdict for f in findings if f is not None}


def test_a_fail_stays_the_decision_when_later_tokens_pull_the_e_process_back() -> None:
    """Anytime-valid means: stop at the first crossing. Later requests of the cohort (here: correct ones, which on
    their own drift the e-process back down) are not added and never turn the FAIL into inconclusive or pass."""
    with ToySampler(shift=0.3) as bad:
        recs = _records(bad.base_url, 40)
        asyncio.run(rescore_records(recs, bad.base_url, "toy"))
    with ToySampler() as good:
        later = _records(good.base_url, 200)
        asyncio.run(rescore_records(later, good.base_url, "toy"))
    oracle = SampledOracle()
    verdicts = [f.verdict for r in recs + later if (f := oracle.judge(None, r, None)) is not None]
    first = verdicts.index("fail")
    n = oracle.tests["c"].n
    assert "pass" not in verdicts[first:]
    assert all(v == "inconclusive" for v in verdicts[first + 1 :] if v != "fail")
    assert oracle.decided["c"].startswith("run-wide PIT test of cohort c FAIL")
    assert n < sum(len(r.extra[EXTRA_KEY]["pits"]) for r in recs + later)  # stopped adding at the decision


def test_requests_it_cannot_judge_get_no_stored_judgement() -> None:
    rec = ProbeRecord(probe_id="p", cohort="c", mode="fuzz", index=0, role="r0")
    rec.params, rec.prompt_token_ids, rec.output_token_ids = {"temperature": 0.0}, [1, 2], [3, 4]
    assert asyncio.run(rescore_records([rec], "http://127.0.0.1:9", "toy")) == 0
    assert EXTRA_KEY not in rec.extra
    assert SampledOracle().judge(None, rec, None) is None


def test_the_fuzz_judgement_uses_one_sampled_test_per_cohort_when_enabled() -> None:
    """workloads.canary.fuzz_sampled_oracle: the fuzzer's judgement (default_oracles + judge_request, as
    eval/canary/results.py calls it) gets one SampledOracle per cohort, which fails a shifted sampler from the
    PITs stored while its stack was up; none when it is switched off."""
    from eval.canary.fuzz.oracles import default_oracles, judge_request
    from eval.canary.results import _run_wide_oracles
    from eval.spec.models import CanaryWorkload

    off = CanaryWorkload.model_validate({"modes": ["fuzz"], "fuzz_sampled_oracle": False})
    assert _run_wide_oracles(off) == []
    cfg = CanaryWorkload.model_validate({"modes": ["fuzz"], "fuzz_sampled_oracle": True})
    with ToySampler(shift=0.3) as bad:
        recs = _records(bad.base_url, 40)
        asyncio.run(rescore_records(recs, bad.base_url, "toy"))
    run_wide = _run_wide_oracles(cfg)
    assert [o.name for o in run_wide] == ["sampled_pit"]
    oracles = default_oracles(None, 0.25, 0.5, run_wide)
    findings = [f for rec in recs for f in judge_request(None, rec, None, oracles) if f.oracle == "sampled_pit"]
    assert findings and "fail" in {f.verdict for f in findings} and findings[-1].verdict != "pass"
