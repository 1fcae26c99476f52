"""`specqual classify-messages IN.jsonl OUT.jsonl`: label standalone OpenAI-format assistant messages.

Each input line is one message (`role`, `content`, `reasoning_content`, `tool_calls`, optional
`finish_reason`, `token_ids`, `prompt`); each output line is `{"labels": [...], "evidence": [...]}` for the
input line at the same position. A message sees only its own `prompt` as context (a string or a list of
messages), so it is classified as a standalone reply (not known to be the last of a loop).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from eval.classify.context import Context, History
from eval.classify.model import ToolSpec, Turn
from eval.classify.table import classify_turn
from eval.store.atomic import atomic_write_text


def classify_message(message: Any, ctx: Context) -> dict[str, Any]:
    ctx.history = History.from_prompt(message.get("prompt")) if isinstance(message, dict) else History()
    ctx.is_last = None
    result = classify_turn(Turn.from_record(message), ctx)
    return {"labels": result.labels, "evidence": [e.to_json() for e in result.evidence]}


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
    """Classify every line of `src` into `dst` (written atomically); returns the number of messages."""
    text = src.read_text(encoding="utf-8", errors="surrogateescape")
    ctx = Context.build(tool_format, tools, tokenizer=tokenizer)
    out = classify_lines(text.split("\n"), ctx)  # not splitlines(): U+2028 may sit inside a JSON string
    atomic_write_text(dst, "".join(line + "\n" for line in out))
    return len(out)
