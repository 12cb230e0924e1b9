"""softmax and log_softmax, the ops of ``ops/softmax.py``, reached as ``nn.functional.softmax``/``log_softmax`` and
``Tensor.softmax``/``log_softmax``: float64 gradcheck (contiguous and strided inputs), differential tests against
PyTorch (forward, backward with a non-trivial upstream gradient, grad_fn names, the whole recorded graph) in float32
and float64, second derivatives, errors worded as PyTorch's, stability for large inputs.

``nn.functional``'s own part (softmin, and the legacy choice of dim, with its warning, when none is given) is tested
in test_functional.py; ``special.softmax``/``log_softmax`` in test_ops_special.py.
"""
import warnings

import numpy as np
import pytest
from harness import OpSpec, cases, check_strides_match_torch, make_tensors, spec_tests
from test_functional import WIDE, F, _as_torch, _graph, _t

import gradiente

torch = pytest.importorskip("torch")

SPECS = [
    OpSpec("softmax", lambda lib, x: F(lib).softmax(x, dim=-1), [((5,),), ((3, 5),), ((2, 3, 4),)], domain=WIDE),
    OpSpec("softmax_dim0", lambda lib, x: F(lib).softmax(x, dim=0), [((3, 5),), ((2, 3, 4),)], domain=WIDE),
    OpSpec("softmax_dim1", lambda lib, x: F(lib).softmax(x, 1), [((2, 3, 4),)], domain=WIDE),
    OpSpec("softmax_scalar", lambda lib, x: F(lib).softmax(x, 0), [((),)]),
    OpSpec("softmax_dtype", lambda lib, x: F(lib).softmax(x, -1, dtype=lib.float64), [((3, 5),)],
           dtypes=("float32",)),
    OpSpec("log_softmax", lambda lib, x: F(lib).log_softmax(x, dim=-1), [((5,),), ((3, 5),), ((2, 3, 4),)],
           domain=WIDE),
    OpSpec("log_softmax_dim0", lambda lib, x: F(lib).log_softmax(x, 0), [((3, 5),), ((2, 3, 4),)], domain=WIDE),
    OpSpec("log_softmax_large", lambda lib, x: F(lib).log_softmax(x * 1000, 1), [((3, 5),)]),
    OpSpec("tensor_softmax", lambda lib, x: x.softmax(-1), [((3, 5),)]),
    OpSpec("tensor_log_softmax", lambda lib, x: x.log_softmax(0), [((3, 5),)]),
]


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")     # as test_functional.py's table runs
        yield


test_gradcheck, test_against_torch, test_gradgradcheck = spec_tests(SPECS)


@pytest.mark.parametrize("spec,shapes", cases(SPECS))
def test_graph_matches_torch(spec, shapes):
    """Every node of the recorded graph, in order, is the node PyTorch records."""
    outs = [spec.fn(lib, *make_tensors(lib, spec, shapes, dtype="float32")) for lib in (gradiente, torch)]
    if spec.check_name and (outs[1].grad_fn is not None or outs[0].grad_fn is not None):
        assert _graph(outs[0]) == _graph(outs[1])


# --- errors, stability, second derivatives ------------------------------------------------------------------

ERRORS = {
    "softmax_long": lambda lib: F(lib).softmax(_t(lib, [1, 2]), 0),
    "log_softmax_long": lambda lib: F(lib).log_softmax(_t(lib, [1, 2]), 0),
    "softmax_dim": lambda lib: F(lib).softmax(lib.zeros(2, 3), 2),
}


@pytest.mark.parametrize("name", list(ERRORS))
def test_error_as_torch(name):
    """Both libraries raise the same exception class with the same message."""
    with pytest.raises(Exception) as expected:
        ERRORS[name](torch)
    with pytest.raises(Exception) as got:
        ERRORS[name](gradiente)
    assert type(got.value).__name__ == type(expected.value).__name__
    assert _as_torch(str(got.value)) == str(expected.value)


def test_log_softmax_stable_for_large_inputs():
    x = np.array([[1000.0, 0.0, -1000.0], [1e30, 1e30, 0.0]])
    got = gradiente.nn.functional.log_softmax(gradiente.tensor(x), 1).numpy()
    np.testing.assert_array_equal(got, torch.nn.functional.log_softmax(torch.tensor(x), 1).numpy())


SECOND_ORDER = {
    "softmax": lambda lib, x: F(lib).softmax(x, 1),
    "log_softmax": lambda lib, x: F(lib).log_softmax(x, 0),
}


@pytest.mark.parametrize("name", list(SECOND_ORDER))
def test_second_derivatives(name):
    x = gradiente.from_numpy(np.random.RandomState(0).uniform(-2, 2, (4, 5))).requires_grad_()
    assert gradiente.autograd.gradgradcheck(lambda t: SECOND_ORDER[name](gradiente, t), [x])


@pytest.mark.parametrize("fn", [
    lambda lib, x: x.t().softmax(0),
    lambda lib, x: x.t().log_softmax(1),
    lambda lib, x: x[:, ::2].softmax(-1),
], ids=["softmax_transposed", "log_softmax_transposed", "softmax_strided"])
def test_result_strides_match_torch(fn):
    check_strides_match_torch(fn)
