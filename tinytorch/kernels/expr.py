"""A tiny expression IR for elementwise formulas: ``Node(op, args)``, dtype-free, built by Python operators.

A formula is a Python function of its operands (``Node('arg', (i,))``) that returns a ``Node``::

    lambda g, y: g * (1 - y) * y

Python numbers become ``const`` nodes and are never folded, so ``3 * kk * x`` keeps the two roundings of
``T(3) * kk`` then ``* x`` that a C++ kernel written by hand has. ``attr(name)`` stands for a number read from the
op's attributes at run time (``threshold``, ``alpha``, clamp's ``min``/``max``); ``attr(name, bool)`` for a flag.

``==`` and ``!=`` are not overloaded (a ``Node`` stays hashable and comparable by identity): write ``eq(a, b)`` and
``ne(a, b)``. The other comparisons are operators and give a bool-valued node.

The ops (each renderer in ``render.py`` has one entry per op):
  leaves     arg (operand index), const (a Python number), attr (name, 'T' or 'bool');
  arithmetic add sub mul div neg;
  compare    lt le gt ge eq ne (bool);
  select     where (cond, a, b);
  bool       isnan isinf;
  functions  exp log sqrt rsqrt tanh erf sigmoid fabs, and the libm calls of ``CALLS``.
"""

# libm functions a formula may call by name (``call``); a renderer writes them with its language's spelling
CALLS = ("exp2", "expm1", "log2", "log10", "log1p", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh",
         "erfinv")


class Node:
    """One operation of a formula: ``op`` (a name of the module docstring's list) and ``args`` (child nodes, or
    the leaf's payload)."""

    __slots__ = ("op", "args")

    def __init__(self, op, args):
        self.op = op
        self.args = tuple(args)

    def __repr__(self):
        if self.op in ("arg", "const", "attr"):
            return f"{self.op}({self.args[0]!r})"
        return f"{self.op}({', '.join(map(repr, self.args))})"

    # arithmetic keeps the operand order of the source: sub and div are not commutative, and the renderers write
    # each node as it stands
    def __add__(self, o):
        return Node("add", (self, lift(o)))

    def __radd__(self, o):
        return Node("add", (lift(o), self))

    def __sub__(self, o):
        return Node("sub", (self, lift(o)))

    def __rsub__(self, o):
        return Node("sub", (lift(o), self))

    def __mul__(self, o):
        return Node("mul", (self, lift(o)))

    def __rmul__(self, o):
        return Node("mul", (lift(o), self))

    def __truediv__(self, o):
        return Node("div", (self, lift(o)))

    def __rtruediv__(self, o):
        return Node("div", (lift(o), self))

    def __neg__(self):
        return Node("neg", (self,))

    def __lt__(self, o):
        return Node("lt", (self, lift(o)))

    def __le__(self, o):
        return Node("le", (self, lift(o)))

    def __gt__(self, o):
        return Node("gt", (self, lift(o)))

    def __ge__(self, o):
        return Node("ge", (self, lift(o)))

    def __bool__(self):
        # `if x > 0:` in a formula would pick a branch at declaration time; where() is the spelling
        raise TypeError("a formula node has no truth value: use where(cond, a, b)")


def lift(v):
    """``v`` as a node: a node as is, a Python number as a ``const``."""
    if isinstance(v, Node):
        return v
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise TypeError(f"a formula takes nodes and numbers, not {type(v).__name__}")
    return Node("const", (v,))


def const(v):
    """A numeric constant node (rounded to the kernel's type where it is used, never folded with another)."""
    return lift(v)


def arg(i):
    """Operand ``i`` of the formula."""
    return Node("arg", (i,))


def attr(name, kind="T"):
    """An attribute of the op read at run time: a number of the kernel's type (``kind`` 'T') or a flag (``bool``)."""
    return Node("attr", (name, "bool" if kind in (bool, "bool") else "T"))


def where(cond, a, b):
    """``a`` where ``cond`` holds, else ``b``."""
    return Node("where", (lift(cond), lift(a), lift(b)))


def eq(a, b):
    return Node("eq", (lift(a), lift(b)))


def ne(a, b):
    return Node("ne", (lift(a), lift(b)))


def _fn(op):
    def f(x):
        return Node(op, (lift(x),))
    f.__name__ = f.__qualname__ = op
    f.__doc__ = f"``{op}(x)``, elementwise."
    return f


exp, log, sqrt, rsqrt, tanh, erf, sigmoid, fabs, isnan, isinf = (_fn(o) for o in (
    "exp", "log", "sqrt", "rsqrt", "tanh", "erf", "sigmoid", "fabs", "isnan", "isinf"))


def call(fn, *xs):
    """The libm function ``fn`` (one of ``CALLS``) of ``xs``."""
    if fn not in CALLS:
        raise ValueError(f"unknown function {fn}")
    return Node("call", (fn,) + tuple(lift(x) for x in xs))


def maximum(a, b):
    """The larger of ``a`` and ``b``, NaN when either is NaN (``torch.maximum``)."""
    a, b = lift(a), lift(b)
    return where(isnan(a), a, where(isnan(b), b, where(a > b, a, b)))


def minimum(a, b):
    """The smaller of ``a`` and ``b``, NaN when either is NaN (``torch.minimum``)."""
    a, b = lift(a), lift(b)
    return where(isnan(a), a, where(isnan(b), b, where(a < b, a, b)))


def walk(root):
    """Every node under ``root`` once, children before parents."""
    seen, out = set(), []

    def visit(n):
        if id(n) in seen:
            return
        seen.add(id(n))
        if n.op not in ("arg", "const", "attr"):
            for c in n.args:
                if isinstance(c, Node):
                    visit(c)
        out.append(n)
    visit(root)
    return out
