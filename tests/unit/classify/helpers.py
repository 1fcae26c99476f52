"""Helpers for the classifier tests: build OpenAI-format assistant messages and classify them."""

from __future__ import annotations

import json
from typing import Any

from eval.classify import Context, ToolSpec
from eval.classify.messages import classify_message


def call(name: str, args: Any, index: int = 0) -> dict[str, Any]:
    """A structured tool call as vLLM returns it (arguments as the raw string)."""
    raw = args if isinstance(args, str) else json.dumps(args, ensure_ascii=False)
    return {"id": f"chatcmpl-tool-{index}", "type": "function", "function": {"name": name, "arguments": raw}}


def message(
    content: str | None = "",
    reasoning: str | None = None,
    calls: list[dict[str, Any]] | None = None,
    finish: str | None = None,
    **extra: Any,
) -> dict[str, Any]:
    out: dict[str, Any] = {
        "role": "assistant",
        "content": content,
        "reasoning_content": reasoning,
        "tool_calls": calls or [],
        "finish_reason": finish or ("tool_calls" if calls else "stop"),
    }
    out.update(extra)
    return out


def bash(command: str) -> dict[str, Any]:
    return call("bash", {"command": command})


def classify(
    msg: dict[str, Any], fmt: str = "qwen3_coder", tools: list[ToolSpec] | None = None, tokenizer: Any = None
) -> dict[str, Any]:
    return classify_message(msg, Context.build(fmt, tools, tokenizer=tokenizer))


def labels(msg: dict[str, Any], fmt: str = "qwen3_coder", **kw: Any) -> list[str]:
    return classify(msg, fmt, **kw)["labels"]
