"""``torch.gradient`` (``ops/numerical_gradient.py``) against PyTorch: values and dtypes for every kind of spacing
(default, one number, a number per dim, coordinate tensors), dims, both edge orders, edge values (0, negative,
large, inf, nan), integer and complex inputs; first and second derivatives in the input and the coordinates
(gradcheck in float64, PyTorch's gradients on the same inputs); the errors."""
import math

import numpy as np
import pytest
from harness import OpSpec, on_both, plain, spec_tests

import gradiente

torch = pytest.importorskip("torch")


def first(results):
    """The tuple's tensors joined, so one spec checks every dim's derivative."""
    return results[0] if len(results) == 1 else results[0] * 1 + results[-1] * 2


def coordinates(lib, n, like):
    return lib.tensor(np.cumsum(np.linspace(0.5, 1.5, n)), dtype=like.dtype)


SPECS = [
    OpSpec("gradient_default", lambda lib, x: first(lib.gradient(x)), [((5,),), ((3, 4),)]),
    OpSpec("gradient_scalar_spacing_edge_2", lambda lib, x: first(lib.gradient(x, spacing=0.5, edge_order=2)),
           [((6,),), ((3, 5),)]),
    OpSpec("gradient_spacing_per_dim", lambda lib, x: first(lib.gradient(x, spacing=[2.0, 0.25])), [((4, 3),)]),
    OpSpec("gradient_one_dim", lambda lib, x: first(lib.gradient(x, dim=-1, edge_order=2)), [((2, 3, 4),)]),
    OpSpec("gradient_dims_and_spacing", lambda lib, x: first(lib.gradient(x, spacing=(1.5, 3), dim=(2, 0))),
           [((3, 2, 4),)]),
    OpSpec("gradient_coordinates", lambda lib, x: first(lib.gradient(
        x, spacing=[coordinates(lib, 4, x), coordinates(lib, 5, x)])), [((4, 5),)]),
    OpSpec("gradient_coordinates_edge_2", lambda lib, x: first(lib.gradient(
        x, spacing=[coordinates(lib, 6, x)], dim=1, edge_order=2)), [((2, 6),)]),
    OpSpec("gradient_in_the_coordinates", lambda lib, x, c: first(lib.gradient(
        x, spacing=[c.cumsum(0)], dim=0, edge_order=2)), [((5, 2), (5,))], domain=(0.5, 1.5)),
]

test_gradcheck, test_against_torch, test_gradgradcheck = spec_tests(SPECS)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("kwargs", [{}, {"spacing": 3.0}, {"spacing": 2, "edge_order": 2}, {"dim": 1},
                                    {"spacing": [0.1, 10.0], "edge_order": 2}, {"spacing": "coordinates"},
                                    {"spacing": "coordinates", "edge_order": 2}, {"spacing": [1e-300], "dim": 0}])
def test_values_with_edge_values_match_torch(dtype, kwargs):
    values = np.array([[0.0, -1.0, 2.5, 1e30, -0.0],
                       [3.0, math.inf, -2.0, 1e-30, 7.0],
                       [-4.0, 0.5, math.nan, 2.0, 1.0],
                       [1.0, 2.0, 4.0, 8.0, 16.0]])
    results = []
    for lib in (gradiente, torch):
        args = dict(kwargs)
        if args.get("spacing") == "coordinates":
            args["spacing"] = [lib.tensor([0.0, 0.5, 2.0, 2.25], dtype=getattr(lib, dtype)),
                               lib.tensor([-1.0, 0.0, 3.0, 3.5, 10.0], dtype=getattr(lib, dtype))]
        out = lib.gradient(lib.tensor(values, dtype=getattr(lib, dtype)), **args)
        assert isinstance(out, tuple)
        results.append([(t.numpy(), str(t.dtype).split(".")[-1]) for t in out])
    ours, theirs = results
    assert len(ours) == len(theirs)
    for (a, a_dtype), (b, b_dtype) in zip(ours, theirs):
        assert a_dtype == b_dtype
        np.testing.assert_allclose(a, b, rtol=1e-6 if dtype == "float32" else 1e-15, equal_nan=True)


PROGRAMS = {
    "names_and_type": lambda lib, x: (type(lib.gradient(x)).__name__,
                                      [type(t.grad_fn).__name__ for t in lib.gradient(x)]),
    "integer_input": lambda lib, x: [(plain(t), str(t.dtype).split(".")[-1]) for t in (
        lib.gradient(lib.arange(6) ** 2)[0], lib.gradient(lib.arange(6) ** 2, spacing=2, edge_order=2)[0],
        lib.gradient(lib.arange(6) ** 2, spacing=[lib.tensor([0, 1, 3, 4, 7, 8])], edge_order=2)[0])],
    "complex_input": lambda lib, x: [plain(lib.view_as_real(t)) for t in lib.gradient(
        lib.tensor([1 + 2j, 3 - 1j, 0j, 2j]), edge_order=2)],
    "zero_dim": lambda lib, x: lib.gradient(lib.tensor(3.0)),
    "no_dims": lambda lib, x: lib.gradient(x, dim=[]),
    "spacing_too_long": lambda lib, x: lib.gradient(x, spacing=[1.0, 2.0, 3.0]),
    "spacing_too_short": lambda lib, x: lib.gradient(x, spacing=[1.0]),
    "spacing_and_dim_differ": lambda lib, x: lib.gradient(x, spacing=[1.0, 2.0], dim=1),
    "edge_order_3": lambda lib, x: lib.gradient(x, edge_order=3),
    "too_few_for_edge_2": lambda lib, x: lib.gradient(x[:2], edge_order=2),
    "too_few_for_edge_1": lambda lib, x: lib.gradient(x[:1]),
    "zero_dim_coordinates": lambda lib, x: lib.gradient(x, spacing=[lib.tensor(2.0)], dim=1),
    "matrix_coordinates": lambda lib, x: lib.gradient(x, spacing=[lib.ones(1, 3)], dim=0),
    "repeated_dim": lambda lib, x: lib.gradient(x, dim=(0, 0)),
    "dim_out_of_range": lambda lib, x: lib.gradient(x, dim=2),
    "bool_input": lambda lib, x: lib.gradient(lib.tensor([True, False, True])),
    "zero_spacing": lambda lib, x: [plain(t) for t in lib.gradient(x, spacing=0.0)],
}


@pytest.mark.parametrize("program", list(PROGRAMS))
def test_programs_match_pytorch(program):
    def scenario(lib):
        x = lib.tensor([[1.0, 2.0, 4.0, 8.0], [10.0, 20.0, 40.0, 80.0], [3.0, 5.0, 7.0, 9.0]], requires_grad=True)
        return PROGRAMS[program](lib, x)

    on_both(scenario)


def test_tensor_spacing_is_refused_with_a_type_error():
    for lib in (gradiente, torch):
        with pytest.raises(TypeError, match="gradient\\(\\) received an invalid combination of arguments"):
            lib.gradient(lib.ones(3), spacing=lib.ones(3))
