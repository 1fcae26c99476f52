"""CLI commands of the classify stage: `classify RUN_DIR` and `classify-messages IN.jsonl OUT.jsonl`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

import typer

from eval.commands.common import fail, spec_errors

ToolFormat = Literal["qwen3_coder", "hermes", "mistral", "llama", "harmony", "auto"]


def classify(
    run_dir: Annotated[Path, typer.Argument(help="a run directory (results/<run_id>)")],
    tool_format: Annotated[
        ToolFormat | None, typer.Option("--tool-format", help="override the cohorts' tool-call parser")
    ] = None,
    tokenizer: Annotated[
        Path | None,
        typer.Option(help="tokenizer.json or a tokenizer directory: decide byte pieces from the saved token ids"),
    ] = None,
) -> None:
    """Re-derive labels.json for every unit of a run from its saved raw responses; grades are not touched.

    Example: specqual classify results/pr55178-qualification-20260301-120000
    """
    from eval.classify.rundir import classify_run
    from eval.classify.tokenizer import TokenizerError, load_tokenizer

    if not (run_dir / "run.json").is_file() and not any(run_dir.glob("*/cohort.json")):
        fail(f"{run_dir}: not a run directory (no run.json or <cohort>/cohort.json)")
    try:
        tok = load_tokenizer(tokenizer) if tokenizer is not None else None
    except TokenizerError as e:
        fail(f"--tokenizer: {e}")
        return
    summary = classify_run(run_dir, tokenizer=tok, tool_format=tool_format)
    for cohort, (units, corrupted) in summary.per_cohort.items():
        typer.echo(f"{cohort}: {units} units, {corrupted} corrupted")
    if summary.unreadable_lines:
        typer.echo(f"warning: {summary.unreadable_lines} trajectory lines were not JSON (skipped)", err=True)
    typer.echo(f"classified {summary.units} units, {summary.corrupted} corrupted")


def classify_messages(
    src: Annotated[Path, typer.Argument(help="JSONL, one OpenAI-format assistant message per line")],
    dst: Annotated[Path, typer.Argument(help="JSONL out: {labels, evidence} per input line, same order")],
    tool_format: Annotated[ToolFormat, typer.Option("--tool-format", help="the served tool-call format")] = "auto",
    tools: Annotated[
        Path | None, typer.Option("--tools", help="JSON list of OpenAI tool schemas (default: bash, submit)")
    ] = None,
    tokenizer: Annotated[
        Path | None, typer.Option(help="tokenizer.json or a tokenizer directory: decide byte pieces from token_ids")
    ] = None,
) -> None:
    """Label standalone assistant messages (no run directory needed).

    Example: specqual classify-messages replies.jsonl labels.jsonl --tool-format qwen3_coder
    """
    from eval.classify.messages import classify_file, load_tools
    from eval.classify.tokenizer import TokenizerError, load_tokenizer

    if not src.is_file():
        fail(f"{src}: no such file")
    try:
        specs = load_tools(tools) if tools is not None else None
    except (OSError, ValueError) as e:
        fail(f"--tools: {e}")
        return
    try:
        tok = load_tokenizer(tokenizer) if tokenizer is not None else None
    except TokenizerError as e:
        fail(f"--tokenizer: {e}")
        return
    n = classify_file(src, dst, tool_format, specs, tok)
    typer.echo(f"classified {n} messages -> {dst}")


def register(app: typer.Typer) -> None:
    """Add this stage's commands to the app."""
    app.command("classify")(spec_errors(classify))
    app.command("classify-messages")(spec_errors(classify_messages))
