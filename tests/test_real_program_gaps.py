"""What real programs written for PyTorch (nanoGPT, makemore, minGPT, pytorch/examples, the tutorials) met that our
own programs did not, each checked against PyTorch on the same call (issue 16)."""
import importlib
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
import torch

import gradiente


def _warnings_of(call):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        call()
    return [(w.category, str(w.message)) for w in caught]


@pytest.mark.parametrize("device", ["", "cuda"])
def test_pinned_loader_warns_that_nothing_is_pinned(device):
    # makemore: DataLoader(..., pin_memory=True) on a machine without an accelerator
    def first_batch(lib):
        data = lib.utils.data.TensorDataset(lib.arange(6.0))
        loader = lib.utils.data.DataLoader(data, batch_size=2, pin_memory=True, pin_memory_device=device)
        return lambda: next(iter(loader))
    assert _warnings_of(first_batch(gradiente)) == _warnings_of(first_batch(torch))
    assert len(_warnings_of(first_batch(torch))) == (2 if device else 1)


def _share_of_equal_elements(theirs, ours):
    theirs, ours = theirs.numpy(), ours.numpy()
    return ((theirs == ours) | (np.isnan(theirs) & np.isnan(ours))).mean()


@pytest.mark.parametrize("power", [
    lambda lib, x, y: x ** 4, lambda lib, x, y: x ** 1.7, lambda lib, x, y: lib.pow(x, -3),
    lambda lib, x, y: x.abs() ** y, lambda lib, x, y: 1.3 ** x, lambda lib, x, y: x ** 0.3])
def test_float32_powers_round_as_torchs_in_all_but_a_few_elements(power):
    # pytorch/examples' regression builds features x**4 and stops when the loss falls below a threshold: NumPy's
    # float32 power was off by an ulp in a fifth of the elements, PyTorch's (SLEEF, 1 ulp) is the correctly rounded
    # power in about 98%
    torch.manual_seed(0)
    x, y = torch.randn(20000), torch.randn(20000)
    ours = power(gradiente, gradiente.tensor(x.numpy()), gradiente.tensor(y.numpy()))
    assert ours.dtype == gradiente.float32
    assert _share_of_equal_elements(power(torch, x, y), ours) > 0.97


@pytest.mark.parametrize("exponent", [2, 3, -1, -2, -0.5])
def test_float32_powers_torch_computes_by_products_or_roots_are_exact(exponent):
    torch.manual_seed(0)
    x = torch.randn(20000).abs()
    assert _share_of_equal_elements(x ** exponent, gradiente.tensor(x.numpy()) ** exponent) == 1


@pytest.mark.parametrize("factory", ["empty", "zeros", "ones", "rand", "randn"])
def test_factories_take_their_size_by_name(factory):
    # pytorch/examples' GAT: nn.Parameter(torch.empty(size=(in_features, n_hidden * n_heads)))
    torch.manual_seed(0)
    gradiente.manual_seed(0)
    theirs, ours = getattr(torch, factory)(size=(2, 3)), getattr(gradiente, factory)(size=(2, 3))
    assert tuple(ours.shape) == tuple(theirs.shape) == (2, 3)
    if factory != "empty":
        assert np.array_equal(ours.numpy(), theirs.numpy())
    message = (r"received an invalid combination of arguments - got \(int, size=tuple\)" if factory.startswith("rand")
               else "got multiple values for argument 'size'")
    for lib in (torch, gradiente):
        with pytest.raises(TypeError, match=message):
            getattr(lib, factory)(2, size=(2,))


_SPARSE_PROGRAM = """
import warnings
import {lib} as torch
warnings.simplefilter("always")
{before}
torch.eye(3).to_sparse()
torch.sparse_coo_tensor(torch.tensor([[0, 1], [1, 0]]), torch.ones(2), (2, 2))
torch.sparse_coo_tensor(torch.tensor([[0, 1], [1, 0]]), torch.ones(2), (2, 2))
{after}
torch.sparse_coo_tensor(torch.tensor([[0, 1], [1, 0]]), torch.ones(2), (2, 2))
"""


@pytest.mark.parametrize("before,after", [
    ("", ""), ("", "torch.sparse.check_sparse_tensor_invariants.disable()"),
    ("torch.sparse.check_sparse_tensor_invariants.enable()", ""),
    ("torch.sparse_coo_tensor(torch.tensor([[0]]), torch.ones(1), (1,), check_invariants=False)", "")])
def test_first_implicitly_unchecked_sparse_tensor_warns_once(before, after):
    # pytorch/examples' GAT and GCN build their adjacency matrices with sparse_coo_tensor: PyTorch warns, once per
    # process, that invariant checks are off unless the program chose
    def stderr_of(lib):
        source = _SPARSE_PROGRAM.format(lib=lib, before=before, after=after)
        env = {"PYTHONPATH": str(Path(__file__).resolve().parent.parent / "src"), "OMP_NUM_THREADS": "1"}
        done = subprocess.run([sys.executable, "-c", source], capture_output=True, text=True, env=env, check=True)
        return done.stderr
    assert stderr_of("gradiente") == stderr_of("torch")


def test_a_hand_derived_sine_gradient_is_autograds():
    # backprop by hand (makemore's lectures) writes cos(x) * grad; autograd's SinBackward0 computes the same cos
    x = gradiente.randn(1000, requires_grad=True)
    gradiente.sin(x).sum().backward()
    assert np.array_equal(x.grad.numpy(), gradiente.cos(x.detach()).numpy())


_SCALAR_PROGRAM = """
import warnings
import {lib} as torch
warnings.simplefilter("always")
t = torch.tensor(1.5, requires_grad=True) * 2
int(t), t.item(), format(t, ".2f"), t.tolist(), "%d" % t
with torch.no_grad():
    float(t)
print("%.2f" % t)
float(t), complex(t)
"""


def test_reading_a_float_of_a_tensor_that_requires_grad_warns_once():
    # makemore part 3 prints '%+.2f' % t.mean() of activations that require grad
    def run(lib):
        env = {"PYTHONPATH": str(Path(__file__).resolve().parent.parent / "src"), "OMP_NUM_THREADS": "1"}
        done = subprocess.run([sys.executable, "-c", _SCALAR_PROGRAM.format(lib=lib)], capture_output=True,
                              text=True, env=env, check=True)
        return done.stdout, done.stderr
    ours, theirs = run("gradiente"), run("torch")
    assert ours == theirs
    assert theirs[1].count("Converting a tensor with requires_grad=True to a scalar") == 1


@pytest.mark.parametrize("name", ["softmax", "log_softmax", "softmin"])
def test_implicit_softmax_dim_warning_names_the_callers_line(name):
    # the sequence models tutorial: F.log_softmax(tag_space) without dim; the warning names that line, not the
    # sparse-dispatch wrapper around nn.functional's ops
    def caught(lib):
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            getattr(lib.nn.functional, name)(lib.ones(2, 3)); line = sys._getframe().f_lineno  # noqa: E702
        return [(w.category, str(w.message), w.filename, w.lineno == line) for w in seen]
    assert caught(gradiente) == caught(torch)
    assert caught(torch)[0][3]


def test_torch_functional_is_a_module_of_top_level_functions():
    # the models tutorial writes `import torch.functional as F` (meaning nn.functional): the import works, and the
    # module holds PyTorch's functions, not nn.functional's
    import torch.functional as theirs

    import gradiente.functional as ours
    assert set(ours.__all__) == set(theirs.__all__) - {"pca_lowrank", "svd_lowrank"}
    assert not hasattr(ours, "max_pool2d") and not hasattr(theirs, "max_pool2d")
    assert ours.F is gradiente.nn.functional and gradiente.functional is ours
    x = np.arange(6.0).reshape(2, 3)
    np.testing.assert_array_equal(ours.einsum("ij->j", gradiente.tensor(x)).numpy(),
                                  theirs.einsum("ij->j", torch.tensor(x)).numpy())
    assert [t.tolist() for t in ours.split(gradiente.tensor(x), 1)] == \
        [t.tolist() for t in theirs.split(torch.tensor(x), 1)]


def test_add_and_sub_in_place_take_the_deprecated_alpha_first_order(monkeypatch):
    # the char-RNN tutorial's SGD step: p.data.add_(-learning_rate, p.grad.data), with PyTorch's one warning
    from gradiente.ops import arithmetic
    monkeypatch.setattr(arithmetic, "_alpha_first_warned", set())

    def run(lib):
        x, y = lib.ones(3), lib.arange(3.0)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            values = [x.clone().add_(-0.5, y), x.clone().sub_(2, y), x.clone().add_(y, alpha=2)]
        return [v.tolist() for v in values], [(w.category, str(w.message)) for w in caught]
    ours, theirs = run(gradiente), run(torch)
    assert ours[0] == theirs[0] and len(ours[1]) == 1
    if theirs[1]:       # empty when an earlier test of this process made PyTorch give its once-only warning
        assert ours[1] == theirs[1]


# --- found running pytorch/examples and the tutorials unchanged (session of 2026-11-29) ---------------------------

def test_tensor_takes_any_sequence_as_pytorch_does():
    """reinforce.py builds its returns with ``deque.appendleft`` and hands the deque to ``torch.tensor``."""
    from collections import deque
    for data in (deque([1.0, 2.0, 3.0]), [deque([1, 2]), deque([3, 4])]):
        assert torch.tensor(data).tolist() == gradiente.tensor(data).tolist()
        assert str(torch.tensor(data).dtype)[6:] == str(gradiente.tensor(data).dtype)[10:]


def test_lbfgs_reads_its_loss_without_a_warning():
    """PyTorch's LBFGS.step runs under no_grad (the closure with grad): reading the loss as a number warns of
    nothing, as it does when grad mode is on."""
    w = gradiente.nn.Parameter(gradiente.tensor([1.0, -2.0]))
    optimizer = gradiente.optim.LBFGS([w], lr=0.8)

    def closure():
        optimizer.zero_grad()
        loss = ((w - 3) ** 2).sum()
        loss.backward()
        return loss
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        loss = optimizer.step(closure)
    assert loss.requires_grad and loss.item() == 29.0


def test_jit_deprecations_come_from_inside_the_library():
    """PyTorch warns of ``torch.jit.script``'s deprecation from its own module, so Python's default filters
    show nothing to a script; the warning is attributed to gradiente's module here too."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        gradiente.jit.script(lambda x: x * 2)
    assert caught and all("gradiente" in w.filename for w in caught if w.category is DeprecationWarning)


def test_backends_cpu_capability_and_mkldnn_flags():
    assert gradiente.backends.cpu.get_cpu_capability() == torch.backends.cpu.get_cpu_capability()
    mkldnn = gradiente.backends.mkldnn
    with mkldnn.flags(enabled=False):
        assert mkldnn.enabled is False
    assert mkldnn.enabled is True
    assert mkldnn.set_flags(_deterministic=True) == (True, False, None) and mkldnn.deterministic is True
    mkldnn.set_flags(_deterministic=False)


def _printed(program):
    """What ``program(lib)`` returns for each library, with gradiente's name read as torch's."""
    return [str(program(lib)).replace("gradiente", "torch") for lib in (gradiente, torch)]


def test_legacy_tensor_types_convert_and_match():
    # MorvanZhou's tutorials: x.type(torch.FloatTensor), and isinstance checks against the legacy types
    def program(lib):
        a = lib.ones(2, 2)
        return [a.type(lib.FloatTensor).dtype, a.type(lib.LongTensor).dtype, a.type(lib.DoubleTensor),
                type(lib.FloatTensor), lib.FloatTensor, lib.LongTensor.dtype, lib.FloatTensor.layout,
                lib.FloatTensor.is_sparse, isinstance(a, lib.FloatTensor), isinstance(a, lib.LongTensor),
                isinstance(a.long(), lib.LongTensor), lib.FloatTensor([1, 2]), lib.LongTensor(2, 3).shape]
    ours, theirs = _printed(program)
    assert ours == theirs


def test_a_change_through_data_is_hidden_from_the_inplace_check():
    # .data has a version counter of its own in PyTorch: an update through it is no in-place error in backward
    def program(lib):
        x = lib.ones(3, requires_grad=True)
        y = lib.tanh(x)
        y.data.copy_(lib.zeros(3))
        versions = [y._version, y.data._version]
        y.sum().backward()
        w = lib.ones(2, requires_grad=True)
        z = (w * w).sum()
        w.data.mul_(3)
        z.backward()
        detached = lib.tanh(x)
        detached.detach().zero_()
        return versions, x.grad, w.grad, w._version, detached._version
    ours, theirs = _printed(program)
    assert ours == theirs


def test_a_matrix_times_a_vector_is_the_one_column_product():
    # torch.mv (W @ v) rounds as the one-column mm does
    rng = np.random.default_rng(3)
    for rows, k in ((48, 64), (64, 200), (8, 1000)):
        w, v = rng.standard_normal((rows, k)).astype(np.float32), rng.standard_normal(k).astype(np.float32)
        np.testing.assert_array_equal((gradiente.tensor(w) @ gradiente.tensor(v)).numpy(),
                                      (torch.tensor(w) @ torch.tensor(v)).numpy())


@pytest.mark.usefixtures("torch_on_one_thread")
def test_single_channel_normalizations_and_convolutions_sum_in_order():
    # a lone column is added in order, as PyTorch's kernels add it (NumPy would add it pairwise): BatchNorm1d(1) on
    # a batch of 64 (MorvanZhou's batch-normalization tutorial), one-channel convolutions' biases, GroupNorm(1, 1)
    def program(lib):
        lib.manual_seed(0)
        bn = lib.nn.BatchNorm1d(1)
        y = bn(lib.randn(64, 1) * 5 + 3)
        printed = [f"{y.sum().item():.9g} {bn.running_mean.item():.9g} {bn.running_var.item():.9g}"]
        for channels, kernel in ((8, 3), (3, 3)):
            conv = lib.nn.Conv2d(channels, 1, kernel, padding=1)
            out = conv(lib.randn(20, channels, 12, 12))
            (out * lib.randn_like(out)).sum().backward()
            printed.append(f"{conv.bias.grad.item():.9g}")
        gn = lib.nn.GroupNorm(1, 1)
        q = gn(lib.randn(40, 1, 3))
        (q * lib.randn_like(q)).sum().backward()
        return printed + [f"{gn.bias.grad.item():.9g}"]
    ours, theirs = _printed(program)
    assert ours == theirs


def test_hub_caches_and_loads_weights_as_data(tmp_path, monkeypatch):
    # pytorch/examples' vision_transformer imports torch.hub's tqdm; model zoos load weights through the cache
    from torch.hub import tqdm as their_tqdm

    from gradiente.hub import tqdm as our_tqdm
    assert our_tqdm is their_tqdm or callable(our_tqdm)
    monkeypatch.setenv("TORCH_HOME", str(tmp_path / "home"))
    assert gradiente.hub.get_dir() == torch.hub.get_dir() == str(tmp_path / "home" / "hub")
    checkpoints = tmp_path / "home" / "hub" / "checkpoints"
    checkpoints.mkdir(parents=True)
    torch.save({"weight": torch.arange(3.0)}, checkpoints / "tiny-0123abcd.pth")
    url = "https://example.invalid/models/tiny-0123abcd.pth"        # cached: nothing is downloaded
    ours, theirs = gradiente.hub.load_state_dict_from_url(url), torch.hub.load_state_dict_from_url(url)
    assert str(ours).replace("gradiente", "torch") == str(theirs)
    model_zoo = importlib.import_module("gradiente.utils.model_zoo")
    assert model_zoo.load_url is gradiente.hub.load_state_dict_from_url
    with pytest.raises(RuntimeError, match="never runs code it fetched"):
        gradiente.hub.load("pytorch/vision", "resnet18")


def test_collated_batches_are_torch_stacks():
    # introyt1: a dataset of permuted images batched by the DataLoader, then .view(): the batch is contiguous
    def program(lib):
        samples = [lib.arange(12.0).view(2, 2, 3).permute(2, 0, 1) for _ in range(2)]
        batch = next(iter(lib.utils.data.DataLoader(samples, batch_size=2)))
        mixed = lib.utils.data.default_collate([lib.ones(2, dtype=lib.int32), lib.ones(2)])
        arrays = lib.utils.data.default_collate([np.ones((2, 3), np.float32).T for _ in range(3)])
        try:
            lib.utils.data.default_collate([lib.ones(2), lib.ones(3)])
        except RuntimeError as error:
            ragged = str(error)
        return batch.stride(), batch.is_contiguous(), mixed.dtype, arrays.stride(), ragged
    ours, theirs = _printed(program)
    assert ours == theirs


def test_long_float64_linspace_is_pytorchs():
    # each value one exact fused multiply-add, as PyTorch's kernel computes it, for any number of steps
    for dtype in ("float64", "float32"):
        for steps in (7, 32768, 40000, 100001):
            ours = gradiente.linspace(-6, 6, steps, dtype=getattr(gradiente, dtype)).numpy()
            np.testing.assert_array_equal(ours, torch.linspace(-6, 6, steps, dtype=getattr(torch, dtype)).numpy())


def test_workers_load_as_pytorchs_worker_processes_would():
    # num_workers > 0: each worker's own random states (a noisy dataset draws a worker's numbers, the program's own
    # stay PyTorch's), worker_init_fn and get_worker_info, and an iterable dataset sharded and interleaved per worker
    import random

    def program(lib):
        lib.manual_seed(0)
        random.seed(0)
        np.random.seed(0)
        data = lib.utils.data

        class Noisy(data.Dataset):
            def __len__(self):
                return 6

            def __getitem__(self, i):
                info = data.get_worker_info()
                return lib.rand(2) + i, random.random(), float(np.random.rand()), info.id, info.seed

        def reseed(worker):         # the classic per-worker NumPy seeding, run inside each worker
            np.random.seed(np.random.get_state()[1][0] + worker)
        loader = data.DataLoader(Noisy(), batch_size=2, num_workers=2, shuffle=True, worker_init_fn=reseed)
        batches = [[f.tolist() for f in batch] for epoch in range(2) for batch in loader]

        class Shard(data.IterableDataset):
            def __iter__(self):
                info = data.get_worker_info()
                return iter(range(info.id, 7, info.num_workers))
        shards = [b.tolist() for b in data.DataLoader(Shard(), batch_size=2, num_workers=2)]
        return batches, lib.rand(2).tolist(), random.random(), np.random.rand(), shards, data.get_worker_info()
    ours, theirs = _printed(program)
    assert ours == theirs


def test_p_norms_add_in_order_and_dir_lists_what_loads_later():
    # NYU's regularization notebook: 0.001 * torch.norm(params, 1) in the loss; 06-convnet's dir() of torch
    def program(lib):
        lib.manual_seed(0)
        x, m = lib.randn(5000) * 0.01, lib.randn(7, 300, 5)
        listed = dir(lib)
        return [lib.norm(x, 1).item(), lib.linalg.vector_norm(x, 1).item(), x.norm(p=1).item(),
                lib.norm(m, 1, dim=1)[0, :3].tolist(), lib.linalg.vector_norm(m, 1, dim=(0, 2))[:3].tolist(),
                lib.norm(m.double(), 1).item(), "nn" in listed, "cov" in listed, "load" in listed]
    ours, theirs = _printed(program)
    assert ours == theirs


def test_a_models_dir_is_pytorchs():
    # NYU's 06-convnet prints dir(model); Sequential's *= repeats its modules in place
    def program(lib):
        model = lib.nn.Sequential(lib.nn.Linear(2, 3), lib.nn.ReLU())
        repeated = lib.nn.Sequential(lib.nn.ReLU(), lib.nn.Tanh())
        repeated *= 3
        # (torch._dynamo, once another test has imported it, patches ``___``-names onto PyTorch's Module)
        def listed(module):
            return sorted(name for name in dir(module) if not name.startswith("___"))
        return listed(model), listed(lib.nn.Linear(2, 3)), [type(m).__name__ for m in repeated]
    ours, theirs = _printed(program)
    assert ours == theirs
