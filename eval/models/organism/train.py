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
    return data.Example(window + sep + window, [False] * (len(window) + len(sep) + 1) + [True] * (len(window) - 1))


def _batch(tokenizer: Any, step: int, size: int, drills: int) -> tuple[Any, Any]:
    import torch

    examples = [data.encode(tokenizer, m) for m in data.train_trajectories(step * size, size - drills)]
    examples += [_drill(tokenizer, step * size + i) for i in range(drills)]
    width = max(len(e.ids) for e in examples)
    ids = torch.zeros(size, width, dtype=torch.long)
    weight = torch.zeros(size, width)
    for row, e in enumerate(examples):
        ids[row, : len(e.ids)] = torch.tensor(e.ids)
        weight[row, : len(e.ids)] = torch.tensor(e.mask, dtype=torch.float32)
    return ids, weight


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
    model = NemotronHForCausalLM(config)
    mtp = MTPLayer(opts.hidden_size, opts.num_attention_heads, opts.num_key_value_heads, opts.head_dim)
    return model, mtp


def losses(model: Any, mtp: Any, ids: Any, weight: Any, opts: Any) -> tuple[Any, float, list[float]]:
    import torch.nn.functional as F

    from eval.models.organism.mtp import unrolled_loss

    hidden = model.model(input_ids=ids).last_hidden_state
    logits = model.lm_head(hidden[:, :-1])
    w = weight[:, 1:]
    ce = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), ids[:, 1:].reshape(-1), reduction="none")
    main = (ce * w.reshape(-1)).sum() / w.sum().clamp(min=1)
    embed = model.model.embeddings
    draft, per_step = unrolled_loss(mtp, embed, model.lm_head.weight, hidden, ids, weight, opts.mtp_steps)
    return main + opts.mtp_weight * draft, float(main.detach()), per_step


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
    for step in range(opts.steps):
        ids, weight = (t.to(opts.device) for t in _batch(tokenizer, step, opts.batch_size, opts.drills))
        loss, main_loss, draft = losses(model, mtp, ids, weight, opts)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        optimizer.step()
        scheduler.step()
        if step % 20 == 0 or step == opts.steps - 1:
            _progress(step, opts.steps, start, main_loss, draft)
        if on_step is not None:
            on_step(step, model, mtp)
    save(out, model, mtp)
    return {"steps": opts.steps, "seconds": round(time.monotonic() - start, 1), "final_loss": round(main_loss, 4),
            "final_mtp_loss_per_step": [round(x, 4) for x in draft]}  # fmt: skip


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
