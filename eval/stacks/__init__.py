"""Serving stacks: build vLLM (release, wheel, env or image, plus patches), launch it, prove what runs, stop it.

The API other stages use (all importable from `eval.stacks`):

    from eval.stacks import ensure_build, launch

    build = ensure_build(spec, "unpatched")            # -> BuildEnv, cached under $SPECQUAL_CACHE or ~/.cache/specqual
    build.python                                      # interpreter of the vLLM environment
    build.overlay                                     # overlay dir put first on PYTHONPATH (hard-linked vllm + patches)
    build.patched_files                               # {"vllm/...py": sha256} after the build's patches
    with launch(spec, loaded.cohort("unpatched-mtp5"), model_dir, run_dir, build) as stack:  # run_dir: None = temp
        stack.base_url                                # http://127.0.0.1:PORT (the router for P/D)
        stack.metrics_urls                            # every vLLM process's /metrics
        stack.provenance()                            # the stack.json record (also written to <run>/<cohort>/)

`ensure_build` raises `BuildError` (a patch that does not apply shows the rejected hunk); entering `launch(...)`
verifies by hash that the server will import the build's overlay, starts every process (logs in
`<run>/<cohort>/logs/<role>.<n>.log`), waits for /health and /v1/models, and raises `StackError` with the log
tail and the exact command line if a process dies; leaving it stops every process group (TERM, then KILL).
`MetricsRecorder` (eval.stacks.metrics) appends /metrics snapshots to `<run>/<cohort>/metrics.jsonl`.
"""

from __future__ import annotations

from eval.stacks.builds import BuildEnv, ensure_build
from eval.stacks.envs import BuildError
from eval.stacks.launch import launch

__all__ = ["BuildEnv", "BuildError", "ensure_build", "launch"]
