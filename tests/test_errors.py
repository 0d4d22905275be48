"""Bad input raises the exception type PyTorch raises, with a message that names the problem — never a NumPy
traceback from inside a kernel."""
import numpy as np
import pytest

import tinytorch as tt
from conftest import torch

CASES = [
    ("broadcast", lambda m: m.ones(2, 3) + m.ones(4), "size of tensor a"),
    ("matmul_shapes", lambda m: m.ones(2, 3) @ m.ones(4, 5), "cannot be multiplied"),
    ("matmul_0d", lambda m: m.matmul(m.tensor(1.0), m.ones(2)), "at least 1D"),
    ("matmul_dtype", lambda m: m.ones(2, 3) @ m.ones(3, 2, dtype=m.float64), "dtype"),
    ("mm_not_matrix", lambda m: m.mm(m.ones(2), m.ones(2, 2)), "matrix"),
    ("bmm_3d", lambda m: m.bmm(m.ones(2, 2), m.ones(2, 2)), "3D"),
    ("dot_1d", lambda m: m.dot(m.ones(2, 2), m.ones(2)), "1D tensors expected"),
    ("dim_range", lambda m: m.ones(2, 3).sum(2), "Dimension out of range"),
    ("dim_range_neg", lambda m: m.ones(2, 3).softmax(-3), "Dimension out of range"),
    ("index_range", lambda m: m.ones(2, 3)[5], "out of bounds"),
    ("index_range_dim1", lambda m: m.ones(2, 3)[:, 3], "out of bounds"),
    ("too_many_indices", lambda m: m.ones(2, 3)[0, 0, 0], "too many indices"),
    ("index_tensor_range", lambda m: m.ones(2, 3)[m.tensor([0, 2])], "out of bounds"),
    ("float_index", lambda m: m.ones(2, 3)[m.tensor([0.0])], "indices"),
    ("mask_shape", lambda m: m.ones(2, 3)[m.ones(3, dtype=m.bool)], "shape of the mask"),
    ("view_numel", lambda m: m.ones(2, 3).view(4), "invalid for input of size 6"),
    ("view_two_minus1", lambda m: m.ones(2, 3).view(-1, -1), "only one dimension can be inferred"),
    ("view_stride", lambda m: m.ones(2, 3).t().view(6), "view size is not compatible"),
    ("expand", lambda m: m.ones(2, 3).expand(4, 3), "expanded size"),
    ("permute_len", lambda m: m.ones(2, 3).permute(0), "number of dimensions"),
    ("cat_sizes", lambda m: m.cat([m.ones(2, 3), m.ones(2, 4)]), "Sizes of tensors must match"),
    ("cat_ndim", lambda m: m.cat([m.ones(2, 3), m.ones(2)]), "same number of dimensions"),
    ("cat_empty", lambda m: m.cat([]), "non-empty"),
    ("stack_sizes", lambda m: m.stack([m.ones(2), m.ones(3)]), "equal size"),
    ("gather_dtype", lambda m: m.ones(2, 3).gather(1, m.zeros(2, 3)), "int64"),
    ("gather_range", lambda m: m.ones(2, 3).gather(1, m.tensor([[5], [0]])), "out of bounds"),
    ("gather_negative", lambda m: m.ones(2, 3).gather(1, m.tensor([[-1], [0]])), "out of bounds"),
    ("scatter_add_negative", lambda m: m.zeros(2, 3).scatter_add(1, m.tensor([[-1], [0]]), m.ones(2, 1)),
     "out of bounds"),
    ("scatter_range", lambda m: m.zeros(2, 3).scatter(1, m.tensor([[3], [0]]), 1.0), "out of bounds"),
    ("index_select_range", lambda m: m.ones(2, 3).index_select(1, m.tensor([4])), "out of range"),
    ("narrow_range", lambda m: m.ones(2, 3).narrow(1, 2, 2), "exceeds dimension size"),
    ("select_range", lambda m: m.ones(2, 3).select(0, 2), "out of range"),
    ("split_sum", lambda m: m.ones(5).split([2, 2]), "sum exactly"),
    ("item_many", lambda m: m.ones(2).item(), "cannot be converted"),
    ("bool_ambiguous", lambda m: bool(m.ones(2)), "ambiguous"),
    ("requires_grad_int", lambda m: m.ones(2, dtype=m.int64).requires_grad_(), "floating point"),
    ("leaf_inplace", lambda m: m.ones(2, requires_grad=True).mul_(2), "leaf Variable"),
    ("inplace_broadcast", lambda m: m.ones(3).add_(m.ones(2, 3)), "doesn't match the broadcast shape"),
    ("inplace_cast", lambda m: m.ones(3, dtype=m.int64).add_(1.5), "can't be cast"),
    ("bool_sub", lambda m: m.ones(2, dtype=m.bool) - m.ones(2, dtype=m.bool), "Subtraction"),
    ("int_div_zero", lambda m: m.div(m.ones(2, dtype=m.int64), 0, rounding_mode="floor"), "ZeroDivision"),
    ("int_neg_pow", lambda m: m.tensor([2]) ** -1, "negative integer powers"),
    ("mean_int", lambda m: m.ones(2, dtype=m.int64).mean(), "mean"),
    ("where_cond", lambda m: m.where(m.ones(2), m.ones(2), m.zeros(2)), "boolean"),
    ("clamp_none", lambda m: m.clamp(m.ones(2)), "At least one"),
    ("topk_range", lambda m: m.ones(3).topk(4), "out of range"),
    ("conv_channels", lambda m: m.nn.functional.conv2d(m.ones(1, 3, 5, 5), m.ones(2, 2, 3, 3)), "channels"),
    ("conv_small", lambda m: m.nn.functional.conv2d(m.ones(1, 1, 2, 2), m.ones(1, 1, 3, 3)),
     "can't be greater than actual input size"),
    ("linear_shape", lambda m: m.nn.functional.linear(m.ones(2, 3), m.ones(4, 5)), "cannot be multiplied"),
    ("ce_batch", lambda m: m.nn.functional.cross_entropy(m.ones(3, 4), m.zeros(2, dtype=m.int64)), "batch_size"),
    ("ce_target_range", lambda m: m.nn.functional.nll_loss(m.ones(2, 4), m.tensor([0, 4])), "out of bounds"),
    ("ce_target_negative", lambda m: m.nn.functional.cross_entropy(m.ones(2, 4), m.tensor([0, -3])), "out of bounds"),
    ("nll_weight_grad", lambda m: m.nn.functional.nll_loss(m.ones(2, 4), m.tensor([0, 1]),
                                                           weight=m.ones(4, requires_grad=True)), "not differentiable"),
    ("nll_weight_size", lambda m: m.nn.functional.nll_loss(m.ones(2, 4), m.tensor([0, 1]), weight=m.ones(3)),
     "weight tensor should be defined"),
    ("linear_dtype", lambda m: m.nn.functional.linear(m.ones(2, 3), m.ones(4, 3, dtype=m.float64)), "dtype"),
    ("bce_shape", lambda m: m.nn.functional.binary_cross_entropy(m.ones(3) / 2, m.ones(2)), "size"),
    ("layer_norm_shape", lambda m: m.nn.functional.layer_norm(m.ones(2, 3), (4,)), "normalized_shape"),
    ("embedding_float", lambda m: m.nn.functional.embedding(m.ones(2), m.ones(3, 2)), "indices"),
    ("dropout_p", lambda m: m.nn.Dropout(1.5), "between 0 and 1"),
    ("batchnorm_dims", lambda m: m.nn.BatchNorm2d(3)(m.ones(2, 3)), "4D"),
    ("conv_groups", lambda m: m.nn.Conv2d(3, 4, 3, groups=2), "divisible"),
    ("device_str", lambda m: m.ones(2, device="nodevice"), "device"),
    ("negative_dim", lambda m: m.zeros(2, -1), "negative dimension"),
    ("randint_range", lambda m: m.randint(5, 5, (2,)), "from"),
    ("multinomial_neg", lambda m: m.multinomial(m.tensor([-1.0, 1.0]), 1), "element < 0"),
    ("grad_shape", lambda m: setattr(m.ones(2, requires_grad=True), "grad", m.ones(3)), "different size"),
    ("numpy_grad", lambda m: m.ones(2, requires_grad=True).numpy(), "requires grad"),
    ("optimizer_lr", lambda m: m.optim.SGD([m.nn.Parameter(m.ones(1))], lr=-1), "Invalid learning rate"),
    ("rmsprop_alpha", lambda m: m.optim.RMSprop([m.nn.Parameter(m.ones(1))], alpha=-1), "Invalid alpha value"),
    ("radam_beta", lambda m: m.optim.RAdam([m.nn.Parameter(m.ones(1))], betas=(1.0, 0.9)), "beta parameter at index 0"),
    ("adadelta_rho", lambda m: m.optim.Adadelta([m.nn.Parameter(m.ones(1))], rho=2), "Invalid rho value"),
    ("load_state_dict", lambda m: m.nn.Linear(2, 2).load_state_dict({"weight": m.ones(2, 2)}), "Missing key"),
    ("unflatten", lambda m: m.ones(6).unflatten(0, (4, -1)), "invalid"),
]


@pytest.mark.parametrize("name,fn,words", CASES, ids=[c[0] for c in CASES])
def test_error_matches_torch(name, fn, words):
    with pytest.raises(Exception) as th:
        fn(torch)
    with pytest.raises(Exception) as ours:
        fn(tt)
    assert isinstance(ours.value, type(th.value)) or type(ours.value).__mro__[1] is type(th.value), \
        f"{name}: tinytorch raised {type(ours.value).__name__}: {ours.value}, torch raised " \
        f"{type(th.value).__name__}: {th.value}"
    assert words.lower() in str(ours.value).lower(), f"{name}: message {ours.value!r} lacks {words!r}"
    tb = ours.tb
    while tb.tb_next:
        tb = tb.tb_next
    assert "site-packages/numpy" not in tb.tb_frame.f_code.co_filename, f"{name}: raised inside NumPy: {ours.value}"


def test_integer_negative_tensor_power_matches_torch():
    a, b = [2, 1, -1, -1, 3], [-1, -3, -2, -3, 2]
    assert (tt.tensor(a) ** tt.tensor(b)).tolist() == (torch.tensor(a) ** torch.tensor(b)).tolist()


def test_no_silent_wrong_dtype_on_inplace_int():
    x = tt.ones(3, dtype=tt.int64)
    x.add_(2)
    assert x.dtype is tt.int64 and x.tolist() == [3, 3, 3]
    x.mul_(tt.tensor(2))
    assert x.tolist() == [6, 6, 6]


def test_linalg_errors():
    with pytest.raises(tt.linalg.LinAlgError, match="singular"):
        tt.linalg.inv(tt.zeros(3, 3))
    assert issubclass(tt.linalg.LinAlgError, RuntimeError)
    with pytest.raises(RuntimeError, match="square matrices, but they are 3 by 4"):
        tt.linalg.inv(tt.zeros(3, 4))
    with pytest.raises(RuntimeError, match="Expected a floating point"):
        tt.linalg.det(tt.zeros(3, 3, dtype=tt.int64))
    with pytest.raises(tt.linalg.LinAlgError, match="positive-definite"):
        tt.linalg.cholesky(-tt.eye(3))
    with pytest.raises(RuntimeError, match="Incompatible shapes"):
        tt.linalg.solve(tt.eye(3), tt.ones(4, 2))
    a = tt.randn(4, 3, requires_grad=True)
    with pytest.raises(RuntimeError, match="mode='r'"):
        tt.linalg.qr(a, mode="r").R.sum().backward()
    with pytest.raises(RuntimeError, match="not differentiable when mode='complete'"):
        tt.linalg.qr(a, mode="complete").R.sum().backward()


def test_linalg_on_meta_device():
    a = tt.empty(2, 5, 3, device="meta")
    U, S, Vh = tt.linalg.svd(a, full_matrices=False)
    assert (U.shape, S.shape, Vh.shape) == ((2, 5, 3), (2, 3), (2, 3, 3))
    assert U.device.type == "meta"


def test_lu_errors_match_torch():
    sing = [[1.0, 2, 3], [2, 4, 6], [1, 1, 1]]
    for m in (torch, tt):
        s = m.tensor(sing)
        with pytest.raises(RuntimeError, match=r"^torch.linalg.lu_factor: U\[3,3\] is zero and using it on lu_solve"):
            m.linalg.lu_factor(s)
        with pytest.raises(RuntimeError, match=r"lu_factor: \(Batch element 1\): U\[3,3\] is zero"):
            m.linalg.lu_factor(m.stack([m.eye(3), s]))
        with pytest.raises(RuntimeError, match=r"^torch.linalg.lu_factor_ex: U\[3,3\] is zero"):
            m.linalg.lu_factor_ex(s, check_errors=True)
        assert m.linalg.lu_factor_ex(s).info.item() == 3
        with pytest.raises(RuntimeError, match="LU without pivoting is not implemented on the CPU"):
            m.linalg.lu_factor(s, pivot=False)
        with pytest.raises(RuntimeError, match=r"Expected tensor with 2 or more dimensions. Got size: \[3\]"):
            m.linalg.lu_factor(m.ones(3))
        LU, piv = m.linalg.lu_factor(m.eye(3))
        with pytest.raises(RuntimeError, match=r"Incompatible shapes of A and B for the equation AX = B \(3x3 and 4x2\)"):
            m.linalg.lu_solve(LU, piv, m.ones(4, 2))
        P, L, U = m.linalg.lu(s)  # singular is fine here
        np.testing.assert_allclose((P @ L @ U).numpy(), np.array(sing, np.float32), atol=1e-6)


def test_matrix_transpose_properties_errors_match_torch():
    for m in (torch, tt):
        with pytest.raises(RuntimeError, match="tensor.mT is only supported on matrices or batches of matrices. Got 1-D"):
            m.ones(3).mT
        with pytest.raises(RuntimeError, match="tensor.mH is only supported on matrices or batches of matrices. Got 1-D"):
            m.ones(3).mH
        with pytest.raises(RuntimeError, match="tensor.H is only supported on matrices \\(2-D tensors\\). Got 3-D tensor. "
                                               "For batches of matrices, consider using tensor.mH"):
            m.ones(2, 3, 4).H


def test_igamma_edges_and_errors_match_torch():
    a = [0.0, 0.0, 1.0, 1.0, -1.0, 2.0, float("inf"), 2.0, 0.5]
    x = [0.0, 1.0, 0.0, float("inf"), 1.0, -1.0, 1.0, float("nan"), 1e-3]
    for fn in ("igamma", "igammac"):
        ours = getattr(tt, fn)(tt.tensor(a, dtype=tt.float64), tt.tensor(x, dtype=tt.float64)).numpy()
        ref = getattr(torch, fn)(torch.tensor(a, dtype=torch.float64), torch.tensor(x, dtype=torch.float64)).numpy()
        np.testing.assert_allclose(ours, ref, rtol=1e-9, equal_nan=True)
    for m in (torch, tt):
        with pytest.raises(NotImplementedError, match="\"igamma_cpu\" not implemented for 'Long'"):
            m.igamma(m.tensor([2]), m.tensor([3]))
        with pytest.raises(NotImplementedError, match="the derivative for 'igamma: input' is not implemented"):
            m.igamma(m.tensor([2.0], requires_grad=True), m.tensor([1.0])).backward()


def test_bool_negation_bitwise_on_floats_empty_max_and_legacy_empty_cat_match_torch():
    """Errors from the type checks (not NumPy's), with torch's types and messages; cat skips 1-D empty tensors."""
    for m in (tt, torch):
        with pytest.raises(RuntimeError, match="Negation, the `-` operator, on a bool tensor is not supported"):
            -m.tensor([True])
        with pytest.raises(NotImplementedError, match="\"bitwise_and_cpu\" not implemented for 'Float'"):
            m.tensor([1.0]) & m.tensor([1.0])
        with pytest.raises(NotImplementedError, match="\"lshift_cpu\" not implemented for 'Float'"):
            m.tensor([1.0]) << 1
        with pytest.raises(NotImplementedError, match="\"bitwise_not_cpu\" not implemented for 'Float'"):
            m.bitwise_not(m.tensor([1.0]))
        with pytest.raises(TypeError, match="only implemented on integer and Boolean-type tensors"):
            ~m.tensor([1.0])
        for name in ("max", "min", "amax"):
            with pytest.raises(RuntimeError, match=f"{name}\\(\\): Expected reduction dim to be specified"):
                getattr(m.tensor([]), name)()
    got = [tt.cat([tt.tensor([]), tt.ones(2, 2, dtype=tt.int64)]), torch.cat([torch.tensor([]), torch.ones(2, 2, dtype=torch.int64)])]
    assert str(got[0].dtype) == str(got[1].dtype) and got[0].tolist() == got[1].tolist()
