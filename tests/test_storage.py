"""Storage interop (``torch.UntypedStorage``, ``TypedStorage``, ``Tensor.untyped_storage()``/``storage()``,
``torch.frombuffer``, ``torch.asarray``, ``torch.from_file``, ``Tensor.view(dtype=...)``), compared with PyTorch:
what safetensors, ``save_pretrained``/``from_pretrained`` and accelerate's checkpoints read."""
import array
import pickle
import warnings

import numpy as np
import pytest

import tinytorch as tt
from conftest import torch


def _both(fn):
    """``fn(lib)`` run with tinytorch and torch: (value or exception type and message) for each."""
    out = []
    for lib in (tt, torch):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                out.append(("ok", fn(lib)))
        except Exception as e:  # noqa: BLE001
            out.append((type(e).__name__, str(e)))
    return out


def _plain(v):
    if isinstance(v, (tt.Tensor, torch.Tensor)):
        return (str(v.dtype), tuple(v.shape), v.tolist())
    return v


@pytest.mark.parametrize("case", [
    lambda L: L.UntypedStorage(5).nbytes(),
    lambda L: L.UntypedStorage([1, 2, 255]).tolist(),
    lambda L: L.UntypedStorage([1, 2, 255])[-1],
    lambda L: L.UntypedStorage([1, 2, 255])[1:].tolist(),
    lambda L: L.UntypedStorage([1, 2, 255])[5],
    lambda L: repr(L.UntypedStorage([1, 2])),
    lambda L: L.UntypedStorage(3).fill_(7).tolist(),
    lambda L: L.UntypedStorage(3).element_size(),
    lambda L: len(L.UntypedStorage(6)),
    lambda L: L.UntypedStorage([4, 5]).clone().tolist(),
    lambda L: L.UntypedStorage(2).copy_(L.UntypedStorage([9, 8])).tolist(),
    lambda L: L.UntypedStorage(2).copy_(L.UntypedStorage([9, 8, 7])).tolist(),
    lambda L: L.arange(6.).untyped_storage().nbytes(),
    lambda L: L.arange(6.)[2:4].untyped_storage().nbytes(),
    lambda L: L.arange(6, dtype=L.int16).storage().size(),
    lambda L: L.arange(6, dtype=L.int16).storage().tolist(),
    lambda L: repr(L.arange(3, dtype=L.int32).storage()),
    lambda L: L.arange(3, dtype=L.int32).storage()[1],
    lambda L: L.arange(3, dtype=L.int32).storage().element_size(),
    lambda L: L.arange(4, dtype=L.int16).storage().untyped().nbytes(),
    lambda L: L.arange(4.).view(dtype=L.int32),
    lambda L: L.arange(4.).view(L.float16).shape,
    lambda L: L.frombuffer(bytearray(b"\x01\x00\x02\x00"), dtype=L.int16),
    lambda L: L.frombuffer(b"\x01\x00\x02\x00\x03\x00", dtype=L.int16, count=2, offset=2),
    lambda L: L.frombuffer(array.array("f", [1.5, 2.5]), dtype=L.float32),
    lambda L: L.frombuffer(b"", dtype=L.uint8),
    lambda L: L.frombuffer(b"abc", dtype=L.int16),
    lambda L: L.frombuffer(b"abcd", dtype=L.int16, offset=5),
    lambda L: L.frombuffer(b"abcd", dtype=L.int16, offset=-1),
    lambda L: L.frombuffer(b"abcd", dtype=L.int16, count=3),
    lambda L: L.frombuffer(b"abcd", dtype=L.int16, count=0),
    lambda L: L.frombuffer(b"abcd", dtype=L.uint8, requires_grad=False).sum().item(),
    lambda L: L.asarray(np.arange(3)),
    lambda L: L.asarray([1, 2]),
    lambda L: L.asarray(3.0),
    lambda L: L.asarray([[1, 2], [3, 4]], dtype=L.float64),
    lambda L: L.asarray(L.arange(3.), copy=False, dtype=L.int32),
    lambda L: L.asarray(L.arange(3.), copy=False, device="meta"),
    lambda L: L.asarray([1, 2], copy=False),
    lambda L: L.asarray(np.arange(3.), dtype=L.float32, copy=False),
    lambda L: L.asarray(bytearray(b"\x01\x02")),
    lambda L: L.asarray(L.arange(4.).untyped_storage()),
    lambda L: L.asarray(L.arange(4.).untyped_storage(), dtype=L.float32),
    lambda L: L.asarray(L.arange(3.), requires_grad=True).requires_grad,
], ids=lambda c: f"case{_CASES.index(c)}" if c in _CASES else None)
def test_matches_torch(case):
    ours, theirs = _both(case)
    if ours[0] == "ok" and theirs[0] == "ok":
        assert _plain(ours[1]) == _plain(theirs[1])
    else:
        assert ours == theirs


_CASES = test_matches_torch.pytestmark[0].args[1]


def test_views_report_one_storage_and_share_memory():
    x = tt.arange(12.).view(3, 4)
    parts = [x[1], x.t(), x[:, 2:], x.view(dtype=tt.int32)]
    assert {p.untyped_storage().data_ptr() for p in parts} == {x.data_ptr()}
    assert all(p.untyped_storage().nbytes() == 48 for p in parts)
    u = x.untyped_storage()
    u[0:4].fill_(0)  # the bytes of x[0, 0]
    u[4:8] = 0
    assert x[0, :2].tolist() == [0.0, 0.0] and x[0, 2].item() == 2.0
    assert tt.asarray(u, dtype=tt.float32).data_ptr() == x.data_ptr()


def test_frombuffer_and_asarray_share_writable_memory():
    buf = bytearray(8)
    t = tt.frombuffer(buf, dtype=tt.int32)
    t[1] = 258
    assert buf[4:6] == b"\x02\x01"
    buf[0] = 9
    assert t[0].item() == 9
    a = np.arange(3.)
    v = tt.asarray(a)
    a[0] = 5
    assert v[0].item() == 5 and tt.asarray(a, copy=True).data_ptr() != v.data_ptr()


@pytest.mark.parametrize("shared", [True, False])
def test_from_file_maps_a_file(tmp_path, shared):
    path = str(tmp_path / "f.bin")
    np.arange(4, dtype=np.int32).tofile(path)
    ours = tt.from_file(path, shared=shared, size=4, dtype=tt.int32)
    theirs = torch.from_file(path, shared=False, size=4, dtype=torch.int32)
    assert ours.tolist() == theirs.tolist() == [0, 1, 2, 3]
    ours.add_(10)
    del ours
    assert np.fromfile(path, dtype=np.int32).tolist() == ([10, 11, 12, 13] if shared else [0, 1, 2, 3])
    u = tt.UntypedStorage.from_file(path, shared, 16)
    assert u.nbytes() == 16 and u.is_shared() == shared


def test_from_file_errors_as_torch(tmp_path):
    path = str(tmp_path / "small.bin")
    open(path, "wb").write(b"1234")
    for lib in (tt, torch):
        with pytest.raises(RuntimeError, match="size <4> is smaller than the required mapping size <8>"):
            lib.UntypedStorage.from_file(path, False, 8)
    grown = str(tmp_path / "new.bin")
    tt.UntypedStorage.from_file(grown, True, 32)
    import os
    assert os.path.getsize(grown) == 32


def test_storage_warns_once_as_torch():
    import subprocess
    import sys
    code = ("import warnings, {0} as L\nwith warnings.catch_warnings(record=True) as w:\n"
            "    warnings.simplefilter('always'); L.ones(2).storage(); L.ones(2).storage()\n"
            "print([str(m.message)[:30] for m in w])")
    outs = [subprocess.run([sys.executable, "-c", code.format(lib)], capture_output=True, text=True).stdout
            for lib in ("tinytorch", "torch")]
    assert outs[0] == outs[1] == "['TypedStorage is deprecated. It']\n"


def test_pickled_storage_keeps_bytes_and_device():
    """torch 2.13 cannot unpickle an UntypedStorage (its loader asks the class for a dtype); tinytorch's can."""
    u = pickle.loads(pickle.dumps(tt.UntypedStorage([3, 1, 4])))
    assert u.tolist() == [3, 1, 4] and u.device == tt.device("cpu")
    t = pickle.loads(pickle.dumps(tt.arange(3, dtype=tt.int16).storage()))
    assert t.tolist() == [0, 1, 2] and t.dtype is tt.int16

