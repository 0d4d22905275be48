"""Dropout's noise drawn in one native pass (``Generator._bernoulli_scaled``, csrc/random.cpp) against torch: the
same values for the same seed, the stream left where torch leaves it, the gradient ``grad * noise``. With
``TINYTORCH_NATIVE=0`` the same tests check the two-op path (bernoulli, then the division)."""
import numpy as np
import pytest
from conftest import torch

import tinytorch as tt
from tinytorch._ops.generator import _NATIVE_MIN_DRAWS, default_generator


@pytest.mark.parametrize("shape,p,dtype", [((2048, 64), 0.1, "float32"), ((3, 5001), 0.5, "float64"),
                                           ((10, 7), 0.3, "float32"), ((4099, 3), 0.9, "float16"),
                                           ((_NATIVE_MIN_DRAWS,), 0.25, "float32")])
def test_dropout_matches_torch_stream(shape, p, dtype):
    x = np.random.default_rng(0).standard_normal(shape)
    for seed in (0, 12345):
        torch.manual_seed(seed)
        tt.manual_seed(seed)
        want = torch.nn.functional.dropout(torch.tensor(x, dtype=getattr(torch, dtype)), p)
        got = tt.nn.functional.dropout(tt.tensor(x, dtype=getattr(tt, dtype)), p)
        np.testing.assert_array_equal(got.float().numpy(), want.float().numpy())
        # the generator is left where torch's is: the next draws agree too
        np.testing.assert_array_equal(tt.rand(5).numpy(), torch.rand(5).numpy())


def test_dropout_of_a_transpose_and_its_gradient_match_torch():
    x = np.random.default_rng(1).standard_normal((300, 200)).astype(np.float32)
    a = tt.tensor(x, requires_grad=True)
    b = torch.tensor(x, requires_grad=True)
    g = np.random.default_rng(2).standard_normal((200, 300)).astype(np.float32)
    tt.manual_seed(3)
    torch.manual_seed(3)
    ya = tt.nn.functional.dropout(a.t(), 0.2)
    yb = torch.nn.functional.dropout(b.t(), 0.2)
    assert ya.stride() == yb.stride()
    np.testing.assert_array_equal(ya.detach().numpy(), yb.detach().numpy())
    ya.backward(tt.tensor(g))
    yb.backward(torch.tensor(g))
    np.testing.assert_array_equal(a.grad.numpy(), b.grad.numpy())


def test_dropout_keeps_nan_and_inf_of_dropped_elements_as_torch():
    # a dropped element is x * 0: NaN for inf and NaN inputs, as torch's input * noise
    x = np.full((64, 128), np.inf, np.float32)
    x[::2] = np.nan
    tt.manual_seed(4)
    torch.manual_seed(4)
    np.testing.assert_array_equal(tt.nn.functional.dropout(tt.tensor(x), 0.5).numpy(),
                                  torch.nn.functional.dropout(torch.tensor(x), 0.5).numpy())


def test_bernoulli_scaled_rejects_a_bad_state_and_leaves_it_alone():
    from tinytorch.backends.cpu.native import _C
    if _C is None:
        assert default_generator._bernoulli_scaled(10 ** 5, 0.5, np.float32) is None
        return
    key = np.arange(624, dtype=np.uint32)
    with pytest.raises(ValueError, match="624 words"):
        _C.bernoulli_scaled(key[:100], 0, 10, 0.5, False)
    with pytest.raises(ValueError, match="bad position"):
        _C.bernoulli_scaled(key, 625, 10, 0.5, False)
    with pytest.raises(ValueError, match="negative count"):
        _C.bernoulli_scaled(key, 0, -1, 0.5, False)
    np.testing.assert_array_equal(key, np.arange(624, dtype=np.uint32))
    noise, pos = _C.bernoulli_scaled(key, 624, 1000, 0.75, False)
    assert noise.dtype == np.float32 and set(np.unique(noise)) <= {np.float32(0), np.float32(1) / np.float32(0.75)}
    assert pos == 2000 % 624  # 2000 words from the end of a used-up state: three twists
