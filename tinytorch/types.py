"""``torch.types``: the type aliases PyTorch's signatures are annotated with (``Number``, ``Device``, ``_size`` ...),
for libraries that annotate their own functions with them. tinytorch has no symbolic sizes, so the ``...LikeType``
aliases are the plain Python types."""
import os
from typing import IO, Sequence, Union

from ._dtype import dtype as _dtype
from ._tensor import Size, Tensor
from ._layout import layout as _layout  # noqa: F401
from .device import device as _device
from .storage import TypedStorage, UntypedStorage

__all__ = ["Number", "Device", "FileLike", "Storage"]

_TensorOrTensors = Union[Tensor, Sequence[Tensor]]
_TensorOrOptionalTensors = Union[Tensor, Sequence[Union[Tensor, None]]]
_size = Union[Size, list, tuple]
_symsize = Union[Size, Sequence[int]]
_dispatchkey = str
_int = int
_float = float
_bool = bool
_complex = complex
_str = str
IntLikeType = int
FloatLikeType = float
BoolLikeType = bool
py_sym_types = ()
Number = Union[int, float, bool]
_Number = (int, float, bool)
FileLike = Union[str, os.PathLike, IO[bytes]]
Device = Union[_device, str, int, None]
Storage = Union[TypedStorage, UntypedStorage]
