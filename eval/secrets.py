"""Keep secrets out of everything specqual writes or prints: run.json, cohort.json, plans, provenance, logs.

A value is secret when the name it is given under looks like a credential (an environment variable, a server
argument such as `api_key`, a key of the cohort file). Such values are replaced by `<redacted>` before anything
is written; the real values are only ever passed to the processes that need them.
"""

from __future__ import annotations

import re
from typing import Any

SECRET_NAME = re.compile(
    r"TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|API[_-]?KEY|ACCESS[_-]?KEY|PRIVATE|AUTH|COOKIE", re.I
)
REDACTED = "<redacted>"


def is_secret_name(name: str) -> bool:
    return bool(SECRET_NAME.search(name))


def redact_env(env: dict[str, str]) -> dict[str, str]:
    return {k: (REDACTED if is_secret_name(k) else v) for k, v in env.items()}


def redact_argv(argv: list[str]) -> list[str]:
    """`--api-key X` and `--api-key=X` -> the value redacted."""
    out: list[str] = []
    hide_next = False
    for arg in argv:
        if hide_next:
            out.append(REDACTED)
            hide_next = False
        elif arg.startswith("--") and is_secret_name(arg):
            name, eq, _ = arg.partition("=")
            out.append(f"{name}={REDACTED}" if eq else arg)
            hide_next = not eq
        else:
            out.append(arg)
    return out


def redact_tree(obj: Any) -> Any:
    """A copy of a JSON-like tree with the values of secret-looking keys redacted."""
    if isinstance(obj, dict):
        return {
            k: (REDACTED if is_secret_name(str(k)) and isinstance(v, str | int | float) else redact_tree(v))
            for k, v in obj.items()
        }
    if isinstance(obj, list):
        return [redact_tree(v) for v in obj]
    return obj
