"""One source per elementwise kernel formula, rendered into every compiled target.

``expr.py`` is a tiny expression IR, ``formulas.py`` declares each formula once, ``render.py`` writes a formula as
C++ (the native kernels of ``tinytorch/csrc`` and the fused kernels of ``compiler/codegen_cpp.py``), OpenCL C
(``backends/opencl/elementwise.py``, ``compiler/codegen_opencl.py``) or CUDA C. ``native.py`` writes the generated
headers of the native build (``setup.py`` runs it).

Nothing in this package imports tinytorch or NumPy: ``setup.py`` loads it by file path, before tinytorch is built.
The NumPy kernel table (``backends/cpu/pointwise.py``) stays the hand-written reference the renderings are tested
against.
"""
