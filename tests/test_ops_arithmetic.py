"""The ops of ``ops/arithmetic.py`` from the op table: gradcheck in float64 and differential tests against PyTorch;
then addcmul's and addcdiv's values, dtypes and error messages against PyTorch, and the nodes and gradient of
their in-place forms in a chain."""
import warnings

import numpy as np
import pytest
from harness import (
    OpSpec,
    assert_same_tensors,
    both_quietly,
    check_api_names_match_torch,
    check_in_place_chain,
    check_same_error,
    check_same_error_first_line,
    check_strides_match_torch,
    check_zero_dim_result_is_writable,
    on_both,
    spec_tests,
)

import gradiente

torch = pytest.importorskip("torch")

BCAST = [((3,), (3,)), ((2, 3), (3,)), ((2, 1), (1, 3)), ((), (2, 3)), ((4, 1, 3), (2, 1))]
POSITIVE = (0.5, 2.0)


def positive_denominator(rng, shapes):
    a, b, c = (rng.uniform(-2, 2, size=s) for s in shapes)
    return [a, b, np.abs(c) + 0.5]


SPECS = [
    OpSpec("add", lambda lib, x, y: x + y, BCAST),
    OpSpec("add_alpha", lambda lib, x, y: lib.add(x, y, alpha=2.5), BCAST),
    OpSpec("add_scalar", lambda lib, x: x + 1.5, [((3,),), ((2, 3),)]),
    OpSpec("sub", lambda lib, x, y: x - y, BCAST),
    OpSpec("rsub_scalar", lambda lib, x: 2 - x, [((3,),)]),
    OpSpec("mul", lambda lib, x, y: x * y, BCAST),
    OpSpec("mul_scalar", lambda lib, x: x * 3.0, [((3,),)]),
    OpSpec("div", lambda lib, x, y: x / y, BCAST, domain=POSITIVE),
    OpSpec("rdiv_scalar", lambda lib, x: 2 / x, [((3,),)], domain=POSITIVE),
    OpSpec("neg", lambda lib, x: -x, [((3,),), ((2, 3),)]),
    OpSpec("pow_scalar", lambda lib, x: x ** 3, [((3,),), ((2, 3),)]),
    OpSpec("pow_half", lambda lib, x: x ** 0.5, [((3,),)], domain=POSITIVE),
    OpSpec("pow_tensor", lambda lib, x, y: x ** y, BCAST, domain=POSITIVE),
    OpSpec("rpow", lambda lib, x: 2.0 ** x, [((3,),)]),
    OpSpec("reciprocal", lambda lib, x: x.reciprocal(), [((3,),)], domain=POSITIVE),
    OpSpec("remainder", lambda lib, x, y: x % y, [((3,), (3,))], domain=POSITIVE, gradcheck=False),
    OpSpec("remainder_number", lambda lib, x: lib.remainder(x, 0.7), [((3,),), ((2, 3),)]),
    OpSpec("fmod_number", lambda lib, x: lib.fmod(x, 0.7), [((3,),), ((2, 3),)]),
    OpSpec("fmod", lambda lib, x, y: x.fmod(y), [((3,), (3,)), ((2, 3), (3,))], domain=POSITIVE),
    OpSpec("div_floor", lambda lib, x, y: lib.div(x, y, rounding_mode="floor"), [((2, 3), (3,))], domain=POSITIVE),
    OpSpec("div_trunc_number", lambda lib, x: x.div(0.7, rounding_mode="trunc"), [((2, 3),)]),
    # mixed signs: where x / y < 0, remainder's floor and fmod's trunc give different gradients in y
    OpSpec("remainder_signs", lambda lib, x, y: lib.remainder(x, y), [((3, 4), (4,))], domain=(-3.0, 3.0),
           gradcheck=False),
    OpSpec("fmod_signs", lambda lib, x, y: lib.fmod(x, y), [((3, 4), (4,))], domain=(-3.0, 3.0), gradcheck=False),
    # fused products
    OpSpec("addcmul", lambda lib, x, a, b: lib.addcmul(x, a, b, value=0.5),
           [((3, 4), (3, 4), (4,)), ((2, 1), (3,), (2, 3))]),
    OpSpec("addcmul_method", lambda lib, x, a, b: x.addcmul(a, b), [((3,), (3,), (3,))]),
    OpSpec("addcdiv", lambda lib, x, a, b: lib.addcdiv(x, a, b, value=-2),
           [((3, 4), (3, 4), (4,)), ((4,), (2, 4), (1,))], make_inputs=positive_denominator),
]


test_gradcheck, test_against_torch, test_gradgradcheck = spec_tests(SPECS)



def test_small_arithmetic_details_match_torch():
    # rsub with a number honours alpha; round records RoundBackward1 whenever decimals is given; float_power_
    # refuses a float32 base; unary + refuses bools; floor_divide's node has PyTorch's name()
    for lib in (gradiente, torch):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = lib.rsub(x, 3.0, alpha=2)
        y.sum().backward()
        assert y.tolist() == [1.0, -1.0] and x.grad.tolist() == [-2.0, -2.0]
        assert type(lib.round(x, decimals=0).grad_fn).__name__ == "RoundBackward1"
        assert type(lib.round(x).grad_fn).__name__ == "RoundBackward0"
        assert lib.floor_divide(x, 2).grad_fn.name() == "torch::autograd::NotImplemented"
        with pytest.raises(RuntimeError, match="the base given to float_power_ has dtype Float"):
            lib.tensor([1.0]).float_power_(2)
        with pytest.raises(RuntimeError, match=r"The `\+` operator, on a bool tensor is not supported\."):
            +lib.tensor([True])


def test_floor_divide_backward_raises_pytorchs_error():
    check_same_error(lambda lib: lib.floor_divide(lib.tensor([1.0, 2.0], requires_grad=True), 2).sum().backward())


def test_broadcasting_error_first_line_matches_torch():
    check_same_error_first_line(lambda lib: lib.zeros(2, 3) + lib.zeros(3, 2))


def test_zero_dim_result_of_neg_is_a_writable_array():
    """NumPy turns 0-d results into scalars; a tensor must still hold a (writable) array."""
    check_zero_dim_result_is_writable(lambda x: -x)


def test_api_names_match_torch():
    check_api_names_match_torch(["float_power", "positive", "rsub"])


# --- addcmul, addcdiv ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("fn", [
    lambda lib: lib.addcmul(lib.ones(2, 3), lib.full((2, 3), 2.0), lib.full((3,), 4.0), value=0.5),
    lambda lib: lib.addcmul(lib.arange(3), lib.arange(3), lib.arange(3), value=2),
    lambda lib: lib.addcmul(lib.arange(3), lib.arange(3), lib.arange(3), value=0.5),
    lambda lib: lib.addcmul(lib.ones(3), lib.arange(3), lib.ones(3)),
    lambda lib: lib.addcmul(lib.ones(3), lib.ones(3), lib.ones(3, dtype=lib.float64)),
    lambda lib: lib.addcdiv(lib.ones(3), lib.ones(3), lib.zeros(3)),
    lambda lib: lib.addcdiv(lib.ones(3), lib.arange(3.0), lib.full((3,), 4.0), value=-1),
    lambda lib: lib.ones(2, 3).addcmul_(lib.ones(3), lib.ones(2, 3)),
    lambda lib: lib.ones(2, 3).addcdiv_(lib.ones(3), lib.full((2, 3), 4.0), value=2),
], ids=lambda fn: "")
def test_addcmul_addcdiv_match_torch(fn):
    assert_same_tensors(*both_quietly(fn))


@pytest.mark.parametrize("fn", [
    lambda lib: lib.addcdiv(lib.ones(3, dtype=lib.int64), lib.ones(3, dtype=lib.int64), lib.ones(3, dtype=lib.int64)),
    lambda lib: lib.addcdiv(lib.ones(3), lib.ones(3, dtype=lib.int64), lib.ones(3, dtype=lib.int64)),
    lambda lib: lib.addcmul(lib.ones(3, dtype=lib.bool), lib.ones(3, dtype=lib.bool), lib.ones(3, dtype=lib.bool)),
    lambda lib: lib.addcmul(1, lib.ones(3), lib.ones(3)),
    lambda lib: lib.addcmul(lib.ones(3), 2.0, lib.ones(3)),
    lambda lib: lib.addcmul(lib.ones(3), lib.ones(3), lib.ones(3), 2),
    lambda lib: lib.addcmul(lib.ones(3), lib.ones(2, 1), lib.ones(4)),
    lambda lib: lib.ones(3).addcmul_(lib.ones(2, 3), lib.ones(3)),
], ids=lambda fn: "")
def test_addcmul_addcdiv_errors_match_torch(fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_same_error(fn)


def test_in_place_forms_record_torchs_nodes():
    """addcmul_ and addcdiv_ in a chain on a non-leaf: the same nodes and the same gradient (split from the chain
    of test_ops_scattering.py's test of this name)."""
    def chain(lib, y):
        return [type(y.addcmul_(lib.ones(4), lib.full((4,), 2.0)).grad_fn).__name__,
                type(y.addcdiv_(lib.ones(4), lib.full((4,), 2.0)).grad_fn).__name__]
    check_in_place_chain(chain)


@pytest.mark.parametrize("base", ["tensor", "number"])
def test_pow_derivatives_at_zero_follow_pytorchs_conventions(base):
    def run(lib):
        exponent = lib.tensor([-1.0, 0.0, 1.0, 2.0], requires_grad=True)
        if base == "number":
            (0 ** exponent).sum().backward()
            return exponent.grad.tolist()
        x = lib.zeros(4, requires_grad=True)
        (x ** exponent).sum().backward()
        return x.grad.tolist(), exponent.grad.tolist()
    assert run(gradiente) == run(torch)


def test_math_constants():
    assert (gradiente.inf, gradiente.e, gradiente.pi) == (torch.inf, torch.e, torch.pi)
    assert gradiente.nan != gradiente.nan


MIXED_LAYOUTS = [
    lambda x: (x.t(), x.reshape(4, 3)),
    lambda x: (x.reshape(4, 3), x.t()),
    lambda x: (x.reshape(2, 3, 2).permute(2, 0, 1), x.reshape(2, 2, 3).permute(1, 0, 2)),
    lambda x: (x.reshape(2, 3, 2).permute(2, 0, 1), x[0, :3]),
    lambda x: (x[:, ::2].t(), x[:2].reshape(2, 4)[:, :3]),
    lambda x: (x.t()[:, :1], x[:2].reshape(4, 2)),
    lambda x: (x.t(), x.reshape(4, 3).double()),
]
MIXED_LAYOUT_IDS = ["transposed_and_contiguous", "contiguous_and_transposed", "two_permutations", "permuted_and_row",
                     "strided", "column_broadcast", "mixed_dtypes"]


@pytest.mark.parametrize("pair", MIXED_LAYOUTS, ids=MIXED_LAYOUT_IDS)
@pytest.mark.parametrize("op", [lambda a, b: a + b, lambda a, b: b * a, lambda a, b: a.maximum(b)],
                         ids=["add", "mul_reversed", "maximum"])
def test_result_of_operands_laid_out_differently_has_torchs_strides(op, pair):
    """PyTorch's TensorIterator orders the result's dims by the first operand's strides that decide (NumPy
    prefers C order where the operands disagree)."""
    check_strides_match_torch(lambda lib, x: op(*pair(x)))


@pytest.mark.parametrize("op", ["remainder", "fmod"])
def test_rounded_quotient_gradient_stays_connected_under_create_graph(op):
    """dy = -grad·round(x / y) is recorded as PyTorch records it: differentiating it again gives zeros, where a
    constant made autograd.grad raise "does not require grad"."""
    def run(lib):
        x = lib.tensor([1.5, 2.5, -3.0], dtype=lib.float64, requires_grad=True)
        d = lib.tensor([1.2, 0.7, 0.8], dtype=lib.float64, requires_grad=True)
        gx, gd = lib.autograd.grad(getattr(lib, op)(x * x, d).sum(), [x, d], create_graph=True)
        return (gx, gd, *lib.autograd.grad((gd * gd).sum(), [x, d]))
    assert_same_tensors(*both_quietly(run))


@pytest.mark.parametrize("call", [
    lambda lib: lib.ones(3) * np.array(2.0),
    lambda lib: lib.ones(3) * np.array(2),
    lambda lib: lib.ones(3) + np.ones(3, dtype=np.float32),
    lambda lib: lib.ones(3) - np.ones(3),
    lambda lib: lib.ones(3, dtype=lib.int64) / np.array(2),
    lambda lib: lib.ones(3, dtype=lib.int64) + np.array([1, 2, 3], dtype=np.int32),
    lambda lib: lib.ones(2, 2) * np.ones((3, 1, 1)),
    lambda lib: lib.ones(3) * np.float64(2.0),
], ids=["float64_0d", "int64_0d", "float32_array", "float64_array", "int_div", "int32_array", "broadcast",
        "numpy_scalar"])
def test_operator_with_a_numpy_array_follows_numpy_as_torch(call):
    """PyTorch leaves ``tensor OP array`` to NumPy: NumPy's dtype promotion, a tensor back (a NumPy scalar is a
    number, as before)."""
    ours, theirs = both_quietly(call)
    assert isinstance(ours, gradiente.Tensor)
    assert_same_tensors(ours, theirs)


def test_operator_with_a_numpy_array_refuses_a_tensor_that_requires_grad():
    """NumPy reads the tensor through numpy(): refused while it requires grad, so the graph is never dropped."""
    messages = []
    for lib in (gradiente, torch):
        with pytest.raises(RuntimeError) as err:
            lib.ones(3, requires_grad=True) * np.array(2.0)
        messages.append(str(err.value))
    assert messages[0] == messages[1]


def test_pow_of_two_tensors_has_pytorchs_strides():
    """Issue 13, found by tools/random_programs.py: tensor ** tensor kept NumPy's layout where the operands'
    layouts disagree; the other binary ops already lay their result out as PyTorch's TensorIterator does."""
    def scenario(lib):
        base = lib.arange(1.0, 7.0).reshape(3, 2).t()
        out = base ** lib.full((2, 3), 2.0)
        return out.stride(), out.tolist()
    on_both(scenario)


@pytest.mark.parametrize("op", [lambda a, b: a + b, lambda a, b: a * b, lambda a, b: a > b,
                                lambda a, b: a ** b], ids=["add", "mul", "gt", "pow"])
@pytest.mark.parametrize("dtype", ["float64", "float32"])     # float32 meets float64: a cast, which resets strides
def test_broadcast_result_is_ordered_by_size_one_strides_too(op, dtype):
    """Issue 13, found by tools/random_programs.py: a transposed (1, 1, 3) is a (3, 1, 1) whose dim 0 is the
    fastest; PyTorch's TensorIterator orders a broadcast result by the strides of such size-1 dims as well, which
    NumPy's contiguity flag, broadcast_to and astype hide."""
    def scenario(lib):
        x = lib.from_numpy(np.arange(3.0, dtype=dtype).reshape(1, 1, 3).T)
        out = op(x, lib.ones(3, 1, dtype=lib.float64))
        return out.stride(), out.tolist()
    on_both(scenario)
