"""`specqual classify-messages IN.jsonl OUT.jsonl`: label standalone replies, each with the request context
the caller has.

Each input line is one of:
  - an assistant message (`role`, `content`, `reasoning_content`, `tool_calls`, optional `finish_reason`,
    `token_ids`), optionally with the request's `tools`, `tool_choice` and prompt (`messages` or `prompt`) as
    extra keys of the same object;
  - a request/response pair `{"request": {...}, "response": {...}}`: the request as sent to
    /v1/chat/completions (`messages`, `tools`, `tool_choice`), the response as returned (a `chat.completion`
    object with `choices`, or just its message).
Each output line is `{"labels": [...], "evidence": [...]}` for the input line at the same position.

Without `tools` (on the line or from `--tools`), nothing is assumed about tools: no `missing_tool_call`, no
unknown-tool label and no bare-JSON call check (a chat reply is not a failed agent step). A reply is
classified as standalone (not known to be the last of a loop); its prompt is the context that makes copies
of given text clean and near-missed identifiers visible.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from eval.classify.context import Context, History
from eval.classify.model import ToolSpec, Turn
from eval.classify.table import classify_turn
from eval.store.atomic import atomic_write_text


@dataclass(frozen=True)
class Exchange:
    """One input line, normalized: the reply and what the request said."""

    reply: Any
    tools: list[ToolSpec] | None  # None: not given
    tool_choice: Any
    prompt: Any


def _specs(raw: Any) -> list[ToolSpec] | None:
    if not isinstance(raw, list):
        return None
    return [s for s in (ToolSpec.from_openai(t) for t in raw) if s is not None]


def _reply_of(response: Any) -> Any:
    """The assistant message of a chat.completion object (finish_reason folded in), or the message itself."""
    if not isinstance(response, dict):
        return response
    choices = response.get("choices")
    if isinstance(choices, list) and choices and isinstance(choices[0], dict):
        choice = choices[0]
        message = choice.get("message")
        message = dict(message) if isinstance(message, dict) else {}
        message.setdefault("finish_reason", choice.get("finish_reason"))
        return message
    return response


def parse_exchange(line: Any) -> Exchange:
    """Either form of an input line (see the module docstring); never raises."""
    if not isinstance(line, dict):
        return Exchange(line, None, None, None)
    if "response" in line and isinstance(line.get("request"), dict | type(None)):
        request = line.get("request") or {}
        return Exchange(
            _reply_of(line["response"]),
            _specs(request.get("tools")),
            request.get("tool_choice"),
            request.get("messages"),
        )
    prompt = line.get("messages", line.get("prompt"))
    return Exchange(line, _specs(line.get("tools")), line.get("tool_choice"), prompt)


def classify_exchange(exchange: Exchange, ctx: Context) -> dict[str, Any]:
    """Labels of one reply; the line's own tools override those of `ctx` (the command's `--tools`)."""
    if exchange.tools is not None:
        ctx = replace(ctx, tools={t.name: t for t in exchange.tools}, tools_known=True)
    if exchange.tool_choice is not None:
        ctx = replace(ctx, tool_choice=exchange.tool_choice)
    ctx.history = History.from_prompt(exchange.prompt) if exchange.prompt is not None else History()
    ctx.is_last = None
    result = classify_turn(Turn.from_record(exchange.reply), ctx)
    return {"labels": result.labels, "evidence": [e.to_json() for e in result.evidence]}


def classify_message(message: Any, ctx: Context) -> dict[str, Any]:
    return classify_exchange(parse_exchange(message), ctx)


def classify_lines(lines: list[str], ctx: Context) -> list[str]:
    out = []
    for line in lines:
        if not line.strip():
            continue
        try:
            message = json.loads(line)
        except ValueError as e:
            out.append(json.dumps({"labels": [], "evidence": [], "error": f"not JSON: {e}"}))
            continue
        out.append(json.dumps(classify_message(message, ctx), ensure_ascii=False))
    return out


def load_tools(path: Path) -> list[ToolSpec]:
    """OpenAI tool schemas from a JSON file (a list of `{"type": "function", "function": {...}}`)."""
    data = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(data, list):
        raise ValueError(f"{path}: expected a JSON list of tool schemas")
    specs = [ToolSpec.from_openai(item) for item in data]
    if any(s is None for s in specs):
        raise ValueError(f"{path}: every item needs function.name")
    return [s for s in specs if s is not None]


def classify_file(
    src: Path, dst: Path, tool_format: str | None, tools: list[ToolSpec] | None, tokenizer: Any = None
) -> int:
    """Classify every line of `src` into `dst` (written atomically); returns the number of messages.

    `tools` (from `--tools`) applies to lines without their own; None: lines without tools assume nothing.
    """
    text = src.read_text(encoding="utf-8", errors="surrogateescape")
    ctx = Context.build(tool_format, tools, tokenizer=tokenizer, tools_known=tools is not None)
    out = classify_lines(text.split("\n"), ctx)  # not splitlines(): U+2028 may sit inside a JSON string
    atomic_write_text(dst, "".join(line + "\n" for line in out))
    return len(out)
