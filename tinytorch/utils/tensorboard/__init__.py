"""``tinytorch.utils.tensorboard``: ``SummaryWriter`` writing TensorBoard event files through the ``tensorboard``
package's own protobufs and event-file writer (``torch.utils.tensorboard``).

``tensorboard`` is an optional dependency (the ``tensorboard`` extra): importing this package without it raises
ImportError naming it, and with a version below 1.15 ImportError as PyTorch's does.
"""
try:
    import tensorboard
except ImportError as e:
    raise ImportError("tinytorch.utils.tensorboard needs the 'tensorboard' package: pip install tensorboard "
                      "(or tinytorch[tensorboard])") from e


def _version_tuple(v):
    out = []
    for part in v.split(".")[:2]:
        digits = "".join(ch for ch in part if ch.isdigit())
        out.append(int(digits or 0))
    return tuple(out)


if not hasattr(tensorboard, "__version__") or _version_tuple(tensorboard.__version__) < (1, 15):
    raise ImportError("TensorBoard logging requires TensorBoard version 1.15 or above")
del tensorboard

from tensorboard.summary.writer.record_writer import RecordWriter  # noqa: E402

from .writer import FileWriter, SummaryWriter  # noqa: E402

__all__ = ["FileWriter", "RecordWriter", "SummaryWriter"]
