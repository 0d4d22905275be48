"""The elementwise formulas of ``tinytorch/kernels``: one declaration, rendered into every compiled target.

Each formula's renderings are checked where they run: the native C++ loops of ``tinytorch._C`` (generated at build
time; their op codes exported as ``_C.BINARY_OPS``/``_C.UNARY_OPS``), the fused C++ of ``compiler/codegen_cpp.py``
(compiled by the system compiler), OpenCL C on the ``opencl`` device (PoCL in CI), CUDA C compiled by NVRTC (no GPU
needed to compile). Values are compared with PyTorch, the spec.
"""
import ast
import os
import subprocess
import sys
import tempfile

import numpy as np
import pytest
import torch

import tinytorch as tt
from tinytorch.kernels import formulas, native_gen
from tinytorch.kernels.render import CppRenderer, CUDARenderer, OpenCLRenderer

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CSRC = os.path.join(ROOT, "tinytorch", "csrc")
aten = torch.ops.aten

# PyTorch's computation of each formula: (function of torch tensors, attribute values)
REFERENCE = {
    "add": (torch.add, {}), "add_alpha": (lambda a, b: torch.add(a, b, alpha=0.5), {"alpha": 0.5}),
    "sub": (torch.sub, {}), "sub_alpha": (lambda a, b: torch.sub(a, b, alpha=-1.5), {"alpha": -1.5}),
    "mul": (torch.mul, {}), "div": (torch.div, {}), "maximum": (torch.maximum, {}), "minimum": (torch.minimum, {}),
    "eq": (torch.eq, {}), "ne": (torch.ne, {}), "lt": (torch.lt, {}), "le": (torch.le, {}), "gt": (torch.gt, {}),
    "ge": (torch.ge, {}),
    "threshold_backward": (lambda g, x: aten.threshold_backward(g, x, 0.25), {"threshold": 0.25}),
    "sigmoid_backward": (aten.sigmoid_backward, {}), "tanh_backward": (aten.tanh_backward, {}),
    "gelu_backward": (aten.gelu_backward, {}),
    "gelu_tanh_backward": (lambda g, x: aten.gelu_backward(g, x, approximate="tanh"), {}),
    "silu_backward": (aten.silu_backward, {}),
    "neg": (torch.neg, {}), "abs": (torch.abs, {}), "exp": (torch.exp, {}), "sqrt": (torch.sqrt, {}),
    "rsqrt": (torch.rsqrt, {}), "reciprocal": (torch.reciprocal, {}), "tanh": (torch.tanh, {}),
    "sigmoid": (torch.sigmoid, {}), "relu": (torch.relu, {}), "silu": (torch.nn.functional.silu, {}),
    "gelu": (torch.nn.functional.gelu, {}),
    "gelu_tanh": (lambda a: torch.nn.functional.gelu(a, approximate="tanh"), {}),
    "square": (torch.square, {}),
    "clamp": (lambda a: torch.clamp(a, -0.5, 0.75), {"min": -0.5, "max": 0.75, "has_min": 1, "has_max": 1}),
    "log": (torch.log, {}), "erf": (torch.erf, {}), "erfinv": (torch.erfinv, {}),
    "special_spherical_bessel_j0": (torch.special.spherical_bessel_j0, {}),
    **{n: (getattr(torch, n), {}) for n in ("exp2", "expm1", "log2", "log10", "log1p", "sin", "cos", "tan", "asin",
                                            "acos", "atan", "sinh", "cosh")},
}
_POSITIVE = {"sqrt", "rsqrt", "log", "log2", "log10"}
_UNIT = {"asin", "acos", "erfinv", "log1p"}
TOL = {np.float32: dict(rtol=2e-5, atol=1e-5), np.float64: dict(rtol=1e-11, atol=1e-12)}


def _operands(f, dtype, n=777):
    rng = np.random.default_rng(len(f.name))
    xs = [rng.standard_normal(n) * 2 for _ in range(f.arity)]
    if f.name in _POSITIVE:
        xs = [np.abs(x) + 0.05 for x in xs]
    elif f.name in _UNIT:
        xs = [np.tanh(x) * 0.95 for x in xs]
    elif f.name == "special_spherical_bessel_j0":
        xs[0][:64] *= 0.1  # the series branch
    if f.arity == 2 and f.out == "bool":
        xs[1][::3] = xs[0][::3]  # equal pairs
    return [x.astype(dtype) for x in xs]


def _expected(f, xs):
    fn, attrs = REFERENCE[f.name]
    return fn(*(torch.from_numpy(x) for x in xs)).numpy(), attrs


def _check(f, got, want, dtype):
    if f.out == "bool":
        np.testing.assert_array_equal(got, want, err_msg=f.name)
    else:
        np.testing.assert_allclose(got, want, err_msg=f.name, **TOL[dtype])


def test_every_formula_has_a_reference_and_renders():
    assert set(REFERENCE) == set(formulas.BY_NAME)
    for f in formulas.FORMULAS:
        for target, r in (("cpp", CppRenderer()), ("opencl", OpenCLRenderer())):
            if target in f.targets:
                assert r.supports(f), (f.name, target)


def test_the_kernels_package_imports_nothing_outside_itself():
    # setup.py loads it by file path before tinytorch is built, and without NumPy
    for name in os.listdir(os.path.join(ROOT, "tinytorch", "kernels")):
        if name.endswith(".py"):
            tree = ast.parse(open(os.path.join(ROOT, "tinytorch", "kernels", name)).read())
            for node in ast.walk(tree):
                if isinstance(node, ast.ImportFrom):
                    assert node.level == 1, (name, node.module)
                elif isinstance(node, ast.Import):
                    assert all(a.name in ("os", "sys") for a in node.names), name


def test_generator_runs_as_setup_py_loads_it():
    code = (
        "import sys, importlib, importlib.util, os\n"
        "sys.modules['numpy'] = None; sys.modules['tinytorch'] = None\n"
        f"d = {os.path.join(ROOT, 'tinytorch', 'kernels')!r}\n"
        "spec = importlib.util.spec_from_file_location('_k', os.path.join(d, '__init__.py'), "
        "submodule_search_locations=[d])\n"
        "m = importlib.util.module_from_spec(spec); sys.modules['_k'] = m; spec.loader.exec_module(m)\n"
        "g = importlib.import_module('_k.native_gen')\n"
        "sys.stdout.write(g.ops_header() + g.formulas_inc())\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tempfile.gettempdir())
    assert out.returncode == 0, out.stderr
    assert out.stdout == native_gen.ops_header() + native_gen.formulas_inc()


def _C():
    from tinytorch.backends.cpu import native
    if native._C is None:
        pytest.skip(f"native kernels disabled: {native.DISABLED_REASON}")
    return native._C


def test_C_op_codes_are_the_formulas():
    C = _C()
    binary, unary = formulas.native()
    assert C.BINARY_OPS == {f.name: i for i, f in enumerate(binary)}
    assert C.UNARY_OPS == {f.name: i for i, f in enumerate(unary)}


def test_built_generated_files_are_current():
    _C()
    for rel, text in ((native_gen.HEADER, native_gen.ops_header()), (native_gen.INC, native_gen.formulas_inc())):
        with open(os.path.join(CSRC, rel)) as fh:
            assert fh.read() == text, f"{rel} is stale: rebuild with `python setup.py build_ext --inplace`"


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_native_loops_match_torch(dtype):
    C = _C()
    for f in formulas.for_target("cpp"):
        xs = _operands(f, dtype)
        want, attrs = _expected(f, xs)
        sc = [attrs[a] for a in f.attrs]
        got = C.binary(C.BINARY_OPS[f.name], *xs, *sc) if f.arity == 2 else C.unary(C.UNARY_OPS[f.name], *xs, *sc)
        _check(f, got, want, dtype)


def _cxx():
    from tinytorch.compiler import codegen_cpp
    if not codegen_cpp.available():
        pytest.skip("no C++ compiler or native extension")
    return os.environ.get("CXX", "g++")


def test_cpp_renderings_compile():
    # every formula as the fused kernels write it (statements, then an expression), for float and double
    cxx = _cxx()
    r = CppRenderer()
    lines = ["#include <cmath>", "#include <cstdint>", "#include <cstring>", '#include "kernels/vec_math.h"',
             "template <typename T> struct K {"]
    for f in formulas.for_target("cpp"):
        stmts, e = r.render(f, [f"a{k}" for k in range(f.arity)],
                            {a: (f"b{k}" if kind == "bool" else f"c{k}")
                             for k, (a, kind) in enumerate(zip(f.attrs, f.attr_kinds))})
        params = [f"T a{k}" for k in range(f.arity)] + [f"{'bool b' if kind == 'bool' else 'T c'}{k}"
                                                         for k, kind in enumerate(f.attr_kinds)]
        lines.append(f"  static auto {f.name}({', '.join(params)}) {{ {' '.join(stmts)} return {e}; }}")
    lines += ["};", "template struct K<float>;", "template struct K<double>;", ""]
    with tempfile.TemporaryDirectory() as d:
        src = os.path.join(d, "f.cpp")
        with open(src, "w") as fh:
            fh.write("\n".join(lines))
        out = subprocess.run([cxx, "-std=c++17", "-fsyntax-only", "-Wall", "-Werror", "-I", CSRC, src],
                             capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-3000:]


def _opencl():
    if not tt.opencl.is_available():
        pytest.skip("no OpenCL device")
    from tinytorch.device import get_backend
    return get_backend(tt.device("opencl"))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_opencl_renderings_run_and_match_torch(dtype):
    be = _opencl()
    from tinytorch import _dtype as _dt
    from tinytorch.backends.opencl.elementwise import _ERFINV
    r = OpenCLRenderer()
    tdt = _dt.float32 if dtype == np.float32 else _dt.float64
    for f in formulas.for_target("opencl"):
        xs = _operands(f, dtype)
        want, attrs = _expected(f, xs)
        expr = r.expression(f, [f"x{k}" for k in range(f.arity)], {a: f"s{k}" for k, a in enumerate(f.attrs)})
        ins = [tt.from_numpy(x).to("opencl")._native() for x in xs]
        out = be._ew("formula_" + f.name, expr, ins, [(attrs[a], tdt) for a in f.attrs],
                     _dt.bool if f.out == "bool" else tdt, ins[0].shape, helpers=_ERFINV)
        _check(f, be.to_numpy(out), want, dtype)


def _cuda_source(dtype, fs):
    """The OpenCL C the cuda device compiles for the elementwise kernel of each formula in ``fs`` on ``dtype``
    (``codegen._ew_spec`` around the OpenCL rendering, as the opencl backend builds it), one program for all."""
    from tinytorch.backends.opencl import elementwise
    from tinytorch.backends.opencl.codegen import _ew_spec
    r = OpenCLRenderer()
    srcs = []
    for f in fs:
        e = r.expression(f, ["x0", "x1"][:f.arity], {a: f"s{i}" for i, a in enumerate(f.attrs)})
        scalars = tuple("bool" if k == "bool" else dtype for k in f.attr_kinds)
        _, src = _ew_spec(f.name, e, "bool" if f.out == "bool" else dtype, (dtype,) * f.arity, scalars,
                          helpers=elementwise._ERFINV if "erfinv_" in e else "")
        srcs.append(src.replace("KNAME", f"k_{f.name}"))
    return "".join(srcs)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
def test_cuda_renderings_compile_with_nvrtc(dtype):
    """Every formula's kernel as the cuda device compiles it (``CUDARenderer`` over the OpenCL C), one NVRTC
    program per dtype, to an sm_90 cubin."""
    pytest.importorskip("cuda.bindings.nvrtc")
    from tinytorch.backends.cuda import runtime
    image, _ = runtime.compile_source(_cuda_source(dtype, formulas.for_target("opencl")), 90)
    assert image[:4] == b"\x7fELF"


# ---- the demonstration: `log` was added once, as one Formula line, and is now everywhere ----

def test_added_formula_reaches_every_target():
    f = formulas.BY_NAME["log"]
    assert "tt_f_log" in native_gen.formulas_inc() and "UN_LOG" in native_gen.ops_header()
    # the fused C++ and OpenCL kernels of tinytorch.compile
    from tinytorch import _dtype as _dt
    from tinytorch.compiler import codegen_cpp, codegen_opencl
    body = [("mul", [("in", 0), ("in", 0)], {}), ("log", [("v", 0)], {})]
    src = codegen_cpp.source(body, ["full"], [1], _dt.float32)
    assert "std::log(" in src
    assert tt._dispatch.OPS["log"].fusible  # the native loop and a fused kernel call the same libm log
    _, ocl_src, *_ = codegen_opencl.build(body, ["full"], [1], _dt.float32)
    assert "log(" in ocl_src
    assert "log(x0)" in CUDARenderer().program(_cuda_source("float32", [f]))  # the cuda device's tinytorch.log
    # the native kernel: registered for tinytorch.log by the generic rule, values as torch's
    C = _C()
    assert C.UNARY_OPS["log"] >= 0
    from tinytorch.backends.cpu.native import NATIVE_KERNELS
    assert NATIVE_KERNELS["log"].__name__ == "native_log"
    for dtype in (np.float32, np.float64):
        x = np.abs(np.random.default_rng(0).standard_normal(1000)).astype(dtype) + 0.01
        got = tt.log(tt.from_numpy(x)).numpy()
        np.testing.assert_allclose(got, torch.log(torch.from_numpy(x)).numpy(), **TOL[dtype])
        np.testing.assert_array_equal(got, C.unary(C.UNARY_OPS["log"], x))


def test_fused_renderings_compile_and_run():
    # a fused C++ kernel containing the added formula: compiled by the system compiler, run on the pool, equal to
    # the native loops bit for bit
    _cxx()
    C = _C()
    from tinytorch import _dtype as _dt
    from tinytorch.compiler import codegen_cpp
    body = [("mul", [("in", 0), ("c", 0)], {}), ("log", [("v", 0)], {}), ("add", [("v", 1), ("in", 0)], {})]
    x = np.abs(np.random.default_rng(1).standard_normal(5000)).astype(np.float32) + 0.01
    addr = codegen_cpp.build(body, ["full"], [2], _dt.float32)
    assert addr is not None
    got = codegen_cpp.launcher(addr, x.size, _dt.float32, [x.shape])((3.0,), x)
    want = C.binary(C.BINARY_OPS["add"], C.unary(C.UNARY_OPS["log"], C.binary(C.BINARY_OPS["mul"], x, 3.0)), x)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_fusible_formulas_fused_alone_equal_the_native_loops_bit_for_bit(dtype):
    """Each fusible formula as a one-member fused kernel against its native loop, to the last bit,
    over the range where exp's and tanh's branches switch, both overflows and the special values: both are compiled
    without multiply-add contraction from the same rendering."""
    _cxx()
    C = _C()
    from tinytorch import _dtype as _dt
    from tinytorch.compiler import codegen_cpp
    tdt = _dt.float32 if dtype == np.float32 else _dt.float64
    rng = np.random.default_rng(3)
    special = [0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, 1e-40, -1e-40, 0.625, -0.625, 88.72, 89.5, -103.97,
               -104.5, 709.8, -745.2, 1e300, -1e300]
    fs = [f for f in formulas.for_target("cpp") if f.fusible]
    assert {"exp", "tanh", "sigmoid", "silu", "gelu", "gelu_tanh", "gelu_backward", "log"} <= {f.name for f in fs}
    for f in fs:
        with np.errstate(over="ignore"):  # the float64 specials are infinities in float32
            xs = [np.concatenate([rng.standard_normal(3000) * 3, rng.standard_normal(3000) * 60,
                                  special]).astype(dtype) for _ in range(f.arity)]
        if f.name in _POSITIVE:
            xs = [np.abs(x) for x in xs]
        attrs = REFERENCE[f.name][1]
        sc = [attrs[a] for a in f.attrs]
        want = C.binary(C.BINARY_OPS[f.name], *xs, *sc) if f.arity == 2 else C.unary(C.UNARY_OPS[f.name], *xs, *sc)
        refs = [("in", k) for k in range(f.arity)] + [("c", k) for k in range(len(sc))]
        addr = codegen_cpp.build([(f.op, refs, {**f.when, **attrs})], ["full"] * f.arity, [0], tdt)
        got = codegen_cpp.launcher(addr, xs[0].size, tdt, [xs[0].shape])(tuple(sc), *xs)
        # to the last bit and the sign of zero (a NaN's sign is the operand order the compiler chose)
        nan = np.isnan(want)
        np.testing.assert_array_equal(np.isnan(got), nan, err_msg=f.name)
        bits = np.uint32 if dtype == np.float32 else np.uint64
        np.testing.assert_array_equal(got[~nan].view(bits), want[~nan].view(bits), err_msg=f.name)


def test_op_flags():
    OPS = tt._dispatch.OPS
    assert OPS["add"].elementwise and OPS["add"].fusible and not OPS["add"].reduction
    assert OPS["exp"].elementwise and OPS["exp"].fusible
    assert OPS["sum"].reduction and not OPS["sum"].elementwise
    assert not OPS["clone"].elementwise
    assert {n for n, o in OPS.items() if o.fusible} == formulas.fusible_ops() & set(OPS)
    assert OPS["log"].fusible and OPS["gelu"].fusible and not OPS["clamp"].fusible


def test_fused_runs_of_fusible_ops_match_eager_bit_for_bit():
    _cxx()
    from tinytorch.compiler import codegen_cpp
    x = tt.from_numpy(np.random.default_rng(2).standard_normal((64, 64)).astype(np.float32))

    def f(x):
        return tt.relu(x * 3.0 + 1.0).sqrt() - x.abs()

    want = f(x).numpy()
    codegen_cpp.reset()
    before = codegen_cpp.stats["kernels"]
    cf = tt.compile(f)
    for _ in range(3):  # recorded, then replayed with the fused kernel
        np.testing.assert_array_equal(cf(x).numpy(), want)
    assert codegen_cpp.stats["kernels"] > before
