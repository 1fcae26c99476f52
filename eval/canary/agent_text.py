"""In-distribution prompt text for the canary (`workloads.canary.prompt_text: agent_turns`).

Random words are text no model was trained to continue, so a trained drafter (an MTP or EAGLE head) proposes drafts
the target rejects, and the accept paths of the speculative code barely run (the organism accepts 17-21% of drafts
on them against about 74% on its agent turns). These prompts are the agent conversations of the generated SWE tasks
(eval.tasks.generated), as the tool-call agent holds them, rendered through the served model's own chat template
with the agent's tools, one text per assistant turn, each ending where the assistant speaks next.
"""

from __future__ import annotations

from pathlib import Path

from eval.spec.errors import SpecError

SPLIT = "heldout"  # the generated tasks the organism was not trained on


def agent_turn_texts(model_dir: Path, instances: int = 32) -> list[str]:
    """One rendered prompt per assistant turn of the first `instances` held-out instances."""
    from transformers import AutoTokenizer

    from eval.models.organism import data

    tokenizer = AutoTokenizer.from_pretrained(str(model_dir))
    if not getattr(tokenizer, "chat_template", None):
        raise SpecError(
            "workloads.canary.prompt_text", f"agent_turns needs a chat template; {model_dir} has none (use words)"
        )
    return [prompt for index in range(instances) for prompt, _ in data.turn_texts(tokenizer, SPLIT, index)]
