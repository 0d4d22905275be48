"""Builds ``tinytorch._C``, the native kernels of the ``cpu`` backend (``tinytorch/csrc``).

Everything else is declared in ``pyproject.toml``. The extension is optional at run time: if the compiler is
missing or the build fails, ``pip install`` still succeeds and tinytorch runs on its NumPy kernels (it says why
once, at import). The pointwise op codes and loops are generated from ``tinytorch/kernels/formulas.py`` before
the compiler runs (``_generate``). Nothing here uses ``-march=native``: the vectorized loops are compiled once per
instruction set (``csrc/cpu_*.cpp``) and chosen when the module loads, so a wheel built here runs on any x86-64 CPU.
"""
import importlib.util
import os
import sys

import numpy as np
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

CSRC = os.path.join("tinytorch", "csrc")
KERNELS = os.path.join("tinytorch", "kernels")
SOURCES = sorted(os.path.join(CSRC, f) for f in os.listdir(CSRC) if f.endswith(".cpp"))
DEBUG = os.environ.get("TINYTORCH_NATIVE_DEBUG") == "1"  # -O1 -g with AddressSanitizer and bounds checks

flags = ["-std=c++17", "-fvisibility=hidden", "-fno-math-errno", "-fno-trapping-math", "-Wall", "-Wno-unused-function"]
flags += ["-O1", "-g", "-fsanitize=address", "-fno-omit-frame-pointer", "-DTT_BOUNDS_CHECK=1"] if DEBUG else ["-O3"]
link = ["-pthread"] + (["-fsanitize=address"] if DEBUG else [])


def _generate():
    """Write the generated pointwise sources (``tinytorch/kernels/native_gen.py``) into ``tinytorch/csrc``.
    The package is loaded by file path under a private name: tinytorch itself is not importable before it is built,
    and ``tinytorch/kernels`` imports nothing outside itself."""
    here = os.path.dirname(os.path.abspath(__file__))
    pkg_dir = os.path.join(here, KERNELS)
    spec = importlib.util.spec_from_file_location("_tinytorch_kernels_gen", os.path.join(pkg_dir, "__init__.py"),
                                                  submodule_search_locations=[pkg_dir])
    pkg = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = pkg
    try:
        spec.loader.exec_module(pkg)
        gen = importlib.import_module(spec.name + ".native_gen")
        gen.write(os.path.join(here, CSRC))
    finally:
        for name in [n for n in sys.modules if n == spec.name or n.startswith(spec.name + ".")]:
            del sys.modules[name]


class OptionalBuildExt(build_ext):
    """A failed native build leaves the NumPy kernels in charge instead of failing the install."""

    def run(self):
        try:
            _generate()
            super().run()
        except Exception as e:  # noqa: BLE001 - any compiler or linker failure
            self._warn(e)

    def build_extension(self, ext):
        try:
            super().build_extension(ext)
        except Exception as e:  # noqa: BLE001
            self._warn(e)

    @staticmethod
    def _warn(e):
        sys.stderr.write(f"tinytorch: the native CPU kernels were not built ({e}); tinytorch will use NumPy\n")


ext = Extension("tinytorch._C", SOURCES, include_dirs=[CSRC, np.get_include()], language="c++",
                extra_compile_args=flags, extra_link_args=link,
                define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
                depends=[os.path.join(CSRC, f) for f in os.listdir(CSRC) if f.endswith((".h", ".inc"))] +
                [os.path.join(CSRC, "kernels", f) for f in os.listdir(os.path.join(CSRC, "kernels"))] +
                [os.path.join(KERNELS, f) for f in os.listdir(KERNELS) if f.endswith(".py")])

setup(ext_modules=[ext], cmdclass={"build_ext": OptionalBuildExt})
