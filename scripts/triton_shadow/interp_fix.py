"""Make vLLM's Triton kernels run under Triton 3.9's interpreter (TRITON_INTERPRET=1) on CPU tensors.

Four gaps of the interpreter, each seen on a vLLM Mamba kernel:
- masked loads and stores want a boolean mask of the pointer's shape (`mask has unsupported dtype`);
- an autotuned kernel benchmarks its configs, which needs an active GPU driver (`0 active drivers`): every config
  times the same, so the first is taken;
- `tl.math.log1p` (vLLM's softplus) is missing: log(1 + x);
- a launch grid that is a function sees the arguments as interpreter pointers, while vLLM's conv1d grid fills a
  torch tensor argument in place: the grid gets the host copies, before they become pointers.
None changes what a kernel computes. Import this module before the kernels run.
"""

import inspect
import textwrap

import numpy as np
import triton.language as tl
import triton.language.math as tlm
from triton.runtime import autotuner
from triton.runtime import interpreter as interp

_builder = interp.InterpreterBuilder
_load, _store = _builder.create_masked_load, _builder.create_masked_store


def _mask(m, shape):
    return interp.TensorHandle(
        np.ascontiguousarray(np.broadcast_to(np.asarray(m.data).astype(np.bool_), shape)), m.dtype
    )


def _masked_load(self, ptrs, mask, other, cache_policy, is_volatile):
    shape = ptrs.data.shape
    if other is not None:
        other = interp.TensorHandle(np.ascontiguousarray(np.broadcast_to(other.data, shape)), other.dtype)
    return _load(self, ptrs, _mask(mask, shape), other, cache_policy, is_volatile)


def _masked_store(self, ptrs, value, mask, cache_policy):
    shape = ptrs.data.shape
    value = interp.TensorHandle(np.ascontiguousarray(np.broadcast_to(value.data, shape)), value.dtype)
    return _store(self, ptrs, value, _mask(mask, shape), cache_policy)


_builder.create_masked_load, _builder.create_masked_store = _masked_load, _masked_store
autotuner.Autotuner._bench = lambda self, *args, config, **meta: [0.0, 0.0, 0.0]
if not hasattr(tlm, "log1p"):
    tlm.log1p = lambda x, _semantic=None, **kw: tl.log(x + 1.0)

_src = textwrap.dedent(inspect.getsource(interp.GridExecutor.__call__))
_cvt = "args = {name: arg if name in self.constexprs else _implicit_cvt(arg) for name, arg in args.items()}"
_grid = "grid = self.grid(args) if callable(self.grid) else self.grid"
_old = _cvt + "\n        # iterate through grid\n        " + _grid
assert _old in _src, "the interpreter's GridExecutor.__call__ changed: check this patch"
_ns: dict = {}
exec(
    compile(
        _src.replace(_old, _grid.replace("self.grid(args)", "self.grid(dict(args))") + "\n        " + _cvt),
        interp.__file__,
        "exec",
    ),
    interp.__dict__,
    _ns,
)
interp.GridExecutor.__call__ = _ns["__call__"]
