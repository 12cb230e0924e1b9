"""PyTorch's CPU generator: the MT19937 bit stream, its seeding, its normal cache and its state bytes.

PyTorch seeds MT19937 with the low 32 bits of the seed through Matsumoto and Nishimura's
``init_genrand``, exactly as NumPy's legacy ``RandomState(seed)`` does. So NumPy's C MT19937 yields
PyTorch's 32-bit words, in bulk; this module keeps only the bookkeeping that PyTorch's state carries on
top of the 624 state words. How the words become numbers lives in ``random``.
"""
import os

import numpy as np

from . import dtype as dt
from .device import CPU as _CPU
from .device import device as _device
from .tensor import Tensor

__all__ = ["DEFAULT_SEED", "Generator"]

DEFAULT_SEED = 67280421310721  # c10::default_rng_seed_val: the seed of every new torch.Generator()
_N = 624                       # MT19937 state words; after _N words the state is regenerated ("twisted")

# torch.get_rng_state() is a byte copy of this C struct (CPUGeneratorImplState, x86-64 alignment).
# The fields named legacy_* and the 64-bit words are left over from PyTorch's older C generator.
_STATE_LAYOUT = np.dtype([
    ("the_initial_seed", "<u8"), ("left", "<i4"), ("seeded", "<i4"), ("next", "<u8"),
    ("state", "<u8", (_N,)),
    ("legacy_normal_x", "<f8"), ("normal_y", "<f8"), ("legacy_normal_rho", "<f8"),
    ("normal_is_valid", "<i4"), ("padding", "V4"),
    ("next_float_normal_sample", "<f4"), ("is_next_float_normal_sample_valid", "u1"), ("padding2", "V3"),
])
assert _STATE_LAYOUT.itemsize == 5056


def _as_uint64(seed):
    """PyTorch reads a seed as an unsigned 64-bit integer; negative seeds wrap (two's complement)."""
    if not isinstance(seed, (int, np.integer)) or isinstance(seed, bool):
        raise TypeError(f"manual_seed expected a long, but got {type(seed).__name__}")
    seed = int(seed)
    if not -2**63 <= seed < 2**64:
        raise ValueError("Overflow when unpacking long long")
    return seed % 2**64


# What a CPU-only PyTorch answers when asked for a generator on another device (each backend says it its way).
_NO_GENERATOR = {
    "cuda": "Cannot get CUDA generator without ATen_cuda library. PyTorch splits its backend into two shared "
            "libraries: a CPU library and a CUDA library; this error has occurred because you are trying to use "
            "some CUDA functionality, but the CUDA library has not been loaded by the dynamic linker for some "
            "reason.  The CUDA library MUST be loaded, EVEN IF you don't directly use any symbols from the CUDA "
            "library! One common culprit is a lack of -Wl,--no-as-needed in your link arguments; many dynamic "
            "linkers will delete dynamic library dependencies if you don't depend on any of their symbols.  You can "
            "check if this has occurred by using ldd on your binary to see if there is a dependency on *_cuda.so "
            "library.",
    "xpu": "Cannot get XPU generator without ATen_xpu library.",
    "mps": "Cannot execute getNewGenerator() without MPS backend.",
    "mtia": "Cannot execute getNewGenerator() without MTIA backend.",
    "hip": "Backend doesn`t support getNewGenerator()",
    "hpu": "Backend doesn`t support getNewGenerator()",
    "privateuseone": "Please register PrivateUse1HooksInterface by `RegisterPrivateUse1HooksInterface` first.",
}


def _no_generator_on(device_type):
    return _NO_GENERATOR.get(device_type, f"{device_type.upper()} device type not an accelerator.")


class Generator:
    """A source of random numbers that gives PyTorch's numbers for the same seed (``torch.Generator``).

    Only the CPU generator exists. Besides the MT19937 words, a generator keeps the second value of the
    last Box-Muller pair: PyTorch draws normals in pairs and hands out the spare one on the next call.
    """

    def __init__(self, device="cpu"):
        place = _device(device)
        if place.type != "cpu":
            raise RuntimeError(_no_generator_on(place.type))
        self.device = _CPU
        self.manual_seed(DEFAULT_SEED)

    def __repr__(self):
        # PyTorch's generator is a C++ object, torch._C.Generator; the same repr keeps printouts alike.
        return f"<gradiente._C.Generator object at {id(self):#x}>"

    def manual_seed(self, seed):
        """Seed the generator; returns it, so ``g = Generator().manual_seed(0)`` works."""
        seed = _as_uint64(seed)
        self._engine = None                # seeded with self._seed when first needed (``_bits``)
        self._seed = seed
        self._fresh = True                 # see get_state: PyTorch's 'next' field is 0 until a draw
        self._next_double_normal = None
        self._next_float_normal = None     # part of the state, though no CPU kernel uses it
        return self

    def seed(self):
        """Seed from the operating system's entropy (as PyTorch reads /dev/urandom) and return the seed."""
        seed = int.from_bytes(os.urandom(8), "little")
        self.manual_seed(seed)
        return seed

    def initial_seed(self):
        return self._seed

    # --- state ------------------------------------------------------------------------------------------

    def get_state(self):
        """The state as a uint8 tensor of 5056 bytes, byte for byte ``torch.Generator.get_state()``."""
        engine = self._bits.state["state"]
        position = int(engine["pos"])
        state = np.zeros((), _STATE_LAYOUT)
        state["the_initial_seed"] = self._seed
        # PyTorch counts down the words 'left' before the next twist (one more than remain) and reads the
        # word at 'next'; NumPy keeps one position. Only right after seeding do they disagree: PyTorch
        # says next=0, left=1 where NumPy's position already points past the end.
        state["left"] = _N + 1 - position
        state["seeded"] = 1
        state["next"] = 0 if self._fresh else position
        state["state"] = engine["key"]
        if self._next_double_normal is not None:
            state["normal_is_valid"] = 1
            state["normal_y"] = self._next_double_normal
        if self._next_float_normal is not None:
            state["is_next_float_normal_sample_valid"] = 1
            state["next_float_normal_sample"] = self._next_float_normal
        return Tensor._make(np.frombuffer(state.tobytes(), np.uint8).copy())

    def set_state(self, new_state):
        """Restore a state from ``get_state`` -- ours or PyTorch's, the bytes are the same. Returns self."""
        if not isinstance(new_state, Tensor) or new_state.dtype is not dt.uint8:
            raise TypeError("RNG state must be a torch.ByteTensor")
        raw = np.ascontiguousarray(new_state._data).reshape(-1)
        if raw.size != _STATE_LAYOUT.itemsize:
            raise RuntimeError(f"Expected a CPUGeneratorImplState of size {_STATE_LAYOUT.itemsize} but found "
                               f"the input RNG state size to be {raw.size}")
        state = np.frombuffer(raw.tobytes(), _STATE_LAYOUT)[0]
        left, next_ = int(state["left"]), int(state["next"]) % 2**32
        if not (state["seeded"] and 0 < left <= _N and next_ <= _N):
            raise RuntimeError("Invalid mt19937 state")
        fresh = left == 1 and next_ == 0
        if not fresh and next_ + left != _N + 1:
            # PyTorch itself never writes such a state; NumPy's engine cannot follow both counters.
            raise RuntimeError(f"gradiente cannot load an mt19937 state with next={next_} and left={left}: "
                               f"states that PyTorch writes have next + left == {_N + 1}")
        self._load((state["state"] & 0xFFFFFFFF).astype(np.uint32), position=_N + 1 - left)
        self._seed = int(state["the_initial_seed"])
        self._fresh = fresh
        self._next_double_normal = float(state["normal_y"]) if state["normal_is_valid"] else None
        self._next_float_normal = (np.float32(state["next_float_normal_sample"])
                                   if state["is_next_float_normal_sample_valid"] else None)
        return self

    @property
    def _bits(self):
        """NumPy's C MT19937 engine, made and seeded on first use: ``numpy.random`` costs about 10 ms to import,
        a third of what ``import gradiente`` may take, and a program that draws nothing never needs it."""
        if self._engine is None:
            from numpy.random import MT19937, RandomState
            self._engine = MT19937()
            state = RandomState(self._seed & 0xFFFFFFFF).get_state(legacy=True)
            words = state[1]    # type: ignore[index]  # legacy=True gives ('MT19937', key words, pos, ...)
            self._load(words, position=_N)      # position _N: the first draw twists the seeded words
        return self._engine

    def _load(self, words, position):
        self._bits.state = {"bit_generator": "MT19937", "state": {"key": words, "pos": position}}

    # --- bits -------------------------------------------------------------------------------------------

    def _words(self, n):
        """The next ``n`` 32-bit words (``CPUGeneratorImpl::random``), as uint64 for easy arithmetic."""
        if n == 0:
            return np.empty(0, np.uint64)
        self._fresh = False
        return self._bits.random_raw(n)

    def _words64(self, n):
        """The next ``n`` 64-bit words, each from two 32-bit words, the first one high (``random64``)."""
        words = self._words(2 * n)
        return (words[0::2] << np.uint64(32)) | words[1::2]
