"""Shrinking: reduce a failing case to a minimal one that still fails (delta debugging, Zeller's ddmin).

`shrink(case, still_fails)` tries, in order, and keeps every change after which `still_fails(case)` holds:
0. the failing requests alone, then with the requests they wait on (when their roles are given);
1. fewer requests (ddmin over the request list; a request that waited on a removed one starts at once);
2. fewer parameters per request (each optional body field dropped alone);
3. plainer timing (no abort, no wait, no offset);
4. shorter prompts (halved from the front, for prompts that share no prefix with the warm request);
5. smaller `max_tokens` (halved).
`still_fails` runs the candidate against both servers (eval/canary/fuzz/api.py); `max_checks` bounds the cost.
A candidate is kept only if it fails `repeats` times in a row (each run in a fresh `cache_salt`): a case that fails
once by the luck of how the steps lined up is no reproducer. A background request (`until_others_done`) whose
companions are all gone runs alone; it is kept only while a check needs it.
"""

from __future__ import annotations

from collections.abc import Callable

from eval.canary.fuzz.case import Case, TimedRequest

StillFails = Callable[[Case], bool]
KEEP = ("max_tokens", "temperature", "logprobs")  # the judgement needs these; everything else may go


class Budget:
    """Counts runs; a candidate passes only when every one of `repeats` runs fails."""

    def __init__(self, still_fails: StillFails, max_checks: int, repeats: int = 1) -> None:
        self.still_fails, self.left, self.checks, self.repeats = still_fails, max_checks, 0, max(1, repeats)

    def __call__(self, case: Case) -> bool:
        for _ in range(self.repeats):
            if self.left <= 0:
                return False
            self.left -= 1
            self.checks += 1
            if not self.still_fails(case):
                return False
        return True


def with_requests(case: Case, requests: list[TimedRequest]) -> Case:
    roles = {r.role for r in requests}
    fixed = [r.model_copy(update={"after": r.after if r.after in roles else None}) for r in requests]
    return case.model_copy(update={"requests": fixed})


def focus(case: Case, check: Budget, roles: set[str]) -> Case:
    """First try the failing requests alone, then with what they wait on (the warm request, the one they join)."""
    if not roles:
        return case
    deps = roles | {"w"} | {r.after for r in case.requests if r.role in roles and r.after}
    for keep in (roles, deps):
        reqs = [r for r in case.requests if r.role in keep]
        if reqs and len(reqs) < len(case.requests) and check(with_requests(case, reqs)):
            return with_requests(case, reqs)
    return case


def ddmin_requests(case: Case, check: Budget) -> Case:
    reqs, n = list(case.requests), 2
    while len(reqs) >= 2:
        size = max(1, len(reqs) // n)
        chunks = [reqs[i : i + size] for i in range(0, len(reqs), size)]
        for i in range(len(chunks)):
            rest = [r for j, c in enumerate(chunks) if j != i for r in c]
            if rest and check(with_requests(case, rest)):
                reqs, n = rest, max(n - 1, 2)
                break
        else:
            if n >= len(reqs) or check.left <= 0:
                break
            n = min(len(reqs), n * 2)
    return with_requests(case, reqs)


def _replace(case: Case, role: str, **update: object) -> Case:
    reqs = [r.model_copy(update=update) if r.role == role else r for r in case.requests]
    return case.model_copy(update={"requests": reqs})


def drop_params(case: Case, check: Budget) -> Case:
    for req in list(case.requests):
        for key in list(req.params):
            if key in KEEP:
                continue
            params = {k: v for k, v in case.request(req.role).params.items() if k != key}
            cand = _replace(case, req.role, params=params)
            if check(cand):
                case = cand
    return case


def plain_timing(case: Case, check: Budget) -> Case:
    for req in list(case.requests):
        for update in ({"abort_after_tokens": None, "abort_after_ms": None}, {"after": None, "start_ms": 0}):
            current = case.request(req.role)
            if all(getattr(current, k) in (None, 0) for k in update):
                continue
            cand = _replace(case, req.role, **update)
            if check(cand):
                case = cand
    return case


def shorter_prompts(case: Case, check: Budget) -> Case:
    warm = next((r for r in case.requests if r.role == "w"), None)
    for req in list(case.requests):
        if req.role == "w" or req.endpoint != "completions":
            continue
        while len(case.request(req.role).prompt_token_ids) > 4:
            ids = case.request(req.role).prompt_token_ids
            if warm is not None and ids[:8] == warm.prompt_token_ids[:8]:
                break  # a prefix-cache hit: its length is the trigger
            cand = _replace(case, req.role, prompt_token_ids=ids[len(ids) // 2 :])
            if not check(cand):
                break
            case = cand
    return case


def fewer_tokens(case: Case, check: Budget) -> Case:
    for req in list(case.requests):
        while int(case.request(req.role).params.get("max_tokens") or 0) > 2:
            params = dict(case.request(req.role).params)
            params["max_tokens"] = int(params["max_tokens"]) // 2
            if "min_tokens" in params:
                params["min_tokens"] = min(int(params["min_tokens"]), params["max_tokens"])
            cand = _replace(case, req.role, params=params)
            if not check(cand):
                break
            case = cand
    return case


def shrink(
    case: Case, still_fails: StillFails, max_checks: int = 60, repeats: int = 2, roles: set[str] | None = None
) -> tuple[Case, int]:
    """The smallest case found within `max_checks` runs that failed `repeats` times in a row at every step, and the
    number of runs made. `roles`: the requests that failed (tried alone first)."""
    check = Budget(still_fails, max_checks, repeats)
    before = len(case.requests)
    case = focus(case, check, {r.split("~")[0] for r in roles or set()})
    for step in (ddmin_requests, drop_params, plain_timing, shorter_prompts, fewer_tokens):
        case = step(case, check)
    return case.model_copy(update={"shrunk_from": before}), check.checks
