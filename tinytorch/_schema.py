"""Operator schemas as PyTorch writes them: ``ns::name.overload(Tensor x, float a=1., *, int b) -> Tensor``.

``parse_schema`` reads one into a ``FunctionSchema`` (its ``arguments`` and ``returns`` are ``Argument`` records,
``alias_info`` an ``AliasInfo`` for ``Tensor(a!)``); ``infer_schema`` writes the schema of a Python function from
its type annotations, as ``torch.library.infer_schema`` does for ``custom_op``; ``FunctionSchema.bind`` matches a
call's arguments to the schema (the checks PyTorch's C++ argument parser makes, with its messages).

Types are kept as the schema spells them (``"SymInt[]"``, ``"Tensor?"``): tinytorch has no JIT type objects.
Source: PyTorch's ``aten/src/ATen/native/README.md`` (the schema language) and ``torch/_library/infer_schema.py``.
"""
import inspect
import re
import typing
from collections import abc
from types import GenericAlias

# the base types of the schema language (aten/src/ATen/native/README.md#func)
BASE_TYPES = {"Tensor", "int", "SymInt", "float", "bool", "str", "Scalar", "ScalarType", "Device", "Layout",
              "MemoryFormat", "Generator", "Dimname", "Stream", "complex", "Storage", "QScheme", "Any", "SymFloat",
              "SymBool", "t"}

_TOKEN = re.compile(r"\s*(?:(?P<arrow>->)|(?P<number>-?\d+(?:\.\d*)?(?:e-?\d+)?|-?\.\d+)|(?P<ident>[A-Za-z_]\w*)"
                    r"|(?P<string>\"(?:[^\"\\]|\\.)*\"|'(?:[^'\\]|\\.)*')|(?P<sym>::|[()\[\],*=?!.|]))")


class AliasInfo:
    """``Tensor(a!)``: the alias set (``before_set``) and whether the op writes through it (``is_write``)."""

    def __init__(self, sets, is_write):
        self.before_set = set(sets)
        self.after_set = set(sets)
        self.is_write = is_write

    def __repr__(self):
        return f"({'|'.join(sorted(self.before_set))}{'!' if self.is_write else ''})"


class Argument:
    """One argument or return of a schema: ``name``, ``type`` (the schema's spelling, without the alias
    annotation), ``default_value`` (None when it has none, see ``has_default_value``), ``kwarg_only``,
    ``alias_info`` and ``N`` (the fixed length of ``int[2]``)."""

    def __init__(self, name, type, default=None, has_default=False, kwarg_only=False, alias_info=None, N=None,
                 default_text=None):
        self.name, self.type, self.default_value = name, type, default
        self._has_default, self.kwarg_only, self.alias_info, self.N = has_default, kwarg_only, alias_info, N
        self._default_text = default_text

    def has_default_value(self):
        return self._has_default

    @property
    def is_tensor_like(self):
        return self.type.startswith("Tensor")

    def _type_str(self):
        t = self.type
        if self.alias_info is None:
            return t
        base, rest = t[:len("Tensor")], t[len("Tensor"):]
        return base + repr(self.alias_info) + rest

    def __str__(self):
        s = self._type_str()
        if self.N is not None:
            s = s.replace("[]", f"[{self.N}]", 1)
        if self.name:
            s += " " + self.name
        if self._has_default:
            s += "=" + self._default_text
        return s

    __repr__ = __str__


class FunctionSchema:
    """A parsed operator schema (``torch._C.FunctionSchema``): ``name`` (with namespace, ``ns::op``),
    ``overload_name`` ('' for the default overload), ``arguments``, ``returns``; ``str`` gives the schema back."""

    def __init__(self, name, overload_name, arguments, returns, returns_tuple):
        self.name, self.overload_name, self.arguments, self.returns = name, overload_name, arguments, returns
        self._returns_tuple = returns_tuple

    @property
    def is_mutable(self):
        return any(a.alias_info is not None and a.alias_info.is_write for a in self.arguments)

    def _returns_str(self):
        if not self._returns_tuple and len(self.returns) == 1:
            return str(self.returns[0])
        if len(self.returns) == 1 and not self.returns[0].name:
            return f"(({self.returns[0]}))"
        return "(" + ", ".join(str(r) for r in self.returns) + ")"

    def __str__(self):
        name = self.name + (f".{self.overload_name}" if self.overload_name else "")
        return f"{name}({', '.join(str(a) for a in self._with_star())}) -> {self._returns_str()}"

    __repr__ = __str__

    def _with_star(self):
        out, star = [], False
        for a in self.arguments:
            if a.kwarg_only and not star:
                out.append("*")
                star = True
            out.append(a)
        return out

    def bind(self, args, kwargs):
        """``(positional, keyword_only)``: the call's arguments matched to the schema, defaults filled in; the
        positional part has one value per non-keyword-only argument. RuntimeError with PyTorch's messages for
        too many positional arguments, a missing or unknown one, or a value of the wrong type."""
        qual = self.name + (f".{self.overload_name}" if self.overload_name else "")
        decl = f"Declaration: {self}"
        pos_params = [a for a in self.arguments if not a.kwarg_only]
        if len(args) > len(pos_params):
            raise RuntimeError(f"{qual}() takes {len(pos_params)} positional argument(s) but {len(args)} was/were "
                               f"given.  {decl}")
        for k in kwargs:
            if not any(a.name == k for a in self.arguments):
                raise RuntimeError(f"Unknown keyword argument '{k}' for operator '{qual}'. Schema: {self}")
        positional, kw = [], {}
        for i, a in enumerate(self.arguments):
            if not a.kwarg_only and i < len(args):
                v = args[i]
                if a.name in kwargs:
                    raise RuntimeError(f"{qual}() got multiple values for argument '{a.name}'. {decl}")
            elif a.name in kwargs:
                v = kwargs[a.name]
            elif a.has_default_value():
                v = a.default_value
            else:
                raise RuntimeError(f"{qual}() is missing value for argument '{a.name}'. {decl}")
            _check_value(qual, a, v, i, decl)
            if a.kwarg_only:
                kw[a.name] = v
            else:
                positional.append(v)
        return tuple(positional), kw


def _type_name(v):
    from ._tensor import Tensor
    return "Tensor" if isinstance(v, Tensor) else type(v).__name__


def _accepts(base, v):
    from ._tensor import Tensor
    from ._dtype import dtype
    from .device import device
    if base == "Tensor":
        return isinstance(v, Tensor)
    if base in ("int", "SymInt"):
        return isinstance(v, int) or isinstance(v, Tensor) and v.dim() == 0 and not v.dtype.is_floating_point
    if base in ("float", "SymFloat"):
        return isinstance(v, (int, float)) and not isinstance(v, bool) or isinstance(v, float)
    if base in ("bool", "SymBool"):
        return isinstance(v, (bool, int))
    if base == "str":
        return isinstance(v, str)
    if base == "Scalar":
        return isinstance(v, (int, float, bool, complex)) or isinstance(v, Tensor) and v.dim() == 0
    if base == "complex":
        return isinstance(v, (int, float, complex))
    if base == "ScalarType":
        return isinstance(v, dtype)
    if base == "Device":
        return isinstance(v, (device, str, int))
    return True  # the types tinytorch does not model (Layout, Generator ...) are passed through


_JIT_NAMES = {"SymInt": "int", "Scalar": "number", "Device": "Device", "ScalarType": "int"}


def _check_value(qual, a, v, pos, decl):
    t = a.type
    optional = t.endswith("?")
    if optional:
        t = t[:-1]
    if v is None and optional:
        return
    if t.endswith("[]"):
        base = t[:-2]
        elem_opt = base.endswith("?")
        base = base.rstrip("?")
        if base in ("int", "SymInt", "float", "bool") and _accepts(base, v):
            return  # int[2] k=1: one value for every element
        ok = isinstance(v, (list, tuple)) and all((x is None and elem_opt) or _accepts(base, x) for x in v)
        want = f"List[{_JIT_NAMES.get(base, base)}]"
    else:
        ok = _accepts(t, v)
        want = _JIT_NAMES.get(t, t)
    if not ok:
        raise RuntimeError(f"{qual}() Expected a value of type '{want}' for argument '{a.name}' but instead found "
                           f"type '{_type_name(v)}'.\nPosition: {pos}\nValue: {v!r}\n{decl}")


# ---- parsing ---------------------------------------------------------------------------------------------------

class _Lexer:
    def __init__(self, text):
        self.text = text
        self.toks = []
        i = 0
        while i < len(text):
            m = _TOKEN.match(text, i)
            if m is None or m.end() == i:
                if text[i:].strip() == "":
                    break
                self.toks.append(("unknown", text[i], i))
                break
            kind = m.lastgroup
            val = m.group(kind)
            self.toks.append((val if kind == "sym" else kind, val, m.start(kind)))
            i = m.end()
        self.toks.append(("eof", "", len(text)))
        self.i = 0

    def peek(self, k=0):
        return self.toks[min(self.i + k, len(self.toks) - 1)]

    def next(self):
        t = self.peek()
        self.i += 1
        return t

    def nextif(self, kind):
        if self.peek()[0] == kind:
            return self.next()
        return None

    def error(self, msg, tok=None):
        tok = tok or self.peek()
        pos = tok[2]
        width = max(len(tok[1]), 1)
        raise RuntimeError(f"{msg} here:\n{self.text}\n{' ' * pos}{'~' * width} <--- HERE\n")

    def expect(self, kind):
        tok = self.peek()
        if tok[0] != kind:
            self.error(f"expected {kind} but found '{tok[0]}'")
        return self.next()


def _parse_default(lx, typ):
    """A default value: number, True/False/None, a string, a list ``[1, 2]``, or a name (``contiguous_format``,
    ``Mean``: enum spellings kept as text). Returns (value, text)."""
    tok = lx.peek()
    if tok[0] == "[":
        lx.next()
        vals, texts = [], []
        while lx.peek()[0] != "]":
            v, t = _parse_default(lx, typ[:-2] if typ.endswith("[]") else typ)
            vals.append(v)
            texts.append(t)
            if not lx.nextif(","):
                break
        lx.expect("]")
        return vals, "[" + ", ".join(texts) + "]"
    lx.next()
    if tok[0] == "number":
        text = tok[1]
        if typ.rstrip("?").startswith(("float", "SymFloat", "complex")) or any(c in text for c in ".e"):
            return float(text), text
        return int(text), text
    if tok[0] == "string":
        return tok[1][1:-1], tok[1]
    if tok[0] == "ident":
        if tok[1] in ("True", "False"):
            return tok[1] == "True", tok[1]
        if tok[1] == "None":
            return None, "None"
        return tok[1], tok[1]
    lx.error(f"expected a default value but found '{tok[0]}'", tok)


def _default_text(v):
    """A default as PyTorch's schema printer writes it: floats with 17 significant digits and a point."""
    if isinstance(v, float):
        t = f"{v:.17g}"
        return t if any(c in t for c in ".en") else t + "."
    return str(v)


def _parse_type(lx):
    """``Tensor(a!)?[]`` -> (type text without the alias annotation, AliasInfo or None, N or None)."""
    tok = lx.peek()
    if tok[0] == "(":  # a tuple type
        lx.error(f"expected ident but found '{tok[0]}'")
    if tok[0] != "ident":
        lx.error(f"expected ident but found '{tok[0]}'")
    lx.next()
    name = tok[1]
    if name not in BASE_TYPES:
        pos = tok[2]
        raise RuntimeError(
            "\nunknown type specifier. Common valid schema types include Tensor, SymInt, int, float, bool, Scalar; "
            "for a full list, please see https://github.com/pytorch/pytorch/blob/main/aten/src/ATen/native/README.md"
            f"#func :\n{lx.text}\n{' ' * pos}{'~' * len(name)} <--- HERE\n")
    alias = None
    if lx.peek()[0] == "(":
        lx.next()
        sets = [lx.expect("ident")[1]]
        while lx.nextif("|"):
            sets.append(lx.expect("ident")[1])
        write = bool(lx.nextif("!"))
        lx.expect(")")
        alias = AliasInfo(sets, write)
    text, N = name, None
    while lx.peek()[0] in ("?", "["):
        if lx.nextif("?"):
            text += "?"
        else:
            lx.next()
            num = lx.nextif("number")
            if num is not None:
                N = int(num[1])
            lx.expect("]")
            text += "[]"
    return text, alias, N


def _parse_args(lx):
    args, kwarg_only = [], False
    lx.expect("(")
    if lx.nextif(")"):
        return args
    while True:
        if lx.nextif("*"):
            kwarg_only = True
        else:
            typ, alias, N = _parse_type(lx)
            name = lx.expect("ident")[1]
            default, text, has = None, None, False
            if lx.nextif("="):
                default, text = _parse_default(lx, typ)
                has = True
                if N is not None and isinstance(default, (int, float)) and not isinstance(default, bool):
                    default = [default] * N  # int[2] k=1 means [1, 1]
                if N is not None and isinstance(default, list) and default and \
                        all(v == default[0] for v in default):
                    text = _default_text(default[0])  # PyTorch prints a uniform fixed-size list as its element
                elif isinstance(default, float):
                    text = _default_text(default)
            args.append(Argument(name, typ, default, has, kwarg_only, alias, N, text))
        if lx.nextif(")"):
            return args
        if not lx.nextif(","):
            lx.error(f"expected ) but found '{lx.peek()[0]}'")


def _parse_returns(lx):
    if lx.peek()[0] == "(":
        lx.next()
        rets = []
        if lx.nextif(")"):
            return rets, True
        if lx.nextif("("):  # ((Tensor)): a tuple of one
            typ, alias, N = _parse_type(lx)
            lx.expect(")")
            lx.expect(")")
            return [Argument("", typ, alias_info=alias, N=N)], True
        while True:
            typ, alias, N = _parse_type(lx)
            name = lx.next()[1] if lx.peek()[0] == "ident" else ""
            rets.append(Argument(name, typ, alias_info=alias, N=N))
            if lx.nextif(")"):
                # (Tensor) is the type Tensor, not a tuple
                return rets, len(rets) != 1 or bool(rets[0].name)
            lx.expect(",")
    typ, alias, N = _parse_type(lx)
    name = lx.next()[1] if lx.peek()[0] == "ident" else ""  # a named single return: -> Tensor out
    return [Argument(name, typ, alias_info=alias, N=N)], False


def parse_schema(text, *, allow_no_name=False):
    """A ``FunctionSchema`` from ``text``, ``name[.overload](args) -> returns`` (the name may carry a namespace,
    ``ns::name``). With ``allow_no_name`` the name may be left out (``(Tensor x) -> Tensor``: custom_op's
    ``schema=``), giving name ''. RuntimeError, with PyTorch's wording and a caret under the offending token, for a
    schema that does not parse or names an unknown type."""
    if not isinstance(text, str):
        raise TypeError(f"schema must be a str, got {type(text).__name__}")
    lx = _Lexer(text)
    name, overload = "", ""
    if not (allow_no_name and lx.peek()[0] == "("):
        name = lx.expect("ident")[1]
        if lx.nextif("::"):
            name += "::" + lx.expect("ident")[1]
        if lx.nextif("."):
            overload = lx.expect("ident")[1]
    args = _parse_args(lx)
    lx.expect("arrow")
    rets, is_tuple = _parse_returns(lx)
    lx.expect("eof")
    return FunctionSchema(name, overload, args, rets, is_tuple)


def parse_op_name(text):
    """``ns::name[.overload]`` (or a full schema's name part) -> (namespace, name, overload)."""
    lx = _Lexer(text)
    ns = lx.expect("ident")[1]
    lx.expect("::")
    name = lx.expect("ident")[1]
    overload = lx.expect("ident")[1] if lx.nextif(".") else ""
    lx.expect("eof")
    return ns, name, overload


# ---- infer_schema ----------------------------------------------------------------------------------------------

def _supported_param_types():
    from ._tensor import Tensor
    from ._dtype import dtype
    from .device import device
    number = typing.Union[int, float, bool]
    rows = [(Tensor, "Tensor", True, True, False), (int, "SymInt", True, False, True),
            (float, "float", True, False, True), (bool, "bool", True, False, True), (str, "str", False, False, False),
            (number, "Scalar", True, False, False), (dtype, "ScalarType", False, False, False),
            (device, "Device", False, False, False)]
    out = {}
    for base, name, as_list, opt_elems, opt_list in rows:
        out[base] = name
        out[typing.Optional[base]] = name + "?"
        seqs = lambda t: (typing.Sequence[t], typing.List[t], GenericAlias(abc.Sequence, (t,)),  # noqa: E731
                          GenericAlias(list, (t,)))
        if as_list:
            for s in seqs(base):
                out[s] = name + "[]"
        if opt_elems:
            for s in seqs(typing.Optional[base]):
                out[s] = name + "?[]"
        if opt_list:
            for s in seqs(base):
                out[typing.Optional[s]] = name + "[]?"
    return out


def _supported_return_types():
    from ._tensor import Tensor
    return {Tensor: "Tensor", typing.List[Tensor]: "Tensor[]", list[Tensor]: "Tensor[]", int: "SymInt",
            float: "float", bool: "bool", typing.Union[int, float, bool]: "Scalar"}


def infer_schema(prototype_function, /, *, mutates_args, op_name=None):
    """The schema of ``prototype_function`` from its type annotations (``torch.library.infer_schema``):
    ``(Tensor x, float a) -> Tensor``, or ``op_name(...) -> ...`` when ``op_name`` is given. ``mutates_args`` (the
    names of the arguments the function writes, or ``"unknown"``: every tensor argument) marks them ``Tensor(aN!)``.

    Parameter types: Tensor, int (``SymInt``), float, bool, str, ``int | float | bool`` (``Scalar``), dtype, device,
    ``Optional[...]`` of those, and lists/sequences of Tensor, int, float, bool, Scalar. Returns: Tensor,
    ``list[Tensor]``, int, float, bool, Scalar, a tuple of these, or None (``()``). ValueError, with PyTorch's
    message, for a missing or unsupported annotation, ``*args``/``**kwargs``/positional-only parameters, a mutated
    non-tensor or unknown name in ``mutates_args``, or an unsupported default value."""
    from ._dtype import dtype
    from .device import device
    sig = inspect.signature(prototype_function)
    g = getattr(prototype_function, "__globals__", {})
    if type(mutates_args) is not str:
        mutates_args = tuple(mutates_args)

    def error(what):
        raise ValueError(f"infer_schema(func): {what} Got func with signature {sig})")

    def resolve(ann):
        if isinstance(ann, str):
            try:
                return eval(ann, g)  # noqa: S307 - an annotation's text, as typing.get_type_hints does
            except NameError as e:
                error(f"Unsupported type annotation {ann}. It is not a type. ({e}). If you are using 'from "
                      "__future__ import annotations', note that annotations are evaluated lazily as strings; make "
                      "sure all types referenced in annotations are importable at module scope, not only inside a "
                      "local function.")
            except Exception as e:
                error(f"Unsupported type annotation {ann}. It is not a type. ({type(e).__name__}: {e})")
        origin = typing.get_origin(ann)
        if origin is not None:
            args = typing.get_args(ann)
            new = tuple(resolve(a) for a in args)
            if new != args:
                if origin is typing.Union:
                    return typing.Union[new]
                return GenericAlias(origin, new)
        return ann

    supported = _supported_param_types()
    params, seen, star = [], set(), False
    for idx, (name, p) in enumerate(sig.parameters.items()):
        if p.kind not in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY):
            error("We do not support positional-only args, varargs, or varkwargs.")
        if p.kind == p.KEYWORD_ONLY and not star:
            params.append("*")
            star = True
        if p.annotation is inspect.Parameter.empty:
            error(f"Parameter {name} must have a type annotation.")
        ann = resolve(p.annotation)
        st = supported.get(ann) if _hashable(ann) else None
        if st is None:
            if typing.get_origin(ann) is tuple or ann is tuple:
                targs = typing.get_args(ann)
                lst = list if not targs else GenericAlias(list, (targs[0],)) \
                    if len(targs) == 1 or len(targs) == 2 and targs[1] is Ellipsis or len(set(targs)) == 1 \
                    else GenericAlias(list, (typing.Union[targs],))
                example = f"For example, {lst}.\n\n" if lst in supported else "\n\n"
                error(f"Parameter {name} has unsupported type {p.annotation}. We do not support Tuple inputs in "
                      f"schema. As a workaround, please try to use List instead. {example}The valid types are: "
                      f"{supported.keys()}.")
            error(f"Parameter {name} has unsupported type {p.annotation}. The valid types are: {supported.keys()}.")
        if type(mutates_args) is str:
            if mutates_args != "unknown":
                raise ValueError("mutates_args must either be a sequence of the names of the arguments that are "
                                 "mutated or the string 'unknown'. ")
            if st.startswith("Tensor"):
                st = f"Tensor(a{idx}!){st[len('Tensor'):]}"
        elif name in mutates_args:
            if not st.startswith("Tensor"):
                error(f"Parameter {name} is in mutable_args but only Tensors or collections of Tensors can be "
                      "mutated")
            st = f"Tensor(a{idx}!){st[len('Tensor'):]}"
        seen.add(name)
        d = p.default
        if d is inspect.Parameter.empty:
            params.append(f"{st} {name}")
            continue
        if d is None or isinstance(d, (int, float, bool)):
            text = str(d)
        elif isinstance(d, (str, device)):
            text = f'"{d}"'
        elif isinstance(d, dtype):
            text = str(d)[len("torch."):] if str(d).startswith("torch.") else d.name
        else:
            error(f"Parameter {name} has an unsupported default value type {type(d)}. Please file an issue on "
                  "GitHub so we can prioritize this.")
        params.append(f"{st} {name}={text}")
    if mutates_args != "unknown":
        missing = set(mutates_args) - seen
        if missing:
            error(f"{missing} in mutates_args were not found in the custom op's signature. mutates_args should "
                  "contain the names of all args that the custom op mutates, or just the string 'unknown' if you "
                  "don't know.")
    ret = _parse_return(resolve(sig.return_annotation), error)
    head = op_name if op_name is not None else ""
    return f"{head}({', '.join(params)}) -> {ret}"


def _hashable(x):
    try:
        hash(x)
        return True
    except TypeError:
        return False


def _parse_return(ann, error):
    if ann is None:
        return "()"
    if ann is inspect.Parameter.empty:
        error("No return type annotation was provided. Please add one.")
    rets = _supported_return_types()
    if typing.get_origin(ann) is not tuple:
        if not _hashable(ann) or ann not in rets:
            error(f"Return has unsupported type {ann}. The valid types are: {rets}.")
        return rets[ann]
    args = typing.get_args(ann)
    for a in args:
        if not _hashable(a) or a not in rets:
            error(f"Return has unsupported type {ann}. The valid types are: {rets}.")
    inner = ", ".join(rets[a] for a in args)
    return f"(({inner}))" if len(args) == 1 else f"({inner})"
