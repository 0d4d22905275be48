"""``torch.version``: the PyTorch version whose API tinytorch follows, as libraries read it.

Policy: tinytorch implements the API of PyTorch 2.13, so the version a PyTorch program sees under the import swap
(``torch.__version__``, ``torch.version.__version__``, ``importlib.metadata.version("torch")``) is
``2.13.0+tinytorch.<tinytorch's version>``: libraries that check for "PyTorch >= 2.6" take their current code paths,
and the local part says what is really running. ``tinytorch.__version__`` is tinytorch's own release.

``cuda`` and ``hip`` say which toolkit the framework was *built* against; tinytorch is built against none (its cuda
device compiles its kernels at run time with NVRTC), so both are None, as in a CPU build of PyTorch.
"""
from typing import Optional

__all__ = ["__version__", "debug", "cuda", "git_version", "hip", "rocm", "xpu"]

TINYTORCH_VERSION = "0.1.0"
TORCH_API_VERSION = "2.13.0"

__version__ = f"{TORCH_API_VERSION}+tinytorch.{TINYTORCH_VERSION}"
debug = False
cuda: Optional[str] = None
git_version = "Unknown"  # what a PyTorch built outside a git checkout reports
hip: Optional[str] = None
rocm: Optional[str] = None
xpu: Optional[str] = None
