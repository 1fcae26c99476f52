"""The ordered, declarative table of detectors: (label, severity, detector), and the per-turn classifier.

Severities: `error` is corruption (a healthy stack essentially never produces it: `corrupted` in labels.json
means any error label); `warning` is a failure a healthy model also shows now and then (a missing tool call,
a reply that is only reasoning, a reply cut by max_tokens), counted but never called corruption by itself.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Protocol

from eval.classify.context import Context
from eval.classify.identifiers import detect_identifier_corruption
from eval.classify.markup import detect_leaked_tool_xml
from eval.classify.model import MAX_SPANS, Evidence, Span, Turn
from eval.classify.repetition import detect_degenerate_repetition
from eval.classify.shape import detect_empty_response, detect_reasoning_only, detect_truncated
from eval.classify.special import detect_leaked_special_token
from eval.classify.textual import detect_byte_piece, detect_replacement_char
from eval.classify.toolcalls import detect_malformed_tool_call, detect_missing_tool_call, detect_unknown_tool

Severity = Literal["error", "warning", "info"]

# Bump on any change that can change a label: labels.json records it, so old labels can be told apart.
CLASSIFIER_VERSION = "1.15.0"


class Detector(Protocol):
    """Looks at one turn in its context; returns the evidence spans ([] when the label does not apply)."""

    def __call__(self, turn: Turn, ctx: Context, /) -> list[Span]: ...


@dataclass(frozen=True)
class Rule:
    label: str
    severity: Severity
    detector: Detector


DETECTORS: tuple[Rule, ...] = (
    Rule("replacement_char", "error", detect_replacement_char),
    Rule("byte_piece", "error", detect_byte_piece),
    Rule("leaked_tool_xml", "error", detect_leaked_tool_xml),
    Rule("leaked_special_token", "error", detect_leaked_special_token),
    Rule("malformed_tool_call", "error", detect_malformed_tool_call),
    Rule("unknown_tool", "warning", detect_unknown_tool),
    Rule("missing_tool_call", "warning", detect_missing_tool_call),
    Rule("empty_response", "error", detect_empty_response),
    Rule("reasoning_only", "warning", detect_reasoning_only),
    Rule("degenerate_repetition", "error", detect_degenerate_repetition),
    Rule("identifier_corruption", "error", detect_identifier_corruption),
    Rule("truncated", "warning", detect_truncated),
)
LABELS: tuple[str, ...] = tuple(r.label for r in DETECTORS)
SEVERITY: dict[str, Severity] = {r.label: r.severity for r in DETECTORS}


@dataclass(frozen=True)
class TurnLabels:
    turn: int
    labels: list[str]
    evidence: list[Evidence]

    @property
    def corrupted(self) -> bool:
        return any(SEVERITY[label] == "error" for label in self.labels)

    def to_json(self) -> dict[str, object]:
        return {"turn": self.turn, "labels": self.labels, "evidence": [e.to_json() for e in self.evidence]}


def _capped(spans: list[Span]) -> list[Span]:
    """At most MAX_SPANS spans per field (the first ones): evidence, not an inventory."""
    if len(spans) <= MAX_SPANS:
        return spans
    seen: dict[str, int] = {}
    out = []
    for span in spans:
        seen[span.field] = seen.get(span.field, 0) + 1
        if seen[span.field] <= MAX_SPANS:
            out.append(span)
    return out


def classify_turn(turn: Turn, ctx: Context, rules: tuple[Rule, ...] = DETECTORS) -> TurnLabels:
    """Run every detector in table order; labels come out in that order, each with its evidence.

    A turn whose request failed for infrastructure reasons (`error` in trajectory.jsonl) gets no label: it is
    not something the model said, and infra failures are reported in their own column, never as corruption.
    """
    if turn.infra_error:
        return TurnLabels(turn.index, [], [])
    labels: list[str] = []
    evidence: list[Evidence] = []
    for rule in rules:
        spans = rule.detector(turn, ctx)
        if spans:
            labels.append(rule.label)
            evidence.extend(span.labelled(rule.label) for span in _capped(spans))
    return TurnLabels(turn.index, labels, evidence)
