"""Classify a whole trajectory (its turns in order, each seeing the conversation before it) into the
labels.json record of results/README.md.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from eval.classify.context import Context, History
from eval.classify.model import Turn
from eval.classify.table import CLASSIFIER_VERSION, DETECTORS, SEVERITY, TurnLabels, classify_turn
from store.unit_records import LabelsRecord


@dataclass(frozen=True)
class TrajectoryLabels:
    n_turns: int
    turns: list[TurnLabels]  # every turn, labelled or not

    @property
    def counts(self) -> dict[str, int]:
        """Label -> number of turns with it (every label of the table, zeros included, in table order)."""
        out = {rule.label: 0 for rule in DETECTORS}
        for t in self.turns:
            for label in t.labels:
                out[label] = out.get(label, 0) + 1
        return out

    @property
    def first_corrupted_turn(self) -> int | None:
        return next((t.turn for t in self.turns if t.corrupted), None)

    def record(self) -> LabelsRecord:
        """labels.json as the typed record of the results directory (store.unit_records.LabelsRecord)."""
        first = self.first_corrupted_turn
        return LabelsRecord.model_validate(
            {
                "classifier_version": CLASSIFIER_VERSION,
                "labels": self.counts,
                "severity": dict(SEVERITY),
                "first_corrupted_turn": first,
                "corrupted": first is not None,
                "n_turns": self.n_turns,
                "turns": [t.to_json() for t in self.turns if t.labels],
            }
        )

    def to_json(self) -> dict[str, Any]:
        return self.record().record()


def classify_trajectory(records: Iterable[Any], ctx: Context, prompt: Any = None) -> TrajectoryLabels:
    """Label every turn of one trajectory; `ctx` gives the format and tools, its history grows turn by turn.

    The history holds the prompt, every tool result (`observation`, `feedback`) and every tool argument the
    model wrote: text the model may copy legitimately. The model's own free text is not added, so a leak
    repeated in a later turn is still a leak.
    """
    turns = [Turn.from_record(r, i) for i, r in enumerate(records)]
    ctx.history = History.from_prompt(prompt) if prompt is not None else History()
    out = []
    for i, turn in enumerate(turns):
        ctx.is_last = i == len(turns) - 1
        out.append(classify_turn(turn, ctx))
        for call in turn.tool_calls:
            ctx.history.add(call.arguments, given=False)
        ctx.history.add(turn.observation)
        ctx.history.add(turn.feedback)
    return TrajectoryLabels(len(turns), out)
