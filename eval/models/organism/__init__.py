"""The model organism: a tiny NemotronH hybrid trained on CPU to fix generated tasks with tool calls.

It is purpose-trained, not a language model: it learns to read a problem statement of the generated task set
(`eval.tasks.generated`) and copy the stated edit into one `sed` tool call, then call `submit`, in the exact
chat format the rollouts use (`chat.jinja`, hermes tool calls). Its MTP layer is trained to predict the
next-next token with the forward vLLM's `NemotronHMultiTokenPredictor` runs. Served by vLLM like the tiny model,
it makes a serving bug visible as an accuracy collapse (docs/trust/organism.md).

`generate(out_dir, seed, options)` (registry name `organism`) trains it, or reuses the cached directory.
"""

from eval.models.organism.build import generate

__all__ = ["generate"]
