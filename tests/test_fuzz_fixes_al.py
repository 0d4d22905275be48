"""Differential cases for the fuzzer's (tests/fuzz.py) SILENT / LEAK / TYPE / REFUSED verdicts of torch functions and
Tensor methods named a..l (issue 32). Each case is a function of the library module (tinytorch or PyTorch): both
must raise the same exception type (with the same message start where ours mirrors it), or both return equal
values; in-place cases also check that a refused call leaves its tensor untouched."""
import math

import numpy as np
import pytest

import tinytorch as tt
from conftest import torch

BIG = 2 ** 63  # one past int64: PyTorch's argument parser refuses it


def _x(lib, shape=(2, 3), dtype="float32"):
    return lib.arange(math.prod(shape), dtype=getattr(lib, dtype)).reshape(shape) / 7 - 0.3


def _f(lib, dtype):
    return _x(lib, (2, 3)).to(getattr(lib, dtype))


def _mat(lib, dtype="float32", shape=(3, 3)):
    return _x(lib, shape).to(getattr(lib, dtype))


# (id, call, message start that both libraries' errors share or None)
CASES = [
    # as_strided: sizes/strides are int64 lists, sizes and strides non-negative, the extent fits int64
    ("as_strided-size-float", lambda L: _x(L).as_strided((2, 1.5), (1, 1)), None),
    ("as_strided-stride-nan", lambda L: _x(L).as_strided((2, 3), (float("nan"), 1)), None),
    ("as_strided-size-big", lambda L: _x(L).as_strided((BIG, 3), (1, 1)), None),
    ("as_strided-stride-neg-big", lambda L: _x(L).as_strided((2, 3), (-BIG - 1, 1)), None),
    ("as_strided-size-neg", lambda L: _x(L).as_strided((2, -1), (1, 1)), "Storage size calculation overflowed"),
    ("as_strided-size-neg-huge", lambda L: _x(L).as_strided((2, -BIG + 1), (1, 1)), None),
    ("as_strided-stride-neg", lambda L: _x(L).as_strided((2, 3), (1, -1)), "as_strided: Negative strides"),
    ("as_strided-extent-overflow", lambda L: _x(L).as_strided((2, 3), (1, 2 ** 62 * 2 - 1)), "Storage size"),
    ("as_strided-offset-float", lambda L: L.as_strided(_x(L), (2, 3), (1, 1), 1.5),
     "as_strided(): argument 'storage_offset'"),
    ("as_strided-ok", lambda L: _x(L).as_strided((2, 2), (1, 2), 1), None),
    # expand / broadcast_to: int64 sizes, numel fits int64
    ("expand-big", lambda L: _x(L, (1, 3)).expand(BIG, 3), "failed to unpack the object at pos 1"),
    ("expand-neg-big", lambda L: _x(L, (1, 3)).expand(-BIG - 1, 3), None),
    ("expand-numel-overflow", lambda L: _x(L, (1, 3)).expand(2 ** 62, 3), "numel: integer multiplication"),
    ("broadcast_to-huge", lambda L: L.broadcast_to(_x(L, (1, 3)), (2 ** 64, 3)), "broadcast_to(): argument"),
    ("broadcast_to-overflow", lambda L: L.broadcast_to(_x(L, (1, 3)), [BIG - 1, 3]), "numel: integer"),
    ("expand-ok", lambda L: _x(L, (1, 3)).expand(4, -1), None),
    # addmm / baddbmm: one dtype, a Tensor input
    *[(f"addmm-input-{d}", lambda L, d=d: L.addmm(_mat(L, d), _mat(L), _mat(L)), "self and mat2 must have")
      for d in ("float64", "int64", "complex64", "bool")],
    ("addmm_-input-float64", lambda L: _mat(L, "float64").addmm_(_mat(L), _mat(L)), "self and mat2"),
    ("addmm-input-float", lambda L: L.addmm(1.5, _mat(L), _mat(L)), "addmm(): argument 'input'"),
    *[(f"baddbmm-input-{d}", lambda L, d=d: L.baddbmm(_mat(L, d)[None], _mat(L)[None], _mat(L)[None]),
       "Input dtypes must be the same, got: input") for d in ("float64", "int8", "float16", "complex128")],
    ("baddbmm-batch1-float64", lambda L: L.baddbmm(_mat(L)[None], _mat(L, "float64")[None], _mat(L)[None]),
     "Input dtypes must be the same"),
    ("baddbmm-input-float", lambda L: L.baddbmm(1.5, _mat(L)[None], _mat(L)[None]), "baddbmm(): argument 'input'"),
    ("addmm-ok-int", lambda L: L.addmm(_mat(L, "int32"), _mat(L, "int32"), _mat(L, "int32")), None),
    # unary/binary dtype refusals
    *[(f"{n}-{d}", lambda L, n=n, d=d: getattr(L, n)(_f(L, d)), None)
      for n in ("erfc", "deg2rad", "isposinf", "isneginf", "logit", "hardshrink")
      for d in ("complex64", "complex128")],
    *[(f"hardshrink-{d}", lambda L, d=d: L.hardshrink(_f(L, d)), "\"hardshrink_cpu\" not implemented")
      for d in ("int32", "uint8", "bool", "int64")],
    *[(f"{n}-{d}-ok", lambda L, n=n, d=d: getattr(L, n)(_f(L, d)), None)
      for n in ("erfc", "deg2rad", "isposinf", "isneginf", "logit") for d in ("int64", "bool", "float16")],
    ("erfc_-complex", lambda L: _f(L, "complex64").erfc_(), "\"erfc_vml_cpu\" not implemented"),
    ("copysign-complex", lambda L: L.copysign(_f(L, "complex64"), _f(L, "float32")), "\"copysign_cpu\""),
    ("copysign-other-complex", lambda L: _f(L, "float32").copysign(_f(L, "complex128")), "\"copysign_cpu\""),
    ("copysign-none", lambda L: _f(L, "float32").copysign(None), "copysign() received an invalid combination"),
    ("copysign-scalar", lambda L: _f(L, "float32").copysign(-1.5), None),
    # windows: int length, floating dtype
    *[(f"{w}-{d}", lambda L, w=w, d=d: getattr(L, w)(5, dtype=getattr(L, d)), None)
      for w in ("hann_window", "hamming_window", "kaiser_window", "blackman_window", "bartlett_window")
      for d in ("int64", "bool", "complex64", "float64")],
    *[(f"{w}-length-{n!r}", lambda L, w=w, n=n: getattr(L, w)(n), None)
      for w in ("hann_window", "kaiser_window") for n in (1.5, True, 0, 1)],
    # torch.dropout family: ATen's argument types and p range
    *[(f"{fn}-{what}", lambda L, fn=fn, a=a: getattr(L, fn)(*a(L)), None)
      for fn in ("dropout", "dropout_", "alpha_dropout", "alpha_dropout_", "feature_alpha_dropout",
                 "feature_alpha_dropout_", "feature_dropout", "feature_dropout_")
      for what, a in (("input-none", lambda L: (None, 0.5, True)), ("input-list", lambda L: ([1.0, 2.0], 0.5, True)),
                      ("train-str", lambda L: (_x(L), 0.5, "yes")), ("train-none", lambda L: (_x(L), 0.5, None)),
                      ("p-big", lambda L: (_x(L), 3.0, True)), ("p-nan", lambda L: (_x(L), float("nan"), False)),
                      ("not-training", lambda L: (_x(L), 0.5, False)))],
    # torch.kl_div: argument types, no integral / complex kernels
    *[(f"kl_div-{i}-{d}", lambda L, i=i, d=d: L.kl_div(*[_f(L, d) if j == i else _f(L, "float32") for j in (0, 1)]),
       None) for i in (0, 1) for d in ("int32", "bool", "uint8", "complex64")],
    ("kl_div-complex-and-int", lambda L: L.kl_div(_f(L, "int32"), _f(L, "complex64")), "kl_div: Complex inputs"),
    ("kl_div-log_target-str", lambda L: L.kl_div(_x(L), _x(L), log_target="yes"), None),
    ("kl_div-reduction-float", lambda L: L.kl_div(_x(L), _x(L), 1.5), None),
    ("kl_div-input-float", lambda L: L.kl_div(1.5, _x(L)), None),
    ("kl_div-ok", lambda L: L.kl_div(_x(L), _x(L).exp(), 2, log_target=False), None),
    # cdist: floating dtypes of one kind, valid compute_mode and p
    *[(f"cdist-x{i}-{d}", lambda L, i=i, d=d: L.cdist(*[_mat(L, d) if j == i else _mat(L) for j in (1, 2)]), None)
      for i in (1, 2) for d in ("int64", "uint8", "complex64", "float16", "bfloat16", "float64")],
    *[(f"cdist-mode-{m!r}", lambda L, m=m: L.cdist(_mat(L), _mat(L), compute_mode=m), None)
      for m in ("a", None, 2, "donot_use_mm_for_euclid_dist")],
    ("cdist-p-nan", lambda L: L.cdist(_mat(L), _mat(L), p=float("nan")), "cdist only supports non-negative p"),
    # index_copy: PyTorch's IndexErrors for the index's rank, the source's rank and the count of indices
    *[(f"index_copy-{cid}", lambda L, i=i, src=src: L.zeros(4, 5).index_copy(0, i(L), src(L)), None)
      for cid, i, src in (
          ("index-2d", lambda L: L.tensor([[1]]), lambda L: L.ones(1, 5)),
          ("source-rank", lambda L: L.tensor([1]), lambda L: L.ones(5)),
          ("count", lambda L: L.tensor([0, 1]), lambda L: L.ones(3, 5)),
          ("count-0d-source", lambda L: L.tensor([0, 1]), lambda L: L.tensor(2.0)),
          ("slice-shape", lambda L: L.tensor([0, 1]), lambda L: L.ones(2, 4)),
          ("int32-index", lambda L: L.tensor([1], dtype=L.int32), lambda L: L.ones(1, 5)),
          ("0d-index-ok", lambda L: L.tensor(1), lambda L: L.ones(1, 5)),
          ("ok", lambda L: L.tensor([3, 0]), lambda L: L.ones(2, 5) * 2))],
    ("index_copy_-count", lambda L: L.zeros(4, 5).index_copy_(0, L.tensor([0, 1]), L.ones(3, 5)), "Number of"),
    # Tensor-only binary ops
    *[(f"{n}-{cid}", lambda L, n=n, a=a: getattr(L, n)(*a(L)), None)
      for n in ("logical_and", "logical_or", "logical_xor", "heaviside")
      for cid, a in (("other-float", lambda L: (_x(L), 1.5)), ("other-none", lambda L: (_x(L), None)),
                     ("input-float", lambda L: (1.5, _x(L))), ("ok", lambda L: (_x(L), _x(L) * 0)))],
    *[(f"is_conj-{v!r}", lambda L, v=v: L.is_conj(v), None) for v in (1.5, "a", None, [1.0, 2.0])],
    ("is_conj-ok", lambda L: L.is_conj(_x(L)), None),
    # histogram with a tensor of edges: PyTorch's placement (edges that do not increase included), its checks
    *[(f"histogram-edges-{i}", lambda L, e=e, dens=dens: tuple(L.histogram(
        L.tensor([0.1, 0.5, 0.9, 0.3, 2.0, -1.0, 0.7, 1.0, 0.0, 0.8]), L.tensor(e), density=dens)), None)
      for i, (e, dens) in enumerate((([0.0, 0.8, 0.2, 1.0], False), ([0.0, 0.8, 0.2, 1.0], True),
                                     ([1.0, 0.0, 0.5], False), ([0.0, 0.25, 0.5, 1.0], True), ([0.5], False),
                                     ([0.3, 0.3, 0.9], False), ([0.9, 0.1, 0.4, 0.2, 0.95], False)))],
    ("histogram-weight", lambda L: tuple(L.histogram(L.tensor([0.1, 0.5, 0.9]), L.tensor([0.0, 0.7, 0.2, 1.0]),
                                                     weight=L.tensor([1.0, 2.0, 4.0]))), None),
    *[(f"histogram-bad-{cid}", lambda L, b=b, kw=kw: L.histogram(_x(L), b(L), **kw(L)), None)
      for cid, b, kw in (("edges-2d", lambda L: L.ones(2, 2), lambda L: {}),
                         ("edges-empty", lambda L: L.ones(0), lambda L: {}),
                         ("edges-int64", lambda L: L.tensor([0, 1]), lambda L: {}),
                         ("edges-float64", lambda L: L.tensor([0.0, 1.0], dtype=L.float64), lambda L: {}),
                         ("bins-str", lambda L: "a", lambda L: {}),
                         ("weight-shape", lambda L: L.tensor([0.0, 1.0]), lambda L: {"weight": L.ones(3)}),
                         ("weight-dtype", lambda L: L.tensor([0.0, 1.0]),
                          lambda L: {"weight": L.ones(2, 3, dtype=L.int64)}))],
]


def _run(lib, fn):
    try:
        return fn(lib), None
    except Exception as e:  # noqa: BLE001 - the point is comparing which exception each library raises
        return None, e


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_matches_torch(case):
    _, fn, msg = case
    ours, our_err = _run(tt, fn)
    theirs, their_err = _run(torch, fn)
    if their_err is not None:
        assert our_err is not None, f"torch raised {type(their_err).__name__}: {their_err}; we returned {ours}"
        assert type(our_err) is type(their_err), f"{type(our_err).__name__}: {our_err} vs torch " \
                                                 f"{type(their_err).__name__}: {their_err}"
        if msg is not None:
            assert str(their_err).startswith(msg) or msg in str(their_err), their_err
            assert msg in str(our_err), our_err
        return
    assert our_err is None, f"we raised {type(our_err).__name__}: {our_err}; torch returned"
    if isinstance(theirs, tuple):
        for o, t in zip(ours, theirs):
            np.testing.assert_allclose(o.numpy(), t.numpy(), rtol=1e-6, atol=1e-7)
        return
    if not isinstance(theirs, torch.Tensor):
        assert ours == theirs
    if isinstance(theirs, torch.Tensor):
        tol = (1e-5, 1e-6)
        if theirs.dtype in (torch.bfloat16, torch.float16):
            theirs, ours, tol = theirs.float(), ours.float(), (1e-2, 1e-2)
        assert tuple(ours.shape) == tuple(theirs.shape)
        assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
        if "dropout" not in case[0] or "not-training" in case[0]:
            np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=tol[0], atol=tol[1])


@pytest.mark.parametrize("name", ["abs_", "absolute_"])
@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_inplace_abs_of_complex_refused_untouched(name, dtype):
    x = _f(tt, dtype) * (1 + 1j)
    before = x.numpy().copy()
    with pytest.raises(RuntimeError, match="In-place abs is not supported for complex tensors"):
        getattr(x, name)()
    np.testing.assert_array_equal(x.numpy(), before)
    with pytest.raises(RuntimeError, match="In-place abs is not supported for complex tensors"):
        getattr(_f(torch, dtype), name)()


@pytest.mark.parametrize("name", ["abs_", "absolute_"])
def test_inplace_abs_real_matches(name):
    x, y = _f(tt, "float32"), _f(torch, "float32")
    getattr(x, name)()
    getattr(y, name)()
    np.testing.assert_allclose(x.numpy(), y.numpy())


def test_addmm_dtype_refusal_leaves_inplace_target_untouched():
    x = _mat(tt, "float64")
    before = x.numpy().copy()
    with pytest.raises(RuntimeError):
        x.addmm_(_mat(tt), _mat(tt))
    np.testing.assert_array_equal(x.numpy(), before)
