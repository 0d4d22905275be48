from ..modules.module import Module


class DataParallel(Module):
    """``torch.nn.DataParallel`` on a machine without CUDA devices: torch then keeps ``device_ids`` empty and
    calls the wrapped module directly, and so does tinytorch. The wrapped module is ``.module``, so parameter
    and state_dict names get the ``module.`` prefix, as in torch (scripts that save and load wrapped models
    keep working). ``device_ids`` other than None or [] raise ValueError: tinytorch has no CUDA devices.

    Args:
        module (Module): the module wrapped.
        device_ids (list, optional): CUDA devices to replicate onto; only None or [] here.
        output_device (optional): where torch gathers the outputs (kept).
        dim (int): the dim torch splits the batch along (kept).

    Shape:
        - Input and output: those of the wrapped module.

    Examples::

        >>> model = nn.DataParallel(nn.Linear(4, 2))
        >>> model(torch.randn(3, 4)).shape
        torch.Size([3, 2])
        >>> list(model.state_dict())
        ['module.weight', 'module.bias']
    """

    def __init__(self, module, device_ids=None, output_device=None, dim=0):
        super().__init__()
        if device_ids:
            raise ValueError(f"DataParallel: device_ids={list(device_ids)} name CUDA devices, which tinytorch does "
                             f"not have")
        self.module = module
        self.device_ids = []
        self.output_device = output_device
        self.dim = dim

    def forward(self, *inputs, **kwargs):
        return self.module(*inputs, **kwargs)
