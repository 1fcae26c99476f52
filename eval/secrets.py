"""Keep secrets out of everything specqual writes or prints: run.json, cohort.json, plans, provenance, logs.

A value is secret when the name it is given under looks like a credential (an environment variable, a server
argument such as `api_key`, a key of the cohort file). Such values are replaced by `<redacted>` before anything
is written; the real values are only ever passed to the processes that need them.
"""

from __future__ import annotations

import re
from typing import Any

# A credential word standing as a whole part of the name: HF_TOKEN, --api-key, AWS_SECRET_ACCESS_KEY; not
# max_num_batched_tokens or --enable-prompt-tokens-details.
# A dotted override key (`server.args.api_key`) is judged by its parts the same way.
SECRET_NAME = re.compile(
    r"(?:^|[_\-.])(?:TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIALS?|API[_\-]?KEY|ACCESS[_\-]?KEY|PRIVATE[_\-]?KEY|AUTH"
    r"|AUTHORIZATION|COOKIE)(?:[_\-.]|$)",
    re.IGNORECASE,
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
        hidden, hide_next = hide_next and not arg.startswith("--"), False
        if hidden:
            out.append(REDACTED)
        elif arg.startswith("--") and is_secret_name(arg.partition("=")[0][2:]):
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
            # Only string values: a credential is text, while flags such as `return_token_ids: true` must stay
            # as they are for the record to validate again.
            k: (REDACTED if is_secret_name(str(k)) and isinstance(v, str) else redact_tree(v))
            for k, v in obj.items()
        }
    if isinstance(obj, list):
        return [redact_tree(v) for v in obj]
    return obj


def secret_positions(argv: list[str]) -> list[int]:
    """Indexes of the arguments `redact_argv` hides (`X` of `--api-key X`, or the whole `--api-key=X`)."""
    return [i for i, (a, b) in enumerate(zip(argv, redact_argv(argv), strict=True)) if a != b]
