"""Random numbers against PyTorch, bit for bit: every sampler, for several seeds, sizes around Box-Muller's
blocks of 16, float32 and float64, two calls in a row (the stream and the normal cache carry over), plus
generators, the state bytes, in-place rules and PyTorch's error messages."""
import numpy as np
import pytest

import gradiente

torch = pytest.importorskip("torch")

SEEDS = [0, 1, 42, 2**40 + 7]
SIZES = [0, 1, 3, 15, 16, 17, 100, 1000]
FLOATS = ["float32", "float64"]


def same_bits(ours, theirs):
    """Equal shape, dtype and bytes: -0.0 differs from 0.0 here, as it would in PyTorch."""
    a = theirs.detach().numpy()
    b = ours.detach().numpy()
    assert (b.dtype, b.shape) == (a.dtype, a.shape)
    assert np.ascontiguousarray(b).tobytes() == np.ascontiguousarray(a).tobytes(), \
        f"{int((a != b).sum())} of {a.size} values differ; first: ours {b.ravel()[:4]}, torch {a.ravel()[:4]}"


def check(fn, seed, calls=2):
    """Seed both libraries alike and compare ``calls`` consecutive results of ``fn(lib)``."""
    torch.manual_seed(seed)
    gradiente.manual_seed(seed)
    for _ in range(calls):
        same_bits(fn(gradiente), fn(torch))


# --- one row per sampler: fn(lib, n, dtype) ------------------------------------------------------------

def _probs(lib, n, dtype):
    return lib.tensor(np.linspace(0, 1, n).astype(dtype))


SAMPLERS = {
    "rand": lambda lib, n, d: lib.rand(n, dtype=getattr(lib, d)),
    "randn": lambda lib, n, d: lib.randn(n, dtype=getattr(lib, d)),
    "rand_2d": lambda lib, n, d: lib.rand(2, n, dtype=getattr(lib, d)),
    "randn_2d": lambda lib, n, d: lib.randn((n, 2), dtype=getattr(lib, d)),
    "uniform_": lambda lib, n, d: lib.empty(n, dtype=getattr(lib, d)).uniform_(-3.7, 5.1),
    "normal_": lambda lib, n, d: lib.empty(n, dtype=getattr(lib, d)).normal_(1.3, 0.37),
    "normal_size": lambda lib, n, d: lib.normal(-2.5, 3.1, (n,), dtype=getattr(lib, d)),
    "rand_like": lambda lib, n, d: lib.rand_like(lib.zeros(n, dtype=getattr(lib, d))),
    "randn_like": lambda lib, n, d: lib.randn_like(lib.zeros(n, dtype=getattr(lib, d))),
    "exponential_": lambda lib, n, d: lib.empty(n, dtype=getattr(lib, d)).exponential_(2.5),
    "cauchy_": lambda lib, n, d: lib.empty(n, dtype=getattr(lib, d)).cauchy_(0.5, 2.0),
    "log_normal_": lambda lib, n, d: lib.empty(n, dtype=getattr(lib, d)).log_normal_(0.3, 0.7),
    "geometric_": lambda lib, n, d: lib.empty(n, dtype=getattr(lib, d)).geometric_(0.3),
    "bernoulli_scalar_p": lambda lib, n, d: lib.empty(n, dtype=getattr(lib, d)).bernoulli_(0.3),
    "bernoulli_tensor_p": lambda lib, n, d: lib.bernoulli(_probs(lib, n, d)),
    "bernoulli_p_arg": lambda lib, n, d: lib.bernoulli(lib.zeros(n, dtype=getattr(lib, d)), 0.7),
    "random_": lambda lib, n, d: lib.empty(n, dtype=getattr(lib, d)).random_(),
    "random_to": lambda lib, n, d: lib.empty(n, dtype=getattr(lib, d)).random_(100),
    "random_from_to": lambda lib, n, d: lib.empty(n, dtype=getattr(lib, d)).random_(-50, 2000),
    "randint_float": lambda lib, n, d: lib.randint(3, 10, (n,), dtype=getattr(lib, d)),
}


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("name", sorted(SAMPLERS))
def test_sampler_matches_torch(name, n, dtype, seed):
    check(lambda lib: SAMPLERS[name](lib, n, dtype), seed)


@pytest.mark.parametrize("n", [1, 15, 16, 17, 100, 1000])
@pytest.mark.parametrize("name", ["rand", "randn", "uniform_", "normal_", "random_", "random_to"])
def test_float16_matches_torch(name, n):
    # float16 normals draw their uniforms block by block: the tail skips some that float32 would draw
    check(lambda lib: SAMPLERS[name](lib, n, "float16"), seed=3)


INTEGER_TYPES = ["int64", "int32", "int16", "int8", "uint8", "bool"]


@pytest.mark.parametrize("n", [0, 1, 17, 1000])
@pytest.mark.parametrize("dtype", INTEGER_TYPES)
def test_integer_samplers_match_torch(dtype, n):
    check(lambda lib: lib.empty(n, dtype=getattr(lib, dtype)).random_(), seed=5)
    check(lambda lib: lib.empty(n, dtype=getattr(lib, dtype)).random_(0, 2), seed=6)
    check(lambda lib: lib.empty(n, dtype=getattr(lib, dtype)).bernoulli_(0.6), seed=7)


RANDINT = {
    "high_only": lambda lib, n: lib.randint(10, (n,)),
    "low_high": lambda lib, n: lib.randint(-3, 10, (n,)),
    "keywords": lambda lib, n: lib.randint(low=2, high=9, size=(n, 2)),
    "span_below_2_28": lambda lib, n: lib.randint(-5, 2**28 - 6, (n,)),   # 32-bit words
    "span_2_28": lambda lib, n: lib.randint(0, 2**28, (n,)),              # 64-bit words from here
    "span_huge": lambda lib, n: lib.randint(-2**62, 2**62, (n,)),
    "int32": lambda lib, n: lib.randint(100, (n,), dtype=lib.int32),
    "like": lambda lib, n: lib.randint_like(lib.zeros(n), 5, 50),
    "like_high": lambda lib, n: lib.randint_like(lib.zeros(n, dtype=lib.int64), 7),
    "random_from_none": lambda lib, n: lib.empty(n, dtype=lib.int64).random_(5, None),
    "random_full_range": lambda lib, n: lib.empty(n, dtype=lib.int64).random_(-2**63, None),
    "random_to_keyword": lambda lib, n: lib.empty(n, dtype=lib.int8).random_(to=3),
    "randperm": lambda lib, n: lib.randperm(n),
    "randperm_float": lambda lib, n: lib.randperm(n, dtype=lib.float32),
}


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("name", sorted(RANDINT))
def test_integers_match_torch(name, n, seed):
    check(lambda lib: RANDINT[name](lib, n), seed)


# --- Box-Muller: the cache, the blocks of 16, large tensors ---------------------------------------------

def test_normal_cache_carries_across_calls():
    """Small normals come in pairs and the spare one waits in the generator, even across a large call
    (which does not touch it) and across dtypes."""
    def calls(lib):
        return [lib.randn(3), lib.randn(20), lib.randn(1), lib.randn(1), lib.randn(2, 3),
                lib.randn(5, dtype=lib.float64), lib.empty(3).normal_(2.0, 0.5), lib.empty(5).log_normal_()]
    torch.manual_seed(0)
    gradiente.manual_seed(0)
    for ours, theirs in zip(calls(gradiente), calls(torch)):
        same_bits(ours, theirs)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
@pytest.mark.parametrize("mean, std", [(0.0, 1.0), (1.3, 0.37), (-200.5, 1e-3)])
def test_large_normal_and_uniform(dtype, mean, std):
    """2**16 + 5 values exercise the AVX2 float32 log/sin/cos and the fused multiply-adds widely."""
    n = 2**16 + 5
    check(lambda lib: lib.empty(n, dtype=getattr(lib, dtype)).normal_(mean, std), seed=11)
    check(lambda lib: lib.empty(n, dtype=getattr(lib, dtype)).uniform_(mean, mean + 3 * std), seed=12)


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("n", [3, 8, 50])
def test_complex_normals_fill_real_and_imaginary_parts(dtype, n):
    torch.manual_seed(4)
    gradiente.manual_seed(4)
    ours = gradiente.randn(n, dtype=getattr(gradiente, dtype)).numpy()
    theirs = torch.randn(n, dtype=getattr(torch, dtype)).numpy()
    assert ours.dtype == theirs.dtype and ours.tobytes() == theirs.tobytes()


NON_CONTIGUOUS = {
    "normal_transposed_small": lambda lib: lib.zeros(5, 3).t().normal_(),
    "normal_transposed_large": lambda lib: lib.zeros(50, 7).t().normal_(),   # one pair at a time, no blocks
    "uniform_transposed": lambda lib: lib.zeros(5, 7).t().uniform_(),
    "random_transposed": lambda lib: lib.zeros(5, 7, dtype=lib.int64).t().random_(10),
    "rand_like_transposed": lambda lib: lib.rand_like(lib.zeros(5, 7).t()),
    "randn_like_transposed": lambda lib: lib.randn_like(lib.zeros(50, 7).t()),
    "bernoulli_transposed": lambda lib: lib.zeros(5, 7).t().bernoulli_(lib.full((7, 5), 0.4)),
    "bernoulli_broadcast_p": lambda lib: lib.zeros(4, 6).bernoulli_(lib.tensor([0.1, 0.2, 0.5, 0.6, 0.8, 0.9])),
    "bernoulli_float64_p": lambda lib: lib.bernoulli(lib.full((40,), 0.4, dtype=lib.float64)),
}


@pytest.mark.parametrize("name", sorted(NON_CONTIGUOUS))
def test_fill_order_follows_memory(name):
    check(NON_CONTIGUOUS[name], seed=8)


NORMAL_OVERLOADS = {
    "tensor_mean": lambda lib: lib.normal(lib.tensor([float(i) for i in range(20)]), 2.0),
    "tensor_std": lambda lib: lib.normal(3.0, lib.tensor([i * 0.5 for i in range(20)])),
    "both_tensors": lambda lib: lib.normal(lib.tensor([float(i) for i in range(20)]),
                                           lib.tensor([i * 0.5 + 0.1 for i in range(20)])),
    "broadcast": lambda lib: lib.normal(lib.tensor([[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]), lib.ones(3)),
    "small": lambda lib: lib.normal(lib.tensor([0.0, 1.0, 2.0]), lib.ones(3)),
    "float64": lambda lib: lib.normal(lib.tensor([float(i) for i in range(30)], dtype=lib.float64), 0.3),
}


@pytest.mark.parametrize("name", sorted(NORMAL_OVERLOADS))
def test_normal_overloads(name):
    check(NORMAL_OVERLOADS[name], seed=9)


# --- multinomial ---------------------------------------------------------------------------------------

WEIGHTS = [0.1, 0.5, 0.0, 2.0, 0.3, 1e-3]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("replacement", [False, True])
@pytest.mark.parametrize("num_samples", [1, 2, 5])
def test_multinomial(num_samples, replacement, dtype):
    def weights(lib, rows):
        return lib.tensor(np.array(rows, dtype=dtype))
    check(lambda lib: lib.multinomial(weights(lib, WEIGHTS), num_samples, replacement), seed=10)
    check(lambda lib: lib.multinomial(weights(lib, [WEIGHTS, WEIGHTS[::-1]]), num_samples, replacement), seed=10)
    check(lambda lib: weights(lib, WEIGHTS).multinomial(num_samples, replacement=replacement), seed=10)


def test_multinomial_many_samples_with_replacement():
    check(lambda lib: lib.multinomial(lib.tensor(np.arange(1, 51, dtype=np.float32)), 1000, True), seed=2)


# --- generators, seeds, state ----------------------------------------------------------------------------

def test_generator_objects_are_independent_of_the_default():
    def draws(lib):
        g = lib.Generator().manual_seed(7)
        return [lib.rand(5, generator=g), lib.rand(5), lib.randn(20, generator=g), lib.randn(3, generator=g),
                lib.randint(0, 10, (5,), generator=g), lib.randperm(6, generator=g), lib.randn(1),
                lib.empty(4).normal_(generator=g), lib.multinomial(lib.ones(4), 2, generator=g)]
    torch.manual_seed(1)
    gradiente.manual_seed(1)
    for ours, theirs in zip(draws(gradiente), draws(torch)):
        same_bits(ours, theirs)


def test_new_generator_has_pytorch_default_seed():
    assert gradiente.Generator().initial_seed() == torch.Generator().initial_seed() == 67280421310721
    same_bits(gradiente.rand(4, generator=gradiente.Generator()), torch.rand(4, generator=torch.Generator()))


@pytest.mark.parametrize("seed", [0, 2**40 + 7, 2**64 - 1, -1, -2**63])
def test_manual_seed_and_initial_seed(seed):
    assert gradiente.manual_seed(seed) is gradiente.default_generator
    assert gradiente.initial_seed() == torch.manual_seed(seed).initial_seed()
    same_bits(gradiente.rand(3), torch.rand(3))


def test_seed_is_fresh_and_recorded():
    first, second = gradiente.seed(), gradiente.seed()
    assert first != second and gradiente.initial_seed() == second and 0 <= second < 2**64


@pytest.mark.parametrize("draws", [0, 1, 623, 624, 625, 5000])
def test_state_bytes_equal_torch_and_load_both_ways(draws):
    torch.manual_seed(3)
    gradiente.manual_seed(3)
    for lib in (torch, gradiente):
        lib.randint(0, 10, (draws,))
        lib.randn(3)                     # leave a spare normal in the state
    theirs, ours = torch.get_rng_state(), gradiente.get_rng_state()
    assert ours.dtype is gradiente.uint8 and tuple(ours.shape) == (5056,)
    assert ours.numpy().tobytes() == theirs.numpy().tobytes()
    gradiente.manual_seed(100)
    torch.manual_seed(200)
    gradiente.set_rng_state(gradiente.tensor(theirs.numpy()))
    torch.set_rng_state(torch.from_numpy(ours.numpy().copy()))
    same_bits(gradiente.randn(5), torch.randn(5))


def test_generator_state_round_trip():
    g = gradiente.Generator().manual_seed(5)
    gradiente.randn(3, generator=g)
    state = g.get_state()
    first = gradiente.randn(7, generator=g).numpy()
    assert g.set_state(state) is g
    assert gradiente.randn(7, generator=g).numpy().tobytes() == first.tobytes()


# --- tensors: requires_grad, in-place rules, version counter -------------------------------------------

def test_requires_grad_and_dtype_options():
    x = gradiente.rand(2, 3, requires_grad=True, dtype=gradiente.float64)
    assert x.requires_grad and x.is_leaf and x.dtype is gradiente.float64
    assert gradiente.randint(5, (3,)).dtype is gradiente.int64
    assert gradiente.randperm(4).dtype is gradiente.int64
    assert gradiente.rand(size=(2, 3)).shape == (2, 3) and gradiente.randn([]).shape == ()


def test_inplace_sampling_on_leaf_that_requires_grad():
    w = gradiente.zeros(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place"):
        w.normal_()
    with gradiente.no_grad():
        assert w.uniform_(-1, 1) is w
    assert w.requires_grad and w.grad_fn is None


def test_inplace_sampling_bumps_version_and_keeps_memory():
    x = gradiente.zeros(4, 5)
    view = x.t()
    data = x._data
    view.normal_()
    assert x._data is data and x._version == 1 and view._version == 1
    assert gradiente.rand(3)._version == torch.rand(3)._version == 0


# --- PyTorch's errors ---------------------------------------------------------------------------------

ERRORS = {
    "rand_long": lambda lib: lib.rand(3, dtype=lib.int64),
    "randn_long": lambda lib: lib.randn(3, dtype=lib.int64),
    "randint_out_of_range": lambda lib: lib.randint(0, 300, (3,), dtype=lib.uint8),
    "randint_empty_range": lambda lib: lib.randint(5, 5, (3,)),
    "randint_requires_grad": lambda lib: lib.randint(10, (3,), requires_grad=True),
    "random_from_out_of_range": lambda lib: lib.empty(3, dtype=lib.int8).random_(-200, 2),
    "uniform_reversed": lambda lib: lib.empty(3).uniform_(2, 1),
    "uniform_long": lambda lib: lib.empty(3, dtype=lib.int64).uniform_(),
    "normal_negative_std": lambda lib: lib.empty(3).normal_(0, -1),
    "normal_tensor_negative_std": lambda lib: lib.normal(lib.zeros(2), -lib.ones(2)),
    "normal_long_mean": lambda lib: lib.normal(lib.zeros(2, dtype=lib.int64), 1.0),
    "bernoulli_p_scalar": lambda lib: lib.empty(3).bernoulli_(1.5),
    "bernoulli_p_tensor": lambda lib: lib.bernoulli(lib.tensor([0.5, 1.5])),
    "bernoulli_long_p": lambda lib: lib.bernoulli(lib.tensor([1, 0])),
    "exponential_lambda": lambda lib: lib.empty(3).exponential_(0),
    "exponential_long": lambda lib: lib.empty(3, dtype=lib.int64).exponential_(),
    "multinomial_zero_sum": lambda lib: lib.multinomial(lib.tensor([0.0, 0.0]), 1),
    "multinomial_zero_sum_replacement": lambda lib: lib.multinomial(lib.tensor([0.0, 0.0]), 2, True),
    "multinomial_negative": lambda lib: lib.multinomial(lib.tensor([1.0, -1.0]), 1),
    "multinomial_negative_replacement": lambda lib: lib.multinomial(lib.tensor([1.0, -1.0]), 2, True),
    "multinomial_too_many": lambda lib: lib.multinomial(lib.tensor([1.0, 1.0]), 3),
    "multinomial_long": lambda lib: lib.multinomial(lib.tensor([1, 1]), 1),
    "randperm_negative": lambda lib: lib.randperm(-1),
    "randperm_half_too_long": lambda lib: lib.randperm(5000, dtype=lib.float16),
    "rand_negative_size": lambda lib: lib.rand(-1),
    "seed_too_large": lambda lib: lib.manual_seed(2**64),
    "state_wrong_size": lambda lib: lib.set_rng_state(lib.zeros(10, dtype=lib.uint8)),
    "state_wrong_dtype": lambda lib: lib.set_rng_state(lib.zeros(5056)),
    "state_invalid": lambda lib: lib.set_rng_state(lib.zeros(5056, dtype=lib.uint8)),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_match_torch(name):
    with pytest.raises(Exception) as theirs:
        ERRORS[name](torch)
    with pytest.raises(Exception) as ours:
        ERRORS[name](gradiente)
    assert type(ours.value).__name__ == type(theirs.value).__name__
    assert str(ours.value).splitlines()[0] == str(theirs.value).splitlines()[0]


def test_import_leaves_numpy_random_for_the_first_draw():
    """``import gradiente`` does not load numpy.random (a third of the import time it may take); the first draw
    does, and gives PyTorch's numbers for the seed the process started with."""
    import subprocess
    import sys
    script = ("import sys, gradiente\n"
              "print('numpy.random' in sys.modules)\n"
              "print(gradiente.initial_seed())\n"
              "print(gradiente.rand(3).tolist(), 'numpy.random' in sys.modules)")
    lines = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True,
                           timeout=120).stdout.splitlines()
    assert lines[0] == "False"
    same_seed = torch.Generator().manual_seed(int(lines[1]))
    assert lines[2] == f"{torch.rand(3, generator=same_seed).tolist()} True"
