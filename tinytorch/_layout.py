"""``torch.layout``: how a tensor's elements are stored. ``strided`` (a Storage viewed through shape and strides),
``sparse_coo`` (coordinate indices plus values) and ``sparse_csr`` (compressed row indices, column indices and
values); the sparse layouts' tensors live in ``tinytorch.sparse``."""


class layout:
    """A tensor layout (``torch.layout``): one interned object per layout, compared by identity, printed as
    ``torch.strided`` like PyTorch's. Not constructible from Python (TypeError, as PyTorch)."""

    __slots__ = ("_name",)

    def __new__(cls, *args, **kwargs):
        raise TypeError("cannot create 'torch.layout' instances")

    @classmethod
    def _make(cls, name):
        obj = object.__new__(cls)
        obj._name = name
        return obj

    def __repr__(self):
        return "torch." + self._name

    def __reduce__(self):
        return self._name  # pickled by name: the module attribute of that name, so identity survives


layout.__module__ = "tinytorch"  # pickled as tinytorch.<name>
strided = layout._make("strided")
sparse_coo = layout._make("sparse_coo")
sparse_csr = layout._make("sparse_csr")
