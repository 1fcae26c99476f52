"""Offline checks of a trained organism (no vLLM): held-out greedy exact match and draft acceptance.

`exact_match` decodes the first reply of held-out instances greedily with the training forward and compares
it with the expert's reply. `draft_acceptance` runs the MTP layer over held-out expert trajectories, drafting
K tokens from every generated position the way vLLM chains them, and returns the share of drafted tokens that
would be accepted (vLLM's acceptance rate, for greedy decoding that follows the expert).
"""

from __future__ import annotations

from typing import Any

from eval.models.organism import data


def first_turns(tokenizer: Any, indices: range, split: str = "heldout") -> list[tuple[list[int], str]]:
    """(prompt ids, expected first reply text) per instance of `split`."""
    out = []
    for i in indices:
        messages = data.solved(split, i)
        prompt = data.render(tokenizer, messages[:2], add_generation_prompt=True)
        want = data.render(tokenizer, messages[:3])[len(prompt) :].rstrip("\n")
        out.append((tokenizer(prompt, add_special_tokens=False)["input_ids"], want))
    return out


def exact_match(model: Any, tokenizer: Any, indices: range, max_new: int = 90, split: str = "heldout") -> float:
    """Share of instances of `split` whose greedy first reply equals the expert's (batched, no cache)."""
    import torch

    cases = first_turns(tokenizer, indices, split)
    eos = tokenizer.convert_tokens_to_ids("<|im_end|>")
    device = next(model.parameters()).device
    seqs = [list(p) for p, _ in cases]
    done = [False] * len(seqs)
    with torch.no_grad():
        for _ in range(max_new):
            width = max(len(s) for s in seqs)
            batch = torch.zeros(len(seqs), width, dtype=torch.long)
            for r, s in enumerate(seqs):
                batch[r, : len(s)] = torch.tensor(s)
            logits = model(input_ids=batch.to(device), use_cache=False).logits
            for r, s in enumerate(seqs):
                if not done[r]:
                    token = int(logits[r, len(s) - 1].argmax())
                    s.append(token)
                    done[r] = token == eos
            if all(done):
                break
    got = [tokenizer.decode(s[len(p) :]) for s, (p, _) in zip(seqs, cases, strict=True)]
    return sum(g == w for g, (_, w) in zip(got, cases, strict=True)) / len(cases)


def draft_acceptance(model: Any, mtp: Any, tokenizer: Any, indices: range, k: int = 5) -> tuple[float, list[float]]:
    """(acceptance rate, accepted share per draft position) over the generated tokens of held-out trajectories."""
    import torch

    from eval.models.organism.mtp import step_mask

    device = next(model.parameters()).device
    accepted_at = [0] * k
    starts = 0
    with torch.no_grad():
        for i in indices:
            ex = data.encode(tokenizer, data.solved("heldout", i))
            ids = torch.tensor([ex.ids], device=device)
            hidden = model.model(input_ids=ids, use_cache=False).last_hidden_state
            correct = _draft_correct(mtp, model, ids, hidden, k, step_mask)
            t = len(ex.ids)
            for p in range(t - 2):
                if not ex.mask[p + 1]:  # drafting starts after the model sampled token p + 1 itself
                    continue
                starts += 1
                for step in range(k):
                    if p + step + 2 >= t or not ex.mask[p + step + 2] or not correct[step][p]:
                        break
                    accepted_at[step] += 1
    per_position = [a / max(starts, 1) for a in accepted_at]
    return sum(per_position) / k, per_position


def _draft_correct(mtp: Any, model: Any, ids: Any, hidden: Any, k: int, step_mask: Any) -> list[list[bool]]:
    """correct[s][p]: draft step s+1 from start p predicts ids[p + s + 2] (feeding its own drafts back)."""
    import torch

    t = ids.shape[1]
    embed, head = model.model.embeddings, model.lm_head.weight
    keys, values, prev, tokens = [], [], hidden, ids[:, 1:]
    correct = []
    for step in range(1, k + 1):
        n = t - 1
        fused, kk, vv = mtp.project(embed(tokens[:, :n]), prev[:, :n])
        keys.append(kk)
        values.append(vv)
        out = mtp.attend(fused, torch.cat(keys, 2), torch.cat(values, 2), step_mask(n, step, ids.device))
        draft = (out @ head.t()).argmax(-1)  # [1, n]: the token drafted for position p + step + 1
        want = torch.full_like(draft, -1)
        want[:, : max(t - step - 1, 0)] = ids[:, step + 1 :]
        correct.append((draft == want)[0].tolist())
        prev, tokens = out, draft
    return correct


def load(model_dir: str) -> Any:
    """The trained main stack as a transformers model (checkpoint names back to transformers')."""
    from safetensors.torch import load_file
    from transformers import NemotronHConfig, NemotronHForCausalLM

    model = NemotronHForCausalLM(NemotronHConfig.from_pretrained(model_dir))
    tensors = load_file(f"{model_dir}/model.safetensors")
    state = {("model." + k[len("backbone.") :] if k.startswith("backbone.") else k): v for k, v in tensors.items()}
    model.load_state_dict({k: v for k, v in state.items() if not k.startswith("mtp.")})
    return model.eval()


def greedy(model: Any, prompt_ids: list[int], eos: int, max_new: int) -> list[int]:
    """Greedy continuation with the training forward (no cache: a full forward per token)."""
    import torch

    out: list[int] = []
    with torch.no_grad():
        while len(out) < max_new:
            token = int(model(input_ids=torch.tensor([prompt_ids + out]), use_cache=False).logits[0, -1].argmax())
            out.append(token)
            if token == eos:
                break
    return out


def turn_prompts(tokenizer: Any, split: str, index: int) -> list[tuple[list[int], list[int]]]:
    """(prompt ids, expert reply ids up to and with <|im_end|>) for each assistant turn of a solved instance."""
    return [(tokenizer(prompt, add_special_tokens=False)["input_ids"],
             tokenizer(reply, add_special_tokens=False)["input_ids"])
            for prompt, reply in data.turn_texts(tokenizer, split, index)]  # fmt: skip


def padded_tail_greedy(model: Any, prompt_ids: list[int], eos: int, max_new: int, pads: int | None = None,
                       pad_id: int = 0) -> list[int]:  # fmt: skip
    """Greedy reply with a KV/state cache, optionally with PR #55178's corruption emulated.

    With `pads` = K, the request is served the way a reverted build serves a one-token prompt tail padded to K+1
    (a P/D decode worker, or a prefix-cache hit one token short): the first reply token comes from the real row,
    but every Mamba layer keeps its conv and SSM state after the K placeholder rows too (vLLM clamps the -1
    placeholders to token 0 before the embedding). Attention never sees the placeholders. On vLLM 0.32.0 this
    matched what the reverted P/D build did: random prompts diverge, the organism's own turns do not.
    """
    import copy

    import torch

    mamba = [i for i, kind in enumerate(model.config.layer_types) if kind == "linear_attention"]
    device = next(model.parameters()).device

    # A cache without attention layers has no sequence length, which transformers asks for the positions and the
    # causal mask: give both (no layer reads a mask then).
    masks = None if "full_attention" in model.config.layer_types else dict.fromkeys(model.config.layer_types)

    def step(ids: list[int], cache: Any, start: int) -> Any:
        positions = torch.arange(start, start + len(ids), device=device)[None]
        return model(input_ids=torch.tensor([ids], device=device), past_key_values=cache, use_cache=True,
                     position_ids=positions, attention_mask=masks)  # fmt: skip

    out: list[int] = []
    with torch.no_grad():
        n = len(prompt_ids)
        cache = step(prompt_ids[:-1], None, 0).past_key_values
        broken = None
        if pads is not None:
            broken = copy.deepcopy(cache)
            for offset, token in enumerate([prompt_ids[-1]] + [pad_id] * pads):
                step([token], broken, n - 1 + offset)
        logits = step(prompt_ids[-1:], cache, n - 1).logits[0, -1]
        if broken is not None:
            for layer in mamba:
                cache.get_conv_state(layer).copy_(broken.get_conv_state(layer))
                cache.get_recurrent_state(layer).copy_(broken.get_recurrent_state(layer))
        while len(out) < max_new:
            token = int(logits.argmax())
            out.append(token)
            if token == eos:
                break
            logits = step([token], cache, n + len(out) - 1).logits[0, -1]
    return out


def padded_tail_resolved(model: Any, tokenizer: Any, indices: range, split: str = "heldout", pads: int | None = 5,
                         max_new: int = 90) -> dict[str, Any]:  # fmt: skip
    """Share of instances whose every assistant turn is the expert's, served cleanly and with `pads` placeholder
    rows kept in the Mamba state (`padded_tail_greedy`), and the share of turns that differ between the two.

    An offline forecast of the P/D 2x2's reverted-MTP cohort: the clean share stands for MTP off (rollouts that
    follow the expert resolve), the corrupted one for the reverted build with K = `pads` drafts.
    """
    eos = tokenizer.convert_tokens_to_ids("<|im_end|>")
    clean = broken = changed = turns = 0
    for i in indices:
        ok_clean = ok_broken = True
        for prompt, want in turn_prompts(tokenizer, split, i):
            a = padded_tail_greedy(model, prompt, eos, max_new)
            b = padded_tail_greedy(model, prompt, eos, max_new, pads=pads)
            ok_clean &= a == want
            ok_broken &= b == want
            changed += a != b
            turns += 1
        clean += ok_clean
        broken += ok_broken
    n = max(len(indices), 1)
    return {"instances": len(indices), "resolved_clean": clean / n, "resolved_corrupted": broken / n,
            "turns_changed": changed / max(turns, 1)}  # fmt: skip
