"""Running the judge on one build: a reproducer command, or a named canary subset through `specqual probe`.

Each run's output goes to `<out>/logs/<index>-<label>.<run>.log`. A build that cannot be made (a wheel that does
not install, a patch that does not apply) counts as untestable (exit 125), like `git bisect run`'s skip.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from eval.bisect.builds import BuildList
from eval.bisect.search import SKIP

CANARY_BAD = ("corrupted",)


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.=+-]+", "_", text)[:60]


class Runner:
    """Callable judge: prepares build `index` once, then runs the command; returns its exit code."""

    def __init__(self, builds: BuildList, command: str, out: Path, timeout_s: float | None = None) -> None:
        self.builds, self.command, self.out, self.timeout_s = builds, command, out, timeout_s
        self.prepared: dict[int, dict[str, str] | None] = {}
        self.counts: dict[int, int] = {}

    def env_for(self, index: int) -> dict[str, str] | None:
        if index not in self.prepared:
            try:
                self.prepared[index] = self.builds.prepare(index)
            except Exception as e:  # a build that cannot be made is untestable, not bad
                self._log(index, "build", f"build failed: {type(e).__name__}: {e}\n")
                self.prepared[index] = None
        return self.prepared[index]

    def _log(self, index: int, tag: str, text: str) -> Path:
        path = self.out / "logs" / f"{index:03d}-{_slug(self.builds.labels[index])}.{tag}.log"
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "a", encoding="utf-8") as f:
            f.write(text)
        return path

    def __call__(self, index: int) -> int:
        extra = self.env_for(index)
        if extra is None:
            return SKIP
        n = self.counts[index] = self.counts.get(index, 0) + 1
        env = dict(os.environ)
        rest = env.get("PYTHONPATH", "")
        env.update(extra)
        if "PYTHONPATH" in extra and rest:
            env["PYTHONPATH"] = extra["PYTHONPATH"] + ":" + rest
        env["SPECQUAL_BISECT_INDEX"] = str(index)
        env["SPECQUAL_BISECT_LABEL"] = self.builds.labels[index]
        env["SPECQUAL_BISECT_RUN"] = str(n)
        log = self._log(index, f"run{n}", f"$ {self.command}\n")
        with open(log, "a", encoding="utf-8") as f:
            try:
                done = subprocess.run(
                    self.command, shell=True, env=env, stdout=f, stderr=subprocess.STDOUT, timeout=self.timeout_s
                )
            except subprocess.TimeoutExpired:
                f.write(f"\n[bisect] timed out after {self.timeout_s} s: counted as untestable\n")
                return SKIP
        return done.returncode


def canary_command(files: list[str], cohort: str, reference: str, build: str, results: Path) -> str:
    """A shell command that runs the canary on `cohort` and its reference with the build under test swapped in
    (`-c builds.<build>=$SPECQUAL_BISECT_BUILD_JSON`), then exits 1 when the cohort is judged corrupted."""
    probe = [sys.executable, "-m", "eval.cli", "probe", *files, "--cohort", reference, "--cohort", cohort]
    probe += ["--results", str(results)]
    quoted = " ".join(_q(a) for a in probe)
    run_id = '"bisect-${SPECQUAL_BISECT_INDEX}-r${SPECQUAL_BISECT_RUN}"'
    override = f'"builds.{build}=$SPECQUAL_BISECT_BUILD_JSON"'
    verdict = f"{_q(sys.executable)} -m eval.bisect.runner {_q(str(results))} {run_id} {_q(cohort)}"
    return f"{quoted} --run-id {run_id} -c {override} >/dev/null && {verdict}"


def _q(text: str) -> str:
    return "'" + text.replace("'", "'\"'\"'") + "'"


def canary_verdict(results: Path, run_id: str, cohort: str) -> int:
    """Exit code of a canary run: 1 when the cohort was judged corrupted, 0 when clean, 125 otherwise."""
    path = results / run_id / cohort / "canary.json"
    if not path.is_file():
        return SKIP
    verdict = json.loads(path.read_text()).get("verdict")
    print(f"{cohort}: {verdict}")
    return 1 if verdict in CANARY_BAD else 0 if verdict == "clean" else SKIP


if __name__ == "__main__":
    sys.exit(canary_verdict(Path(sys.argv[1]), sys.argv[2], sys.argv[3]))
