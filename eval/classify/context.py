"""What a detector may know beyond the turn itself: the served tool-call format, the tools offered, and the
conversation so far (prompt, tool results, earlier model output), so that text the model copies from its
context is not mistaken for corruption.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from eval.classify.model import DEFAULT_TOOLS, FINISH_TOOLS, ToolSpec, as_text


@dataclass
class History:
    """The conversation before the current turn, as text chunks; searched only when a detector has a suspect.

    Substring search over the chunks runs in C, so the cost is paid only for the rare suspicious span, never
    for every turn. `identifiers` is built lazily by the identifier detector (see `eval.classify.identifiers`).
    """

    chunks: list[str] = field(default_factory=list)
    # Indices into `chunks` of the text the model was given (prompt, tool results), as opposed to what it wrote.
    given: list[int] = field(default_factory=list)
    identifiers: Any = None
    # How many leading chunks are the prompt (the request's messages): their names are indexed for near misses.
    n_prompt: int = 0

    def add(self, text: str, given: bool = True) -> None:
        if text:
            if given:
                self.given.append(len(self.chunks))
            self.chunks.append(text)

    def contains(self, needle: str) -> bool:
        return bool(needle) and any(needle in chunk for chunk in self.chunks)

    @property
    def empty(self) -> bool:
        return not self.chunks

    @classmethod
    def from_prompt(cls, prompt: Any) -> History:
        """From a prompt string or a list of OpenAI messages (contents and tool-call arguments)."""
        history = cls()
        if isinstance(prompt, list):
            for message in prompt:
                if not isinstance(message, dict):
                    history.add(as_text(message))
                    continue
                history.add(as_text(message.get("content")))
                calls = message.get("tool_calls")
                for call in calls if isinstance(calls, list) else []:
                    fn = call.get("function") if isinstance(call, dict) else None
                    if isinstance(fn, dict):
                        history.add(as_text(fn.get("arguments")))
        else:
            history.add(as_text(prompt))
        history.n_prompt = len(history.chunks)
        return history


@dataclass
class Context:
    """Everything a detector may look at besides the turn. One per trajectory (or per standalone message)."""

    tool_format: str = "auto"
    structured: bool = True
    tools: dict[str, ToolSpec] = field(default_factory=lambda: {t.name: t for t in DEFAULT_TOOLS})
    history: History = field(default_factory=History)
    tokenizer: Any = None
    # True for the last turn of a trajectory, False for the others, None for a standalone message.
    is_last: bool | None = None
    # False when the caller did not say which tools were offered (a pasted reply): then nothing is assumed
    # about tools (no missing_tool_call, no unknown-tool label, no bare-JSON call check).
    tools_known: bool = True
    # The request's `tool_choice` ("auto", "none", "required" or {"type": "function", ...}); None if unknown.
    tool_choice: Any = None

    @property
    def call_required(self) -> bool:
        """The request forced a tool call (`tool_choice` "required" or a named function)."""
        return self.tool_choice == "required" or isinstance(self.tool_choice, dict)

    @property
    def finish_tool_offered(self) -> bool:
        return any(name in FINISH_TOOLS for name in self.tools)

    @classmethod
    def build(
        cls,
        tool_format: str | None = None,
        tools: list[ToolSpec] | None = None,
        structured: bool = True,
        tokenizer: Any = None,
        tools_known: bool = True,
        tool_choice: Any = None,
    ) -> Context:
        """`tools=None` means the run's agent contract (DEFAULT_TOOLS) unless `tools_known=False`."""
        from eval.classify.formats import normalize_format

        specs = list(tools) if tools is not None else list(DEFAULT_TOOLS) if tools_known else []
        return cls(
            tool_format=normalize_format(tool_format),
            structured=structured,
            tools={t.name: t for t in specs},
            tokenizer=tokenizer,
            tools_known=tools_known,
            tool_choice=tool_choice,
        )
