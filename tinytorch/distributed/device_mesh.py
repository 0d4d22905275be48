"""``torch.distributed.device_mesh``: an n-dimensional arrangement of the ranks of the default process group, with
one process group per mesh dimension (the ranks that differ only in that coordinate).

``DeviceMesh(device_type, mesh)`` takes the array of global ranks; ``init_device_mesh(device_type, shape)`` lays
ranks 0..n-1 out in row-major order. Both initialize the default process group when it is not (an MPI world, see
:mod:`tinytorch.distributed`) and create the per-dimension groups at once, collectively: every rank of the world
must build the same meshes in the same order, as in PyTorch. A mesh sliced by dimension names (``mesh["tp"]``)
reuses its parent's groups. The ranks are kept as a NumPy array ``full`` of shape ``(copies, *shape)``: the
submeshes of one slicing side by side, so that ``mesh`` is the copy holding this rank. Source: PyTorch's
``torch/distributed/device_mesh.py``.
"""
import numpy as np

__all__ = ["init_device_mesh", "DeviceMesh"]

_mesh_stack = []  # meshes entered with ``with mesh:``


def _dist():
    from .. import distributed
    return distributed


def _split_group(dist, lines, me):
    """The process group of the line (a list of global ranks) holding global rank ``me``, created collectively
    over the world (``split_group``); None when ``me`` is on no line. A line equal to the whole world in order
    is the default group itself, as PyTorch reuses it."""
    lines = [[int(r) for r in line] for line in lines]
    covered = {r for line in lines for r in line}
    # split_group wants every member of the world on some line: the ranks on no line get one-rank lines
    rest = [[r] for r in range(dist.get_world_size()) if r not in covered]
    pg = dist.split_group(split_ranks=lines + rest)
    return pg if any(me in line for line in lines) else None


class DeviceMesh:
    """A mesh of the default group's ranks (``torch.distributed.device_mesh.DeviceMesh``).

    ``mesh``: an integer array or tensor of distinct global ranks (any number of dimensions);
    ``mesh_dim_names``: optional names of its dimensions. Initializes the default process group when needed
    (``init_process_group()``), then creates one process group per mesh dimension; every rank of the world must
    construct the mesh. RuntimeError when the mesh holds more ranks than the world; ValueError for a rank
    outside the world or a repeated rank; TypeError without ``mesh``. ``device_type`` (``"cpu"``, ``"cuda"``, ...)
    is where DTensors on this mesh keep their local tensors.
    """

    def __init__(self, device_type, mesh=None, *, mesh_dim_names=None, backend_override=None, _init_backend=True,
                 _rank=None, _full=None, _groups=None, _root_mesh=None, _layout_strides=None):
        if _full is None:
            if mesh is None:
                raise TypeError("The mesh argument is required except for PRIVATE USAGE ONLY!")
            from .._tensor import Tensor
            arr = mesh.detach().cpu().numpy() if isinstance(mesh, Tensor) else np.asarray(mesh)
            if arr.dtype.kind not in "iub":
                raise TypeError(f"DeviceMesh: mesh must hold integer ranks, got {arr.dtype}")
            arr = arr.astype(np.int64)
            if len(np.unique(arr)) != arr.size:
                raise AssertionError("Please use a non-overlapping layout when creating a DeviceMesh.")
            _full = arr.reshape((1,) + arr.shape)
        self._device_type = device_type
        self._full = _full
        # PyTorch reports the layout's strides: row-major over the root mesh, kept by slicing
        self._layout_strides = tuple(_layout_strides) if _layout_strides is not None else \
            tuple(int(np.prod(_full.shape[i + 2:], dtype=np.int64)) for i in range(_full.ndim - 1))
        self._mesh_dim_names = tuple(mesh_dim_names) if mesh_dim_names else None
        if self._mesh_dim_names is not None and len(self._mesh_dim_names) != self._full.ndim - 1:
            raise RuntimeError(f"mesh_dim_names {self._mesh_dim_names} must name each of the mesh's "
                               f"{self._full.ndim - 1} dimensions")
        self._root_mesh = _root_mesh
        self._flatten_mapping = {}
        dist = _dist()
        if _groups is None and _init_backend:
            if not dist.is_initialized():
                dist.init_process_group()
            world = dist.get_world_size()
            if self._full.size > world:
                raise RuntimeError(f"Mesh should not be bigger than default world size {world}, but found "
                                   f"{self._full.size} ranks!")
            if self._full.size and (self._full.min() < 0 or self._full.max() >= world):
                raise ValueError(f"DeviceMesh: ranks must lie in [0, {world - 1}], got {self._full.tolist()}")
            self._rank = dist.get_rank() if _rank is None else int(_rank)
            _groups = [self._make_group(d) for d in range(self.ndim)]
        else:
            # a slice (its parent's groups), or _init_backend=False: a layout only, no process groups
            self._rank = dist.get_rank() if _rank is None else int(_rank)
            _groups = _groups or []
        self._groups = _groups
        self._coordinate_on_dim = self._coordinate()

    # ---- layout --------------------------------------------------------------------------------------------------
    def _lines(self, dim):
        """Every group of mesh dimension ``dim``: the lists of ranks that differ only in coordinate ``dim``, in
        every copy of the mesh."""
        moved = np.moveaxis(self._full, dim + 1, -1)
        return [list(map(int, line)) for line in moved.reshape(-1, self._full.shape[dim + 1])]

    def _make_group(self, dim):
        return _split_group(_dist(), self._lines(dim), self._rank)

    def _my_copy(self):
        """The copy of the mesh (an ndarray) holding this rank; the only one when there is one; None otherwise."""
        if self._full.shape[0] == 1:
            return self._full[0]
        hit = np.nonzero((self._full == self._rank).reshape(self._full.shape[0], -1).any(axis=1))[0]
        return self._full[hit[0]] if hit.size else None

    def _coordinate(self):
        copy = self._my_copy()
        if copy is None:
            return None
        hit = np.argwhere(copy == self._rank)
        return tuple(int(c) for c in hit[0]) if hit.size else None

    @property
    def device_type(self):
        """The device type (``"cpu"``, ``"cuda"``, ...) given at construction."""
        return self._device_type

    @property
    def mesh(self):
        """The global ranks of the mesh as an int32 tensor (for a sliced mesh: the slice holding this rank).
        RuntimeError for a sliced mesh that does not hold this rank."""
        from .._ops.creation import from_numpy
        copy = self._my_copy()
        if copy is None:
            raise RuntimeError("In order to get the mesh Tensor of a DeviceMesh it needs to either have all its "
                               "original dimensions (e.g., no slicing) or it needs to contain the local rank")
        return from_numpy(np.ascontiguousarray(copy, dtype=np.int32))

    @property
    def mesh_dim_names(self):
        """The dimension names (a tuple), or None."""
        return self._mesh_dim_names

    @property
    def ndim(self):
        """The number of mesh dimensions."""
        return self._full.ndim - 1

    @property
    def shape(self):
        """The mesh's shape (a tuple of ints)."""
        return tuple(int(s) for s in self._full.shape[1:])

    def size(self, mesh_dim=None):
        """The number of ranks in the mesh, or along mesh dimension ``mesh_dim``."""
        if mesh_dim is None:
            return int(np.prod(self.shape, dtype=np.int64))
        return self.shape[mesh_dim]

    def get_rank(self):
        """This process's global rank."""
        return _dist().get_rank()

    def get_coordinate(self):
        """This rank's index along every mesh dimension (a tuple), or None when the mesh does not hold it."""
        return self._coordinate_on_dim

    def _is_current_rank_part_of_mesh(self):
        return self._coordinate_on_dim is not None

    def _sym_get_coordinate(self, index):
        if self._coordinate_on_dim is None:
            raise AssertionError
        return self._coordinate_on_dim[index]

    def _dim_index(self, mesh_dim):
        if isinstance(mesh_dim, str):
            if not self._mesh_dim_names:
                raise KeyError("No `mesh_dim_names` found.")
            if mesh_dim not in self._mesh_dim_names:
                raise KeyError(f"Mesh dimension '{mesh_dim}' does not exist.",
                               f"Available mesh dimensions are: mesh_dim_names={self._mesh_dim_names}")
            return self._mesh_dim_names.index(mesh_dim)
        if not isinstance(mesh_dim, int) or isinstance(mesh_dim, bool):
            raise AssertionError(f"mesh_dim must be an int, got {type(mesh_dim)}")
        if not -self.ndim <= mesh_dim < self.ndim:
            raise IndexError(f"mesh_dim {mesh_dim} is out of range for a {self.ndim}-d DeviceMesh")
        return mesh_dim % self.ndim

    def get_group(self, mesh_dim=None):
        """The process group of mesh dimension ``mesh_dim`` (an index or a name) holding this rank; for a 1-d
        mesh ``mesh_dim`` may be omitted. RuntimeError when omitted on an n-d mesh or when the groups were not
        created; KeyError for an unknown name. A rank outside the mesh gets ``GroupMember.NON_GROUP_MEMBER``."""
        if not self._groups and self.ndim:
            raise RuntimeError("DeviceMesh process groups not initialized!")
        if self.ndim > 1 and mesh_dim is None:
            raise RuntimeError(f"Found the DeviceMesh have {self.ndim} dimensions",
                               "Optional kwarg `mesh_dim` needs to be specified when device_mesh.ndim > 1.",
                               "If you want to get the list of all the ProcessGroups in the DeviceMesh,"
                               "please use `get_all_groups()` instead.")
        flat = self._get_root_mesh()._flatten_mapping.get(mesh_dim) if isinstance(mesh_dim, str) else None
        if flat is not None and not (self._mesh_dim_names and mesh_dim in self._mesh_dim_names):
            return flat.get_group()
        pg = self._groups[0 if mesh_dim is None else self._dim_index(mesh_dim)]
        return _dist().GroupMember.NON_GROUP_MEMBER if pg is None else pg

    def get_all_groups(self):
        """The process groups of every mesh dimension."""
        return [self.get_group(i) for i in range(self.ndim)]

    def get_local_rank(self, mesh_dim=None):
        """This rank's coordinate along ``mesh_dim`` (its rank in that dimension's group); ``mesh_dim`` may be
        omitted on a 1-d mesh (RuntimeError otherwise)."""
        if self.ndim > 1 and mesh_dim is None:
            raise RuntimeError(f"Found the DeviceMesh have {self.ndim} dimensions",
                               "Optional kwarg `mesh_dim` needs to be specified when device_mesh.ndim > 1.")
        return _dist().get_rank(self.get_group(0 if mesh_dim is None else mesh_dim))

    def __getitem__(self, mesh_dim_names):
        """The submesh of the named dimensions (a name or a tuple of names, in the mesh's order) that holds this
        rank, with its process groups. RuntimeError on a mesh without names; KeyError for an unknown name or
        names out of order."""
        if not self._mesh_dim_names:
            raise RuntimeError("Cannot slice a DeviceMesh without mesh_dim_names!")
        names = (mesh_dim_names,) if isinstance(mesh_dim_names, str) else tuple(mesh_dim_names)
        if names == self._mesh_dim_names:
            return self
        if len(names) == 1 and self._root_mesh is None and names[0] in self._flatten_mapping:
            return self._flatten_mapping[names[0]]
        valid = list(self._mesh_dim_names)
        if not all(n in valid for n in names):
            shown = valid + (list(self._flatten_mapping) if self._root_mesh is None else [])
            raise KeyError(f"Invalid mesh_dim_names {names} specified. Valid mesh_dim_names are {shown}.")
        dims = [valid.index(n) for n in names]
        if dims != sorted(dims) or len(set(dims)) != len(dims):
            raise KeyError(f"Invalid mesh_dim_names {names} specified. Mesh dim indices should be in ascending "
                           "order.")
        rest = [d for d in range(self.ndim) if d not in dims]
        # copies of the submesh: every copy of this mesh, and every choice of the coordinates left out
        moved = np.transpose(self._full, [0] + [d + 1 for d in rest] + [d + 1 for d in dims])
        full = moved.reshape((-1,) + tuple(self._full.shape[d + 1] for d in dims))
        return DeviceMesh(self._device_type, mesh_dim_names=names, _rank=self._rank, _full=full,
                          _groups=[self._groups[d] for d in dims] if self._groups else [],
                          _root_mesh=self._get_root_mesh(),
                          _layout_strides=[self._layout_strides[d] for d in dims])

    def _flatten(self, mesh_dim_name=None, backend_override=None):
        """A 1-d mesh over the same ranks (row-major order of this mesh's dimensions), named ``mesh_dim_name``
        (default: the dimension names joined by ``_``), with a process group of its own, created collectively;
        the root mesh remembers it, so ``root[name]`` and ``root.get_group(name)`` find it. A 1-d mesh already
        named so is returned as is. RuntimeError without dimension names; ValueError for a name the root mesh
        already uses, or one flattened before from other dimensions."""
        if not self._mesh_dim_names:
            raise RuntimeError("Cannot flatten a DeviceMesh without mesh_dim_names!")
        name = mesh_dim_name or "_".join(self._mesh_dim_names)
        if self.ndim == 1 and name in self._mesh_dim_names:
            return self
        root = self._get_root_mesh()
        if name in root._mesh_dim_names:
            raise ValueError(f"{name} already exists for submesh of the {root}. ",
                             f"The mesh_dim_names of submesh and flattened mesh are {root._mesh_dim_names}. "
                             "Please specify another valid mesh_dim_name.")
        full = self._full.reshape(self._full.shape[0], -1)
        known = root._flatten_mapping.get(name)
        if known is not None:
            if np.array_equal(known._full, full):
                return known
            raise ValueError(f"Flatten mesh with mesh_dim_name {name} has been created before, Please specify "
                             "another valid mesh_dim_name.")
        strides, sizes = self._layout_strides, self.shape
        merged = all(strides[i] == strides[i + 1] * sizes[i + 1] for i in range(len(sizes) - 1))
        stride = (strides[-1],) if merged else (tuple(strides),)
        groups = [_split_group(_dist(), [list(map(int, row)) for row in full], self._rank)] if self._groups else []
        flat = DeviceMesh(self._device_type, mesh_dim_names=(name,), _rank=self._rank, _full=full, _groups=groups,
                          _root_mesh=root, _layout_strides=stride)
        root._flatten_mapping[name] = flat
        return flat

    def _get_root_mesh(self):
        return self._root_mesh if self._root_mesh is not None else self

    def _get_root_mesh_dim(self):
        root = self._get_root_mesh()
        if root is self or not self._mesh_dim_names:
            return None
        if len(self._mesh_dim_names) != 1:
            raise AssertionError("The submesh can only be a 1D mesh.")
        return root._dim_index(self._mesh_dim_names[0])

    def __enter__(self):
        _mesh_stack.append(self)
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        _mesh_stack.pop()

    def __repr__(self):
        shape = self.shape
        body = f"({', '.join(f'{k}={v}' for k, v in zip(self._mesh_dim_names, shape))})" \
            if self._mesh_dim_names else f"{shape}"
        stride = self._layout_strides
        import os
        extra = f", Mesh: {self.mesh.tolist()}" if os.environ.get("TORCH_DISTRIBUTED_DEBUG", "") == "DETAIL" else ""
        return f"DeviceMesh({body}, '{self._device_type}', stride={stride}{extra})"

    def _hash_key(self):
        return (tuple(self._full.reshape(-1).tolist()), self._full.shape, self._device_type, self._mesh_dim_names)

    def __hash__(self):
        return hash(self._hash_key())

    def __eq__(self, other):
        if self is other:
            return True
        if not isinstance(other, DeviceMesh):
            return False
        return self._hash_key() == other._hash_key()

    def __getstate__(self):
        state = dict(self.__dict__)
        state["_groups"] = None  # communicators do not travel
        return state


def _current_mesh():
    if not _mesh_stack:
        raise RuntimeError("No device mesh is currently active!")
    return _mesh_stack[-1]


def init_device_mesh(device_type, mesh_shape, *, mesh_dim_names=None, backend_override=None):
    """A DeviceMesh of shape ``mesh_shape`` over ranks ``0..prod(mesh_shape)-1`` in row-major order
    (``torch.distributed.device_mesh.init_device_mesh``); initializes the default process group when needed.
    RuntimeError for repeated or miscounted ``mesh_dim_names``, for a device type with an index (``"cuda:0"``)
    and for a mesh larger than the world."""
    if mesh_dim_names is not None:
        if len(set(mesh_dim_names)) != len(mesh_dim_names):
            raise RuntimeError("Each mesh_dim_name must be unique. "
                               f"Found repeated mesh_dim_name in mesh_dim_names {mesh_dim_names}")
        if len(mesh_shape) != len(mesh_dim_names):
            raise RuntimeError("mesh_shape and mesh_dim_names should have same length! "
                               f"Found len(mesh_dim_names): {len(mesh_dim_names)} and "
                               f"len(mesh_shape):{len(mesh_shape)}.")
    if device_type and not device_type.isalpha():
        raise RuntimeError(f"Device type with index is not supported but got {device_type}. ",
                           "If you maintained a 'torch.device' object, it's recommended to pass in 'device.type'.")
    shape = tuple(int(s) for s in mesh_shape)
    ranks = np.arange(int(np.prod(shape, dtype=np.int64)), dtype=np.int64).reshape(shape)
    return DeviceMesh(device_type, ranks, mesh_dim_names=mesh_dim_names, backend_override=backend_override)
