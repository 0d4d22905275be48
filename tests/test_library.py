"""torch.library / torch.ops on tinytorch's op registry, against real PyTorch: schemas (parsed, inferred, bound),
custom ops (values, gradients, errors, mutation, devices, fake kernels), Library define/impl, torch.ops lookups
and load_library."""
import itertools
import os
import typing

import numpy as np
import pytest

import tinytorch as tt
from conftest import torch
from tinytorch._dispatch import OPS
from tinytorch._schema import parse_schema

_ids = itertools.count()


def _ns():
    """A fresh namespace: real PyTorch keeps its definitions for the life of the process."""
    return f"tinylibtest{next(_ids)}"


def _both(fn):
    """fn(lib) for tinytorch and torch: (result or (type, message)) per library."""
    out = []
    for lib in (tt, torch):
        try:
            out.append(fn(lib))
        except Exception as e:  # noqa: BLE001 - the exception is the result compared
            out.append((type(e), str(e)))
    return out


# ---- schemas -----------------------------------------------------------------------------------------------------
GOOD = ["foo(Tensor x, float a) -> Tensor",
        "ns::foo.ov(Tensor(a!) x, int[2] k=[1,1], *, Scalar? s=None) -> (Tensor, Tensor b)",
        "foo(Tensor x, float a=1.) -> ()", "foo(Tensor x) -> ((Tensor))", "foo(Tensor x) -> (Tensor)",
        'foo(Tensor x, str s="hi", ScalarType? d=None, int[] l=[]) -> Tensor[]',
        "foo(Tensor[] xs, Tensor?[] ys, SymInt[] s, bool b=True, int i=-3) -> Tensor",
        "foo(Tensor self, *, Tensor(a!) out) -> Tensor(a!)",
        "foo(Tensor x, float a=1e-05, float b=0.5, float c=1., float d=2) -> Tensor",
        "foo(Tensor x, int[2] k=[1,2]) -> Tensor out",
        "foo(Tensor x, int? n=None, Device? d=None) -> (Tensor values, Tensor indices)"]


@pytest.mark.parametrize("text", GOOD)
def test_schema_parses_as_torch(text):
    ours, theirs = parse_schema(text), torch._C.parse_schema(text)
    assert str(ours) == str(theirs)
    assert ours.name == theirs.name and ours.overload_name == theirs.overload_name
    assert [a.name for a in ours.arguments] == [a.name for a in theirs.arguments]
    assert [a.kwarg_only for a in ours.arguments] == [a.kwarg_only for a in theirs.arguments]
    assert [a.default_value for a in ours.arguments] == [a.default_value for a in theirs.arguments]
    assert [a.alias_info is not None and a.alias_info.is_write for a in ours.arguments] == \
        [a.alias_info is not None and a.alias_info.is_write for a in theirs.arguments]
    assert [r.name for r in ours.returns] == [r.name for r in theirs.returns]
    assert ours.is_mutable == theirs.is_mutable


BAD = ["foo(Tensor x -> Tensor", "foo(Tensr x) -> Tensor", "(Tensor x) -> Tensor", "foo(Tensor x) Tensor",
       "foo(Tensor x,) -> Tensor"]


@pytest.mark.parametrize("text", BAD)
def test_schema_errors_as_torch(text):
    with pytest.raises(RuntimeError) as theirs:
        torch._C.parse_schema(text)
    with pytest.raises(RuntimeError) as ours:
        parse_schema(text)
    assert str(ours.value) == str(theirs.value)


def _sig_functions(lib):
    T = lib.Tensor

    def f1(x: T, y: typing.Optional[T], n: int, l: list[int], s: typing.Sequence[float], *, a: float = 1.0,
           d: lib.dtype = lib.float32, st: str = "x") -> tuple[T, T]: ...

    def f2(x: T) -> None: ...

    def f3(x: T) -> list[T]: ...

    def f4(x: T) -> tuple[T]: ...

    def f5(x: T, b: bool = True, i: int = -3, o: typing.Optional[int] = None) -> T: ...

    def f6(xs: list[T], ys: list[typing.Optional[T]], z: typing.Optional[list[int]] = None) -> int: ...
    return [f1, f2, f3, f4, f5, f6]


@pytest.mark.parametrize("k", range(6))
@pytest.mark.parametrize("mutates", [(), "unknown"])
def test_infer_schema_as_torch(k, mutates):
    ours = tt.library.infer_schema(_sig_functions(tt)[k], mutates_args=mutates)
    theirs = torch.library.infer_schema(_sig_functions(torch)[k], mutates_args=mutates)
    assert ours == theirs


def test_infer_schema_op_name_and_mutated_argument():
    ours = tt.library.infer_schema(_sig_functions(tt)[0], op_name="foo", mutates_args=["x"])
    theirs = torch.library.infer_schema(_sig_functions(torch)[0], op_name="foo", mutates_args=["x"])
    assert ours == theirs


def _bad_signatures(lib):
    T = lib.Tensor

    def missing(x: T, y) -> T: ...

    def no_return(x: T): ...

    def star(x: T, *args: int) -> T: ...

    def tup(x: tuple[int, int]) -> T: ...
    return [(missing, ()), (_sig_functions(lib)[0], ["zz"]), (_sig_functions(lib)[0], ["n"]), (no_return, ()),
            (star, ()), (_sig_functions(lib)[0], "bogus"), (tup, ())]


@pytest.mark.parametrize("k", range(7))
def test_infer_schema_errors_as_torch(k):
    def run(lib):
        fn, m = _bad_signatures(lib)[k]
        return lib.library.infer_schema(fn, mutates_args=m)
    ours, theirs = _both(run)
    assert ours[0] is ValueError and theirs[0] is ValueError
    # the messages end with the signature (and the valid types), whose reprs name each library's classes
    assert ours[1].split(" Got func")[0].split("The valid types")[0] == \
        theirs[1].split(" Got func")[0].split("The valid types")[0]


# ---- custom ops --------------------------------------------------------------------------------------------------
def _numpy_scale(lib, ns):
    """An opaque kernel (NumPy inside) with a registered derivative: y = x * a, dy/dx = a."""
    @lib.library.custom_op(f"{ns}::scale", mutates_args=())
    def scale(x: lib.Tensor, a: float) -> lib.Tensor:
        return lib.from_numpy(x.detach().numpy() * a)

    def setup_context(ctx, inputs, output):
        ctx.a = inputs[1]

    def backward(ctx, grad):
        return grad * ctx.a, None
    scale.register_autograd(backward, setup_context=setup_context)
    return scale


def test_custom_op_values_and_gradients_as_torch():
    ns = _ns()
    ours, theirs = _numpy_scale(tt, ns), _numpy_scale(torch, ns)
    a = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)
    x, y = tt.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    ox, oy = ours(x, 2.5), theirs(y, 2.5)
    np.testing.assert_allclose(ox.detach().numpy(), oy.detach().numpy())
    assert type(ox.grad_fn).__name__ == type(oy.grad_fn).__name__ == f"GeneratedBackwardFor_{ns}_scale_defaultBackward"
    (ox * ox).sum().backward()
    (oy * oy).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), y.grad.numpy(), rtol=1e-6)
    # the op is in the registry and in torch.ops, and runs through the dispatcher
    assert OPS[f"{ns}::scale"] is ours._record.op
    np.testing.assert_allclose(getattr(tt.ops, ns).scale(x, 3.0).detach().numpy(),
                               getattr(torch.ops, ns).scale(y, 3.0).detach().numpy())
    assert repr(ours) == repr(theirs)


def test_custom_op_keyword_only_setup_context_as_torch():
    ns = _ns()

    def make(lib):
        @lib.library.custom_op(f"{ns}::mul", mutates_args=())
        def mul(x: lib.Tensor, *, val: float) -> lib.Tensor:
            return x * val

        def setup_context(ctx, inputs, keyword_only_inputs, output):
            ctx.val = keyword_only_inputs["val"]
        mul.register_autograd(lambda ctx, g: g * ctx.val, setup_context=setup_context)
        return mul
    ours, theirs = make(tt), make(torch)
    x, y = tt.ones(3, requires_grad=True), torch.ones(3, requires_grad=True)
    ours(x, val=3.0).sum().backward()
    theirs(y, val=3.0).sum().backward()
    assert x.grad.tolist() == y.grad.tolist() == [3.0, 3.0, 3.0]


def test_custom_op_without_autograd_raises_at_backward_as_torch():
    ns = _ns()

    def run(lib):
        op = lib.library.custom_op(f"{ns}::ident", mutates_args=())(_clone_fn(lib))
        x = lib.ones(2, requires_grad=True)
        y = op(x)
        assert y.requires_grad
        y.sum().backward()
    ours, theirs = _both(run)
    assert ours == theirs and ours[0] is RuntimeError


def _clone_fn(lib):
    def ident(x: lib.Tensor) -> lib.Tensor:
        return x.clone()
    return ident


@pytest.mark.parametrize("call", ["op(x, 3, 2.0)", "op(x)", "op(x, a=1.0, b=2)", "op(x, n=1, a=2.)",
                                  "op(a=1.0, x=x)", "op(x, True, a=1)"])
def test_custom_op_argument_binding_as_torch(call):
    ns = _ns()

    def run(lib):
        @lib.library.custom_op(f"{ns}::kw", mutates_args=())
        def op(x: lib.Tensor, n: int = 2, *, a: float) -> lib.Tensor:
            return x * a * n
        x = lib.ones(2)
        return eval(call, {"op": op, "x": x}).tolist()  # noqa: S307 - the call under test
    ours, theirs = _both(run)
    assert ours == theirs


@pytest.mark.parametrize("call", ["op(x, 'a', a=1.0)", "op(x, 1.5, a=1.)", "op(1.0, a=1.)"])
def test_custom_op_argument_types_as_torch(call):
    ns = _ns()

    def run(lib):
        @lib.library.custom_op(f"{ns}::kw", mutates_args=())
        def op(x: lib.Tensor, n: int = 2, *, a: float) -> lib.Tensor:
            return x * a * n
        return eval(call, {"op": op, "x": lib.ones(2)})  # noqa: S307 - the call under test
    ours, theirs = _both(run)
    assert ours[0] is theirs[0] is RuntimeError
    # PyTorch's message goes on with pybind11's cast details; the part before is the argument parser's
    assert ours[1].split("\nDeclaration")[0] == theirs[1].split("\nDeclaration")[0]


def test_custom_op_mutates_args_bumps_version_as_torch():
    ns = _ns()

    def run(lib):
        @lib.library.custom_op(f"{ns}::add_one_", mutates_args=["x"])
        def add_one_(x: lib.Tensor) -> None:
            x.add_(1)
        t = lib.zeros(2)
        v = t._version
        r = add_one_(t)
        return r, t.tolist(), t._version > v, str(add_one_._opoverload._schema)
    ours, theirs = _both(run)
    assert ours == theirs


def test_register_autograd_refuses_a_mutating_op_as_torch():
    ns = _ns()

    def run(lib):
        @lib.library.custom_op(f"{ns}::m", mutates_args=["x"])
        def m(x: lib.Tensor) -> None:
            x.add_(1)
        m.register_autograd(lambda ctx, g: g)
    ours, theirs = _both(run)
    assert ours[0] is theirs[0] is RuntimeError
    assert ours[1].replace(f"<CustomOpDef({ns}::m)>", "OP") == theirs[1].replace(f"<CustomOpDef({ns}::m)>", "OP")


def test_output_aliasing_an_input_is_refused_as_torch():
    ns = _ns()

    def run(lib):
        @lib.library.custom_op(f"{ns}::alias", mutates_args=())
        def alias(x: lib.Tensor) -> lib.Tensor:
            return x
        alias(lib.ones(2))
    ours, theirs = _both(run)
    assert ours[0] is theirs[0] is RuntimeError
    assert ours[1].split("): ")[1] == theirs[1].split("): ")[1]


def test_device_kernels_as_torch():
    ns = _ns()

    def run(lib):
        @lib.library.custom_op(f"{ns}::plus", mutates_args=(), device_types="cuda")
        def plus(x: lib.Tensor) -> lib.Tensor:
            return x + 1
        try:
            plus(lib.ones(2))
        except NotImplementedError as e:
            first = str(e).split(".")[0]
        else:
            first = None

        @plus.register_kernel("cpu")
        def _(x):
            return x + 10
        return first, plus(lib.ones(2)).tolist()
    ours, theirs = _both(run)
    assert ours == theirs
    assert ours[0] == f"Could not run '{ns}::plus' with arguments from the 'CPU' backend"


def test_register_fake_serves_meta_tensors_as_torch():
    ns = _ns()

    def run(lib):
        @lib.library.custom_op(f"{ns}::pairsum", mutates_args=())
        def pairsum(x: lib.Tensor) -> lib.Tensor:
            return lib.from_numpy(x.numpy().reshape(-1, 2).sum(1))

        @pairsum.register_fake
        def _(x):
            return x.new_empty((x.numel() // 2,))
        out = pairsum(lib.ones(3, 4, device="meta"))
        return tuple(out.shape), out.device.type, pairsum(lib.arange(6.0)).tolist()
    ours, theirs = _both(run)
    assert ours == theirs == ((6,), "meta", [1.0, 5.0, 9.0])


def test_custom_op_inside_a_compiled_function():
    ns = _ns()

    @tt.library.custom_op(f"{ns}::cube", mutates_args=())
    def cube(x: tt.Tensor) -> tt.Tensor:
        return x * x * x
    cube.register_autograd(lambda ctx, g: g * 3 * ctx.x * ctx.x,
                           setup_context=lambda ctx, inputs, output: setattr(ctx, "x", inputs[0]))
    f = tt.compile(lambda x: cube(x + 1).sum())
    x = tt.tensor([1.0, 2.0], requires_grad=True)
    for _ in range(3):
        x.grad = None
        f(x).backward()
        assert x.grad.tolist() == [12.0, 27.0]
    assert f(tt.tensor([0.0, 1.0])).item() == 9.0


def test_redefining_a_custom_op_replaces_it_as_torch():
    ns = _ns()

    def run(lib):
        lib.library.custom_op(f"{ns}::r", mutates_args=())(_clone_fn(lib))

        def twice(x: lib.Tensor) -> lib.Tensor:
            return x * 2
        lib.library.custom_op(f"{ns}::r", mutates_args=())(twice)
        return getattr(lib.ops, ns).r(lib.ones(2)).tolist()
    ours, theirs = _both(run)
    assert ours == theirs == [2.0, 2.0]


def test_custom_op_schema_argument_must_match_mutates_args_as_torch():
    ns = _ns()

    def run(lib):
        lib.library.custom_op(f"{ns}::s", mutates_args=(), schema="(Tensor(a!) x) -> ()")(lambda x: None)
    ours, theirs = _both(run)
    assert ours == theirs and ours[0] is ValueError


def test_opcheck():
    ns = _ns()
    op = _numpy_scale(tt, ns)
    x = tt.randn(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="no fake impl"):
        tt.library.opcheck(op, (x, 2.0))
    op.register_fake(lambda x, a: tt.empty_like(x))
    assert tt.library.opcheck(op, (x, 2.0)) == {"test_schema": "SUCCESS", "test_autograd_registration": "SUCCESS",
                                                "test_faketensor": "SUCCESS"}

    @tt.library.custom_op(f"{ns}::sneaky", mutates_args=())
    def sneaky(x: tt.Tensor) -> tt.Tensor:
        x.add_(1)  # writes an argument its schema does not mark as written
        return x.clone()
    with pytest.raises(RuntimeError, match="does not mark as written"):
        tt.library.opcheck(sneaky, (tt.zeros(2),), test_utils="test_schema")
    res = tt.library.opcheck(sneaky, (tt.zeros(2),), raise_exception=False)
    assert isinstance(res["test_schema"], RuntimeError)
    with pytest.raises(AssertionError, match="no autograd formula"):
        tt.library.opcheck(cube_without_grad(ns), (tt.ones(2, requires_grad=True),),
                           test_utils="test_autograd_registration")


def cube_without_grad(ns):
    @tt.library.custom_op(f"{ns}::nograd", mutates_args=())
    def nograd(x: tt.Tensor) -> tt.Tensor:
        return x * x * x
    return nograd


# ---- Library -----------------------------------------------------------------------------------------------------
def test_library_define_impl_and_errors_as_torch():
    ns = _ns()
    libs = {}

    def run(lib):
        L = lib.library.Library(ns, "DEF")
        libs[lib] = L
        name = L.define("bar(Tensor x, float a=2.) -> Tensor")
        try:
            getattr(lib.ops, ns).bar(lib.ones(2))
        except NotImplementedError as e:
            missing = str(e).split(".")[0]
        L.impl("bar", lambda x, a: x * a, "CPU")
        packet = getattr(lib.ops, ns).bar
        return (name, missing, packet(lib.ones(2)).tolist(), packet.default(lib.ones(2), 3.0).tolist(),
                repr(packet), repr(packet.default), str(packet), str(packet.default), packet.overloads(), packet.default.name(),
                packet.default.__name__, packet.__name__, packet._qualified_op_name, str(packet.default._schema))
    ours, theirs = _both(run)
    assert ours == theirs
    dup = _both(lambda lib: libs[lib].define("bar(Tensor x, float a=2.) -> Tensor"))
    assert dup[0][0] is dup[1][0] is RuntimeError
    assert dup[0][1].split(" Duplicate")[0] == dup[1][1].split(" Duplicate")[0]
    again = _both(lambda lib: lib.library.Library(ns, "DEF"))
    assert again[0][0] is again[1][0] is RuntimeError
    assert again[0][1].split(";")[0] == again[1][1].split(";")[0]
    bad = _both(lambda lib: lib.library.Library(ns, "BAD"))
    assert bad[0] == bad[1] and bad[0][0] is ValueError
    libs[tt]._destroy()
    assert f"{ns}::bar" not in OPS
    with pytest.raises(AttributeError):
        getattr(tt.ops, ns).bar.default


def test_composite_implicit_autograd_kernel_differentiates_through_its_ops_as_torch():
    ns = _ns()
    keep = []

    def run(lib):
        L = lib.library.Library(ns, "FRAGMENT")
        keep.append(L)
        L.define("softplus2(Tensor x) -> Tensor")
        L.impl("softplus2", lambda x: (x.exp() + 1).log() * 2, "CompositeImplicitAutograd")
        x = lib.tensor([0.5, -1.0], requires_grad=True)
        getattr(lib.ops, ns).softplus2(x).sum().backward()
        return x.grad.tolist()
    ours, theirs = _both(run)
    np.testing.assert_allclose(ours, theirs, rtol=1e-6)


def test_module_level_define_impl_register_autograd_as_torch():
    ns = _ns()

    def run(lib):
        lib.library.define(f"{ns}::sq", "(Tensor x) -> Tensor")
        lib.library.impl(f"{ns}::sq", "cpu", lambda x: x * x)
        lib.library.register_autograd(f"{ns}::sq", lambda ctx, g: g * 2 * ctx.x,
                                      setup_context=lambda ctx, inputs, output: setattr(ctx, "x", inputs[0]))
        x = lib.tensor([3.0], requires_grad=True)
        y = getattr(lib.ops, ns).sq(x)
        y.backward()
        return y.tolist(), x.grad.tolist()
    ours, theirs = _both(run)
    assert ours == theirs == ([9.0], [6.0])


# ---- torch.ops ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("expr", ["ops.{ns}.nope", "ops.aten.no_such_op_xyz"])
def test_ops_missing_names_as_torch(expr):
    ns = _ns()
    ours, theirs = _both(lambda lib: eval(expr.format(ns=ns), {"ops": lib.ops}))  # noqa: S307
    assert ours == theirs and ours[0] is AttributeError


def test_missing_overload_as_torch():
    ns = _ns()

    def run(lib):
        lib.library.custom_op(f"{ns}::o", mutates_args=())(_clone_fn(lib))
        return getattr(lib.ops, ns).o.nope
    ours, theirs = _both(run)
    assert ours == theirs and ours[0] is AttributeError


@pytest.mark.parametrize("expr", ["ops.aten.add.Tensor(a, b, alpha=2)", "ops.aten.add(a, 3)",
                                  "ops.aten.mul.Tensor(a, b)", "ops.aten.relu.default(a - 2)",
                                  "ops.aten.sum.default(a)", "ops.aten.sum.dim_IntList(a, [0])"])
def test_aten_ops_by_name_as_torch(expr):
    def run(lib):
        a, b = lib.tensor([[1.0, 2.0], [3.0, 4.0]]), lib.tensor([[0.5, 0.5], [1.0, 1.0]])
        return eval(expr, {"ops": lib.ops, "a": a, "b": b}).tolist()  # noqa: S307
    ours, theirs = _both(run)
    assert ours == theirs


def test_aten_packet_names_as_torch():
    ours, theirs = _both(lambda lib: (repr(lib.ops.aten.add), repr(lib.ops.aten.add.Tensor), str(lib.ops.aten.add),
                                      str(lib.ops.aten.add.Tensor), lib.ops.aten.add.Tensor.name(),
                                      lib.ops.aten.add.default.name()))
    assert ours == theirs


def test_load_library_errors_as_torch(tmp_path):
    junk = tmp_path / "junk.so"
    junk.write_bytes(b"not a shared library")
    for path in ("/nonexistent/libnothing.so", str(junk)):
        ours, theirs = _both(lambda lib: lib.ops.load_library(path))
        assert ours == theirs and ours[0] is OSError


def test_load_library_refuses_a_pytorch_extension():
    import glob
    ext = glob.glob(os.path.join(os.path.dirname(torch.__file__), "lib", "libtorch_python.so"))
    assert ext, "the pinned PyTorch wheel ships lib/libtorch_python.so"
    with pytest.raises(OSError, match="PyTorch C\\+\\+ extension"):
        tt.ops.load_library(ext[0])


def test_load_library_loads_a_plain_shared_library():
    # a shared library that is not a PyTorch extension and is always here: NumPy's compiled core
    import numpy._core._multiarray_umath as core
    tt.ops.load_library(core.__file__)
    assert os.path.realpath(core.__file__) in tt.ops.loaded_libraries


def test_explicit_schema_and_registration_by_name_as_torch():
    """The pattern of transformers' MoE fallback: custom_op with a schema string, then register_fake and
    register_autograd by qualified name; a backward that calls another custom op returning two tensors."""
    ns = _ns()

    def run(lib):
        def fwd(a, b):
            return a * b

        def bwd_op(a, b, g):
            return g * b, g * a
        lib.library.custom_op(f"{ns}::mul2", fwd, mutates_args=(), schema="(Tensor a, Tensor b) -> Tensor")
        lib.library.custom_op(f"{ns}::mul2_bwd", bwd_op, mutates_args=(),
                              schema="(Tensor a, Tensor b, Tensor g) -> (Tensor, Tensor)")
        lib.library.register_fake(f"{ns}::mul2", lambda a, b: lib.empty_like(a))
        lib.library.register_fake(f"{ns}::mul2_bwd", lambda a, b, g: (lib.empty_like(a), lib.empty_like(b)))

        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(*inputs)

        def backward(ctx, g):
            a, b = ctx.saved_tensors
            return getattr(lib.ops, ns).mul2_bwd(a, b, g)
        lib.library.register_autograd(f"{ns}::mul2", backward, setup_context=setup_context)
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        b = lib.tensor([3.0, 5.0], requires_grad=True)
        out = getattr(lib.ops, ns).mul2(a, b)
        out.sum().backward()
        meta = getattr(lib.ops, ns).mul2_bwd(*(lib.ones(3, device="meta") for _ in range(3)))
        return out.tolist(), a.grad.tolist(), b.grad.tolist(), [tuple(m.shape) for m in meta]
    ours, theirs = _both(run)
    assert ours == theirs == ([3.0, 10.0], [3.0, 5.0], [1.0, 2.0], [(3,), (3,)])


def test_packet_call_picks_the_overload_the_arguments_match_as_torch():
    ns = _ns()
    keep = []

    def run(lib):
        L = lib.library.Library(ns, "FRAGMENT")
        keep.append(L)
        L.define("f(Tensor x) -> Tensor")
        L.define("f.scaled(Tensor x, float s) -> Tensor")
        L.impl("f", lambda x: x + 1, "CompositeExplicitAutograd")
        L.impl("f.scaled", lambda x, s: x * s, "CompositeExplicitAutograd")
        p = getattr(lib.ops, ns).f
        return p(lib.ones(2)).tolist(), p(lib.ones(2), 3.0).tolist(), sorted(p.overloads())
    ours, theirs = _both(run)
    assert ours == theirs == ([2.0, 2.0], [3.0, 3.0], ["default", "scaled"])
