#!/usr/bin/env bash
# Start a real docker engine (Debian's docker.io) on this machine, for the docker test tier and CI.
#
#   bash scripts/docker/start-engine.sh          # prints: export DOCKER_HOST=unix:///.../docker.sock
#   eval "$(bash scripts/docker/start-engine.sh)"
#
# Idempotent: installs docker.io and debootstrap if missing, starts dockerd unless one already answers on the
# socket, waits until it answers. Needs root. Storage: overlay2 where this kernel lets us mount overlayfs (a
# container starts in well under a second), else vfs, which works on any file system but copies the whole
# image per container (3.6 s idle for a 330 MB image, over 30 s on a loaded 2-core machine); force one with
# SPECQUAL_DOCKER_STORAGE=vfs|overlay2. No bridge and no iptables (containers run with `--network none` or the
# host network); its own data and exec roots under SPECQUAL_DOCKER_STATE, so it never touches a system engine.
# Stop it with stop-engine.sh.
set -euo pipefail
STATE=${SPECQUAL_DOCKER_STATE:-/var/lib/specqual-docker}
SOCK="$STATE/docker.sock"
log() { echo "start-engine: $*" >&2; }

if ! command -v dockerd >/dev/null || ! command -v debootstrap >/dev/null; then
  log "installing docker.io and debootstrap"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends docker.io debootstrap >/dev/null
fi

overlay_works() {
  local d="$STATE/overlay-probe" ok=1
  mkdir -p "$d"/{lower,upper,work,merged}
  if mount -t overlay overlay -o "lowerdir=$d/lower,upperdir=$d/upper,workdir=$d/work" "$d/merged" 2>/dev/null; then
    umount "$d/merged"; ok=0
  fi
  rm -rf "$d"; return $ok
}
mkdir -p "$STATE/exec"
DRIVER=${SPECQUAL_DOCKER_STORAGE:-}
if [ -z "$DRIVER" ]; then if overlay_works; then DRIVER=overlay2; else DRIVER=vfs; fi; fi
DATA="$STATE/data-$DRIVER"  # one data root per driver: images of one are invisible to the other
mkdir -p "$DATA"
answers() { DOCKER_HOST="unix://$SOCK" docker version --format '{{.Server.Version}}' >/dev/null 2>&1; }
if answers; then
  log "dockerd already answers on $SOCK"
else
  pidf="$STATE/dockerd.pid"
  if [ -s "$pidf" ] && kill -0 "$(cat "$pidf")" 2>/dev/null; then
    log "dockerd (pid $(cat "$pidf")) runs but does not answer yet"
  else
    log "starting dockerd ($DRIVER storage, data root $DATA, log $STATE/dockerd.log)"
    # setsid: the engine outlives this script and the shell that ran it, like a service would.
    # --live-restore: containers keep running while dockerd itself restarts (a fault the docker tier produces)
    setsid dockerd --storage-driver="$DRIVER" --iptables=false --ip6tables=false --bridge=none --live-restore \
      --data-root "$DATA" --exec-root "$STATE/exec" --pidfile "$pidf" \
      -H "unix://$SOCK" >>"$STATE/dockerd.log" 2>&1 </dev/null &
  fi
  for _ in $(seq 300); do answers && break; sleep 0.1; done
  if ! answers; then
    log "dockerd did not answer on $SOCK within 30 s; its log:"
    tail -30 "$STATE/dockerd.log" >&2 || true
    exit 1
  fi
  log "dockerd answers on $SOCK"
fi
echo "export DOCKER_HOST=unix://$SOCK"
