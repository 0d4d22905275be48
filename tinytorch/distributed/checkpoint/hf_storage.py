"""``torch.distributed.checkpoint.hf_storage``: DCP's Hugging Face safetensors reader and writer. tinytorch has no
distributed checkpointing, so constructing either raises NotImplementedError (the classes exist for the libraries
that import them when ``torch.distributed`` is available)."""
from . import _UNSUPPORTED

__all__ = ["HuggingFaceStorageReader", "HuggingFaceStorageWriter"]


class HuggingFaceStorageWriter:
    """DCP storage writer of safetensors files: NotImplementedError when constructed."""

    def __new__(cls, *args, **kwargs):
        raise NotImplementedError(_UNSUPPORTED.format(what="HuggingFaceStorageWriter (distributed checkpoint)"))


class HuggingFaceStorageReader:
    """DCP storage reader of safetensors files: NotImplementedError when constructed."""

    def __new__(cls, *args, **kwargs):
        raise NotImplementedError(_UNSUPPORTED.format(what="HuggingFaceStorageReader (distributed checkpoint)"))
