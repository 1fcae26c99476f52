"""The organism's MTP layer: the forward of vLLM's NemotronH MTP predictor with one attention layer (`*`).

vLLM (`model_executor/models/nemotron_h_mtp.py`), for a one-character MTP pattern: the layer fuses the
embedding of the next token with the target's hidden state, `eh_proj(cat(enorm(emb), hnorm(hidden)))`, runs a
pre-norm attention block (no rotary embedding in NemotronH attention), adds the residual, applies
`final_layernorm`, and the shared `lm_head` gives the draft logits. The embedding and the lm_head are the
target model's. For draft step k > 1 vLLM feeds the MTP layer's own output back as `hidden`.

Training (`unrolled_loss`) follows that: step 1 uses the target's final hidden states; step k uses step k-1's
outputs, and each query attends to what vLLM's cache would hold when it drafts that token: step-1 keys up to
the position it started from, then one key per earlier draft step.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn


class RMSNorm(nn.Module):
    def __init__(self, size: int, eps: float) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.ones(size))
        self.eps = eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.weight * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps))


class MTPLayer(nn.Module):
    """Parameter names follow the checkpoint (`mtp.layers.0.<name>`)."""

    def __init__(self, hidden: int, heads: int, kv_heads: int, head_dim: int, eps: float = 1e-5) -> None:
        super().__init__()
        self.heads, self.kv_heads, self.head_dim = heads, kv_heads, head_dim
        self.enorm, self.hnorm = RMSNorm(hidden, eps), RMSNorm(hidden, eps)
        self.eh_proj = nn.Linear(2 * hidden, hidden, bias=False)
        self.norm = RMSNorm(hidden, eps)
        self.q_proj = nn.Linear(hidden, heads * head_dim, bias=False)
        self.k_proj = nn.Linear(hidden, kv_heads * head_dim, bias=False)
        self.v_proj = nn.Linear(hidden, kv_heads * head_dim, bias=False)
        self.o_proj = nn.Linear(heads * head_dim, hidden, bias=False)
        self.final_layernorm = RMSNorm(hidden, eps)

    def checkpoint_names(self) -> dict[str, str]:
        """Module parameter name -> checkpoint name (mixer weights live under `mixer.`)."""
        mixer = {"q_proj", "k_proj", "v_proj", "o_proj"}
        out = {}
        for name, _ in self.named_parameters():
            head = name.split(".", 1)[0]
            out[name] = f"mtp.layers.0.{'mixer.' if head in mixer else ''}{name}"
        return out

    def project(self, emb: torch.Tensor, hidden: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Fused input -> (residual, keys, values) for a [B, T, H] batch."""
        fused = self.eh_proj(torch.cat([self.enorm(emb), self.hnorm(hidden)], dim=-1))
        x = self.norm(fused)
        b, t, _ = x.shape
        k = self.k_proj(x).view(b, t, self.kv_heads, self.head_dim).transpose(1, 2)
        v = self.v_proj(x).view(b, t, self.kv_heads, self.head_dim).transpose(1, 2)
        return fused, k, v

    def attend(self, fused: torch.Tensor, keys: torch.Tensor, values: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        b, t, _ = fused.shape
        q = self.q_proj(self.norm(fused)).view(b, t, self.heads, self.head_dim).transpose(1, 2)
        rep = self.heads // self.kv_heads
        keys, values = keys.repeat_interleave(rep, dim=1), values.repeat_interleave(rep, dim=1)
        out = F.scaled_dot_product_attention(q, keys, values, attn_mask=mask)
        out = self.o_proj(out.transpose(1, 2).reshape(b, t, -1))
        return self.final_layernorm(out + fused)

    def forward(self, emb: torch.Tensor, hidden: torch.Tensor) -> torch.Tensor:
        """Step 1 over a whole sequence (causal): the pass vLLM runs over verified tokens."""
        fused, k, v = self.project(emb, hidden)
        t = emb.shape[1]
        causal = torch.ones(t, t, dtype=torch.bool, device=emb.device).tril()
        return self.attend(fused, k, v, causal)


def step_mask(n: int, step: int, device: torch.device) -> torch.Tensor:
    """Which keys a step-`step` query started at position p sees; keys are [step 1 .. step `step`] x starts.

    When vLLM drafts step k from the last verified position p, its MTP cache holds the step-1 entries of every
    start <= p (recomputed from the target's hidden states after each verification) and the entries that draft
    steps 2 .. k-1 of this same start wrote just before.
    """
    p = torch.arange(n, device=device).view(n, 1)
    s = torch.arange(n, device=device).view(1, n)
    return torch.cat([s <= p] + [s == p for _ in range(2, step + 1)], dim=1)


def unrolled_loss(
    layer: MTPLayer, embed: nn.Embedding, lm_head: torch.Tensor, hidden: torch.Tensor, ids: torch.Tensor,
    weight: torch.Tensor, steps: int,
) -> tuple[torch.Tensor, list[float]]:  # fmt: skip
    """Mean cross-entropy of draft steps 1..`steps` (step k at position i predicts ids[i + k + 1]).

    `weight[b, j]` weights the loss of predicting token j; the target model's tensors are detached, so the MTP
    loss trains only the MTP layer.
    """
    t = ids.shape[1]
    keys, values, total, per_step = [], [], hidden.new_zeros(()), []
    prev = hidden.detach()
    for step in range(1, steps + 1):
        if t <= step + 1:
            break
        emb = embed(ids[:, step:t]).detach()  # token i + step, for positions i = 0 .. t - step - 1
        h = prev[:, : t - step]
        fused, k, v = layer.project(emb, h)
        keys.append(k[:, :, : t - step])
        values.append(v[:, :, : t - step])
        n = t - step
        mask = step_mask(n, step, ids.device)
        kk = torch.cat([kx[:, :, :n] for kx in keys], dim=2)
        vv = torch.cat([vx[:, :, :n] for vx in values], dim=2)
        out = layer.attend(fused, kk, vv, mask)
        logits = out[:, : t - step - 1] @ lm_head.detach().t()
        target, w = ids[:, step + 1 :], weight[:, step + 1 :]
        ce = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), target.reshape(-1), reduction="none")
        loss = (ce * w.reshape(-1)).sum() / w.sum().clamp(min=1)
        total = total + loss
        per_step.append(float(loss.detach()))
        prev = out
    return total / max(len(per_step), 1), per_step
