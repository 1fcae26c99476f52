#!/usr/bin/env bash
# Stop the engine start-engine.sh started: remove its containers, then stop dockerd (TERM, then KILL).
# Images stay in the data root for the next start. Idempotent.
#
#   bash scripts/docker/stop-engine.sh            # SPECQUAL_DOCKER_PURGE=1 also deletes the data root
set -uo pipefail
STATE=${SPECQUAL_DOCKER_STATE:-/var/lib/specqual-docker}
export DOCKER_HOST="unix://$STATE/docker.sock"
ids=$(docker ps -aq 2>/dev/null)
[ -n "$ids" ] && docker rm -f $ids >/dev/null 2>&1
pidf="$STATE/dockerd.pid"
if [ -s "$pidf" ]; then
  pid=$(cat "$pidf")
  if kill "$pid" 2>/dev/null; then
    for _ in $(seq 150); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -0 "$pid" 2>/dev/null && kill -9 "$pid" 2>/dev/null
  fi
fi
if [ "${SPECQUAL_DOCKER_PURGE:-0}" = 1 ]; then
  # vfs layers are plain directories; anything still mounted under the exec root is unmounted first
  grep -o " $STATE/[^ ]*" /proc/mounts | sort -r | xargs -r -n1 umount -l 2>/dev/null
  rm -rf "$STATE"
fi
echo "stop-engine: stopped" >&2
