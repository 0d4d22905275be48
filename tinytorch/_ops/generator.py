"""The random number generator (``torch.Generator``): a Mersenne Twister seeded as PyTorch's CPU generator,
the default generator, and the seeding functions (manual_seed, seed, initial_seed, get/set_rng_state).
The samplers that draw from it are in ``random.py``."""
import math

import numpy as np

from .._modes import _lazy

from .. import _dtype as _dt
from ..device import as_device
from .creation import tensor

try:  # the native bulk draws (tinytorch/csrc/random.cpp); the NumPy path below gives the same numbers
    from ..backends.cpu.native import _C as _native_C
except ImportError:  # pragma: no cover - the cpu backend always imports
    _native_C = None
_NATIVE_MIN_DRAWS = 4096  # below this, reading and writing NumPy's generator state costs more than it saves


def _fma64(a, b, c):
    """a * b + c for float64 arrays with (almost always) one rounding, as a fused multiply-add: Dekker's exact
    product and Knuth's exact sum, then one final addition. PyTorch's compiled normal kernels fuse this way."""
    a, b, c = np.asarray(a, np.float64), np.asarray(b, np.float64), np.asarray(c, np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        p = a * b
        split = 134217729.0  # 2^27 + 1: Veltkamp's split into 26-bit halves
        ah = a * split
        ah = ah - (ah - a)
        bh = b * split
        bh = bh - (bh - b)
        e = ((ah * bh - p) + ah * (b - bh) + (a - ah) * bh) + (a - ah) * (b - bh)  # a * b = p + e exactly
        s = p + c
        z = s - p
        t = (p - (s - z)) + (c - z)  # p + c = s + t exactly
        r = s + (t + e)
        # an infinite operand or product (or a split that overflows) leaves the error terms NaN: the fused
        # result is then the plain one (inf * x + c is inf as a hardware fma gives it)
        return np.where(np.isnan(r) & ~np.isnan(s), s, r)


def _fma32(a, b, c):
    """float32 a * b + c rounded once, as the fused multiply-add of PyTorch's AVX2 kernels: the product is exact in
    double; the sum is rounded to odd in double (its error term from Knuth's two-sum decides the last bit), which
    makes the final rounding to float32 correct (53 >= 2 * 24 + 2 bits)."""
    a, b, c = (np.asarray(v, np.float32).astype(np.float64) for v in (a, b, c))
    p = a * b
    s = p + c
    z = s - p
    t = (p - (s - z)) + (c - z)
    even = (s.view(np.uint64) & np.uint64(1)) == 0
    s = np.where((t != 0) & even, np.nextafter(s, np.where(t > 0, np.inf, -np.inf)), s)
    return s.astype(np.float32)


def _f32(op, a, b):
    return op(a, b, dtype=np.float32)


_LOG_P = (7.0376836292E-2, -1.1514610310E-1, 1.1676998740E-1, -1.2420140846E-1, 1.4249322787E-1,
          -1.6668057665E-1, 2.0000714765E-1, -2.4999993993E-1, 3.3333331174E-1)


def _avx2_log(x):
    """float32 natural log as PyTorch's AVX2 normal kernel computes it (Pommier's Cephes-based log256_ps from
    avx_mathfun.h): mantissa in [sqrt(1/2), sqrt(2)), a degree-9 polynomial, with the multiply-adds fused as GCC
    contracts them. Bit for bit, not the correctly rounded log."""
    f = np.float32
    x = np.asarray(x, f)
    invalid = x <= 0
    bits = np.maximum(x, np.array(0x00800000, np.uint32).view(f)).view(np.uint32)
    e = ((bits >> np.uint32(23)).astype(np.int32) - 126).astype(f)
    m = ((bits & np.uint32(0x807FFFFF)) | np.uint32(0x3F000000)).view(f)  # mantissa in [0.5, 1)
    small = m < f(0.707106781186547524)
    x = _f32(np.add, _f32(np.subtract, m, f(1)), np.where(small, m, f(0)))
    e = _f32(np.subtract, e, np.where(small, f(1), f(0)))
    z = _f32(np.multiply, x, x)
    y = np.full_like(x, f(_LOG_P[0]))
    for c in _LOG_P[1:]:
        y = _fma32(y, x, f(c))
    y = _f32(np.multiply, y, x)
    y = _fma32(y, z, _f32(np.multiply, e, f(-2.12194440e-4)))
    y = _fma32(-z, f(0.5), y)
    x = _fma32(e, f(0.693359375), _f32(np.add, x, y))
    return np.where(invalid, f(np.nan), x)


def _avx2_sincos(x):
    """float32 (sin x, cos x) as PyTorch's AVX2 normal kernel (sincos256_ps of avx_mathfun.h, Cephes' sinf/cosf:
    reduction by pi/4 in three parts, two short polynomials), multiply-adds fused as GCC contracts them."""
    f = np.float32
    x = np.asarray(x, f)
    neg = np.signbit(x)
    x = np.abs(x)
    j = _f32(np.multiply, x, f(1.27323954473516)).astype(np.int32)
    j = (j + 1) & ~1
    y = j.astype(f)
    sin_neg = neg ^ ((j & 4) != 0)
    cos_neg = (~(j - 2) & 4) != 0
    first = (j & 2) == 0
    for d in (-0.78515625, -2.4187564849853515625e-4, -3.77489497744594108e-8):
        x = _fma32(y, f(d), x)
    z = _f32(np.multiply, x, x)
    yc = _fma32(_fma32(np.full_like(x, f(2.443315711809948E-005)), z, f(-1.388731625493765E-003)), z,
                f(4.166664568298827E-002))
    yc = _f32(np.multiply, yc, z)
    yc = _f32(np.add, _fma32(yc, z, -_f32(np.multiply, z, f(0.5))), f(1))
    ys = _fma32(_fma32(np.full_like(x, f(-1.9515295891E-4)), z, f(8.3321608736E-3)), z, f(-1.6666654611E-1))
    ys = _fma32(_f32(np.multiply, ys, z), x, x)
    s, c = np.where(first, ys, yc), np.where(first, yc, ys)
    return np.where(sin_neg, -s, s), np.where(cos_neg, -c, c)


def _normal16_avx2(d, mean, std):
    """Box-Muller on rows of 16 float32 uniforms in place (8 cosines then 8 sines), as PyTorch's
    normal_fill_16_AVX2."""
    f = np.float32
    radius = np.sqrt(_f32(np.multiply, f(-2), _avx2_log(_f32(np.subtract, f(1), d[:, :8]))))
    s, c = _avx2_sincos(_f32(np.multiply, f(2 * math.pi), d[:, 8:]))
    d[:, :8] = _fma32(_f32(np.multiply, radius, c), f(std), f(mean))
    d[:, 8:] = _fma32(_f32(np.multiply, radius, s), f(std), f(mean))


def _mt19937_key(seed):
    """The 624-word state of C++'s std::mt19937 seeded with the low 32 bits of ``seed`` (init_genrand), which
    is how PyTorch's CPU generator seeds its Mersenne Twister."""
    key = [seed & 0xFFFFFFFF]
    for i in range(1, 624):
        prev = key[-1]
        key.append((1812433253 * (prev ^ (prev >> 30)) + i) & 0xFFFFFFFF)
    return np.array(key, dtype=np.uint32)


class Generator:
    """A random number generator (``torch.Generator``): a Mersenne Twister (MT19937) seeded as PyTorch's CPU
    generator, whose raw 32-bit stream is NumPy's ``MT19937`` bit generator.

    Every sampler turns that stream into numbers with PyTorch's own CPU transformations (rand/uniform_,
    randn/normal_ including the AVX2 kernel's float32 arithmetic for 16+ values, randint/random_, randperm,
    bernoulli and dropout, exponential_/geometric_/cauchy_/log_normal_, poisson, multinomial), so after the
    same ``manual_seed`` they give PyTorch's numbers bit for bit (tests/test_random_streams.py). Gamma,
    binomial and the distributions' samplers built on NumPy's algorithms are reproducible, not identical.
    """

    def __init__(self, device="cpu"):
        self.device = as_device(device)
        self.manual_seed(67280421310721)

    def manual_seed(self, seed):
        seed = int(seed)
        if seed < 0:
            seed &= (1 << 64) - 1
        self._seed = seed
        self._bits = np.random.MT19937()
        self._bits.state = {"bit_generator": "MT19937", "state": {"key": _mt19937_key(seed), "pos": 624}}
        self._rng = np.random.Generator(self._bits)
        self._next_normal = None  # PyTorch's normal_distribution<double> caches the second Box-Muller value
        return self

    def seed(self):
        s = int(np.random.SeedSequence().entropy % (1 << 63))
        self.manual_seed(s)
        return s

    def initial_seed(self):
        return self._seed

    def get_state(self):
        import json
        st = self._bits.state
        doc = {"key": st["state"]["key"].tolist(), "pos": st["state"]["pos"], "next_normal": self._next_normal,
               "seed": self._seed}
        return tensor(list(json.dumps(doc).encode()), dtype=_dt.uint8)

    def set_state(self, state):
        import json
        doc = json.loads(bytes(state.tolist()).decode())
        self._bits.state = {"bit_generator": "MT19937",
                            "state": {"key": np.array(doc["key"], dtype=np.uint32), "pos": doc["pos"]}}
        self._next_normal, self._seed = doc["next_normal"], doc["seed"]
        return self

    # ---- PyTorch's transformations of the 32-bit stream (ATen's DistributionsHelper / TransformationHelper)
    def _u32(self, n):
        return self._bits.random_raw(n).astype(np.uint64)

    def _u64(self, n):
        r = self._u32(2 * n).reshape(n, 2)  # random64(): the first draw is the high word
        return (r[:, 0] << np.uint64(32)) | r[:, 1]

    def _raw32_native(self, n):
        """n 32-bit draws as a uint32 array, advanced by the native Mersenne Twister on the NumPy bit generator's
        state (the same stream as ``random_raw``, without its per-word cost)."""
        st = self._bits.state
        key = np.array(st["state"]["key"], dtype=np.uint32)
        words, pos = _native_C.mt19937_raw(key, int(st["state"]["pos"]), n)
        self._bits.state = {"bit_generator": "MT19937", "state": {"key": key, "pos": pos}}
        return words

    def _bernoulli_scaled(self, n, q, dtype):
        """Dropout's noise: n draws of bernoulli(q) divided by q, in ``dtype`` (np.float32 or np.float64), in one
        native pass over the stream: the values of ``bernoulli`` with a scalar probability (one double uniform
        per element, kept below q) followed by ``/ q`` in ``dtype``, as PyTorch's dropout computes its noise. None
        where there is no native pass (no extension, another dtype, fewer than ``_NATIVE_MIN_DRAWS`` draws)."""
        if _native_C is None or n < _NATIVE_MIN_DRAWS or dtype not in (np.float32, np.float64):
            return None
        st = self._bits.state
        key = np.array(st["state"]["key"], dtype=np.uint32)
        noise, pos = _native_C.bernoulli_scaled(key, int(st["state"]["pos"]), n, float(q), dtype == np.float64)
        self._bits.state = {"bit_generator": "MT19937", "state": {"key": key, "pos": pos}}
        return noise

    def _uniform(self, n, dtype, low=0.0, high=1.0):
        """n samples of U[low, high) in ``dtype`` (a NumPy float type): the top mantissa-width bits of one
        draw scaled by 2^-digits, then x * (high - low) + low in the accumulation type (float for float32 and
        half types, double for float64), as ``at::uniform_real_distribution``."""
        if _native_C is not None and n >= _NATIVE_MIN_DRAWS and (dtype != np.float64 or float(low) == 0.0):
            # (the native double path rounds x * range + low twice, which is PyTorch's fused result only when
            # low is 0)
            if dtype == np.float64:
                return _native_C.uniform_from_raw(self._raw32_native(2 * n), True, float(low),
                                                  float(high) - float(low))
            lo, hi = np.float32(low), np.float32(high)  # from/to in float, the reduced types' opmath type
            r = _native_C.uniform_from_raw(self._raw32_native(n), False, float(lo), float(hi - lo))
            return r if dtype == np.float32 else self._reduced(r, dtype, lo, hi)
        if dtype == np.float64:
            x = (self._u64(n) & np.uint64((1 << 53) - 1)).astype(np.float64) * 2.0 ** -53
            return _fma64(x, float(high) - float(low), float(low))
        digits = 24  # float16 / bfloat16 draw in float (their opmath type) and round, as PyTorch's CPU kernel
        x = (self._u32(n) & np.uint64((1 << digits) - 1)).astype(np.float64) * 2.0 ** -digits
        lo, hi = np.float32(low), np.float32(high)
        # x * (hi - lo) + lo with one rounding, as the fused multiply-add PyTorch's compiled loop uses
        r = (x * np.float64(hi - lo) + np.float64(lo)).astype(np.float32)
        return r if dtype == np.float32 else self._reduced(r, dtype, lo, hi)

    @staticmethod
    def _reduced(r, dtype, lo, hi):
        """float32 uniforms rounded to float16 / bfloat16; one that rounds up to ``hi`` becomes ``lo``, as
        PyTorch's CPU uniform_ keeps [from, to) half-open for the reduced types."""
        r = r.astype(dtype)
        return np.where(r == dtype(hi), dtype(lo), r)

    def _normal(self, n, dtype, mean=0.0, std=1.0):
        """n samples of N(mean, std^2) in ``dtype``, as ATen's CPU normal kernel: 16 or more values are filled
        with uniforms, then Box-Muller on blocks of 16 (8 cos, 8 sin; a last partial block is redrawn and
        recomputed over the final 16); fewer come one by one from normal_distribution<double>."""
        if n >= 16:
            if dtype == np.float64:
                # up to 2^16 values the C library's log/sin/cos (as PyTorch's std:: calls; NumPy's vectorized
                # ones may differ in the last bit), NumPy's beyond
                small = n <= 1 << 16
                log, cos, sin = (np.frompyfunc(f, 1, 1) for f in (math.log, math.cos, math.sin)) if small else \
                    (np.log, np.cos, np.sin)
                data = self._uniform(n, np.float64)

                def fill16(d):  # d: (blocks, 16), 8 cosines then 8 sines per block
                    radius = np.sqrt(-2 * log(1 - d[:, :8]).astype(np.float64))
                    theta = 2.0 * math.pi * d[:, 8:]
                    c, s_ = cos(theta).astype(np.float64), sin(theta).astype(np.float64)
                    d[:, :8] = _fma64(radius * c, std, mean)
                    d[:, 8:] = _fma64(radius * s_, std, mean)
            elif dtype == np.float32:
                # PyTorch's AVX2 kernel (x86 always uses it for normal_: its AVX-512 build has no normal kernel)
                data = self._uniform(n, np.float32)

                def fill16(d):
                    _normal16_avx2(d, mean, std)
            else:
                # float16 / bfloat16: the AVX2 float kernel on a float buffer of the whole blocks only, then a
                # last block of 16 fresh uniforms for the tail (the buffer holds no tail draws), rounded to dtype
                full = n - n % 16
                data = np.empty(n, np.float32)
                data[:full] = self._uniform(full, np.float32)
                _normal16_avx2(data[:full].reshape(-1, 16), mean, std)
                if n % 16:
                    tail = self._uniform(16, np.float32).reshape(1, 16)
                    _normal16_avx2(tail, mean, std)
                    data[n - 16:] = tail[0]
                return data.astype(dtype)
            full = n - n % 16
            fill16(data[:full].reshape(-1, 16))
            if n % 16:
                tail = self._uniform(16, dtype).astype(data.dtype)
                fill16(tail.reshape(1, 16))
                data[n - 16:] = tail
            return data.astype(dtype)
        return self._normal_serial(n, mean, std).astype(dtype)

    def _normal_serial(self, n, mean=0.0, std=1.0):
        """n doubles from ATen's normal_distribution<double>, one at a time: Box-Muller on two double uniforms,
        the sine kept for the next call (until the next manual_seed), then z * std + mean fused."""
        out = np.empty(n, np.float64)
        for i in range(n):
            if self._next_normal is not None:
                out[i] = self._next_normal
                self._next_normal = None
                continue
            u1, u2 = self._uniform(2, np.float64)
            r = math.sqrt(-2.0 * math.log1p(-u2))
            theta = 2.0 * math.pi * u1
            self._next_normal = r * math.sin(theta)
            out[i] = r * math.cos(theta)
        return _fma64(out, std, mean)

    def _randint(self, n, low, high):
        """n integers uniform on [low, high): one 32-bit draw modulo the range (64-bit for ranges of 2^28 and
        more, which keeps the modulo bias small), as ``uniform_int_from_to_distribution``."""
        rng = high - low
        raw = self._u64(n) if rng >= 1 << 28 else self._u32(n)
        return (raw % np.uint64(rng)).astype(np.int64) + low if rng < 1 << 63 else \
            np.array([int(v) % rng + low for v in raw], dtype=np.int64)

    def _randperm(self, n):
        """PyTorch's CPU randperm: a Fisher-Yates pass swapping i with i + (draw % (n - i))."""
        perm = np.arange(n, dtype=np.int64)
        if n < 2:
            return perm
        big = n >= (1 << 32) // 20  # PyTorch switches to 64-bit draws for large n
        raw = self._u64(n - 1) if big else self._u32(n - 1)
        z = (raw % np.arange(n, 1, -1, dtype=np.uint64)).astype(np.int64) + np.arange(n - 1)
        p = perm.tolist()
        for i, j in enumerate(z.tolist()):
            p[i], p[j] = p[j], p[i]
        return np.array(p, dtype=np.int64)


default_generator = Generator()


def manual_seed(seed):
    """Seed the default generator (and so every random op that is given no ``generator``)."""
    return default_generator.manual_seed(seed)


def seed():
    return default_generator.seed()


def initial_seed():
    return default_generator.initial_seed()


def get_rng_state():
    return default_generator.get_state()


def set_rng_state(new_state):
    """Restore the default generator's state from ``get_rng_state()``'s ByteTensor (``torch.set_rng_state``)."""
    default_generator.set_state(new_state)


def _rng(generator):
    if _lazy.active:  # a draw on the host inside a compiled function (compiler/lazy.py)
        _lazy.recording.host_draw()
    return (generator or default_generator)._rng


def _gen(generator):
    if _lazy.active:
        _lazy.recording.host_draw()
    return generator or default_generator


__all__ = ["Generator", "default_generator", "manual_seed", "seed", "initial_seed", "get_rng_state", "set_rng_state"]
