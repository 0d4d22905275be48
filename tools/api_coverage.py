"""How much of PyTorch's public API tinytorch has, per namespace.

    python tools/api_coverage.py            # the table (markdown)
    python tools/api_coverage.py --missing torch.nn   # also list the names tinytorch lacks there

Public names are those of the installed torch (the test extra pins 2.13): ``dir()`` entries not starting
with an underscore, minus submodules and helpers re-exported from outside torch (typing, functools ...); for
``torch.Tensor`` its attributes. A name counts as present when
``getattr`` on the matching tinytorch object finds it.
"""
import argparse
import inspect
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

NAMESPACES = ["torch", "torch.Tensor", "torch.nn", "torch.nn.functional", "torch.optim", "torch.optim.lr_scheduler",
              "torch.utils.data"]


def _resolve(root, path):
    obj = root
    for part in path.split(".")[1:]:
        obj = getattr(obj, part)
    return obj


def public_names(obj):
    names = set()
    for n in dir(obj):
        if n.startswith("_"):
            continue
        try:
            v = getattr(obj, n)
        except Exception:
            continue
        if inspect.ismodule(v) or type(v).__module__ in ("typing", "typing_extensions", "__future__"):
            continue
        mod = getattr(v, "__module__", None) if (inspect.isclass(v) or inspect.isfunction(v)) else None
        if mod is not None and not mod.startswith("torch"):
            continue  # re-exported helpers (functools.partial, typing.cast, collections.Counter ...)
        names.add(n)
    return names


def coverage():
    import torch
    import tinytorch
    rows = []
    for ns in NAMESPACES:
        ref = _resolve(torch, ns)
        try:
            ours = _resolve(tinytorch, ns.replace("torch", "tinytorch", 1))
        except AttributeError:
            ours = None
        names = public_names(ref)
        have = {n for n in names if ours is not None and hasattr(ours, n)}
        rows.append((ns, len(names), len(have), sorted(names - have)))
    return rows, torch.__version__


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--missing", action="append", default=[], help="list missing names of this namespace")
    args = p.parse_args()
    rows, version = coverage()
    print(f"tinytorch coverage of torch {version} public names\n")
    print("| namespace | torch names | in tinytorch | coverage |")
    print("|---|---:|---:|---:|")
    tot_n = tot_h = 0
    for ns, n, h, _ in rows:
        tot_n, tot_h = tot_n + n, tot_h + h
        print(f"| `{ns}` | {n} | {h} | {100 * h / max(n, 1):.1f}% |")
    print(f"| all | {tot_n} | {tot_h} | {100 * tot_h / max(tot_n, 1):.1f}% |")
    for ns, _, _, missing in rows:
        if ns in args.missing:
            print(f"\nmissing in {ns} ({len(missing)}):\n" + ", ".join(missing))


if __name__ == "__main__":
    main()
