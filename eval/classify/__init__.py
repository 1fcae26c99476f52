"""Corruption classifier: label every turn and trajectory of raw model responses, with evidence.

Read-only and post hoc: it writes labels.json (results/README.md), never changes a grade and never removes a
trajectory from a denominator. The ordered detector table is `eval.classify.table.DETECTORS`; docs/trust/classifier.md
describes every label, what triggers it and the false-positive traps it avoids.

    from eval.classify import Context, classify_trajectory
    labels = classify_trajectory(records, Context.build("qwen3_coder")).to_json()
"""

from eval.classify.context import Context, History
from eval.classify.model import DEFAULT_TOOLS, Evidence, Span, ToolCall, ToolSpec, Turn
from eval.classify.table import CLASSIFIER_VERSION, DETECTORS, LABELS, SEVERITY, Detector, Rule, classify_turn
from eval.classify.trajectory import TrajectoryLabels, classify_trajectory

__all__ = [
    "CLASSIFIER_VERSION",
    "DEFAULT_TOOLS",
    "DETECTORS",
    "LABELS",
    "SEVERITY",
    "Context",
    "Detector",
    "Evidence",
    "History",
    "Rule",
    "Span",
    "ToolCall",
    "ToolSpec",
    "TrajectoryLabels",
    "Turn",
    "classify_trajectory",
    "classify_turn",
]
