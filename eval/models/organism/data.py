"""The organism's training data: expert trajectories through the rollouts' own prompt, template and tool calls.

A trajectory is the conversation the tool-call agent (`eval.agent.toolcall`) would hold when the model solves a
generated instance: the cohort's system prompt, the agent's instance message, one `bash` call that applies the
stated edit with `sed`, the agent's observation of it, and a `submit` call. It is rendered with the organism's
chat template (the one vLLM serves), and the loss covers only what the model itself would generate.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from eval.tasks import generated

# The reduced system prompt the organism's cohorts declare (`workloads.swebench.agent.system_prompt`).
# The agent's instance message (eval.agent.toolcall.INSTANCE_TEMPLATE; a unit test keeps the two equal). Not
# imported, so that training runs where the agent's HTTP dependencies are not installed.
INSTANCE_TEMPLATE = "The repository is checked out at {workdir}. Resolve this issue:\n\n{problem}"
SYSTEM_PROMPT = "Fix the issue: apply the stated edit with one bash command, then call submit."
TOOLS = ["bash", "submit"]
WORKDIR = "/testbed"  # the bwrap sandbox's working directory (eval.sandbox.bwrap.WORKDIR)
OBSERVATION = "[exit code 0]"  # what the agent sends back after a silent `sed -i` (eval.agent.tools)
CHAT_TEMPLATE_FILE = Path(__file__).with_name("chat.jinja")


def edit_command(path: str, old: str, new: str) -> str:
    return f"sed -i 's|{old}|{new}|' {path}"


def _call(call_id: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    # json.dumps with default separators: what vLLM's hermes parser returns for the model's own output
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}


def trajectory(problem_statement: str, path: str, old: str, new: str) -> list[dict[str, Any]]:
    """The messages of one solved instance, as the agent holds them at the end."""
    edit = _call("c0", "bash", {"command": edit_command(path, old, new)})
    return [
        {"role": "system", "content": SYSTEM_PROMPT},
        {"role": "user", "content": INSTANCE_TEMPLATE.format(workdir=WORKDIR, problem=problem_statement)},
        {"role": "assistant", "content": None, "tool_calls": [edit]},
        {"role": "tool", "tool_call_id": "c0", "content": OBSERVATION},
        {"role": "assistant", "content": None, "tool_calls": [_call("c1", "submit", {})]},
    ]  # fmt: skip


def solved(split: str, index: int) -> list[dict[str, Any]]:
    """The expert trajectory of generated instance `index` of `split` (no repository needed)."""
    statement = generated.make_spec(split, index).problem_statement
    return trajectory(statement, *generated.fix_of({"problem_statement": statement}))


def train_trajectories(start: int, count: int) -> Iterator[list[dict[str, Any]]]:
    """Trajectories of train-split instances `start .. start+count-1`."""
    for index in range(start, start + count):
        yield solved("train", index)


def tool_definitions(names: list[str]) -> list[dict[str, Any]]:
    from eval.agent.tools import tool_definitions as definitions

    return definitions(names)


def _as_vllm_sends(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """vLLM turns tool-call arguments in the history into dicts before templating (chat_utils)."""
    out = []
    for m in messages:
        if m.get("tool_calls"):
            calls = [{**c, "function": {**c["function"], "arguments": json.loads(c["function"]["arguments"])}}
                     for c in m["tool_calls"]]  # fmt: skip
            m = {**m, "tool_calls": calls}
        out.append(m)
    return out


def render(tokenizer: Any, messages: list[dict[str, Any]], add_generation_prompt: bool = False) -> str:
    """The chat template applied through transformers, as vLLM applies it (tools passed in)."""
    text = tokenizer.apply_chat_template(
        _as_vllm_sends(messages), tools=tool_definitions(TOOLS), tokenize=False,
        add_generation_prompt=add_generation_prompt,
    )  # fmt: skip
    return str(text)


def turn_texts(tokenizer: Any, split: str, index: int) -> list[tuple[str, str]]:
    """(prompt text, expert reply text up to and with the end-of-turn marker) for each assistant turn of a solved
    instance: the prompt as the agent sends it (chat template, tools, generation prompt), ending where the
    assistant speaks next."""
    messages = solved(split, index)
    out = []
    for n, m in enumerate(messages):
        if m["role"] != "assistant":
            continue
        prompt = render(tokenizer, messages[:n], add_generation_prompt=True)
        out.append((prompt, render(tokenizer, messages[: n + 1])[len(prompt) :].rstrip("\n")))
    return out


def generated_spans(tokenizer: Any, messages: list[dict[str, Any]]) -> tuple[str, list[tuple[int, int]]]:
    """The whole rendered text and the character spans the model generates (each assistant reply + its end)."""
    text = render(tokenizer, messages)
    spans = []
    for k, message in enumerate(messages):
        if message["role"] != "assistant":
            continue
        start = len(render(tokenizer, messages[:k], add_generation_prompt=True))
        end = len(render(tokenizer, messages[: k + 1]).rstrip("\n"))
        if not text.startswith(render(tokenizer, messages[: k + 1])):
            raise AssertionError("the template does not render the conversation incrementally")
        spans.append((start, end))
    return text, spans


@dataclass
class Example:
    ids: list[int]
    mask: list[bool]  # True where the token is generated by the model (loss positions as targets)
    # Per token: the index of the statement token it copies (the first reply's OLD, NEW and PATH), else -1
    sources: list[int] | None = None


def encode(tokenizer: Any, messages: list[dict[str, Any]]) -> Example:
    """Token ids of the rendered trajectory, per token whether the model generates it, and what it copies."""
    text, spans = generated_spans(tokenizer, messages)
    enc = tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)
    offsets = [tuple(o) for o in enc["offset_mapping"]]
    mask = [any(s <= a and b <= e for s, e in spans) and b > a for a, b in offsets]
    return Example(list(enc["input_ids"]), mask, copy_sources(text, offsets, messages, spans[0][0]))


def copy_sources(text: str, offsets: list[tuple[int, int]], messages: list[dict[str, Any]], reply: int) -> list[int]:
    """Align the copied tokens of the first reply with the statement tokens they copy, by character offset.

    A reply token whose first non-space character lies at offset r inside the command's OLD, NEW or PATH copies
    the statement token covering offset r of the same string in "replace `OLD` with `NEW` in `PATH`". (The two
    may tokenize differently at the edges, " umber" against "umber": the alignment is by character.)
    """
    path, old, new = generated.fix_of({"problem_statement": messages[1]["content"]})
    fix = text.index(f"replace `{old}` with `{new}` in `{path}`")
    command = text.index(edit_command(path, old, new), reply)
    pairs = []
    for value, in_statement, in_command in (
        (old, fix + len("replace `"), command + len("sed -i 's|")),
        (new, fix + len(f"replace `{old}` with `"), command + len(f"sed -i 's|{old}|")),
        (path, fix + len(f"replace `{old}` with `{new}` in `"), command + len(f"sed -i 's|{old}|{new}|' ")),
    ):
        pairs.append((in_command, in_command + len(value), in_statement))
    starts = [a for a, _ in offsets]
    out = []
    for a, b in offsets:
        first = a + len(text[a:b]) - len(text[a:b].lstrip())
        source = -1
        for lo, hi, at in pairs:
            if lo <= first < hi:
                source = _token_at(starts, offsets, at + first - lo)
        out.append(source)
    return out


def _token_at(starts: list[int], offsets: list[tuple[int, int]], char: int) -> int:
    import bisect

    i = bisect.bisect_right(starts, char) - 1
    return i if i >= 0 and offsets[i][0] <= char < offsets[i][1] else -1
