"""Differential cases for the bad-input fixes the generated fuzzer (tests/fuzz.py) found in the shape and indexing
ops (issue 32): masked_scatter, narrow_copy, unfold, chunk, split, fliplr, adjoint, h/v/dsplit, the stack family,
diag/diagonal, diff, index_copy/index_fill/index_add/index_reduce, take_along_dim, gather, scatter, roll, full,
lu, and tensors made from empty ndarrays. Each case is one expression run in PyTorch and in tinytorch with the
same tensors bound to ``x`` (4x4 float32), ``v`` (a 1-D float32 of 4), ``e`` (an empty 0x4 float32), ``i`` (int64
indices [1, 0]) and ``m`` (the library). Both must raise the same exception type with the same message, or both
return equal results (values, dtype, shape); an in-place call that raises must leave ``x`` as it was."""
import numpy as np
import pytest

import tinytorch
from conftest import torch

BIG = 2 ** 63

CASES = [
    # masked_scatter: the mask must be bool (checked after source's dtype); self broadcasts with the mask
    *(f"x.masked_scatter(m.ones(4, 4, dtype=m.{dt}), x)" for dt in
      ("uint8", "int8", "int16", "float16", "bfloat16", "float32", "float64", "complex64")),
    "x.masked_scatter_(m.ones(4, 4, dtype=m.uint8), x)",
    "x.masked_scatter(m.ones(4, 4, dtype=m.uint8), x.double())",
    "m.masked_scatter(x, m.ones(4, 4), x)",
    "v.masked_scatter(m.eye(4, dtype=m.bool), x)",
    "m.tensor(2.0).masked_scatter(m.eye(4, dtype=m.bool), x)",
    "x.masked_scatter(m.ones(2, 4, 4, dtype=m.bool), m.arange(32.0))",
    "v.masked_scatter_(m.tensor([True, False, True, False]), v + 10)",
    # narrow_copy: its own dim and length checks; int64 overflow of start/length is a ValueError
    *(f"x.narrow_copy({d}, 0, 1)" for d in (2, 3, 5, 2 ** 40, BIG - 1, -3)),
    *(f"m.narrow_copy(x, 0, {s}, {n})" for s, n in ((1, -1), (5, -1), (-1, -1), (2, -3), (1, 9), (1, 2))),
    f"x.narrow_copy(1, {BIG}, 1)",
    f"x.narrow_copy(1, 0, {BIG})",
    f"m.narrow_copy(x, 1, {2 ** 64}, 1)",
    f"m.narrow_copy(x, 1, {-BIG - 1}, 1)",
    f"x.narrow(1, {BIG}, 1)",
    f"m.narrow(x, 1, {2 ** 64}, 1)",
    f"x.narrow(1, {-BIG - 1}, 1)",
    # start / end / step are int64 outside the range factories (Scalars there)
    f"x.slice_scatter(x, end={BIG})",
    f"x.slice_scatter(x, start={BIG})",
    f"x.slice_scatter(x, start={-BIG - 1})",
    f"x.slice_scatter(x, step={BIG})",
    f"m.slice_scatter(x, x, step={-BIG - 1})",
    # unfold: a step so large that one window fits (its stride wraps as int64), and 0-d input
    *(f"x.unfold({d}, 2, {st})" for d in (0, 1) for st in (2 ** 62, BIG - 1, 2 ** 61, 3)),
    *(f"x.unfold({d}, 2, {st}).stride()" for d in (0, 1) for st in (2 ** 62, BIG - 1)),
    f"x.t().unfold(0, 2, {BIG - 1})",
    f"x.unfold(0, 2, {BIG})",
    f"x.unfold(0, 2, {2 ** 64})",
    f"x.unfold(0, 2, {-BIG - 1})",
    "m.tensor(3.0).unfold(0, 1, 2)",
    "m.tensor(3.0).unfold(-1, 0, 1)",
    "m.tensor(3.0).unfold(0, 2, 1)",
    # chunk: PyTorch's int64 split-size arithmetic; an empty dim gives `chunks` empty pieces
    *(f"x.chunk({c})" for c in (BIG - 1, BIG - 3, BIG - 4, 2 ** 62, 3)),
    *(f"m.unsafe_chunk(x, {c}, 1)" for c in (BIG - 1, 5)),
    *(f"m.chunk(m.zeros({s}), {c}, {d})" for s in ("0", "0, 4", "4, 0") for c in (1, 2, 3) for d in (0, -1)),
    "e.unsafe_chunk(2)",
    "v.split(-1)",
    "m.zeros(0).split(-2)",
    # fliplr / flipud / adjoint / mT / mH: rank checks, a 0-d tensor is its own transpose
    "m.fliplr(m.tensor(1.0))",
    "m.fliplr(v)",
    "v.fliplr()",
    "m.flipud(m.tensor(1.0))",
    "m.flipud(v)",
    "m.adjoint(v)",
    "v.adjoint()",
    "m.adjoint(m.tensor(1.0))",
    "m.tensor(1 + 2j).adjoint()",
    "m.tensor(1 + 2j).mH",
    "m.tensor(1 + 2j).mT",
    "(x * 1j).adjoint()",
    # h/v/dsplit by 0; the stack family refuses an empty list
    "m.hsplit(x, 0)",
    "m.vsplit(x, 0)",
    "m.dsplit(m.zeros(2, 2, 4), 0)",
    "m.hsplit(v, 0)",
    "x.vsplit(3)",
    *(f"m.{f}({empty})" for f in ("hstack", "vstack", "dstack", "column_stack", "row_stack")
      for empty in ("[]", "()")),
    # diag / diagonal: int offsets and dims only
    *(f"m.diag(x, {a})" for a in ("1.5", "True", "'a'", "1")),
    "v.diag(-1)",
    "x.diagonal(m.tensor(1))",
    # diff: prepend / append of input's rank (after the dim check)
    *(f"m.diff(x, {k}=m.zeros({s}))" for k in ("prepend", "append") for s in ("3", "4, 1", "1, 4", "2, 4, 4")),
    "m.diff(x, dim=0, append=m.zeros(4))",
    "m.diff(x, dim=5, prepend=m.zeros(3))",
    # index_copy / index_fill on inputs with no elements (PyTorch's restrided write), negative / 0-d indices
    *(f"m.zeros({s}).{f}({d}, m.tensor([1, 0, 2, 3, 1]), {a})"
      for s, d in (("0", 0), ("0, 4", 0), ("4, 0", -1), ("2, 0, 3", 1), ("4, 0", 0), ("0, 0", 0), ("2, 0, 3", 0))
      for f, a in (("index_fill", "1.5"), ("index_fill_", "1.5"))),
    "m.zeros(0).index_copy(0, m.tensor([1, 0, 2, 3, 1]), m.ones(5))",
    "m.zeros(0).index_copy_(0, m.tensor([1, 0, 2, 3, 1]), m.ones(5))",
    "m.zeros(0, 4).index_copy(0, m.tensor([1, 0, 2, 3, 1]), m.ones(5, 4))",
    "m.zeros(4, 0).index_copy(1, m.tensor([1, 0, 2, 3, 1]), m.ones(4, 5))",
    "m.zeros(4, 0).index_copy(0, m.tensor([1, 0, 2, 3]), m.ones(4, 0))",
    "x.index_copy(0, m.tensor([-1]), m.ones(1, 4))",
    "x.index_copy(1, m.tensor([4]), m.ones(4, 1))",
    "x.index_copy(1, m.tensor(0), m.ones(4, 1))",
    "m.tensor(2.0).index_copy(0, m.tensor([-1]), m.ones(1))",
    "m.tensor(2.0).index_copy(0, m.tensor([0]), m.tensor(5.0))",
    "m.tensor(2.0).index_fill(0, m.tensor([0]), 1.5)",
    "m.tensor(2.0).index_fill_(-1, m.tensor([-1]), 1.5)",
    # index_add: alpha is a Number (or 0-d tensor); an empty matrix reads no index; source before the bounds
    *(f"x.index_add(0, i, m.ones(2, 4), alpha={a})" for a in ("'a'", "1j", "True", "2.5", "m.tensor(2.0)", "1 + 0j")),
    "x.long().index_add(0, i, m.ones(2, 4).long(), alpha=1j)",
    "x.index_add_(0, i, m.ones(2, 4), alpha='a')",
    *(f"m.zeros({s}).index_add({d}, m.tensor([1, 0, 2, 3, 1]), {src})"
      for s, d in (("4, 0", -1), ("0, 4", 0), ("0", 0), ("0, 0", 0))
      for src in ("m.ones(3)", "m.ones(5).double()", "1.0")),
    "m.zeros(4, 0).index_add(1, m.tensor([1, 0, 2, 3, 1]), m.ones(4, 5))",
    "m.zeros(0, 4).index_add(0, m.tensor([1, 0, 2, 3, 1]), m.ones(5, 4))",
    # index_reduce: PyTorch's order of checks; 0-d input
    *(f"x.index_reduce({d}, m.tensor({idx}), m.ones({src}, dtype=m.{dt}), {red!r})"
      for idx in ("[[0, 1]]", "[0, 1]", "[9]", "[-1, 0]", "[[0.0, 1]]", "[0.0, 1]")
      for red in ("sum", "prod", "amax") for dt in ("float32", "float64")
      for d, src in ((0, "2, 4"), (5, "2, 4"), (-1, "4, 2"), (0, "3, 4"))),
    "x.index_reduce(0, i, m.ones(2, 4), 1)",
    "x.scatter_reduce(0, i.reshape(2, 1), m.ones(2, 1), 1)",
    "x.scatter_reduce_(0, i.reshape(2, 1), m.ones(2, 1), 1)",
    "x.scatter_reduce(0, i.reshape(2, 1), m.ones(2, 1), 'add')",
    "m.tensor(3.0).index_reduce(0, m.tensor([0]), m.tensor([2.0]), 'prod')",
    "m.tensor(3.0).index_reduce(0, m.tensor(0), m.tensor(2.0), 'prod')",
    "m.tensor(3.0).index_reduce(0, m.tensor([0]), m.tensor(2.0), 'mean', include_self=False)",
    "m.tensor([3.0]).index_reduce(0, m.tensor([0]), m.tensor(2.0), 'amin')",
    # take_along_dim: rank and dtype checks with a dim; views of input and indices without one
    *(f"m.take_along_dim(m.zeros({s}), m.tensor({idx}), {d})" for s in ("0", "()", "4, 0", "0, 4")
      for idx in ("[[1, 0], [2, 3]]", "[1]", "[0]", "0") for d in ("None", "0", "-1")),
    "m.take_along_dim(x.t(), i.reshape(1, 2).t())",
    "m.take_along_dim(x, i.reshape(1, 2).t())",
    "m.take_along_dim(x, m.tensor([[1, 0], [2, 3]]).t(), 1)",
    "m.take_along_dim(x, m.tensor([[1, 0], [2, 3]]).int())",
    "m.take_along_dim(x, m.tensor([[1, 0], [2, 3]]).int(), 0)",
    "m.take_along_dim(x, m.tensor([[1, 0], [2, 3]]).float(), 0)",
    "x.take_along_dim(m.tensor([[1, 3, 2, 0]]), 0)",
    "m.gather(m.zeros(0), 0, m.tensor([1, 0, 3]))",
    "m.gather(v, 0, m.tensor([1, 7, 5]))",
    # scatter: a Number value must fit the input's dtype; int64 overflow of a value
    *(f"x.scatter(0, i.reshape(2, 1), {a})" for a in ("1j", f"{BIG}", "2.5", "True")),
    f"m.scatter(x, 0, i.reshape(2, 1), {2 ** 64})",
    f"x.scatter_(0, i.reshape(2, 1), {-BIG - 1})",
    "x.long().scatter(0, i.reshape(2, 1), value=1j)",
    "x.scatter(0, i.reshape(2, 1), 3.0, reduce='add')",
    # roll: shifts below -2**62 are symbolic in PyTorch; int-list entries past int64
    f"x.roll({BIG})",
    # full / full_like: PyTorch's checked conversion of the fill value
    *(f"m.full((2,), {v}, dtype=m.{dt})" for dt in ("uint8", "int8", "int32", "int64", "bool", "float16",
                                                     "bfloat16", "float32", "complex64")
      for v in ("-1", "256", "-129", "-256", f"{BIG}", f"{-BIG}", "float('inf')", "float('nan')", "1e300",
                "300.5", "-0.5", "1j", "(2+0j)", "70000.0", "complex(1, 1e300)")),
    f"m.full((2,), {BIG})",
    f"m.full((2,), {BIG - 1})",
    "m.full((2,), 1e300)",
    f"m.full_like(x.long(), {BIG})",
    "m.full_like(x, 1e300)",
    "m.full_like(x.byte(), -1)",
    # lu / lu_factor / lu_unpack of matrices with an empty dim
    *(f"[t.shape for t in m.randn({s}).lu()]" for s in ("0, 4", "4, 0", "0, 0", "2, 0, 3", "0, 3, 3")),
    *(f"[t.dtype for t in m.randn({s}).lu(get_infos=True)]" for s in ("0, 4", "2, 3, 0")),
    *(f"m.linalg.lu_factor(m.ones({s}))" for s in ("0, 4", "4, 0", "2, 0, 3")),
    *(f"m.linalg.lu(m.ones({s}))" for s in ("0, 4", "4, 0", "0, 0", "2, 3, 0")),
    # a tensor made from an empty ndarray keeps NumPy's strides (and every empty tensor is contiguous)
    *(f"m.{f}(np.zeros({s}, np.float32)).{what}" for f in ("tensor", "from_numpy", "as_tensor")
      for s in ("(0, 4)", "(4, 0)", "(0,)", "(2, 0, 3)")
      for what in ("stride()", "is_contiguous()", "contiguous().stride()",
                   "unsqueeze(0).stride()", "sum(0).stride()")),
    "e.stride(-1)",
    "e.stride()",
]

# PyTorch's argument parser lists its overloads (or a C++ backtrace) in these messages: only the type is compared
TYPE_ONLY = [
    # (expand's message names the tensor type in C++ spelling)
    "m.tensor(2.0).masked_scatter_(m.eye(4, dtype=m.bool), x)",
    "x.masked_scatter_(m.ones(2, 4, 4, dtype=m.bool), m.arange(32.0))",
    # (PyTorch numbers a method's arguments without self, and omits the position of a keyword; one function
    # here serves both spellings)
    *(f"v.diag({a})" for a in ("1.5", "True")),
    *(f"x.diagonal({a})" for a in ("1.5", "True")),
    "m.diagonal(x, offset=1.5)",
    "x.diagonal(0, True)",
    "x.diagonal(0, 0, 1.5)",
    # (PyTorch's message here is its build path's)
    f"x.roll({-BIG})",
    f"x.roll({-2 ** 62 - 1}, 0)",
    "x.scatter(0, i.reshape(2, 1), 'a')",
    "x.scatter_(0, i.reshape(2, 1), 'a')",
    "m.scatter(x, 0, i.reshape(2, 1), 'a')",
    "x.scatter(0, i.reshape(2, 1), value='a')",
    "x.scatter_(0, i.reshape(2, 1), [1.0, 2.0])",
    "x.scatter(0, i.reshape(2, 1), (1, 2))",
    *(f"x.roll({s}, {d})" for s in (f"[{BIG}]", f"[1, {BIG}]", f"({BIG},)", f"[0, {-BIG - 1}]")
      for d in ("None", "0", "(0,)", "(0, 1)")),
    f"m.roll(x, [{BIG}])",
    f"x.roll(1, [{BIG}])",
    f"x.roll(1, [0, {BIG}])",
]


def _run(lib, expr):
    x = lib.tensor(np.arange(16, dtype=np.float32).reshape(4, 4) / 4 - 1)
    v = lib.tensor(np.arange(4, dtype=np.float32))
    e = lib.zeros(0, 4)
    i = lib.tensor([1, 0])
    before = x.detach().clone()
    lib.manual_seed(0)
    try:
        return "ok", eval(expr, {"m": lib, "x": x, "v": v, "e": e, "i": i, "np": np})
    except Exception as ex:  # noqa: BLE001 - the exception is what is compared
        assert bool((x.detach() == before).all()), f"{expr} raised but changed x"
        return "raise", ex


def _plain(r):
    """A comparable form of a result: tensors as (shape, dtype name, values), sequences element-wise."""
    if isinstance(r, (tuple, list)):
        return [_plain(t) for t in r]
    if hasattr(r, "detach"):
        t = r.detach().resolve_conj()
        a = (t.float() if str(t.dtype).endswith("bfloat16") else t).numpy()
        return tuple(r.shape), str(r.dtype).split(".")[-1], a
    if hasattr(r, "is_floating_point") and hasattr(r, "itemsize"):  # a dtype
        return str(r).split(".")[-1]
    return tuple(r) if hasattr(r, "__len__") and not isinstance(r, str) else r


def _same(a, b, expr):
    if isinstance(a, list):
        assert isinstance(b, list) and len(a) == len(b), f"{expr}: {a!r} vs {b!r}"
        for p, q in zip(a, b):
            _same(p, q, expr)
    elif isinstance(a, tuple) and len(a) == 3 and isinstance(a[2], np.ndarray):
        assert a[:2] == b[:2], f"{expr}: torch {a[:2]}, tinytorch {b[:2]}"
        np.testing.assert_allclose(b[2].astype(np.complex128), a[2].astype(np.complex128), rtol=1e-5, atol=1e-6,
                                   equal_nan=True, err_msg=expr)
    else:
        assert a == b, f"{expr}: torch {a!r}, tinytorch {b!r}"


@pytest.mark.parametrize("expr", TYPE_ONLY)
def test_same_exception_type(expr):
    k1, r1 = _run(torch, expr)
    k2, r2 = _run(tinytorch, expr)
    assert k1 == k2 == "raise", f"torch: {k1} {r1!r}; tinytorch: {k2} {r2!r}"
    assert type(r2).__name__ == type(r1).__name__, f"torch {r1!r}; tinytorch {r2!r}"


@pytest.mark.parametrize("expr", CASES)
def test_matches_torch(expr):
    k1, r1 = _run(torch, expr)
    k2, r2 = _run(tinytorch, expr)
    assert k1 == k2, f"torch: {k1} {r1!r}; tinytorch: {k2} {r2!r}"
    if k1 == "raise":
        assert type(r2).__name__ == type(r1).__name__, f"torch {r1!r}; tinytorch {r2!r}"
        assert str(r2) == str(r1)
    else:
        _same(_plain(r1), _plain(r2), expr)


def test_masked_scatter_broadcast_gradient():
    """The out-of-place masked_scatter broadcasts self with the mask: self's gradient sums over the new dim."""
    grads = []
    for lib in (torch, tinytorch):
        x = lib.tensor(np.arange(4, dtype=np.float32), requires_grad=True)
        mask = lib.tensor(np.array([[True, False, False, True], [False, False, True, False]]))
        x.masked_scatter(mask, lib.arange(8.0)).sum().backward()
        grads.append(x.grad.numpy())
    np.testing.assert_array_equal(grads[1], grads[0])


def test_index_add_on_empty_matrix_keeps_graph():
    """An index_add into a matrix with no elements still records source's gradient (zeros of its shape)."""
    out = []
    for lib in (torch, tinytorch):
        s = lib.ones(5, 0, requires_grad=True)
        r = lib.zeros(4, 0).index_add(0, lib.tensor([1, 0, 2, 3, 1]), s)
        r.sum().backward()
        out.append((r.requires_grad, tuple(s.grad.shape)))
    assert out[1] == out[0]
