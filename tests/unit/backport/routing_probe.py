"""Run inside a vLLM environment: how does a (patched or pristine) 0.26.0 Mamba builder route each row?

Usage: python routing_probe.py DIR  (DIR holds mamba_attn.py and mamba2_attn.py of vLLM 0.26.0, patched or not)

Loads the two files as standalone modules (the environment's own vLLM only provides their imports), calls
`_compute_common_metadata` on a minimal metadata object and stops it right after the prefill/decode routing by
replacing the module's `split_decodes_and_prefills` with a recorder that raises. Prints one JSON object:
`{"cases": {name: is_prefilling flags as split_decodes_and_prefills received them}, "mamba2_forwards": [...]}`.
Standard library, torch and vllm only: this file never imports specqual.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import sys
import types
from pathlib import Path
from typing import Any

import torch

K = 5  # MTP draft tokens: a padded one-token tail is K + 1 rows long


class Stop(Exception):
    """Raised by the recorder: routing is done, nothing after it matters here."""


@dataclasses.dataclass
class MiniMetadata:
    """The fields `_compute_common_metadata` reads before it splits decodes from prefills."""

    num_reqs: int
    is_prefilling: torch.Tensor
    seq_lens_cpu_upper_bound: torch.Tensor
    query_start_loc_cpu: torch.Tensor

    def replace(self, **kwargs: Any) -> MiniMetadata:
        return dataclasses.replace(self, **kwargs)


def load(name: str, path: Path) -> types.ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def rows(*reqs: tuple[int, int, bool, int]) -> tuple[MiniMetadata, torch.Tensor]:
    """Rows of (query_len, seq_len, is_prefilling, draft count); returns metadata and draft counts (+1 pad row)."""
    qlens = [q for q, _, _, _ in reqs]
    starts = [0]
    for q in qlens:
        starts.append(starts[-1] + q)
    meta = MiniMetadata(
        num_reqs=len(reqs),
        is_prefilling=torch.tensor([p for _, _, p, _ in reqs], dtype=torch.bool),
        seq_lens_cpu_upper_bound=torch.tensor([s for _, s, _, _ in reqs], dtype=torch.int32),
        query_start_loc_cpu=torch.tensor(starts, dtype=torch.int32),
    )
    # The model runner passes num_reqs_padded entries; the padding rows are -1.
    drafts = torch.tensor([d for _, _, _, d in reqs] + [-1], dtype=torch.int32)
    return meta, drafts


CASES: dict[str, tuple[tuple[int, int, bool, int], ...]] = {
    # R1 decodes K + 1 tokens; R2 is a 128-token prefix hit plus a one-token tail padded to K + 1 rows.
    "padded_prompt_tail": ((K + 1, 300, False, K), (K + 1, 128 + K + 1, True, K)),
    # A prefill chunk after a prefix hit (prior state, many tokens, no drafts) stays a prefill.
    "multi_token_prefill": ((K + 1, 300, False, K), (32, 128 + 32, True, -1)),
    # A prefill of exactly K + 1 prompt tokens with prior state but no drafts stays a prefill.
    "k_plus_one_token_prefill_no_drafts": ((K + 1, 128 + K + 1, True, -1),),
    # A first prompt chunk has no prior state: it stays a prefill even if its length matches K + 1.
    "stateless_first_chunk": ((K + 1, 300, False, K), (K + 1, K + 1, True, K)),
    "stateless_long_first_chunk": ((160, 160, True, -1),),
    # 0.26.0 already moves an unpadded one-token tail with prior state to the decode path (NIXL h(N-1)->N).
    "unpadded_one_token_tail": ((K + 1, 300, False, K), (1, 129, True, -1)),
}


def route(mod: types.ModuleType, case: tuple[tuple[int, int, bool, int], ...], with_drafts: bool) -> list[bool]:
    seen: list[list[bool]] = []

    def recorder(meta: MiniMetadata, **_: Any) -> None:
        seen.append([bool(x) for x in meta.is_prefilling.tolist()])
        raise Stop

    mod.split_decodes_and_prefills = recorder
    meta, drafts = rows(*case)
    fake_self = types.SimpleNamespace(reorder_batch_threshold=K + 1)
    kwargs: dict[str, Any] = {"num_accepted_tokens": torch.ones(len(case), dtype=torch.int32)}
    if with_drafts:
        kwargs["num_decode_draft_tokens_cpu"] = drafts
    try:
        mod.BaseMambaAttentionMetadataBuilder._compute_common_metadata(fake_self, meta, **kwargs)
    except Stop:
        return seen[0]
    except TypeError as e:  # the pristine builder has no num_decode_draft_tokens_cpu keyword
        raise SystemExit(f"routing call failed: {e}") from e
    raise SystemExit("split_decodes_and_prefills was never reached")


def mamba2_forwards(mod2: types.ModuleType) -> list[str]:
    """Keyword names `Mamba2AttentionMetadataBuilder.build` passes on to `_compute_common_metadata`."""
    got: list[str] = []

    def record(_meta: Any, **kwargs: Any) -> None:
        got.extend(sorted(k for k, v in kwargs.items() if v is not None))
        raise Stop

    fake_self = types.SimpleNamespace(_compute_common_metadata=record)
    meta, drafts = rows((K + 1, 300, False, K))
    one = torch.ones(1, dtype=torch.int32)
    try:
        mod2.Mamba2AttentionMetadataBuilder.build(
            fake_self, 0, meta, num_accepted_tokens=one, prev_last_scheduled_idx=one, num_decode_draft_tokens_cpu=drafts
        )
    except Stop:
        return got
    raise SystemExit("_compute_common_metadata was never reached")


def main(src: Path) -> None:
    mod = load("specqual_v026_mamba_attn", src / "mamba_attn.py")
    compute = mod.BaseMambaAttentionMetadataBuilder._compute_common_metadata
    with_drafts = "num_decode_draft_tokens_cpu" in compute.__code__.co_varnames
    cases = {name: route(mod, case, with_drafts) for name, case in CASES.items()}
    # mamba2_attn imports the builder from vllm's mamba_attn: give it the 0.26.0 one under that name.
    sys.modules["vllm.v1.attention.backends.mamba_attn"] = mod
    mod2 = load("specqual_v026_mamba2_attn", src / "mamba2_attn.py")
    print(json.dumps({"accepts_draft_counts": with_drafts, "cases": cases, "mamba2_forwards": mamba2_forwards(mod2)}))


if __name__ == "__main__":
    main(Path(sys.argv[1]))
