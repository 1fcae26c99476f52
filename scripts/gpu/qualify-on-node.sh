#!/usr/bin/env bash
# The whole GPU qualification on an offline node, in one command: unpack the bundle made by make-bundle.sh,
# install it with no network (`specqual stack unpack`), generate the tiny NemotronH there, start the four
# cohorts of cohorts/pr55178-backport-h200.yaml at once, run the canary, and write the run directory to OUT_DIR
# (run.tar.xz: every small file of the run and of its `--repeats` passes and warm restart, RUN_ID-*; logs.tar.xz:
# their server logs; node.log: this script's output; leftovers.txt: what ran on the node before).
# Guards: a RUN_ID already under the scratch directory is refused (a warm node keeps results, and a second call
# would resume the first; RESUME=1 allows it), and so is a node where a vLLM server, a proxy or any GPU process
# is still running (a leftover of an earlier call; KILL_LEFTOVERS=1 stops them first and records them).
#
#   scripts/gpu/qualify-on-node.sh .bundle "$OUT"              (on the node, from the checkout's root)
#   scripts/gpu/qualify-on-node.sh .bundle /tmp/out --dry-run  (anywhere: stops before any server starts)
#
# Environment: PYTHON (the node's interpreter with torch, default python3), SPECQUAL_NODE_WORK (scratch,
# default /tmp/specqual-node), RUN_ID (default h200-<UTC time>), QUALIFY_ARGS (more qualify_node.py options),
# NIXL_DIR (a directory made by scripts/gpu/slim_nixl.py: its tarball is unpacked into the environment, for the
# P/D cohort file cohorts/pr55178-pd-h200.yaml; pass --cohort-file and --nixl through QUALIFY_ARGS), MODELS_DIR
# (generated model directories made elsewhere, copied into the node's model cache: the organism is trained on CPU,
# and training it again on the GPU would give other weights), DEBS_DIR (Debian packages unpacked under the scratch
# directory and put on PATH: bubblewrap for the rollouts' sandbox, `--rollouts` in QUALIFY_ARGS).
set -euo pipefail
cd "$(dirname "$0")/../.."
BUNDLE=$(realpath "${1:?usage: qualify-on-node.sh BUNDLE_DIR OUT_DIR [--dry-run]}")
OUT=$(realpath -m "${2:?usage: qualify-on-node.sh BUNDLE_DIR OUT_DIR [--dry-run]}")
DRY=${3:-}
PY=${PYTHON:-python3}
WORK=${SPECQUAL_NODE_WORK:-/tmp/specqual-node}
RUN_ID=${RUN_ID:-h200-$(date -u +%Y%m%d-%H%M%S)}
export SPECQUAL_CACHE=$WORK/cache PYTHONUNBUFFERED=1
mkdir -p "$WORK" "$OUT"
exec > >(tee -a "$OUT/node.log") 2>&1
t0=$(date +%s)
step() { echo "=== [$(( $(date +%s) - t0 ))s] $*"; }

collect() {
  # Every run this call made: RUN_ID, its repeat passes RUN_ID-r2.. and the warm restart RUN_ID-warm.
  local runs=()
  mapfile -t runs < <(cd "$WORK/results" 2>/dev/null && find . -mindepth 1 -maxdepth 1 -type d \
    \( -name "$RUN_ID" -o -name "$RUN_ID-*" \) -printf '%P\n' | sort)
  step "collect ${runs[*]:-nothing} from $WORK/results -> $OUT"
  [ ${#runs[@]} -gt 0 ] || return 0
  tar -C "$WORK/results" --sort=name --exclude='*/logs' -cJf "$OUT/run.tar.xz" "${runs[@]}"
  (cd "$WORK/results" && find "${runs[@]}" -path '*/logs/*' -print0 | tar --null -T - -cJf "$OUT/logs.tar.xz")
  ls -la "$OUT"
}
trap collect EXIT
trap 'exit 143' TERM INT  # a time limit still collects what is there

refuse() {  # before anything ran: bring back nothing of an earlier call's runs
  echo "error: $*" >&2
  trap - EXIT
  exit 4
}
step "check the node for leftovers"
leftovers() {
  { pgrep -af 'vllm.entrypoints|eval.stacks.toy_proxy|VLLM::|EngineCore' || true
    nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv,noheader 2>/dev/null || true; }
}
found=""
[ "$DRY" = "--dry-run" ] || found=$(leftovers)  # a dry run starts no server: any machine will do
echo "${found:-none}" >"$OUT/leftovers.txt"
if [ -n "$found" ]; then
  echo "$found"
  if [ "${KILL_LEFTOVERS:-0}" != 1 ]; then
    refuse "servers or GPU processes of an earlier call are still running (KILL_LEFTOVERS=1 stops them)"
  fi
  for pid in $(pgrep -f 'vllm.entrypoints|eval.stacks.toy_proxy'); do kill -TERM -- "-$(ps -o pgid= "$pid" | tr -d ' ')" 2>/dev/null || true; done
  sleep 10
  [ -z "$(leftovers)" ] || refuse "leftovers survived: $(leftovers)"
fi
if [ -e "$WORK/results/$RUN_ID" ] && [ "${RESUME:-0}" != 1 ]; then
  refuse "$WORK/results/$RUN_ID exists (an earlier call on this warm node): pick a fresh RUN_ID or RESUME=1"
fi

step "unpack $BUNDLE"
rm -rf "$WORK/bundle" "$WORK/vllm-env" "$WORK/boot"
mkdir -p "$WORK/bundle/wheels"
cp -r "$BUNDLE/patches" "$BUNDLE/manifest.json" "$WORK/bundle/"
if [ -f "$BUNDLE/wheels.tar.xz" ]; then  # made by make-bundle.sh: one reproducible archive, hash in the manifest
  want=$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["archive"]["sha256"])' "$BUNDLE/manifest.json")
  [ "$(sha256sum "$BUNDLE/wheels.tar.xz" | cut -d' ' -f1)" = "$want" ] || { echo "error: wheels.tar.xz corrupted" >&2; exit 2; }
  tar -xJf "$BUNDLE/wheels.tar.xz" -C "$WORK/bundle"
else
  for w in "$BUNDLE"/wheels/*; do
    case $w in
      *.xz) xz -dc "$w" >"$WORK/bundle/wheels/$(basename "${w%.xz}")" ;;
      *) cp "$w" "$WORK/bundle/wheels/" ;;
    esac
  done
fi
# specqual itself needs pydantic to run `stack unpack`: take it from the bundle's own wheels first.
"$PY" -m pip install -q --no-index --no-deps --no-compile --target "$WORK/boot" \
  "$WORK"/bundle/wheels/{pydantic,pydantic_core,annotated_types,typing_inspection}-*.whl
PYTHONPATH="$WORK/boot:$PWD" "$PY" -m eval.cli stack unpack "$WORK/bundle" --target "$WORK/vllm-env"
ENV_PY=$WORK/vllm-env/bin/python
if [ -n "${NIXL_DIR:-}" ]; then
  step "nixl from $NIXL_DIR"
  SITE=$("$ENV_PY" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
  tar -xJf "$NIXL_DIR"/nixl-*-slim.tar.xz -C "$SITE"
fi
if [ -n "${MODELS_DIR:-}" ]; then
  step "models from $MODELS_DIR"
  mkdir -p "$SPECQUAL_CACHE/models"
  cp -r "$MODELS_DIR"/. "$SPECQUAL_CACHE/models/"
  ls "$SPECQUAL_CACHE/models"
fi
if [ -n "${DEBS_DIR:-}" ]; then
  step "Debian packages from $DEBS_DIR"
  for d in "$DEBS_DIR"/*.deb; do dpkg -x "$d" "$WORK/debs"; done
  export PATH=$WORK/debs/usr/bin:$PATH  # their libraries are the node's own (Ubuntu 24.04 has libcap2)
  bwrap --version 2>/dev/null || true
fi
"$ENV_PY" -c 'import pydantic, openai, fastapi, typer, rich, yaml, httpx, tokenizers; print("imports ok")'

if [ "$DRY" != "--dry-run" ]; then
  step "check the environment"
  "$ENV_PY" -c 'import torch, vllm; print("vllm", vllm.__version__, "torch", torch.__version__, torch.cuda.get_device_name(0))'
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
  if [ -n "${NIXL_DIR:-}" ]; then
    "$ENV_PY" -c 'import torch, nixl; from nixl._api import nixl_agent; print("nixl", nixl.__file__, nixl_agent)'
  fi
fi

step "qualify ($RUN_ID)"
# shellcheck disable=SC2086  # QUALIFY_ARGS is a list of options
"$ENV_PY" scripts/gpu/qualify_node.py --env "$WORK/vllm-env" --bundle "$WORK/bundle" \
  --results "$WORK/results" --run-id "$RUN_ID" $DRY ${QUALIFY_ARGS:-}
step "done"
