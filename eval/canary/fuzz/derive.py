"""Output-guided parameters: a ban, a stop or a grammar that never meets the model's output tests nothing.

A generated request may carry `derive` entries instead of concrete values for bad words, stop strings, stop token
ids and a regex. `resolve(case, base_url, model)` runs each such request once, greedy and plain (a *pilot*: the
same prompt and `max_tokens`, without the derived parameters), on one server, and fills the parameters from the
pilot's output at the drawn relative position p:
- `bad_words`: the text of the token at p (a word that tokenizes back to that token), so the ban must act there;
- `stop`: a string that first completes at the token at p (ending at its end, or inside it), so the stop ends the
  output mid-step when p is not the step's last token;
- `stop_token_ids`: the id of the token at p;
- `regex`: the pilot's text up to p literally, then a tail the model does not write on its own: drafts agree with
  the grammar up to p and must be masked after it (the grammar bitmask on every draft row).
The resolved case has concrete parameters and no `derive` entries; every server then gets exactly the same
requests. In the canary the first cohort that runs a case resolves it and stores it (`<run>/fuzz-cases/`), so
every cohort of a run sends the same resolved case. Deterministic for greedy pilots on the same build.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import httpx

from eval.canary.fuzz.case import Case, TimedRequest
from eval.canary.fuzz.execute import Outcome, send
from store.record_io import read_record, write_record

CASES_DIR = "fuzz-cases"
OPEN_REGEX = "[a-z ]{8,40}"
REGEX_TAILS = ("[0-9]{2,6}", "( alpha| beta| gamma){1,3}", "[XYZ]{1,4}", "(;|:)[0-9]{1,3}")
META = set(".^$*+?()[]{}|\\/")


def regex_literal(text: str) -> str | None:
    """`text` as a regex that matches exactly it (None: a character a grammar backend may not take)."""
    out = []
    for ch in text:
        if ch == "\n":
            out.append("\\n")
        elif (not ch.isprintable() and ch != " ") or ch == "\ufffd":  # U+FFFD: a token's partial UTF-8 bytes
            return None
        elif ch in META:
            out.append("\\" + ch)
        else:
            out.append(ch)
    return "".join(out)


class _Tok:
    def __init__(self, http: httpx.AsyncClient, model: str) -> None:
        self.http, self.model = http, model

    async def detok(self, ids: list[int]) -> str:
        if not ids:
            return ""
        r = await self.http.post("/detokenize", json={"model": self.model, "tokens": ids})
        r.raise_for_status()
        return str(r.json().get("prompt") or "")

    async def tok(self, text: str) -> list[int]:
        body = {"model": self.model, "prompt": text, "add_special_tokens": False}
        r = await self.http.post("/tokenize", json=body)
        r.raise_for_status()
        return [int(t) for t in r.json().get("tokens") or []]


def _pilot(req: TimedRequest) -> TimedRequest:
    drop = {"bad_words", "stop", "stop_token_ids", "min_tokens", "structured_outputs", "response_format", "n"}
    drop |= {"logprobs", "prompt_logprobs", "include_stop_str_in_output", "seed"}
    params = {k: v for k, v in req.params.items() if k not in drop}
    params.update(temperature=0.0, ignore_eos=True)
    return req.model_copy(update={"role": req.role + "-pilot", "params": params, "stream": False, "derive": {},
                                  "abort_after_tokens": None, "abort_after_ms": None, "after": None,
                                  "start_ms": 0})  # fmt: skip


def _at(draw: dict[str, Any], n: int) -> int:
    return min(max(1, int(float(draw.get("at", 0.5)) * n)), n - 1)


async def _bad_word(tok: _Tok, ids: list[int], draw: dict[str, Any]) -> tuple[str, list[list[int]]] | None:
    start = _at(draw, len(ids))
    for p in [*range(start, len(ids)), *range(1, start)]:
        word = (await tok.detok([ids[p]])).strip()
        if not word:
            continue
        plain, spaced = await tok.tok(word), await tok.tok(" " + word)
        seqs = [plain, spaced] if plain and spaced and spaced[0] != plain[0] and len(spaced) == len(plain) else [plain]
        if [ids[p]] in seqs:  # the sequences vLLM bans (eval/canary/fuzz/oracles.py banned_sequences)
            return word, seqs
    return None


async def _stop(tok: _Tok, ids: list[int], draw: dict[str, Any]) -> str | None:
    p = _at(draw, len(ids))
    before, upto = await tok.detok(ids[:p]), await tok.detok(ids[: p + 1])
    if not upto.startswith(before) or len(upto) == len(before):
        return None
    inside = int(draw.get("inside", 0))  # characters cut from the token's end: a stop that ends inside it
    end = max(len(before) + 1, len(upto) - min(inside, len(upto) - len(before) - 1))
    for length in range(int(draw.get("chars", 3)), end + 1):
        stop = upto[max(0, end - length) : end]
        if stop.strip() and "\ufffd" not in stop and upto.find(stop) == end - len(stop):
            return stop
    return None


async def _regex(tok: _Tok, ids: list[int], draw: dict[str, Any]) -> str | None:
    """The pilot's text up to the token at p (or the last earlier token whose prefix a grammar can spell), then a
    tail the model does not write."""
    for p in range(_at(draw, len(ids)), -1, -1):
        lit = regex_literal(await tok.detok(ids[: p + 1]))
        if lit:
            return lit + str(draw.get("tail") or REGEX_TAILS[0])
    return None


async def resolve_request(http: httpx.AsyncClient, req: TimedRequest, model: str) -> TimedRequest:
    """The request with its derived parameters filled from a pilot run (left out where the pilot gives nothing)."""
    if not req.derive:
        return req
    params, banned = dict(req.params), list(req.banned_sequences)
    out = await send(http, _pilot(req), model, Outcome())
    ids = out.choices[0].ids if out.choices and out.error is None and out.refused is None else []
    tok = _Tok(http, model)
    if len(ids) >= 2:
        d = req.derive
        try:
            if "bad_words" in d and (found := await _bad_word(tok, ids, d["bad_words"])):
                params["bad_words"] = [*(params.get("bad_words") or []), found[0]]
                banned += found[1]
            if "stop" in d and (stop := await _stop(tok, ids, d["stop"])):
                params["stop"] = [*(params.get("stop") or []), stop]
                params["include_stop_str_in_output"] = bool(d["stop"].get("include"))
            if "stop_token_ids" in d:
                stop_id = ids[_at(d["stop_token_ids"], len(ids))]
                params["stop_token_ids"] = [*(params.get("stop_token_ids") or []), stop_id]
            if "regex" in d:
                rx = await _regex(tok, ids, d["regex"])
                params["structured_outputs"] = {"regex": rx or OPEN_REGEX}  # no spellable prefix: an open class
                params["ignore_eos"] = False
        except (httpx.HTTPError, ValueError, KeyError):
            pass  # a server without /tokenize: the request keeps its drawn parameters only
    return req.model_copy(update={"params": params, "banned_sequences": banned, "derive": {}})


async def resolve(case: Case, base_url: str, model: str, timeout_s: float = 600) -> Case:
    """`case` with every derived parameter filled from pilots on `base_url` (unchanged when nothing is derived)."""
    if not any(r.derive for r in case.requests):
        return case
    async with httpx.AsyncClient(base_url=base_url.rstrip("/"), timeout=timeout_s) as http:
        reqs = [await resolve_request(http, r, model) for r in case.requests]
    return case.model_copy(update={"requests": reqs})


def draw_derived(rng: random.Random, features: tuple[str, ...], p: float = 0.35) -> dict[str, dict[str, Any]]:
    """What a generated request derives from its pilot (the generator calls this; the draws are seeded)."""
    d: dict[str, dict[str, Any]] = {}
    if "bad_words" in features and rng.random() < p * 0.6:
        d["bad_words"] = {"at": round(rng.random(), 3)}
    if "stop" in features and rng.random() < p * 0.6:
        d["stop"] = {"at": round(rng.random(), 3), "chars": rng.randint(1, 6), "inside": rng.choice((0, 0, 1, 2)),
                     "include": rng.random() < 0.3}  # fmt: skip
    if "stop_token_ids" in features and rng.random() < p * 0.3:
        d["stop_token_ids"] = {"at": round(rng.random(), 3)}
    return d


def stored(run_path: Path, index: int) -> Case | None:
    path = Path(run_path) / CASES_DIR / f"fuzz-{index:03d}.json"
    if not path.is_file():
        return None
    return read_record(path, Case)


def store(run_path: Path, case: Case) -> None:
    folder = Path(run_path) / CASES_DIR
    folder.mkdir(parents=True, exist_ok=True)
    write_record(folder / f"{case.case_id}.json", case)
