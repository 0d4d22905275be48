"""CUDA graphs: the kernels of a region captured once from the device's stream and replayed with one launch
(``torch.cuda.CUDAGraph`` / ``torch.cuda.graph``), and the compiler's ``mode="reduce-overhead"`` on this device.

Capture records, it does not run: between ``capture_begin`` and ``capture_end`` every launch, cuBLAS call and
device copy on the stream becomes a node of the graph, and ``replay`` runs them all. Memory follows PyTorch's
private pools: blocks allocated while capturing belong to the graph's pool (a block freed during the capture is
reused inside it; after it, a tensor made during the capture keeps its block until it dies, when the block goes
back to the graph's pool, never to the device's), so the addresses baked into the graph stay the graph's. A host
read or write (``.item()``, ``.cpu()``, an upload) cannot be captured: it raises RuntimeError, as CUDA's
"operation not permitted when stream is capturing" (``runtime.CaptureError``). A kernel whose result the host
checks (``nll_loss``'s target bounds) registers the check with the capture instead; ``replay`` runs it after the
launch, so a bad target raises PyTorch's error there.
"""
import os

from . import runtime as _rt


def _device(index):
    from ...device import get_backend
    return get_backend("cuda").dev_for(index)


class _Pool:
    """A graph's private pool: {block size: free blocks}, and whether its graph is gone (the device's
    ``graph_blocks`` maps each block the pool owns to it)."""

    def __init__(self):
        self.free, self.orphan = {}, False
        # host-side checks of kernels captured into the graph (nll_loss's target bounds), run after each replay
        self.checks = []


class CUDAGraph:
    """One captured graph of the device's stream (``torch.cuda.CUDAGraph``): ``capture_begin()``, the work,
    ``capture_end()``, then ``replay()`` as often as wanted; ``reset()`` destroys it. The tensors the work read
    and wrote are baked in by address: replays read the inputs' current values and overwrite the outputs."""

    def __init__(self, device=None):
        self._dev = _device(0 if device is None else device)
        self._graph = self._exec = None
        self._pool = None
        self._checks = []

    def capture_begin(self):
        d = self._dev
        if d.capturing is not None:
            raise RuntimeError("CUDAGraph.capture_begin: the stream is already being captured")
        d.finish()  # work queued before the capture runs now, not in the graph
        self._pool = _Pool()
        d.capturing = self._pool
        cu = _rt.cu
        try:
            _rt._check((cu.cuStreamBeginCapture(d.stream, cu.CUstreamCaptureMode.CU_STREAM_CAPTURE_MODE_RELAXED)[0],
                        None), "cuStreamBeginCapture")
        except RuntimeError:
            d.capturing = None
            raise

    def capture_end(self):
        d = self._dev
        cu = _rt.cu
        d.capturing = None
        self._graph = _rt._check(cu.cuStreamEndCapture(d.stream), "cuStreamEndCapture")
        self._exec = _rt._check(cu.cuGraphInstantiate(self._graph, 0), "cuGraphInstantiate")
        self._checks = list(self._pool.checks)

    def abort(self):
        """End a capture that failed: the stream leaves capture mode, the partial graph is dropped."""
        d = self._dev
        if d.capturing is self._pool:
            d.capturing = None
            res = _rt.cu.cuStreamEndCapture(d.stream)
            if int(res[0]) == 0 and res[1] is not None:
                _rt.cu.cuGraphDestroy(res[1])
        self._release_pool()

    def replay(self):
        """Run the captured work once more, on the device's stream (asynchronously, as any launch, unless a
        captured kernel has a host-side check: those read its result after the launch and raise as eagerly)."""
        if self._exec is None:
            raise RuntimeError("CUDAGraph.replay: nothing was captured")
        _rt._check((_rt.cu.cuGraphLaunch(self._exec, self._dev.stream)[0], None), "cuGraphLaunch")
        for check in self._checks:
            check()

    def reset(self):
        """Destroy the graph; its pool's blocks go back to the device as the tensors using them die."""
        if self._exec is not None:
            self._dev.finish()
            _rt.cu.cuGraphExecDestroy(self._exec)
            _rt.cu.cuGraphDestroy(self._graph)
            self._exec = self._graph = None
        self._release_pool()

    def _release_pool(self):
        pool = self._pool
        if pool is not None:
            pool.orphan = True
            d = self._dev
            for size, blocks in pool.free.items():
                for p in blocks:
                    d.graph_blocks.pop(p, None)
                    d.pool.setdefault(size, []).append(p)
            pool.free.clear()
            self._pool = None

    def __del__(self):
        try:
            self.reset()
        except Exception:  # noqa: BLE001 - interpreter shutdown: the driver may be gone already
            pass


class graph:
    """``with torch.cuda.graph(g):`` captures the block's device work into ``g`` (nothing runs until
    ``g.replay()``). An exception inside the block ends the capture and drops the graph."""

    def __init__(self, cuda_graph, pool=None, stream=None, capture_error_mode="relaxed"):
        self.g = cuda_graph

    def __enter__(self):
        self.g.capture_begin()
        return self.g

    def __exit__(self, typ, exc, tb):
        if typ is None:
            self.g.capture_end()
        else:
            self.g.abort()
        return False


def graphed(run):
    """``run(ext, nodes, learn)`` (a compiled graph's plan) replayed through a CUDA graph: the first call runs it,
    the second captures and replays it, later calls replay while every tensor it reads is at the captured
    address; an input at another address (a new batch) is copied into the captured one first and back after
    (written inputs stay right). A plan that cannot be captured (it reads the host) keeps running as is.
    ``TINYTORCH_CUDA_GRAPHS=0`` turns this off."""
    if os.environ.get("TINYTORCH_CUDA_GRAPHS", "1") == "0":
        return run
    state = {"calls": 0, "g": None, "ext": None, "out": None, "off": False}

    def natives(ext):
        return [t._native() for t in ext]

    def graph_run(ext, nodes=None, learn=None):
        if state["off"] or learn is not None:
            return run(ext, nodes, learn)
        g = state["g"]
        if g is None:
            state["calls"] += 1
            if state["calls"] < 2:
                return run(ext, nodes, learn)  # a warm-up: kernels built, the allocator's pools filled
            if not ext:
                state["off"] = True
                return run(ext, nodes, learn)
            g = CUDAGraph(ext[0]._native().buf.dev.index)
            try:
                g.capture_begin()
                out = run(ext, nodes, learn)
                g.capture_end()
            except Exception:  # noqa: BLE001 - a host read, an unsupported call: no graph for this plan
                g.abort()
                state["off"] = True
                return run(ext, nodes, learn)
            # the captured call's inputs stay alive with the graph: their addresses are baked in
            state["g"], state["ext"], state["out"] = g, natives(ext), out
            g.replay()
            return out
        captured = state["ext"]
        if len(ext) != len(captured):
            return run(ext, nodes, learn)
        now = natives(ext)
        moved = [(c, a) for c, a in zip(captured, now) if (a.buf.mem, a.offset) != (c.buf.mem, c.offset)]
        for c, a in moved:
            if c.shape != a.shape or c.dtype is not a.dtype or c.strides != a.strides:
                return run(ext, nodes, learn)
        be = ext[0]._storage.backend if ext else None
        for c, a in moved:
            be.copy_(c, a)
        g.replay()
        for c, a in moved:
            be.copy_(a, c)
        return state["out"]
    return graph_run
