"""``save`` / ``load``: tensors and nested containers in a zip file, written atomically, loaded without pickle.

Format: a zip with ``data.json`` (the structure: dicts, lists, tuples, numbers, strings, None, and
tensor references) and one raw little-endian buffer per tensor. Loading never executes code from
the file, so loading an untrusted checkpoint is safe.
"""
import io
import json
import os
import tempfile
import zipfile
from collections import OrderedDict

import numpy as np

from . import _dtype as _dt
from ._tensor import Tensor

_MAGIC = "tinytorch-save-v1"


def _encode(obj, blobs):
    from .nn.parameter import Parameter
    if isinstance(obj, Tensor):
        arr = np.ascontiguousarray(obj.detach().numpy(force=True))
        key = f"tensors/{len(blobs)}"
        blobs[key] = arr.tobytes()
        return {"__tensor__": key, "dtype": obj.dtype.name, "shape": list(obj.shape),
                "requires_grad": bool(obj.requires_grad), "param": isinstance(obj, Parameter),
                "device": str(obj.device)}
    if isinstance(obj, OrderedDict):
        return {"__odict__": [[_encode(k, blobs), _encode(v, blobs)] for k, v in obj.items()]}
    if isinstance(obj, dict):
        return {"__dict__": [[_encode(k, blobs), _encode(v, blobs)] for k, v in obj.items()]}
    if isinstance(obj, tuple):
        return {"__tuple__": [_encode(v, blobs) for v in obj]}
    if isinstance(obj, list):
        return [_encode(v, blobs) for v in obj]
    if isinstance(obj, _dt.dtype):
        return {"__dtype__": obj.name}
    if isinstance(obj, (np.integer, np.floating, np.bool_)):
        return obj.item()
    if obj is None or isinstance(obj, (bool, int, float, str)):
        if isinstance(obj, float) and not np.isfinite(obj):
            return {"__float__": repr(obj)}
        return obj
    raise TypeError(f"tinytorch.save: cannot serialize object of type {type(obj).__name__} (supported: tensors, "
                    "dicts, lists, tuples, numbers, strings, None)")


def _decode(obj, z, map_location):
    from .nn.parameter import Parameter
    from ._ops.creation import _from_host
    if isinstance(obj, list):
        return [_decode(v, z, map_location) for v in obj]
    if not isinstance(obj, dict):
        return obj
    if "__tensor__" in obj:
        d = _dt._by_name(obj["dtype"])
        arr = np.frombuffer(z.read(obj["__tensor__"]), dtype=d.np).reshape(obj["shape"]).copy()
        dev = map_location if isinstance(map_location, str) or map_location is not None else "cpu"
        t = _from_host(arr, d, str(dev) if dev is not None else "cpu")
        if obj.get("param"):
            return Parameter(t, requires_grad=obj["requires_grad"])
        return t.requires_grad_(True) if obj["requires_grad"] else t
    if "__odict__" in obj:
        return OrderedDict((_key(_decode(k, z, map_location)), _decode(v, z, map_location)) for k, v in obj["__odict__"])
    if "__dict__" in obj:
        return {_key(_decode(k, z, map_location)): _decode(v, z, map_location) for k, v in obj["__dict__"]}
    if "__tuple__" in obj:
        return tuple(_decode(v, z, map_location) for v in obj["__tuple__"])
    if "__dtype__" in obj:
        return _dt._by_name(obj["__dtype__"])
    if "__float__" in obj:
        return float(obj["__float__"])
    raise ValueError("tinytorch.load: unrecognised entry in data.json")


def _key(k):
    return tuple(k) if isinstance(k, list) else k


def save(obj, f, pickle_module=None, pickle_protocol=None, _use_new_zipfile_serialization=True):
    """Write ``obj`` (tensors, state_dicts, nested containers) to path or file object ``f``.

    A path is written to a temporary file in the same folder and renamed into place, so a crash
    mid-save never leaves a truncated file. TypeError for unsupported object types.
    """
    blobs = {}
    meta = {"magic": _MAGIC, "obj": _encode(obj, blobs)}
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as z:
        z.writestr("data.json", json.dumps(meta))
        for k, v in blobs.items():
            z.writestr(k, v)
    data = buf.getvalue()
    if hasattr(f, "write"):
        f.write(data)
        return
    path = os.fspath(f)
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tmp-", suffix=".pt")
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise


def load(f, map_location=None, pickle_module=None, *, weights_only=True, mmap=None, **kwargs):
    """Read what ``save`` wrote. Never runs code from the file; RuntimeError for files of other formats."""
    try:
        z = zipfile.ZipFile(f if hasattr(f, "read") else os.fspath(f))
    except zipfile.BadZipFile:
        raise RuntimeError(f"tinytorch.load: {f} is not a tinytorch checkpoint (not a zip file)") from None
    with z:
        try:
            meta = json.loads(z.read("data.json"))
        except KeyError:
            raise RuntimeError(f"tinytorch.load: {f} has no data.json; PyTorch pickle checkpoints are not "
                               "supported") from None
        if meta.get("magic") != _MAGIC:
            raise RuntimeError(f"tinytorch.load: {f} is not a tinytorch checkpoint")
        return _decode(meta["obj"], z, map_location)


def _rebuild(arr, dtype_name, requires_grad):
    from ._ops.creation import _from_host
    t = _from_host(arr, _dt._by_name(dtype_name))
    return t.requires_grad_(True) if requires_grad else t


def _rebuild_param(arr, dtype_name, requires_grad):
    from .nn.parameter import Parameter
    return Parameter(_rebuild(arr, dtype_name, False), requires_grad)
