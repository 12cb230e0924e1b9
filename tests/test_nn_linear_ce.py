"""``F.linear_cross_entropy``, ``nn.LinearCrossEntropyLoss`` and ``nn.LinearCrossEntropyOptions`` (new in PyTorch
2.13) against PyTorch: values, gradients and node names of the reference path (class indices, probabilities,
K-dimensional losses, weights, ignore_index, label smoothing, every reduction), float64 gradcheck and gradgradcheck
(the op-spec table), the chunked path's values with ``options``, reprs and state_dict keys, the options' checks,
and the error messages. Also ``nn.factory_kwargs``."""
import warnings

import numpy as np
import pytest
from harness import OpSpec, check_same_error, spec_tests

import gradiente

torch = pytest.importorskip("torch")

N, IN, C = 6, 4, 5
TARGET = [0, 4, 2, 2, 1, 3]
TARGET_K = np.random.RandomState(1).randint(0, C, (N, 2, 3)).tolist()


def F(lib):
    return lib.nn.functional


def _lce(target=TARGET, **kwargs):
    def fn(lib, x, w, *bias):
        return F(lib).linear_cross_entropy(x, w, lib.tensor(target), linear_bias=bias[0] if bias else None, **kwargs)
    return fn


def _probabilities(lib, x, w):
    p = np.random.RandomState(2).uniform(size=(N, C))
    return F(lib).linear_cross_entropy(x, w, lib.tensor(p / p.sum(1, keepdims=True), dtype=x.dtype),
                                       label_smoothing=0.2)


SPECS = [
    OpSpec("linear_cross_entropy", _lce(), [((N, IN), (C, IN)), ((N, IN), (C, IN), (C,))]),
    OpSpec("linear_cross_entropy_sum_ignore", _lce(reduction="sum", ignore_index=2), [((N, IN), (C, IN), (C,))]),
    OpSpec("linear_cross_entropy_none_smoothing", _lce(reduction="none", label_smoothing=0.1),
           [((N, IN), (C, IN))]),
    OpSpec("linear_cross_entropy_unbatched", _lce(target=3), [((IN,), (C, IN), (C,))]),
    OpSpec("linear_cross_entropy_k_dim", _lce(target=TARGET_K), [((N, IN), (C, 2, 3, IN), (C, 2, 3))]),
    OpSpec("linear_cross_entropy_probabilities", _probabilities, [((N, IN), (C, IN))]),
]

test_gradcheck, test_against_torch, test_gradgradcheck = spec_tests(SPECS)


def _run(lib, call, arrays):
    tensors = [lib.tensor(a, requires_grad=True) for a in arrays]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = call(lib, *tensors)
    out.backward(lib.tensor(np.linspace(0.5, 1.5, out.numel()).reshape(tuple(out.shape))))
    return out, [t.grad for t in tensors], [str(w.message) for w in caught]


def _assert_same(call, arrays, same_node=True):
    (out, grads, warned), (t_out, t_grads, t_warned) = (_run(lib, call, arrays) for lib in (gradiente, torch))
    np.testing.assert_allclose(out.detach().numpy(), t_out.detach().numpy(), rtol=1e-10, atol=1e-12)
    for g, t in zip(grads, t_grads):
        if t is None:
            assert g is None
            continue
        np.testing.assert_allclose(g.numpy(), t.numpy(), rtol=1e-10, atol=1e-12)
    if same_node:
        assert type(out.grad_fn).__name__ == type(t_out.grad_fn).__name__
    assert [w.replace("gradiente.", "torch.") for w in warned] == t_warned
    return out, t_out


ARRAYS = [np.random.RandomState(0).randn(N, IN), np.random.RandomState(3).randn(C, IN),
          np.random.RandomState(4).randn(C)]


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("bias", [False, True])
def test_options_give_the_chunked_paths_values(reduction, bias):
    # PyTorch's chunked kernel records its own custom-op node; gradiente's reference path gives the same numbers
    def call(lib, x, w, b):
        options = lib.nn.LinearCrossEntropyOptions(batch_chunk_size=2, chunking_method=None)
        return F(lib).linear_cross_entropy(x, w, lib.tensor(TARGET), linear_bias=b if bias else None,
                                           reduction=reduction, weight=lib.tensor([1.0, 2, 0.5, 1, 3], dtype=x.dtype),
                                           ignore_index=4, options=options)
    _assert_same(call, ARRAYS, same_node=False)


@pytest.mark.parametrize("kwargs", [{"label_smoothing": 0.1}, {"reduction": "sum", "target": TARGET_K}])
def test_options_the_chunked_path_cannot_serve_warn_as_in_torch(kwargs):
    kwargs = dict(kwargs)
    target = kwargs.pop("target", TARGET)
    shape = (C, 2, 3, IN) if target is TARGET_K else (C, IN)

    def call(lib, x, w):
        return F(lib).linear_cross_entropy(x, w.reshape(shape), lib.tensor(target),
                                           options=lib.nn.LinearCrossEntropyOptions(), **kwargs)
    w = np.random.RandomState(5).randn(int(np.prod(shape[:-1])), IN)
    out, _ = _assert_same(call, [ARRAYS[0], w])
    assert out.grad_fn is not None


@pytest.mark.parametrize("kwargs", [{}, {"bias": True, "reduction": "sum", "ignore_index": 1},
                                    {"out_features": (2, 3), "bias": True, "label_smoothing": 0.2},
                                    {"options": "default"}])
def test_module_matches_torch(kwargs):
    results = []
    for lib in (gradiente, torch):
        args = dict(kwargs)
        if args.get("options") == "default":
            args["options"] = lib.nn.LinearCrossEntropyOptions()
        lib.manual_seed(0)
        module = lib.nn.LinearCrossEntropyLoss(IN, C, weight=lib.tensor([1.0, 2, 0.5, 1, 3]), **args).double()
        target = lib.tensor(TARGET_K if "out_features" in kwargs else TARGET)
        x = lib.tensor(ARRAYS[0], requires_grad=True)
        out = module(x, target)
        out.sum().backward()
        results.append((module, out, x.grad))
    (ours, out, dx), (theirs, t_out, t_dx) = results
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    for name, p in theirs.named_parameters():
        np.testing.assert_array_equal(ours.get_parameter(name).detach().numpy(), p.detach().numpy())
        np.testing.assert_allclose(ours.get_parameter(name).grad.numpy(), p.grad.numpy(), rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(out.detach().numpy(), t_out.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(dx.numpy(), t_dx.numpy(), rtol=1e-10, atol=1e-14)
    for attribute in ("num_classes", "out_features", "reduction", "ignore_index", "label_smoothing"):
        assert getattr(ours, attribute) == getattr(theirs, attribute)


def test_options_fields_and_repr_match_torch():
    ours = gradiente.nn.LinearCrossEntropyOptions(allow_retain_graph=True, batch_chunk_size=8,
                                                  chunking_method="aspect_ratio:4", acc_policy="compact")
    theirs = torch.nn.LinearCrossEntropyOptions(allow_retain_graph=True, batch_chunk_size=8,
                                                chunking_method="aspect_ratio:4", acc_policy="compact")
    assert repr(ours) == repr(theirs)
    assert repr(gradiente.nn.LinearCrossEntropyOptions()) == repr(torch.nn.LinearCrossEntropyOptions())
    with pytest.raises(Exception) as ours_error:
        ours.batch_chunk_size = 4
    with pytest.raises(Exception) as their_error:
        theirs.batch_chunk_size = 4
    assert type(ours_error.value) is type(their_error.value)


@pytest.mark.parametrize("call", [
    lambda lib: lib.nn.LinearCrossEntropyOptions(acc_policy="fast"),
    lambda lib: lib.nn.LinearCrossEntropyOptions(chunking_method="rows"),
    lambda lib: lib.nn.LinearCrossEntropyOptions(chunking_method="aspect_ratio:0"),
    lambda lib: lib.nn.LinearCrossEntropyOptions(batch_chunk_size=0),
    lambda lib: lib.nn.LinearCrossEntropyOptions(batch_chunk_size=2.5),
    lambda lib: lib.nn.LinearCrossEntropyOptions(acc_dtype=lib.int32),
    lambda lib: F(lib).linear_cross_entropy(lib.zeros(2, 3, 4), lib.zeros(5, 4), lib.tensor([0, 1])),
    lambda lib: F(lib).linear_cross_entropy(lib.zeros(2, 4), lib.zeros(4), lib.tensor([0, 1])),
    lambda lib: F(lib).linear_cross_entropy(lib.zeros(2, 4), lib.zeros(5, 3), lib.tensor([0, 1])),
    lambda lib: F(lib).linear_cross_entropy(lib.zeros(2, 4), lib.zeros(5, 4), lib.tensor([0, 1]),
                                            linear_bias=lib.zeros(4)),
    lambda lib: F(lib).linear_cross_entropy(lib.zeros(4), lib.zeros(5, 2, 4), lib.tensor([0, 1])),
    lambda lib: F(lib).linear_cross_entropy(lib.zeros(2, 4), lib.zeros(5, 4), lib.zeros(2, 5), ignore_index=1),
    lambda lib: F(lib).linear_cross_entropy(lib.zeros(2, 4), lib.zeros(5, 4), lib.tensor([0, 1]),
                                            options=lib.nn.LinearCrossEntropyOptions(acc_dtype=lib.float64)),
    lambda lib: lib.nn.LinearCrossEntropyLoss(4, 5, weight=lib.ones(4)),
    lambda lib: lib.nn.LinearCrossEntropyLoss(4, 5, label_smoothing=1.5),
], ids=["acc_policy", "chunking_method", "chunking_factor", "chunk_size_zero", "chunk_size_float", "acc_dtype",
        "input_3d", "weight_1d", "in_features", "bias_shape", "k_dim_unbatched", "ignore_index_probabilities",
        "acc_dtype_mismatch", "module_weight_shape", "module_label_smoothing"])
def test_errors_match_torch(call):
    # (dtypes print as gradiente.int32 where PyTorch's print torch.int32)
    with pytest.raises(Exception) as theirs:
        call(torch)
    with pytest.raises(type(theirs.value)) as ours:
        call(gradiente)
    assert str(ours.value).replace("gradiente.", "torch.") == str(theirs.value)


# --- nn.factory_kwargs ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("kwargs", [None, {}, {"dtype": "D"}, {"device": "cpu", "memory_format": "M"},
                                    {"factory_kwargs": {"dtype": "D"}, "device": "cpu"}])
def test_factory_kwargs_matches_torch(kwargs):
    def build(lib):
        if kwargs is None:
            return None
        dtype = {"D": lib.float64, "M": lib.channels_last}
        return {k: (dtype.get(v, v) if not isinstance(v, dict) else {kk: dtype.get(vv, vv) for kk, vv in v.items()})
                for k, v in kwargs.items()}
    ours, theirs = gradiente.nn.factory_kwargs(build(gradiente)), torch.nn.factory_kwargs(build(torch))
    assert sorted(ours) == sorted(theirs)
    assert {k: str(v).replace("gradiente", "torch") for k, v in ours.items()} == {k: str(v) for k, v in theirs.items()}
    given = build(gradiente)
    if given:
        assert ours is not given.get("factory_kwargs") and gradiente.nn.factory_kwargs(given) == ours


@pytest.mark.parametrize("kwargs", [{"requires_grad": True}, {"dtype": 1, "factory_kwargs": {"dtype": 2}}])
def test_factory_kwargs_errors_match_torch(kwargs):
    check_same_error(lambda lib: lib.nn.factory_kwargs(kwargs))
