"""Write the reproducer directory: repro.py (standalone, from repro_py.txt), case.json and REPORT.md."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from eval.canary.fuzz.case import Case
from store.record_io import write_record

TEMPLATE = Path(__file__).with_name("repro_py.txt")


def servers_of(run_path: Path, cohort: str) -> dict[str, Any]:
    """The stack's exact commands (argv + env) and base URL, from `<run>/<cohort>/stack.json`."""
    stack = (
        json.loads((run_path / cohort / "stack.json").read_text())
        if (run_path / cohort / "stack.json").is_file()
        else {}
    )
    commands = [
        {"argv": c.get("argv") or [], "env": c.get("env") or {}, "role": c.get("role")}
        for c in stack.get("commands") or []
    ]
    return {"cohort": cohort, "base_url": stack.get("base_url") or "http://127.0.0.1:8000", "commands": commands}


def repro_script(data: dict[str, Any], title: str) -> str:
    text = TEMPLATE.read_text(encoding="utf-8")
    payload = json.dumps(data, indent=1, sort_keys=True)
    if '"""' in payload:
        raise ValueError("the reproducer's data holds a triple quote")
    return text.replace("__TITLE__", title.replace('"""', "'''")).replace("__DATA__", payload)


def shell_command(cmd: dict[str, Any]) -> str:
    import shlex

    env = " ".join(f"{k}={shlex.quote(str(v))}" for k, v in sorted((cmd.get("env") or {}).items()))
    return (env + " " if env else "") + " ".join(shlex.quote(str(a)) for a in cmd.get("argv") or [])


def report(
    title: str,
    facts: dict[str, Any],
    case: Case,
    servers: dict[str, Any],
    expected: dict[str, Any],
    actual: dict[str, Any],
    rate: str,
    reason: str,
) -> str:
    lines = [f"# {title}", "", "## Environment", ""]
    lines += [f"- {k}: {v}" for k, v in facts.items()]
    lines += ["", "## Server commands", ""]
    for side in ("cohort", "reference"):
        lines += [f"{side} (`{servers[side]['cohort']}`, {servers[side]['base_url']}):", "", "```"]
        lines += [shell_command(c) for c in servers[side]["commands"]] or ["(not recorded: see the cohort file)"]
        lines += ["```", ""]
    lines += ["## Requests", "", f"{len(case.requests)} request(s); prompts as token ids, greedy unless stated.", ""]
    for r in case.requests:
        timing = f"after `{r.after}` streams" if r.after else f"at {r.start_ms} ms"
        lines += [f"`{r.role}` ({r.endpoint}, {timing}{', streamed' if r.stream else ''}):", "", "```json"]
        body = {"prompt": r.prompt_token_ids} if r.endpoint == "completions" else {"messages": r.messages}
        lines += [json.dumps({**body, **r.params}), "```", ""]
    lines += ["## Expected (speculation off) against actual", "", f"Judgement: {reason}", ""]
    for r in case.requests:
        exp, act = expected.get(r.role) or {}, actual.get(r.role) or {}
        lines += [_divergence(r.role, exp, act), ""]
    lines += ["## How often it reproduces", "", rate, "", "## Run the reproducer", "", "```"]
    lines += [
        "pip install httpx",
        "python repro.py --cohort-url URL_OF_THE_SERVER_UNDER_TEST   # exit 1: the bug shows",
    ]
    lines += ["python repro.py --cohort-url URL --reference-url URL_OF_SPECULATION_OFF", "```", ""]
    return "\n".join(lines)


def _divergence(role: str, exp: dict[str, Any], act: dict[str, Any]) -> str:
    e, a = exp.get("ids") or [], act.get("ids") or []
    d = next((i for i in range(max(len(e), len(a))) if i >= len(e) or i >= len(a) or e[i] != a[i]), None)
    if d is None:
        return f"- `{role}`: identical tokens ({len(e)}): {e[:24]}"
    tops = [(exp.get("top") or [None] * (d + 1)), (act.get("top") or [None] * (d + 1))]
    at = [t[d] if d < len(t) else None for t in tops]
    return (
        f"- `{role}`: first divergence at output token {d}\n"
        f"  - expected {e[max(0, d - 4) : d + 8]} (top logprobs there: {at[0]})\n"
        f"  - actual   {a[max(0, d - 4) : d + 8]} (top logprobs there: {at[1]})"
    )


def write_dir(out: Path, data: dict[str, Any], title: str, report_md: str, case: Case) -> Path:
    out.mkdir(parents=True, exist_ok=True)
    script = out / "repro.py"
    script.write_text(repro_script(data, title), encoding="utf-8")
    script.chmod(0o755)
    (out / "REPORT.md").write_text(report_md, encoding="utf-8")
    write_record(out / "case.json", case)
    return out
