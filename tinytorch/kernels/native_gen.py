"""The generated sources of the native pointwise kernels (``tinytorch._C``), written by ``setup.py`` at build time.

``csrc/pointwise_ops_generated.h`` (namespace ``tt``): the ``BinaryOp``/``UnaryOp`` enums, one code per ``cpp``
formula in declaration order, their names (exported as ``_C.BINARY_OPS``/``_C.UNARY_OPS``) and
``is_comparison``. ``csrc/kernels/formulas_generated.inc`` (inside each CPU capability's namespace, after
``vec_math.h``): one inline function template per formula and the ``case`` lines of the ``binary``/``unary``
switches of ``kernels/pointwise.inc``, which keep the loops (contiguous / scalar / strided paths, float16 and
bfloat16 through float).

Both files are build outputs (``.gitignore``); ``tests/test_kernel_formulas.py`` checks that the built ones equal
what this module writes. Run as a script (``python tinytorch/kernels/native_gen.py``) to write them by hand.
"""
import os

from .formulas import native
from .render import CppRenderer

HEADER = os.path.join("pointwise_ops_generated.h")
INC = os.path.join("kernels", "formulas_generated.inc")
_BANNER = "// Generated from tinytorch/kernels/formulas.py by tinytorch/kernels/native_gen.py: do not edit.\n"


def _code(prefix, f):
    return f"{prefix}_{f.name.upper()}"


def ops_header():
    """The text of ``csrc/pointwise_ops_generated.h``."""
    binary, unary = native()
    lines = [_BANNER.rstrip(), "#pragma once", "", "namespace tt {", ""]
    for enum, prefix, fs in (("BinaryOp", "BIN", binary), ("UnaryOp", "UN", unary)):
        lines.append(f"enum {enum} : int {{")
        lines += [f"  {_code(prefix, f)}," for f in fs]
        lines += [f"  {prefix}_COUNT", "};"]
        names = ", ".join(f'"{f.name}"' for f in fs)
        lines += [f"static const char* const k{enum}Names[{prefix}_COUNT] = {{{names}}};", ""]
    cmp = [f for f in binary if f.out == "bool"]
    lines.append("// a bool (one byte) output")
    lines.append("inline bool is_comparison(int op) {")
    lines.append("  return " + " || ".join(f"op == {_code('BIN', f)}" for f in cmp) + ";" if cmp else "  return false;")
    lines += ["}", "", "}  // namespace tt", ""]
    return "\n".join(lines)


def _function(r, f):
    params = [f"T {p}" for p in f.params] + [f"{'bool' if k == 'bool' else 'T'} attr_{a}"
                                              for a, k in zip(f.attrs, f.attr_kinds)]
    stmts, e = r.render(f, attrs={a: f"attr_{a}" for a in f.attrs})
    ret = "bool" if f.out == "bool" else "T"
    body = "".join(f"  {s}\n" for s in stmts)
    return (f"template <typename T>\nstatic inline TT_INLINE {ret} tt_f_{f.name}({', '.join(params)}) {{\n"
            f"{body}  return {e};\n}}\n")


def _case(prefix, f):
    loop = {1: "unary_loop", 2: "compare_loop" if f.out == "bool" else "binary_loop"}[f.arity]
    ps = ", ".join(f"T {p}" for p in f.params)
    # attributes: the kernel's scalars, read once before the loop
    pre = "".join(f"const {'bool' if k == 'bool' else 'T'} attr_{a} = "
                  f"{f'sc[{i}] != 0' if k == 'bool' else f'static_cast<T>(sc[{i}])'}; "
                  for i, (a, k) in enumerate(zip(f.attrs, f.attr_kinds)))
    args = ", ".join(list(f.params) + [f"attr_{a}" for a in f.attrs])
    cap = "[=]" if f.attrs else "[]"
    return (f"  case tt::{_code(prefix, f)}: {{ {pre}{loop}<T>(d, s, n, {cap}({ps}) {{ "
            f"return tt_f_{f.name}<T>({args}); }}); break; }}")


def formulas_inc():
    """The text of ``csrc/kernels/formulas_generated.inc``."""
    binary, unary = native()
    r = CppRenderer()
    out = [_BANNER]
    for f in binary + unary:
        out.append(_function(r, f))
    for macro, prefix, fs in (("TT_BINARY_CASES", "BIN", binary), ("TT_UNARY_CASES", "UN", unary)):
        out.append(f"// the cases of the {prefix.lower()} switch: d, s, n, sc in scope, T the element type")
        out.append(f"#define {macro}(T) \\\n" + " \\\n".join(_case(prefix, f) for f in fs))
        out.append("")
    return "\n".join(out)


def write(csrc):
    """Write the generated files under ``csrc`` (``tinytorch/csrc``); a file whose text is unchanged is left alone
    (its timestamp would rebuild the extension). Returns the paths written."""
    written = []
    for rel, text in ((HEADER, ops_header()), (INC, formulas_inc())):
        path = os.path.join(csrc, rel)
        try:
            with open(path, encoding="utf-8") as fh:
                if fh.read() == text:
                    continue
        except OSError:
            pass
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(text)
        written.append(path)
    return written


if __name__ == "__main__":
    import sys
    sys.stdout.write("".join(f"wrote {p}\n" for p in write(os.path.join(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__))), "csrc"))))
