#!/usr/bin/env bash
# Make the offline bundle for the H200 node: vLLM 0.26.0 slimmed to sm_90 (xz), the 27 pinned run-time
# dependency wheels it lacks (scripts/gpu/node-requirements.txt, cp312 manylinux), the patches and a manifest.
#
#   scripts/gpu/make-bundle.sh .bundle                 (downloads vllm==0.26.0 from PyPI, 304 MB)
#   VLLM_WHEEL=/work/wheels/vllm-0.26.0-cp38-abi3-manylinux_2_28_x86_64.whl scripts/gpu/make-bundle.sh .bundle
#
# The wheel must be the released one (its sha256 is checked below). Keep OUT_DIR inside the checkout but ignored
# (e.g. `echo /.bundle/ >> .git/info/exclude`) so that it travels with the working tree when named in `carry`.
set -euo pipefail
cd "$(dirname "$0")/../.."
OUT=${1:?usage: scripts/gpu/make-bundle.sh OUT_DIR}
SPECQUAL=${SPECQUAL:-.venv/bin/specqual}
COHORT=cohorts/pr55178-backport-h200.yaml
RELEASE_SHA256=adb1e4c9b46d0dfdb094121ae5aad670a42412dd813ed4e5db069ed6a15006de  # vllm-0.26.0 cp38-abi3 x86_64

source_args=()
if [ -n "${VLLM_WHEEL:-}" ]; then
  source_args=(-c builds.backport.pip=null -c "builds.backport.wheel=$(realpath "$VLLM_WHEEL")")
fi

rm -rf "$OUT"
start=$(date +%s)
# --build backport: its patches travel too, but the node builds both cohorts' overlays from the checkout.
"$SPECQUAL" stack pack "$COHORT" "${source_args[@]}" --build backport --out "$OUT" \
  --gpu-arch sm_90 --python-version 3.12 --requirements scripts/gpu/node-requirements.txt

got=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["source_wheel_sha256"])' "$OUT/manifest.json")
if [ "$got" != "$RELEASE_SHA256" ]; then
  echo "error: the packed wheel is not vLLM 0.26.0 as released (sha256 $got)" >&2
  exit 2
fi

# The slim wheel is a stored zip whose zeroed cubins compress to almost nothing: 171 MB -> about 35 MiB.
xz -T0 -6 "$OUT"/wheels/vllm-*.whl
echo "bundle $OUT: $(du -sm "$OUT" | cut -f1) MiB in $(( $(date +%s) - start )) s"
du -ah "$OUT" | sort -h | tail -5
