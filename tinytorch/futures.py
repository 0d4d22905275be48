"""``torch.futures``: a ``Future`` holding the result of an asynchronous operation (a collective's ``Work``, a DDP
communication hook), with callbacks chained by ``then``.

Source: PyTorch's ``torch/futures/__init__.py`` (the Python face of ``c10::ivalue::Future``). A Future is completed
once, by ``set_result`` or ``set_exception``; ``wait`` blocks the calling thread until then (threads of an
in-process process group complete each other's futures), and ``value`` returns the result without waiting.
"""
import threading

__all__ = ["Future", "collect_all", "wait_all"]


class Future:
    """A value that becomes available later (``torch.futures.Future``).

    ``devices`` is accepted for PyTorch's signature (CPU futures only here). ``wait()`` blocks until the future is
    completed and returns its value, or raises the exception it was completed with; ``value()`` does the same
    without blocking (RuntimeError on a future not yet completed). ``then(cb)`` returns a new Future completed
    with ``cb(self)`` once this one is done;
    ``add_done_callback(cb)`` runs ``cb(self)`` on completion and returns nothing. ``set_result`` twice raises
    RuntimeError ("Future can only be marked completed once")."""

    def __init__(self, *, devices=None):
        self._cond = threading.Condition()
        self._done = False
        self._value = None
        self._exc = None
        self._callbacks = []
        # a Work that completes this future when waited on (MPI progresses only inside its calls)
        self._driver = None

    def done(self):
        """True once the future holds a value or an exception."""
        if not self._done and self._driver is not None:
            self._driver.is_completed()
        return self._done

    def wait(self):
        """Block until completed; return the value, or raise the exception set on the future."""
        if not self._done and self._driver is not None:
            self._driver.wait()
        with self._cond:
            while not self._done:
                self._cond.wait()
        if self._exc is not None:
            raise self._exc
        return self._value

    def value(self):
        """The value of a completed future (raises its exception, if it holds one)."""
        if not self.done():
            raise RuntimeError("Future.value() called before the future is completed")
        if self._exc is not None:
            raise self._exc
        return self._value

    def _finish(self, value, exc):
        with self._cond:
            if self._done:
                raise RuntimeError("Future can only be marked completed once.")
            self._value, self._exc, self._done = value, exc, True
            callbacks, self._callbacks = self._callbacks, []
            self._cond.notify_all()
        for cb in callbacks:
            cb(self)

    def set_result(self, result):
        """Complete the future with ``result``; runs the callbacks added so far, in order."""
        self._finish(result, None)

    def set_exception(self, result):
        """Complete the future with the exception ``result`` (an Exception instance; TypeError otherwise):
        ``wait``/``value`` raise it."""
        if not isinstance(result, BaseException):
            raise TypeError(f"set_exception expected an exception, got {type(result).__name__}")
        self._finish(None, result)

    def add_done_callback(self, callback):
        """Run ``callback(self)`` once the future completes (at once when it already has)."""
        with self._cond:
            if not self._done:
                self._callbacks.append(callback)
                return
        callback(self)

    def then(self, callback):
        """A new Future completed with ``callback(self)`` when this one completes; an exception raised by the
        callback completes the new future with that exception."""
        nxt = Future()
        nxt._driver = self._driver if not self._done else None

        def run(fut):
            try:
                value = callback(fut)
            except Exception as e:  # delivered to whoever waits on the chained future, as PyTorch does
                nxt.set_exception(e)
                return
            nxt.set_result(value)
        self.add_done_callback(run)
        return nxt


def collect_all(futures):
    """A Future completed with the list of ``futures`` once they are all completed."""
    out = Future()
    futures = list(futures)
    left = [len(futures)]
    lock = threading.Lock()
    if not futures:
        out.set_result([])
        return out

    def one(_):
        with lock:
            left[0] -= 1
            last = left[0] == 0
        if last:
            out.set_result(futures)
    for f in futures:
        f.add_done_callback(one)
    return out


def wait_all(futures):
    """Wait for every future and return their values (the first exception met is raised)."""
    return [f.wait() for f in futures]
