import importlib.util, sys, copy, json, asyncio, uuid
import os; spec = importlib.util.spec_from_file_location('r', os.environ.get('REPRO', '/work/fz/m-shrink2-repro-fixed-mtp5-71/repro.py')); m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)
base = copy.deepcopy(m.CASE)
def roles(c): return {r["role"]: r for r in c["requests"]}
def variant(name):
    c = copy.deepcopy(base); R = roles(c)
    if name == "nonperiodic":
        R["r3"]["prompt_token_ids"] = R["r1"]["prompt_token_ids"][100:115]
    elif name == "no-r1":
        c["requests"] = [r for r in c["requests"] if r["role"] != "r1"]
    elif name == "no-bg":
        c["requests"] = [r for r in c["requests"] if r["role"] != "bg"]
        for r in c["requests"]: r["after"] = None
    elif name.startswith("r1len="):
        n = int(name.split("=")[1]); R["r1"]["prompt_token_ids"] = R["r1"]["prompt_token_ids"][:n]
    elif name.startswith("r3len="):
        n = int(name.split("=")[1]); p = R["r3"]["prompt_token_ids"]; R["r3"]["prompt_token_ids"] = [p[i % 7] for i in range(n)]
    return c
for name in sys.argv[1:]:
    m.CASE = variant(name)
    shown = 0
    for k in range(3):
        salt = uuid.uuid4().hex
        outs = asyncio.run(m.run_case("http://127.0.0.1:18101", m.DATA["model"], salt))
        refs = asyncio.run(m.run_case("http://127.0.0.1:18102", m.DATA["model"], salt))
        bad = []
        for req in m.CASE["requests"]:
            f = m.problems(req, outs[req["role"]], refs.get(req["role"]))
            if f: bad.append(req["role"] + ": " + f[0][:80])
        shown += bool(bad)
        last = bad
    print(f"{name}: bug {shown}/3 {last[:2]}", flush=True)
