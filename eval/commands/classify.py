"""CLI commands of the classify stage: `classify RUN_DIR` and `classify-messages IN.jsonl OUT.jsonl`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from eval.commands.common import fail, spec_errors

_FORMAT_HELP = (
    "the served tool-call format: a vLLM --tool-call-parser name (hermes, qwen3_coder, mistral, llama3_json, "
    "pythonic, openai, deepseek_v3, kimi_k2, minimax_m2, granite, internlm, jamba, glm45, ...) or auto (every family)"
)


def _check_format(value: str | None) -> str | None:
    from eval.classify.formats import FORMATS, normalize_format

    if value is not None and value.strip().lower() != "auto" and normalize_format(value) == "auto":
        raise typer.BadParameter(f"unknown format {value!r}; families: {', '.join(FORMATS)}")
    return value


def classify(
    run_dir: Annotated[Path, typer.Argument(help="a run directory (results/<run_id>)")],
    tool_format: Annotated[
        str | None,
        typer.Option("--tool-format", help="override the cohorts' tool-call parser", callback=_check_format),
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
    src: Annotated[
        Path,
        typer.Argument(
            help="JSONL: per line an assistant message (optionally with tools, tool_choice, messages) "
            'or {"request": ..., "response": ...}'
        ),
    ],
    dst: Annotated[Path, typer.Argument(help="JSONL out: {labels, evidence} per input line, same order")],
    tool_format: Annotated[str, typer.Option("--tool-format", help=_FORMAT_HELP, callback=_check_format)] = "auto",
    tools: Annotated[
        Path | None,
        typer.Option(
            "--tools",
            help="JSON list of OpenAI tool schemas for lines without their own (default: none "
            "assumed: no missing_tool_call or unknown_tool)",
        ),
    ] = None,
    tokenizer: Annotated[
        Path | None, typer.Option(help="tokenizer.json or a tokenizer directory: decide byte pieces from token_ids")
    ] = None,
) -> None:
    """Label standalone replies (no run directory needed), each with the request context its line carries.

    A line is an OpenAI assistant message, optionally with the request's "tools", "tool_choice" and prompt
    "messages" as extra keys, or a pair {"request": {"messages", "tools", "tool_choice"}, "response": <a
    chat.completion or its message>}. Without tools nothing is assumed about tools (no missing_tool_call, no
    unknown_tool). More in docs/trust/classifier.md. Two input lines:

    {"role": "assistant", "content": "{\\"name\\": \\"get_weather\\", ...}", "tools": [{"type": "function",
    "function": {"name": "get_weather"}}], "messages": [{"role": "user", "content": "Weather?"}]}

    {"request": {"tools": [...], "tool_choice": "required"}, "response": {"choices": [{"message": {"role":
    "assistant", "content": "It is sunny."}, "finish_reason": "stop"}]}}

    Example: specqual classify-messages traffic.jsonl labels.jsonl --tool-format hermes
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
