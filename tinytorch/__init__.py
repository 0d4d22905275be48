"""tinytorch: a deep-learning framework written from scratch in Python that speaks PyTorch's API.

``import tinytorch as torch``: strided tensors over storages, one op dispatcher, an autograd engine,
``nn`` / ``optim`` / ``utils.data`` on top, and pluggable device backends (NumPy on the CPU).
"""
import builtins as _builtins

from . import _dtype as _dtype_mod
from ._dtype import (bfloat16, bool, cdouble, cfloat, complex64, complex128, double, dtype, finfo, float, float16, float32, float64, get_default_dtype, half,
                    iinfo, int, int8, int16, int32, int64, long, promote_types, set_default_dtype, short, uint8,
                    uint16, uint32, uint64, float8_e4m3fn, float8_e5m2)
from .device import device, is_registered as device_module_registered  # noqa: F401
from .device import register_backend as _register_builtin  # noqa: F401
from .device import get_default_device, set_default_device  # noqa: F401
from .backends.cpu import NumpyBackend as _NumpyBackend

from .backends.meta import MetaBackend as _MetaBackend

_BUILTIN_BACKENDS = [_register_builtin("cpu", _NumpyBackend()), _register_builtin("meta", _MetaBackend())]
from .backends.opencl import OpenCLBackend as _OpenCLBackend  # noqa: E402
from .backends.cuda.backend import CUDABackend as _CUDABackend  # noqa: E402
# always registered; using one without its driver says why (cuda first: it is the accelerator where both exist)
_BUILTIN_BACKENDS.append(_register_builtin("cuda", _CUDABackend()))
_BUILTIN_BACKENDS.append(_register_builtin("opencl", _OpenCLBackend()))
from .backends.webgpu import WebGPUBackend as _WebGPUBackend  # noqa: E402
_BUILTIN_BACKENDS.append(_register_builtin("webgpu", _WebGPUBackend()))

from ._tensor import Size, Tensor  # noqa: E402
from ._storage import Storage  # noqa: E402
from . import storage  # noqa: E402
from .storage import TypedStorage, UntypedStorage, asarray, from_file  # noqa: E402,F401
from .autograd.grad_mode import (enable_grad, inference_mode, is_grad_enabled, is_inference_mode_enabled,  # noqa
                                 no_grad, set_grad_enabled)
from ._ops.pointwise import *  # noqa: E402,F401,F403
from ._ops.pointwise import abs, pow, round  # noqa: E402
from ._ops.movement import *  # noqa: E402,F401,F403
from ._ops.reduce import *  # noqa: E402,F401,F403
from ._ops.reduce import all, any, max, min, sum  # noqa: E402
from ._ops.creation import *  # noqa: E402,F401,F403
from ._ops.creation import range_ as range  # noqa: E402
from ._ops.generator import *  # noqa: E402,F401,F403
from ._ops.random import *  # noqa: E402,F401,F403
from ._ops.indexing import *  # noqa: E402,F401,F403
from ._ops.shape import *  # noqa: E402,F401,F403
from ._ops.linalg import *  # noqa: E402,F401,F403
from ._ops.nn import *  # noqa: E402,F401,F403
from ._ops.lapack import det, inverse, logdet, slogdet  # noqa: E402,F401
from ._ops.complex import *  # noqa: E402,F401,F403
from ._ops.unary import *  # noqa: E402,F401,F403
from ._ops.binary import *  # noqa: E402,F401,F403
from ._ops.sorting import *  # noqa: E402,F401,F403
from ._ops.summary_ops import *  # noqa: E402,F401,F403
from ._ops.special import *  # noqa: E402,F401,F403
from ._ops.linalg_composites import *  # noqa: E402,F401,F403
from .functional import istft, stft  # noqa: E402,F401
from ._ops.linalg_composites import torch_lu as lu, torch_lu_solve as lu_solve  # noqa: E402,F401
from . import _variants  # noqa: E402
_variants._declare()
from . import sparse  # noqa: E402  (declares the sparse Tensor methods: before they are installed)
from .sparse import sparse_coo_tensor, sparse_csr_tensor, spmm  # noqa: E402,F401
from . import _surface  # noqa: E402
_surface.install(__import__(__name__))
from . import overrides  # noqa: E402
from . import _c_api  # noqa: E402
_C = _c_api.install()
from ._ops import optim as _optim_ops  # noqa: E402,F401 (the fused optimizer updates are ops too)
from ._dispatch import OPS as _OPS, register_backend  # noqa: E402,F401
# registered before the ops existed: their kernel names are checked now (without probing an OpenCL platform)
for _b in _BUILTIN_BACKENDS:
    _b.check_kernels(_OPS)
from ._variants import *  # noqa: E402,F401,F403
from . import linalg  # noqa: E402
from . import fft  # noqa: E402
from . import special  # noqa: E402
from . import amp  # noqa: E402
from .amp import GradScaler, autocast  # noqa: E402,F401
from .amp.autocast_mode import (autocast_decrement_nesting, autocast_increment_nesting,  # noqa: E402,F401
                                clear_autocast_cache, get_autocast_cpu_dtype, get_autocast_dtype,
                                get_autocast_gpu_dtype, is_autocast_cache_enabled, is_autocast_cpu_enabled,
                                is_autocast_enabled, set_autocast_cache_enabled, set_autocast_cpu_dtype,
                                set_autocast_cpu_enabled, set_autocast_dtype, set_autocast_enabled)
from ._legacy import *  # noqa: E402,F401,F403
from .autograd.anomaly_mode import (is_anomaly_check_nan_enabled, is_anomaly_enabled,  # noqa: E402,F401
                                    set_anomaly_enabled)
from . import autograd  # noqa: E402
from .autograd import profiler as _autograd_profiler, profiler_util as _profiler_util  # noqa: E402,F401
from .serialization import PyTorchFileReader, load, save  # noqa: E402,F401
from ._print import set_printoptions  # noqa: E402
from . import nn, optim, utils, datasets, opencl, webgpu, distributions  # noqa: E402
from . import ao, quantization  # noqa: E402,F401
from . import func  # noqa: E402
from . import profiler  # noqa: E402
from .func import vmap  # noqa: E402,F401
import importlib as _importlib  # noqa: E402
cuda = _importlib.import_module(".cuda", __name__)  # the module, not Tensor.cuda's function of the same name
cpu = _importlib.import_module(".cpu", __name__)  # likewise for Tensor.cpu
from . import accelerator, distributed, multiprocessing, random, testing  # noqa: E402
from . import onnx  # noqa: E402  (torch imports it eagerly too: torch.onnx.is_in_onnx_export() in forward)
from ._dtype import result_type_of as _result_type_of  # noqa: E402

from .version import TINYTORCH_VERSION as __version__  # noqa: E402 (torch.__version__ under the swap: version.py)
from . import version, torch_version  # noqa: E402
from . import types  # noqa: E402
from ._layout import layout, sparse_coo, sparse_csr, strided  # noqa: E402
contiguous_format = preserve_format = channels_last = None
pi = 3.141592653589793
e = 2.718281828459045
inf = _builtins.float("inf")
nan = _builtins.float("nan")


def is_tensor(obj):
    """True when ``obj`` is a tinytorch Tensor."""
    return isinstance(obj, Tensor)


def is_floating_point(input):
    return input.dtype.is_floating_point


def numel(input):
    return input.numel()


def result_type(tensor1, tensor2):
    """The dtype an op on the two arguments (tensors or scalars) computes in."""
    ts = [t for t in (tensor1, tensor2) if isinstance(t, Tensor)]
    sc = [s for s in (tensor1, tensor2) if not isinstance(s, Tensor)]
    return _result_type_of(ts, sc)


def can_cast(from_, to):
    """Whether ``from_`` converts to ``to`` without a category loss (float -> int is not allowed); Python types
    stand for dtypes, as in ``torch.can_cast``."""
    from_, to = _dtype_mod.as_dtype(from_, "can_cast"), _dtype_mod.as_dtype(to, "can_cast")
    return from_.category <= to.category


def get_num_threads():
    """Threads the ``cpu`` backend uses for intra-op parallelism (``torch.get_num_threads``): the native
    kernels' pool, which ``set_num_threads`` keeps equal to the BLAS's (default: the machine's cores, as
    PyTorch). Without the native kernels, the BLAS's count, read through threadpoolctl."""
    from .backends.cpu import native
    if native._C is not None:
        return native.get_num_threads()
    import threadpoolctl
    counts = [i["num_threads"] for i in threadpoolctl.threadpool_info() if i.get("user_api") == "blas"]
    return _builtins.max(counts) if counts else 1


from .backends.cpu import set_num_threads  # noqa: E402,F401


from .compiler import compile  # noqa: E402
from . import compiler  # noqa: E402
from . import _dynamo  # noqa: E402  (torch loads it on first use of torch._dynamo: libraries use it unimported)
from . import jit  # noqa: E402
from .jit import ScriptModule, ScriptFunction  # noqa: E402,F401
from . import library  # noqa: E402
from . import _custom_ops  # noqa: E402
from . import hub  # noqa: E402
from . import futures  # noqa: E402
from ._ops_namespace import ops  # noqa: E402,F401


def _assert(condition, message):
    """``assert condition, message`` as a function (``torch._assert``): torch.fx records a call with a traced
    ``condition`` (it specialises ``concrete_args`` with it) instead of evaluating it. AssertionError when
    ``condition`` is false."""
    if type(condition) is not Tensor and overrides.has_torch_function((condition,)):
        return overrides.handle_torch_function(_assert, (condition,), condition, message)
    assert condition, message


from . import fx  # noqa: E402  (torch.fx is an attribute of torch: libraries use @torch.fx.wrap at import)

import sys as _sys  # noqa: E402

# PyTorch's exception types where a public function's Python code trips over a bad argument (one pass)
_surface.translate_namespace_errors(_sys.modules[__name__], linalg, special, fft, nn.functional)
_surface.pickle_by_public_name(_sys.modules[__name__], linalg, special, fft, nn.functional, nn.init)
