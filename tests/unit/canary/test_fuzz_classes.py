"""Issue 27, gap 1: the generator reaches the three missed bug classes as classes (a feature at a non-zero batch row
beside drafts, a stop string completed mid-step, a grammar crossed by drafts), output-guided parameters are
derived from a pilot's output, the oracles compare token count / finish_reason / usage and call a 5xx a failure,
and shrinking keeps only candidates that fail on repeat."""

from __future__ import annotations

import asyncio
import re

from eval.canary.fuzz.case import Case, TimedRequest
from eval.canary.fuzz.derive import _bad_word, _regex, _stop, regex_literal
from eval.canary.fuzz.generate import GenContext, generate_case
from eval.canary.fuzz.oracles import StructuredOracle, default_oracles, judge_request
from eval.canary.fuzz.shrink import shrink
from eval.canary.fuzz.space import space_from_openapi
from eval.canary.prompts import PromptBook
from eval.canary.records import ProbeRecord
from tests.doubles.toy_lm import FIELDS, toy_tokenize

VOCAB = ["a", "b", "cat", "dog", "x", "yz"]


class FakeTok:
    """Token i's text is ' ' + VOCAB[i] (a leading space, as byte-level BPE renders a word)."""

    async def detok(self, ids: list[int]) -> str:
        return "".join(" " + VOCAB[i] for i in ids)

    async def tok(self, text: str) -> list[int]:
        return [VOCAB.index(w) for w in text.split()]


def _gen(**kw: object) -> GenContext:
    fields = {**FIELDS, "structured_outputs": {"type": "object"}}
    space = space_from_openapi({"components": {"schemas": {"CompletionRequest": {"properties": fields}}}})
    return GenContext(book=PromptBook(toy_tokenize, 0), space=space, block_size=16, spec_tokens=4, **kw)  # type: ignore[arg-type]


def test_features_join_a_running_batch_and_parameters_are_derived_from_output() -> None:
    cases = [generate_case(_gen(), 1, i) for i in range(150)]
    joined = [r for c in cases for r in c.requests if r.after == "bg"]
    assert sum(1 for c in cases if any(r.until_others_done for r in c.requests)) >= 30
    assert {p for r in joined for p in r.params} >= {"presence_penalty", "min_tokens"}  # features off batch row 0
    derived = {k for c in cases for r in c.requests for k in r.derive}
    assert derived >= {"bad_words", "stop", "stop_token_ids", "regex"}
    assert any(r.derive and r.after == "bg" for r in joined)


def test_derived_ban_stop_and_regex_act_at_the_drawn_position() -> None:
    ids = [0, 2, 3, 4, 5, 1]  # " a cat dog x yz b"
    word, seqs = asyncio.run(_bad_word(FakeTok(), ids, {"at": 0.5}))  # type: ignore[misc]
    assert word == "x" and [4] in seqs
    stop = asyncio.run(_stop(FakeTok(), ids, {"at": 0.5, "chars": 2, "inside": 0}))
    text = asyncio.run(FakeTok().detok(ids))
    assert stop is not None and text.find(stop) + len(stop) == len(" a cat dog x")  # completes at token 3
    inside = asyncio.run(_stop(FakeTok(), ids, {"at": 0.2, "chars": 1, "inside": 1}))
    assert inside == "ca"  # ends inside " cat": the text is cut mid-token
    rx = asyncio.run(_regex(FakeTok(), ids, {"at": 0.4, "tail": "[0-9]{2}"}))
    assert rx is not None and re.fullmatch(rx, " a cat dog12") and not re.fullmatch(rx, " a cat dog x")
    assert regex_literal("a.b (c)") == r"a\.b \(c\)" and regex_literal("\x00") is None


def _rec(role: str = "r0", **kw: object) -> ProbeRecord:
    base: dict[str, object] = dict(
        probe_id=f"fuzz-000-{role}", cohort="c", mode="fuzz", index=0, role=role,
        output_token_ids=[1, 2, 3], output_text="abc", finish_reason="stop", params={"max_tokens": 8},
    )  # fmt: skip
    base.update(kw)
    rec = ProbeRecord(**base)  # type: ignore[arg-type]
    rec.extra.update(endpoint="completions", completion_tokens=len(rec.output_token_ids or []))
    return rec


def _failed(rec: ProbeRecord, ref: ProbeRecord) -> list[str]:
    return [f.oracle for f in judge_request(None, rec, ref, default_oracles(None, 0.25, 0.5)) if f.failed]


def test_a_5xx_where_the_reference_answered_is_a_failure_not_a_fact() -> None:
    err = _rec(output_token_ids=None, infra_error="HTTP 500: grammar rejected the accepted tokens")
    assert _failed(err, _rec()) == ["crash"]
    refused = _rec(output_token_ids=None)
    refused.extra["refused"] = "HTTP 400: min_p is not supported"
    assert _failed(refused, _rec()) == []


def test_a_server_that_is_already_gone_is_infra_not_a_crash_of_its_build() -> None:
    """H200, vLLM 0.26.0 over P/D: a stock bug killed both decode workers a few requests apart; the requests the
    clean cohort lost after its death must not FAIL it (the killing request is judged on its own)."""
    gone = _rec(
        output_token_ids=None, infra_error="RemoteProtocolError: Server disconnected without sending a response."
    )
    assert _failed(gone, _rec()) == []
    refused = _rec(output_token_ids=None, infra_error="ConnectError: All connection attempts failed")
    assert _failed(refused, _rec()) == []
    killed = _rec(output_token_ids=None, infra_error='HTTP 500: {"error":{"message":"","type":"InternalServerError"}}')
    assert _failed(killed, _rec()) == ["crash"]  # the request that killed it, where the reference answered


def test_a_control_character_the_grammar_admits_is_valid_json_output() -> None:
    """xgrammar compiles a JSON-schema string with maxLength to a class without the control-character exclusion,
    so a sampled draw may put a raw control character in it (a clean bf16 control did); strict json.loads would
    call that "not JSON". A real schema violation still fails."""
    props = {"command": {"type": "string", "maxLength": 12}, "count": {"type": "integer"}}
    schema = {"type": "object", "properties": props, "required": ["command", "count"], "additionalProperties": False}
    params = {"max_tokens": 32, "temperature": 1.0,
              "response_format": {"type": "json_schema", "json_schema": {"name": "a", "schema": schema}}}  # fmt: skip
    ok = _rec(output_text='{"command":\t"}x\x15",\t\r\n "count":4\n}', params=params)
    judged = StructuredOracle().judge(None, ok, _rec(params=params))
    assert judged is not None and not judged.failed
    bad = StructuredOracle().judge(None, _rec(output_text='{"command": "x", "count": "4"}', params=params), None)
    assert bad is not None and bad.failed and "wrong type ['count']" in bad.reason


def test_with_reasoning_open_only_the_text_after_the_end_marker_is_judged_structured() -> None:
    """A server's reasoning parser holds the grammar back until the model writes `</think>`: before it the output is
    free (not judged), after it the grammar holds (judged)."""
    params = {"max_tokens": 32, "structured_outputs": {"regex": "(alpha|beta) [0-9]"}}
    feats = {"features": ["structured:regex", "reasoning:open"]}
    free = _rec(output_text="no markers at all, not the regex", params=params)
    free.extra.update(feats)
    assert StructuredOracle().judge(None, free, None) is None
    ended = _rec(output_text="thinking...</think>alpha 7", params=params)
    ended.extra.update(feats)
    judged = StructuredOracle().judge(None, ended, None)
    assert judged is not None and not judged.failed
    broken = _rec(output_text="thinking...</think>gamma 7", params=params)
    broken.extra.update(feats)
    judged = StructuredOracle().judge(None, broken, None)
    assert judged is not None and judged.failed
    closed = _rec(output_text="thinking...</think>alpha 7", params=params)  # reasoning closed in the prompt
    closed.extra.update(features=["structured:regex", "reasoning:closed"])
    judged = StructuredOracle().judge(None, closed, None)
    assert judged is not None and judged.failed  # the grammar applied from the first token


def test_count_finish_reason_and_usage_are_compared() -> None:
    assert "reference" in _failed(_rec(output_token_ids=[1, 2, 3, 4]), _rec())  # ids kept past the stop string
    assert _failed(_rec(finish_reason="length"), _rec()) == ["accounting"]
    usage = _rec()
    usage.extra["completion_tokens"] = 5
    assert _failed(usage, _rec()) == ["accounting"]
    assert _failed(_rec(output_text="ab"), _rec()) == ["accounting"]


def test_a_self_check_that_speculation_off_fails_too_is_a_fact() -> None:
    params = {"max_tokens": 8, "stop_token_ids": [2], "min_tokens": 3}
    rec, ref = _rec(params=params, finish_reason="length"), _rec(params=params, finish_reason="length")
    findings = judge_request(None, rec, ref, default_oracles(None, 0.25, 0.5))
    assert [f.verdict for f in findings if f.oracle == "stop"] == ["fact"]


def test_shrinking_keeps_only_candidates_that_fail_on_repeat() -> None:
    reqs = [TimedRequest(role=f"r{i}", prompt_token_ids=[1, 2], params={"max_tokens": 4}) for i in range(6)]
    case = Case(seed=0, index=0, requests=reqs)
    flaky = iter([True, False] * 200)  # r3 alone fails every other run: never twice in a row

    def fails(c: Case) -> bool:
        roles = {r.role for r in c.requests}
        if "r1" in roles:
            return True
        return "r3" in roles and next(flaky)

    small, _ = shrink(case, fails, max_checks=80, repeats=2)
    assert [r.role for r in small.requests] == ["r1"]


def test_shrinking_tries_the_failing_request_with_the_batch_it_joined_first() -> None:
    reqs = [TimedRequest(role="bg", prompt_token_ids=[1], until_others_done=True)]
    reqs += [TimedRequest(role=f"r{i}", prompt_token_ids=[1, 2], after="bg" if i == 4 else None) for i in range(8)]
    case = Case(seed=0, index=0, requests=reqs)
    runs = []

    def fails(c: Case) -> bool:  # r4 fails only while it joins the background request
        runs.append(1)
        return {"bg", "r4"} <= {r.role for r in c.requests} and c.request("r4").after == "bg"

    small, used = shrink(case, fails, max_checks=40, repeats=2, roles={"r4"})
    assert [r.role for r in small.requests] == ["bg", "r4"] and small.request("r4").after == "bg"
    assert used <= 12


def test_the_bad_words_oracle_bans_what_vllm_bans() -> None:
    from eval.canary.fuzz.oracles import banned_sequences

    vocab = {"shell": [87, 416], " shell": [470], "check": [472], " check": [225, 472], "cat": [5], " cat": [6]}
    tok = vocab.__getitem__
    assert banned_sequences(tok, "shell") == [[87, 416]]  # " shell" has another length: vLLM does not ban it
    assert banned_sequences(tok, " check") == [[472]]  # a different first token but another length
    assert banned_sequences(tok, "cat") == [[5], [6]]


def test_a_stop_string_inside_the_first_min_tokens_tokens_is_not_a_failure() -> None:
    """vLLM checks stop strings only after min_tokens tokens (PR 22014): 'he' in 'check' at token 1 of 32 with
    min_tokens 26 stays in the text (a clean control's false FAIL, fp32 seed 45); without min_tokens it fails."""
    params = {"max_tokens": 32, "stop": ["branch", "he"], "min_tokens": 26, "temperature": 1.0}
    rec = _rec(params=params, output_text="\ufffdKcheck\ufffdfieError", output_token_ids=list(range(32)))
    ref = _rec(params=params, output_text="unct 9 aseckhi", output_token_ids=list(range(32)))
    assert "stop" not in _failed(rec, ref)
    plain = {k: v for k, v in params.items() if k != "min_tokens"}
    assert "stop" in _failed(_rec(params=plain, output_text="check", output_token_ids=[1]), _rec(params=plain))


def test_a_structured_output_a_user_stop_id_ended_is_a_prefix_not_a_mismatch() -> None:
    """Seen on the hybrid clean control (seed 65): a sampled request with a regex and stop_token_ids drew a stop id
    the regex allows mid-match; the request ended there, correctly, with text that is only a prefix of a match."""
    params = {"max_tokens": 32, "stop_token_ids": [3], "structured_outputs": {"regex": "abc[XY]"}}
    cut = _rec(params=params, output_text="ab")
    cut.extra["stop_reason"] = 3
    assert "structured" not in _failed(cut, _rec(params=params, output_text="abcX"))
    finished = _rec(params=params, output_text="abc")  # ended by EOS: must be a whole match, and is not
    assert "structured" in _failed(finished, _rec(params=params, output_text="abcX"))


def test_a_stop_id_the_grammar_alone_allowed_before_min_tokens_is_undefined_not_a_failure() -> None:
    """Seed 101 of 2026-12-06 (hybrid clean control): choice "delta state" after "delta" allows only ' ', ' s' and
    ' sta', all three among the stop ids that min_tokens masks; the server's top logprobs show exactly those three
    live and the rest masked (-9999), so the constraints left nothing to draw. Where another token was live, or the
    list is cut off, the stop id before min_tokens stays a failure (vLLM PR 32642's class)."""
    params = {"max_tokens": 32, "min_tokens": 12, "stop_token_ids": [225, 446, 392], "temperature": 1.0}
    only_stops = {"225": -1.13, "446": -1.06, "392": -1.11, "3": -9999.0, "1": -9999.0}
    undefined = _rec(params=params, output_token_ids=[572, 225], output_top_logprobs=[{"572": -2.2}, only_stops])
    assert "stop" not in _failed(undefined, _rec(params=params))
    another_live = {**only_stops, "7": -3.0}
    caught = _rec(params=params, output_token_ids=[572, 225], output_top_logprobs=[{"572": -2.2}, another_live])
    assert "stop" in _failed(caught, _rec(params=params))
    cut_off = {"225": -1.13, "446": -1.06, "392": -1.11}
    unknown = _rec(params=params, output_token_ids=[572, 225], output_top_logprobs=[{"572": -2.2}, cut_off])
    assert "stop" in _failed(unknown, _rec(params=params))


def test_a_banned_word_the_grammar_alone_allowed_is_undefined_not_a_failure() -> None:
    """The same for bad words: where only the banned word's last token is live (a grammar allowing nothing else),
    the ban cannot hold; with another token live it is a failure."""
    params = {"max_tokens": 8, "bad_words": ["cat"], "temperature": 1.0}
    only_banned = {"5": -0.1, "1": -9999.0, "2": -9999.0}
    rec = _rec(params=params, output_token_ids=[7, 5], output_top_logprobs=[{"7": -0.5}, only_banned])
    rec.extra["banned_sequences"] = [[5]]
    assert "bad_words" not in _failed(rec, _rec(params=params))
    live = _rec(params=params, output_token_ids=[7, 5], output_top_logprobs=[{"7": -0.5}, {**only_banned, "9": -2.0}])
    live.extra["banned_sequences"] = [[5]]
    assert "bad_words" in _failed(live, _rec(params=params))


def test_allowed_ids_the_grammar_left_no_room_for_and_a_greedy_divergence_there_are_undefined() -> None:
    """allowed_token_ids whose every entry the grammar masks: the token drawn is undefined, for the support oracle
    and for the reference oracle at the divergence; a divergence where an allowed token was live still FAILs."""
    params = {"max_tokens": 8, "allowed_token_ids": [40, 41], "temperature": 0.0}
    grammar_only = {"5": -0.1, "6": -0.2, "40": -9999.0, "41": -9999.0}
    rec = _rec(params=params, output_token_ids=[40, 5], output_top_logprobs=[{"40": -0.5}, grammar_only])
    ref = _rec(params=params, output_token_ids=[40, 6], output_top_logprobs=[{"40": -0.5}, grammar_only])
    ref.cohort = "reference"
    failed = _failed(rec, ref)
    assert "support" not in failed and "reference" not in failed
    room = {"5": -0.1, "6": -0.2, "40": -3.0, "41": -9999.0}
    rec2 = _rec(params=params, output_token_ids=[40, 5], output_top_logprobs=[{"40": -0.5}, room])
    ref2 = _rec(params=params, output_token_ids=[40, 40], output_top_logprobs=[{"40": -0.5}, room])
    ref2.cohort = "reference"
    assert {"support", "reference"} <= set(_failed(rec2, ref2))
