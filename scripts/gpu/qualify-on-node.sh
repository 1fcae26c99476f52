#!/usr/bin/env bash
# The whole GPU qualification on an offline node, in one command: unpack the bundle made by make-bundle.sh,
# install it with no network (`specqual stack unpack`), generate the tiny NemotronH there, start the four
# cohorts of cohorts/pr55178-backport-h200.yaml at once, run the canary, and write the run directory to OUT_DIR
# (run.tar.xz: every small file of the run; logs.tar.xz: server logs; node.log: this script's output).
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
  local run=$WORK/results/$RUN_ID
  step "collect $run -> $OUT"
  [ -d "$run" ] || return 0
  tar -C "$WORK/results" --exclude='*/logs' -cJf "$OUT/run.tar.xz" "$RUN_ID"
  (cd "$WORK/results" && find . -path '*/logs/*' -print0 | tar --null -T - -cJf "$OUT/logs.tar.xz")
  ls -la "$OUT"
}
trap collect EXIT
trap 'exit 143' TERM INT  # a time limit still collects what is there

step "unpack $BUNDLE"
rm -rf "$WORK/bundle" "$WORK/vllm-env" "$WORK/boot"
mkdir -p "$WORK/bundle/wheels"
cp -r "$BUNDLE/patches" "$BUNDLE/manifest.json" "$WORK/bundle/"
for w in "$BUNDLE"/wheels/*; do
  case $w in
    *.xz) xz -dc "$w" >"$WORK/bundle/wheels/$(basename "${w%.xz}")" ;;
    *) cp "$w" "$WORK/bundle/wheels/" ;;
  esac
done
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
