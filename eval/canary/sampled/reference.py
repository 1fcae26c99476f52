"""Re-scoring on the reference stack: the raw next-token logprobs of the whole vocabulary at every sampled position.

The reference server (speculation off, started with `max_logprobs: -1`) gets prompt + continuation as one prompt
with `prompt_logprobs` (-1, or the top k with a "rest" bucket: `judge`): teacher forcing, so position t's
logprobs are the model's distribution given exactly
the prefix the cohort's server had when it sampled token t. Prompt logprobs are raw (before temperature and masks)
in vLLM 0.32 whatever `logprobs_mode` says; `transforms` re-applies the request's transforms.
"""

from __future__ import annotations

import httpx
import numpy as np


class ReferenceError(Exception):
    """The reference server did not answer with full-vocabulary prompt logprobs."""


PromptLogprobs = list[dict[str, dict[str, float | None]] | None]


def logprob_matrix(prompt_logprobs: PromptLogprobs, start: int, vocab: int) -> np.ndarray:
    """Rows start.. of vLLM's `prompt_logprobs` as a [positions, vocab] array (-inf where a token is missing)."""
    rows = prompt_logprobs[start:]
    out = np.full((len(rows), vocab), -np.inf)
    for i, row in enumerate(rows):
        if row is None:
            raise ReferenceError(f"no prompt logprobs at position {start + i}")
        for tok, entry in row.items():
            lp = entry.get("logprob") if isinstance(entry, dict) else entry
            if lp is not None:
                out[i, int(str(tok).removeprefix("token_id:"))] = float(lp)
    return out


def _body(model: str, prompt: list[int], output: list[int], k: int) -> dict[str, object]:
    return {"model": model, "prompt": prompt + output, "max_tokens": 1, "temperature": 0.0, "prompt_logprobs": k}


def _parse(resp: httpx.Response, prompt: list[int], output: list[int], vocab: int) -> np.ndarray:
    if resp.status_code != 200:
        raise ReferenceError(f"HTTP {resp.status_code}: {resp.text[:300]}")
    plp = resp.json()["choices"][0].get("prompt_logprobs")
    if not plp or len(plp) != len(prompt) + len(output):
        raise ReferenceError("the reference returned no prompt logprobs (is max_logprobs -1 on its server?)")
    return logprob_matrix(plp, len(prompt), vocab)


def keep_top(m: np.ndarray, k: int) -> np.ndarray:
    """Only the tokens strictly above each row's k-th value. vLLM adds the prompt token's own logprob to its top k,
    and a category set that depends on the sampled token would bias the PIT (the 'rest' bucket must hold every token
    outside the kept set). The k-th value is the distribution's, whatever was sampled; which of several tokens tied
    at it vLLM returned is not (a sampled token tied there comes back as an extra), so every tied token goes to the
    rest: at most one category fewer, and a set that depends on the distribution alone."""
    if k <= 0 or k >= m.shape[1]:
        return m
    kth = -np.sort(-m, axis=1)[:, k - 1 : k]
    return np.where(m > kth, m, -np.inf)


async def rescore(
    http: httpx.AsyncClient, model: str, prompt: list[int], output: list[int], vocab: int, k: int = -1
) -> np.ndarray:
    """[len(output), vocab] raw logprobs of each output position given everything before it (the top `k` of each
    row, -inf elsewhere; -1: all)."""
    resp = await http.post("/v1/completions", json=_body(model, prompt, output, k))
    return keep_top(_parse(resp, prompt, output, vocab), k)


def rescore_sync(
    http: httpx.Client, model: str, prompt: list[int], output: list[int], vocab: int, k: int = -1
) -> np.ndarray:
    """`rescore` for callers inside someone else's event loop (an oracle of the fuzzer)."""
    resp = http.post("/v1/completions", json=_body(model, prompt, output, k))
    return keep_top(_parse(resp, prompt, output, vocab), k)
