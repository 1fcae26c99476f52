"""The request's sampling transforms, re-applied to reference logprobs as vLLM 0.32 applies them.

vLLM's V1 sampler (and the rejection sampler's `apply_sampling_constraints` for draft rows) divides the float32
logits by the temperature, then masks with `apply_top_k_top_p` (v1/sample/ops/topk_topp_sampler.py):
- top-k keeps every logit >= the k-th largest (ties at the k-th value are kept);
- top-p sorts ascending, takes the softmax, and masks a token when the ascending cumulative sum up to and including
  it is <= 1 - p, never the largest;
and samples from the softmax of what is left. A raw logprob differs from the raw logit by one constant per
position, which every step above ignores, so the same steps on the reference's raw logprobs give the exact
distribution the server samples from (up to float rounding: float64 here, float32 there).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class SamplingParams:
    """The transforms of one request (temperature > 0: this module is for random sampling only)."""

    temperature: float = 1.0
    top_p: float = 1.0
    top_k: int | None = None

    def __post_init__(self) -> None:
        if not self.temperature > 0:
            raise ValueError("temperature must be > 0 (greedy requests are judged by the greedy canary)")
        if not 0 < self.top_p <= 1:
            raise ValueError("top_p must be in (0, 1]")

    def as_request(self) -> dict[str, float | int]:
        body: dict[str, float | int] = {"temperature": self.temperature, "top_p": self.top_p}
        if self.top_k is not None and self.top_k > 0:
            body["top_k"] = self.top_k
        return body


def processed_logits(raw: np.ndarray, params: SamplingParams) -> np.ndarray:
    """Tempered logits with -inf where top-k / top-p mask a token (one position, the full vocabulary)."""
    x = np.asarray(raw, dtype=np.float64) / params.temperature
    k = params.top_k
    if k is not None and 0 < k < x.size:
        kth = np.partition(x, x.size - k)[x.size - k]
        x = np.where(x < kth, -np.inf, x)
    if params.top_p < 1.0:
        order = np.argsort(x, kind="stable")  # ascending, as vLLM sorts
        srt = x[order]
        probs = np.exp(srt - srt[-1])
        probs /= probs.sum()
        mask = np.cumsum(probs) <= 1.0 - params.top_p
        mask[-1] = False
        srt = np.where(mask, -np.inf, srt)
        x = np.empty_like(srt)
        x[order] = srt
    return x


def processed_probs(raw: np.ndarray, params: SamplingParams) -> np.ndarray:
    """The distribution vLLM samples from at one position (zeros where masked)."""
    x = processed_logits(raw, params)
    p = np.exp(x - np.max(x))
    return p / p.sum()
