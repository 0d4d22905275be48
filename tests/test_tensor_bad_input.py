"""Tensor ops on bad or edge-case input, differential against PyTorch: indexing, reductions, scans, shape ops,
einsum, linalg (complex included) and pow's edges. Each case runs the same call through tinytorch and torch:
where torch raises, tinytorch must raise the same exception type (a subclass is fine) from a deliberate check,
not from inside NumPy or as an incidental KeyError/AttributeError; where torch returns, tinytorch must return
the same shapes, dtypes and values (NaN equal to NaN)."""
import math
import os
import traceback
import warnings

import numpy as np
import pytest

import tinytorch as tt
from conftest import torch

inf, nan = math.inf, math.nan

CASES = [
    # silent wrong answers
    ("mask_uint8", lambda m: m.arange(4.)[m.tensor([1, 0, 1, 0], dtype=m.uint8)]),
    ("mask_uint8_mixed", lambda m: m.arange(24.).reshape(2, 3, 4)[m.tensor([1, 0], dtype=m.uint8), 0]),
    ("mask_uint8_2d", lambda m: m.arange(24.).reshape(2, 3, 4)[m.tensor([[1, 0, 0], [0, 1, 1]], dtype=m.uint8)]),
    ("norm_complex_dim", lambda m: m.norm(m.tensor([3 + 4j]), p=2, dim=0)),
    ("norm_complex_fro", lambda m: m.norm(m.tensor([[3 + 4j, 1j], [1, 2]]))),
    ("norm_complex_p1", lambda m: m.norm(m.tensor([3 + 4j, 1j]), p=1)),
    ("norm_complex_pinf", lambda m: m.norm(m.tensor([3 + 4j, 1j]), p=inf)),
    ("norm_complex_p0", lambda m: m.norm(m.tensor([3 + 4j, 1j]), p=0)),
    ("norm_complex_p3", lambda m: m.norm(m.tensor([3 + 4j, 1j]), p=3)),
    ("norm_complex_nuc", lambda m: m.norm(m.tensor([[3 + 4j, 1j], [1, 2]]), p="nuc")),
    ("vector_norm_complex", lambda m: m.linalg.vector_norm(m.tensor([3 + 4j, 1j]))),
    ("vector_norm_complex_ord1", lambda m: m.linalg.vector_norm(m.tensor([3 + 4j, 1j]), ord=1)),
    ("vector_norm_complex_neginf", lambda m: m.linalg.vector_norm(m.tensor([3 + 4j, 1j]), ord=-inf)),
    ("vector_norm_complex128", lambda m: m.linalg.vector_norm(m.tensor([3 + 4j, 1j], dtype=m.complex128), ord=3)),
    ("matrix_norm_complex", lambda m: m.linalg.matrix_norm(m.tensor([[3 + 4j, 1j], [1, 2]]))),
    ("matrix_norm_complex_1", lambda m: m.linalg.matrix_norm(m.tensor([[3 + 4j, 1j], [1, 2]]), ord=1)),
    ("matrix_norm_complex_inf", lambda m: m.linalg.matrix_norm(m.tensor([[3 + 4j, 1j], [1, 2]]), ord=inf)),
    ("matrix_norm_complex_2", lambda m: m.linalg.matrix_norm(m.tensor([[3 + 4j, 1j], [1, 2]]), ord=2)),
    ("matrix_norm_complex_nuc", lambda m: m.linalg.matrix_norm(m.tensor([[3 + 4j, 1j], [1, 2]]), ord="nuc")),
    ("linalg_norm_complex", lambda m: m.linalg.norm(m.tensor([[3 + 4j, 1j], [1, 2]]))),
    ("logsumexp_complex", lambda m: m.logsumexp(m.tensor([1 + 1j, 2 - 1j]), 0)),
    ("logsumexp_complex_2d", lambda m: m.logsumexp(m.tensor([[1 + 1j, 2 - 1j], [100 + 3j, -inf + 0j]]), 1)),
    ("logsumexp_int", lambda m: m.logsumexp(m.tensor([1, 2]), 0)),
    ("logsumexp_all_neginf", lambda m: m.logsumexp(m.tensor([-inf, -inf]), 0)),
    ("std_overflow", lambda m: m.std(m.tensor([1e30, -1e30, 5e29]))),
    ("var_overflow", lambda m: m.var(m.tensor([1e30, -1e30, 5e29]))),
    ("std_tiny", lambda m: m.std(m.tensor([1e-40, -1e-40, 5e-41]))),
    ("std_overflow_dim", lambda m: m.std(m.tensor([[1e30, -1e30, 5e29], [1., 2., 3.]]), 1, keepdim=True)),
    ("std_overflow_all", lambda m: m.std(m.tensor([[1e30, -1e30, 5e29], [1., 2., 3.]]), (0, 1))),
    ("std_inf", lambda m: m.std(m.tensor([inf, 1.]))),
    ("std_nan", lambda m: m.std(m.tensor([nan, 1.]))),
    ("std_one", lambda m: m.std(m.tensor([1.]))),
    ("std_empty_dim", lambda m: m.std(m.ones(0, 3), 0)),
    ("var_complex", lambda m: m.var(m.tensor([1 + 1j, 2 - 1j, 3j]))),
    ("std_complex", lambda m: m.std(m.tensor([1 + 1j, 2 - 1j, 3j]), 0)),
    ("var_int", lambda m: m.var(m.tensor([1, 2]))),
    ("pow_zero_neg", lambda m: m.tensor([0., 0., -0., -0.]) ** m.tensor([-1., -2., -1., -3.])),
    ("pow_zero_neginf", lambda m: m.tensor([0., -0.]) ** -inf),
    ("pow_inf_edges", lambda m: m.tensor([inf, -inf, -inf, -inf, inf, 0., nan, 1.]) ** m.tensor([0., 3., 2., -3., -1, 0, 0, nan])),
    ("pow_neg_frac", lambda m: m.tensor([-2., -8., -1.]) ** m.tensor([0.5, 1 / 3, inf])),
    ("pow_half_inf", lambda m: m.tensor([0.5, 2., -0.5]) ** -inf),
    ("pow_int_neg", lambda m: m.tensor([0, 2, -2, 1, -1]) ** m.tensor([-1, -1, -1, -3, -3])),
    ("pow_int_scalar_neg", lambda m: m.tensor([2]) ** -1),
    ("pow_scalar_base", lambda m: 0 ** m.tensor([-1, 0, 2])),
    ("pow_int8_wrap", lambda m: m.tensor([2, 3], dtype=m.int8) ** 7),
    ("pow_uint8_wrap", lambda m: m.tensor([2, 3], dtype=m.uint8) ** 9),
    ("pow_int64_wrap", lambda m: m.tensor([-3, 3]) ** 63),
    ("pow_bool_bool", lambda m: m.tensor([True, False]) ** m.tensor([True, False])),
    ("pow_bool_scalar_base", lambda m: True ** m.tensor([True])),
    ("pow_bool_true", lambda m: m.tensor([True]) ** True),
    ("pow_int8_overflow_exp", lambda m: m.tensor([2], dtype=m.int8) ** 1000),
    ("pow_int32_overflow_exp", lambda m: m.tensor([2], dtype=m.int32) ** 2 ** 40),
    ("pow_half_overflow_exp", lambda m: m.tensor([2.], dtype=m.float16) ** 1e5),
    ("pow_half_max_exp", lambda m: m.tensor([2.], dtype=m.float16) ** 65504),
    ("pow_bf16_overflow_exp", lambda m: m.tensor([2.], dtype=m.bfloat16) ** 1e39),
    ("pow_float_big_exp", lambda m: m.tensor([2.]) ** 1e39),
    # accepted where torch raises
    ("expand_neg2", lambda m: m.ones(1, 3).expand(-2, 3)),
    ("expand_neg3", lambda m: m.ones(2, 1).expand(2, -3)),
    ("expand_neg_lead", lambda m: m.ones(3).expand(-2, 3)),
    ("expand_minus1", lambda m: m.ones(1, 3).expand(-1, 3)),
    ("outer_2d", lambda m: m.outer(m.ones(2, 2), m.ones(2))),
    ("outer_2d_second", lambda m: m.outer(m.ones(2), m.ones(2, 2))),
    ("outer_0d", lambda m: m.outer(m.tensor(1.), m.ones(2))),
    ("ger_2d", lambda m: m.ger(m.ones(2, 2), m.ones(2))),
    ("addr_2d", lambda m: m.addr(m.ones(2, 2), m.ones(2, 2), m.ones(2))),
    ("mv_3d", lambda m: m.mv(m.ones(2, 2, 2), m.ones(2))),
    ("mv_vec_2d", lambda m: m.mv(m.ones(2, 2), m.ones(2, 1))),
    ("mv_1d", lambda m: m.mv(m.ones(2), m.ones(2))),
    ("mv_size", lambda m: m.mv(m.ones(2, 3), m.ones(2))),
    ("mv_dtype", lambda m: m.mv(m.ones(2, 2), m.ones(2).double())),
    ("addmv_3d", lambda m: m.addmv(m.ones(2), m.ones(2, 2, 2), m.ones(2))),
    ("addmv_ok", lambda m: m.addmv(m.ones(2), m.ones(2, 3), m.ones(3))),
    ("addmv_bcast", lambda m: m.addmv(m.tensor(1.), m.ones(2, 3), m.ones(3))),
    ("addmv_size", lambda m: m.addmv(m.ones(3), m.ones(2, 3), m.ones(3))),
    ("inner_nd", lambda m: m.inner(m.arange(6.).reshape(2, 3), m.arange(12.).reshape(4, 3))),
    ("inner_mismatch", lambda m: m.inner(m.ones(2, 3), m.ones(4, 2))),
    ("inner_0d", lambda m: m.inner(m.tensor(2.), m.ones(3))),
    ("softmax_0d_dim1", lambda m: m.softmax(m.tensor(1.), 1)),
    ("sort_0d_dim1", lambda m: m.sort(m.tensor(1.), 1)),
    ("argsort_0d_dim1", lambda m: m.argsort(m.tensor(1.), 1)),
    ("flatten_0d_dim1", lambda m: m.flatten(m.tensor(1.), 1)),
    ("flatten_0d_end1", lambda m: m.flatten(m.tensor(1.), 0, 1)),
    ("flatten_0d_ok", lambda m: m.flatten(m.tensor(1.), -1, 0)),
    ("cumsum_0d_dim1", lambda m: m.cumsum(m.tensor(1.), 1)),
    ("cumprod_0d_dim2", lambda m: m.cumprod(m.tensor(1.), 2)),
    ("max_0d_dim1", lambda m: m.max(m.tensor(1.), 1)),
    ("min_0d_dim_neg2", lambda m: m.min(m.tensor(1.), -2)),
    ("transpose_0d_dim1", lambda m: m.tensor(1.).transpose(0, 1)),
    ("topk_0d_dim1", lambda m: m.topk(m.tensor(1.), 1, 1)),
    ("topk_0d_k2", lambda m: m.topk(m.tensor(2.), 2)),
    ("chunk_0d", lambda m: m.tensor(1.).chunk(1, 0)),
    ("split_0d", lambda m: m.tensor(1.).split(1, 0)),
    ("tensor_split_0d", lambda m: m.tensor(1.).tensor_split(1, 0)),
    ("cat_0d", lambda m: m.cat([m.ones(2), m.tensor(1.)], 0)),
    ("diff_0d", lambda m: m.tensor(1.).diff()),
    ("renorm_1d", lambda m: m.ones(3).renorm(2, 0, 1.)),
    ("unflatten_0d", lambda m: m.unflatten(m.tensor(1.), 0, (1,))),
    ("narrow_0d", lambda m: m.tensor(1.).narrow(0, 0, 1)),
    ("narrow_start_range", lambda m: m.ones(2, 3).narrow(0, -3, 1)),
    ("narrow_neg_length", lambda m: m.ones(2, 3).narrow(1, 1, -1)),
    ("narrow_at_end", lambda m: m.ones(2, 3).narrow(1, 3, 0)),
    ("squeeze_dup", lambda m: m.squeeze(m.ones(1, 1), [0, 0])),
    ("squeeze_dup_neg", lambda m: m.squeeze(m.ones(1, 1, 2), (0, 1, -3))),
    ("sum_dup", lambda m: m.sum(m.ones(2, 2), dim=(0, 0))),
    ("sum_dup_neg", lambda m: m.sum(m.ones(2, 2), (0, -2))),
    ("amax_dup", lambda m: m.amax(m.ones(2, 2), (0, 0))),
    ("std_dup", lambda m: m.std(m.ones(2, 2), (1, -1))),
    ("logsumexp_dup", lambda m: m.logsumexp(m.ones(2, 2), (0, 0))),
    ("flip_dup", lambda m: m.flip(m.ones(2, 2), (0, 0))),
    ("permute_dup", lambda m: m.ones(2, 2).permute(0, 0)),
    ("permute_dup_neg", lambda m: m.ones(2, 2).permute(1, -1)),
    ("tile_neg", lambda m: m.ones(2, 3).tile(-1)),
    ("repeat_neg", lambda m: m.ones(2, 3).repeat(2, -1)),
    ("tensor_split_zero", lambda m: m.ones(2, 3).tensor_split(0)),
    ("repeat_interleave_neg", lambda m: m.ones(2, 3).repeat_interleave(-1)),
    ("repeat_interleave_neg_tensor", lambda m: m.repeat_interleave(m.ones(3), m.tensor([1, -1, 2]))),
    ("repeat_interleave_size", lambda m: m.repeat_interleave(m.ones(3), m.tensor([1, 2]))),
    ("repeat_interleave_2d", lambda m: m.repeat_interleave(m.ones(3), m.tensor([[1, 2, 1]]))),
    ("index_select_0d_many", lambda m: m.tensor(1.).index_select(0, m.tensor([0, 0]))),
    # einsum
    ("einsum_unknown_out", lambda m: m.einsum("ij->k", m.ones(2, 3))),
    ("einsum_repeated_out", lambda m: m.einsum("ij->ii", m.ones(2, 3))),
    ("einsum_fewer_ops", lambda m: m.einsum("ij,jk", m.ones(2, 3))),
    ("einsum_more_ops", lambda m: m.einsum("ij", m.ones(2, 3), m.ones(3, 4))),
    ("einsum_two_arrows", lambda m: m.einsum("ij->j->i", m.ones(2, 3))),
    ("einsum_digit", lambda m: m.einsum("i1->i", m.ones(2, 3))),
    ("einsum_dash", lambda m: m.einsum("ij-", m.ones(2, 3))),
    ("einsum_comma_out", lambda m: m.einsum("ij->i,j", m.ones(2, 3))),
    ("einsum_too_few_subs", lambda m: m.einsum("i", m.ones(2, 3))),
    ("einsum_too_many_subs", lambda m: m.einsum("ijk", m.ones(2, 3))),
    ("einsum_ellipsis_too_many", lambda m: m.einsum("...ijk", m.ones(2, 3))),
    ("einsum_stray_dot", lambda m: m.einsum("i..j", m.ones(2, 3))),
    ("einsum_two_ellipses", lambda m: m.einsum("......", m.ones(2, 3))),
    ("einsum_diag_mismatch", lambda m: m.einsum("ii", m.ones(2, 3))),
    ("einsum_size_mismatch", lambda m: m.einsum("ij,ij->ij", m.ones(2, 3), m.ones(3, 4))),
    ("einsum_dtype_mismatch", lambda m: m.einsum("ij,jk->ik", m.ones(2, 3), m.ones(3, 4).double())),
    ("einsum_not_str", lambda m: m.einsum(1, m.ones(2, 3))),
    ("einsum_no_operand", lambda m: m.einsum("ij")),
    ("einsum_spaces", lambda m: m.einsum("i j -> j", m.arange(6.).reshape(2, 3))),
    ("einsum_out_ellipsis", lambda m: m.einsum("ij->...ij", m.arange(6.).reshape(2, 3))),
    ("einsum_trace", lambda m: m.einsum("ii", m.arange(9.).reshape(3, 3))),
    ("einsum_implicit_upper", lambda m: m.einsum("Ba,aB", m.arange(6.).reshape(2, 3), m.arange(6.).reshape(3, 2))),
    ("einsum_batch_ellipsis", lambda m: m.einsum("...ij,...jk->...ik", m.arange(30.).reshape(5, 2, 3), m.arange(12.).reshape(3, 4))),
    ("einsum_bcast1", lambda m: m.einsum("ij,jk->ik", m.ones(2, 1), m.arange(12.).reshape(3, 4))),
    ("einsum_ellipsis_bcast_bad", lambda m: m.einsum("...,...->...", m.ones(2, 3), m.ones(4, 3))),
    ("einsum_sum_ellipsis", lambda m: m.einsum("i...->i", m.arange(6.).reshape(2, 3))),
    # empty inputs
    ("einsum_empty", lambda m: m.einsum("ij,jk->ik", m.ones(0, 3), m.ones(3, 4))),
    ("einsum_empty_inner", lambda m: m.einsum("ij,jk->ik", m.ones(2, 0), m.ones(0, 4))),
    ("einsum_empty_bcast", lambda m: m.einsum("ij,jk->ik", m.ones(2, 1), m.ones(0, 4))),
    ("roll_empty_dim1", lambda m: m.roll(m.ones(0, 3), 1, 1)),
    ("roll_empty_dim0", lambda m: m.roll(m.ones(0, 3), 1, 0)),
    ("roll_empty_flat", lambda m: m.roll(m.ones(0, 3), 1)),
    ("roll_0d", lambda m: m.roll(m.tensor(1.), 1, 0)),
    ("cummax_empty_dim1", lambda m: m.cummax(m.ones(0, 3), 1)),
    ("cummax_empty_dim0", lambda m: m.cummax(m.ones(0, 3), 0)),
    ("cummin_empty", lambda m: m.cummin(m.ones(0, 3), 1)),
    ("median_empty_dim", lambda m: m.median(m.ones(0, 3), 0)),
    ("median_empty_other", lambda m: m.median(m.ones(0, 3), 1)),
    ("median_empty_all", lambda m: m.median(m.ones(0, 3))),
    ("nanmedian_empty_dim", lambda m: m.nanmedian(m.ones(0, 3), 0)),
    ("nanmedian_empty_all", lambda m: m.nanmedian(m.ones(0, 3))),
    ("kthvalue_empty_dim", lambda m: m.kthvalue(m.ones(0, 3), 1, 0)),
    ("kthvalue_empty_other", lambda m: m.kthvalue(m.ones(0, 3), 1, 1)),
    ("mode_empty_dim", lambda m: m.mode(m.ones(0, 3), 0)),
    ("mode_empty_other", lambda m: m.mode(m.ones(0, 3), 1)),
    ("max_empty_dim", lambda m: m.max(m.ones(0, 3), 0)),
    ("max_empty_other", lambda m: m.max(m.ones(0, 3), 1)),
    ("max_empty_all", lambda m: m.max(m.ones(0, 3))),
    ("argmax_empty_dim", lambda m: m.argmax(m.ones(0, 3), 0)),
    ("argmax_empty_other", lambda m: m.argmax(m.ones(0, 3), 1)),
    ("argmax_empty_all", lambda m: m.argmax(m.ones(0, 3))),
    ("argmin_empty_all", lambda m: m.argmin(m.ones(0, 3))),
    ("amax_empty_dim", lambda m: m.amax(m.ones(0, 3), 0)),
    ("amax_empty_other", lambda m: m.amax(m.ones(0, 3), 1)),
    ("amax_empty_all", lambda m: m.amax(m.ones(0, 3))),
    ("amin_empty_both", lambda m: m.amin(m.ones(0, 3), (0, 1))),
    ("aminmax_empty_dim", lambda m: m.aminmax(m.ones(0, 3), dim=0)),
    ("aminmax_empty_all", lambda m: m.aminmax(m.ones(0, 3))),
    ("logsumexp_empty", lambda m: m.logsumexp(m.ones(0, 3), 0)),
    ("cumsum_empty", lambda m: m.cumsum(m.ones(0, 3), 0)),
    ("cumprod_empty", lambda m: m.cumprod(m.ones(0, 3), 1)),
    ("logcumsumexp_empty", lambda m: m.logcumsumexp(m.ones(0, 3), 1)),
    ("sort_empty", lambda m: m.sort(m.ones(0, 3), 1)),
    ("topk_empty_k0", lambda m: m.topk(m.ones(0, 3), 0, 0)),
    ("topk_empty_k1", lambda m: m.topk(m.ones(0, 3), 1, 1)),
    ("quantile_empty", lambda m: m.quantile(m.ones(0, 3), 0.5, 0)),
    # axis= / keepdims=
    ("axis_sum", lambda m: m.sum(m.arange(6.).reshape(2, 3), axis=1)),
    ("axis_method", lambda m: m.arange(6.).reshape(2, 3).sum(axis=1)),
    ("axis_keepdims", lambda m: m.sum(m.arange(6.).reshape(2, 3), axis=1, keepdims=True)),
    ("keepdims_only", lambda m: m.sum(m.arange(6.).reshape(2, 3), dim=1, keepdims=True)),
    ("axis_mean_method", lambda m: m.arange(6.).reshape(2, 3).mean(axis=1, keepdims=True)),
    ("axis_std", lambda m: m.std(m.arange(6.).reshape(2, 3), axis=1)),
    ("axis_var", lambda m: m.var(m.arange(6.).reshape(2, 3), axis=0, correction=0)),
    ("axis_max", lambda m: m.max(m.arange(6.).reshape(2, 3), axis=1, keepdims=True)),
    ("axis_min", lambda m: m.min(m.arange(6.).reshape(2, 3), axis=1)),
    ("axis_any", lambda m: m.any(m.arange(6.).reshape(2, 3), axis=1)),
    ("axis_all", lambda m: m.all(m.arange(6.).reshape(2, 3), axis=(0, 1))),
    ("axis_std_mean", lambda m: m.std_mean(m.arange(6.).reshape(2, 3), axis=1)),
    ("axis_var_mean", lambda m: m.var_mean(m.arange(6.).reshape(2, 3), axis=1)),
    ("axis_prod", lambda m: m.prod(m.arange(6.).reshape(2, 3), axis=1)),
    ("axis_argmax", lambda m: m.argmax(m.arange(6.).reshape(2, 3), axis=1)),
    ("axis_argmin_none", lambda m: m.argmin(m.arange(6.).reshape(2, 3), axis=None)),
    ("axis_amax", lambda m: m.amax(m.arange(6.).reshape(2, 3), axis=1)),
    ("axis_amin", lambda m: m.amin(m.arange(6.).reshape(2, 3), axis=0)),
    ("axis_nansum", lambda m: m.nansum(m.arange(6.).reshape(2, 3), axis=1)),
    ("axis_nanmean", lambda m: m.nanmean(m.arange(6.).reshape(2, 3), axis=1)),
    ("axis_logsumexp", lambda m: m.logsumexp(m.arange(6.).reshape(2, 3), axis=1)),
    ("axis_cumsum", lambda m: m.cumsum(m.arange(6.).reshape(2, 3), axis=1)),
    ("axis_cumprod", lambda m: m.cumprod(m.arange(6.).reshape(2, 3), axis=1)),
    ("axis_median", lambda m: m.median(m.arange(6.).reshape(2, 3), axis=1)),
    ("axis_count_nonzero", lambda m: m.count_nonzero(m.arange(6.).reshape(2, 3), axis=1)),
    ("axis_sort", lambda m: m.sort(m.arange(6.).reshape(2, 3), axis=1, descending=True)),
    ("axis_argsort", lambda m: m.argsort(m.arange(6.).reshape(2, 3), axis=1)),
    ("axis_softmax", lambda m: m.softmax(m.arange(6.).reshape(2, 3), axis=1)),
    ("axis_cat", lambda m: m.cat([m.ones(2, 3)], axis=1)),
    ("axis_stack", lambda m: m.stack([m.ones(2, 3)], axis=1)),
    ("axis_squeeze", lambda m: m.squeeze(m.ones(1, 3), axis=0)),
    ("axis_unsqueeze", lambda m: m.unsqueeze(m.ones(1, 3), axis=0)),
    ("axis_aminmax", lambda m: m.aminmax(m.arange(6.).reshape(2, 3), axis=1)),
    ("axis_nanmedian", lambda m: m.nanmedian(m.arange(6.).reshape(2, 3), axis=1)),
    ("axis_mode", lambda m: m.mode(m.arange(6.).reshape(2, 3), axis=1)),
    ("axis_kthvalue", lambda m: m.kthvalue(m.arange(6.).reshape(2, 3), 1, axis=1)),
    ("axis_quantile", lambda m: m.quantile(m.arange(6.).reshape(2, 3), 0.5, axis=1)),
    ("axis_topk", lambda m: m.topk(m.arange(6.).reshape(2, 3), 1, axis=1)),
    ("axis_cummax", lambda m: m.cummax(m.arange(6.).reshape(2, 3), axis=1)),
    ("axis_logcumsumexp", lambda m: m.logcumsumexp(m.arange(6.).reshape(2, 3), axis=1)),
    ("axis_diff", lambda m: m.diff(m.arange(6.).reshape(2, 3), axis=1)),
    ("axis_index_select", lambda m: m.index_select(m.arange(6.).reshape(2, 3), axis=0, index=m.tensor([1]))),
    ("axis_gather", lambda m: m.gather(m.arange(6.).reshape(2, 3), axis=0, index=m.tensor([[1]]))),
    ("axis_narrow", lambda m: m.narrow(m.arange(6.).reshape(2, 3), axis=0, start=0, length=1)),
    ("axis_vector_norm", lambda m: m.linalg.vector_norm(m.arange(6.).reshape(2, 3), axis=1)),
    ("axis_linalg_norm", lambda m: m.linalg.norm(m.arange(6.).reshape(2, 3), axis=1, keepdims=True)),
    ("axis_special_logsumexp", lambda m: m.special.logsumexp(m.arange(6.).reshape(2, 3), axis=1)),
    ("axis_fft", lambda m: m.fft.fft(m.arange(6.).reshape(2, 3), axis=0)),
    ("axis_and_dim", lambda m: m.sum(m.ones(2, 3), dim=1, axis=1)),
    ("axis_torch_norm", lambda m: m.norm(m.ones(2, 3), axis=1)),
    ("axis_split", lambda m: m.split(m.ones(2, 3), 1, axis=0)),
    ("axis_functional_softmax", lambda m: m.nn.functional.softmax(m.ones(2, 3), axis=1)),
    ("axis_unflatten", lambda m: m.ones(2, 3).unflatten(axis=0, sizes=(2, 1))),
    # 0-d reductions with dim 0 / -1
    ("red0d_sum", lambda m: m.sum(m.tensor(1.), 0)),
    ("red0d_sum_neg", lambda m: m.sum(m.tensor(1.), -1)),
    ("red0d_mean", lambda m: m.mean(m.tensor(1.), 0)),
    ("red0d_amax", lambda m: m.amax(m.tensor(1.), 0)),
    ("red0d_std", lambda m: m.std(m.tensor(1.), 0)),
    ("red0d_var", lambda m: m.var(m.tensor(1.), -1, correction=0)),
    ("red0d_prod", lambda m: m.prod(m.tensor(2.), 0)),
    ("red0d_logsumexp", lambda m: m.logsumexp(m.tensor(2.), 0)),
    ("red0d_median", lambda m: m.median(m.tensor(2.), 0)),
    ("red0d_median_keep", lambda m: m.median(m.tensor(2.), -1, keepdim=True)),
    ("red0d_any", lambda m: m.any(m.tensor(2.), 0)),
    ("red0d_topk", lambda m: m.topk(m.tensor(2.), 1, 0)),
    ("red0d_topk_k0", lambda m: m.topk(m.tensor(2.), 0)),
    ("red0d_max", lambda m: m.max(m.tensor(2.), 0)),
    ("red0d_argmax", lambda m: m.argmax(m.tensor(2.), 0)),
    ("red0d_nansum", lambda m: m.nansum(m.tensor(2.), 0)),
    ("red0d_count_nonzero", lambda m: m.count_nonzero(m.tensor(2.), 0)),
    ("red0d_quantile", lambda m: m.tensor(1.).quantile(0.5, 0)),
    ("red0d_quantile_vec", lambda m: m.tensor(1.).quantile(m.tensor([0.5, 0.2]), 0)),
    ("red0d_kthvalue", lambda m: m.kthvalue(m.tensor(2.), 1, 0)),
    ("red0d_nanmedian", lambda m: m.nanmedian(m.tensor(2.), 0)),
    ("red0d_mode", lambda m: m.mode(m.tensor(3.), 0)),
    ("red0d_mode_dim1", lambda m: m.mode(m.tensor(3.), 1)),
    ("red0d_flip", lambda m: m.tensor(1.).flip(0)),
    ("red0d_gather", lambda m: m.tensor(1.).gather(0, m.tensor(0))),
    ("red0d_gather_vec", lambda m: m.tensor(1.).gather(0, m.tensor([0, 0]))),
    ("red0d_index_select", lambda m: m.tensor(1.).index_select(0, m.tensor([0]))),
    ("red0d_sum_dim1", lambda m: m.sum(m.tensor(1.), 1)),
    # advanced indexing
    ("adv_sep", lambda m: m.arange(24.).reshape(2, 3, 4)[[0, 1], :, [1, 0]]),
    ("adv_int_slice_list", lambda m: m.arange(24.).reshape(2, 3, 4)[0, :, [1, 2]]),
    ("adv_adjacent", lambda m: m.arange(24.).reshape(2, 3, 4)[:, [0, 1], [1, 0]]),
    ("adv_none", lambda m: m.arange(24.).reshape(2, 3, 4)[None, [0, 1]]),
    ("adv_ellipsis", lambda m: m.arange(24.).reshape(2, 3, 4)[..., [0]]),
    ("adv_ellipsis_int", lambda m: m.arange(24.).reshape(2, 3, 4)[..., [0], 1]),
    ("adv_list_ellipsis_list", lambda m: m.arange(24.).reshape(2, 3, 4)[[0], ..., [1]]),
    ("adv_int_ellipsis_list", lambda m: m.arange(24.).reshape(2, 3, 4)[1, ..., [0, 1]]),
    ("adv_2d_index", lambda m: m.arange(24.).reshape(2, 3, 4)[:, [[0, 1], [1, 2]], 1:3]),
    ("adv_none_between", lambda m: m.arange(24.).reshape(2, 3, 4)[1:, [0, 2], None, [1, 3]]),
    ("adv_int_list_int", lambda m: m.arange(24.).reshape(2, 3, 4)[[1, 0], 1, [1, 2]]),
    ("adv_list_slice_int", lambda m: m.arange(24.).reshape(2, 3, 4)[[1, 0], 1:, 2]),
    ("adv_int_list_slice", lambda m: m.arange(24.).reshape(2, 3, 4)[1, [0, 2], 1:]),
    ("adv_0d_tensor_int", lambda m: m.arange(24.).reshape(2, 3, 4)[m.tensor(1), :, m.tensor([0, 2])]),
    ("adv_bool_and_list", lambda m: m.arange(24.).reshape(2, 3, 4)[m.tensor([True, False]), :, [1, 2]]),
    ("adv_slice_bool_list", lambda m: m.arange(24.).reshape(2, 3, 4)[:, m.tensor([True, False, True]), [1, 2]]),
    ("adv_int_bool_slice", lambda m: m.arange(24.).reshape(2, 3, 4)[1, m.tensor([True, False, True]), 1:3]),
    ("adv_2d_bool_slice", lambda m: m.arange(24.).reshape(2, 3, 4)[m.ones(2, 3, dtype=m.bool), 1:]),
    ("adv_slice_2d_bool", lambda m: m.arange(24.).reshape(2, 3, 4)[1:, m.ones(3, 4, dtype=m.bool)]),
    ("adv_scalar_true", lambda m: m.arange(24.).reshape(2, 3, 4)[0, True]),
    ("adv_scalar_false_slice", lambda m: m.arange(24.).reshape(2, 3, 4)[0, False, 1:]),
    ("adv_broadcast_idx", lambda m: m.arange(24.).reshape(2, 3, 4)[[[0, 1], [1, 0]], :, [[1], [2]]]),
    ("adv_int_out_of_range", lambda m: m.arange(24.).reshape(2, 3, 4)[5, [0, 1]]),
    ("adv_list_out_of_range", lambda m: m.arange(24.).reshape(2, 3, 4)[0, [0, 3]]),
    # complex linalg
    ("inv_complex", lambda m: m.linalg.inv(m.tensor([[3 + 4j, 1j], [1, 2]]))),
    ("det_complex", lambda m: m.linalg.det(m.tensor([[3 + 4j, 1j], [1, 2]]))),
    ("slogdet_complex", lambda m: m.linalg.slogdet(m.tensor([[3 + 4j, 1j], [1, 2]]))),
    ("logdet_complex", lambda m: m.logdet(m.tensor([[3 + 4j, 1j], [1, 2]]))),
    ("solve_complex", lambda m: m.linalg.solve(m.tensor([[3 + 4j, 1j], [1, 2]]), m.tensor([1 + 0j, 2j]))),
    ("cholesky_complex", lambda m: m.linalg.cholesky(m.tensor([[4 + 0j, 1j], [-1j, 3]]))),
    ("cholesky_complex_upper", lambda m: m.linalg.cholesky(m.tensor([[4 + 0j, 1j], [-1j, 3]]), upper=True)),
    ("eigvals_complex", lambda m: m.linalg.eigvals(m.tensor([[2 + 0j, 1j], [0, 3]]))),
    ("eigvalsh_complex", lambda m: m.linalg.eigvalsh(m.tensor([[4 + 0j, 1j], [-1j, 3]]))),
    ("svdvals_complex", lambda m: m.linalg.svdvals(m.tensor([[3 + 4j, 1j], [1, 2]]))),
    ("svd_s_complex", lambda m: m.linalg.svd(m.tensor([[3 + 4j, 1j], [1, 2]])).S),
    ("pinv_complex", lambda m: m.linalg.pinv(m.tensor([[3 + 4j, 1j], [1, 2]]))),
    ("cond_complex", lambda m: m.linalg.cond(m.tensor([[3 + 4j, 1j], [1, 2]]))),
    ("matrix_rank_complex", lambda m: m.linalg.matrix_rank(m.tensor([[3 + 4j, 1j], [1, 2]]))),
    ("lstsq_complex", lambda m: m.linalg.lstsq(m.tensor([[3 + 4j, 1j], [1, 2], [1, 1]]), m.tensor([[1 + 0j], [2j], [1]])).solution),
    ("inverse_complex", lambda m: m.inverse(m.tensor([[3 + 4j, 1j], [1, 2]]))),
    ("cholesky_inverse_complex", lambda m: m.cholesky_inverse(m.tensor([[2 + 0j, 0], [1j, 3]]))),
    ("cholesky_solve_complex", lambda m: m.cholesky_solve(m.tensor([[1 + 1j], [2]]), m.tensor([[2 + 0j, 0], [1j, 3]]))),
    ("matrix_power_complex", lambda m: m.linalg.matrix_power(m.tensor([[3 + 4j, 1j], [1, 2]]), -1)),
    ("complex_type_name", lambda m: m.tensor([3 + 4j]).type()),
    # norms and quantiles over empty reductions, all/any over no dims
    ("norm_inf_empty_dim", lambda m: m.norm(m.ones(0, 3), p=inf, dim=0)),
    ("norm_neginf_nonempty_dim", lambda m: m.norm(m.ones(0, 3), p=-inf, dim=1)),
    ("vector_norm_neginf_empty", lambda m: m.linalg.vector_norm(m.ones(0, 3), ord=-inf)),
    ("vector_norm_neg1_empty_dim", lambda m: m.linalg.vector_norm(m.ones(0, 3), ord=-1, dim=0)),
    ("vector_norm_half_empty_dim", lambda m: m.linalg.vector_norm(m.ones(0, 3), ord=0.5, dim=0)),
    ("matrix_norm_inf_empty", lambda m: m.linalg.matrix_norm(m.ones(0, 3), ord=inf)),
    ("matrix_norm_2_empty", lambda m: m.linalg.matrix_norm(m.ones(0, 3), ord=2)),
    ("matrix_norm_1_empty_keepdim", lambda m: m.linalg.matrix_norm(m.ones(0, 3), ord=1, keepdim=True)),
    ("matrix_norm_nuc_empty_batch", lambda m: m.linalg.matrix_norm(m.ones(2, 0, 3), ord="nuc")),
    ("quantile_empty_other_dim", lambda m: m.quantile(m.ones(0, 3), 0.5, 1)),
    ("nanquantile_empty", lambda m: m.nanquantile(m.ones(0, 3), 0.5, 1)),
    ("any_no_dims", lambda m: m.any(m.ones(2, 3), ())),
    ("all_no_dims_empty", lambda m: m.all(m.ones(0, 3), [])),
    # gather / scatter / index_* / take / put / index_put checks
    ("gather_int32_index", lambda m: m.ones(2, 3).gather(0, m.zeros(2, 3).int())),
    ("gather_int16_index", lambda m: m.ones(2, 3).gather(0, m.zeros(2, 3, dtype=m.int16))),
    ("scatter_int32_index", lambda m: m.ones(2, 3).scatter(0, m.zeros(2, 3).int(), 2.0)),
    ("scatter_int16_index", lambda m: m.ones(2, 3).scatter(0, m.zeros(2, 3, dtype=m.int16), 2.0)),
    ("scatter_src_dtype", lambda m: m.ones(2, 3).scatter(0, m.zeros(2, 3).long(), m.ones(2, 3).double())),
    ("scatter_add_src_dtype", lambda m: m.ones(2, 3).scatter_add(0, m.zeros(2, 3).long(), m.ones(2, 3).double())),
    ("index_add_src_dtype", lambda m: m.ones(2, 3).index_add(0, m.tensor([0]), m.ones(1, 3).double())),
    ("index_copy_src_dtype", lambda m: m.ones(2, 3).index_copy(0, m.tensor([0]), m.ones(1, 3).double())),
    ("index_fill_1d_value", lambda m: m.ones(2, 3).index_fill(0, m.tensor([0]), m.tensor([1.0]))),
    ("index_fill_0d_value", lambda m: m.ones(2, 3).index_fill(0, m.tensor([0]), m.tensor(2.0))),
    ("index_fill_negative", lambda m: m.ones(2, 3).index_fill(0, m.tensor([-1]), 2.0)),
    ("index_fill_range", lambda m: m.ones(2, 3).index_fill(0, m.tensor([2]), 2.0)),
    ("index_fill_int32", lambda m: m.ones(2, 3).index_fill(0, m.tensor([1]).int(), 2.0)),
    ("index_fill_2d_index", lambda m: m.ones(2, 3).index_fill(1, m.tensor([[1]]), 2.0)),
    ("take_float_index", lambda m: m.take(m.ones(2, 3), m.tensor([0.0]))),
    ("take_int32_index", lambda m: m.take(m.ones(2, 3), m.tensor([1]).int())),
    ("put_numel", lambda m: m.ones(2, 3).put(m.tensor([1]), m.ones(2))),
    ("put_float_index", lambda m: m.ones(2, 3).put(m.tensor([1.0]), m.ones(1))),
    ("put_negative", lambda m: m.ones(2, 3).put(m.tensor([-1]), m.ones(1) * 5)),
    ("index_put_shape", lambda m: m.ones(2, 3).index_put((m.tensor([0]),), m.ones(2))),
    ("index_put_extra_dims", lambda m: m.ones(2, 3).index_put((m.tensor([0]),), m.ones(1, 1, 3))),
    ("index_put_pairs", lambda m: m.ones(2, 3).index_put((m.tensor([0, 1]), m.tensor([0, 1])), m.ones(3))),
    ("index_put_mask_ok", lambda m: m.ones(2, 3).index_put((m.tensor([[True, False, True], [False, False, True]]),),
                                                           m.arange(3.0))),
    ("index_put_mask_bad", lambda m: m.ones(2, 3).index_put((m.tensor([[True, False, True], [False, False, True]]),),
                                                            m.arange(2.0))),
    ("index_put_0d_and_list", lambda m: m.ones(2, 3).index_put((m.tensor(1), m.tensor([0, 2])), m.arange(3.0))),
    ("index_put_dtype", lambda m: m.ones(2, 3).index_put((m.tensor([0]),), m.ones(3, dtype=m.float64))),
    ("index_put_inplace_dtype", lambda m: m.ones(2, 3, dtype=m.int64).index_put_((m.tensor([0]),), m.ones(3))),
    ("index_float_list", lambda m: m.arange(3.0)[[1.7, 0.2]]),
    ("index_str", lambda m: m.ones(3)["a"]),
    # sort order and dtype rules
    ("topk_nan_largest", lambda m: m.topk(m.tensor([1.0, nan, 3.0]), 2)),
    ("topk_nan_smallest", lambda m: m.topk(m.tensor([1.0, nan, 3.0]), 2, largest=False)),
    ("sort_desc_nan", lambda m: m.sort(m.tensor([1.0, nan, 3.0, nan]), descending=True)),
    ("sort_desc_uint8", lambda m: m.sort(m.tensor([0, 1, 2], dtype=m.uint8), descending=True)),
    ("sort_desc_int64_min", lambda m: m.sort(m.tensor([-9223372036854775808, 5, 0]), descending=True)),
    ("sort_desc_stable_ties", lambda m: m.sort(m.tensor([3, 1, 3, 1, 2]), descending=True, stable=True)),
    ("sort_desc_bool", lambda m: m.sort(m.tensor([True, False, True]), descending=True, stable=True)),
    ("median_bool", lambda m: m.median(m.ones(2, dtype=m.bool))),
    ("median_bool_dim", lambda m: m.median(m.ones(2, dtype=m.bool), 0)),
    ("kthvalue_complex", lambda m: m.kthvalue(m.ones(2, dtype=m.complex64), 1)),
    ("trace_bool", lambda m: m.trace(m.ones(2, 2, dtype=m.bool))),
    ("trace_uint8", lambda m: m.trace(m.ones(2, 2, dtype=m.uint8))),
    ("sign_bool", lambda m: m.sign(m.tensor([True, False]))),
    ("norm_p_none", lambda m: m.norm(m.ones(2), p=None)),
    ("norm_p_bad_string", lambda m: m.norm(m.ones(2, 2), p="frOx")),
    ("norm_int", lambda m: m.norm(m.ones(2, dtype=m.int64))),
    ("einsum_uint8_trace", lambda m: m.einsum("ii", m.ones(3, 3, dtype=m.uint8))),
    ("einsum_bool_sum", lambda m: m.einsum("ij->j", m.ones(3, 3, dtype=m.bool))),
    ("einsum_uint8_sum_overflow", lambda m: m.einsum("ij->", m.full((20, 20), 200, dtype=m.uint8))),
    ("einsum_uint8_matmul", lambda m: m.einsum("ij,jk->ik", m.ones(3, 3, dtype=m.uint8), m.ones(3, 3, dtype=m.uint8))),
    ("einsum_uint8_diag", lambda m: m.einsum("ii->i", m.ones(3, 3, dtype=m.uint8))),
    ("cholesky_nan", lambda m: m.linalg.cholesky(m.tensor([[1.0, 0.0], [0.0, nan]]))),
    # pointwise edges
    ("div_floor_complex", lambda m: m.div(m.ones(2, dtype=m.complex64), 2, rounding_mode="floor")),
    ("div_trunc_complex", lambda m: m.div(m.ones(2, dtype=m.complex64), 2, rounding_mode="trunc")),
    ("floor_divide_complex", lambda m: m.floor_divide(m.ones(2, dtype=m.complex64), 2)),
    ("round_huge_decimals", lambda m: m.round(m.ones(2), decimals=2 ** 62)),
    ("round_huge_neg_decimals", lambda m: m.round(m.ones(2), decimals=-2 ** 62)),
    ("round_float_decimals", lambda m: m.round(m.ones(2), decimals=1.5)),
    ("round_int_decimals", lambda m: m.round(m.ones(2, dtype=m.int64), decimals=2)),
    ("round_int", lambda m: m.round(m.ones(2, dtype=m.int64))),
    ("round_400_decimals", lambda m: m.round(m.tensor([1.5]), decimals=400)),
    ("round_float64_300", lambda m: m.round(m.tensor([1.5], dtype=m.float64), decimals=300)),
    ("sign_complex", lambda m: m.sign(m.ones(2, dtype=m.complex64))),
    # integer size / dims / index arguments
    ("view_float_size", lambda m: m.ones(2, 3).view(2, 1.5)),
    ("reshape_str_size", lambda m: m.ones(2, 3).reshape(2, "a")),
    ("reshape_nan_size", lambda m: m.ones(2, 3).reshape((2, nan))),
    ("reshape_0d_tensor_size", lambda m: m.ones(2, 3).reshape(m.tensor(3), 2)),
    ("expand_float_size", lambda m: m.ones(2, 3).expand(2, 2, 1.5)),
    ("permute_float_dim", lambda m: m.ones(2, 3).permute(1.0, 0)),
    ("repeat_nan", lambda m: m.ones(2, 3).repeat(1, nan)),
    ("tile_nan", lambda m: m.ones(2, 3).tile((1, nan))),
    ("select_float_index", lambda m: m.ones(2, 3).select(0, 1.0)),
    ("select_nan_index", lambda m: m.ones(2, 3).select(0, nan)),
    ("select_0d_tensor_index", lambda m: m.ones(2, 3).select(0, m.tensor(1))),
    ("index_select_range", lambda m: m.ones(3).index_select(0, m.tensor([5]))),
    ("index_select_negative", lambda m: m.ones(3).index_select(0, m.tensor([-1]))),
    ("index_add_range", lambda m: m.ones(3).index_add(0, m.tensor([5]), m.ones(1))),
    ("index_select_range_dim1", lambda m: m.ones(2, 3).index_select(1, m.tensor([4]))),
    ("index_select_range_2d_dim0", lambda m: m.ones(2, 3).index_select(0, m.tensor([4]))),
    ("index_add_range_2d", lambda m: m.ones(2, 3).index_add(0, m.tensor([4]), m.ones(1, 3))),
    ("unfold_negative_size", lambda m: m.ones(4).unfold(0, -1, 1)),
    ("unfold_zero_size", lambda m: m.ones(4).unfold(0, 0, 1)),
    ("sum_keepdim_int", lambda m: m.sum(m.ones(4), 0, keepdim=1)),
    ("sum_keepdim_str", lambda m: m.sum(m.ones(4), 0, keepdim="yes")),
    ("amax_keepdim_str", lambda m: m.amax(m.ones(4), 0, keepdim="a")),
    ("max_keepdim_none", lambda m: m.max(m.ones(4), 0, keepdim=None)),
    ("argmax_keepdim_int", lambda m: m.argmax(m.ones(4), 0, keepdim=2)),
    ("cross_dtype", lambda m: m.linalg.cross(m.ones(3), m.ones(3).bool())),
    ("cholesky_bfloat16", lambda m: m.linalg.cholesky(m.eye(2).bfloat16())),
    ("cholesky_half", lambda m: m.linalg.cholesky(m.eye(2).half())),
    ("inv_half", lambda m: m.linalg.inv(m.eye(2).half())),
    # argument types of pointwise ops, in-place binary ops, reductions and shape ops
    ("add__none", lambda m: m.ones(3).add_(None)),
    ("mul__none", lambda m: m.ones(3).mul_(None)),
    ("div__str", lambda m: m.ones(3).div_("a")),
    ("sub__scalar", lambda m: m.ones(3).sub_(2)),
    ("clamp__none_min", lambda m: m.ones(3).clamp_(None, 0.5)),
    ("fmod_none", lambda m: m.fmod(m.ones(3), None)),
    ("remainder_none", lambda m: m.remainder(m.ones(3), None)),
    ("fmod_scalar", lambda m: m.fmod(m.ones(3), 1.5)),
    ("maximum_float_other", lambda m: m.maximum(m.ones(3), 1.5)),
    ("maximum_float_input", lambda m: m.maximum(1.5, m.ones(3))),
    ("minimum_none", lambda m: m.minimum(m.ones(3), None)),
    ("atan2_float", lambda m: m.atan2(m.ones(3), 1.5)),
    ("addcmul_float_t2", lambda m: m.addcmul(m.ones(3), m.ones(3), 1.5)),
    ("addcdiv_float_t1", lambda m: m.addcdiv(m.ones(3), 1.5, m.ones(3))),
    ("lerp_int", lambda m: m.lerp(m.ones(3, dtype=m.int64), m.ones(3), 0.5)),
    ("lerp_int_same", lambda m: m.lerp(m.ones(3, dtype=m.int64), m.ones(3, dtype=m.int64), 0.5)),
    ("lerp_bool", lambda m: m.lerp(m.ones(3).bool(), m.ones(3), 0.5)),
    ("lerp_end_complex", lambda m: m.lerp(m.ones(3), m.ones(3, dtype=m.complex64), 0.5)),
    ("lerp_weight_double", lambda m: m.lerp(m.ones(3), m.ones(3), m.full((3,), 0.5, dtype=m.float64))),
    ("lerp_weight_0d_double", lambda m: m.lerp(m.zeros(3), m.ones(3), m.tensor(0.25, dtype=m.float64))),
    ("lerp_weight_none", lambda m: m.lerp(m.ones(3), m.ones(3), None)),
    ("lerp_half", lambda m: m.lerp(m.zeros(3).half(), m.ones(3).half(), 0.5)),
    ("nan_to_num_str", lambda m: m.nan_to_num(m.tensor([nan, inf]), nan="a")),
    ("nan_to_num_posinf_str", lambda m: m.nan_to_num(m.tensor([nan, inf]), posinf="a")),
    ("nan_to_num_none", lambda m: m.nan_to_num(m.tensor([nan, inf, 1.0]), nan=None)),
    ("nan_to_num_bool", lambda m: m.nan_to_num(m.tensor([nan, inf, 1.0]), nan=True, posinf=2)),
    ("where_list_cond", lambda m: m.where([1.0, 2.0], m.ones(2), m.zeros(2))),
    ("where_list_input", lambda m: m.where(m.ones(2) > 0, [1.0, 2.0], m.zeros(2))),
    ("where_scalars", lambda m: m.where(m.tensor([True, False]), 1.0, 0)),
    ("count_nonzero_float", lambda m: m.count_nonzero(1.5)),
    ("prod_dim_none", lambda m: m.prod(m.ones(3), None)),
    ("prod_method_dim_none", lambda m: m.ones(3).prod(None)),
    ("prod_no_dim", lambda m: m.ones(3, 2).prod()),
    ("sort_descending_none", lambda m: m.sort(m.ones(3), descending=None)),
    ("sort_stable_int", lambda m: m.sort(m.ones(3), stable=1)),
    ("unique_sorted_none", lambda m: m.unique(m.ones(3), sorted=None)),
    ("unique_counts_str", lambda m: m.unique(m.ones(3), return_counts="yes")),
    ("bincount_half", lambda m: m.bincount(m.ones(3).half())),
    ("bincount_float", lambda m: m.bincount(m.ones(3))),
    ("bincount_bool", lambda m: m.bincount(m.ones(3).bool())),
    ("bincount_2d", lambda m: m.bincount(m.ones(3, 1, dtype=m.int64))),
    ("tril_diagonal_none", lambda m: m.tril(m.ones(3, 3), None)),
    ("triu_diagonal_float", lambda m: m.triu(m.ones(3, 3), 1.5)),
    ("roll_huge_negative", lambda m: m.roll(m.ones(3), -9223372036854775807, 0)),
    ("roll_shift_below_symint", lambda m: m.roll(m.ones(3), -2 ** 62 - 1, 0)),
    ("roll_shift_at_symint_limit", lambda m: m.roll(m.arange(3.0), -2 ** 62, 0)),
    ("roll_huge_positive", lambda m: m.roll(m.arange(3.0), 2 ** 62 + 1, 0)),
    ("squeeze_none", lambda m: m.squeeze(m.ones(3, 1), None)),
    ("squeeze_method_none", lambda m: m.ones(3, 1).squeeze(None)),
    ("squeeze_no_dim", lambda m: m.ones(3, 1).squeeze()),
    ("index_select_empty_dim", lambda m: m.index_select(m.ones(0, 3), 0, m.tensor([2]))),
    ("index_select_empty_last", lambda m: m.index_select(m.ones(3, 0), -1, m.tensor([0]))),
    ("index_select_empty_vector", lambda m: m.index_select(m.ones(0), 0, m.tensor([2]))),
    ("index_select_empty_ok", lambda m: m.index_select(m.ones(0, 3), 1, m.tensor([2]))),
    ("xlogy_scalar_other", lambda m: m.xlogy(m.tensor([0.0, 1.0, 2.0]), 2.0)),
    ("xlogy_scalar_self", lambda m: m.xlogy(2.0, m.tensor([1.0, 2.0]))),
    ("xlogy_int_tensor", lambda m: m.xlogy(m.tensor([0, 1, 2]), 3)),
    ("xlogy_inplace_scalar", lambda m: m.tensor([0.5, 1.0]).xlogy_(2.0)),
    # std_mean/var_mean's mean is Welford's: an infinite element before the last one reduced makes it NaN
    ("std_mean_inf_first", lambda m: m.std_mean(m.tensor([[inf, 1.0, 2.0], [1.0, 2.0, 3.0]]), dim=1)),
    ("std_mean_inf_last", lambda m: m.std_mean(m.tensor([1.0, 2.0, inf]))),
    ("std_mean_inf_dim0", lambda m: m.std_mean(m.tensor([[inf, 1.0], [1.0, -inf]]), dim=0, keepdim=True)),
    ("var_mean_inf_all", lambda m: m.var_mean(m.tensor([[1.0, inf], [1.0, 2.0]]))),
    ("var_mean_neginf_last", lambda m: m.var_mean(m.tensor([[1.0, 2.0], [1.0, -inf]]), dim=(0, 1))),
]

_NUMPY_DIR = os.path.dirname(np.__file__)


def _run(fn, mod):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return True, fn(mod)
        except Exception as e:  # noqa: BLE001 - the exception is the result being compared
            return False, e


def _dtype_name(d):
    return str(d).split(".")[-1]


def _flatten(r):
    """A comparable form of a result: tensors as (shape, dtype, float64/complex128 values), sequences
    element-wise, other values as they are."""
    if isinstance(r, (tt.Tensor, torch.Tensor)):
        x = r.detach()
        name = _dtype_name(x.dtype)
        if name == "bfloat16":
            x = x.float()
        vals = np.asarray(x.numpy())
        vals = vals.astype(np.complex128 if vals.dtype.kind == "c" else np.float64)
        return ("tensor", tuple(r.shape), name, vals)
    if isinstance(r, (tuple, list)):
        return ("seq", [_flatten(v) for v in r])
    return ("value", r)


def _assert_same(ours, theirs, cid):
    if theirs[0] != ours[0]:
        raise AssertionError(f"{cid}: {ours[0]} vs torch's {theirs[0]}")
    if theirs[0] == "tensor":
        _, shp, dt, vals = ours
        _, tshp, tdt, tvals = theirs
        assert shp == tshp, f"{cid}: shape {shp} vs torch's {tshp}"
        assert dt == tdt, f"{cid}: dtype {dt} vs torch's {tdt}"
        np.testing.assert_allclose(vals, tvals, rtol=2e-6, atol=1e-6, equal_nan=True, err_msg=cid)
    elif theirs[0] == "seq":
        assert len(ours[1]) == len(theirs[1]), f"{cid}: {len(ours[1])} results vs torch's {len(theirs[1])}"
        for a, b in zip(ours[1], theirs[1]):
            _assert_same(a, b, cid)
    else:
        assert ours[1] == theirs[1], f"{cid}: {ours[1]!r} vs torch's {theirs[1]!r}"


def _from_inside(exc):
    """The file the exception was raised in, when that is NumPy (not a deliberate check)."""
    frames = traceback.extract_tb(exc.__traceback__)
    last = frames[-1].filename if frames else ""
    return last.startswith(_NUMPY_DIR) or type(exc).__module__.startswith("numpy")


@pytest.mark.parametrize("cid,fn", CASES, ids=[c[0] for c in CASES])
def test_tensor_bad_input(cid, fn):
    t_ok, t_res = _run(fn, torch)
    o_ok, o_res = _run(fn, tt)
    if not t_ok:
        assert not o_ok, f"{cid}: tinytorch returned {o_res!r} where torch raises {type(t_res).__name__}: {t_res}"
        # torch's own classes (torch.linalg.LinAlgError is _LinAlgError) are compared by their built-in base
        base = next(c for c in type(t_res).__mro__ if c.__module__ == "builtins")
        assert isinstance(o_res, base), (
            f"{cid}: tinytorch raised {type(o_res).__name__}: {o_res}; torch raises {type(t_res).__name__}: {t_res}")
        assert not _from_inside(o_res), f"{cid}: the error comes from inside NumPy: {o_res!r}"
        return
    if not o_ok:
        raise AssertionError(f"{cid}: tinytorch raised {type(o_res).__name__}: {o_res}; torch returns {t_res!r}")
    _assert_same(_flatten(o_res), _flatten(t_res), cid)


@pytest.mark.parametrize("index", [lambda m: m.tensor([1, 0, 1, 0], dtype=m.uint8),
                                   lambda m: (m.tensor([1, 0, 1, 0], dtype=m.uint8),)])
def test_uint8_mask_warns_as_torch(index):
    """A uint8 index tensor is a (deprecated) mask in PyTorch, with a UserWarning naming uint8."""
    for m in (torch, tt):
        with pytest.warns(UserWarning, match="uint8"):
            r = m.arange(4.0)[index(m)]
        assert r.tolist() == [0.0, 2.0]


def test_uint8_mask_setitem_scalar_raises():
    """``x[uint8_mask] = scalar`` goes through masked_fill_ in PyTorch, which refuses uint8 masks."""
    for m in (torch, tt):
        x = m.zeros(4)
        with pytest.raises(RuntimeError, match="boolean masks"):
            x[m.tensor([1, 0, 1, 0], dtype=m.uint8)] = 5.0


@pytest.mark.parametrize("idx,shape", [((0, slice(None), [1, 2]), (3, 2)), ((slice(None), [0, 1], [1, 2]), (2, 2)),
                                       (([0, 1], slice(None), [1, 0]), (2, 3)), ((1, Ellipsis, [0, 3]), (3, 2)),
                                       ((slice(None), [0, 1], None, [1, 2]), (2, 2, 1)),
                                       ((slice(1, None), [0, 1]), (2, 4))])
def test_advanced_setitem_places_dims_as_torch(idx, shape):
    """Assigning through mixed advanced indices writes the same elements as PyTorch (value laid out in
    PyTorch's result order)."""
    outs = []
    for m in (torch, tt):
        x = m.zeros(2, 3, 4)
        x[idx] = m.arange(float(np.prod(shape))).reshape(shape)
        outs.append(np.asarray(x.numpy()))
    np.testing.assert_array_equal(outs[1], outs[0])


@pytest.mark.parametrize("idx,shape", [((0, slice(None), [1, 2]), (2, 3)), ((slice(1, None), [0, 1]), (3, 4)),
                                       ((slice(None), [0, 1], None, [1, 2]), (2, 2))])
def test_advanced_setitem_shape_mismatch_as_torch(idx, shape):
    """A value that does not broadcast to PyTorch's indexing result is a RuntimeError naming both shapes."""
    for m in (torch, tt):
        x = m.zeros(2, 3, 4)
        with pytest.raises(RuntimeError, match="shape mismatch"):
            x[idx] = m.ones(shape)


def test_advanced_index_backward_as_torch():
    """The gradient of a mixed advanced index (int, slice, list) lands where PyTorch puts it."""
    grads = []
    for m in (torch, tt):
        x = m.arange(24.0).reshape(2, 3, 4).requires_grad_()
        (x[0, :, [1, 2]] * m.arange(6.0).reshape(3, 2)).sum().backward()
        grads.append(np.asarray(x.grad.numpy()))
    np.testing.assert_array_equal(grads[1], grads[0])


def test_std_gradient_with_scaling_as_torch():
    """std's overflow-safe scaling leaves its gradient unchanged."""
    grads = []
    for m in (torch, tt):
        x = m.tensor([[1.0, 2.0, 4.0], [3.0, 3.0, 1.0]], requires_grad=True)
        m.std(x, 1).sum().backward()
        grads.append(np.asarray(x.grad.numpy()))
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("shift", [0, 3, -3])
def test_roll_never_aliases_input(shift):
    """roll returns a new tensor even when nothing moves, as PyTorch: writing to it leaves the input alone."""
    for m in (torch, tt):
        x = m.ones(3)
        y = m.roll(x, shift, 0)
        y[0] = 5.0
        assert x.tolist() == [1.0, 1.0, 1.0]


def test_axis_alias_keeps_signature():
    """The NumPy keyword spellings leave the functions' documented signatures as they are."""
    import inspect
    assert list(inspect.signature(tt.sum).parameters)[:3] == ["input", "dim", "keepdim"]
    assert "axis" not in inspect.signature(tt.Tensor.mean).parameters


def test_unique_values_require_grad_as_torch():
    """unique's values of an input that requires grad require grad, and their backward raises as PyTorch's."""
    for m in (torch, tt):
        x = m.tensor([2.0, 1.0, 2.0], requires_grad=True)
        u = m.unique(x)
        assert u.requires_grad
        inv = m.unique(x, return_inverse=True)[1]
        assert not inv.requires_grad
        with pytest.raises(NotImplementedError):
            u.sum().backward()
        with m.no_grad():
            assert not m.unique(x).requires_grad


@pytest.mark.parametrize("value", [2 ** 64, 2 ** 70, -2 ** 63 - 1, 2 ** 64 - 1, -2 ** 63])
@pytest.mark.parametrize("op", ["add", "rsub", "mul", "eq", "lt", "truediv"])
def test_operator_with_an_int_beyond_a_scalar(op, value):
    """A Python int operand of a tensor operator is PyTorch's Scalar (an int64 or a uint64): wider ints raise
    its OverflowError, with its message, before anything is computed."""
    fns = {"add": lambda x: x + value, "rsub": lambda x: value - x, "mul": lambda x: x * value,
           "eq": lambda x: x == value, "lt": lambda x: x < value, "truediv": lambda x: x / value}
    results = []
    for L in (tt, torch):
        try:
            r = fns[op](L.ones(2))
            results.append(("ok", [float(v) for v in r.tolist()]))
        except OverflowError as e:
            results.append(("OverflowError", str(e)))
    assert results[0] == results[1]
