"""torch.hub / torch.utils.model_zoo / torch.utils.hooks against real PyTorch: cache paths, file:// downloads,
hash checks, hubconf entrypoints, offline GitHub errors, and the hook handle."""
import copy
import hashlib
import os
import pickle
from collections import OrderedDict
from urllib.error import URLError

import numpy as np
import pytest

import tinytorch as tt
from conftest import torch


@pytest.fixture
def hubs(tmp_path, monkeypatch):
    """Both hubs with no set_dir override, restored afterwards."""
    monkeypatch.setattr(tt.hub, "_hub_dir", None)
    monkeypatch.setattr(torch.hub, "_hub_dir", None)
    return tmp_path


@pytest.mark.parametrize("env", [{}, {"TORCH_HOME": "{d}/th"}, {"XDG_CACHE_HOME": "{d}/xdg"},
                                 {"TORCH_HOME": "~/x", "XDG_CACHE_HOME": "{d}/xdg"}])
def test_get_dir_as_torch(hubs, monkeypatch, env):
    for k in ("TORCH_HOME", "XDG_CACHE_HOME"):
        monkeypatch.delenv(k, raising=False)
    for k, v in env.items():
        monkeypatch.setenv(k, v.format(d=hubs))
    assert tt.hub.get_dir() == torch.hub.get_dir()
    assert tt.hub._get_torch_home() == torch.hub._get_torch_home()
    tt.hub.set_dir("~/elsewhere")
    torch.hub.set_dir("~/elsewhere")
    assert tt.hub.get_dir() == torch.hub.get_dir()


def test_hash_regex_as_torch():
    for name in ("resnet18-5c106cde.pth", "a-b-0123abcd.pt", "noprefix.pth", "x-ABC.pth"):
        m1, m2 = tt.hub.HASH_REGEX.search(name), torch.hub.HASH_REGEX.search(name)
        assert (m1 and m1.group(1)) == (m2 and m2.group(1))


def _checkpoint(tmp_path):
    """A state dict saved by real PyTorch (PyTorch's format, which both load) at a name with its hash prefix."""
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    src = tmp_path / "src"
    src.mkdir()
    raw = src / "w.pth"
    torch.save({"weight": torch.tensor(a), "step": 3}, raw)
    h = hashlib.sha256(raw.read_bytes()).hexdigest()
    named = src / f"w-{h[:10]}.pth"
    raw.rename(named)
    return named, a, h


def test_load_state_dict_from_url_file_url_as_torch(hubs, monkeypatch):
    path, a, _ = _checkpoint(hubs)
    monkeypatch.setenv("TORCH_HOME", str(hubs / "home_tt"))
    sd = tt.hub.load_state_dict_from_url(path.as_uri(), progress=False, check_hash=True)
    cached_tt = sorted(os.listdir(hubs / "home_tt" / "hub" / "checkpoints"))
    monkeypatch.setenv("TORCH_HOME", str(hubs / "home_torch"))
    sd2 = torch.hub.load_state_dict_from_url(path.as_uri(), progress=False, check_hash=True)
    cached_torch = sorted(os.listdir(hubs / "home_torch" / "hub" / "checkpoints"))
    assert cached_tt == cached_torch == [path.name]
    assert isinstance(sd["weight"], tt.Tensor)
    np.testing.assert_array_equal(sd["weight"].numpy(), sd2["weight"].numpy())
    assert sd["step"] == sd2["step"] == 3


def test_a_cached_file_loads_offline(hubs):
    path, a, _ = _checkpoint(hubs)
    model_dir = hubs / "models"
    tt.hub.load_state_dict_from_url(path.as_uri(), model_dir=str(model_dir), progress=False)
    os.remove(path)  # the URL is gone: only the cache can serve it now
    sd = tt.hub.load_state_dict_from_url(path.as_uri(), model_dir=str(model_dir), progress=False)
    np.testing.assert_array_equal(sd["weight"].numpy(), a)
    sd = tt.utils.model_zoo.load_url(path.as_uri(), model_dir=str(model_dir), progress=False,
                                     file_name=path.name, map_location="cpu")
    np.testing.assert_array_equal(sd["weight"].numpy(), a)


def test_wrong_hash_is_refused_and_not_cached_as_torch(hubs):
    path, _, h = _checkpoint(hubs)
    bad = path.with_name("w-deadbeef.pth")
    path.rename(bad)
    errors = []
    for lib, d in ((tt, "m_tt"), (torch, "m_torch")):
        with pytest.raises(RuntimeError) as e:
            lib.hub.load_state_dict_from_url(bad.as_uri(), model_dir=str(hubs / d), progress=False, check_hash=True)
        errors.append(str(e.value))
        assert os.listdir(hubs / d) == []  # neither the file nor a .partial is left
    assert errors[0] == errors[1] == f'invalid hash value (expected "deadbeef", got "{h}")'


def test_download_url_to_file_as_torch(hubs):
    path, _, h = _checkpoint(hubs)
    for lib in (tt, torch):
        dst = hubs / f"dl_{lib.__name__}.bin"
        lib.hub.download_url_to_file(path.as_uri(), str(dst), hash_prefix=h[:6], progress=False)
        assert dst.read_bytes() == path.read_bytes()
    with pytest.raises(URLError):
        tt.hub.download_url_to_file((hubs / "missing.bin").as_uri(), str(hubs / "x.bin"), progress=False)
    assert not any(n.endswith(".partial") for n in os.listdir(hubs))


HUBCONF = '''
dependencies = {deps}

def tiny(scale=1.0):
    """A two-by-two linear layer."""
    import {mod} as torch
    m = torch.nn.Linear(2, 2)
    with torch.no_grad():
        m.weight.fill_(scale)
        m.bias.zero_()
    return m

_hidden = 3
'''


def _repo(tmp_path, deps="['numpy']", mod="tinytorch"):
    d = tmp_path / "repo"
    d.mkdir(exist_ok=True)
    (d / "hubconf.py").write_text(HUBCONF.format(deps=deps, mod=mod))
    return d


def test_load_local_hubconf(hubs):
    d = _repo(hubs)
    m = tt.hub.load(str(d), "tiny", source="local", scale=2.0)
    assert isinstance(m, tt.nn.Linear)
    assert m(tt.ones(2)).tolist() == [4.0, 4.0]


@pytest.mark.parametrize("case", ["source", "entry", "deps"])
def test_load_errors_as_torch(hubs, case):
    d = _repo(hubs, deps="['no_such_package_xyz']" if case == "deps" else "[]")
    args = dict(source="svn" if case == "source" else "local")
    model = "nope" if case == "entry" else "tiny"
    errors = []
    for lib in (tt, torch):
        with pytest.raises(Exception) as e:
            lib.hub.load(str(d), model, **args)
        errors.append((type(e.value), str(e.value)))
    assert errors[0] == errors[1]


def test_github_without_network_as_torch(hubs, monkeypatch):
    def offline(*a, **k):
        raise URLError("no network")
    monkeypatch.setattr(tt.hub, "urlopen", offline)
    monkeypatch.setattr(torch.hub, "urlopen", offline)
    errors = []
    for lib in (tt, torch):
        lib.hub.set_dir(str(hubs / f"hub_{lib.__name__}"))
        with pytest.raises(RuntimeError) as e:
            lib.hub.list("someone/somerepo", trust_repo=True)
        errors.append(str(e.value).replace(lib.hub.get_dir(), "<hub>"))
    assert errors[0] == errors[1]
    assert "no internet connection" in errors[0]


def test_github_repo_in_the_cache_loads_offline(hubs, monkeypatch):
    def offline(*a, **k):
        raise URLError("no network")
    monkeypatch.setattr(tt.hub, "urlopen", offline)
    tt.hub.set_dir(str(hubs / "hub"))
    repo = hubs / "hub" / "someone_somerepo_main"
    repo.mkdir(parents=True)
    (repo / "hubconf.py").write_text(HUBCONF.format(deps="[]", mod="tinytorch"))
    assert tt.hub.list("someone/somerepo", trust_repo=True, verbose=False) == ["tiny"]
    assert tt.hub.help("someone/somerepo", "tiny", trust_repo=True) == "A two-by-two linear layer."


def test_zip_slip_is_refused(hubs):
    import zipfile
    z = hubs / "evil.zip"
    with zipfile.ZipFile(z, "w") as f:
        f.writestr("../outside.txt", "x")
    for lib in (tt, torch):
        with zipfile.ZipFile(z) as f, pytest.raises(ValueError) as e:
            lib.hub._safe_extract_zip(f, str(hubs / "out"))
        assert "directory traversal" in str(e.value)
    assert not (hubs / "outside.txt").exists()


# ---- torch.utils.hooks -------------------------------------------------------------------------------------------
def test_module_and_optimizer_hooks_return_the_one_handle_class():
    m = tt.nn.Linear(2, 2)
    handles = [m.register_forward_hook(lambda *a: None), m.register_forward_pre_hook(lambda *a: None),
               m.register_full_backward_hook(lambda *a: None), m.register_full_backward_pre_hook(lambda *a: None),
               m.register_state_dict_pre_hook(lambda *a: None), m.register_load_state_dict_post_hook(lambda *a: None),
               m.register_load_state_dict_pre_hook(lambda *a: None),
               tt.optim.SGD(m.parameters(), lr=0.1).register_step_post_hook(lambda *a: None)]
    assert all(type(h) is tt.utils.hooks.RemovableHandle for h in handles)
    ids = [h.id for h in handles]
    assert ids == sorted(ids) and len(set(ids)) == len(ids)


def test_forward_hook_removal_with_its_flags_as_torch():
    out = []
    for lib in (tt, torch):
        m = lib.nn.Linear(2, 2)
        h = m.register_forward_hook(lambda mod, args, kwargs, o: o * 0, with_kwargs=True)
        r1 = m(lib.ones(2)).tolist()
        with h:
            pass  # leaving the block removes the hook
        r2 = m(lib.ones(2)).tolist() != [0.0, 0.0]
        out.append((r1, r2, len(m._forward_hooks), type(h).__name__))
    assert out[0] == out[1]


def test_removable_handle_as_torch():
    rows = []
    for lib in (tt, torch):
        table, extra = OrderedDict(), OrderedDict()
        H = lib.utils.hooks.RemovableHandle
        h = H(table, extra_dict=extra)
        table[h.id] = "hook"
        extra[h.id] = "flag"
        h2 = H(table)
        table[h2.id] = "hook2"
        h.remove()
        h.remove()  # twice is harmless
        rows.append((list(table.values()), list(extra), h2.id - h.id))
    assert rows[0] == rows[1] == (["hook2"], [], 1)


def _hook(*args):
    return None


def test_removable_handle_pickles():
    m = tt.nn.Linear(2, 2)
    h = m.register_forward_hook(_hook)
    h2 = pickle.loads(pickle.dumps(h))
    assert h2.id == h.id
    m2 = copy.deepcopy(m)
    assert list(m2._forward_hooks) == [h.id]


def test_unserializable_hook_and_warn_if_has_hooks():
    @tt.utils.hooks.unserializable_hook
    def quiet(g):
        return g
    assert quiet.__torch_unserializable__ is True
    x = tt.ones(2, requires_grad=True)
    x.register_hook(quiet)
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tt.utils.hooks.warn_if_has_hooks(x)
    x.register_hook(lambda g: g)
    with pytest.warns(UserWarning, match="will not be serialized"):
        tt.utils.hooks.warn_if_has_hooks(x)
