"""The C++ part of the PrivateUse1 backend (``csrc/privateuse1.cpp``), compiled at first use against the installed
torch with ``torch.utils.cpp_extension`` and cached.

PyTorch accepts some pieces of an out-of-tree device only from C++: an allocator (``torch.UntypedStorage(n,
device=...)`` and ``UntypedStorage.to(device)`` need one), a device guard that knows more than one device,
generators (``torch.Generator(device)``), pinned memory and storage ``resize_``. Without a C++ compiler (or
ninja), or with ``TINYTORCH_TORCH_NATIVE=0``, ``load()`` returns None, ``reason()`` says why, and the backend runs
on PyTorch's Python registration with those pieces missing.

The build lives in ``$TINYTORCH_TORCH_EXTENSIONS_DIR``, else ``$TORCH_EXTENSIONS_DIR``, else PyTorch's extension
cache (``~/.cache/torch_extensions``), in a folder named after a hash of the source, the torch build and the Python
version: a changed source or a new torch builds anew, and a built one is imported directly, without
``torch.utils.cpp_extension`` (which imports setuptools and runs ninja on every load).
"""
import hashlib
import importlib.util
import os
import shutil
import sys
import sysconfig
import threading
import time

import torch

SOURCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "csrc", "privateuse1.cpp")
CFLAGS = ["-O2", "-std=c++17"]
_STALE_LOCK_S = 15 * 60  # a build takes about a minute; an older lock was left by a killed build

_lock = threading.Lock()
_result = {}  # "module" and "reason" once load() has run


def _name():
    h = hashlib.sha256()
    with open(SOURCE, "rb") as f:
        h.update(f.read())
    for part in (torch.__version__, str(torch.version.git_version), sys.version, getattr(sys, "abiflags", ""),
                 sysconfig.get_platform(), " ".join(CFLAGS), os.environ.get("CXX", "")):
        h.update(b"\0" + part.encode())
    return "tinytorch_privateuse1_" + h.hexdigest()[:16]


def build_root():
    """The folder that holds the builds (one subfolder per source and torch version)."""
    root = os.environ.get("TINYTORCH_TORCH_EXTENSIONS_DIR") or os.environ.get("TORCH_EXTENSIONS_DIR")
    if not root:
        import torch._appdirs
        root = os.path.realpath(torch._appdirs.user_cache_dir(appname="torch_extensions"))
    return root


def _import(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _build(name, directory):
    """Compile with torch.utils.cpp_extension (which locks the folder against a concurrent build) and import."""
    import torch.utils.cpp_extension as ext
    lock = os.path.join(directory, "lock")
    try:
        if time.time() - os.path.getmtime(lock) > _STALE_LOCK_S:
            os.remove(lock)  # cpp_extension would wait for this lock forever
    except OSError:
        pass
    start = time.perf_counter()
    sys.stderr.write(f"tinytorch: compiling the PyTorch device extension into {directory} (once)...\n")
    module = ext.load(name=name, sources=[SOURCE], extra_cflags=CFLAGS, build_directory=directory, verbose=False)
    sys.stderr.write(f"tinytorch: compiled in {time.perf_counter() - start:.0f} s\n")
    return module


def _load():
    if os.environ.get("TINYTORCH_TORCH_NATIVE", "1") == "0":
        return None, "disabled by TINYTORCH_TORCH_NATIVE=0"
    if not os.path.isfile(SOURCE):
        return None, f"the source {SOURCE} is not installed (package data missing)"
    name = _name()
    directory = os.path.join(build_root(), name)
    built = os.path.join(directory, name + ".so")
    # a .so without a lock beside it is complete: cpp_extension takes the lock before it starts writing
    if os.path.exists(built) and not os.path.exists(os.path.join(directory, "lock")):
        try:
            return _import(name, built), None
        except ImportError as e:
            return None, f"the built extension {built} does not import: {e}"
    cxx = os.environ.get("CXX", "c++")
    if shutil.which(cxx) is None:
        return None, f"no C++ compiler: '{cxx}' is not on PATH (install g++ or clang++, or set CXX)"
    from torch.utils.cpp_extension import is_ninja_available
    if not is_ninja_available():
        return None, "ninja, which torch.utils.cpp_extension builds with, is not on PATH (pip install ninja)"
    try:
        os.makedirs(directory, exist_ok=True)
        return _build(name, directory), None
    except Exception as e:  # noqa: BLE001 - any compiler, linker or import failure: the Python path runs instead
        return None, f"building {SOURCE} failed: {_clip(str(e))}"


def _clip(output, head=6000, tail=1500):
    # g++ lists every candidate overload after an error: the first error and the end are what explain it
    if len(output) <= head + tail:
        return output
    return output[:head] + f"\n[... {len(output) - head - tail} characters ...]\n" + output[-tail:]


def load():
    """The compiled extension module, building it on the first call of a new source or torch; None when it
    cannot be had (``reason()`` says why). Never raises: a failed build leaves the pure-Python backend."""
    with _lock:
        if "module" not in _result:
            _result["module"], _result["reason"] = _load()
        return _result["module"]


def reason():
    """Why ``load()`` returned None: disabled, no compiler, no ninja, or the build failed (with the compiler's
    output). None when the extension is loaded or ``load()`` has not run."""
    return _result.get("reason")


def _disable(why):
    """Record that the loaded extension could not be used after all (its registration was refused)."""
    with _lock:
        _result["module"], _result["reason"] = None, why
