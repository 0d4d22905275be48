"""``python -m tinytorch.run script.py [args...]``: run an unmodified PyTorch script on tinytorch.

The script's ``import torch`` / ``import torch.nn as nn`` / ``from torch.utils.data import ...`` resolve to
tinytorch (see :mod:`tinytorch.compat`); ``sys.argv`` and ``sys.path[0]`` are what ``python script.py`` gives.
"""
import os
import runpy
import sys


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__.strip())
        return 0 if argv else 2
    from . import compat
    compat.install()
    script = argv[0]
    if not os.path.exists(script):
        print(f"tinytorch.run: can't open file '{script}': No such file", file=sys.stderr)
        return 2
    sys.argv = argv
    sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
    runpy.run_path(script, run_name="__main__")
    return 0


if __name__ == "__main__":
    sys.exit(main())
