"""utils.checkpoint: recomputation gives the same outputs and gradients as the plain forward (dropout included),
and matches torch's checkpoint on the same weights."""
import io

import numpy as np
import pytest

import tinytorch as tt
from conftest import assert_close, torch
from tinytorch.utils.checkpoint import checkpoint, checkpoint_sequential


def make(n):
    return n.nn.Sequential(n.nn.Linear(4, 8), n.nn.Tanh(), n.nn.Dropout(0.3), n.nn.Linear(8, 8), n.nn.GELU(),
                           n.nn.Linear(8, 3))


def run(m, x, how):
    tt.manual_seed(3)
    x.grad = None
    m.zero_grad()
    y = m(x) if how == "plain" else checkpoint(m, x, use_reentrant=True) if how == "checkpoint" else \
        checkpoint_sequential(m, 3, x)
    y.pow(2).sum().backward()
    return y.detach(), x.grad.clone(), [p.grad.clone() for p in m.parameters()]


@pytest.mark.parametrize("how", ["checkpoint", "sequential"])
def test_checkpoint_matches_plain_forward(how):
    m = make(tt)
    x = tt.randn(5, 4, requires_grad=True)
    y0, gx0, gp0 = run(m, x, "plain")
    y1, gx1, gp1 = run(m, x, how)
    assert np.array_equal(y0.numpy(), y1.numpy())
    assert np.allclose(gx0.numpy(), gx1.numpy(), rtol=1e-6, atol=1e-7)
    for a, b in zip(gp0, gp1):
        assert np.allclose(a.numpy(), b.numpy(), rtol=1e-6, atol=1e-7)


def test_checkpoint_matches_torch_and_keeps_no_graph():
    m_th = make(torch).eval()
    m_tt = make(tt).eval()
    m_tt.load_state_dict({k: tt.tensor(v.numpy()) for k, v in m_th.state_dict().items()})
    a = np.random.default_rng(0).standard_normal((5, 4)).astype(np.float32)
    x_tt, x_th = tt.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    y_tt = checkpoint(lambda t, s: m_tt(t) * s, x_tt, 2.0, use_reentrant=True)
    y_th = torch.utils.checkpoint.checkpoint(lambda t, s: m_th(t) * s, x_th, 2.0, use_reentrant=True)
    assert y_tt.grad_fn.name() == "_CheckpointBackward"  # one node: the segment's graph is not kept
    assert_close(y_tt, y_th, rtol=1e-5, atol=1e-6)
    y_tt.sum().backward()
    y_th.sum().backward()
    assert_close(x_tt.grad, x_th.grad, rtol=1e-5, atol=1e-6)
    for (k, p_th), p_tt in zip(m_th.named_parameters(), m_tt.parameters()):
        assert_close(p_tt.grad, p_th.grad, rtol=1e-5, atol=1e-6, msg=k)


# ---- optimizer state through save/load, both ways between torch and tinytorch --------------------------
OPTIMIZERS = [("SGD", dict(lr=0.05, momentum=0.9, nesterov=True)), ("Adam", dict(lr=0.01)),
              ("Adam", dict(lr=0.01, amsgrad=True, weight_decay=0.1)), ("AdamW", dict(lr=0.01)),
              ("Adagrad", dict(lr=0.1, lr_decay=0.01)), ("Adadelta", dict(lr=0.5)), ("Adamax", dict(lr=0.02)),
              ("NAdam", dict(lr=0.01)), ("RAdam", dict(lr=0.01)), ("RMSprop", dict(lr=0.01, momentum=0.5,
                                                                                   centered=True)),
              ("Rprop", dict(lr=0.01)), ("ASGD", dict(lr=0.05, t0=2)), ("LBFGS", dict(lr=0.5, max_iter=4, history_size=3)),
              ("Adafactor", dict(lr=0.01))]


def _problem(n, params):
    """A small least-squares problem over (W, b) whose closure works for every optimizer (LBFGS needs one)."""
    rng = np.random.default_rng(1)
    x = n.tensor(rng.standard_normal((6, 3)).astype(np.float32))
    y = n.tensor(rng.standard_normal((6, 4)).astype(np.float32))
    W, b = params

    def closure(opt):
        opt.zero_grad()
        loss = ((x @ W + b - y) ** 2).mean()
        loss.backward()
        return loss
    return closure


def _train(n, name, kw, start, steps, state=None):
    """``steps`` steps of optimizer ``name`` from the parameter values ``start`` (numpy), optionally resuming
    from a loaded optimizer state; returns the parameters (numpy) and the optimizer."""
    params = [n.nn.Parameter(n.tensor(a.copy())) for a in start]
    opt = getattr(n.optim, name)(params, **kw)
    if state is not None:
        opt.load_state_dict(state)
    closure = _problem(n, params)
    for _ in range(steps):
        opt.step(lambda: closure(opt))
    return [p.detach().numpy().copy() for p in params], opt


START = [np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32), np.zeros(4, np.float32)]


@pytest.mark.parametrize("src", ["torch", "tinytorch"])
@pytest.mark.parametrize("name,kw", OPTIMIZERS, ids=[f"{n}-{i}" for i, (n, _) in enumerate(OPTIMIZERS)])
def test_optimizer_state_round_trip(tmp_path, name, kw, src):
    """A state_dict saved after 3 steps by one library loads into the other, which continues 3 more steps to
    the parameters the saving library reaches by itself after 6; ``step`` stays a 0-d float32 tensor."""
    a, b = (torch, tt) if src == "torch" else (tt, torch)
    mid, opt_a = _train(a, name, kw, START, 3)
    a.save(opt_a.state_dict(), tmp_path / "opt.pt")
    ref, _ = _train(a, name, kw, START, 6)
    state = b.load(tmp_path / "opt.pt")
    got, opt_b = _train(b, name, kw, mid, 3, state)
    for g, r in zip(got, ref):
        np.testing.assert_allclose(g, r, rtol=1e-5, atol=1e-6)
    for s in opt_b.state_dict()["state"].values():
        if "step" in s:
            assert isinstance(s["step"], b.Tensor) and s["step"].dim() == 0 and s["step"].dtype == b.float32
            assert float(s["step"]) == 6.0


# ---- save: streamed, atomic, mode as open() --------------------------------------------------------------
def test_save_streams_storages_without_a_copy(tmp_path):
    """Saving 32 MB of tensors allocates (Python side, NumPy included) a small fraction of it: each storage
    goes from its memory into the zip record, never gathered into a bytes object (it used to be +110%)."""
    import tracemalloc
    sd = {f"w{i}": tt.randn(1 << 21) for i in range(4)}  # 4 x 8 MB
    nbytes = sum(v.numel() * 4 for v in sd.values())
    tracemalloc.start()
    try:
        tt.save(sd, tmp_path / "big.pt")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < nbytes / 16, f"save allocated {peak} bytes for {nbytes} bytes of tensors"
    got = torch.load(tmp_path / "big.pt", weights_only=True)
    for k, v in sd.items():
        np.testing.assert_array_equal(got[k].numpy(), v.numpy())
    # and loading reads each record straight into the tensor's memory: the data once, plus a bounded buffer
    size = (tmp_path / "big.pt").stat().st_size
    tracemalloc.start()
    try:
        back = tt.load(tmp_path / "big.pt")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < size + (4 << 20), f"load allocated {peak} bytes for a {size}-byte file"
    assert all(tt.equal(back[k], v) for k, v in sd.items())


@pytest.mark.parametrize("umask", [0o022, 0o027, 0o077, 0o002])
def test_saved_file_mode_follows_umask_as_torch(tmp_path, umask):
    import os
    old = os.umask(umask)
    try:
        tt.save({"a": tt.ones(2)}, tmp_path / "tt.pt")
        torch.save({"a": torch.ones(2)}, tmp_path / "th.pt")
    finally:
        os.umask(old)
    mode = os.stat(tmp_path / "tt.pt").st_mode & 0o777
    assert mode == os.stat(tmp_path / "th.pt").st_mode & 0o777 == 0o666 & ~umask


@pytest.mark.parametrize("exc", [OSError("disk full"), KeyboardInterrupt()], ids=["OSError", "KeyboardInterrupt"])
@pytest.mark.parametrize("existing", [False, True])
def test_interrupted_save_leaves_no_temporary_and_no_partial_target(tmp_path, monkeypatch, exc, existing):
    """An exception (or Ctrl-C) while the data is being written removes the temporary file; the target is
    either absent or still the previous, complete checkpoint."""
    import os
    from tinytorch import serialization
    path = tmp_path / "ck.pt"
    if existing:
        tt.save({"old": tt.arange(3)}, path)
    real = serialization._write_storage
    calls = []

    def failing(z, name, storage):
        calls.append(name)
        if len(calls) == 2:  # after one storage record is fully written and while the next is due
            raise exc
        return real(z, name, storage)
    monkeypatch.setattr(serialization, "_write_storage", failing)
    with pytest.raises(type(exc)):
        tt.save({"a": tt.ones(1000), "b": tt.zeros(1000)}, path)
    assert len(calls) == 2
    if existing:
        assert sorted(os.listdir(tmp_path)) == ["ck.pt"]
        assert tt.load(path)["old"].tolist() == [0, 1, 2]
    else:
        assert os.listdir(tmp_path) == []


def test_save_to_missing_folder_raises_as_torch(tmp_path):
    for n in (tt, torch):
        with pytest.raises(RuntimeError, match="Parent directory .* does not exist"):
            n.save({"a": n.ones(1)}, tmp_path / "nope" / "x.pt")


# ---- load: malicious and corrupt files ---------------------------------------------------------------------
def _torch_file(obj=None):
    """A checkpoint torch wrote, as (members, data.pkl) to tamper with."""
    import io
    import zipfile
    buf = io.BytesIO()
    torch.save({"w": torch.arange(4.0)} if obj is None else obj, buf)
    z = zipfile.ZipFile(io.BytesIO(buf.getvalue()))
    members = [(n, z.read(n)) for n in z.namelist()]
    return members, dict(members)["archive/data.pkl"]


def _zip(members, deflate=()):
    import io
    import zipfile
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        for n, d in members:
            z.writestr(n, d, compress_type=zipfile.ZIP_DEFLATED if n in deflate else zipfile.ZIP_STORED)
    return out.getvalue()


def _with_pkl(members, pkl):
    return _zip([(n, pkl if n.endswith("data.pkl") else d) for n, d in members])


def _load_checked(data, expect=RuntimeError, match=None, torch_rejects=True):
    """tinytorch refuses ``data`` with ``expect`` while allocating little more than the file's size
    (tracemalloc, NumPy's buffers included); and torch, given the same bytes, refuses it too."""
    import io
    import tracemalloc
    tracemalloc.start()
    try:
        with pytest.raises(expect, match=match):
            tt.load(io.BytesIO(data), weights_only=True)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < len(data) + (1 << 18), f"load allocated {peak} bytes for a {len(data)}-byte file"
    if torch_rejects:
        with pytest.raises(Exception):
            torch.load(io.BytesIO(data), weights_only=True)


def _pkl_int(v):
    import pickle
    return pickle.dumps(v, protocol=2)[2:-1]  # the opcode pushing int v (no PROTO, no STOP)


def test_load_refuses_build_on_tensor_internals():
    """A BUILD instruction after the tensor's rebuild call, setting its private fields (``_shape = (2**40,)``
    over a 4-element storage), in the dict and the (dict, slots) forms: refused, as torch refuses a BUILD on a
    tensor."""
    members, pkl = _torch_file()
    assert pkl.endswith(b"s.")
    at = len(pkl) - 2  # after the _rebuild_tensor_v2 call, before the SETITEM storing it under "w"
    huge = b"(" + _pkl_int(2 ** 40) + b"t"
    for state in (b"}X\x06\x00\x00\x00_shape" + huge + b"s",  # {'_shape': (2**40,)}
                  b"N}X\x06\x00\x00\x00_shape" + huge + b"s\x86",  # (None, {'_shape': (2**40,)}): slots
                  b"}X\x07\x00\x00\x00_stride(K\x00ts"):
        _load_checked(_with_pkl(members, pkl[:at] + state + b"b" + pkl[at:]), TypeError, "cannot be given state")


class _Reduce:
    """Pickles as ``func(*args)`` (then BUILD ``state`` if given), written by tinytorch.save's pickler (tensors
    inside ``args`` become torch's storage references), so a test can write any call of torch's rebuild
    functions that a malicious file could contain."""

    def __init__(self, func, args, state=None):
        self.func, self.args, self.state = func, args, state

    def __reduce__(self):
        from tinytorch.serialization import _Global
        f = _Global(*self.func.rsplit(".", 1))
        return (f, self.args) if self.state is None else (f, self.args, self.state)


def _saved(obj):
    import io
    buf = io.BytesIO()
    tt.save(obj, buf)
    return buf.getvalue()


HUGE_SHAPE = {"_shape": (2 ** 40,)}


@pytest.mark.parametrize("state", [HUGE_SHAPE, (None, HUGE_SHAPE), {"_storage": None}, {"_stride": (0,)},
                                   {"grad_fn": None}, {"data": None}],
                         ids=["dict", "slots", "storage", "stride", "grad_fn", "data"])
def test_load_refuses_build_on_parameter_internals(state):
    """BUILD after ``_rebuild_parameter`` (torch applies it with ``Tensor.__setstate__``, which refuses these
    states): refused by both, the shape stays the storage's."""
    from collections import OrderedDict
    data = _saved({"p": _Reduce("torch._utils._rebuild_parameter", (tt.ones(4), True, OrderedDict()), state)})
    _load_checked(data, (TypeError, RuntimeError))


@pytest.mark.parametrize("route", ["_rebuild_parameter_with_state", "_rebuild_from_type_v2"])
@pytest.mark.parametrize("state,ok", [({"note": 7}, True), (HUGE_SHAPE, False), ((None, HUGE_SHAPE), False),
                                      ({"_offset": 3}, False), ({"_storage": None}, False), ({"grad": None}, False),
                                      ({"__class__": None}, False)])
def test_load_tensor_state_cannot_reach_internals(route, state, ok):
    """The state of ``_rebuild_parameter_with_state`` / ``_rebuild_from_type_v2`` (torch sets it with setattr,
    harmless there: a tensor's geometry lives in C++) may set a program's own attributes, never a field of
    the tensor itself."""
    import io
    from collections import OrderedDict
    from tinytorch.serialization import _Global
    base = (tt.arange(4.0), True, OrderedDict())
    if route == "_rebuild_parameter_with_state":
        obj = _Reduce("torch._utils._rebuild_parameter_with_state", base + (state,))
    else:
        obj = _Reduce("torch._tensor._rebuild_from_type_v2",
                      (_Global("torch._utils", "_rebuild_parameter"), _Global("torch.nn.parameter", "Parameter"),
                       base, state))
    data = _saved({"p": obj})
    if ok:
        p, q = tt.load(io.BytesIO(data))["p"], torch.load(io.BytesIO(data))["p"]
        assert p.note == q.note == 7 and p.tolist() == q.tolist() == [0.0, 1.0, 2.0, 3.0]
        assert isinstance(p, tt.nn.Parameter) and isinstance(q, torch.nn.Parameter)
    else:
        _load_checked(data, RuntimeError, "tensor attribute|Invalid serialized state", torch_rejects=False)


@pytest.mark.parametrize("name", ["archive/../evil", "archive/data/../../evil", "../evil", "/etc/evil",
                                  "C:/evil", "evil"])
def test_load_refuses_member_names_outside_the_archive(name):
    """A member escaping the archive's folder (``..``, an absolute or drive path) or outside it: RuntimeError
    (torch: "file in archive is not in a subdirectory"; it ignores a ``..`` name it never looks up)."""
    members, _ = _torch_file()
    _load_checked(_zip(members + [(name, b"x")]), RuntimeError, "leaves the archive|not in a subdirectory",
                  torch_rejects=not name.startswith("archive/"))


@pytest.mark.parametrize("numel", [5, 2 ** 30, 2 ** 62])
def test_load_refuses_storage_larger_than_its_record(numel):
    """The pickle claims more elements than the record holds: RuntimeError before allocating (torch: a
    RuntimeError on the size mismatch; a TypeError for a numel past int64)."""
    members, pkl = _torch_file()
    claim = b"K\x04t"  # BININT1 4 closing the storage's persistent id
    assert pkl.count(claim) == 1
    _load_checked(_with_pkl(members, pkl.replace(claim, _pkl_int(numel) + b"t")), RuntimeError, "record size")


@pytest.mark.parametrize("field,value", [("size", 1000), ("size", 5), ("offset", 1), ("stride", 2),
                                         ("size", 2 ** 40)])
def test_load_refuses_views_past_their_storage(field, value):
    members, pkl = _torch_file()
    # _rebuild_tensor_v2(storage, offset=0, size=(4,), stride=(1,), ...)
    geometry = b"K\x00K\x04\x85q\x08K\x01\x85"
    assert pkl.count(geometry) == 1
    off, size, stride = 0, 4, 1
    off, size, stride = {"offset": (value, size, stride), "size": (off, value, stride),
                         "stride": (off, size, value)}[field]
    new = _pkl_int(off) + _pkl_int(size) + b"\x85q\x08" + _pkl_int(stride) + b"\x85"
    _load_checked(_with_pkl(members, pkl.replace(geometry, new)), RuntimeError, "out of bounds")


def _set_declared_size(data, name, size):
    """``data`` (a zip) with member ``name``'s uncompressed size set to ``size`` in its local header and in
    the central directory."""
    import io
    import struct
    import zipfile
    out = bytearray(data)
    info = zipfile.ZipFile(io.BytesIO(data)).getinfo(name)
    struct.pack_into("<I", out, info.header_offset + 22, size)
    pos = data.index(b"PK\x01\x02")
    while data[pos + 46:pos + 46 + struct.unpack_from("<H", data, pos + 28)[0]] != name.encode():
        pos = data.index(b"PK\x01\x02", pos + 4)
    struct.pack_into("<I", out, pos + 24, size)
    return bytes(out)


def test_load_refuses_zip_bombs():
    """A deflated record of 64 MiB of zeros (64 KiB in the file) where the pickle needs 16 bytes: refused from
    the zip directory without inflating it (torch too); and the same stream declared as 16 bytes is read only
    up to 16 bytes, then its CRC fails."""
    members, _ = _torch_file()
    bomb = _zip([(n, bytes(64 << 20) if n == "archive/data/0" else d) for n, d in members],
                deflate={"archive/data/0"})
    assert len(bomb) < 1 << 17
    _load_checked(bomb, RuntimeError, "record size")
    _load_checked(_set_declared_size(bomb, "archive/data/0", 16), RuntimeError, "CRC", torch_rejects=False)
    # a declared size that deflate cannot reach from the stored bytes at all
    _load_checked(_set_declared_size(bomb, "archive/data/0", 2 ** 32 - 1), RuntimeError, "zip bomb|record size")


def test_load_missing_record_and_bad_crc_raise_runtime_error():
    import struct
    members, _ = _torch_file()
    _load_checked(_zip([(n, d) for n, d in members if n != "archive/data/0"]), RuntimeError, "no record")
    good = _zip(members)
    at = good.index(struct.pack("<4f", 0, 1, 2, 3))
    bad = bytearray(good)
    bad[at + 5] ^= 0xFF  # flip a data byte: the CRC in the zip directory no longer matches
    _load_checked(bytes(bad), RuntimeError, "CRC", torch_rejects=False)  # torch does not check CRCs


# ---- weights-only allowlist: add_safe_globals / safe_globals, and the environment switches ----------------
class NetTT(tt.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = tt.nn.Linear(3, 2)
        self.act = tt.nn.ReLU()
        self.register_buffer("scale", tt.full((2,), 2.0))

    def forward(self, x):
        return self.act(self.fc(x)) * self.scale


class NetTorch(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(3, 2)
        self.act = torch.nn.ReLU()
        self.register_buffer("scale", torch.full((2,), 2.0))

    def forward(self, x):
        return self.act(self.fc(x)) * self.scale


@pytest.mark.parametrize("lib", ["tinytorch", "torch"])
def test_whole_module_loads_when_its_classes_are_allow_listed(tmp_path, lib):
    """The same program with either library: ``save(model)`` of a program's own nn.Module; ``load`` refuses
    it naming the first unapproved global (the program's class, then ``nn.Linear``), loads it once the
    classes it holds are allow-listed (context manager or add_safe_globals, by object or by name), and
    always with weights_only=False."""
    import pickle
    import re
    n, Net = (tt, NetTT) if lib == "tinytorch" else (torch, NetTorch)
    path = tmp_path / "m.pt"
    m = Net()
    n.save(m, path)
    x = n.tensor([[1.0, -2.0, 3.0]])
    before = n.serialization.get_safe_globals()
    name = f"{Net.__module__}.{Net.__qualname__}"
    with pytest.raises(pickle.UnpicklingError, match=re.escape(f"Unsupported global: GLOBAL {name} was not an "
                                                               "allowed global by default")):
        n.load(path)
    with n.serialization.safe_globals([Net]):
        with pytest.raises(pickle.UnpicklingError, match=re.escape(f"GLOBAL {n.nn.Linear.__module__}.Linear ")):
            n.load(path)
    assert set(n.serialization.get_safe_globals()) == set(before)  # the context manager removed them again
    with n.serialization.safe_globals([Net, n.nn.Linear, n.nn.ReLU]):
        m2 = n.load(path)
    assert type(m2) is Net and type(m2.fc) is n.nn.Linear and m2.training
    assert m2(x).tolist() == m(x).tolist() and isinstance(m2.fc.weight, n.nn.Parameter)
    assert dict(m2.named_buffers())["scale"].tolist() == [2.0, 2.0]
    extra = [(Net, name), n.nn.Linear, n.nn.ReLU]  # a (global, "module.qualname") pair names it explicitly
    n.serialization.add_safe_globals(extra)
    try:
        assert all(e in n.serialization.get_safe_globals() for e in extra)
        assert type(n.load(path)) is Net
    finally:
        if lib == "tinytorch":
            n.serialization.clear_safe_globals()
            assert n.serialization.get_safe_globals() == []
        else:  # torch registers some globals of its own: remove only ours
            n.serialization._weights_only_unpickler._remove_safe_globals(extra)
    assert type(n.load(path, weights_only=False)) is Net


@pytest.mark.parametrize("entry,exc", [((NetTT, "a", "b"), ValueError), ((NetTT, 3), TypeError)])
def test_malformed_safe_global_entries_raise_as_torch(tmp_path, entry, exc):
    import fractions
    tt.save({"f": fractions.Fraction(1, 3)}, tmp_path / "tt.pt")
    torch.save({"f": fractions.Fraction(1, 3)}, tmp_path / "th.pt")
    for n, f in ((tt, "tt.pt"), (torch, "th.pt")):
        with n.serialization.safe_globals([entry]):
            with pytest.raises(exc):
                n.load(tmp_path / f)


ENV = [{}, {"TORCH_FORCE_WEIGHTS_ONLY_LOAD": "1"}, {"TORCH_FORCE_WEIGHTS_ONLY_LOAD": "TRUE"},
       {"TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD": "1"}, {"TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD": "Yes"},
       {"TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD": "y"}, {"TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD": "0"},
       {"TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD": "on"}, {"TORCH_FORCE_WEIGHTS_ONLY_LOAD": "1",
                                                    "TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD": "1"}]


@pytest.mark.parametrize("env", ENV, ids=lambda e: ",".join(f"{k[6:9]}={v}" for k, v in e.items()) or "unset")
@pytest.mark.parametrize("weights_only", ["omitted", True, False])
def test_weights_only_environment_switches_as_torch(tmp_path, monkeypatch, env, weights_only):
    """``TORCH_FORCE_WEIGHTS_ONLY_LOAD`` / ``TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD`` change what ``load`` does with a
    file holding a global outside the allowlist exactly as in torch: same outcome (loaded, or the same
    exception type) and the same warning, for each value and each way of passing weights_only."""
    import fractions
    import warnings
    for k in ("TORCH_FORCE_WEIGHTS_ONLY_LOAD", "TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD"):
        monkeypatch.delenv(k, raising=False)
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    kw = {} if weights_only == "omitted" else {"weights_only": weights_only}
    outcomes = []
    for n in (tt, torch):
        path = tmp_path / f"{n.__name__}.pt"
        n.save({"f": fractions.Fraction(1, 3), "w": n.ones(2)}, path)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                got = n.load(path, **kw)
                outcome = ("loaded", got["f"], got["w"].tolist())
            except Exception as e:  # noqa: BLE001 - the type is what is compared
                outcome = (type(e).__name__,)
        warned = any("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD" in str(w.message) for w in caught)
        outcomes.append(outcome + (warned,))
    assert outcomes[0] == outcomes[1]


def test_killed_save_orphan_is_removed_by_the_next_save(tmp_path):
    """SIGKILL mid-save cannot run any cleanup, so its temporary stays; the next save of the same path removes
    it (its writer is gone), but not the temporary of a save still running in another process."""
    import os
    import signal
    import subprocess
    import sys
    import time
    path, ready = tmp_path / "ck.pt", tmp_path / "ready"
    child = subprocess.Popen([sys.executable, "-c", f"""
import time, tinytorch as tt
from tinytorch import serialization as S
real = S._write_storage
def slow(z, name, storage):
    real(z, name, storage)
    open({str(ready)!r}, "w").close()
    time.sleep(120)
S._write_storage = slow
tt.save({{"a": tt.ones(1000)}}, {str(path)!r})
"""])
    try:
        deadline = time.time() + 120
        while not ready.exists() and child.poll() is None and time.time() < deadline:
            time.sleep(0.05)
        assert ready.exists(), "the child never reached the middle of its save"
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()
    ready.unlink()
    orphans = [n for n in os.listdir(tmp_path) if n.endswith(".tmp")]
    assert len(orphans) == 1 and not path.exists()
    alive = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        from tinytorch.serialization import _temporary_prefix
        running = tmp_path / f"{_temporary_prefix(str(path))}{alive.pid}.abcd.tmp"
        running.write_bytes(b"in progress")
        tt.save({"a": tt.arange(3)}, path)
        assert sorted(os.listdir(tmp_path)) == sorted(["ck.pt", running.name])
        assert torch.load(path)["a"].tolist() == [0, 1, 2]
    finally:
        alive.kill()
        alive.wait()


@pytest.mark.parametrize("pkl", [b"\x80\x02ctorch\nTensor\nJ\x00\x00\x00\x04\x85R.",  # Tensor(2**26) by REDUCE
                                 b"\x80\x02ctorch\nTensor\nJ\x00\x00\x00\x04\x85\x81.",  # by NEWOBJ
                                 b"\x80\x02ctorch.nn.parameter\nParameter\nJ\x00\x00\x00\x04\x85R.",
                                 b"\x80\x02c__builtin__\nbytearray\nJ\x00\x00\x00\x04\x85R."],  # bytearray(2**26)
                         ids=["Tensor-reduce", "Tensor-newobj", "Parameter-reduce", "bytearray"])
def test_load_refuses_allocations_asked_by_a_few_bytes(pkl):
    """Allow-listed globals called with a size (``Tensor(2**26)``, ``bytearray(2**26)``) would allocate what a
    40-byte pickle asks for: refused without allocating (torch, which calls them, would allocate)."""
    import pickle
    members, _ = _torch_file()
    _load_checked(_with_pkl(members, pkl), (pickle.UnpicklingError, RuntimeError), torch_rejects=False)


def test_numpy_scalars_and_bytes_still_load():
    import io
    b = io.BytesIO()
    tt.save({"x": np.float64(1.5), "i": np.int32(3), "ba": bytearray(b"ab"), "b": b"cd"}, b)
    b.seek(0)
    got = tt.load(b)
    assert got == {"x": 1.5, "i": 3, "ba": bytearray(b"ab"), "b": b"cd"} and type(got["x"]) is np.float64


def test_whole_model_pickled_under_the_old_module_paths_still_loads():
    """A model saved whole (``weights_only=False``) by a tinytorch whose classes lived in files since split
    (``nn/modules/layers.py``) loads: the old module path is looked up where its names live now."""
    import zipfile
    model = tt.nn.Sequential(tt.nn.Conv2d(1, 2, 3), tt.nn.BatchNorm2d(2), tt.nn.MaxPool2d(2), tt.nn.Dropout(0.1))
    buf = io.BytesIO()
    tt.save(model, buf)
    src, out = zipfile.ZipFile(io.BytesIO(buf.getvalue())), io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as dst:
        for info in src.infolist():
            data = src.read(info.filename)
            if info.filename.endswith("data.pkl"):
                old = data
                for m in (b"batchnorm", b"pooling", b"dropout"):
                    data = data.replace(b"tinytorch.nn.modules." + m + b"\n", b"tinytorch.nn.modules.layers\n")
                assert data != old
            dst.writestr(info, data)
    out.seek(0)
    back = tt.load(out, weights_only=False)
    assert [type(m) for m in back] == [type(m) for m in model]
    x = tt.randn(1, 1, 6, 6)
    model.eval(), back.eval()
    assert tt.equal(model(x), back(x))
