#!/usr/bin/env bash
# Make the offline bundle for the H200 node: vLLM 0.26.0 slimmed to sm_90, the 27 pinned run-time dependency
# wheels it lacks (scripts/gpu/node-requirements.txt, cp312 manylinux), all in one reproducible wheels.tar.xz,
# the patches and a manifest. At most 40 MiB (checked below), so that the bundle, the slim NIXL (7.4 MiB), the
# organism (1.9 MiB) and the checkout (about 11 MiB) travel in one 64 MiB device call. The same wheels in give
# the same bytes out (`sha256sum OUT_DIR/wheels.tar.xz` twice). Left out beyond the sm_90 slimming: the MoE and
# MLA kernel libraries and qutlass (vLLM imports them under suppress(ImportError); the organism and the canary's
# tiny NemotronH have no MoE or MLA layers). A model with MoE layers needs DROP_MOE=0 (and a bigger bundle).
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
MAX_MIB=${MAX_MIB:-40}
drop_args=(--drop 'vllm/_flashmla_C*' --drop 'vllm/_flashmla_extension_C*' --drop 'vllm/_qutlass_C*')
if [ "${DROP_MOE:-1}" = 1 ]; then drop_args+=(--drop 'vllm/_moe_C_stable_libtorch*'); fi

source_args=()
if [ -n "${VLLM_WHEEL:-}" ]; then
  source_args=(-c builds.backport.pip=null -c "builds.backport.wheel=$(realpath "$VLLM_WHEEL")")
fi

rm -rf "$OUT"
start=$(date +%s)
# --build backport: its patches travel too, but the node builds both cohorts' overlays from the checkout.
"$SPECQUAL" stack pack "$COHORT" "${source_args[@]}" --build backport --out "$OUT" \
  --gpu-arch sm_90 --python-version 3.12 --requirements scripts/gpu/node-requirements.txt \
  "${drop_args[@]}" --archive

got=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["source_wheel_sha256"])' "$OUT/manifest.json")
if [ "$got" != "$RELEASE_SHA256" ]; then
  echo "error: the packed wheel is not vLLM 0.26.0 as released (sha256 $got)" >&2
  exit 2
fi

size=$(du -sb "$OUT" | cut -f1)
echo "bundle $OUT: $(( size / 1048576 )).$(( size % 1048576 * 10 / 1048576 )) MiB in $(( $(date +%s) - start )) s"
ls -l "$OUT"; sha256sum "$OUT"/wheels.tar.xz
if [ "$size" -gt $(( MAX_MIB * 1048576 )) ]; then
  echo "error: the bundle is over ${MAX_MIB} MiB: it does not fit one device call beside NIXL, organism and tree" >&2
  exit 3
fi
