"""Differential cases for the bad-input fixes the generated fuzzer (tests/fuzz.py) found in torch.* functions and
Tensor methods named m..z (issue 32): each case is one expression run in PyTorch and in tinytorch with the same
tensors bound to ``x`` (3x4 float32), ``v`` (a 1-D float32 of 4) and ``m`` (the library). Both must raise the
same exception type with the same message, or both return equal results; an in-place call that raises must
leave ``x`` as it was."""
import numpy as np
import pytest

import tinytorch
from conftest import torch

CASES = [
    # polar / complex: tensor arguments, dtypes, out dtype
    "m.polar(x, x, out=m.empty(0))",
    "m.polar(x.long(), x.double())",
    "m.polar(x, 1.5)",
    "m.polar(1.5, x)",
    "m.polar(x, x.double())",
    "m.polar(x.bfloat16(), x)",
    "m.polar(x, x.bool())",
    "m.polar(x, x)",
    "m.complex(x, x.double())",
    "m.complex(x.int(), x)",
    # renorm: p, maxnorm, dtype
    "m.renorm(x.long(), -1, 0, -1)",
    "m.renorm(x, 1, 0, float('nan'))",
    "m.renorm(x, 1, 0, -9223372036854775807)",
    "m.renorm(x, float('nan'), 0, 1)",
    "m.renorm(x, float('-inf'), 0, 1)",
    "m.renorm(x.int(), 2, 0, 1)",
    "x.renorm_(2, 0, -1)",
    "x.renorm_(-3.0, 0, 1)",
    "m.renorm(x, 2, 1, 1.5)",
    # meshgrid: one dtype
    "m.meshgrid(v, v.long(), indexing='ij')",
    "m.meshgrid(v.bool(), v, indexing='xy')",
    "m.meshgrid(v, v, indexing='ij')",
    # movedim / moveaxis: matching lengths, no repeated dims
    "m.movedim(x, (0, 0), (1, 0))",
    "m.movedim(x, (0, 1), (1, 1))",
    "m.movedim(x, (), (1,))",
    "m.moveaxis(x, (0,), ())",
    "x.moveaxis((0, 1), (1, 0))",
    # dtypes PyTorch's kernels are not compiled for
    "m.xlogy(x.cfloat(), 2)",
    "m.xlogy(2, x.cfloat())",
    "m.xlogy(x, x.cdouble())",
    "x.cfloat().xlogy_(x)",
    "m.rad2deg(x.cfloat())",
    "m.deg2rad(x.cdouble())",
    "x.cfloat().rad2deg_()",
    "m.positive(x.bool())",
    "m.positive(x.long())",
    "m.mvlgamma(x.bool(), 1)",
    "m.mvlgamma(x.cfloat(), 1)",
    "x.cfloat().mvlgamma_(2)",
    "m.nansum(x.cfloat())",
    "m.nansum(x, dtype=m.complex64)",
    "x.nansum(dtype=m.complex128)",
    "m.unique(x.cfloat())",
    "m.unique(x.cfloat(), dim=0)",
    "m.unique_consecutive(x.cfloat())",
    "x.cfloat().unique()",
    # select_scatter / slice_scatter: src a tensor of the slice's shape, step a positive int
    "m.select_scatter(x, m.ones(3), 0, 0)",
    "m.select_scatter(x, 1.5, 0, 0)",
    "m.slice_scatter(x, m.ones(4), step=None)",
    "m.slice_scatter(x, m.ones(1, 4))",
    "m.slice_scatter(x, m.ones(3, 4), step=0)",
    "m.slice_scatter(x, m.ones(3, 4), step=-7)",
    "m.slice_scatter(x, None)",
    "m.slice_scatter(x, m.ones(1, 4), 0, 1, 2)",
    "m.slice_scatter(x, m.ones(3, 2), 1, step=2)",
    "x.slice_scatter(m.ones(2, 4), start=1)",
    # rrelu: finite bounds (out of place), lower <= upper, a floating dtype
    "m.rrelu(x.long())",
    "m.rrelu(x.cfloat())",
    "m.rrelu(x, lower=float('inf'))",
    "m.rrelu(x, upper=float('nan'))",
    "m.rrelu(x, lower=2)",
    "m.rrelu(x.long(), lower=2)",
    "m.rrelu(x, lower=float('inf'), training=True)",
    "m.rrelu_(x, lower=float('inf'))",
    "m.rrelu_(x, upper=float('nan'))",
    "m.rrelu_(x, upper=-1.0)",
    "m.rrelu_(x.bool())",
    "m.nn.functional.rrelu(x, lower=float('nan'))",
    "m.rrelu(x.half())",
    "m.rrelu(x)",
    # var / std and their _mean forms: unbiased a bool
    "m.std(x, 1)",
    "m.std(x, True)",
    "m.var(x, 0, False)",
    "m.var(x, (0, 1))",
    # pdist: p a non-negative float, a float32/float64 input
    "m.pdist(x.half())",
    "m.pdist(x, p=-1.0)",
    "m.pdist(x.cfloat())",
    "m.pdist(x, p=None)",
    "m.pdist(x, p=float('nan'))",
    "m.pdist(x, p='a')",
    "m.pdist(x.long(), p=-1)",
    "m.pdist(x, p=1)",
    # requires_grad_ takes a bool
    "x.requires_grad_(2)",
    "x.requires_grad_(None)",
    "x.requires_grad_()",
    # repeat_interleave: output_size must be the real size
    "x.repeat_interleave(2, output_size=2)",
    "x.repeat_interleave(2, output_size=-7)",
    "x.repeat_interleave(2, output_size=24)",
    "m.repeat_interleave(x, 2, dim=0, output_size=5)",
    "m.repeat_interleave(x, m.tensor([1, 2, 3]), dim=0, output_size=7)",
    "m.repeat_interleave(x, m.tensor([1, 2, 3]), dim=0, output_size=6)",
    # scatter_add / scatter: a tensor src (or scatter's value)
    "m.scatter_add(x, 0, m.zeros(1, 4).long(), None)",
    "m.scatter_add(x, 0, m.zeros(1, 4).long(), 1.5)",
    "m.scatter_add(x, 0, m.zeros(1, 4).long(), 'a')",
    "m.scatter_add(x, 0, m.zeros(1, 4).long(), [1.0, 2.0])",
    "m.scatter(x, 0, m.zeros(1, 4).long(), value=2.0)",
    "m.scatter(x, 0, m.zeros(1, 4).long(), 2.0)",
    # non-tensor inputs
    "m.resolve_neg(1.5)",
    "m.resolve_conj(None)",
    "m.resolve_conj(x)",
    "m.square(1.5)",
    # softmax: torch's spelling needs an int dim, nn.functional's picks one
    "m.softmax(x, 0)",
    "m.log_softmax(x, 1)",
    "m.nn.functional.softmax(x)",
    # unfold: int size and step
    "x.unfold(0, 1.5, 1)",
    "x.unfold(0, 2, float('nan'))",
    "x.unfold(0, 2, 1)",
    # trapezoid / trapz: no bool, a 1-D x as long as y along dim (and lined up with it)
    "m.trapezoid(x.bool())",
    "m.trapezoid(x, x.bool())",
    "m.trapz(x.long(), x.bool())",
    "m.trapezoid(x, dx=2.0, dim=1)",
    "m.trapezoid(v, x)",
    "m.trapezoid(x, m.ones(3))",
    "m.trapezoid(x, v ** 2)",
    "m.trapezoid(x, (v.repeat(3, 1) + 3) ** 2, dim=0)",
    "m.trapz(x, v[:3] ** 2, dim=0)",
    "m.trapz(v, v ** 2)",
    # shape and argument checks of rms_norm, pinverse, vander, channel_shuffle, triangular_solve
    "m.rms_norm(x, ())",
    "m.rms_norm(x, [])",
    "m.rms_norm(x, [4])",
    "m.pinverse(x, rcond=None)",
    "m.pinverse(x, rcond='a')",
    "m.pinverse(x, rcond=0.5)",
    "m.vander(v, N=1.5)",
    "m.vander(v, N=None)",
    "m.native_channel_shuffle(x, 2)",
    "m.nn.functional.channel_shuffle(x, 2)",
    "m.native_channel_shuffle(m.ones(1, 4, 2), 2)",
    "m.triangular_solve(m.ones(3), m.eye(3))",
    "m.triangular_solve(m.ones(3, 1), m.ones(3))",
]

# PyTorch's argument parser lists its overloads in these messages: only the exception type is compared
TYPE_ONLY = [
    "m.std(x, unbiased=2)",
    "m.std(x, 0, 2)",
    "x.var(unbiased='yes')",
    "m.var_mean(x, unbiased=2)",
    "m.std_mean(x, 0, unbiased='yes')",
    "x.repeat_interleave(2, output_size=1.5)",
    "x.scatter_add_(0, m.zeros(1, 4).long(), None)",
    "x.scatter(0, m.zeros(1, 4).long(), None)",
    "m.scatter(x, 0, m.zeros(1, 4).long(), None)",
    "m.softmax(x, None)",
    "x.softmax(None)",
    "x.log_softmax(None)",
    "m.trapezoid(x, m.ones(2, 3, 4))",
]


def _run(lib, expr):
    x = lib.tensor(np.arange(12, dtype=np.float32).reshape(3, 4) / 4 - 1)
    v = lib.tensor(np.arange(4, dtype=np.float32))
    before = x.detach().clone()
    try:
        return "ok", eval(expr, {"m": lib, "x": x, "v": v})
    except Exception as e:  # noqa: BLE001 - the exception is what is compared
        assert bool((x.detach() == before).all()), f"{expr} raised but changed x"
        return "raise", e


def _np(r):
    if isinstance(r, (tuple, list)):
        return [_np(t) for t in r]
    return r.detach().resolve_conj().numpy() if hasattr(r, "detach") else r


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
        a, b = _np(r1), _np(r2)
        if isinstance(a, list):
            assert len(a) == len(b)
            for p, q in zip(a, b):
                np.testing.assert_allclose(q, p, rtol=1e-5, atol=1e-6)
        else:
            np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-6)
