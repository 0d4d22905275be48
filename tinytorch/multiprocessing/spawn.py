"""``torch.multiprocessing.spawn``: start ``nprocs`` processes running ``fn(i, *args)`` and turn the first failure
into an exception in the parent (the others are terminated). Source: PyTorch's ``torch/multiprocessing/spawn.py``."""
import multiprocessing
import multiprocessing.connection
import os
import pickle
import signal
import tempfile
import time
import traceback
import warnings

__all__ = ["spawn", "start_processes", "ProcessContext", "SpawnContext", "ProcessException",
           "ProcessRaisedException", "ProcessExitedException"]


class ProcessException(Exception):
    """A spawned process failed: ``error_index`` is its index, ``pid`` its process id."""

    __slots__ = ["error_index", "error_pid"]

    def __init__(self, msg, error_index, pid):
        super().__init__(msg)
        self.msg = msg
        self.error_index = error_index
        self.pid = pid

    def __reduce__(self):
        return type(self), (self.msg, self.error_index, self.pid)


class ProcessRaisedException(ProcessException):
    """A spawned process raised an exception; the message holds its traceback."""


class ProcessExitedException(ProcessException):
    """A spawned process died from a signal or exited with a non-zero code."""

    __slots__ = ["exit_code"]

    def __init__(self, msg, error_index, error_pid, exit_code, signal_name=None):
        super().__init__(msg, error_index, error_pid)
        self.exit_code = exit_code
        self.signal_name = signal_name

    def __reduce__(self):
        return type(self), (self.msg, self.error_index, self.pid, self.exit_code, self.signal_name)


def _wrap(fn, i, args, error_file):
    try:
        fn(i, *args)
    except KeyboardInterrupt:
        pass  # the parent is terminating the group
    except Exception:  # noqa: BLE001 -- any failure is reported to the parent through the error file
        with open(error_file, "wb") as fh:
            pickle.dump(traceback.format_exc(), fh)
        raise SystemExit(1) from None


class ProcessContext:
    """The processes ``start_processes`` started; ``join()`` waits for them and raises on the first failure."""

    def __init__(self, processes, error_files):
        self.error_files = error_files
        self.processes = processes
        self.sentinels = {p.sentinel: i for i, p in enumerate(processes)}

    def pids(self):
        return [int(p.pid) for p in self.processes]

    def join(self, timeout=None, grace_period=None):
        """Wait up to ``timeout`` seconds for one process to end. True once all ended successfully, False while
        some still run; on a failure, terminate the others (after ``grace_period`` seconds) and raise
        ``ProcessRaisedException`` or ``ProcessExitedException``."""
        if not self.sentinels:
            return True
        ready = multiprocessing.connection.wait(self.sentinels.keys(), timeout=timeout)
        error_index = None
        for sentinel in ready:
            index = self.sentinels.pop(sentinel)
            process = self.processes[index]
            process.join()
            if process.exitcode != 0:
                error_index = index
                break
        if error_index is None:
            return not self.sentinels
        for process in self.processes:
            if process.is_alive():
                process.terminate()
        deadline = time.monotonic() + (grace_period or 0)
        for process in self.processes:
            process.join(max(deadline - time.monotonic(), 0) if grace_period else None)
            if process.is_alive():
                process.kill()
                process.join()
        failed = self.processes[error_index]
        error_file = self.error_files[error_index]
        if not os.path.exists(error_file) or os.path.getsize(error_file) == 0:
            exitcode = failed.exitcode
            if exitcode < 0:
                try:
                    name = signal.Signals(-exitcode).name
                except ValueError:
                    name = f"<Unknown signal {-exitcode}>"
                raise ProcessExitedException(f"process {error_index:d} terminated with signal {name}",
                                             error_index=error_index, error_pid=failed.pid, exit_code=exitcode,
                                             signal_name=name)
            raise ProcessExitedException(f"process {error_index:d} terminated with exit code {exitcode:d}",
                                         error_index=error_index, error_pid=failed.pid, exit_code=exitcode)
        with open(error_file, "rb") as fh:
            original_trace = pickle.load(fh)
        msg = f"\n\n-- Process {error_index:d} terminated with the following error:\n{original_trace}"
        raise ProcessRaisedException(msg, error_index, failed.pid)


class SpawnContext(ProcessContext):
    """The context ``spawn(..., join=False)`` returns (PyTorch keeps the name for compatibility)."""


def start_processes(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
    """Start ``nprocs`` processes with ``start_method`` ("spawn", "fork" or "forkserver"), each running
    ``fn(i, *args)``. ``join=True``: wait for all and return None; else return the ``ProcessContext``."""
    mp = multiprocessing.get_context(start_method)
    error_files, processes = [], []
    for i in range(nprocs):
        fd, error_file = tempfile.mkstemp(suffix=".pickle")
        os.close(fd)
        os.unlink(error_file)  # the child creates it only when it fails
        process = mp.Process(target=_wrap, args=(fn, i, args, error_file), daemon=daemon)
        process.start()
        error_files.append(error_file)
        processes.append(process)
    context = ProcessContext(processes, error_files)
    if not join:
        return context
    try:
        while not context.join():
            pass
    finally:
        for f in error_files:
            if os.path.exists(f):
                os.unlink(f)


def spawn(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
    """``start_processes`` with the "spawn" start method (a warning, as PyTorch's, for another method)."""
    if start_method != "spawn":
        warnings.warn(f"This method only supports start_method=spawn (got: {start_method}).\n"
                      "To use a different start_method use:\n\t\t torch.multiprocessing.start_processes(...)",
                      FutureWarning, stacklevel=2)
    return start_processes(fn, args, nprocs, join, daemon, start_method="spawn")
