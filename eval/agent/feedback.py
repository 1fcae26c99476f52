"""The feedback policy: what the agent sends back when a reply has no usable tool call.

Messages come from `agent.feedback` in the cohort file (kind -> text); missing kinds use the defaults below.
Placeholders: `{name}` (the tool named in the call), `{detail}` (the parse error), `{tools}` (tool names).
The reply itself is always recorded as returned; this only decides the next message.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

DEFAULT_FEEDBACK: dict[str, str] = {
    "no_tool_call": (
        "Your reply did not call a tool. Call the `bash` tool to run a command, or call `submit` when the "
        "repository contains your fix."
    ),
    "malformed_arguments": (
        'The arguments of your `{name}` call are not a JSON object ({detail}). Send e.g. {{"command": "ls"}}.'
    ),
    "missing_command": 'Your `bash` call has no "command" string. Send e.g. {{"command": "ls"}}.',
    "unknown_tool": "There is no tool named `{name}`. The tools are: {tools}.",
}


@dataclass(frozen=True)
class FeedbackPolicy:
    messages: dict[str, str] = field(default_factory=lambda: dict(DEFAULT_FEEDBACK))
    final_answer: re.Pattern[str] | None = None
    max_consecutive_no_tool_calls: int = 3

    @classmethod
    def from_spec(
        cls, feedback: dict[str, str], final_answer_pattern: str | None, max_consecutive_no_tool_calls: int
    ) -> FeedbackPolicy:
        """Merge configured messages over the defaults; ValueError names an unknown kind or a bad pattern."""
        unknown = sorted(set(feedback) - set(DEFAULT_FEEDBACK))
        if unknown:
            raise ValueError(f"unknown feedback kinds {unknown} (known: {', '.join(sorted(DEFAULT_FEEDBACK))})")
        pattern = None
        if final_answer_pattern is not None:
            try:
                pattern = re.compile(final_answer_pattern, re.DOTALL)
            except re.error as e:
                raise ValueError(f"final_answer_pattern is not a regular expression: {e}") from None
        return cls({**DEFAULT_FEEDBACK, **feedback}, pattern, max_consecutive_no_tool_calls)

    def message(self, kind: str, name: str = "", detail: str = "", tools: str = "") -> str:
        return self.messages[kind].format(name=name, detail=detail, tools=tools)

    def is_final_answer(self, content: str | None) -> bool:
        return bool(self.final_answer is not None and content and self.final_answer.search(content))
