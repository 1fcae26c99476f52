"""Seed -> Case: generated requests and batches over what vLLM's speculative paths branch on.

A case is drawn from `random.Random(f"specqual-fuzz:{seed}:{index}")`, so the same seed and index give the same
case on every cohort. What it varies (issue 27 item 1):
- concurrency 1-16 with start offsets and "send once that one streams", so steps mix requests of different draft
  counts: short `max_tokens` trim drafts, requests finish mid-batch, prompts near `max_model_len`;
- prompt lengths around block and chunk boundaries, and shared prefixes: a warm request, then requests that reuse
  its first L tokens (L at block multiples and at every other offset) plus a tail of 1..K+2 tokens;
- the sampling parameters the served build declares (eval/canary/fuzz/space.py): penalties, min_tokens with stop
  ids, allowed ids, logit bias, bad words, stop strings, top-k/p/min-p, seeds; plus the fields of no known
  meaning, by type; n > 1; logprobs and prompt logprobs; temperature > 0 on a few requests (self-checked only);
- structured output (json schema, regex incl. wide character classes, choice, grammar) and chat tool calls
  (`tool_choice` auto, required, named); client aborts mid-stream;
- a long background request sent first (batch index 0) that most requests of the case join once it streams, so
  every feature also runs at non-zero batch rows, in steps beside another request's drafts; closed by the client
  once the others are done;
- periodic prompts: some prompts repeat a short segment, so that continuing them is copying: a drafter that
  matches or has learnt to copy (ngram, a trained MTP or EAGLE head) then proposes drafts the target accepts, and
  the accept paths run with many drafts accepted (random words give acceptance near 0 on any model but the
  self-draft);
- output-guided parameters (eval/canary/fuzz/derive.py): bad words, stop strings, stop ids and a regex taken from
  a pilot run's own greedy output at a drawn position, so the processor acts where drafts sit (a random ban or
  stop string never meets a random model's output).
- opt-in (workloads.canary.fuzz_include): per-request `priority` (what `--scheduling-policy priority` orders and
  preempts by; an fcfs server ignores it), engine control calls during the case (pause/resume, prefix-cache
  resets with and without preempting the running requests: what RL frameworks call between weight updates) and
  LoRA adapters (`lora`: half the requests name one of `fuzz_lora_adapters` as their model), each from its own
  stream, so a seed's requests are otherwise what they were.
Requests are greedy unless drawn sampled; every request asks for top-k logprobs (the judgement needs them).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

from eval.canary.fuzz.case import (
    REASONING_END,
    REASONING_START,
    Case,
    EngineControl,
    ServerConfig,
    TimedRequest,
)
from eval.canary.fuzz.derive import REGEX_TAILS, draw_derived
from eval.canary.fuzz.oracles import banned_sequences
from eval.canary.fuzz.space import ParamSpace
from eval.canary.prompts import WORDS, PromptBook
from eval.spec.workloads import FUZZ_FEATURES, FUZZ_OPT_IN

CONCURRENCY = (1, 1, 2, 2, 3, 4, 4, 6, 8, 12, 16)
FEATURES = FUZZ_FEATURES  # the tags; the cohort file validates against them (eval/spec/workloads.py)
DEFAULT_FEATURES = tuple(f for f in FEATURES if f not in FUZZ_OPT_IN)
JSON_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"command": {"type": "string", "maxLength": 12}, "count": {"type": "integer"}},
    "required": ["command", "count"],
    "additionalProperties": False,
}
REGEX = r"(alpha|beta|gamma) [0-9]{1,3}( (state|cache|block))?"
OPEN_REGEXES = (r"[0-9]{20}", r"[a-z ]{8,40}", r"[a-m ]{4,30}", r"[0-9a-f ]{8,32}", r"( ?[a-z]+){2,12}")
GRAMMAR = 'root ::= "call " name " " number\nname ::= "alpha" | "beta" | "gamma"\nnumber ::= [0-9] [0-9]?'
TOOL = {
    "type": "function",
    "function": {
        "name": "bash",
        "description": "Run a shell command.",
        "parameters": {"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]},
    },
}


@dataclass
class GenContext:
    """What the generator needs to know about the served stack (all of it from the cohort file or the server)."""

    book: PromptBook
    space: ParamSpace
    block_size: int = 64
    spec_tokens: int = 5  # K of the cohort under test (the largest in the file): tails and draft trimming use it
    max_model_len: int = 1024
    token_budget: int | None = None  # max_num_batched_tokens, when the file sets it
    tool_parser: bool = False
    reasoning_parser: bool = False
    logprobs: int = 5
    max_tokens: int = 32
    max_requests: int = 16
    features: tuple[str, ...] = DEFAULT_FEATURES
    vocab: list[int] = field(default_factory=list)
    adapters: tuple[str, ...] = ()  # LoRA adapter names the servers serve (feature lora)
    control_actions: tuple[str, ...] = ()  # engine_control: the calls to draw from (empty: CONTROL_ACTIONS)

    def __post_init__(self) -> None:
        if not self.vocab:
            self.vocab = sorted(set(self.book.ids("fuzz-vocab", 512)))


def generate_case(ctx: GenContext, seed: int, index: int) -> Case:
    rng = random.Random(f"specqual-fuzz:{seed}:{index}")
    n = min(rng.choice(CONCURRENCY), ctx.max_requests)
    requests: list[TimedRequest] = []
    warm = _warm(ctx, rng, seed, index) if _on(ctx, rng, "shared_prefix", 0.45) else None
    if warm is not None:
        requests.append(warm)
    bg = _background(ctx, rng, seed, index) if n < ctx.max_requests and _on(ctx, rng, "background", 0.4) else None
    if bg is not None:
        requests.append(bg)
    # Staggered joins draw from their own stream, so that every other choice of every seed stays what it was.
    stagger = random.Random(f"specqual-fuzz-stagger:{seed}:{index}")
    step_ms = stagger.randint(15, 90) if stagger.random() < 0.5 else 0
    joined = 0
    for j in range(n):
        req = _request(ctx, rng, seed, index, f"r{j}", warm, requests)
        if bg is not None and rng.random() < 0.75:
            # Joins the running batch: not at batch index 0, beside drafts. Staggered, the joiners arrive one by one
            # (step_ms apart after bg's first token), each into a batch that is already decoding with drafts: a
            # short prompt tail then shares its step with decodes only (padded to K+1 rows: PR 55178).
            req.after, req.start_ms = "bg", joined * step_ms
            req.features.append("joined")
            if step_ms and joined:
                req.features.append("staggered")
            joined += 1
        requests.append(req)
    if "periodic" in ctx.features:
        _periodic(requests, random.Random(f"specqual-fuzz-periodic:{seed}:{index}"))
    if ctx.reasoning_parser and "reasoning" in ctx.features:  # last: the prompt's tail is where reasoning stands
        for req in requests:
            if any(f.startswith("structured:") for f in req.features):
                _reasoning(ctx, req, f"fuzz-{seed}-{index}-{req.role}")
    if ctx.reasoning_parser and "thinking_budget" in ctx.features:
        for req in requests:
            _thinking_budget(ctx, req, f"fuzz-{seed}-{index}-{req.role}")
    if "priority" in ctx.features and ctx.space.accepts("completions", "priority"):
        _priorities(requests, random.Random(f"specqual-fuzz-priority:{seed}:{index}"))
    if "client_timeout" in ctx.features:
        _timeouts(requests, random.Random(f"specqual-fuzz-timeout:{seed}:{index}"))
    if "lora" in ctx.features and ctx.adapters:
        _adapters(requests, ctx.adapters, random.Random(f"specqual-fuzz-lora:{seed}:{index}"))
    controls = []
    if "engine_control" in ctx.features:
        actions = ctx.control_actions or CONTROL_ACTIONS
        controls = _controls(requests, random.Random(f"specqual-fuzz-control:{seed}:{index}"), actions)
    return Case(seed=seed, index=index, server=ServerConfig(), requests=requests, controls=controls)


PRIORITY_SHARE = 0.6
PRIORITIES = (-5, -1, 0, 1, 3, 10)  # lower runs first under --scheduling-policy priority


def _priorities(requests: list[TimedRequest], rng: random.Random) -> None:
    """`priority` on a share of the requests: a later request of a lower value overtakes (and, when KV blocks run
    out, preempts) an earlier one under `--scheduling-policy priority`; the output must not change."""
    for req in requests:
        if rng.random() < PRIORITY_SHARE:
            req.params["priority"] = rng.choice(PRIORITIES)
            req.features.append("priority")


TIMEOUT_SHARE = 0.3


def _timeouts(requests: list[TimedRequest], rng: random.Random) -> None:
    """A client that gives up: a share of the streaming requests is closed 20-1500 ms after it was sent, whatever it
    got (before its first token too: while it waits for KV, a grammar or a slot); compared on what it got."""
    for req in requests:
        if rng.random() < TIMEOUT_SHARE and req.stream and req.role not in ("w", "bg"):
            req.abort_after_ms = rng.randint(20, 1500)
            req.features.append("client_timeout")


LORA_SHARE = 0.5


def _adapters(requests: list[TimedRequest], adapters: tuple[str, ...], rng: random.Random) -> None:
    """A LoRA adapter as the `model` of a share of the requests (the rest ask for the base model): requests of
    different adapters share steps, and with more adapters than `--max-loras` some wait for a slot; every server
    serves the same adapters, so the output must not change."""
    for req in requests:
        if rng.random() < LORA_SHARE:
            req.params["model"] = rng.choice(adapters)
            req.features.append("lora")


CONTROL_SHARE = 0.5
CONTROL_ACTIONS = (
    "pause",
    "pause_wait",
    "pause_abort",
    "reset_prefix_cache",
    "reset_running",
    "reset_running",
    "reset_external",
)


def _controls(
    requests: list[TimedRequest], rng: random.Random, actions: tuple[str, ...] = CONTROL_ACTIONS
) -> list[EngineControl]:
    """One or two engine control calls in half the cases, made once a streaming request decodes (mid-batch, beside
    drafts) or at a start offset."""
    if rng.random() >= CONTROL_SHARE:
        return []
    streaming = [r.role for r in requests if r.role != "w" and r.stream]
    # mode=wait returns once the running requests finish: not beside a request that runs until the others are done
    waits = not any(r.until_others_done for r in requests)
    out = []
    for _ in range(rng.choice((1, 1, 2))):
        action = rng.choice(actions)
        if action == "pause_wait" and not waits:
            action = "pause"
        after = rng.choice(streaming) if streaming and rng.random() < 0.8 else None
        hold = rng.randint(20, 400) if action.startswith("pause") else 0
        out.append(EngineControl(action=action, after=after, start_ms=rng.randint(0, 150), hold_ms=hold))
    return out


PERIODIC_SHARE = 0.3


def _periodic(requests: list[TimedRequest], rng: random.Random) -> None:
    """Turn some prompts into repeats of their own first 2-12 tokens (same length). Drawn from a stream of its own,
    so every other choice of every seed stays what it was; warm and shared-prefix prompts (their prefix is the
    point) and chat requests (messages, not ids) are left alone."""
    for req in requests:
        draw, period = rng.random(), rng.randint(2, 12)
        ids = req.prompt_token_ids
        if draw >= PERIODIC_SHARE or req.role == "w" or "shared_prefix" in req.features or len(ids) < 2 * period:
            continue
        req.prompt_token_ids = [ids[i % period] for i in range(len(ids))]
        req.features.append(f"periodic={period}")


def _background(ctx: GenContext, rng: random.Random, seed: int, index: int) -> TimedRequest:
    """A long streaming request sent first (batch index 0) that the others join; closed once they are done, so
    every feature of the case also runs at non-zero batch rows in steps beside another request's drafts."""
    ids = ctx.book.ids(f"fuzz-{seed}-{index}-bg", rng.randint(4, 40))
    params = _greedy(ctx, max(1, min(512, ctx.max_model_len - len(ids) - 1)))
    feats = ["background"]
    if rng.random() < 0.5:
        feats += _params(ctx, rng, params, "completions")
        for k in ("n", "prompt_logprobs", "bad_words", "stop", "stop_token_ids", "min_tokens"):
            params.pop(k, None)  # it must keep running until the others are done
        params["ignore_eos"] = True
        feats = [f for f in feats if f not in ("n", "prompt_logprobs", "bad_words", "stop", "stop_token_ids",
                                               "min_tokens")]  # fmt: skip
    return TimedRequest(role="bg", prompt_token_ids=ids, params=params, features=feats, until_others_done=True)


def _on(ctx: GenContext, rng: random.Random, feature: str, p: float) -> bool:
    return feature in ctx.features and rng.random() < p


def _length(ctx: GenContext, rng: random.Random) -> int:
    """Prompt lengths around block and chunk boundaries, plus short ones."""
    b, k = ctx.block_size, ctx.spec_tokens
    pick = rng.random()
    if pick < 0.25:
        return rng.randint(4, 40)
    unit = ctx.token_budget if (ctx.token_budget and pick < 0.45) else b
    base = unit * rng.randint(1, 3)
    return max(2, base + rng.randint(-2, k + 2))


def _warm(ctx: GenContext, rng: random.Random, seed: int, index: int) -> TimedRequest:
    length = ctx.block_size * rng.randint(1, 3) + rng.randint(0, ctx.block_size - 1)
    ids = ctx.book.ids(f"fuzz-{seed}-{index}-warm", length)
    return TimedRequest(role="w", prompt_token_ids=ids, params=_greedy(ctx, 1), stream=False, features=["warm"])


def _greedy(ctx: GenContext, max_tokens: int) -> dict[str, Any]:
    return {"max_tokens": max_tokens, "temperature": 0.0, "logprobs": ctx.logprobs, "ignore_eos": True}


def _prompt(ctx: GenContext, rng: random.Random, key: str, warm: TimedRequest | None) -> tuple[list[int], list[str]]:
    if warm is not None and rng.random() < 0.8:
        w = warm.prompt_token_ids
        blocks = len(w) // ctx.block_size
        offset = ctx.block_size * rng.randint(1, max(1, blocks)) if rng.random() < 0.6 else rng.randint(1, len(w))
        offset = min(offset, len(w))
        tail = ctx.book.ids(key + "-tail", rng.randint(1, ctx.spec_tokens + 2))
        if tail and offset < len(w) and tail[0] == w[offset]:
            tail[0] = next(t for t in ctx.vocab if t != w[offset])
        return [*w[:offset], *tail], ["shared_prefix", f"prefix_offset_mod_block={offset % ctx.block_size}"]
    if _on(ctx, rng, "near_max_model_len", 0.05):
        length = ctx.max_model_len - rng.randint(1, ctx.spec_tokens + 3)
        return ctx.book.ids(key, max(2, length)), ["near_max_model_len"]
    return ctx.book.ids(key, _length(ctx, rng)), []


def _request(
    ctx: GenContext,
    rng: random.Random,
    seed: int,
    index: int,
    role: str,
    warm: TimedRequest | None,
    earlier: list[TimedRequest],
) -> TimedRequest:
    key = f"fuzz-{seed}-{index}-{role}"
    prompt, feats = _prompt(ctx, rng, key, warm)
    room = ctx.max_model_len - len(prompt)
    max_tokens = rng.randint(1, ctx.spec_tokens + 2) if _on(ctx, rng, "short_max_tokens", 0.25) else ctx.max_tokens
    max_tokens = max(1, min(max_tokens, room))
    params = _greedy(ctx, max_tokens)
    feats += _params(ctx, rng, params, "completions")
    req = TimedRequest(role=role, prompt_token_ids=prompt, params=params, features=feats)
    for w in params.get("bad_words") or []:
        req.banned_sequences += banned_sequences(ctx.book.tokenize, w)
    if "derived" in ctx.features:
        req.derive = draw_derived(rng, ctx.features)
        req.features += [f"derived:{k}" for k in req.derive]
    if _on(ctx, rng, "structured", 0.14):
        _structured(ctx, rng, req)
    elif _on(ctx, rng, "tools", 0.08) and ctx.space.chat:
        _chat_tools(ctx, rng, req, key)
    _timing(ctx, rng, req, earlier, warm)
    return req


def _timing(ctx: GenContext, rng: random.Random, req: TimedRequest, earlier: list[TimedRequest], warm: Any) -> None:
    others = [r for r in earlier if r.role != "w" and r.stream]
    pick = rng.random()
    if others and pick < 0.35:
        req.after = rng.choice(others).role  # joins a request that is decoding: a mixed step
    elif pick < 0.6:
        req.start_ms = rng.randint(0, 400)
    if req.params.get("n", 1) > 1 or req.params.get("prompt_logprobs") is not None:
        req.stream = False  # vLLM answers prompt_logprobs only without streaming; n > 1 is read whole
    if req.stream and _on(ctx, rng, "abort", 0.08):
        req.abort_after_tokens = rng.randint(1, max(1, int(req.params["max_tokens"]) - 1))
        req.features.append("abort")


def _params(ctx: GenContext, rng: random.Random, p: dict[str, Any], endpoint: str) -> list[str]:
    """Draw sampling parameters (only fields the served build declares); return the feature tags."""
    feats: list[str] = []
    has = lambda name: ctx.space.accepts(endpoint, name)  # noqa: E731
    vocab = ctx.vocab
    if _on(ctx, rng, "penalties", 0.2) and has("presence_penalty"):
        p["presence_penalty"] = round(rng.uniform(-1.0, 2.0), 2)
        p["frequency_penalty"] = round(rng.uniform(-1.0, 2.0), 2)
        feats.append("penalties")
    if _on(ctx, rng, "repetition_penalty", 0.15) and has("repetition_penalty"):
        p["repetition_penalty"] = round(rng.uniform(0.8, 2.0), 2)
        feats.append("repetition_penalty")
    if _on(ctx, rng, "min_tokens", 0.2) and has("min_tokens"):
        p["min_tokens"] = rng.randint(1, max(1, int(p["max_tokens"])))
        # at most half the vocabulary seen: a mask of every token leaves nothing to sample
        p["stop_token_ids"] = rng.sample(vocab, min(len(vocab) // 2, rng.choice((4, 32, 128, 256))))
        p["ignore_eos"] = rng.random() < 0.5
        feats += ["min_tokens", "stop_token_ids"]
    elif _on(ctx, rng, "stop_token_ids", 0.12) and has("stop_token_ids"):
        p["stop_token_ids"] = rng.sample(vocab, min(len(vocab) // 2, rng.choice((1, 8, 64))))
        feats.append("stop_token_ids")
    if _on(ctx, rng, "allowed_token_ids", 0.1) and has("allowed_token_ids"):
        p["allowed_token_ids"] = sorted(rng.sample(vocab, min(len(vocab), rng.choice((2, 16, 128)))))
        feats.append("allowed_token_ids")
    if _on(ctx, rng, "logit_bias", 0.06) and has("logit_bias"):
        p["logit_bias"] = {str(t): round(rng.uniform(-5, 5), 2) for t in rng.sample(vocab, 4)}
        feats.append("logit_bias")
    if _on(ctx, rng, "bad_words", 0.12) and has("bad_words"):
        p["bad_words"] = rng.sample(WORDS, rng.randint(1, 4))
        feats.append("bad_words")
    if _on(ctx, rng, "stop", 0.12) and has("stop"):
        p["stop"] = rng.sample(WORDS, rng.randint(1, 3))
        p["include_stop_str_in_output"] = rng.random() < 0.3
        feats.append("stop")
    # top-k/top-p on sampled rows draw from their own stream (seeded by the main stream's state, which is not
    # advanced), so that every other choice of every seed stays what it was before the feature joined the defaults.
    # The state's words change only every 624 words drawn; its last entry, the position, tells requests apart.
    # The request's seed for sampled requests has a stream of its own, keyed the same way.
    state = rng.getstate()[1]
    key = f"{state[:8]}:{state[-1]}"
    feats += _sampling(
        ctx, rng, p, has, random.Random(f"specqual-fuzz-topk:{key}"), random.Random(f"specqual-fuzz-seed:{key}")
    )
    if _on(ctx, rng, "prompt_logprobs", 0.08) and has("prompt_logprobs"):
        p["prompt_logprobs"] = rng.randint(0, 3)
        feats.append("prompt_logprobs")
    if _on(ctx, rng, "generic", 0.1):
        feats += _generic(ctx, rng, p, endpoint)
    return feats


def _sampling(
    ctx: GenContext, rng: random.Random, p: dict[str, Any], has: Any, side: random.Random, seeds: random.Random
) -> list[str]:
    feats: list[str] = []
    if _on(ctx, rng, "top_k_p", 0.15) and has("top_k"):
        p["top_k"] = rng.choice((1, 2, 5, 20, -1))
        p["top_p"] = rng.choice((0.5, 0.9, 1.0))
        feats.append("top_k_p")
    if _on(ctx, rng, "min_p", 0.05) and has("min_p"):
        p["min_p"] = rng.choice((0.05, 0.2))
        feats.append("min_p")
    if _on(ctx, rng, "seed", 0.15) and has("seed"):
        p["seed"] = rng.randint(0, 2**31 - 1)
        feats.append("seed")
    if _on(ctx, rng, "sampled", 0.12):
        p["temperature"] = rng.choice((0.5, 1.0, 1.5))
        feats.append("sampled")
        # top-k/top-p on draft rows (and the support oracle's check)
        if _on(ctx, side, "sampled_top_k", 0.6) and has("top_k"):
            p.setdefault("top_k", side.choice((2, 5, 40)))
            if side.random() < 0.4:
                p.setdefault("top_p", side.choice((0.7, 0.9)))
            feats.append("sampled_top_k")
        else:
            p.pop("top_k", None)
            p.pop("top_p", None)
        # A per-request generator in the sampler (vLLM: RANDOM_SEED), from a stream of its own: turning the feature
        # on or off (it is off on CPU by default) changes no other choice of the case.
        if _on(ctx, seeds, "seeded_sampled", 0.5) and has("seed"):
            p["seed"] = seeds.randint(0, 2**31 - 1)
            feats.append("seeded_sampled")
        else:
            p.pop("seed", None)
    if _on(ctx, rng, "n", 0.08) and has("n"):
        p["n"] = rng.randint(2, 3)
        feats.append("n")
        if "sampled" not in feats:  # vLLM refuses n > 1 with greedy sampling: make it sampled, and keep it apart
            p["temperature"] = 1.0  # from the features whose crashes can be excluded
            feats.append("sampled")
            if "seeded_sampled" not in ctx.features:
                p.pop("seed", None)
            if "sampled_top_k" not in ctx.features:
                p.pop("top_k", None)
                p.pop("top_p", None)
    return feats


def _generic(ctx: GenContext, rng: random.Random, p: dict[str, Any], endpoint: str) -> list[str]:
    """One field of no known meaning, drawn by its declared type (new fields of a new release get sent too)."""
    fields = ctx.space.generic(endpoint)
    if not fields:
        return []
    f = rng.choice(fields)
    if f.kind == "bool":
        p[f.name] = not bool(f.default)
    else:
        lo = f.minimum if f.minimum is not None else 0
        hi = f.maximum if f.maximum is not None else (lo + 4)
        p[f.name] = rng.randint(int(lo), int(min(hi, lo + 8))) if f.kind == "int" else round(rng.uniform(lo, hi), 3)
    return [f"generic:{f.name}"]


def _structured(ctx: GenContext, rng: random.Random, req: TimedRequest) -> None:
    kind = rng.choice(("json", "regex", "choice", "grammar", "response_format", "derived_regex", "derived_regex"))
    p = req.params
    p.pop("allowed_token_ids", None)
    p.pop("bad_words", None)
    req.derive.pop("bad_words", None)
    p["max_tokens"] = max(int(p["max_tokens"]), 24)
    p["ignore_eos"] = False
    if kind == "derived_regex" and "derived" in ctx.features:
        # the model's own greedy text up to a drawn token, then a tail it does not write: drafts cross the edge
        req.derive["regex"] = {"at": round(rng.uniform(0.05, 0.6), 3), "tail": rng.choice(REGEX_TAILS)}
        p["max_tokens"] = max(int(p["max_tokens"]), 32)
    elif kind == "regex" and rng.random() < 0.5 and ctx.space.accepts("completions", "structured_outputs"):
        p["structured_outputs"] = {"regex": rng.choice(OPEN_REGEXES)}  # wide classes: many drafts are legal
    elif kind == "response_format" and ctx.space.accepts("completions", "response_format"):
        p["response_format"] = {"type": "json_schema", "json_schema": {"name": "answer", "schema": JSON_SCHEMA}}
    elif ctx.space.accepts("completions", "structured_outputs"):
        value: Any = {
            "json": JSON_SCHEMA,
            "regex": REGEX,
            "choice": ["alpha beta", "gamma", "delta state"],
            "grammar": GRAMMAR,
        }.get(kind, JSON_SCHEMA)
        p["structured_outputs"] = {kind if kind in ("regex", "choice", "grammar") else "json": value}
    req.features.append(f"structured:{kind}")


def _reasoning(ctx: GenContext, req: TimedRequest, key: str) -> None:
    """With a reasoning parser on the server, vLLM applies a structured request's grammar only once reasoning has
    ended, and looks for the end inside the draft tokens (StructuredOutputManager._get_constraint_bounds). The
    prompt decides where reasoning stands: `closed` (it ends with `<think> ... </think>`: the grammar applies from
    the first token) or `open` (it ends with `<think>`: the grammar waits for the model's `</think>`, and until
    then the output is free). Drawn from a stream of its own, so the rest of the case is the same without a parser."""
    side = random.Random(f"specqual-fuzz-reason:{key}")
    start, end = ctx.book.tokenize(REASONING_START), ctx.book.tokenize(REASONING_END)
    how = side.choice(("closed", "open"))
    tail = start + (ctx.book.ids(key + "-thought", side.randint(1, 12)) + end if how == "closed" else [])
    _end_prompt_with(ctx, req, tail)
    req.features.append(f"reasoning:{how}")


def _end_prompt_with(ctx: GenContext, req: TimedRequest, tail: list[int]) -> None:
    """The prompt ends with `tail`, its head cut so that prompt and output still fit max_model_len."""
    keep = max(1, ctx.max_model_len - int(req.params["max_tokens"]) - len(tail))
    req.prompt_token_ids = req.prompt_token_ids[-keep:] + tail


THINKING_BUDGET_SHARE = 0.35
# Constraints that can forbid the `</think>` the budget forces: where they meet, the output is undefined.
_BUDGET_CONFLICTS = ("bad_words", "allowed_token_ids", "logit_bias", "structured_outputs", "response_format")


def _thinking_budget(ctx: GenContext, req: TimedRequest, key: str) -> None:
    """`thinking_token_budget` (vLLM's ThinkingBudgetState, a logits processor with its own speculative path: it
    forces the reasoning end once a request has thought that many tokens, counting drafts): some completions
    requests end their prompt with `<think>` (reasoning open, if it is not already) and get a budget of 0-10
    tokens, so the forced `</think>` falls inside a speculative step. Drawn from a stream of its own, so the rest of
    the case is unchanged; the `thinking_budget` oracle checks where the end came."""
    side = random.Random(f"specqual-fuzz-budget:{key}")
    if side.random() >= THINKING_BUDGET_SHARE or req.endpoint != "completions" or req.role == "w":
        return
    if not ctx.space.accepts("completions", "thinking_token_budget") or "reasoning:closed" in req.features:
        return
    if any(k in req.params for k in _BUDGET_CONFLICTS) or req.derive or req.abort_after_tokens is not None:
        return
    if "reasoning:open" not in req.features:
        _end_prompt_with(ctx, req, ctx.book.tokenize(REASONING_START))
    req.params["thinking_token_budget"] = side.randint(0, 10)
    req.reasoning_end_ids = ctx.book.tokenize(REASONING_END)
    req.features.append("thinking_budget")


def _chat_tools(ctx: GenContext, rng: random.Random, req: TimedRequest, key: str) -> None:
    choice: Any = rng.choice(("auto", "required", "named"))
    if choice == "named":
        choice = {"type": "function", "function": {"name": "bash"}}
    req.endpoint = "chat"
    req.messages = [
        {"role": "system", "content": "You are a coding agent. Use the bash tool."},
        {"role": "user", "content": ctx.book.text(key + "-chat", rng.randint(8, 80))},
    ]
    req.prompt_token_ids = []
    p = req.params
    for k in ("prompt_logprobs", "allowed_token_ids"):
        p.pop(k, None)
    p["tools"] = [TOOL]
    p["tool_choice"] = choice
    p["max_tokens"] = max(int(p["max_tokens"]), 32)
    req.features.append(f"tools:{choice if isinstance(choice, str) else 'named'}")
