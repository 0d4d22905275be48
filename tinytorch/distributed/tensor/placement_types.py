"""DTensor placements (``torch.distributed.tensor.placement_types``): how a global tensor is laid out over one
dimension of a :class:`~tinytorch.distributed.device_mesh.DeviceMesh`.

``Shard(dim)`` splits tensor dimension ``dim`` over the mesh dimension as ``torch.chunk`` does (the last ranks
may hold smaller or empty pieces), ``Replicate()`` gives every rank the whole tensor, ``Partial(reduce_op)``
gives every rank a partial value that becomes the tensor once reduced, and ``_StridedShard(dim, split_factor=k)``
is the sharding FSDP2 + tensor parallelism produce (split ``dim`` into ``k`` pieces first, shard each piece, and
concatenate the rank's share of every piece). Placements are immutable values: equality, hash, ``repr`` (machine
readable) and ``str`` (short) follow PyTorch 2.13's. Source: PyTorch's ``torch/distributed/tensor/placement_types.py``.
"""
import operator

__all__ = ["Placement", "Shard", "Replicate", "Partial"]


def _index(value, what):
    """``value`` as an int (anything with ``__index__``); TypeError like pybind11's constructor check otherwise."""
    if isinstance(value, bool) or not hasattr(type(value), "__index__"):
        raise TypeError(f"__init__(): incompatible constructor arguments: {what} expects an int, got "
                        f"{type(value).__name__} {value!r}")
    return operator.index(value)


class Placement:
    """The base class of placements. ``is_shard(dim=None)``, ``is_replicate()`` and ``is_partial(reduce_op=None)``
    tell the kind (``_StridedShard`` answers False to ``is_shard``, as in PyTorch)."""

    __slots__ = ()

    def is_shard(self, dim=None):
        """True for a Shard placement (on tensor dim ``dim`` when given)."""
        return False

    def is_replicate(self):
        """True for Replicate."""
        return False

    def is_partial(self, reduce_op=None):
        """True for a Partial placement (with reduction ``reduce_op`` when given)."""
        return False

    def __eq__(self, other):
        raise RuntimeError("Placement method '__eq__' should not be called as it should be overridden by the "
                           "subclass")

    def __hash__(self):
        raise RuntimeError("Placement method '__hash__' should not be called as it should be overridden by the "
                           "subclass")

    def __setattr__(self, name, value):
        raise AttributeError(f"property of '{type(self).__name__}' object has no setter")

    def __reduce__(self):
        return type(self)._rebuild, (self._state(),)

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self


def _chunk_size_and_offset(size, num_chunks, rank):
    """(size, offset) of piece ``rank`` when ``size`` elements are cut into ``num_chunks`` pieces as
    ``torch.chunk`` cuts them (every piece ``ceil(size / num_chunks)`` long but the last non-empty one; the pieces
    past the end are empty and start at ``size``)."""
    if size % num_chunks == 0:
        step = size // num_chunks
        return step, step * rank
    step = -(-size // num_chunks)
    start = step * rank
    return max(0, min(size, start + step) - start), min(size, start)


class Shard(Placement):
    """``Shard(dim)``: tensor dimension ``dim`` is split over the mesh dimension with ``torch.chunk``'s rule
    (rank r holds chunk r; trailing ranks may hold empty chunks). ``dim`` may be negative until the placement is
    bound to a tensor. TypeError for a non-integer ``dim``."""

    __slots__ = ("_dim",)

    def __init__(self, dim):
        object.__setattr__(self, "_dim", _index(dim, "Shard(dim)"))

    @property
    def dim(self):
        """The sharded tensor dimension."""
        return self._dim

    def is_shard(self, dim=None):
        """True (when ``dim`` is None or this placement's dimension)."""
        return dim is None or dim == self._dim

    @staticmethod
    def local_shard_size_and_offset(curr_local_size, num_chunks, rank):
        """(size, offset) of rank ``rank``'s chunk when a dimension of ``curr_local_size`` elements is split into
        ``num_chunks`` with ``torch.chunk``'s rule. The offset is relative to the dimension as given (already
        sharded on other mesh dimensions perhaps); an empty chunk's offset is ``curr_local_size``."""
        return _chunk_size_and_offset(int(curr_local_size), int(num_chunks), int(rank))

    def _local_shard_size_and_offset(self, curr_local_size, num_chunks, rank):
        return Shard.local_shard_size_and_offset(curr_local_size, num_chunks, rank)

    def _split(self, tensor, num_chunks):
        """The ``num_chunks`` pieces of ``tensor`` along ``dim`` (views; empty ones where ``torch.chunk`` makes
        fewer pieces)."""
        size = tensor.shape[self._dim]
        return [tensor.narrow(self._dim, *reversed(_chunk_size_and_offset(size, num_chunks, r)))
                for r in range(num_chunks)]

    def __eq__(self, other):
        return isinstance(other, Shard) and other._dim == self._dim

    def __hash__(self):
        return hash(self._dim)

    def __repr__(self):
        return f"Shard(dim={self._dim})"

    def __str__(self):
        return f"S({self._dim})"

    def _state(self):
        return self._dim

    @classmethod
    def _rebuild(cls, state):
        return cls(state)


class _StridedShard(Placement):
    """``_StridedShard(dim, split_factor=k)`` (or ``sf=k``): dimension ``dim`` is first cut into ``k`` pieces,
    each piece is chunked over the mesh dimension, and rank r holds the concatenation of chunk r of every piece.
    It describes right-to-left sharding (FSDP2 over tensor parallelism) with left-to-right placements. TypeError
    when both ``split_factor`` and ``sf`` are given."""

    __slots__ = ("_dim", "_split_factor")

    def __init__(self, dim, *, split_factor=1, sf=None):
        if sf is not None:
            if split_factor != 1:
                raise TypeError("_StridedShard received both split_factor and sf")
            split_factor = sf
        object.__setattr__(self, "_dim", _index(dim, "_StridedShard(dim)"))
        object.__setattr__(self, "_split_factor", _index(split_factor, "_StridedShard(split_factor)"))

    @property
    def dim(self):
        """The sharded tensor dimension."""
        return self._dim

    @property
    def split_factor(self):
        """The number of pieces ``dim`` is cut into before sharding each."""
        return self._split_factor

    def _indices(self, size, num_chunks):
        """For each rank, the indices (into a dimension of ``size`` elements) it holds."""
        pieces = []
        for s in range(self._split_factor):
            n, off = _chunk_size_and_offset(size, self._split_factor, s)
            pieces.append([(off + o, m) for m, o in
                           (_chunk_size_and_offset(n, num_chunks, r) for r in range(num_chunks))])
        return [[i for piece in pieces for i in range(piece[r][0], piece[r][0] + piece[r][1])]
                for r in range(num_chunks)]

    def local_shard_size_and_offset(self, curr_local_size, num_chunks, rank, offset_mode=0):
        """(size, offsets) of rank ``rank``'s share of a dimension of ``curr_local_size`` elements split into
        ``num_chunks``. ``offset_mode`` 0 (FIRST) gives the first index (-1 for an empty share), 1 (ALL) the list
        of every index, 2 (NONE) None."""
        mode = int(offset_mode)
        if mode not in (0, 1, 2):
            raise ValueError(f"{offset_mode} is not a valid _StridedShardOffsetMode")
        idx = self._indices(int(curr_local_size), int(num_chunks))[int(rank)]
        if mode == 2:
            return len(idx), None
        if mode == 1:
            return len(idx), idx
        return len(idx), idx[0] if idx else -1

    def _local_shard_size_and_offset(self, curr_local_size, num_chunks, rank, offset_mode=0):
        return self.local_shard_size_and_offset(curr_local_size, num_chunks, rank, offset_mode)

    def _split(self, tensor, num_chunks):
        """The ``num_chunks`` shares of ``tensor`` along ``dim`` (copies, as they are not contiguous pieces)."""
        from ..._ops.shape import cat
        first = Shard(self._dim)._split(tensor, self._split_factor)
        seconds = [Shard(self._dim)._split(p, num_chunks) for p in first]
        return [cat([s[r] for s in seconds], dim=self._dim) for r in range(num_chunks)]

    def __eq__(self, other):
        return isinstance(other, _StridedShard) and other._dim == self._dim and \
            other._split_factor == self._split_factor

    def __hash__(self):
        return hash((self._dim, self._split_factor))

    def __repr__(self):
        return f"_StridedShard(dim={self._dim}, sf={self._split_factor})"

    def __str__(self):
        return f"_S({self._dim}, {self._split_factor})"

    def _state(self):
        return self._dim, self._split_factor

    @classmethod
    def _rebuild(cls, state):
        return cls(state[0], split_factor=state[1])


class Replicate(Placement):
    """``Replicate()``: every rank of the mesh dimension holds the whole tensor."""

    __slots__ = ()

    def is_replicate(self):
        """True."""
        return True

    def __eq__(self, other):
        return isinstance(other, Replicate)

    def __hash__(self):
        return -1  # every Replicate is the same value (Python turns -1 into -2, as for PyTorch's)

    def __repr__(self):
        return "Replicate()"

    def __str__(self):
        return "R"

    def _state(self):
        return None

    @classmethod
    def _rebuild(cls, state):
        return cls()


class Partial(Placement):
    """``Partial(reduce_op="sum")``: every rank of the mesh dimension holds a partial value; reducing them with
    ``reduce_op`` (``"sum"``, ``"avg"``, ``"min"``, ``"max"``, ``"product"``, ``"band"``, ``"bor"``, ``"bxor"``)
    gives the tensor. The name is checked when a reduction runs, as in PyTorch. TypeError for a non-string."""

    __slots__ = ("_reduce_op",)
    LINEAR_REDUCE_OPS = ("sum", "avg")
    ALL_REDUCE_OPS = ("sum", "avg", "min", "max", "product")

    def __init__(self, reduce_op="sum"):
        if reduce_op is None:
            reduce_op = "sum"
        if not isinstance(reduce_op, str):
            raise TypeError(f"__init__(): incompatible constructor arguments: Partial(reduce_op) expects a str, "
                            f"got {type(reduce_op).__name__} {reduce_op!r}")
        object.__setattr__(self, "_reduce_op", reduce_op)

    @property
    def reduce_op(self):
        """The name of the pending reduction (``"sum"``, ``"avg"``, ...)."""
        return self._reduce_op

    def is_partial(self, reduce_op=None):
        """True (when ``reduce_op`` is None or this placement's reduction)."""
        return reduce_op is None or reduce_op == self._reduce_op

    def __eq__(self, other):
        return isinstance(other, Partial) and other._reduce_op == self._reduce_op

    def __hash__(self):
        return 1 + hash(self._reduce_op)

    def __repr__(self):
        return f"Partial({self._reduce_op})"

    def __str__(self):
        return f"P({self._reduce_op})"

    def _state(self):
        return self._reduce_op

    @classmethod
    def _rebuild(cls, state):
        return cls(state)


_Partial = Partial  # PyTorch keeps the old name


def _is_shard_like(p):
    """Shard or _StridedShard."""
    return isinstance(p, (Shard, _StridedShard))
