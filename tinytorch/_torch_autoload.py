"""The ``torch.backends`` entry point: PyTorch calls ``load`` at the end of ``import torch`` to load installed device
extensions (``TORCH_DEVICE_BACKEND_AUTOLOAD=0`` turns it off). It registers tinytorch's device only when asked to,
with ``TINYTORCH_TORCH_AUTOLOAD=1``: registering renames PyTorch's one PrivateUse1 slot and imports tinytorch
(``benchmarks/torch_backend.py --import-time`` measures what that adds to ``import torch``), which a process that
merely has tinytorch installed beside PyTorch should not pay for. A failure warns: it must never break
``import torch``."""
import os


def load():
    if os.environ.get("TINYTORCH_TORCH_AUTOLOAD", "0") != "1":
        return
    try:
        import tinytorch.torch_backend  # noqa: F401  (registers on import)
    except Exception as e:  # noqa: BLE001
        import warnings
        warnings.warn(f"tinytorch could not register its device with PyTorch: {e}")
