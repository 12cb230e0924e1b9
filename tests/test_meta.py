"""Meta tensors (``core/meta.py``): a shape and a dtype, no values, every op answered with shapes. Each case is
compared with torch 2.13 on the meta device: what it prints, or the exception it raises."""
import copy

import numpy as np
import pytest
import torch

import gradiente
from gradiente.core.meta import STAND_IN_LIMIT, MetaArray, meta_array

LIBS = (gradiente, torch)


def _outcome(fn, lib):
    try:
        result = fn(lib)
    except Exception as error:      # the exception's type and words are part of the behaviour compared
        return f"{type(error).__name__}: {error}"
    if isinstance(result, (tuple, list)):
        return [repr(r).replace("gradiente.", "torch.") for r in result]
    return repr(result).replace("gradiente.", "torch.")


def same(fn):
    ours, theirs = (_outcome(fn, lib) for lib in LIBS)
    assert ours == theirs
    return ours


def _y(lib):
    return lib.ones(3, device="meta")


def _m4(lib):
    return lib.ones(1, 2, 8, 8, device="meta")


CASES = {
    # making meta tensors
    "empty": lambda lib: lib.empty(3, 4, device="meta"),
    "zeros float64": lambda lib: lib.zeros(3, dtype=lib.float64, device="meta"),
    "int32 ones": lambda lib: lib.ones(2, 3, dtype=lib.int32, device="meta"),
    "empty (0,)": lambda lib: lib.empty(0, device="meta"),
    "0-d": lambda lib: lib.empty((), device="meta"),
    "rand": lambda lib: lib.rand(2, 3, device="meta"),
    "randn requires grad": lambda lib: lib.randn(2, device="meta", requires_grad=True),
    "randperm": lambda lib: lib.randperm(3, device="meta"),
    "arange": lambda lib: lib.arange(5, device="meta"),
    "eye": lambda lib: lib.eye(3, device="meta"),
    "full": lambda lib: lib.full((2,), 3, device="meta"),
    "tensor": lambda lib: lib.tensor([1.0, 2.0], device="meta"),
    "as_tensor": lambda lib: lib.as_tensor([1.0], device="meta"),
    "zeros_like": lambda lib: lib.zeros_like(_y(lib)),
    "rand_like": lambda lib: lib.rand_like(_y(lib)),
    "empty_like to cpu": lambda lib: lib.empty_like(_y(lib), device="cpu").shape,
    "new_zeros": lambda lib: _y(lib).new_zeros(2),
    "new_tensor": lambda lib: _y(lib).new_tensor([1.0]),
    "Tensor.to meta": lambda lib: lib.ones(3, requires_grad=True).to("meta"),
    "Tensor.to meta float64": lambda lib: lib.ones(3).to("meta", lib.float64),
    # what a meta tensor answers about itself
    "device": lambda lib: (_y(lib).device, _y(lib).is_meta, _y(lib).is_cpu, lib.ones(1).is_meta),
    "layout": lambda lib: (_y(lib).stride(), _y(lib).is_contiguous(), lib.ones(2, 3, device="meta").stride()),
    "format": lambda lib: f"{lib.ones((), device='meta')}",
    "data_ptr": lambda lib: (_y(lib).data_ptr(), _y(lib).get_device(), _y(lib).numel(), len(_y(lib))),
    # no values to read
    "item": lambda lib: lib.ones((), device="meta").item(),
    "float": lambda lib: float(lib.ones((), device="meta")),
    "bool": lambda lib: bool(lib.ones((), device="meta")),
    "tolist": lambda lib: _y(lib).tolist(),
    "numpy": lambda lib: _y(lib).numpy(),
    "cpu": lambda lib: _y(lib).cpu(),
    "to cpu": lambda lib: _y(lib).to("cpu"),
    "copy into cpu": lambda lib: lib.ones(3).copy_(_y(lib)),
    "copy into meta": lambda lib: _y(lib).copy_(lib.ones(3)),
    "pin_memory": lambda lib: _y(lib).pin_memory(),
    # elementwise, reductions, views
    "arithmetic": lambda lib: (_y(lib) * 2 + 1, _y(lib) / _y(lib), lib.ones(3, dtype=lib.int64, device="meta") + 1.5),
    "comparisons": lambda lib: (_y(lib) == _y(lib), _y(lib) > 0),
    "unary chain": lambda lib: lib.tanh(_y(lib)).exp().log1p().abs().sqrt().pow(2),
    "casts": lambda lib: (_y(lib).half(), _y(lib).double(), _y(lib).int(), _y(lib).type(lib.int32),
                          _y(lib).bfloat16()),
    "reductions": lambda lib: (_y(lib).sum(), _y(lib).mean(0, keepdim=True), _y(lib).var(), _y(lib).std(),
                               _y(lib).max(), _y(lib).argmax(), _y(lib).max(0)[0], _y(lib).min(0)[1]),
    "scans and sorts": lambda lib: (_y(lib).cumsum(0), _y(lib).sort()[0], _y(lib).topk(2)[1]),
    "views": lambda lib: (_y(lib).unsqueeze(0).t(), _y(lib)[1:], _y(lib).expand(2, 3), _y(lib).view(3, 1),
                          lib.flatten(_m4(lib), 1), _m4(lib).permute(0, 2, 3, 1).reshape(-1, 2)),
    "contiguous": lambda lib: _y(lib).contiguous(),
    "joins": lambda lib: (lib.cat([_y(lib), _y(lib)]), lib.stack([_y(lib), _y(lib)], 1), _y(lib).repeat(2)),
    "index": lambda lib: _y(lib)[lib.tensor([0, 1], device="meta")],
    "where and masks": lambda lib: (lib.where(_y(lib) > 0, _y(lib), 0.0), _y(lib).masked_fill(_y(lib) > 0, 1.0),
                                    _y(lib).clamp(0, 1), lib.tril(lib.ones(3, 3, device="meta"))),
    "products": lambda lib: (_y(lib) @ _y(lib), lib.ones(2, 3, device="meta") @ lib.ones(3, 4, device="meta"),
                             lib.einsum("i,i->", _y(lib), _y(lib))),
    "nonzero": lambda lib: _y(lib).nonzero(),
    # in place
    "in place": lambda lib: (lib.zeros(2, device="meta").fill_(3), lib.zeros(2, device="meta").add_(1),
                             lib.zeros(2, device="meta").zero_()),
    # nn
    "activations": lambda lib: (lib.nn.functional.relu(_y(lib)), lib.nn.functional.gelu(_y(lib)),
                                lib.nn.functional.silu(_y(lib)), lib.sigmoid(_y(lib)),
                                lib.nn.functional.softmax(lib.ones(4, 5, device="meta"), -1),
                                lib.nn.functional.log_softmax(lib.ones(4, 5, device="meta"), -1)),
    "dropout": lambda lib: lib.nn.functional.dropout(_y(lib), 0.5),
    "losses": lambda lib: (lib.nn.functional.mse_loss(_y(lib), _y(lib)),
                           lib.nn.functional.cross_entropy(lib.ones(4, 5, device="meta", requires_grad=True),
                                                           lib.zeros(4, dtype=lib.long, device="meta"))),
    "one_hot": lambda lib: lib.nn.functional.one_hot(lib.zeros(3, dtype=lib.long, device="meta"), 4),
    "linear": lambda lib: lib.nn.functional.linear(lib.ones(2, 3, device="meta"), lib.ones(4, 3, device="meta"),
                                                   lib.ones(4, device="meta")),
    "pooling": lambda lib: (lib.nn.functional.max_pool2d(_m4(lib), 2), lib.nn.functional.avg_pool2d(_m4(lib), 2),
                            lib.nn.functional.adaptive_avg_pool2d(_m4(lib), 1),
                            lib.nn.functional.max_pool2d(_m4(lib), 2, return_indices=True)[1]),
    "pad and interpolate": lambda lib: (lib.nn.functional.pad(_m4(lib), (1, 1)),
                                        lib.nn.functional.interpolate(_m4(lib), scale_factor=2)),
    "conv2d": lambda lib: lib.nn.Conv2d(3, 5, 2, device="meta")(lib.ones(2, 3, 10, 10, device="meta")),
    "conv1d": lambda lib: lib.nn.Conv1d(3, 5, 2, device="meta")(lib.ones(2, 3, 10, device="meta")),
    "conv_transpose2d": lambda lib: lib.nn.ConvTranspose2d(3, 5, 2, device="meta")(lib.ones(2, 3, 10, 10,
                                                                                           device="meta")),
    "norms": lambda lib: (lib.nn.LayerNorm(3, device="meta")(lib.ones(2, 3, device="meta")),
                          lib.nn.GroupNorm(1, 2, device="meta")(_m4(lib)),
                          lib.nn.BatchNorm2d(2, device="meta")(_m4(lib)),
                          lib.nn.BatchNorm1d(3, device="meta")(lib.ones(4, 3, device="meta"))),
    "embedding": lambda lib: lib.nn.Embedding(10, 4, device="meta")(lib.zeros(2, 5, dtype=lib.long,
                                                                              device="meta")),
    "attention": lambda lib: lib.nn.functional.scaled_dot_product_attention(
        *(lib.ones(2, 3, 4, device="meta") for _ in range(3)), is_causal=True),
    "multihead attention": lambda lib: lib.nn.MultiheadAttention(8, 2, device="meta")(
        *(lib.ones(3, 2, 8, device="meta") for _ in range(3)))[0],
    "LSTM": lambda lib: lib.nn.LSTM(3, 4, device="meta")(lib.ones(5, 2, 3, device="meta"))[0],
    "GRU": lambda lib: lib.nn.GRU(3, 4, device="meta")(lib.ones(5, 2, 3, device="meta"))[0],
    "parameters_to_vector": lambda lib: lib.nn.utils.parameters_to_vector(lib.nn.Linear(3, 4, device="meta")
                                                                           .parameters()),
    "init": lambda lib: [f(lib.zeros(2, 3, device="meta")) for f in (
        lib.nn.init.normal_, lib.nn.init.kaiming_uniform_, lib.nn.init.trunc_normal_, lib.nn.init.xavier_uniform_,
        lib.nn.init.zeros_, lib.nn.init.ones_, lambda t: lib.nn.init.constant_(t, 2.0))],
}


@pytest.mark.parametrize("case", CASES)
def test_meta_tensors_as_in_pytorch(case):
    same(CASES[case])


# More ops, written as PyTorch programs write them (``torch`` is the library under test, ``y`` a meta vector of 3,
# ``m4`` a meta image batch 1×2×8×8).
EXPRESSIONS = [
    'torch.nn.functional.pad(m4, (1,1))',
    'torch.nn.functional.interpolate(m4, scale_factor=2)',
    'torch.nn.functional.interpolate(m4, scale_factor=2, mode="bilinear")',
    'torch.nn.functional.pad(m4, (1,1), mode="reflect")',
    'torch.nn.functional.layer_norm(m4, (8,))',
    'torch.nn.functional.embedding(torch.zeros(2, dtype=torch.long, device="meta"), torch.ones(4,3,device="meta"))',
    'torch.nn.functional.binary_cross_entropy_with_logits(y, y)',
    'torch.nn.functional.binary_cross_entropy(y.sigmoid(), y)',
    'torch.nn.functional.nll_loss(torch.ones(4,5,device="meta"), torch.zeros(4, dtype=torch.long, device="meta"))',
    'torch.nn.functional.kl_div(y, y)',
    'torch.nn.functional.smooth_l1_loss(y, y)',
    'torch.nn.functional.l1_loss(y, y)',
    'torch.nn.functional.tanh(y)',
    'torch.nn.functional.leaky_relu(y)',
    'torch.nn.functional.elu(y)',
    'torch.nn.functional.softplus(y)',
    'torch.nn.functional.logsigmoid(y)',
    'torch.nn.functional.hardtanh(y)',
    'torch.nn.functional.normalize(torch.ones(2,3,device="meta"))',
    'torch.nn.functional.cosine_similarity(torch.ones(2,3,device="meta"), torch.ones(2,3,device="meta"))',
    'torch.nn.functional.glu(torch.ones(2,4,device="meta"))',
    'torch.nn.functional.unfold(m4, 2)',
    'torch.nn.functional.pixel_shuffle(torch.ones(1,4,2,2,device="meta"), 2)',
    'torch.nn.functional.conv2d(m4, torch.ones(3,2,3,3,device="meta"), padding=1, stride=2)',
    'torch.nn.functional.conv2d(m4, torch.ones(4,1,3,3,device="meta"), groups=2)',
    'torch.nn.functional.max_pool1d(torch.ones(1,2,8,device="meta"), 2)',
    'torch.nn.functional.avg_pool1d(torch.ones(1,2,8,device="meta"), 2)',
    'torch.nn.functional.adaptive_avg_pool2d(m4, 3)',
    'torch.nn.functional.adaptive_max_pool2d(m4, 3)',
    'torch.nn.TransformerEncoderLayer(8, 2, 16, device="meta")(torch.ones(3, 2, 8, device="meta"))',
    'torch.nn.RNN(3, 4, device="meta")(torch.ones(5, 2, 3, device="meta"))[0]',
    'torch.nn.LSTMCell(3, 4, device="meta")(torch.ones(2, 3, device="meta"))[0]',
    'y.norm()',
    'torch.linalg.norm(torch.ones(2,3,device="meta"))',
    'y.prod()',
    'y.logsumexp(0)',
    'torch.softmax(y, 0)',
    'torch.cumprod(y, 0)',
    'y.unique()',
    'torch.multinomial(torch.ones(3, device="meta"), 2)',
    'torch.bernoulli(y)',
    'torch.normal(y, y)',
    'y.clone()',
    'y.detach()',
    'y.flip(0)',
    'y.roll(1)',
    'torch.meshgrid(y, y, indexing="ij")[0]',
    'torch.outer(y, y)',
    'y.diag()',
    'torch.bmm(torch.ones(2,3,4,device="meta"), torch.ones(2,4,5,device="meta"))',
    'torch.baddbmm(torch.ones(2,3,5,device="meta"), torch.ones(2,3,4,device="meta"), torch.ones(2,4,5,device="meta"))',
    'torch.addmm(torch.ones(3,device="meta"), torch.ones(2,4,device="meta"), torch.ones(4,3,device="meta"))',
    'y.split(1)[0]',
    'y.chunk(3)[0]',
    'y.unbind()[0]',
    'y.gather(0, torch.zeros(2, dtype=torch.long, device="meta"))',
    'y.scatter(0, torch.zeros(2, dtype=torch.long, device="meta"), y[:2])',
    'y.index_select(0, torch.zeros(2, dtype=torch.long, device="meta"))',
    'y.masked_select(y > 0)',
    'y[y > 0]',
]


@pytest.mark.parametrize("expression", EXPRESSIONS)
def test_more_ops_on_meta_tensors_as_in_pytorch(expression):
    same(lambda lib: eval(expression, {"torch": lib, "y": _y(lib), "m4": _m4(lib)}))


def test_backward_through_meta_gives_meta_gradients():
    def run(lib):
        w = lib.ones(3, 4, device="meta", requires_grad=True)
        x = lib.ones(2, 3, device="meta", requires_grad=True)
        (x @ w).relu().sum().backward()
        return w.grad, x.grad
    same(run)


def test_a_convolution_of_a_huge_meta_input_costs_nothing():
    """reasoning_about_shapes: a 1024×3×65536×65536 input (13 × 10¹² values) convolved for its shape alone."""
    same(lambda lib: lib.nn.Conv2d(3, 5, 2, device="meta")(lib.rand(2**10, 3, 2**16, 2**16, device="meta")))


def test_a_model_built_on_meta_draws_no_random_numbers_and_loads_its_weights():
    def run(lib):
        lib.manual_seed(0)
        with lib.device("meta"):
            model = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.ReLU(), lib.nn.Linear(4, 2))
        built = repr(model.state_dict())
        weights = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.ReLU(), lib.nn.Linear(4, 2)).state_dict()
        model.load_state_dict(weights, assign=True)
        loaded = model[0].weight
        return [built, loaded, type(loaded).__name__, loaded.requires_grad, model(lib.ones(1, 3))]
    same(run)


def test_loading_into_meta_without_assign_keeps_meta():
    def run(lib):
        with lib.device("meta"):
            model = lib.nn.Linear(2, 2)
        model.load_state_dict(lib.nn.Linear(2, 2).state_dict())
        return model.weight
    same(run)


def test_modules_move_to_meta_and_back_by_to_empty():
    def run(lib):
        lib.manual_seed(0)
        model = lib.nn.Linear(3, 4)
        weight = model.weight
        model.to("meta")
        on_meta = [model.weight, model.weight is weight, type(model.weight).__name__]
        model.to_empty(device="cpu")
        return on_meta + [model.weight.device, model.weight.shape, model.weight.requires_grad]
    same(run)


def test_a_meta_module_refuses_to_copy_its_values_out():
    same(lambda lib: lib.nn.Linear(3, 4, device="meta").to("cpu"))
    same(lambda lib: lib.nn.Linear(3, 4, device="meta").cpu())


def test_a_deep_copy_of_a_meta_model_is_meta():
    same(lambda lib: copy.deepcopy(lib.nn.Linear(2, 3).to("meta")).weight)


def test_functional_call_runs_a_meta_model_on_real_parameters():
    """The ensembling tutorial's pattern: the model's structure on meta, its parameters stacked and supplied."""
    def run(lib):
        lib.manual_seed(0)
        models = [lib.nn.Linear(3, 2) for _ in range(2)]
        params, buffers = lib.func.stack_module_state(models)
        base = copy.deepcopy(models[0]).to("meta")
        x = lib.randn(4, 3)
        return lib.vmap(lambda p, b: lib.func.functional_call(base, (p, b), (x,)))(params, buffers)
    same(run)


# --- the array underneath ----------------------------------------------------------------------------------------

def test_meta_arrays_take_no_memory_and_keep_numpys_dtypes():
    huge = meta_array((2**20, 2**20), np.float32)
    memory = huge
    while memory.base is not None:
        memory = memory.base
    assert huge.strides == (0, 0) and memory.nbytes == 4          # one shared zero behind 2**40 elements
    for dtype in (np.float32, np.float64, np.int64, np.bool_, np.complex64):
        real, meta = np.zeros((2, 3), dtype), meta_array((2, 3), dtype)
        for ufunc in (np.add, np.multiply, np.true_divide, np.less, np.maximum, np.floor_divide):
            try:
                expected = ufunc(real, real[0])
            except TypeError:
                continue
            result = ufunc(meta, meta[0])
            assert type(result) is MetaArray and result.shape == expected.shape and result.dtype == expected.dtype
        for axis in (None, 0, 1, (0, 1)):
            for keepdims in (False, True):
                expected = real.sum(axis=axis, keepdims=keepdims)
                result = meta.sum(axis=axis, keepdims=keepdims)
                assert type(result) is MetaArray and result.shape == np.shape(expected)
                assert result.dtype == np.asarray(expected).dtype


@pytest.mark.parametrize("call", [
    lambda np_, a, b: np_.einsum("ij,jk->ik", a, b), lambda np_, a, b: np_.einsum("ij,kj", a, a),
    lambda np_, a, b: np_.einsum("...j,jk->...k", a, b), lambda np_, a, b: np_.tensordot(a, b, 1),
    lambda np_, a, b: np_.concatenate([a, a], axis=1), lambda np_, a, b: np_.stack([a, a], -1),
    lambda np_, a, b: np_.matmul(a, b), lambda np_, a, b: np_.matmul(a[0], b), lambda np_, a, b: a @ b[:, 0],
    lambda np_, a, b: np_.where(a > 0, a, 1.0), lambda np_, a, b: np_.linalg.qr(b)[0],
    lambda np_, a, b: np_.moveaxis(a, 0, 1), lambda np_, a, b: np_.ravel(a), lambda np_, a, b: a.astype(np_.int8),
    lambda np_, a, b: np_.sort(a, axis=0), lambda np_, a, b: a.argmax(axis=1),
])
def test_meta_arrays_give_the_shapes_numpy_gives(call):
    a, b = np.ones((2, 3), np.float32), np.ones((3, 4), np.float32)
    expected = call(np, a, b)
    result = call(np, meta_array(a.shape, a.dtype), meta_array(b.shape, b.dtype))
    assert type(result) is MetaArray and result.shape == expected.shape and result.dtype == expected.dtype


def test_a_function_without_a_shape_rule_refuses_stand_ins_too_large_to_make():
    huge = meta_array((STAND_IN_LIMIT + 1,), np.float32)
    with pytest.raises(NotImplementedError, match="gradiente works out sort of meta tensors"):
        np.sort(huge)


def test_loading_a_state_dict_between_meta_and_real_parameters_warns_or_reports_as_pytorch():
    def run(lib):
        import warnings
        with lib.device("meta"):
            meta_model = lib.nn.Linear(2, 2)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            meta_model.load_state_dict(lib.nn.Linear(2, 2).state_dict())
        try:
            lib.nn.Linear(2, 2).load_state_dict(meta_model.state_dict())
            outcome = "loaded"
        except RuntimeError as error:
            outcome = str(error)
        return [str(w.message) for w in caught], outcome
    same(run)


def test_a_batched_tensor_answers_its_device():
    """``torch.eye(n, device=output.device)`` inside ``vmap`` (the neural tangent kernel tutorial)."""
    def run(lib):
        return lib.vmap(lambda row: lib.eye(2, device=row.device)[0] * row.sum())(lib.ones(3, 2))
    same(run)
