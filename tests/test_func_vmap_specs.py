"""``vmap`` over every op of the op tables: each OpSpec row (its first shape case) runs on a batch of three
examples (three seeds of the row's inputs, stacked along a new dim 0 of every input), and

* ``vmap`` of the op equals the op applied to each example in a Python loop, stacked, and
* equals ``torch.func.vmap`` of the same op on the same inputs, where PyTorch can vmap the op,

in float32 and float64. Rows whose examples disagree in shape or dtype (a result that depends on the values) can
only be refused, as PyTorch refuses them, and the test checks that vmap raises. Known gaps are listed in
``KNOWN_GAPS`` with their reason and run as strict xfails. The inputs a row differentiates require grad, as in
the harness, so the rows that call ``autograd.grad`` inside their op (double backward) run under vmap too.
"""
import warnings

import numpy as np
import pytest
from harness import all_op_specs, make_arrays

import gradiente
from gradiente.func import _dispatch

torch = pytest.importorskip("torch")

BATCH = 3
SPECS = [spec for _, spec in all_op_specs(skip=(__name__,))]

# rows whose op cannot run under gradiente's vmap yet, with the reason (strict xfails: fixing one fails its xfail)
_PACKED = "nn.utils.rnn's functions are not dispatched under vmap, and a PackedSequence cannot be stacked"
_DISTRIBUTIONS = ("distributions call ops by direct reference (not through the dispatching namespaces) and check "
                  "their parameters with data-dependent control flow")
KNOWN_GAPS: dict = {
    "as_strided_": "as_strided_ (in place) reads the storage, which holds every example: it would need the batch "
                   "stride, which as_strided's batching rule adds",
    "nested_list": "the deprecation warning of a nested-list index is not raised under vmap (the physical index "
                   "has another form)",
    "pack_padded_sequence": _PACKED,
    "pack_padded_sequence_unsorted": _PACKED,
    "pad_packed_round_trip": _PACKED,
    "sdpa_math_dropout": "dropout inside scaled_dot_product_attention runs per example without replaying the "
                         "generator, so 'same' draws differ",
    "dirichlet_rsample": _DISTRIBUTIONS,
    "gamma_cdf": _DISTRIBUTIONS,
    # sparse COO tensors (test_sparse.py's rows): vmap does not batch them, in PyTorch either
    **dict.fromkeys(["sparse_mm", "sparse_torch_mm", "sparse_matmul", "sparse_addmm", "sparse_to_dense",
                     "sparse_coalesce", "sparse_values", "sparse_sum", "sparse_sum_dim", "sparse_sum_all_dims",
                     "sparse_softmax", "sparse_log_softmax", "sparse_scaled",
                     "sparse_t", "sparse_transpose", "sparse_to_float32", "sparse_to_float64", "dense_to_sparse",
                     "sparse_select", "sparse_permute", "sparse_unsqueeze", "sparse_stack"],
                    "a sparse tensor made inside vmap holds one batch's values; vmap does not batch sparse tensors"),
    # compressed sparse tensors (test_ops_sparse_compressed.py's rows; csr_sum and csr_torch_sum batch): likewise
    **dict.fromkeys(["bsc_to_dense", "bsr_t", "bsr_to_bsc", "bsr_to_coo", "bsr_to_dense", "coo_to_csr", "csc_matmul",
                     "csc_to_coo", "csc_to_csr", "csc_to_dense", "csr_addmm", "csr_matmul", "csr_mm", "csr_scaled",
                     "csr_sparse_addmm", "csr_sparse_mm", "csr_t", "csr_to_bsr", "csr_to_coo", "csr_to_csc",
                     "csr_to_dense", "csr_to_float64", "csr_torch_mm", "csr_transpose_mm", "csr_values",
                     "dense_csr_matmul", "dense_csc_mm", "dense_to_bsc", "dense_to_bsr", "dense_to_csc", "dense_to_csr",
                     "dense_to_sparse_layout"],
                    "a compressed tensor made inside vmap holds one batch's values; vmap does not batch sparse "
                    "tensors"),
}


def _first(out):
    return out[0] if isinstance(out, (tuple, list)) else out


def _examples(spec, dtype):
    return [make_arrays(spec, spec.shapes[0], seed, dtype) for seed in range(BATCH)]


def _per_example(lib, spec, examples):
    """The op on each example, in a loop: a list of arrays (None when an example raises)."""
    results = []
    for arrays in examples:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = _first(spec.fn(lib, *_requiring_grad(lib, spec, arrays)))
        results.append(out.detach().numpy().copy() if isinstance(out, lib.Tensor) else np.asarray(out))
    return results


def _requiring_grad(lib, spec, arrays):
    """The row's inputs, those it differentiates requiring grad (as the harness makes them)."""
    wanted = spec.grad_inputs if spec.grad_inputs is not None else range(len(arrays))
    return [lib.from_numpy(np.array(a)).requires_grad_() if i in wanted and a.dtype.kind == "f" else
            lib.from_numpy(np.array(a)) for i, a in enumerate(arrays)]


def _vmapped(lib, spec, examples):
    stacked = [np.stack([ex[i] for ex in examples]) for i in range(len(examples[0]))]
    inputs = _requiring_grad(lib, spec, stacked)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = lib.func.vmap(lambda *xs: _first(spec.fn(lib, *xs)), randomness="same")(*inputs)
    return out.detach().numpy()


def _stackable(results):
    return all(r.shape == results[0].shape and r.dtype == results[0].dtype for r in results)


def _tolerances(spec, dtype):
    return (spec.rtol32, spec.atol32) if dtype == "float32" else (1e-9, 1e-10)


def _params(dtype):
    params = []
    for spec in SPECS:
        if dtype not in spec.dtypes:
            continue
        marks = [pytest.mark.xfail(strict=True, reason=KNOWN_GAPS[spec.name])] if spec.name in KNOWN_GAPS else []
        params.append(pytest.param(spec, id=spec.name, marks=marks))
    return params


def _check(spec, dtype):
    examples = _examples(spec, dtype)
    expected = _per_example(gradiente, spec, examples)
    if not _stackable(expected):
        with pytest.raises((RuntimeError, ValueError)):
            _vmapped(gradiente, spec, examples)
        return
    ours = _vmapped(gradiente, spec, examples)
    rtol, atol = _tolerances(spec, dtype)
    np.testing.assert_allclose(ours, np.stack(expected), rtol=rtol, atol=atol, equal_nan=True,
                               err_msg=f"{spec.name}: vmap differs from the loop")
    assert ours.dtype == expected[0].dtype, spec.name
    try:
        theirs = _vmapped(torch, spec, examples)
    except Exception:  # PyTorch cannot vmap this op: the loop is the reference
        return
    np.testing.assert_allclose(ours, theirs, rtol=rtol, atol=atol, equal_nan=True,
                               err_msg=f"{spec.name}: vmap differs from torch.func.vmap")


@pytest.mark.parametrize("spec", _params("float64"))
def test_vmap_matches_loop_and_torch_float64(spec):
    _check(spec, "float64")


@pytest.mark.parametrize("spec", _params("float32"))
def test_vmap_matches_loop_and_torch_float32(spec):
    _check(spec, "float32")


def test_most_one_input_rows_batch_without_the_fallback():
    """Rows of one input (an op batched in its only tensor) run mostly on batching rules: the per-example
    fallback serves the ops listed in docs/architecture.md, under 45% of the rows (it was under two fifths before
    the linear algebra, signal and ATen-level nn ops of issue 16 came without batching rules of their own). (Rows
    of several inputs batch every input, weights included, and more of them fall back.)"""
    _dispatch.FALLBACK_COUNTS.clear()
    ran = fell_back = 0
    for spec in SPECS:
        if len(spec.shapes[0]) != 1 or spec.name in KNOWN_GAPS:
            continue
        examples = _examples(spec, "float64")
        try:
            expected = _per_example(gradiente, spec, examples)
        except Exception:
            continue
        if not _stackable(expected):
            continue
        before = sum(_dispatch.FALLBACK_COUNTS.values())
        _vmapped(gradiente, spec, examples)
        ran += 1
        fell_back += sum(_dispatch.FALLBACK_COUNTS.values()) > before
    assert ran > 600
    assert fell_back < 0.45 * ran, (fell_back, ran)
