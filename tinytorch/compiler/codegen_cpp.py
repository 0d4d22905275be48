"""C++ code generation for the ``cpu`` backend: a fused elementwise run as one loop, compiled at run time by the
system compiler into a shared library, cached on disk, and run on the native kernels' thread pool.

The generated loop covers [begin, end) of the run's elements; ``_C.run_generated`` splits the elements over the
pool as the native kernels do (``parallel.h``, 32K-element grain). The source is compiled for the instruction set
the native kernels chose at load time (``_C.cpu_capability()``), with floating-point contraction off: each op's
result is rounded as the native kernel rounds it, so a fused run gives the unfused kernels' results bit for bit.
Each member is its op's formula (``kernels/formulas.py``) rendered by ``kernels/render.py``'s ``CppRenderer``, the
renderer that writes the native loops, so the two agree by construction: the native loops are compiled without
contraction too (``csrc/kernels/pointwise.inc``), exp, tanh, sigmoid and erf are ``vec_math.h``'s polynomials
(float) or libm (double) in both, and the source defines ``TT_HAS_ROUND`` and ``TT_HAS_FMA`` as the capability's
native file does. Only formulas marked ``fusible`` are fused. The generated kernels run only with the native
kernels on: with ``TINYTORCH_NATIVE=0`` the unfused kernels are NumPy's, whose exp, tanh, log... round differently.

The disk cache: ``$TINYTORCH_CACHE_DIR`` (default ``~/.cache/tinytorch``) / ``kernels`` / ``<sha256>.so``, the hash
over the source, the compiler's version line, the flags and the instruction set. A library is written to a
temporary name and renamed into place (atomic), so processes compiling the same kernel at once never see half a
file; one that cannot be loaded (a corrupt entry) is compiled again. ``TINYTORCH_COMPILE_DEBUG=1`` prints each
generated source.
"""
import ctypes
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import time

from ..kernels import formulas
from ..kernels.render import CppRenderer

_CSRC = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "csrc")
FLAGS = ["-O3", "-std=c++17", "-shared", "-fPIC", "-fno-math-errno", "-fno-trapping-math", "-ffp-contract=off"]
_TARGETS = {"avx512": "avx512f,avx512bw,avx512vl,avx512dq,avx2,fma,f16c", "avx2": "avx2,fma,f16c"}
stats = {"kernels": 0, "compiled": 0, "disk_hits": 0, "compile_seconds": 0.0}
_LOADED = {}  # source hash -> (library, address)
_STATE = {}


_CPP = CppRenderer()
LANGUAGE = "c++"  # the Backend.kernel_language of the backends that name this module their codegen


class Expr:
    """A fusible formula (``kernels/formulas.py``) as the fusion pass sees it: ``nargs`` tensor/number operands,
    ``kw_consts`` the attributes it reads as constants, ``accepts`` whether a call's attributes are this formula's
    or (``alternatives``, gelu's approximate='tanh') another fusible formula's of the same op."""

    def __init__(self, formula):
        self.formula = formula
        self.nargs = formula.arity
        self.kw_consts = formula.attrs
        self.alternatives = (formula,)

    def accepts(self, kw, nargs):
        if kw and type(kw) is not dict:
            return False
        return any(f.accepts(kw, nargs) for f in self.alternatives)

    def constants(self, kw):
        return [kw[k] for k in self.kw_consts]


# op name -> its fusible formula: rendered with the native loops' own expressions (CppRenderer), so a fused run
# rounds as the unfused native kernels do
EXPRESSIONS = {}
for _f in formulas.for_target("cpp"):
    if _f.fusible:
        if _f.op not in EXPRESSIONS:
            EXPRESSIONS[_f.op] = Expr(_f)
        elif _f.attrs == EXPRESSIONS[_f.op].kw_consts:  # the fusion pass reads one list of constants per op
            EXPRESSIONS[_f.op].alternatives += (_f,)


def expression(name):
    """The Expr of op ``name``, or None when it is not fused."""
    return EXPRESSIONS.get(name)


def member(name, kw, target="cpp"):
    """The Expr of a member of a fused run: the op's fusible formula that accepts ``kw``, else (a kernel written by
    hand or a test) the first formula of ``target`` that accepts ``kw``."""
    f = formulas.select(name, kw, target=target, fusible=True) if name in EXPRESSIONS else None
    f = f or formulas.select(name, kw, target=target)
    if f is None:
        raise KeyError(f"no {target} formula for {name}({kw})")
    return Expr(f)


def available():
    """Whether generated kernels can run here: the native extension is loaded and a C++ compiler answers."""
    if "ok" not in _STATE:
        ok = False
        if os.environ.get("TINYTORCH_COMPILE_CODEGEN", "1") != "0":
            try:
                from ..backends.cpu.native import _C
                if _C is None:  # TINYTORCH_NATIVE=0 or no extension: eager runs NumPy's kernels (see above)
                    raise ImportError("native kernels off")
                cxx = os.environ.get("CXX", "g++")
                out = subprocess.run([cxx, "--version"], capture_output=True, text=True, timeout=30)
                ok = out.returncode == 0 and hasattr(_C, "run_generated")
                _STATE["compiler"] = (cxx, out.stdout.splitlines()[0] if out.stdout else cxx)
                _STATE["capability"] = _C.cpu_capability()
            except (ImportError, OSError, subprocess.SubprocessError):
                ok = False
        _STATE["ok"] = ok
    return _STATE["ok"]


def reset():
    """Forget the libraries loaded in this process (the disk cache stays)."""
    _LOADED.clear()


def cache_dir():
    base = os.environ.get("TINYTORCH_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "tinytorch")
    return os.path.join(base, "kernels")


def source(body, input_kinds, out_pos, dtype):
    """The C++ source of a fused run: ``body`` (op name, operand refs, attributes) per member, the kinds of the
    inputs ('full' / 'scalar'), the members whose results are written out."""
    T = "float" if dtype.name == "float32" else "double"
    target = _TARGETS.get(_STATE.get("capability"))
    lines = ["#include <cmath>", "#include <cstdint>", "#include <cstring>"]
    if target:
        # as csrc/cpu_avx2.cpp and cpu_avx512.cpp: vec_math.h then floors in one instruction (the SSE2 path's
        # branches would also keep GCC from vectorizing the loop) and rounds its multiply-adds once, as FMAs
        lines += [f'#pragma GCC target("{target}")', "#define TT_HAS_ROUND 1", "#define TT_HAS_FMA 1"]
    lines += ['#include "kernels/vec_math.h"', f"typedef {T} T;",
              'extern "C" void tt_fused(char* const* p, int64_t begin, int64_t end, const double* sc) {']
    n_out = len(out_pos)
    for k in range(n_out):
        lines.append(f"  T* __restrict o{k} = reinterpret_cast<T*>(p[{k}]);")
    for k, kind in enumerate(input_kinds):
        lines.append(f"  const T* __restrict i{k} = reinterpret_cast<const T*>(p[{n_out + k}]);")
        if kind == "scalar":
            lines.append(f"  const T s{k} = i{k}[0];")
    n_consts = sum(1 for _, refs, _ in body for r in refs if r[0] == "c")
    for c in range(n_consts):
        lines.append(f"  const T c{c} = static_cast<T>(sc[{c}]);")
    lines.append("  for (int64_t i = begin; i < end; ++i) {")
    for pos, (name, refs, kw) in enumerate(body):
        expr = member(name, kw)
        ops = []
        consts = []
        for r in refs[:expr.nargs]:
            if r[0] == "in":
                ops.append(f"s{r[1]}" if input_kinds[r[1]] == "scalar" else f"i{r[1]}[i]")
            elif r[0] == "v":
                ops.append(f"v{r[1]}")
            else:
                ops.append(f"c{r[1]}")
        for r in refs[expr.nargs:]:
            consts.append(f"c{r[1]}")
        # operands read once into locals: an expression naming one twice must not load it twice
        args = []
        for a, o in enumerate(ops):
            lines.append(f"    const T a{pos}_{a} = {o};")
            args.append(f"a{pos}_{a}")
        stmts, e = _CPP.render(expr.formula, args, dict(zip(expr.kw_consts, consts)), local=f"t{pos}_")
        lines += ["    " + st for st in stmts]
        lines.append(f"    const T v{pos} = {e};")
    for k, pos in enumerate(out_pos):
        lines.append(f"    o{k}[i] = v{pos};")
    lines += ["  }", "}", ""]
    return "\n".join(lines)


def build(body, input_kinds, out_pos, dtype):
    """The address of the compiled loop of a fused run (compiled, or loaded from the caches); None when the
    compiler fails (the run's kernels then run one by one)."""
    src = source(body, input_kinds, out_pos, dtype)
    cxx, version = _STATE["compiler"]
    h = hashlib.sha256("\n".join([src, version, " ".join(FLAGS), _STATE.get("capability", ""),
                                  _vec_math_text()]).encode()).hexdigest()[:32]
    hit = _LOADED.get(h)
    if hit is not None:
        return hit[1]
    from .graph import debug_enabled
    if debug_enabled():
        sys.stderr.write(f"tinytorch.compile: generated kernel {h}\n{src}\n")
    d = cache_dir()
    path = os.path.join(d, h + ".so")
    lib = _load(path)
    if lib is not None:
        stats["disk_hits"] += 1
    else:
        t0 = time.perf_counter()
        if not _compile(cxx, src, path, d):
            return None
        stats["compiled"] += 1
        stats["compile_seconds"] += time.perf_counter() - t0
        lib = _load(path)
        if lib is None:
            return None
    addr = ctypes.cast(lib.tt_fused, ctypes.c_void_p).value
    _LOADED[h] = (lib, addr)
    stats["kernels"] += 1
    return addr


_VEC = []


def _vec_math_text():
    if not _VEC:
        with open(os.path.join(_CSRC, "kernels", "vec_math.h")) as f:
            _VEC.append(f.read())
    return _VEC[0]


def _load(path):
    """The library at ``path``, or None when it is missing or cannot be loaded (then it is removed)."""
    if not os.path.exists(path):
        return None
    try:
        lib = ctypes.CDLL(path)
        lib.tt_fused  # noqa: B018 - a library without the symbol is as corrupt as one that does not load
        return lib
    except (OSError, AttributeError):
        try:
            os.remove(path)
        except OSError:
            pass
        return None


def _compile(cxx, src, path, d):
    os.makedirs(d, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        cpp = os.path.join(tmp, "kernel.cpp")
        with open(cpp, "w") as f:
            f.write(src)
        out = os.path.join(tmp, "kernel.so")
        r = subprocess.run([cxx, *FLAGS, "-I", _CSRC, cpp, "-o", out], capture_output=True, text=True)
        if r.returncode != 0:
            sys.stderr.write(f"tinytorch.compile: the C++ compiler failed on a fused kernel; it runs unfused\n"
                             f"{r.stderr[-2000:]}\n")
            return False
        # same directory, then an atomic rename: a process loading this name sees a whole library or none
        fd, part = tempfile.mkstemp(dir=d, suffix=".part")
        os.close(fd)
        shutil.copyfile(out, part)
        os.replace(part, path)
    return True


def launcher(addr, n, dtype, out_shapes, backend=None):
    """``fn(consts, *inputs)``: allocate the outputs, run the loop at ``addr`` on the pool, return them."""
    import numpy as np
    from .. import _C
    run = _C.run_generated
    npdt = dtype.np
    if len(out_shapes) == 1:
        shape = out_shapes[0]

        def fused(consts, *inputs):
            out = np.empty(shape, npdt)
            run(addr, (out,) + inputs, n, consts)
            return out
        return fused

    def fused_many(consts, *inputs):
        outs = tuple(np.empty(s, npdt) for s in out_shapes)
        run(addr, outs + inputs, n, consts)
        return outs
    return fused_many
