"""Random numbers, bit for bit those of PyTorch 2.13's CPU generator on x86-64.

PyTorch makes a random number in three steps, and so does this module:

1. bits: the next 32-bit MT19937 word, or a 64-bit word made of two (``generator.Generator``);
2. a uniform in [0, 1): the low 24 bits of one word for float32, the low 53 bits of a 64-bit word for
   float64, times 2**-24 or 2**-53;
3. a distribution: normals by Box-Muller, integers by a modulo, Bernoulli draws by ``uniform < p``.

Repeating PyTorch's last bit also takes PyTorch's arithmetic, which ``_random_math`` copies in NumPy:

- its compiled kernels fuse ``a * b + c`` into one fused multiply-add, rounded once (``_fma``);
- large float32 normals go through the AVX2 polynomial log, sin and cos of ``avx_mathfun.h``
  (``_avx2_log``, ``_avx2_sincos``), which PyTorch runs on any x86-64 CPU with AVX2;
- float64 log, sin, cos come from the C library, as in Python's ``math``; NumPy's own versions differ
  in the last bit for a fraction of a percent of inputs (``_c_log`` and friends).

On x86-64 CPUs without AVX2, and on ARM, PyTorch computes float32 normals of 16 or more values with
other code (and other compilers may fuse differently), so there its last bits can differ from these.

Each function draws all its words at once and transforms them with whole-array NumPy operations. The
one exception is ``randperm``: a Fisher-Yates shuffle swaps one pair at a time, in order.
"""
import math

import numpy as np

from . import dtype as dt
from .creation import _check_dtype, _finish, _shape, _size_and
from .device import check_device
from .errors import broadcast_shape
from .generator import Generator
from .inplace import check_inplace
from .meta import is_meta, meta_array
from .random_math import _F32, _avx2_log, _avx2_sincos, _c_cos, _c_exp, _c_log, _c_log1p, _c_sin, _c_tan, _fma
from .tensor import Tensor

__all__ = ["Generator", "bernoulli", "default_generator", "get_rng_state", "initial_seed", "manual_seed",
           "multinomial", "normal", "rand", "rand_like", "randint", "randint_like", "randn", "randn_like",
           "randperm", "seed", "set_rng_state"]

# PyTorch seeds its default generator from /dev/urandom at start-up; torch.manual_seed makes it repeatable.
default_generator = Generator()
default_generator.seed()


def manual_seed(seed):
    """Seed the default generator (``int(seed)``, as PyTorch accepts "3" and 3.0); returns it."""
    return default_generator.manual_seed(int(seed))


def seed():
    """Seed the default generator from the operating system's entropy; returns the seed used."""
    return default_generator.seed()


def initial_seed():
    """The seed the default generator was last seeded with (by ``manual_seed``, or from the system at start)."""
    return default_generator.initial_seed()


def get_rng_state():
    """The default generator's state: a uint8 tensor that ``torch.set_rng_state`` also accepts."""
    return default_generator.get_state()


def set_rng_state(new_state):
    """Restores the default generator to ``new_state``, a uint8 tensor from ``get_rng_state()``: the draws that
    follow repeat those that followed when the state was taken."""
    default_generator.set_state(new_state)


# ==================================================================================================
# Samplers: n values of a distribution, in the order PyTorch writes them
# ==================================================================================================

#: (by name: bfloat16's NumPy type is imported on first use, core/dtype.py)
_DIGITS = {"float16": 11, "bfloat16": 8, "float32": 24, "float64": 53}


def _cast(values, np_dtype):
    """``static_cast`` to the tensor's type; C++ reaches float16 through float32."""
    if np_dtype == np.float16 and values.dtype == np.float64:
        values = values.astype(np.float32)
    return values.astype(np_dtype)


def _uniform(gen, n, np_dtype, low=0.0, high=1.0):
    """``uniform_real_distribution``: ``x * (high - low) + low`` with x in [0, 1) from a word's low bits.

    float64 takes 53 bits of a 64-bit word; float32 takes 24 bits of a 32-bit word.
    """
    if np_dtype == np.float64:
        x = (gen._words64(n) & np.uint64(2**53 - 1)).astype(np.float64) * 2.0**-53
        return _fma(x, high - low, low, np.float64)
    x = (gen._words(n) & np.uint64(2**24 - 1)).astype(_F32) * _F32(2.0**-24)
    low, high = _F32(low), _F32(high)
    return _fma(x, high - low, low, np.float32)


def _uniform_kernel(gen, n, np_dtype, low, high):
    """``uniform_`` values: float16 is computed in float32 and rounded; a value that rounds up to ``high``
    becomes ``low``, so the interval stays half-open."""
    values = _cast(_uniform(gen, n, np.float64 if np_dtype == np.float64 else np.float32, low, high), np_dtype)
    high, low = np.asanyarray(high, np_dtype), np.asanyarray(low, np_dtype)
    return np.where(values == high, low, values)


def _box_muller_pairs(gen, n, mean, std):
    """``normal_distribution<double>``, one value per call: Box-Muller makes two, the second is kept.

    A value kept from the previous call is used first. Each pair takes two float64 uniforms u1, u2:
    r = sqrt(-2 log(1 - u2)), and the values are r cos(2 pi u1), then r sin(2 pi u1).
    """
    values = np.empty(n)
    start = 0
    if n and gen._next_double_normal is not None:
        values[0], gen._next_double_normal, start = gen._next_double_normal, None, 1
    pairs = (n - start + 1) // 2
    u = _uniform(gen, 2 * pairs, np.float64).reshape(pairs, 2)
    radius = np.sqrt(-2.0 * _c_log1p(-u[:, 1]))
    theta = 2.0 * math.pi * u[:, 0]
    both = np.stack([radius * _c_cos(theta), radius * _c_sin(theta)], axis=1).reshape(-1)
    values[start:] = both[:n - start]
    if (n - start) % 2:
        gen._next_double_normal = float(both[-1])
    return _fma(values, std, mean, np.float64)


def _box_muller_16(u, mean, std, np_dtype):
    """``normal_fill_16`` on each block of 16 uniforms: u1 = 1 - block[:8], u2 = block[8:]; the
    block becomes the 8 values r cos(2 pi u2), then the 8 values r sin(2 pi u2)."""
    block = u.reshape(-1, 16)
    if np_dtype == np.float64:
        radius = np.sqrt(-2.0 * _c_log(1.0 - block[:, :8]))
        theta = 2.0 * math.pi * block[:, 8:]
        first, second = radius * _c_cos(theta), radius * _c_sin(theta)
    else:
        radius = np.sqrt(_F32(-2) * _avx2_log(_F32(1) - block[:, :8]))
        sin, cos = _avx2_sincos(_F32(2 * math.pi) * block[:, 8:])
        first, second = radius * cos, radius * sin
    values = np.concatenate([first, second], axis=1).reshape(-1)
    return _fma(values, np.asanyarray(std, values.dtype), np.asanyarray(mean, values.dtype), values.dtype)


def _normal(gen, n, np_dtype, mean, std, contiguous):
    """``normal_kernel``: blocks of 16 for contiguous tensors of 16 or more values, else one pair at a time."""
    if n < 16 or not contiguous:
        return _cast(_box_muller_pairs(gen, n, mean, std), np_dtype)
    compute = np.float64 if np_dtype == np.float64 else np.float32
    tail = n % 16
    # float32/float64 first draw a uniform for every value, then 16 more when n is not a multiple of 16,
    # to recompute the last 16 values; float16 draws block by block and skips the uniforms of the tail.
    whole = n if np_dtype != np.float16 else n - tail
    u = _uniform(gen, whole + (16 if tail else 0), compute)
    values = np.empty(n, compute)
    values[:n - tail] = _box_muller_16(u[:n - tail], mean, std, compute)
    if tail:
        values[n - 16:] = _box_muller_16(u[-16:], mean, std, compute)
    return _cast(values, np_dtype)


def _random_from_to(gen, n, span, low):
    """``uniform_int_from_to_distribution``: ``word % span + low``, 64-bit words when span >= 2**28."""
    words = gen._words64(n) if span >= 2**28 else gen._words(n)
    return (words % np.uint64(span) + np.uint64(low % 2**64)).view(np.int64)


_RANDOM_MODULUS = {np.dtype(k): v for k, v in [(np.int64, 2**63), (np.int32, 2**31), (np.int16, 2**15),
                                               (np.int8, 2**7), (np.uint8, 2**8), (np.float64, 2**53 + 1),
                                               (np.float32, 2**24 + 1), (np.float16, 2**11 + 1)]}


def _random_default(gen, n, np_dtype):
    """``uniform_int_distribution``: ``random_()`` without bounds, [0, 2**mantissa] or [0, max]."""
    words = gen._words64(n) if np_dtype in (np.int64, np.float64) else gen._words(n)
    if np_dtype == np.bool_:
        return (words & np.uint64(1)).astype(np.bool_)
    return _cast(words % np.uint64(_RANDOM_MODULUS[np.dtype(np_dtype)]), np_dtype)


def _exponential(gen, n, lambd):
    """``exponential_distribution<double>``: -log(1 - u) / lambda."""
    return (-1.0 / lambd) * _c_log1p(-_uniform(gen, n, np.float64))


# ==================================================================================================
# In-place sampling methods of Tensor: uniform_, normal_, random_, bernoulli_, exponential_, ...
# ==================================================================================================

def _not_implemented(kernel, np_dtype):
    return NotImplementedError(f'"{kernel}" not implemented for \'{dt.scalar_name(np_dtype)}\'')


def _generator(generator):
    if generator is None:
        return default_generator
    if not isinstance(generator, Generator):
        raise TypeError(f"expected a torch.Generator, but got {type(generator).__name__}")
    return generator


def _memory_order(array, strides):
    """``array`` transposed so that its C order walks ``strides`` (a tensor's memory) upwards."""
    return array.transpose(sorted(range(array.ndim), key=lambda d: -abs(strides[d])))


def _fill_(tensor, sample, complex_as_real=True):
    """Overwrite ``tensor`` with ``sample(n, np_dtype, contiguous)`` in place; returns ``tensor``.

    PyTorch's TensorIterator walks the memory upwards, so a transposed tensor is filled in the order of
    its storage; complex tensors are filled as (real, imaginary) pairs. Bumps the version counter.
    """
    check_inplace(tensor)
    target = tensor._data
    if is_meta(target):
        return tensor            # no values to draw: the generator does not move, as PyTorch's does not
    if target.dtype.kind == "c" and complex_as_real:
        target = target[..., None].view(target.real.dtype)
    if not target.flags.writeable:
        raise RuntimeError("unsupported operation: more than one element of the written-to tensor refers to a "
                           "single memory location. Please clone() the tensor before performing the operation.")
    walk = _memory_order(target, target.strides)
    if walk.size:
        walk[...] = sample(walk.size, target.dtype, target.flags.c_contiguous).reshape(walk.shape)
    tensor._version_box[0] += 1
    return tensor


def _float_dtype_check(np_dtype, kernel):
    if dt.kind(np_dtype) not in "fc":
        raise _not_implemented(kernel, np_dtype)


def uniform_(self, from_=0.0, to=1.0, *, generator=None):
    """Fill with values uniform on [from, to) (PyTorch names the first argument ``from``)."""
    _float_dtype_check(self._data.dtype, "check_uniform_bounds")
    if from_ > to:
        raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found from={from_:g} > to={to:g}")
    gen = _generator(generator)
    return _fill_(self, lambda n, np_dtype, _: _uniform_kernel(gen, n, np_dtype, from_, to))


def normal_(self, mean=0.0, std=1.0, *, generator=None):
    """Fill with normal values; complex tensors get std / sqrt(2) in each of the real and imaginary parts."""
    _float_dtype_check(self._data.dtype, "normal_kernel_cpu")
    if std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std:g}")
    if self._data.dtype.kind == "c":
        std = std / math.sqrt(2)
    gen = _generator(generator)
    return _fill_(self, lambda n, np_dtype, contiguous: _normal(gen, n, np_dtype, mean, std, contiguous))


def random_(self, *args, generator=None, **kwargs):
    """Integers: ``random_(to)`` on [0, to), ``random_(from, to)`` on [from, to) -- ``to=None`` meaning up
    to the dtype's largest value -- and ``random_()`` on [0, largest] (float types: [0, 2**mantissa_bits])."""
    gen = _generator(generator)
    if not args and not kwargs:
        return _fill_(self, lambda n, np_dtype, _: _random_default(gen, n, np_dtype))
    if len(args) == 1 and not kwargs:
        low, high = 0, args[0]
    elif not args and set(kwargs) == {"to"}:
        low, high = 0, kwargs["to"]
    else:
        bound = dict(zip(("from", "to"), args))
        bound.update(kwargs)
        if set(bound) != {"from", "to"} or len(args) > 2:
            raise TypeError("random_() received an invalid combination of arguments")
        low, high = int(bound["from"]), bound["to"]
    if low == -2**63 and high is None:      # all of int64: the span 2**64 does not fit, PyTorch casts a word
        if self._data.dtype not in (np.int64, np.float64, np.float32):
            raise RuntimeError("random_full_64_bits_range_kernel_cpu handles only int64, double, float and bfloat16")
        return _fill_(self, lambda n, np_dtype, _: _cast(gen._words64(n).view(np.int64), np_dtype))
    return _fill_(self, _random_sampler(low, high, self._data.dtype, gen))


def _random_sampler(low, high, np_dtype, gen):
    low, high_inclusive = _random_bounds(np_dtype, low, high)
    span = high_inclusive - low + 1
    return lambda n, np_dtype, _: _cast(_random_from_to(gen, n, span, low), np_dtype)


def _random_bounds(np_dtype, low, high):
    """``random_from_to_impl``'s checks: [low, high - 1] must fit the dtype (floats: exact integers)."""
    if high is not None:
        high = int(high)
        if low >= high:
            raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}")
        high_inclusive = high - 1
    elif dt.kind(np_dtype) == "f":
        high_inclusive = 2**_DIGITS[np.dtype(np_dtype).name]
    elif np_dtype == np.bool_:
        high_inclusive = 1
    else:
        high_inclusive = int(np.iinfo(np_dtype).max)
    if dt.kind(np_dtype) == "f":
        info = dt.finfo_of(np_dtype)
        limits = (float(info.min), float(info.max))
    elif np_dtype == np.bool_:
        limits = (0, 1)
    else:
        limits = (int(np.iinfo(np_dtype).min), int(np.iinfo(np_dtype).max))
    name = dt.cpp_name(np_dtype)
    if not limits[0] <= low <= limits[1]:
        raise RuntimeError(f"from is out of bounds for {name}")
    if not limits[0] <= high_inclusive <= limits[1]:
        raise RuntimeError(f"to - 1 is out of bounds for {name}")
    return low, high_inclusive


def bernoulli_(self, p=0.5, *, generator=None):
    """Fill with 1 where a uniform value falls below ``p`` (a number, or a tensor broadcast to self)."""
    gen = _generator(generator)
    if isinstance(p, Tensor):
        probs = p._data
        if dt.kind(probs.dtype) != "f":
            raise _not_implemented("bernoulli_tensor_cpu_p_", probs.dtype)
        if probs.size and not ((probs >= 0) & (probs <= 1)).all():
            raise RuntimeError("Expected p_in >= 0 && p_in <= 1 to be true, but got false.  (Could this error "
                               "message be improved?  If so, please report an enhancement request to PyTorch.)")
        probs = np.broadcast_to(probs, self._data.shape)

        def sample(n, np_dtype, _):
            # float64 p draws a float64 uniform, any other float type a float32 one
            compute = np.float64 if probs.dtype == np.float64 else np.float32
            walk = _memory_order(probs, self._data.strides)
            return (_uniform(gen, n, compute) < walk.reshape(-1).astype(compute)).astype(np_dtype)
        return _fill_(self, sample, complex_as_real=False)
    if not 0 <= p <= 1:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={p:g}")
    return _fill_(self, lambda n, np_dtype, _: (_uniform(gen, n, np.float64) < p).astype(np_dtype),
                  complex_as_real=False)


def _continuous_check(np_dtype, name):
    if dt.kind(np_dtype) != "f":
        raise RuntimeError(f"{name} distribution is a continuous probability distribution. dtype must be a "
                           f"floating point but you specified {dt.scalar_name(np_dtype)}")


def exponential_(self, lambd=1.0, *, generator=None):
    """Fill with exponential values of rate ``lambd``: -log(1 - u) / lambd."""
    if not lambd > 0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={lambd:g}")
    _continuous_check(self._data.dtype, "Exponential")
    gen = _generator(generator)
    return _fill_(self, lambda n, np_dtype, _: _cast(_exponential(gen, n, lambd), np_dtype))


def cauchy_(self, median=0.0, sigma=1.0, *, generator=None):
    """Fill with Cauchy values: median + sigma * tan(pi * (u - 1/2))."""
    if not sigma > 0:
        raise RuntimeError(f"cauchy_ expects sigma > 0.0, but found sigma={sigma:g}")
    _continuous_check(self._data.dtype, "Cauchy")
    gen = _generator(generator)

    def sample(n, np_dtype, _):
        return _cast(_fma(sigma, _c_tan(math.pi * (_uniform(gen, n, np.float64) - 0.5)), median, np.float64),
                     np_dtype)
    return _fill_(self, sample)


def log_normal_(self, mean=1.0, std=2.0, *, generator=None):
    """Fill with exp(x), x normal with ``mean`` and ``std``, drawn one Box-Muller pair at a time."""
    if not std > 0:
        raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={std:g}")
    _float_dtype_check(self._data.dtype, "log_normal_cpu")
    gen = _generator(generator)
    return _fill_(self, lambda n, np_dtype, _: _cast(_c_exp(_box_muller_pairs(gen, n, mean, std)), np_dtype))


def geometric_(self, p, *, generator=None):
    """Fill with the number of Bernoulli(p) trials up to the first success: ceil(log(u) / log(1 - p))."""
    if not 0 < p < 1:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={p:g}")
    gen = _generator(generator)
    return _fill_(self, lambda n, np_dtype, _: _cast(
        np.ceil(_c_log(_uniform(gen, n, np.float64)) / math.log1p(-p)), np_dtype))



# ==================================================================================================
# Creating random tensors
# ==================================================================================================

def _new(size, dtype, device, fname, default=None):
    """An empty ndarray of ``size`` for a factory (float default dtype unless ``default`` says)."""
    _check_dtype(dtype, fname)
    meta = check_device(device, fname)
    dtype = dtype or default or dt.get_default_dtype()
    return (meta_array if meta else np.empty)(_shape(size, fname), dtype._np)


def _factory(array, sample, requires_grad, out=None):
    """Fill the new ``array`` with ``sample`` and wrap it (or fill ``out``, PyTorch's output argument)."""
    if out is not None:
        if out.shape != array.shape:
            raise RuntimeError(f"gradiente cannot resize out= from {tuple(out.shape)} to {array.shape}; "
                               "pass an out tensor of the result's shape")
        return _fill_(out, sample)
    result = _fill_(Tensor._make(array), sample)
    return _finish(result._data, requires_grad)


def rand(*size, generator=None, out=None, dtype=None, layout=None, device=None, requires_grad=False,
         pin_memory=False, **kwargs):
    """Values uniform on [0, 1), of shape ``size``."""
    array = _new(_size_and(size, kwargs, "rand", overloaded=True), dtype, device, "rand")
    _float_dtype_check(array.dtype, "check_uniform_bounds")
    gen = _generator(generator)
    return _factory(array, lambda n, np_dtype, _: _uniform_kernel(gen, n, np_dtype, 0.0, 1.0), requires_grad, out)


def randn(*size, generator=None, out=None, dtype=None, layout=None, device=None, requires_grad=False,
          pin_memory=False, **kwargs):
    """Standard normal values, of shape ``size``."""
    array = _new(_size_and(size, kwargs, "randn", overloaded=True), dtype, device, "randn")
    _float_dtype_check(array.dtype, "normal_kernel_cpu")
    std = 1 / math.sqrt(2) if array.dtype.kind == "c" else 1.0
    gen = _generator(generator)
    return _factory(array, lambda n, np_dtype, contiguous: _normal(gen, n, np_dtype, 0.0, std, contiguous),
                    requires_grad, out)


def _randint_bounds(args, kwargs, fname, with_size=True):
    """Read PyTorch's overloads ``(high, size)`` and ``(low, high, size)`` -- for randint_like the same
    without size -- positionally or by name; returns ``low, high, size``."""
    tail = ("size",) if with_size else ()
    names = ("low", "high") + tail if len(args) + len(kwargs) == 2 + len(tail) else ("high",) + tail
    bound = dict(zip(names, args))
    bound.update(kwargs)
    if len(args) > len(names) or set(bound) != set(names):
        raise TypeError(f"{fname}() received an invalid combination of arguments")
    return int(bound.get("low", 0)), int(bound["high"]), bound.get("size")


def randint(*args, generator=None, out=None, dtype=None, layout=None, device=None, requires_grad=False,
            **kwargs):
    """Integers uniform on [low, high): ``randint(high, size)`` or ``randint(low, high, size)`` (int64 default)."""
    low, high, size = _randint_bounds(args, kwargs, "randint")
    if not isinstance(size, (tuple, list)):
        raise TypeError("randint() received an invalid combination of arguments: size must be a tuple of ints")
    array = _new((tuple(size),), dtype, device, "randint", default=dt.int64)
    return _factory(array, _random_sampler(low, high, array.dtype, _generator(generator)), requires_grad, out)


def randperm(n, *, generator=None, out=None, dtype=None, layout=None, device=None, requires_grad=False,
             pin_memory=False):
    """A random permutation of 0..n-1, by PyTorch's Fisher-Yates shuffle.

    Step i swaps position i with position i + (word_i % (n - i)). The words are drawn at once; the
    swaps depend on each other, so they run one by one in a plain loop.
    """
    if n < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {n}: [{n}]")
    array = _new((n,), dtype, device, "randperm", default=dt.int64)
    if dt.kind(array.dtype) == "f" and n > 2**_DIGITS[array.dtype.name] + 1:
        raise RuntimeError(f"n cannot be greater than {2**_DIGITS[array.dtype.name] + 1} for "
                           f"{dt.scalar_name(array.dtype)} type.")
    if n >= (2**32 - 1) // 20:
        raise NotImplementedError("gradiente's randperm supports n < 214748364 (PyTorch shuffles larger n "
                                  "with 64-bit words, which gradiente does not reproduce)")
    gen = _generator(generator)

    def shuffle(count, np_dtype, _):
        offsets = (gen._words(max(count - 1, 0)) % np.arange(count, 1, -1, dtype=np.uint64)).tolist()
        perm = list(range(count))
        for i, offset in enumerate(offsets):
            j = i + offset
            perm[i], perm[j] = perm[j], perm[i]
        return np.array(perm, dtype=np.int64).astype(np_dtype)
    return _factory(array, shuffle, requires_grad, out)


def normal(mean, std=1.0, size=None, *, generator=None, out=None, dtype=None, layout=None, device=None,
           pin_memory=False, requires_grad=False):
    """Normal values: ``normal(mean, std, size)`` with numbers, or element-wise with tensor mean and/or std.

    With tensors, PyTorch draws standard normals of the broadcast shape, then multiplies by std and
    adds mean (one rounding each), and so does this. Gradients do not flow back to mean and std here.
    """
    mean_is_tensor, std_is_tensor = isinstance(mean, Tensor), isinstance(std, Tensor)
    gen = _generator(generator)
    if not mean_is_tensor and not std_is_tensor:
        if size is None:
            raise TypeError("normal() received an invalid combination of arguments - got (float, float), but "
                            "expected one of: (Tensor mean, Tensor std), (Tensor mean, float std), "
                            "(float mean, Tensor std), (float mean, float std, tuple of ints size)")
        if std < 0:
            raise RuntimeError(f"normal expects std >= 0.0, but found std {std:g}")
        array = _new((tuple(size),), dtype, device, "normal")
        _float_dtype_check(array.dtype, "normal_kernel_cpu")
        return _factory(array, lambda n, np_dtype, contiguous: _normal(gen, n, np_dtype, mean, std, contiguous),
                        requires_grad, out)
    if std_is_tensor and std._data.size and not is_meta(std._data) and not (std._data.min() >= 0):
        raise RuntimeError("normal expects all elements of std >= 0.0")
    if not std_is_tensor and std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std:g}")
    like = mean._data if mean_is_tensor else std._data
    shape = broadcast_shape(like.shape, std._data.shape if std_is_tensor else ())
    noise = Tensor._make(np.empty(shape, like.dtype))
    _float_dtype_check(like.dtype, "normal_kernel_cpu")
    if std_is_tensor:         # N(0, 1), then times std, then plus mean, rounding after each
        values = _fill_(noise, lambda n, d, c: _normal(gen, n, d, 0.0, 1.0, c))._data
        values = (values * std._data).astype(like.dtype)
    else:                     # N(0, std), then plus mean
        values = _fill_(noise, lambda n, d, c: _normal(gen, n, d, 0.0, std, c))._data
    values = (values + (mean._data if mean_is_tensor else np.asanyarray(mean, like.dtype))).astype(like.dtype)
    if out is not None:
        return _fill_(out, lambda n, d, c: values.reshape(-1).astype(d))
    return _finish(values, requires_grad)


def bernoulli(input, p=None, *, generator=None, out=None):
    """0/1 values, 1 with probability ``input`` (element-wise), or with probability ``p`` if given."""
    result = out if out is not None else Tensor._make(np.empty_like(input._data, order="C"))
    return bernoulli_(result, input if p is None else p, generator=generator)


def multinomial(input, num_samples, replacement=False, *, generator=None, out=None):
    """Indices drawn from the categories of each row of ``input`` (weights, need not sum to 1).

    Without replacement (or for one sample), PyTorch takes the indices of the largest ``p / q`` with
    ``q`` exponential -- a Gumbel-max trick. With replacement, it searches uniform values in the running
    sum of the weights.
    """
    probs = input._data
    if probs.ndim not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    if dt.kind(probs.dtype) != "f":
        raise RuntimeError(f"multinomial only supports floating-point dtypes for input, got: "
                           f"{dt.scalar_name(probs.dtype)}")
    if num_samples <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    if not replacement and num_samples > probs.shape[-1]:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without replacement")
    gen = _generator(generator)
    if not replacement or num_samples == 1:
        if not (np.all(probs >= 0) and np.all(probs < np.inf)):
            raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
        if np.any(probs.sum(axis=-1) == 0):
            raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
        q = _cast(_exponential(gen, probs.size, 1.0), probs.dtype).reshape(probs.shape)
        keys = probs / q
        if num_samples == 1:
            result = np.argmax(keys, axis=-1)[..., None]
        else:
            # Largest first. Keys tie only where weights are 0, sampled once the others run out; PyTorch
            # orders such ties by its sort's internals, so their order may differ from this one.
            result = np.argsort(-keys, axis=-1, kind="stable")[..., :num_samples]
    else:
        rows = probs.reshape(-1, probs.shape[-1])
        if np.any(rows < 0):
            raise RuntimeError("invalid multinomial distribution (encountering probability entry < 0)")
        if not np.all(np.isfinite(rows)):
            raise RuntimeError("invalid multinomial distribution (encountering probability entry = infinity or NaN)")
        cumulative = np.cumsum(rows, axis=-1, dtype=rows.dtype)    # sequential sums, as PyTorch adds
        if np.any(cumulative[:, -1] <= 0):
            raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
        cumulative = (cumulative / cumulative[:, -1:]).astype(np.float64)
        cumulative[:, -1] = 1.0
        u = _uniform(gen, rows.shape[0] * num_samples, np.float64).reshape(rows.shape[0], num_samples)
        result = np.stack([np.searchsorted(c, row_u, side="left") for c, row_u in zip(cumulative, u)])
        result = result.reshape(probs.shape[:-1] + (num_samples,))
    result = result.astype(np.int64)
    if out is not None:
        return _fill_(out, lambda n, d, c: result.reshape(-1).astype(d))
    return Tensor._make(result)


def _like(input, dtype, device, fname):
    """An empty array laid out like ``input`` (PyTorch's preserve_format), which decides the fill order."""
    _check_dtype(dtype, fname)
    meta = check_device(device, fname, "aten::empty_strided") if device is not None else is_meta(input._data)
    if meta:
        return meta_array(input._data.shape, (dtype or input.dtype)._np)
    return np.empty_like(input._data, dtype=(dtype or input.dtype)._np)


def rand_like(input, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None,
              generator=None):
    """A tensor shaped like ``input`` of values drawn uniformly from [0, 1), the same draws PyTorch makes for the
    same seed."""
    array = _like(input, dtype, device, "rand_like")
    _float_dtype_check(array.dtype, "check_uniform_bounds")
    gen = _generator(generator)
    return _factory(array, lambda n, np_dtype, _: _uniform_kernel(gen, n, np_dtype, 0.0, 1.0), requires_grad)


def randn_like(input, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None,
               generator=None):
    """A tensor shaped like ``input`` of values drawn from the standard normal distribution, the same draws
    PyTorch makes for the same seed."""
    array = _like(input, dtype, device, "randn_like")
    _float_dtype_check(array.dtype, "normal_kernel_cpu")
    std = 1 / math.sqrt(2) if array.dtype.kind == "c" else 1.0
    gen = _generator(generator)
    return _factory(array, lambda n, np_dtype, contiguous: _normal(gen, n, np_dtype, 0.0, std, contiguous),
                    requires_grad)


def randint_like(input, *args, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None,
                 generator=None, **kwargs):
    """``randint_like(input, high)`` or ``randint_like(input, low, high)``: same shape and dtype as input."""
    low, high, _ = _randint_bounds(args, kwargs, "randint_like", with_size=False)
    array = _like(input, dtype, device, "randint_like")
    return _factory(array, _random_sampler(low, high, array.dtype, _generator(generator)), requires_grad)

