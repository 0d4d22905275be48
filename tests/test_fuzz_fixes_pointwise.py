"""Differential cases for the pointwise and binary-op differences the generated fuzzer (tests/fuzz.py) found
(issue 32): each case is one expression run against tinytorch and PyTorch, which must give the same value,
dtype and shape, or the same exception type (and message where PyTorch's is given)."""
import math
import time

import numpy as np
import pytest

import tinytorch as tt
from conftest import torch

inf, nan = math.inf, math.nan

# (id, expression over the library ``T``); compared for value/dtype, or for exception type + message
CASES = [
    # a Number where PyTorch's signature wants a Tensor
    ("eq-number-input", "T.eq(1.5, T.ones(2))"),
    ("greater-number-input", "T.greater(1.5, T.ones(2))"),
    ("not_equal-number-input", "T.not_equal(1.5, T.ones(2))"),
    ("fmod-number-input", "T.fmod(1.5, T.ones(2))"),
    ("mul-number-input", "T.mul(1.5, T.ones(2))"),
    ("remainder-number-input", "T.remainder(1.5, T.ones(2))"),
    ("bitwise_and-number-input", "T.bitwise_and(3, T.ones(2, dtype=T.int64))"),
    ("rsub-number-input", "T.rsub(1.5, T.ones(2))"),
    ("fmax-number-input", "T.fmax(1.5, T.ones(2))"),
    ("fmin-number-other", "T.fmin(T.ones(2), 1.5)"),
    ("hypot-number-input", "T.hypot(1.5, T.ones(2))"),
    ("hypot-number-other", "T.hypot(T.ones(2), 1.5)"),
    ("hypot-method-number", "T.ones(2).hypot(1.5)"),
    ("hypot_-number", "T.ones(2).hypot_(1.5)"),
    ("gcd-number-other", "T.gcd(T.ones(2, dtype=T.int64), 3)"),
    ("gcd-method-number", "T.ones(2, dtype=T.int64).gcd(1.5)"),
    ("lcm-method-number", "T.ones(2, dtype=T.int64).lcm(1.5)"),
    ("ldexp-number-other", "T.ldexp(T.ones(2), 1.5)"),
    ("ldexp-method-number", "T.ones(2).ldexp(1.5)"),
    ("addr-number-input", "T.addr(1.5, T.ones(2), T.ones(2))"),
    # alpha
    ("add-alpha-str", "T.add(T.ones(2), T.ones(2), alpha='a')"),
    ("add_-alpha-str", "T.ones(2).add_(T.ones(2), alpha='a')"),
    ("sub-alpha-str", "T.sub(T.ones(2), T.ones(2), alpha='a')"),
    ("sub_-alpha-none", "T.ones(2).sub_(T.ones(2), alpha=None)"),
    ("add-alpha-0d", "T.add(T.ones(2), T.ones(2), alpha=T.tensor(2.))"),
    # ints past int64 as a Scalar exponent
    ("ipow-2**64", "T.ones(2).__ipow__(2**64)"),
    ("ipow-neg", "T.ones(2).__ipow__(-2**63 - 1)"),
    ("ipow-2**63", "T.ones(2).__ipow__(2**63)"),
    ("pow_-2**64", "T.ones(2).pow_(2**64)"),
    # dtypes
    ("polygamma-complex-1", "T.polygamma(1, T.ones(2, dtype=T.complex64))"),
    ("polygamma-complex-3", "T.polygamma(3, T.ones(2, dtype=T.complex128))"),
    ("polygamma_-complex", "T.ones(2, dtype=T.complex64).polygamma_(2)"),
    ("ldexp_-complex-other", "T.ones(2).ldexp_(T.ones(2, dtype=T.complex64))"),
    ("ldexp_-int-self", "T.ones(2, dtype=T.int64).ldexp_(T.ones(2))"),
    ("ldexp-half-input", "T.ldexp(T.ones(2, dtype=T.float16), T.tensor([0.3, 1.7]))"),
    ("ldexp-bf16-input", "T.ldexp(T.ones(2, dtype=T.bfloat16), T.tensor([0.3, 1.7]))"),
    ("ldexp-half-other", "T.ldexp(T.tensor([1.3, -2.]), T.tensor([0.3, 1.7], dtype=T.float16))"),
    ("ldexp-f64-other", "T.ldexp(T.ones(2), T.tensor([0.3, 1.7], dtype=T.float64))"),
    ("ldexp-complex-other", "T.ldexp(T.ones(2), T.tensor([0.3, 1.7], dtype=T.complex64))"),
    ("ldexp-c128-input", "T.ldexp(T.tensor([0.3, -1.1, 2.], dtype=T.complex128), T.tensor([0.37, 1.9, -2.3]))"),
    ("ldexp-f64-input", "T.ldexp(T.tensor([0.3, -1.1, 2.], dtype=T.float64), T.tensor([0.37, 1.9, -2.3]))"),
    ("ldexp-int", "T.ldexp(T.ones(2, dtype=T.int64), T.ones(2, dtype=T.int64))"),
    ("ldexp_-half", "T.ones(2, dtype=T.float16).ldexp_(T.tensor([0.3, 1.7]))"),
    ("float_power-complex-input", "T.float_power(T.tensor([1j, 2.]), T.tensor([2., 0.5]))"),
    ("float_power-complex-exp", "T.float_power(T.tensor([1., 2.]), T.tensor([1j, 2], dtype=T.complex64))"),
    ("nansum-int8", "T.nansum(T.tensor([1, 2, 100], dtype=T.int8))"),
    ("nansum-bool", "T.nansum(T.tensor([True, True]))"),
    ("nansum-uint8-dim", "T.nansum(T.tensor([[200, 100]], dtype=T.uint8), 1)"),
    ("nansum-float", "T.nansum(T.tensor([1., nan]))"),
    # values: overflow, half types, mixed dtypes
    ("hypot-huge", "T.hypot(T.tensor([1e38, 3., 0.]), T.tensor([1., 4., 0.]))"),
    ("hypot-int8", "T.hypot(T.tensor([100, 3, -90], dtype=T.int8), T.tensor([1., 4., 2.]))"),
    ("hypot-half-other", "T.hypot(T.tensor([0.3, 3.]), T.tensor([1.7, 4.], dtype=T.float16))"),
    ("hypot-half", "T.hypot(T.tensor([0.3, 3.], dtype=T.float16), T.tensor([1.7, 4.], dtype=T.float16))"),
    ("hypot-bf16", "T.hypot(T.tensor([0.3, 3.], dtype=T.bfloat16), T.tensor([1.7, 4.], dtype=T.bfloat16))"),
    ("hypot-inf-nan", "T.hypot(T.tensor([inf, nan, 0., -inf]), T.tensor([nan, 1., 0., 2.]))"),
    ("hypot_-huge", "T.tensor([1e38, 2.]).hypot_(T.tensor([1e38, 1.]))"),
    ("logaddexp2-half-other", "T.logaddexp2(T.tensor([0.3, 3.]), T.tensor([1.7, 4.], dtype=T.float16))"),
    ("logaddexp2-bf16", "T.logaddexp2(T.tensor([0.3, 3.], dtype=T.bfloat16), T.tensor([1.7, 4.], dtype=T.bfloat16))"),
    ("logaddexp2-f64", "T.logaddexp2(T.tensor([0.3, 3.], dtype=T.float64), T.tensor([1.7, 4.]))"),
    ("addcmul-f64-input", "T.addcmul(T.zeros(2, dtype=T.float64), T.tensor([0.1, 0.3]), T.tensor([0.7, 0.9]), value=3)"),
    ("addcdiv-c128-input", "T.addcdiv(T.zeros(2, dtype=T.complex128), T.tensor([0.1, 0.3]), T.tensor([0.7, 0.9]))"),
    ("addcmul_-f64", "T.zeros(2, dtype=T.float64).addcmul_(T.tensor([0.1, 0.3]), T.tensor([0.7, 0.9]))"),
    ("addr-f64-input", "T.addr(T.zeros(2, 2, dtype=T.float64), T.tensor([0.1, 0.3]), T.tensor([0.7, 0.9]), alpha=3)"),
    ("rtruediv-half", "T.tensor([0.3, -1.7], dtype=T.float16).__rtruediv__(T.tensor([0.1, 0.7]))"),
    # values: inf and NaN
    ("addmm-alpha-inf", "T.addmm(T.zeros(2, 2), T.tensor([[1., 0.], [3, -4]]), T.tensor([[1., 2.], [3, -4]]), alpha=inf)"),
    ("addmm_-alpha-ninf", "T.ones(2, 2).addmm_(T.tensor([[1., 2.], [3, -4]]), T.tensor([[1., 2.], [3, -4]]), alpha=-inf)"),
    ("addmm-alpha-nan", "T.addmm(T.zeros(2, 2), T.ones(2, 3), T.ones(3, 2), alpha=nan)"),
    ("addmm-alpha-finite", "T.addmm(T.ones(2, 2), T.tensor([[1., 2.], [3, -4]]), T.tensor([[1., 2.], [3, -4]]), alpha=2.5)"),
    ("lerp-inf-scalar", "T.lerp(T.tensor([inf, -inf, 1.]), T.tensor([1., 1., 2.]), 0.7)"),
    ("lerp-inf-small-w", "T.lerp(T.tensor([inf, -inf, 1.]), T.tensor([1., 1., 2.]), 0.2)"),
    ("lerp-inf-tensor", "T.lerp(T.tensor([inf, -inf, 1.]), T.tensor([1., 1., 2.]), T.tensor([0.2, 0.7, -3.]))"),
    ("lerp_-inf", "T.tensor([inf, -inf]).lerp_(T.tensor([1., 1.]), 0.9)"),
    ("logit-eps-nan", "T.logit(T.tensor([0.3, 1.5, -1.]), eps=nan)"),
    ("logit-eps", "T.logit(T.tensor([0.3, 1.5, -1.]), eps=0.1)"),
    ("hardshrink-nan-x", "T.nn.functional.hardshrink(T.tensor([nan, 0.2, -1.]))"),
    ("hardshrink-nan-lambd", "T.nn.functional.hardshrink(T.tensor([nan, 0.2, -1.]), nan)"),
    ("complex-inf-imag", "T.complex(T.tensor([1., 2.]), T.tensor([inf, -inf]))"),
    ("complex-inf-real", "T.complex(T.tensor([inf, 2.], dtype=T.float64), T.tensor([3., -inf], dtype=T.float64))"),
    ("polar-inf", "T.polar(T.tensor([inf, -inf, 1.]), T.tensor([-1., 2., 0.5]))"),
    ("digamma-inf", "T.digamma(T.tensor([inf, 2., 0., -inf]))"),
    ("digamma_-inf", "T.tensor([inf, 3.]).digamma_()"),
    ("i0-huge", "T.i0(T.tensor([1e38, -1e38, 2., 100.]))"),
    ("i0-half", "T.i0(T.tensor([2.9, 2.95, 3.0, 2.5, 40.], dtype=T.float16))"),
    ("i1e-bf16", "T.special.i1e(T.tensor([2.9, 2.95, 3.0, 2.5, 40.], dtype=T.bfloat16))"),
    ("i0-inf", "T.i0(T.tensor([inf, -inf, 1.]))"),
    ("i1-inf", "T.special.i1(T.tensor([inf, -inf, 1.]))"),
    ("i0_-huge", "T.tensor([1e38, 2.]).i0_()"),
    ("i1-huge", "T.special.i1(T.tensor([1e38, -1e38, 2.]))"),
    ("igamma-huge-x", "T.igamma(T.tensor([0.5, 2., 5.]), T.tensor([1e38, 1e38, 1e38]))"),
    ("igammac-huge-x", "T.igammac(T.tensor([0.5, 2., 5.]), T.tensor([1e38, 1e38, 3e38]))"),
    ("igamma-huge-a", "T.igamma(T.tensor([1e38, 1e38, 3.], dtype=T.float64), T.tensor([1., 1e38, 4.], dtype=T.float64))"),
]


def _run(lib, src):
    try:
        return eval(src, {"T": lib, "inf": inf, "nan": nan}), None
    except Exception as e:  # noqa: BLE001 - the exception is the result compared
        return None, e


def _np(t):
    t = t.detach()
    if str(t.dtype).endswith("bfloat16"):
        t = t.float()
    return t.numpy() if hasattr(t, "numpy") else np.asarray(t)


_TOL = {"float16": 1e-3, "bfloat16": 1.6e-2, "float32": 2e-5, "complex64": 2e-5}


@pytest.mark.parametrize("src", [c[1] for c in CASES], ids=[c[0] for c in CASES])
def test_matches_torch(src):
    t0 = time.time()
    ours, our_err = _run(tt, src)
    assert time.time() - t0 < 5, "hang-like slowness"
    ref, ref_err = _run(torch, src)
    if ref_err is not None:
        assert our_err is not None, f"torch raises {type(ref_err).__name__}: {ref_err}; tinytorch returns {ours}"
        assert type(our_err).__name__ == type(ref_err).__name__, (our_err, ref_err)
        assert str(our_err) == str(ref_err)
        return
    assert our_err is None, f"tinytorch raises {our_err!r}; torch returns {ref}"
    assert str(ours.dtype) == str(ref.dtype)
    assert tuple(ours.shape) == tuple(ref.shape)
    rtol = _TOL.get(str(ref.dtype).replace("torch.", ""), 1e-7)
    np.testing.assert_allclose(_np(ours), _np(ref), rtol=rtol, atol=rtol, equal_nan=True)


def test_subtract_alpha_is_a_type_error():
    # PyTorch words ``subtract``'s parse error as an overload mismatch; the exception type is what matters
    with pytest.raises(TypeError):
        torch.subtract(torch.ones(2), torch.ones(2), alpha="a")
    with pytest.raises(TypeError):
        tt.subtract(tt.ones(2), tt.ones(2), alpha="a")


def test_bad_alpha_leaves_self_untouched():
    x = tt.ones(2)
    with pytest.raises(TypeError):
        x.add_(tt.ones(2), alpha="a")
    assert x.tolist() == [1.0, 1.0]


def test_ldexp_inplace_refusal_leaves_self_untouched():
    x = tt.ones(2)
    with pytest.raises(RuntimeError):
        x.ldexp_(tt.ones(2, dtype=tt.complex64))
    assert x.tolist() == [1.0, 1.0]


@pytest.mark.parametrize("lib", ["tt", "torch"])
def test_hypot_and_lerp_gradients(lib):
    T = tt if lib == "tt" else torch
    a = T.tensor([3.0, 0.5, -2.0], requires_grad=True)
    b = T.tensor([4.0, 1.5, 1.0], requires_grad=True)
    w = T.tensor([0.2, 0.7, 0.5], requires_grad=True)
    (T.hypot(a, b).sum() + T.lerp(a, b, w).sum()).backward()
    grads = [g.grad.tolist() for g in (a, b, w)]
    ta = torch.tensor([3.0, 0.5, -2.0], requires_grad=True)
    tb = torch.tensor([4.0, 1.5, 1.0], requires_grad=True)
    tw = torch.tensor([0.2, 0.7, 0.5], requires_grad=True)
    (torch.hypot(ta, tb).sum() + torch.lerp(ta, tb, tw).sum()).backward()
    np.testing.assert_allclose(grads, [g.grad.tolist() for g in (ta, tb, tw)], rtol=1e-5)
