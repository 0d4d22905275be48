"""``torch.save`` / ``torch.load`` of device tensors, through PyTorch's public hook for devices
(``torch.serialization.register_package``): a storage saved from the device is tagged with its device, and
``torch.load(..., map_location="opencl")`` (or a file saved on the device) gets its storages on the device by an
empty device tensor and a copy, the ops every registration has. PyTorch's own PrivateUse1 path
(``UntypedStorage.to(device)``) needs a C++ allocator, which the pure-Python registration lacks."""
import torch

from ._bridge import State, check_index


def _tag(storage):
    if storage.device.type == State.name:
        return f"{State.name}:{storage.device.index or 0}"
    return None


def _deserialize(storage, location):
    if not (location == State.name or location.startswith(State.name + ":")):
        return None
    device = torch.device(location)
    check_index(device.index)
    host = torch.empty(0, dtype=torch.uint8).set_(storage.untyped() if hasattr(storage, "untyped") else storage)
    dev = torch.empty(storage.nbytes(), dtype=torch.uint8, device=device)
    dev.copy_(host)
    return dev.untyped_storage()


def register():
    # before PyTorch's CUDA (20) and PrivateUse1 (23) entries; returns None for every other location
    torch.serialization.register_package(19, _tag, _deserialize)
