"""benchmarks/coverage_gaps.py: every never-taken branch gets the statement it leaves, its function, and a cause
from the statement first, then from the conditions of the blocks that hold it (innermost first)."""

from __future__ import annotations

from pathlib import Path

from benchmarks.coverage_gaps import branches, classify, report

SOURCE = """\
class Scheduler:
    def schedule(self, request):
        if self.connector is not None:
            if request.num_tokens > 3:
                x = 1
        if self.lora_config and request.lora_request:
            x = 2
        if request.num_tokens == 0:
            x = 3
        while (
            self.preempted_reqs
        ):
            x = 4
        return x
"""


def test_each_branch_is_classified_by_its_statement_then_by_the_blocks_around_it(tmp_path: Path) -> None:
    f = tmp_path / "vllm" / "v1" / "sched.py"
    f.parent.mkdir(parents=True)
    f.write_text(SOURCE)
    found = branches(["v1/sched.py:4->5", "v1/sched.py:6->7", "v1/sched.py:8->9", "v1/sched.py:10->13"], tmp_path)
    by_line = {b.src: b for b in found}
    assert by_line[4].cause == "KV connector / P/D"  # `if request.num_tokens > 3` is inside `if self.connector`
    assert by_line[6].cause == "LoRA"
    assert by_line[8].cause == "other" and by_line[8].function == "schedule"
    assert by_line[10].cause == "preemption / priority"
    assert by_line[10].statement == "while ( self.preempted_reqs ):"  # joined over its continuation lines
    text = report(found, "t")
    assert "4 branches never taken" in text and "| v1/sched.py:4->5 | `schedule` |" in text


def test_the_statement_wins_over_an_enclosing_block() -> None:
    assert classify("if self.lora_config:", "schedule", ["if self.connector is not None:"]) == "LoRA"
    assert classify("if x:", "f", ["if y:", "if self.connector:"]) == "KV connector / P/D"
    assert classify("if x:", "f", []) == "other"
    assert classify("if x:", "f", [], "v1/spec_decode/step3p5.py") == "another model family's drafter"
    assert classify("if self.uses_mrope:", "propose") == "M-RoPE / multimodal drafts"
