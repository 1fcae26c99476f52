"""Generate the local task set: small real git repositories plus `instances.jsonl` in SWE-bench instance format.

Deterministic and offline: fixed author, dates and file contents give the same commit hashes and patches on
every machine. The records carry the classic SWE-bench fields (FAIL_TO_PASS / PASS_TO_PASS as JSON-encoded
lists, like the real dataset) and the fields swebench 5 reads to build a TestSpec (`image`, `log_parser`,
`eval_type`, `eval_script`), so the harness's own `make_test_spec` accepts them unchanged.

Layout of a generated set: `DIR/instances.jsonl`, `DIR/repos/<name>/` (a git repository per task),
`DIR/VERSION`.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

from eval.tasks.local_specs import RepoSpec, specs

GENERATOR_VERSION = "2"
LOCAL_DATASET = "specqual/local"
OWNER = "specqual"
WORKDIR = "/testbed"
CREATED_AT = "2026-01-01T00:00:00Z"
# The heredoc delimiter the SWE-bench eval scripts use for the test patch.
HEREDOC = "EOF_114329324912"
_GIT_ENV = {
    "GIT_AUTHOR_NAME": "specqual",
    "GIT_AUTHOR_EMAIL": "tasks@specqual.invalid",
    "GIT_AUTHOR_DATE": "2026-01-01T00:00:00+0000",
    "GIT_COMMITTER_NAME": "specqual",
    "GIT_COMMITTER_EMAIL": "tasks@specqual.invalid",
    "GIT_COMMITTER_DATE": "2026-01-01T00:00:00+0000",
    "GIT_CONFIG_GLOBAL": os.devnull,  # a user's diff or commit settings must not change the hashes
    "GIT_CONFIG_NOSYSTEM": "1",
}


def git(repo: Path, *args: str) -> str:
    env = {**os.environ, **_GIT_ENV}
    done = subprocess.run(["git", *args], cwd=repo, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)} failed in {repo}: {done.stderr.strip()}")
    return done.stdout


def _write(repo: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = repo / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def _base_files(spec: RepoSpec) -> dict[str, str]:
    package = next(iter(spec.fix)).split("/")[0]
    return {
        "README.md": f"# {spec.name}\n\nA small library of the specqual local task set.\n",
        ".gitignore": "__pycache__/\n*.pyc\n.pytest_cache/\n",
        f"{package}/__init__.py": "",
        **spec.files,
    }


def _diff_of(repo: Path, files: dict[str, str]) -> str:
    """The patch that turns the base commit into the base plus `files`."""
    _write(repo, files)
    patch = git(repo, "diff", "--no-color", "--no-ext-diff")
    git(repo, "checkout", "-q", "--", ".")
    return patch


def eval_script(base_commit: str, test_patch: str, test_files: list[str]) -> str:
    """An eval script in the shape of the SWE-bench ones: reset the test files, apply test_patch, run, reset."""
    files = " ".join(test_files)
    return "\n".join(
        [
            "#!/bin/bash",
            "set -uxo pipefail",
            f"cd {WORKDIR}",
            f"git -c core.fileMode=false diff {base_commit}",
            f"git checkout {base_commit} {files}",
            f"git apply -v - <<'{HEREDOC}'",
            test_patch.rstrip("\n"),
            HEREDOC,
            ": '>>>>> Start Test Output'",
            # plugins of whatever environment runs the tests must not slow or change the run
            f"PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 python -m pytest -rA -p no:cacheprovider {files}",
            ": '>>>>> End Test Output'",
            f"git checkout {base_commit} {files}",
            "",
        ]
    )


def build_repo(spec: RepoSpec, repo: Path) -> dict[str, Any]:
    """Create the git repository of one spec under `repo`; return its SWE-bench instance record."""
    if repo.exists():
        shutil.rmtree(repo)
    repo.mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    _write(repo, _base_files(spec))
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", f"{spec.name}: initial version")
    base = git(repo, "rev-parse", "HEAD").strip()
    patch = _diff_of(repo, spec.fix)
    test_patch = _diff_of(repo, spec.tests)
    return {
        "repo": f"{OWNER}/{spec.name}",
        "instance_id": f"{OWNER}__{spec.name}-1",
        "base_commit": base,
        "patch": patch,
        "test_patch": test_patch,
        "problem_statement": spec.problem_statement,
        "hints_text": spec.hints_text,
        "created_at": CREATED_AT,
        "version": "0.1",
        "FAIL_TO_PASS": json.dumps(spec.fail_to_pass),
        "PASS_TO_PASS": json.dumps(spec.pass_to_pass),
        "environment_setup_commit": base,
        "image": "",
        "log_parser": "parse_log_pytest",
        "eval_type": "pass_and_fail",
        "eval_script": eval_script(base, test_patch, sorted(spec.tests)),
    }


def generate(out: Path) -> Path:
    """Write the whole local task set under `out` (replacing an earlier one); return `out/instances.jsonl`."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    records = [build_repo(spec, out / "repos" / spec.name) for spec in specs()]
    lines = "".join(json.dumps(r, sort_keys=True) + "\n" for r in records)
    (out / "instances.jsonl").write_text(lines, encoding="utf-8")
    (out / "VERSION").write_text(GENERATOR_VERSION + "\n", encoding="utf-8")
    return out / "instances.jsonl"


def is_local_set(path: Path) -> bool:
    return (Path(path) / "instances.jsonl").is_file() and (Path(path) / "repos").is_dir()


def ensure(out: Path) -> Path:
    """Generate the set under `out` unless a set of this generator version is already there (a cache)."""
    version = Path(out) / "VERSION"
    if is_local_set(out) and version.is_file() and version.read_text().strip() == GENERATOR_VERSION:
        return Path(out) / "instances.jsonl"
    return generate(out)


def default_dir() -> Path:
    """Where the set is cached when a cohort names the `specqual/local` dataset without a path."""
    from eval.stacks.envs import cache_root

    return cache_root() / f"local-tasks-v{GENERATOR_VERSION}"


def repo_path(record: dict[str, Any], set_dir: Path) -> Path:
    """The git repository of a local instance inside its task set directory."""
    return Path(set_dir) / "repos" / str(record["repo"]).split("/", 1)[1]
