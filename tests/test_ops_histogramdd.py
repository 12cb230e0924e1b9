"""``torch.histogramdd`` (``ops/histogramdd.py``) against PyTorch: counts, densities and edges in float32 and
float64 for every form of ``bins`` (one count, a count per dim, edge tensors), ``range``, ``weight``,
``density``, points on edges, outside them, nan and inf, empty input; the named tuple; no derivative (PyTorch's
errors); the errors of bad arguments."""
import math

import numpy as np
import pytest
from harness import on_both, plain

import gradiente

torch = pytest.importorskip("torch")

RNG = np.random.RandomState(0)
POINTS = RNG.randn(300, 3)
POINTS[:4] = [[-1.0, 0.0, 1.0], [1.0, -2.0, 0.0], [0.0, 2.0, 1.0], [5.0, 5.0, 5.0]]     # on edges and outside
WEIGHTS = RNG.rand(300)


def _compare(call, dtype):
    results = []
    for lib in (gradiente, torch):
        out = call(lib, lib.tensor(POINTS, dtype=getattr(lib, dtype)), lib.tensor(WEIGHTS, dtype=getattr(lib, dtype)),
                   getattr(lib, dtype))
        assert type(out).__name__ == "histogramdd"
        assert isinstance(out.bin_edges, tuple)
        results.append((out.hist.numpy(), [e.numpy() for e in out.bin_edges], str(out.hist.dtype).split(".")[-1]))
    (hist, edges, kind), (their_hist, their_edges, their_kind) = results
    assert kind == their_kind
    assert hist.shape == their_hist.shape
    np.testing.assert_allclose(hist, their_hist, rtol=1e-6 if dtype == "float32" else 1e-15, equal_nan=True)
    assert len(edges) == len(their_edges)
    for ours, theirs in zip(edges, their_edges):
        np.testing.assert_array_equal(ours, theirs)


CALLS = {
    "one_count": lambda lib, x, w, dtype: lib.histogramdd(x, bins=4),
    "count_per_dim_range": lambda lib, x, w, dtype: lib.histogramdd(x, bins=[2, 3, 4],
                                                                    range=[-1.0, 1.0, -2.0, 2.0, 0.0, 1.0]),
    "weighted_density": lambda lib, x, w, dtype: lib.histogramdd(x, bins=(3, 2, 5), range=[-1.0, 1, -2, 2, 0, 1],
                                                                 weight=w, density=True),
    "edges": lambda lib, x, w, dtype: lib.histogramdd(x.view(30, 10, 3), bins=[
        lib.tensor([-1.0, 0.0, 0.5, 2.0], dtype=dtype), lib.tensor([-3.0, 3.0], dtype=dtype),
        lib.tensor([0.0, 1.0, 1.5, 2.0], dtype=dtype)], weight=w.view(30, 10)),
    "edges_density": lambda lib, x, w, dtype: lib.histogramdd(x[:, :2], bins=[
        lib.tensor([-1.0, 0.0, 0.5, 2.0], dtype=dtype), lib.tensor([-3.0, 0.0, 3.0], dtype=dtype)], density=True),
    "two_dims_density": lambda lib, x, w, dtype: lib.histogramdd(x[:, 1:], bins=7, density=True),
    "one_dim": lambda lib, x, w, dtype: lib.histogramdd(x[:, :1], bins=10),
    "single_value": lambda lib, x, w, dtype: lib.histogramdd(lib.ones(5, 2, dtype=dtype), bins=3),
    "empty": lambda lib, x, w, dtype: lib.histogramdd(lib.zeros(0, 2, dtype=dtype), bins=2),
    "nan_and_inf_outside_range": lambda lib, x, w, dtype: lib.histogramdd(
        lib.tensor([[math.nan, 0.5], [0.2, math.inf], [0.5, 0.5], [1.0, 1.0], [-math.inf, 0.0]], dtype=dtype),
        bins=2, range=[0.0, 1.0, 0.0, 1.0]),
    "large_values": lambda lib, x, w, dtype: lib.histogramdd(x * 1e30, bins=[3, 1, 2]),
}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("call", list(CALLS))
def test_histograms_match_torch(call, dtype):
    _compare(CALLS[call], dtype)


def test_given_edges_come_back_as_the_same_tensors():
    edges = [gradiente.tensor([0.0, 1.0]), gradiente.tensor([0.0, 0.5, 1.0])]
    result = gradiente.histogramdd(gradiente.rand(6, 2), bins=edges)
    assert result.bin_edges[0] is edges[0] and result.bin_edges[1] is edges[1]
    hist, bin_edges = result        # a named tuple: it unpacks
    assert hist is result.hist and bin_edges is result.bin_edges


PROGRAMS = {
    "hist_has_no_derivative": lambda lib, x: lib.histogramdd(x, bins=2).hist.sum().backward(),
    "edges_have_no_derivative": lambda lib, x: lib.histogramdd(x, bins=2).bin_edges[1].sum().backward(),
    "hist_of_given_edges_has_no_derivative": lambda lib, x: lib.histogramdd(
        x, bins=[lib.tensor([0.0, 1.0, 2.0]), lib.tensor([0.0, 2.0])]).hist.sum().backward(),
    "requires_grad": lambda lib, x: [t.requires_grad for t in (lib.histogramdd(x, bins=2).hist,
                                                               *lib.histogramdd(x, bins=2).bin_edges)],
    "repr": lambda lib, x: repr(lib.histogramdd(x.detach(), bins=[2, 1])).replace("torch", "gradiente"),
    "one_dim_input": lambda lib, x: lib.histogramdd(x[:, 0], bins=2),
    "too_many_counts": lambda lib, x: lib.histogramdd(x, bins=[2, 3, 4]),
    "too_few_counts": lambda lib, x: lib.histogramdd(x, bins=[2]),
    "range_of_wrong_length": lambda lib, x: lib.histogramdd(x, bins=2, range=[0.0, 1.0]),
    "range_reversed": lambda lib, x: lib.histogramdd(x, bins=2, range=[1.0, 0.0, 0.0, 1.0]),
    "zero_bins": lambda lib, x: lib.histogramdd(x, bins=0),
    "negative_bins": lambda lib, x: lib.histogramdd(x, bins=[2, -1]),
    "integer_input": lambda lib, x: lib.histogramdd(x.long(), bins=2),
    "weight_of_wrong_shape": lambda lib, x: lib.histogramdd(x, bins=2, weight=lib.ones(4)),
    "weight_of_wrong_dtype": lambda lib, x: lib.histogramdd(x, bins=2, weight=lib.ones(5, dtype=lib.float64)),
    "too_few_edge_tensors": lambda lib, x: lib.histogramdd(x, bins=[lib.tensor([0.0, 1.0, 2.0])]),
    "edge_matrix": lambda lib, x: lib.histogramdd(x, bins=[lib.tensor([0.0, 1.0]), lib.tensor([[0.0, 2.0]])]),
    "edges_of_other_dtype": lambda lib, x: lib.histogramdd(x, bins=[lib.tensor([0.0, 1.0]),
                                                                    lib.tensor([0.0, 2.0], dtype=lib.float64)]),
    "empty_edges": lambda lib, x: lib.histogramdd(x, bins=[lib.tensor([0.0, 1.0]), lib.tensor([])]),
    "nan_point": lambda lib, x: lib.histogramdd(lib.tensor([[math.nan, 1.0], [0.0, 1.0]]), bins=2),
    "inf_point": lambda lib, x: lib.histogramdd(lib.tensor([[math.inf, 1.0], [0.0, 1.0]]), bins=2),
    "counts": lambda lib, x: plain(lib.histogramdd(x, bins=[2, 3]).hist),
}


@pytest.mark.parametrize("program", list(PROGRAMS))
def test_programs_match_pytorch(program):
    def scenario(lib):
        x = lib.tensor([[0.0, 1.0], [1.0, 2.0], [2.0, 0.0], [0.5, 0.5], [2.0, 2.0]], requires_grad=True)
        return PROGRAMS[program](lib, x)

    on_both(scenario)


def test_a_tensor_of_bins_is_refused_with_a_type_error():
    for lib in (gradiente, torch):
        with pytest.raises(TypeError, match="histogramdd\\(\\) received an invalid combination of arguments"):
            lib.histogramdd(lib.ones(3, 2), bins=lib.tensor([0.0, 1.0]))
