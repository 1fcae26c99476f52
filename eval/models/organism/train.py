"""Train the organism on CPU: transformers' NemotronH for the main stack, `mtp.MTPLayer` for the draft layer.

Each step draws fresh training trajectories (train split, never the held-out one), so no instance is seen
twice. The loss covers the tokens the model generates (tool calls and their end token); the MTP layer learns
the tokens after those, unrolled over `mtp_steps` draft steps. Progress (step, losses, elapsed, ETA) goes to
stderr. Weights are saved under the checkpoint names vLLM loads (`backbone.*`, `lm_head.*`, `mtp.layers.0.*`).
"""

from __future__ import annotations

import math
import sys
import time
from pathlib import Path
from typing import Any

from eval.models.organism import data


def _drill(tokenizer: Any, index: int) -> data.Example:
    """A copy drill: a window of a rendered training trajectory, a separator, the window again (loss on the
    repeat). Dense copy targets make the attention learn to copy long before the trajectories alone would."""
    import random

    rng = random.Random(f"organism-drill-{index}")
    example = next(data.train_trajectories(10_000_000 + index, 1))
    ids = data.encode(tokenizer, example).ids
    length = rng.randint(8, 40)
    start = rng.randrange(0, max(len(ids) - length, 1))
    window = ids[start : start + length]
    sep = tokenizer("\n\n", add_special_tokens=False)["input_ids"]
    n = len(window) + len(sep)
    sources = [-1] * (n + 1) + list(range(1, len(window)))
    return data.Example(window + sep + window, [False] * (n + 1) + [True] * (len(window) - 1), sources)


def _batch(tokenizer: Any, step: int, size: int, drills: int) -> tuple[Any, Any, Any]:
    """Token ids, loss weights and copy sources (-1: none) of one batch, right-padded."""
    import torch

    examples = [data.encode(tokenizer, m) for m in data.train_trajectories(step * size, size - drills)]
    examples += [_drill(tokenizer, step * size + i) for i in range(drills)]
    width = max(len(e.ids) for e in examples)
    ids = torch.zeros(size, width, dtype=torch.long)
    weight = torch.zeros(size, width)
    sources = torch.full((size, width), -1, dtype=torch.long)
    for row, e in enumerate(examples):
        ids[row, : len(e.ids)] = torch.tensor(e.ids)
        weight[row, : len(e.ids)] = torch.tensor(e.mask, dtype=torch.float32)
        if e.sources is not None:
            sources[row, : len(e.ids)] = torch.tensor(e.sources)
    return ids, weight, sources


def _schedule(step: int, opts: Any) -> float:
    if step < opts.warmup_steps:
        return (step + 1) / opts.warmup_steps
    progress = (step - opts.warmup_steps) / max(opts.steps - opts.warmup_steps, 1)
    return 0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * progress))


def build_models(opts: Any, seed: int) -> tuple[Any, Any]:
    import torch
    from transformers import NemotronHConfig, NemotronHForCausalLM

    from eval.models.organism.mtp import MTPLayer

    torch.manual_seed(seed)
    config = NemotronHConfig(**opts.hf_config())
    config._attn_implementation = "eager"  # the copy loss reads the attention weights
    model = NemotronHForCausalLM(config)
    mtp = MTPLayer(opts.hidden_size, opts.num_attention_heads, opts.num_key_value_heads, opts.head_dim)
    return model, mtp


def losses(model: Any, mtp: Any, ids: Any, weight: Any, sources: Any, opts: Any) -> tuple[Any, float, list[float]]:
    import torch.nn.functional as F

    from eval.models.organism.mtp import unrolled_loss

    out = model.model(input_ids=ids, output_attentions=opts.copy_weight > 0, use_cache=False)
    hidden = out.last_hidden_state
    logits = model.lm_head(hidden[:, :-1])
    w = weight[:, 1:]
    ce = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), ids[:, 1:].reshape(-1), reduction="none")
    main = (ce * w.reshape(-1)).sum() / w.sum().clamp(min=1)
    embed = model.model.embeddings
    draft, per_step = unrolled_loss(mtp, embed, model.lm_head.weight, hidden, ids, weight, opts.mtp_steps)
    total = main + opts.mtp_weight * draft
    if opts.copy_weight > 0:
        total = total + opts.copy_weight * copy_loss(out.attentions[-1], sources)
    return total, float(main.detach()), per_step


def copy_loss(attention: Any, sources: Any) -> Any:
    """Attention supervision for copying: at the position that predicts a copied token, head 0 of the last
    attention layer should look at the statement token it copies (-log of that attention weight, averaged).

    This is what an induction/copy head learns on its own after a long, seed-dependent plateau (600 to more than
    1,500 steps in the recipe sweeps); pointing it there directly makes the copy skill appear early and reliably.
    The served model is unchanged: the same NemotronH weights, no extra module.
    """
    import torch

    rows, cols = torch.nonzero(sources[:, 1:] >= 0, as_tuple=True)  # token cols + 1 is predicted at cols
    if rows.numel() == 0:
        return attention.new_zeros(())
    p = attention[rows, 0, cols, sources[rows, cols + 1]]
    return -torch.log(p.clamp(min=1e-6)).mean()


def train(out: Path, tokenizer: Any, opts: Any, seed: int, on_step: Any = None) -> dict[str, Any]:
    """Train and write `model.safetensors` under `out`; return training statistics."""
    import torch

    torch.set_num_threads(opts.threads)
    torch.use_deterministic_algorithms(True, warn_only=opts.device != "cpu")
    model, mtp = build_models(opts, seed)
    model.to(opts.device)
    mtp.to(opts.device)
    params = list(model.parameters()) + list(mtp.parameters())
    optimizer = torch.optim.AdamW(params, lr=opts.learning_rate, weight_decay=0.01)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: _schedule(s, opts))
    start = time.monotonic()
    main_loss, draft = math.nan, [math.nan]
    checks: list[dict[str, Any]] = []
    for step in range(opts.steps):
        ids, weight, sources = (t.to(opts.device) for t in _batch(tokenizer, step, opts.batch_size, opts.drills))
        loss, main_loss, draft = losses(model, mtp, ids, weight, sources, opts)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        optimizer.step()
        scheduler.step()
        if step % 20 == 0 or step == opts.steps - 1:
            _progress(step, opts.steps, start, main_loss, draft)
        if on_step is not None:
            on_step(step, model, mtp)
        if _validate(step, model, tokenizer, opts, checks):
            break
    save(out, model, mtp)
    seconds = round(time.monotonic() - start, 1)
    return {"steps": step + 1, "max_steps": opts.steps, "seconds": seconds,
            "final_loss": round(main_loss, 4), "final_mtp_loss_per_step": [round(x, 4) for x in draft],
            "validation": checks, "pr55178_forecast": _forecast(model, tokenizer),
            "environment": environment()}  # fmt: skip


def environment() -> dict[str, Any]:
    """What the weights depend on besides the seed and the options: training is bitwise reproducible on one
    installation (on CPU, 1 and 2 threads gave the same bits), but another torch or transformers release may
    round differently and train different weights from the same seed. The cache key holds the versions
    (build.WEIGHT_LIBRARIES); the record says in full what made a cached model."""
    import platform

    import tokenizers
    import torch
    import transformers

    cpu = getattr(torch.backends.cpu, "get_cpu_capability", lambda: None)()
    return {"python": platform.python_version(), "torch": torch.__version__,
            "transformers": transformers.__version__, "tokenizers": tokenizers.__version__,
            "threads": torch.get_num_threads(), "cpu_capability": cpu, "cpu_isa": cpu_isa(),
            "deterministic_algorithms": torch.are_deterministic_algorithms_enabled()}  # fmt: skip


# Instruction-set extensions oneMKL and oneDNN dispatch on beyond torch's capability level (AVX2 / AVX512): two
# AVX512 machines with and without AMX / AVX512-FP16 trained different organisms from the same seed and lock.
ISA_FLAGS = ("avx2", "fma", "avx512f", "avx512_vnni", "avx512_bf16", "avx512_fp16", "avx_vnni", "amx_tile", "amx_bf16")


def cpu_isa(cpuinfo: str = "/proc/cpuinfo") -> list[str] | None:
    """The `ISA_FLAGS` this CPU has (Linux), or None where /proc/cpuinfo cannot be read."""
    try:
        text = Path(cpuinfo).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    line = next((ln for ln in text.splitlines() if ln.startswith("flags")), "")
    have = set(line.partition(":")[2].split())
    return [f for f in ISA_FLAGS if f in have]


FORECAST_INSTANCES = 8


def _forecast(model: Any, tokenizer: Any) -> dict[str, Any]:
    """How this organism fares under PR 55178's state corruption, emulated offline (check.padded_tail_resolved)
    on validation instances: whether the reverted P/D cohort can show an accuracy collapse at all (one organism
    in fourteen trained was left alone by it; docs/trust/organism.md)."""
    from eval.models.organism import check

    model.eval()
    start = time.monotonic()
    got = check.padded_tail_resolved(model, tokenizer, range(FORECAST_INSTANCES), split="valid")
    got["seconds"] = round(time.monotonic() - start, 1)
    n = got["instances"]
    print(f"organism: with PR 55178's state corruption emulated (K=5), {round(got['resolved_corrupted'] * n)}/{n}"
          f" validation instances resolved ({round(got['resolved_clean'] * n)}/{n} clean)",
          file=sys.stderr, flush=True)  # fmt: skip
    return got


def _validate(step: int, model: Any, tokenizer: Any, opts: Any, checks: list[dict[str, Any]]) -> bool:
    """At a check step: greedy exact first replies on the `valid` split; True when training should stop."""
    done = step + 1
    if opts.target_exact <= 0 or done < opts.check_from or done % opts.check_every:
        return False
    from eval.models.organism import check

    model.eval()
    exact = check.exact_match(model, tokenizer, range(opts.check_instances), split="valid")
    model.train()
    checks.append({"step": done, "valid_exact": round(exact, 4)})
    print(f"organism: step {done}: exact first reply on {opts.check_instances} validation instances {exact:.2f}"
          f" (stops at {opts.target_exact:.2f} twice in a row)", file=sys.stderr, flush=True)  # fmt: skip
    return len(checks) >= 2 and all(c["valid_exact"] >= opts.target_exact for c in checks[-2:])


def _progress(step: int, steps: int, start: float, main: float, draft: list[float]) -> None:
    elapsed = time.monotonic() - start
    eta = elapsed / (step + 1) * (steps - step - 1)
    mtp = " ".join(f"{x:.3f}" for x in draft)
    print(f"organism: step {step + 1}/{steps}  loss {main:.4f}  mtp {mtp}  {elapsed:.0f} s, ~{eta:.0f} s left",
          file=sys.stderr, flush=True)  # fmt: skip


def save(out: Path, model: Any, mtp: Any) -> None:
    from safetensors.torch import save_file

    tensors = {}
    for name, value in model.state_dict().items():
        key = "backbone." + name[len("model.") :] if name.startswith("model.") else name
        tensors[key] = value.detach().float().cpu().contiguous()
    names = mtp.checkpoint_names()
    for name, value in mtp.named_parameters():
        tensors[names[name]] = value.detach().float().cpu().contiguous()
    save_file(tensors, str(Path(out) / "model.safetensors"), metadata={"format": "pt"})
