"""torch._dynamo / torch.compiler names against real PyTorch (its eager backend, so no code is generated):
OptimizedModule, disable as a graph break, is_compiling, config, mark_static_address, mark_dynamic,
allow_in_graph, exc.Unsupported, utils.is_compile_supported."""
import importlib

import pytest

import tinytorch as tt
from conftest import torch


def test_optimized_module_as_torch():
    out = []
    for lib, kw in ((tt, {}), (torch, {"backend": "eager"})):
        m = lib.nn.Linear(2, 2)
        c = lib.compile(m, **kw)
        out.append((isinstance(c, lib._dynamo.eval_frame.OptimizedModule), isinstance(c, lib._dynamo.OptimizedModule),
                    isinstance(c, lib.nn.Module), c._orig_mod is m, list(c.state_dict()),
                    isinstance(m, lib._dynamo.OptimizedModule)))
    assert out[0] == out[1] == (True, True, True, True, ["_orig_mod.weight", "_orig_mod.bias"], False)


def test_the_modules_import_by_torch_name():
    for name in ("_dynamo", "_dynamo.eval_frame", "_dynamo.config", "_dynamo.exc", "_dynamo.utils", "_ops", "hub",
                 "library", "utils.hooks", "utils.model_zoo"):
        assert importlib.import_module(f"tinytorch.{name}") is not None
    from tinytorch._dynamo.eval_frame import OptimizedModule, is_dynamo_supported
    assert OptimizedModule is tt.compiler.OptimizedModule and is_dynamo_supported() is True
    assert tt._dynamo.exc.Unsupported is tt.compiler.Unsupported


def test_disabled_function_runs_eagerly_as_a_graph_break_as_torch():
    seen = {}
    results = {}
    for lib, kw in ((tt, {}), (torch, {"backend": "eager"})):
        log = seen[lib] = []

        @lib.compiler.disable
        def eager(x):
            log.append(("inside", lib.compiler.is_compiling()))
            return x.sum().item()

        def f(x):
            log.append(("outside", lib.compiler.is_compiling()))
            y = x * 2
            return y + eager(y)
        results[lib] = lib.compile(f, **kw)(lib.ones(3)).tolist()
        with pytest.raises(lib._dynamo.exc.Unsupported):
            lib.compile(f, fullgraph=True, **kw)(lib.ones(4))
    assert results[tt] == results[torch] == [8.0, 8.0, 8.0]
    assert seen[tt][:2] == seen[torch][:2] == [("outside", True), ("inside", False)]
    assert tt._dynamo.disable is tt.compiler.disable


def test_disable_names_the_break():
    @tt._dynamo.disable(reason="calls NumPy")
    def host(x):
        return x + 1
    f = tt.compile(lambda x: host(x * 2) * 3)
    assert f(tt.ones(2)).tolist() == [9.0, 9.0]
    assert any("host is decorated with torch.compiler.disable (calls NumPy)" in b for b in f.stats()["graph_breaks"])
    assert host.__name__ == "host" and host(tt.zeros(1)).tolist() == [1.0]


def test_config_cache_size_limit_is_recompile_limit_as_torch():
    for lib in (tt, torch):
        cfg = lib._dynamo.config
        old = cfg.recompile_limit
        try:
            cfg.cache_size_limit = 3
            assert cfg.recompile_limit == 3 and cfg.cache_size_limit == 3
        finally:
            cfg.recompile_limit = old
    assert tt._dynamo.config is tt.compiler.config


def test_config_recompile_limit_is_honoured():
    import warnings
    cfg = tt._dynamo.config
    old = cfg.cache_size_limit
    cfg.cache_size_limit = 2
    try:
        f = tt.compile(lambda x: x + 1)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            for k in range(1, 5):
                assert f(tt.ones(k)).tolist() == [2.0] * k
        assert f.eager and any("cache_size_limit = 2" in str(m.message) for m in w)
    finally:
        cfg.cache_size_limit = old


def test_mark_static_address_and_mark_dynamic_as_torch():
    out = []
    for lib in (tt, torch):
        t = lib.ones(2, 3)
        lib._dynamo.mark_static_address(t)
        a = t._dynamo_static_input_type
        lib._dynamo.mark_static_address(t, guard=True)
        b = t._dynamo_static_input_type
        lib._dynamo.mark_dynamic(t, 0)
        lib._dynamo.mark_dynamic(t, [1], min=2, max=9)
        ranges = sorted((r[0], r[1], r[2]) if isinstance(r, tuple) else (r.dim, r.min, r.max)
                        for r in t._dynamo_dynamic_range)
        try:
            lib._dynamo.mark_static_address(3)
        except TypeError as e:
            err = str(e)
        out.append((a, b, sorted(t._dynamo_dynamic_indices), ranges, err))
    assert out[0] == out[1]


def test_allow_in_graph_as_torch():
    def f(x):
        return x * 2
    for lib in (tt, torch):
        assert lib.compiler.allow_in_graph(f) is f
        with pytest.raises(AssertionError, match="allow_in_graph expects a callable"):
            lib.compiler.allow_in_graph(3)
    g = tt.compile(lambda x: tt._dynamo.allow_in_graph(f)(x) + 1)
    assert g(tt.ones(2)).tolist() == [3.0, 3.0]


def test_compiler_queries_as_torch():
    for lib in (tt, torch):
        assert lib.compiler.is_exporting() is False
        assert lib.compiler.is_compiling() is False and lib.compiler.is_dynamo_compiling() is False
        assert lib._dynamo.is_compiling() is False
        assert lib._dynamo.utils.is_compile_supported("cpu") is True
        assert lib.compiler.cudagraph_mark_step_begin() is None
        lib.compiler.reset()
        lib._dynamo.reset()
    assert tt._dynamo.utils.is_compile_supported("meta") is torch._dynamo.utils.is_compile_supported("meta") is False


def test_optimize_is_compile():
    f = tt._dynamo.optimize("inductor")(lambda x: x.sin() + 1)
    assert isinstance(f, tt.compiler.CompiledFunction)
    assert f(tt.zeros(2)).tolist() == [1.0, 1.0]
