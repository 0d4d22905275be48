"""Device backends (``base.py``: the interface; ``cpu/``: ``cpu``, NumPy; ``opencl/``; ``meta.py``), and the
``torch.backends`` switch modules that scripts set (``cudnn``, ``cuda``, ``mps``, ``mkldnn``): tinytorch has
none of those libraries, so they report unavailable and their flags are recorded without effect, as on a
CPU-only PyTorch build."""
from . import cuda, cudnn, mkldnn, mps, quantized  # noqa: F401
