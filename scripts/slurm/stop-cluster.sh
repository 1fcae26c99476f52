#!/usr/bin/env bash
# Stop the test cluster that start-cluster.sh started: cancel every job, then stop slurmd and slurmctld.
# munged is left running (other tools may use it). Idempotent.
#
#   bash scripts/slurm/stop-cluster.sh
set -uo pipefail
STATE=${SPECQUAL_SLURM_STATE:-/var/lib/specqual-slurm}
scancel --full --quiet --user="$(id -un)" 2>/dev/null
for pidf in "$STATE/slurmd.pid" "$STATE/slurmctld.pid"; do
  [ -s "$pidf" ] || continue
  pid=$(cat "$pidf")
  kill "$pid" 2>/dev/null || continue
  for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill -0 "$pid" 2>/dev/null && kill -9 "$pid" 2>/dev/null
done
echo "stop-cluster: stopped" >&2
