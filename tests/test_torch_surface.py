"""Smaller pieces of PyTorch's surface that libraries rely on, each compared with PyTorch: the barebones dtypes
(uint16/32/64, float8), the bare ``@no_grad`` decorator, device equality, generic Datasets, Tensor device flags,
``torch._C``'s Python names and ``torch.multiprocessing.spawn``."""
import pickle

import numpy as np
import pytest

import tinytorch as tt
from conftest import torch

BAREBONES = ["uint16", "uint32", "uint64", "float8_e4m3fn", "float8_e5m2"]


@pytest.mark.parametrize("name", BAREBONES)
def test_barebones_dtype_attributes_and_conversions(name):
    ours, theirs = getattr(tt, name), getattr(torch, name)
    assert (repr(ours), ours.itemsize, ours.is_floating_point, ours.is_signed) == \
        (repr(theirs), theirs.itemsize, theirs.is_floating_point, theirs.is_signed)
    vals = [0.0, 1.0, 2.5, 3.0, 100.0] if ours.is_floating_point else [0, 1, 2, 300, 65535]
    a = tt.tensor(vals).to(ours)
    b = torch.tensor(vals).to(theirs)
    assert a.to(tt.float64).tolist() == b.to(torch.float64).tolist()
    assert tt.cat([a, a]).shape == torch.cat([b, b]).shape and a.clone().dtype is ours
    assert pickle.loads(pickle.dumps(ours)) is ours
    if ours.is_floating_point:
        fo, ft = tt.finfo(ours), torch.finfo(theirs)
        assert (fo.max, fo.min, fo.eps, fo.tiny, fo.bits) == (ft.max, ft.min, ft.eps, ft.tiny, ft.bits)
    else:
        io, it = tt.iinfo(ours), torch.iinfo(theirs)
        assert (io.max, io.min, io.bits) == (it.max, it.min, it.bits)
        arr = np.arange(3, dtype=ours.np)
        assert tt.from_numpy(arr).dtype is ours and tt.from_numpy(arr).tolist() == torch.from_numpy(arr).tolist()


@pytest.mark.parametrize("a", BAREBONES)
@pytest.mark.parametrize("b", BAREBONES + ["bool", "uint8", "int32", "int64", "float16", "bfloat16", "float32",
                                           "float64", "complex64"])
def test_barebones_promotion_as_torch(a, b):
    got = []
    for lib in (tt, torch):
        try:
            got.append(repr(lib.promote_types(getattr(lib, a), getattr(lib, b))))
        except RuntimeError as e:
            got.append(str(e))
    assert got[0] == got[1]


def test_bare_grad_decorators():
    for lib in (tt, torch):
        @lib.no_grad
        def f():
            return lib.is_grad_enabled()

        @lib.inference_mode
        def g():
            return lib.is_inference_mode_enabled()

        with lib.no_grad():
            @lib.enable_grad
            def h():
                return lib.is_grad_enabled()
            inner = h()
        assert (f(), g(), inner, lib.is_grad_enabled()) == (False, True, True, True)


def test_device_equality_as_torch():
    for other in ("cpu", 3, None, "cpu:0"):
        assert (tt.device("cpu") == other) == (torch.device("cpu") == other)
        assert (tt.device("cpu") != other) == (torch.device("cpu") != other)
    assert tt.device("cpu") == tt.device("cpu") and tt.device("cpu", 0) != tt.device("cpu")


def test_generic_datasets_and_device_flags():
    for lib in (tt, torch):
        class Squares(lib.utils.data.Dataset[int]):
            def __getitem__(self, i):
                return i * i

            def __len__(self):
                return 3

        assert list(lib.utils.data.DataLoader(Squares(), batch_size=None)) == [0, 1, 4]
        x = lib.ones(1)
        assert (x.is_cuda, x.is_mps, x.is_xpu, x.is_quantized, x.is_pinned(), x.is_cpu) == \
            (False, False, False, False, False, True)


def test_c_names():
    parse = [tt._C._nn._parse_to("cpu", tt.float64), tt._C._nn._parse_to(dtype=tt.float16, non_blocking=True),
             tt._C._nn._parse_to(tt.ones(1, dtype=tt.float16))]
    want = [torch._C._nn._parse_to("cpu", torch.float64), torch._C._nn._parse_to(dtype=torch.float16, non_blocking=True),
            torch._C._nn._parse_to(torch.ones(1, dtype=torch.float16))]
    assert [tuple(map(str, p)) for p in parse] == [tuple(map(str, p)) for p in want]
    assert tt._C._get_tracing_state() is torch._C._get_tracing_state() is None
    assert isinstance(tt.Tensor, tt._C._TensorMeta)
    ks = tt._C.DispatchKeySet(tt._C.DispatchKey.CPU) | tt._C.DispatchKeySet(tt._C.DispatchKey.Python)
    assert ks.has(tt._C.DispatchKey.Python) and not ks.remove(tt._C.DispatchKey.Python).has(tt._C.DispatchKey.Python)


def _square_into(i, path):
    with open(f"{path}/{i}", "w") as fh:
        fh.write(str(i * i))


def _fail(i):
    if i == 1:
        raise ValueError("rank one fails")


def test_multiprocessing_spawn(tmp_path):
    tt.multiprocessing.spawn(_square_into, args=(str(tmp_path),), nprocs=2)
    assert sorted((tmp_path / n).read_text() for n in ("0", "1")) == ["0", "1"]
    for lib in (tt, torch):
        with pytest.raises(lib.multiprocessing.ProcessRaisedException) as e:
            lib.multiprocessing.spawn(_fail, nprocs=2)
        assert "-- Process 1 terminated with the following error:" in str(e.value)
        assert "ValueError: rank one fails" in str(e.value)


def test_buffer_assignment_registers_as_torch():
    got = []
    for lib in (tt, torch):
        m = lib.nn.Module()
        m.a = lib.nn.Buffer(lib.arange(3), persistent=False)
        m.b = lib.nn.Buffer(lib.ones(2))
        m.b = lib.zeros(2)
        got.append((list(dict(m.named_buffers())), sorted(m._non_persistent_buffers_set), list(m.state_dict()),
                    isinstance(m.a, lib.nn.Buffer), isinstance(lib.ones(1), lib.nn.Buffer), m.b.tolist()))
    assert got[0] == got[1]
