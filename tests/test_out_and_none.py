"""``out=`` and explicit ``None`` arguments against PyTorch: one rule each, applied by the surface to every public
function (``_surface.translated_errors`` and ``_dispatch.write_out``).

``out=``: the result is written into ``out`` (resized when its shape differs, with PyTorch's deprecation warning
when it had elements; a NumPy-borrowed one cannot grow), the dtype must cast without changing kind, a tuple result
takes a tuple of as many tensors, a factory takes ``out``'s dtype, and no argument may require grad.
``None``: a parameter whose PyTorch type is not optional (a required tensor, a number with a numeric default, an
overloaded ``dim``/``unbiased``/``x``/``dx``) refuses None with a TypeError."""
import warnings

import numpy as np
import pytest

import tinytorch as tt
from conftest import torch


def _run(L, fn):
    """(kind, payload): ("ok", (values, shape, dtype name, out values, warned)) or ("raise", exception type name)."""
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        try:
            r = fn(L)
        except Exception as e:  # noqa: BLE001 - the type is what is compared
            return "raise", type(e).__name__
    resized = any("was resized" in str(x.message) for x in w)
    rs = r if isinstance(r, tuple) else (r,)
    return "ok", (tuple((np.round(np.asarray(x.detach().numpy()), 5).tolist(), tuple(x.shape), str(x.dtype).split(".")[-1])
                        for x in rs), resized)


def _x(L):
    return L.tensor([[1.5, -2.0, 3.25], [0.5, 4.0, -1.0]])


OUT_CASES = {
    "add-empty": lambda L: L.add(_x(L), 1, out=L.empty(0)),
    "add-resize-warns": lambda L: L.add(_x(L), 1, out=L.empty(2)),
    "add-same-shape": lambda L: L.add(_x(L), 1, out=L.zeros(2, 3)),
    "add-float-into-double": lambda L: L.add(_x(L), 1, out=L.zeros(2, 3, dtype=L.float64)),
    "add-float-into-long": lambda L: L.add(_x(L), 1, out=L.zeros(2, 3, dtype=L.int64)),
    "eq-bool-into-long": lambda L: L.eq(_x(L), 1.5, out=L.empty(0, dtype=L.int64)),
    "eq-bool-into-float": lambda L: L.eq(_x(L), 1.5, out=L.empty(0)),
    "add-long-into-bool": lambda L: L.add(L.tensor([1, 2]), 1, out=L.empty(0, dtype=L.bool)),
    "mean-dim": lambda L: L.mean(_x(L), 1, out=L.empty(5)),
    "clamp-min": lambda L: L.clamp_min(_x(L), 0.0, out=L.empty(0)),
    "max-all": lambda L: L.max(_x(L), out=L.empty(0)),
    "max-dim-tuple": lambda L: L.max(_x(L), 1, out=(L.empty(0), L.empty(0, dtype=L.int64))),
    "min-dim-tuple": lambda L: L.min(_x(L), 0, out=(L.empty(0), L.empty(0, dtype=L.int64))),
    "max-dim-tensor-not-tuple": lambda L: L.max(_x(L), 1, out=L.empty(0)),
    "max-dim-short-tuple": lambda L: L.max(_x(L), 1, out=(L.empty(0),)),
    "frexp-single-tensor": lambda L: L.frexp(_x(L), out=L.empty(0)),
    "add-list-out": lambda L: L.add(_x(L), 1, out=[L.empty(0)]),
    "matmul": lambda L: L.matmul(_x(L), _x(L).t(), out=L.empty(0)),
    "cat": lambda L: L.cat([_x(L), _x(L)], out=L.empty(0)),
    "norm-positional-out": lambda L: L.norm(_x(L), 2, None, False, L.empty(0)),
    "normalize": lambda L: L.nn.functional.normalize(_x(L), out=L.empty(0)),
    "arange-int32": lambda L: L.arange(5, out=L.empty(0, dtype=L.int32)),
    "zeros-long": lambda L: L.zeros(2, 2, out=L.empty(0, dtype=L.int64)),
    "full-long": lambda L: L.full((2,), 7, out=L.empty(0, dtype=L.int64)),
    "linspace-double": lambda L: L.linspace(0, 1, 5, out=L.empty(0, dtype=L.float64)),
    "from-numpy-cannot-grow": lambda L: L.add(_x(L), 1, out=L.from_numpy(np.zeros(2, np.float32))),
    "from-numpy-fits": lambda L: L.add(_x(L), 1, out=L.from_numpy(np.zeros((2, 3), np.float32))),
    "requires-grad-input": lambda L: L.add(_x(L).requires_grad_(), 1, out=L.empty(0)),
    "requires-grad-in-list": lambda L: L.cat([_x(L).requires_grad_()], out=L.empty(0)),
    "zeros-like-has-no-out": lambda L: L.zeros_like(_x(L), out=L.empty(0)),
}


@pytest.mark.parametrize("case", sorted(OUT_CASES))
def test_out_argument_matches_torch(case):
    fn = OUT_CASES[case]
    assert _run(tt, fn) == _run(torch, fn)


def test_out_is_returned_and_written():
    o = tt.empty(0)
    r = tt.add(_x(tt), 1, out=o)
    assert r is o and o.shape == (2, 3) and o[0, 0].item() == 2.5
    v, i = tt.empty(0), tt.empty(0, dtype=tt.int64)
    res = tt.max(_x(tt), 1, out=(v, i))
    assert res.values is v and res.indices is i and i.tolist() == [2, 1]


def test_refused_out_is_left_untouched():
    o = tt.full((2, 3), 7.0)
    bad = tt.full((2, 3), 9, dtype=tt.int64)
    with pytest.raises(TypeError):
        tt.max(_x(tt), 1, out=(o, bad, bad))
    with pytest.raises(RuntimeError):
        tt.max(_x(tt), 1, out=(o, tt.empty(0, dtype=tt.bool)))  # int64 indices cannot go into bool
    assert o.tolist() == [[7.0] * 3] * 2 and o.shape == (2, 3)


def test_out_under_no_grad_is_allowed():
    x = _x(tt).requires_grad_()
    with tt.no_grad():
        o = tt.add(x, 1, out=tt.empty(0))
    assert o.tolist() == (_x(tt) + 1).tolist()


def test_from_numpy_resize_refused_like_torch():
    for L in (tt, torch):
        t = L.from_numpy(np.zeros(3, np.float32))
        t.resize_(2)  # shrinking keeps the memory
        with pytest.raises(RuntimeError, match="not resizable"):
            t.resize_(5)


NONE_CASES = {
    "add-alpha": lambda L: L.add(_x(L), _x(L), alpha=None),
    "sub-alpha-method": lambda L: _x(L).sub_(_x(L), alpha=None),
    "dist-p": lambda L: L.dist(_x(L), _x(L), p=None),
    "copy-src": lambda L: _x(L).copy_(None),
    "fill-value": lambda L: _x(L).fill_(None),
    "eq-input": lambda L: L.eq(None, _x(L)),
    "bucketize-input": lambda L: L.bucketize(None, L.tensor([1.0, 2.0])),
    "float-power-input": lambda L: L.float_power(None, _x(L)),
    "logsumexp-dim": lambda L: L.logsumexp(_x(L), None),
    "max-dim": lambda L: L.max(_x(L), None),
    "min-dim-method": lambda L: _x(L).min(None),
    "max-no-dim": lambda L: _x(L).max(),
    "std-unbiased": lambda L: L.std(_x(L), unbiased=None),
    "var-unbiased-method": lambda L: _x(L).var(unbiased=None),
    "var-mean-unbiased": lambda L: L.var_mean(_x(L), unbiased=None),
    "std-bool-overload": lambda L: L.std(_x(L), False),
    "std-correction": lambda L: L.std(_x(L), 1, correction=0),
    "trapezoid-x": lambda L: L.trapezoid(_x(L), None),
    "trapz-x-keyword": lambda L: L.trapz(_x(L), x=None),
    "trapezoid-dx": lambda L: L.trapezoid(_x(L), dx=None),
    "trapezoid-dim": lambda L: L.trapezoid(_x(L), dim=None),
    "trapezoid-x-and-dx": lambda L: L.trapezoid(_x(L), _x(L), dx=2),
    "cumulative-trapezoid-x": lambda L: L.cumulative_trapezoid(_x(L), None),
    "cumulative-trapezoid-dx": lambda L: L.cumulative_trapezoid(_x(L), dx=0.5),
    "embedding-padding-idx": lambda L: L.embedding(_x(L), L.tensor([0, 1]), padding_idx=None),
    "batch-norm-optional-tensors": lambda L: L.batch_norm(_x(L), None, None, None, None, True, 0.1, 1e-5, False),
    "clamp-optional-min": lambda L: L.clamp(_x(L), None, 1.0),
    "sum-dim-optional": lambda L: L.sum(_x(L), None),
    "argmax-dim-optional": lambda L: L.argmax(_x(L), None),
}


@pytest.mark.parametrize("case", sorted(NONE_CASES))
def test_explicit_none_matches_torch(case):
    fn = NONE_CASES[case]
    assert _run(tt, fn) == _run(torch, fn)
