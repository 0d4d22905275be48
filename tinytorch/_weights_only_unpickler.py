"""The unpickler behind ``load(weights_only=True)``, as ``torch._weights_only_unpickler``.

A pickle is a small program; Python's own unpickler runs any of it (imports any global, calls it, sets any
attribute of what it built). This one interprets the opcodes itself and allows only: globals on a fixed list
(the tensor/parameter rebuild functions, storage types, dtypes, ``torch.device``/``Size``, ``OrderedDict``,
``set``, ...) plus those the program allow-listed with ``serialization.add_safe_globals`` /
``safe_globals``; calls (REDUCE) and object creation (NEWOBJ) of allowed globals only; and object state
(BUILD) only for tensors, ``OrderedDict`` and allow-listed classes. A tensor's state can never reach its
private fields (storage, shape, strides, offset): tensors are rebuilt only through the loader's checked
rebuild functions. Blocked modules (``os``, ``sys``, ...) and unapproved globals raise
``pickle.UnpicklingError`` naming the global, with PyTorch's wording.
"""
import _compat_pickle
import pickle
from collections import Counter, OrderedDict
from struct import unpack

_blocklisted_modules = ["sys", "os", "posix", "nt"]

_marked_safe_globals_set = set()


def _add_safe_globals(safe_globals):
    global _marked_safe_globals_set
    _marked_safe_globals_set = _marked_safe_globals_set.union(set(safe_globals))


def _get_safe_globals():
    return list(_marked_safe_globals_set)


def _clear_safe_globals():
    global _marked_safe_globals_set
    _marked_safe_globals_set = set()


def _remove_safe_globals(globals_to_remove):
    global _marked_safe_globals_set
    _marked_safe_globals_set = _marked_safe_globals_set - set(globals_to_remove)


class _safe_globals:
    """Context manager: the listed globals are allowed inside the ``with`` block, then removed again."""

    def __init__(self, safe_globals):
        self.safe_globals = safe_globals

    def __enter__(self):
        _add_safe_globals(self.safe_globals)

    def __exit__(self, type, value, tb):
        _remove_safe_globals(self.safe_globals)


def _get_user_allowed_globals():
    """``{"module.qualname": object}`` of the allow-listed globals (a ``(obj, "full.name")`` pair names it)."""
    rc = {}
    for f in _marked_safe_globals_set:
        if isinstance(f, tuple):
            if len(f) != 2:
                raise ValueError(f"Expected tuple of length 2 (global, str of callable full path), but got tuple of "
                                 f"length: {len(f)}")
            if type(f[1]) is not str:
                raise TypeError(f"Expected second item in tuple to be str of callable full path, but got: "
                                f"{type(f[1])}")
            f, name = f
            rc[name] = f
        else:
            rc[f"{f.__module__}.{f.__qualname__}"] = f
    return rc


def _read_global(module, name):
    """Python 2 names (``__builtin__ set``) as Python 3's, as pickle (and torch) map them."""
    if (module, name) in _compat_pickle.NAME_MAPPING:
        return _compat_pickle.NAME_MAPPING[(module, name)]
    return _compat_pickle.IMPORT_MAPPING.get(module, module), name


def _unsupported_global(full_path):
    if full_path.startswith("builtins"):
        rest = full_path[len("builtins"):]
        full_path = rest[1:] if rest.startswith(".") else "builtins" + rest
    return pickle.UnpicklingError(
        f"Unsupported global: GLOBAL {full_path} was not an allowed global by default. Please use "
        f"`torch.serialization.add_safe_globals([{full_path}])` or the "
        f"`torch.serialization.safe_globals([{full_path}])` context manager to allowlist this global if you trust "
        "this class/function.")


class Unpickler:
    """Interprets a protocol <= 5 pickle with the rules above.

    ``allowed``: ``{"module.name": object}`` of the built-in allowlist; ``persistent_load(pid)``: the
    storage loader; ``set_tensor_state(obj, state)``: applies a BUILD state to a tensor (the loader's checked
    version); ``tensor_types``: the classes that route BUILD there; ``newobj``: ``{cls: factory}`` for classes
    whose NEWOBJ must go through their constructor (``Parameter``)."""

    def __init__(self, file, *, allowed, persistent_load, set_tensor_state, tensor_types, newobj=None,
                 build_types=(), encoding="utf-8"):
        self.read, self.readline = file.read, file.readline
        self.encoding = encoding
        self.allowed = allowed
        self.persistent_load = persistent_load
        self.set_tensor_state = set_tensor_state
        self.tensor_types = tuple(tensor_types)
        self.newobj = newobj or {}
        self.build_types = tuple(build_types)
        self.memo = {}

    def _global(self, module, name):
        module, name = _read_global(module, name)
        full_path = f"{module}.{name}"
        if module in _blocklisted_modules:
            raise pickle.UnpicklingError(
                f"Trying to load unsupported GLOBAL {full_path} whose module {module} is blocked.")
        if full_path in self.allowed:
            return self.allowed[full_path]
        user = _get_user_allowed_globals()
        if full_path in user:
            return user[full_path]
        raise _unsupported_global(full_path)

    def _is_allowed(self, obj):
        return any(obj is v for v in self.allowed.values()) or \
            any(obj is v for v in _get_user_allowed_globals().values())

    def _read_exact(self, n):
        data = self.read(n)
        if len(data) < n:
            raise pickle.UnpicklingError("pickle data was truncated")
        return data

    def load(self):
        """Run the pickle and return the object it builds (UnpicklingError on anything not allowed)."""
        self.metastack = []
        self.stack = []
        stack_ops = {
            pickle.NONE[0]: lambda: self.stack.append(None),
            pickle.NEWFALSE[0]: lambda: self.stack.append(False),
            pickle.NEWTRUE[0]: lambda: self.stack.append(True),
            pickle.EMPTY_TUPLE[0]: lambda: self.stack.append(()),
            pickle.EMPTY_LIST[0]: lambda: self.stack.append([]),
            pickle.EMPTY_DICT[0]: lambda: self.stack.append({}),
            pickle.EMPTY_SET[0]: lambda: self.stack.append(set()),
        }
        read = self.read
        while True:
            key = read(1)
            if not key:
                raise EOFError
            op = key[0]
            st = self.stack
            if op in stack_ops:
                stack_ops[op]()
            elif op == pickle.GLOBAL[0]:
                module = self.readline()[:-1].decode("utf-8")
                name = self.readline()[:-1].decode("utf-8")
                st.append(self._global(module, name))
            elif op == pickle.STACK_GLOBAL[0]:
                name, module = st.pop(), st.pop()
                if type(name) is not str or type(module) is not str:
                    raise pickle.UnpicklingError("STACK_GLOBAL requires str")
                st.append(self._global(module, name))
            elif op == pickle.NEWOBJ[0]:
                args, cls = st.pop(), st.pop()
                if type(args) is not tuple:
                    raise pickle.UnpicklingError("NEWOBJ expected an argument tuple")
                if cls in self.newobj:
                    st.append(self.newobj[cls](*args))
                elif isinstance(cls, type) and issubclass(cls, self.tensor_types):
                    raise pickle.UnpicklingError(self._no_tensor_call(cls))
                elif isinstance(cls, type) and self._is_allowed(cls):
                    st.append(cls.__new__(cls, *args))
                else:
                    raise pickle.UnpicklingError("Can only create new object for nn.Parameter or classes allowlisted "
                                                 f"via `add_safe_globals` but got {cls}")
            elif op == pickle.REDUCE[0]:
                args = st.pop()
                func = st[-1]
                if type(args) is not tuple:
                    raise pickle.UnpicklingError("REDUCE expected an argument tuple")
                if isinstance(func, type) and issubclass(func, self.tensor_types):
                    raise pickle.UnpicklingError(self._no_tensor_call(func))
                if not self._is_allowed(func):
                    msg = f"Trying to call reduce for unrecognized function {func}"
                    if hasattr(func, "__self__"):
                        msg += f" which belongs to {func.__self__}"
                    raise pickle.UnpicklingError(msg)
                st[-1] = func(*args)
            elif op == pickle.BUILD[0]:
                state = st.pop()
                inst = st[-1]
                if isinstance(inst, self.tensor_types):
                    self.set_tensor_state(inst, state)
                elif isinstance(inst, self.build_types):
                    inst.__setstate__(state)
                elif type(inst) is OrderedDict:
                    if not isinstance(state, dict):
                        raise pickle.UnpicklingError("OrderedDict state must be a dict")
                    inst.__dict__.update(state)
                elif self._is_allowed(type(inst)):
                    if hasattr(inst, "__setstate__"):
                        inst.__setstate__(state)
                    else:
                        slotstate = None
                        if isinstance(state, tuple) and len(state) == 2:
                            state, slotstate = state
                        if state:
                            inst.__dict__.update(state)
                        if slotstate:
                            for k, v in slotstate.items():
                                setattr(inst, k, v)
                else:
                    raise pickle.UnpicklingError("Can only build Tensor, Parameter, OrderedDict or types allowlisted "
                                                 f"via `add_safe_globals`, but got {type(inst)}")
            elif op == pickle.APPEND[0]:
                item = st.pop()
                if type(st[-1]) is not list:
                    raise pickle.UnpicklingError(f"Can only append to lists, but got {type(st[-1])}")
                st[-1].append(item)
            elif op == pickle.APPENDS[0]:
                items = self._pop_mark()
                if type(self.stack[-1]) is not list:
                    raise pickle.UnpicklingError(f"Can only extend lists, but got {type(self.stack[-1])}")
                self.stack[-1].extend(items)
            elif op == pickle.ADDITEMS[0]:
                items = self._pop_mark()
                if type(self.stack[-1]) is not set:
                    raise pickle.UnpicklingError(f"Can only add items to sets, but got {type(self.stack[-1])}")
                self.stack[-1].update(items)
            elif op == pickle.FROZENSET[0]:
                items = self._pop_mark()
                self.stack.append(frozenset(items))
            elif op == pickle.SETITEM[0]:
                v, k = st.pop(), st.pop()
                self._check_set_item_target("SETITEM")
                st[-1][k] = v
            elif op == pickle.SETITEMS[0]:
                items = self._pop_mark()
                self._check_set_item_target("SETITEMS")
                for i in range(0, len(items) - 1, 2):
                    self.stack[-1][items[i]] = items[i + 1]
            elif op == pickle.MARK[0]:
                self.metastack.append(self.stack)
                self.stack = []
            elif op == pickle.POP[0]:
                st.pop() if st else self._pop_mark()
            elif op == pickle.POP_MARK[0]:
                self._pop_mark()
            elif op == pickle.DUP[0]:
                st.append(st[-1])
            elif op == pickle.TUPLE[0]:
                items = self._pop_mark()
                self.stack.append(tuple(items))
            elif op == pickle.TUPLE1[0]:
                st[-1] = (st[-1],)
            elif op == pickle.TUPLE2[0]:
                st[-2:] = [(st[-2], st[-1])]
            elif op == pickle.TUPLE3[0]:
                st[-3:] = [(st[-3], st[-2], st[-1])]
            elif op == pickle.BININT[0]:
                st.append(unpack("<i", self._read_exact(4))[0])
            elif op == pickle.BININT1[0]:
                st.append(self._read_exact(1)[0])
            elif op == pickle.BININT2[0]:
                st.append(unpack("<H", self._read_exact(2))[0])
            elif op == pickle.LONG1[0]:
                n = self._read_exact(1)[0]
                st.append(pickle.decode_long(self._read_exact(n)))
            elif op == pickle.LONG4[0]:
                n = unpack("<i", self._read_exact(4))[0]
                if n < 0:
                    raise pickle.UnpicklingError("LONG pickle has negative byte count")
                st.append(pickle.decode_long(self._read_exact(n)))
            elif op == pickle.BINFLOAT[0]:
                st.append(unpack(">d", self._read_exact(8))[0])
            elif op in (pickle.BINUNICODE[0], pickle.SHORT_BINUNICODE[0], pickle.BINUNICODE8[0]):
                fmt, size = {pickle.BINUNICODE[0]: ("<I", 4), pickle.SHORT_BINUNICODE[0]: ("<B", 1),
                             pickle.BINUNICODE8[0]: ("<Q", 8)}[op]
                n = unpack(fmt, self._read_exact(size))[0]
                st.append(str(self._read_exact(n), "utf-8", "surrogatepass"))
            elif op in (pickle.BINBYTES[0], pickle.SHORT_BINBYTES[0], pickle.BINBYTES8[0]):
                fmt, size = {pickle.BINBYTES[0]: ("<I", 4), pickle.SHORT_BINBYTES[0]: ("<B", 1),
                             pickle.BINBYTES8[0]: ("<Q", 8)}[op]
                n = unpack(fmt, self._read_exact(size))[0]
                st.append(bytes(self._read_exact(n)))
            elif op in (pickle.SHORT_BINSTRING[0], pickle.BINSTRING[0]):
                n = self._read_exact(1)[0] if op == pickle.SHORT_BINSTRING[0] else \
                    unpack("<i", self._read_exact(4))[0]
                if n < 0:
                    raise pickle.UnpicklingError("BINSTRING pickle has negative byte count")
                data = self._read_exact(n)
                st.append(data if self.encoding == "bytes" else data.decode(self.encoding, "strict"))
            elif op == pickle.BINPERSID[0]:
                pid = st.pop()
                if type(pid) is not tuple and type(pid) is not int:
                    raise pickle.UnpicklingError(f"persistent_load id must be tuple or int, but got {type(pid)}")
                if type(pid) is tuple and len(pid) > 0 and pid[0] not in ("storage", b"storage"):
                    raise pickle.UnpicklingError(f"Only persistent_load of storage is allowed, but got {pid[0]!r}")
                st.append(self.persistent_load(pid))
            elif op in (pickle.BINGET[0], pickle.LONG_BINGET[0]):
                idx = self._read_exact(1)[0] if op == pickle.BINGET[0] else unpack("<I", self._read_exact(4))[0]
                if idx not in self.memo:
                    raise pickle.UnpicklingError(f"Memo value not found at index {idx}")
                st.append(self.memo[idx])
            elif op in (pickle.BINPUT[0], pickle.LONG_BINPUT[0]):
                idx = self._read_exact(1)[0] if op == pickle.BINPUT[0] else unpack("<I", self._read_exact(4))[0]
                self.memo[idx] = st[-1]
            elif op == pickle.MEMOIZE[0]:
                self.memo[len(self.memo)] = st[-1]
            elif op == pickle.FRAME[0]:
                self._read_exact(8)  # the frame's length: the data follows in line
            elif op == pickle.PROTO[0]:
                self.proto = self._read_exact(1)[0]
                if self.proto > pickle.HIGHEST_PROTOCOL:
                    raise pickle.UnpicklingError(f"unsupported pickle protocol: {self.proto}")
            elif op == pickle.STOP[0]:
                return st.pop()
            else:
                raise pickle.UnpicklingError(f"Unsupported operand {op}")

    @staticmethod
    def _no_tensor_call(cls):
        # Tensor(*sizes) would allocate whatever a few bytes of pickle ask for; checkpoints build tensors
        # only through the rebuild functions, over storages read from the file
        return (f"Trying to construct {cls.__name__} from arguments: a checkpoint's tensors are rebuilt from its "
                "storages only")

    def _pop_mark(self):
        if not self.metastack:
            raise pickle.UnpicklingError("could not find MARK")
        items = self.stack
        self.stack = self.metastack.pop()
        return items

    def _check_set_item_target(self, opcode):
        if type(self.stack[-1]) not in (dict, OrderedDict, Counter):
            raise pickle.UnpicklingError(f"Can only {opcode} for dict, collections.OrderedDict, collections.Counter, "
                                         f"but got {type(self.stack[-1])}")
