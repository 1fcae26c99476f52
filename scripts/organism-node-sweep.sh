# Recipe sweep for the organism on a GPU node (benchmarks/organism_sweep.py); see docs/trust/organism.md.
# Usage (on the node): bash scripts/organism-node-sweep.sh RECIPES.jsonl [EVAL_EVERY]
# Each line of RECIPES.jsonl: {"options": {...Organism options...}, "env": {"VAR": "value"}}; all run in parallel.
python3 -m pip install -q --no-index --find-links .organism-wh --target /tmp/pl transformers==5.24.0 >/dev/null 2>&1
export PYTHONPATH=/tmp/pl:$PWD CUBLAS_WORKSPACE_CONFIG=:4096:8 SWEEP_EM=${SWEEP_EM:-48} SWEEP_ACC=${SWEEP_ACC:-8}
i=0
while IFS= read -r line; do
  [ -z "$line" ] && continue
  opts=$(python3 -c 'import json,sys; print(json.dumps([json.loads(sys.argv[1])["options"]]))' "$line")
  envs=$(python3 -c 'import json,sys; print(" ".join(f"{k}={v}" for k,v in json.loads(sys.argv[1]).get("env",{}).items()))' "$line")
  env $envs OMP_NUM_THREADS=2 timeout ${SWEEP_TIMEOUT:-540} python3 benchmarks/organism_sweep.py /tmp/sw$i "$opts" ${2:-250} \
    > $OUT/o$i.jsonl 2> $OUT/o$i.err &
  echo "$i $line" >> $OUT/recipes.txt
  i=$((i+1))
done < "$1"
wait
for f in $OUT/o*.jsonl; do echo "== $f"; cat $f | python3 -c "
import sys, json
for l in sys.stdin:
    d = json.loads(l)
    if 'training' in d:
        t = d['training']
        print('trained', t['steps'], 'steps', t['seconds'], 's', 'validation', [(c['step'], c['valid_exact']) for c in t['validation']])
    else:
        print(d['step'], d['train_s'], 'final' if d.get('final') else '', 'exact', d['exact'], 'accept', d['accept'], d['per_pos'], 'padded_tail', d.get('padded_tail'))
"; done
cat $OUT/recipes.txt
tail -n 2 $OUT/o0.err
