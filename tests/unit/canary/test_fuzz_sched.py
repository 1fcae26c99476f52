"""The scheduler server configurations and the cohort file that carries them; the opt-in request draws (priority)
and engine control calls (pause/resume, prefix-cache resets) of the generator and the executor (no vLLM here)."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from pathlib import Path

import httpx
import pytest

from eval.canary.fuzz.case import Case, EngineControl, TimedRequest
from eval.canary.fuzz.execute import engine_control, records_of, run_case_async
from eval.canary.fuzz.generate import DEFAULT_FEATURES, GenContext, generate_case
from eval.canary.fuzz.space import SCHED_ENV, SCHED_SERVER_CONFIGS, space_from_openapi
from eval.canary.prompts import PromptBook
from eval.spec.load import load_spec
from eval.spec.workloads import FUZZ_OPT_IN, CanaryWorkload
from tests.doubles.toy_lm import FIELDS, ToyServer, toy_tokenize

ROOT = Path(__file__).resolve().parents[3]


def _gen(features: tuple[str, ...] = DEFAULT_FEATURES) -> GenContext:
    props = {**FIELDS, "priority": {"type": "integer"}}
    space = space_from_openapi({"components": {"schemas": {"CompletionRequest": {"properties": props}}}})
    book = PromptBook(toy_tokenize, 0)
    return GenContext(book=book, space=space, block_size=16, spec_tokens=4, max_model_len=512, max_tokens=12,
                      features=features)  # fmt: skip


def test_cohort_file_carries_the_space_configs_users_first() -> None:
    users = [c.user for c in SCHED_SERVER_CONFIGS]
    assert users[0] and users == sorted(users, reverse=True) and not users[-1]
    loaded = load_spec([str(ROOT / "cohorts/scheduler-cpu.yaml")])
    by_name = {c.name: c for c in SCHED_SERVER_CONFIGS}
    base, base_env = dict(loaded.spec.server.args), dict(loaded.spec.server.env)
    seen = set()
    for cohort in loaded.cohorts:
        if cohort.name == "stock-off":
            assert (cohort.server_args, cohort.env) == (base, base_env)
            continue
        config, spec = cohort.name.rsplit("-", 1)
        assert spec == "self4"
        assert cohort.server_args == {**base, **by_name[config].args}, cohort.name
        assert cohort.env == {**base_env, **SCHED_ENV, **by_name[config].env}, cohort.name
        seen.add(config)
    assert seen == set(by_name)
    features = loaded.spec.workloads.canary.fuzz_feature_set("cpu")
    # lora: cohorts/lora-cpu.yaml (servers with adapters); client_timeout: named on the command line (canary.md)
    assert set(FUZZ_OPT_IN) - {"lora", "client_timeout"} <= set(features)


def test_opt_in_features_are_off_by_default_and_change_nothing_else() -> None:
    assert not set(FUZZ_OPT_IN) & set(CanaryWorkload().fuzz_feature_set("cuda"))
    assert not set(FUZZ_OPT_IN) & set(DEFAULT_FEATURES)
    plain, opted = _gen(), _gen((*DEFAULT_FEATURES, *FUZZ_OPT_IN))
    prioritized = controlled = 0
    for i in range(60):
        a, b = generate_case(plain, 0, i), generate_case(opted, 0, i)
        assert not a.controls and len(a.requests) == len(b.requests)
        for x, y in zip(a.requests, b.requests, strict=True):
            assert x.prompt_token_ids == y.prompt_token_ids and (x.after, x.start_ms) == (y.after, y.start_ms)
            assert [f for f in y.features if f not in ("priority", "client_timeout")] == x.features
            assert {k: v for k, v in y.params.items() if k != "priority"} == x.params
            prioritized += "priority" in y.params
        roles = {r.role for r in b.requests}
        for c in b.controls:
            assert c.after is None or c.after in roles
            assert (c.hold_ms > 0) == c.action.startswith("pause")
            assert c.action != "pause_wait" or not any(r.until_others_done for r in b.requests)
        controlled += bool(b.controls)
    assert prioritized >= 40 and 15 <= controlled <= 45
    # a build that does not declare `priority` never gets it
    no_field = dataclasses.replace(opted, space=space_from_openapi({"components": {"schemas": {
        "CompletionRequest": {"properties": FIELDS}}}}))  # fmt: skip
    assert all("priority" not in r.params for i in range(20) for r in generate_case(no_field, 0, i).requests)


def test_lora_names_the_files_adapters_on_half_the_requests_and_changes_nothing_else() -> None:
    plain = _gen((*DEFAULT_FEATURES, "lora"))  # no adapters: nothing to name
    named = dataclasses.replace(plain, adapters=("lora-a", "lora-b"))
    total = with_adapter = 0
    seen: set[str] = set()
    for i in range(40):
        a, b = generate_case(plain, 0, i), generate_case(named, 0, i)
        for x, y in zip(a.requests, b.requests, strict=True):
            assert "model" not in x.params
            assert {k: v for k, v in y.params.items() if k != "model"} == x.params
            assert [f for f in y.features if f != "lora"] == x.features
            total += 1
            if "model" in y.params:
                with_adapter += 1
                seen.add(y.params["model"])
                assert "lora" in y.features
    assert seen == {"lora-a", "lora-b"} and 0.35 < with_adapter / total < 0.65
    loaded = load_spec([str(ROOT / "cohorts/lora-cpu.yaml")])
    canary = loaded.spec.workloads.canary
    assert "lora" in canary.fuzz_feature_set("cpu") and "prompt_logprobs" not in canary.fuzz_feature_set("cpu")
    assert not canary.fuzz_greedy_rescore  # its prompt logprobs kill a LoRA server (a known vLLM bug)
    modules = {f"{n}=@target/{n}" for n in canary.fuzz_lora_adapters}
    assert set(loaded.spec.model.generate.options["lora_adapters"]) == set(canary.fuzz_lora_adapters)
    for cohort in loaded.cohorts:  # every server, the reference too, serves every adapter the requests name
        assert set(cohort.server_args["lora_modules"]) == modules and cohort.server_args["enable_lora"]


def test_control_actions_can_be_narrowed_and_leave_the_requests_alone() -> None:
    from typing import get_args

    from eval.canary.fuzz.case import ControlAction
    from eval.canary.fuzz.generate import CONTROL_ACTIONS
    from eval.spec.workloads import FUZZ_CONTROL_ACTIONS

    assert set(get_args(ControlAction)) == set(FUZZ_CONTROL_ACTIONS) == set(CONTROL_ACTIONS)
    full = _gen((*DEFAULT_FEATURES, "engine_control"))
    narrow = dataclasses.replace(full, control_actions=("pause_abort", "reset_external"))
    seen: set[str] = set()
    for i in range(40):
        a, b = generate_case(full, 0, i), generate_case(narrow, 0, i)
        assert [r.params for r in a.requests] == [r.params for r in b.requests] and len(a.controls) == len(b.controls)
        seen |= {c.action for c in b.controls}
    assert seen == {"pause_abort", "reset_external"}
    assert generate_case(dataclasses.replace(full, control_actions=()), 0, 3) == generate_case(full, 0, 3)
    with pytest.raises(ValueError, match="fuzz_control_actions"):
        CanaryWorkload(fuzz_control_actions=["reboot"])


def test_a_server_without_the_endpoints_answers_the_controls_404_and_the_requests_run() -> None:
    params = {"max_tokens": 6, "temperature": 0.0, "logprobs": 1}
    bg = TimedRequest(role="bg", prompt_token_ids=[5, 6], params=params, until_others_done=True)
    r0 = TimedRequest(role="r0", prompt_token_ids=[7, 8], params=params, after="bg")
    controls = [EngineControl(action="pause", after="bg", hold_ms=10), EngineControl(action="reset_running")]
    case = Case(seed=0, index=0, requests=[bg, r0], controls=controls)
    with ToyServer() as server:
        out = asyncio.run(run_case_async(case, server.base_url, "toy"))
    recs = records_of(case, out, "c", "")
    assert [r.infra_error for r in recs] == [None, None]
    assert recs[0].extra["controls"] == [
        {"action": "pause", "status": 404, "error": "HTTP 404"},
        {"action": "reset_running", "status": 404, "error": "HTTP 404"},
    ]


class _SlowStream(httpx.AsyncByteStream):
    """A completion stream of one token every 50 ms, after `first_s`."""

    def __init__(self, first_s: float) -> None:
        self.first_s = first_s

    async def __aiter__(self):  # type: ignore[no-untyped-def]
        await asyncio.sleep(self.first_s)
        for i in range(20):
            chunk = {"choices": [{"index": 0, "text": "x", "token_ids": [i], "logprobs": None}]}
            yield f"data: {json.dumps(chunk)}\n\n".encode()
            await asyncio.sleep(0.05)
        yield b"data: [DONE]\n\n"


def test_a_client_timeout_closes_the_stream_and_keeps_what_it_got() -> None:
    from eval.canary.fuzz.execute import Outcome, send

    async def go(first_s: float, after_ms: int) -> Outcome:
        def handler(request: httpx.Request) -> httpx.Response:
            return httpx.Response(200, stream=_SlowStream(first_s))

        req = TimedRequest(role="r0", prompt_token_ids=[1, 2], params={"max_tokens": 20}, abort_after_ms=after_ms)
        async with httpx.AsyncClient(base_url="http://x", transport=httpx.MockTransport(handler)) as http:
            return await send(http, req, "m", Outcome())

    mid = asyncio.run(go(0.0, 180))
    assert mid.aborted and mid.error is None and 1 <= len(mid.choices[0].ids) < 20
    early = asyncio.run(go(0.5, 60))  # before the first token: a request that waited (KV, grammar, a slot)
    assert early.aborted and early.error is None and not early.choices
    whole = asyncio.run(go(0.0, 5000))
    assert not whole.aborted and len(whole.choices[0].ids) == 20


def test_client_timeouts_are_opt_in_and_change_nothing_else() -> None:
    plain, timed = _gen(), _gen((*DEFAULT_FEATURES, "client_timeout"))
    total = with_timeout = 0
    for i in range(40):
        a, b = generate_case(plain, 0, i), generate_case(timed, 0, i)
        for x, y in zip(a.requests, b.requests, strict=True):
            assert x.abort_after_ms is None and x.params == y.params
            assert [f for f in y.features if f != "client_timeout"] == x.features
            if y.abort_after_ms is not None:
                assert y.stream and y.role not in ("w", "bg") and 20 <= y.abort_after_ms <= 1500
                with_timeout += 1
            total += 1
    assert 0.15 < with_timeout / total < 0.4


def test_a_pause_is_always_followed_by_a_resume() -> None:
    calls: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(f"{request.url.path}?{request.url.query.decode()}")
        return httpx.Response(500 if request.url.path == "/pause" else 200, json={})

    async def go() -> tuple[int | None, str | None]:
        async with httpx.AsyncClient(base_url="http://x", transport=httpx.MockTransport(handler)) as http:
            out = await engine_control(http, EngineControl(action="pause", hold_ms=1))
            ok = await engine_control(http, EngineControl(action="reset_running"))
            assert (ok.status, ok.error) == (200, None)
            return out.status, out.error

    assert asyncio.run(go()) == (500, "HTTP 500")
    reset = "/reset_prefix_cache?reset_running_requests=true"
    assert calls == ["/pause?mode=keep&clear_cache=false", "/resume?", reset]


def test_a_request_the_server_aborted_on_pause_is_compared_on_its_prefix() -> None:
    """/pause?mode=abort ends the running requests with finish_reason abort: their records are marked aborted (the
    oracles compare what they got) when the call succeeded, and only then."""
    from eval.canary.fuzz.execute import CONTROL, Choice, Outcome

    params = {"max_tokens": 6, "temperature": 0.0, "logprobs": 1}
    case = Case(seed=0, index=0, requests=[TimedRequest(role="r0", prompt_token_ids=[7], params=params)],
                controls=[EngineControl(action="pause_abort", hold_ms=10)])  # fmt: skip
    cases = [(200, None, "abort", True), (200, None, None, True), (200, None, "length", False),
             (404, "HTTP 404", "abort", False)]  # fmt: skip
    for status, error, finish, aborted in cases:
        outcomes = {"r0": Outcome(choices=[Choice(ids=[1], finish_reason=finish)]),
                    f"{CONTROL}0": Outcome(status=status, error=error)}  # fmt: skip
        rec = records_of(case, outcomes, "c", "")[0]
        assert rec.extra["aborted"] is aborted
