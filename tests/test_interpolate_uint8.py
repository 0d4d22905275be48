"""F.interpolate on uint8 images (torchvision's transforms.v2 resize): bilinear and bicubic, antialiased or
not, must equal PyTorch's fixed-point kernel exactly."""
import numpy as np
import pytest

import tinytorch as tt
from conftest import torch

CASES = [((1, 3, 37, 45), (20, 17)), ((2, 3, 16, 16), (40, 33)), ((1, 1, 64, 48), (13, 29)),
         ((1, 6, 33, 21), (7, 50)), ((1, 4, 120, 90), (96, 64)), ((1, 3, 10, 10), (10, 4)), ((1, 3, 2, 3), (9, 1))]


@pytest.mark.parametrize("shape,size", CASES)
@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
@pytest.mark.parametrize("antialias", [True, False])
@pytest.mark.parametrize("align_corners", [False, True])
def test_uint8_resize_exact(shape, size, mode, antialias, align_corners):
    a = np.random.default_rng(sum(shape) + sum(size)).integers(0, 256, shape).astype(np.uint8)
    r = torch.nn.functional.interpolate(torch.from_numpy(a), size=size, mode=mode, antialias=antialias,
                                        align_corners=align_corners)
    t = tt.nn.functional.interpolate(tt.from_numpy(a), size=size, mode=mode, antialias=antialias,
                                     align_corners=align_corners)
    assert t.dtype == tt.uint8 and tuple(t.shape) == tuple(r.shape)
    np.testing.assert_array_equal(t.numpy(), r.numpy())


@pytest.mark.parametrize("scale_factor", [0.37, 0.5, 1.7, (0.6, 2.25)])
@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
def test_uint8_resize_scale_factor_exact(scale_factor, mode):
    a = np.random.default_rng(7).integers(0, 256, (2, 3, 31, 26)).astype(np.uint8)
    r = torch.nn.functional.interpolate(torch.from_numpy(a), scale_factor=scale_factor, mode=mode, antialias=True)
    t = tt.nn.functional.interpolate(tt.from_numpy(a), scale_factor=scale_factor, mode=mode, antialias=True)
    np.testing.assert_array_equal(t.numpy(), r.numpy())


def test_uint8_saturated_image_bicubic_overshoot_clamps():
    # a hard 0 / 255 edge: the bicubic lobes overshoot, the kernel clamps to [0, 255]
    a = np.zeros((1, 1, 8, 8), np.uint8)
    a[..., 4:] = 255
    for aa in (True, False):
        r = torch.nn.functional.interpolate(torch.from_numpy(a), size=(8, 21), mode="bicubic", antialias=aa)
        t = tt.nn.functional.interpolate(tt.from_numpy(a), size=(8, 21), mode="bicubic", antialias=aa)
        np.testing.assert_array_equal(t.numpy(), r.numpy())
