"""The native layer's binding kit (tinytorch/csrc/kit.h): op codes come from ``_C`` (no copies in
``backends/cpu/native.py``), and the one argument parser every entry uses returns NotImplemented, with no error
pending, for an argument it does not take (the NumPy kernel then runs), while a Python error raised while reading an
argument propagates."""
import ast
import inspect
import os

import numpy as np
import pytest

if os.environ.get("TINYTORCH_NATIVE", "1").strip() in ("0", "false", "off", "no"):
    pytest.skip("the native kernels are disabled (TINYTORCH_NATIVE=0)", allow_module_level=True)

import tinytorch  # noqa: E402,F401
from tinytorch import _C  # noqa: E402  (built in CI: a missing extension fails here)
from tinytorch.backends.cpu import native  # noqa: E402


# ---- op codes ----------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("attr", ["BINARY_OPS", "UNARY_OPS", "REDUCE_OPS"])
def test_op_code_tables_are_module_constants(attr):
    table = getattr(_C, attr)
    assert isinstance(table, dict) and table
    assert all(isinstance(k, str) for k in table)
    assert sorted(table.values()) == list(range(len(table)))  # codes are the table's indices


def test_native_py_holds_no_hand_copied_op_codes():
    # an op code written into native.py as a number (`_RED_SUM = 0`) would silently go stale when a family's
    # table changes; every code must be read from _C
    tree = ast.parse(inspect.getsource(native))
    for node in ast.walk(tree):
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
            values = node.value.elts if isinstance(node.value, ast.Tuple) else [node.value]
            ints = [v for v in values if isinstance(v, ast.Constant) and type(v.value) is int]
            assert not ints, f"native.py line {node.lineno} assigns an integer literal: read op codes from _C"


def test_reduce_codes_name_their_reductions():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((5, 70)).astype(np.float32)
    red = _C.REDUCE_OPS
    np.testing.assert_allclose(_C.reduce(red["sum"], a, (1,), False), a.sum(1), rtol=1e-5)
    np.testing.assert_array_equal(_C.reduce(red["max"], a, (1,), False), a.max(1))
    np.testing.assert_array_equal(_C.reduce(red["min"], a, None, False), a.min())
    np.testing.assert_array_equal(_C.arg_reduce(red["max"], False, a, 1, False), a.argmax(1))
    np.testing.assert_array_equal(_C.arg_reduce(red["min"], False, a, 0, True), a.argmin(0, keepdims=True))


def test_registered_reduce_kernels_use_the_exported_codes():
    a = np.random.default_rng(1).standard_normal((4, 80))
    np.testing.assert_array_equal(native.NATIVE_KERNELS["amax"](a, (1,), False), a.max(1))
    np.testing.assert_array_equal(native.NATIVE_KERNELS["amin"](a, (0,), True), a.min(0, keepdims=True))
    np.testing.assert_allclose(native.NATIVE_KERNELS["sum"](a, (0, 1), False, None), a.sum())


# ---- arguments ---------------------------------------------------------------------------------------------------

A32 = np.arange(12, dtype=np.float32).reshape(3, 4)


class _BadBool:
    def __bool__(self):
        raise ZeroDivisionError("no truth value")


@pytest.mark.parametrize("call", [
    lambda: _C.reduce("sum", A32, None, False),            # op code not an int
    lambda: _C.reduce(0, A32, "ab", False),                # dims not ints
    lambda: _C.reduce(0, A32, None),                       # too few
    lambda: _C.reduce(0, A32, None, False, 1),             # too many
    lambda: _C.reduce(0, A32.tolist(), None, False),       # not an array
    lambda: _C.arg_reduce(1, False, A32, 2 ** 70, False),  # an int beyond int64
    lambda: _C.binary(0, A32, A32, "2"),                   # scalar not a number
    lambda: _C.binary(2 ** 40, A32, A32),                  # op code beyond int
    lambda: _C.unary(0, A32, 1.0, 2.0, 3.0, 4.0, 5.0),     # too many scalars
    lambda: _C.index_add(A32, np.array([0]), A32[:1], 0, True),  # alpha=True is not 1.0
    lambda: _C.matmul(A32),
    lambda: _C.linear(A32, A32, "bias"),
    lambda: _C.softmax(A32, dim=1, extra=2),               # unknown keyword
    lambda: _C.softmax(A32, 1, dim=1),                     # repeated
    lambda: _C.reduce(0, A32, dims=None, keepdim=False),   # an entry without keywords
    lambda: _C.fused_sgd([A32.copy()], [A32], None, "lr", 0.0, 0.0, False, 0.0, False, True),
])
def test_a_call_the_kit_does_not_take_returns_notimplemented(call):
    assert call() is NotImplemented


def test_keywords_and_positions_read_alike():
    x = np.random.default_rng(2).standard_normal((3, 5))
    by_pos = _C.softmax(x, 1)
    np.testing.assert_array_equal(_C.softmax(x=x, dim=1), by_pos)
    np.testing.assert_array_equal(_C.softmax(x, dim=1), by_pos)
    e = np.exp(x - x.max(1, keepdims=True))
    np.testing.assert_allclose(by_pos, e / e.sum(1, keepdims=True), rtol=1e-12)


def test_optional_trailing_arguments_may_be_left_out_or_none():
    b = np.ones(4, np.float32)
    add = _C.BINARY_OPS["add"]
    np.testing.assert_array_equal(_C.binary(add, A32, b), A32 + b)
    np.testing.assert_array_equal(_C.binary(add, A32, b, None), A32 + b)
    w = np.eye(4, dtype=np.float32)
    np.testing.assert_array_equal(_C.linear(A32, w, None), A32)
    np.testing.assert_array_equal(_C.linear(A32, w, b), A32 + 1)


def test_an_error_while_reading_an_argument_propagates():
    with pytest.raises(ZeroDivisionError, match="no truth value"):
        _C.reduce(_C.REDUCE_OPS["sum"], A32, None, _BadBool())
    with pytest.raises(ZeroDivisionError):
        _C.scatter(A32, np.zeros((1, 1), np.int64), A32[:1, :1], 0, _BadBool(), False)


def test_floating_dispatch_covers_both_float_types():
    # one TT_DISPATCH_FLOATING_TYPES site per entry: float32 stays float32, float64 float64, int64 declines
    for dt in (np.float32, np.float64):
        x = np.linspace(-1, 1, 40, dtype=dt).reshape(5, 8)
        t = np.array([0, 7, 3, 1, 2], np.int64)
        loss = _C.nll_loss(x, t, None, -100, "sum")
        assert loss.dtype == dt
        np.testing.assert_allclose(loss, -x[np.arange(5), t].sum(), rtol=1e-6)
        assert _C.matmul(x, x.T).dtype == dt
    assert _C.matmul(np.ones((2, 2), np.int64), np.ones((2, 2), np.int64)) is NotImplemented


# ---- per-call BLAS threading -------------------------------------------------------------------------------------

_THREADS_SCRIPT = r"""
import numpy as np, threadpoolctl
import tinytorch as tt
from tinytorch.backends.cpu import native

def blas():
    return [i["num_threads"] for i in threadpoolctl.threadpool_info() if i.get("user_api") == "blas"]

before = blas()
tt.set_num_threads(1)
a = tt.randn(300, 200)
b = tt.randn(4, 200, 64)
r1 = (a @ a.T).numpy(); r2 = (b.transpose(1, 2) @ b).numpy(); r3 = tt.nn.functional.linear(a, a).numpy()
after_tt = blas()
np.ones((256, 256)) @ np.ones((256, 256))
print(before, after_tt, blas(), native.blas_threads_per_call())
"""


def test_numpy_keeps_its_blas_threads_after_set_num_threads():
    import subprocess
    import sys
    if native.BLAS is None or not native.blas_threads_per_call():
        pytest.skip("NumPy's BLAS has no OpenBLAS thread functions: set_num_threads limits it process-wide")
    env = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS")}

    def run(script):
        out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120)
        assert out.returncode == 0, out.stderr
        return out.stdout.strip().splitlines()[-1]
    # NumPy's own count in a process without tinytorch (OpenBLAS's default: the machine's cores)
    default = run("import numpy, threadpoolctl; "
                  "print([i['num_threads'] for i in threadpoolctl.threadpool_info() if i.get('user_api') == 'blas'])")
    if default == "[1]":
        pytest.skip("NumPy's BLAS runs one thread by default here: a limit to 1 would not show")
    # NumPy's count after importing tinytorch, after tinytorch's GEMMs under set_num_threads(1), after NumPy's own
    assert run(_THREADS_SCRIPT) == f"{default} {default} {default} True"


def test_matmul_results_do_not_depend_on_the_thread_setting():
    import threadpoolctl
    from conftest import torch
    rng = np.random.default_rng(3)
    x = rng.standard_normal((4, 150, 130)).astype(np.float32)
    w = rng.standard_normal((90, 130)).astype(np.float32)
    want_mm = torch.matmul(torch.tensor(x), torch.tensor(w).T).numpy()
    want_lin = torch.nn.functional.linear(torch.tensor(x), torch.tensor(w)).numpy()
    before_threads = tinytorch.get_num_threads()
    blas_before = [i["num_threads"] for i in threadpoolctl.threadpool_info() if i.get("user_api") == "blas"]
    try:
        for n in (1, 2):
            tinytorch.set_num_threads(n)
            got_mm = (tinytorch.tensor(x) @ tinytorch.tensor(w).T).numpy()
            got_lin = tinytorch.nn.functional.linear(tinytorch.tensor(x), tinytorch.tensor(w)).numpy()
            np.testing.assert_allclose(got_mm, want_mm, rtol=1e-4, atol=1e-4)
            np.testing.assert_allclose(got_lin, want_lin, rtol=1e-4, atol=1e-4)
            if native.blas_threads_per_call():
                # the count a native GEMM set is put back once it returns
                blas_now = [i["num_threads"] for i in threadpoolctl.threadpool_info() if i.get("user_api") == "blas"]
                assert blas_now == blas_before
    finally:
        tinytorch.set_num_threads(before_threads)
