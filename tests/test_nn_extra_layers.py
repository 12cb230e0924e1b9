"""Issue 16's smaller additions against PyTorch: ``F.triplet_margin_with_distance_loss`` and
``nn.TripletMarginWithDistanceLoss``, ``F.multilabel_margin_loss`` and ``nn.MultiLabelMarginLoss``,
``F.max_pool1d_with_indices`` / ``max_pool2d_with_indices``, ``nn.Container``
and ``nn.NLLLoss2d``: values, gradients, node names, reprs, float64 gradcheck and error messages."""
import numpy as np
import pytest
from harness import OpSpec, check_same_error, spec_tests

import gradiente

torch = pytest.importorskip("torch")


def F(lib):
    return lib.nn.functional


def _cosine_distance(lib):
    return lambda x, y: 1.0 - F(lib).cosine_similarity(x, y)


SPECS = [
    OpSpec("triplet_margin_with_distance_loss", lambda lib, a, p, n: F(lib).triplet_margin_with_distance_loss(a, p, n),
           [((4, 5), (4, 5), (4, 5)), ((5,), (5,), (5,))]),
    OpSpec("triplet_margin_with_distance_loss_swap_sum",
           lambda lib, a, p, n: F(lib).triplet_margin_with_distance_loss(a, p, n, margin=2.0, swap=True,
                                                                         reduction="sum"),
           [((4, 5), (4, 5), (4, 5))]),
    OpSpec("triplet_margin_with_distance_loss_cosine",
           lambda lib, a, p, n: F(lib).triplet_margin_with_distance_loss(
               a, p, n, distance_function=_cosine_distance(lib), reduction="none"),
           [((4, 5), (4, 5), (4, 5))]),
    OpSpec("max_pool2d_with_indices", lambda lib, x: F(lib).max_pool2d_with_indices(x, 2, 1, 1),
           [((2, 3, 4, 5),)]),
    OpSpec("max_pool1d_with_indices", lambda lib, x: F(lib).max_pool1d_with_indices(x, 3, 2, ceil_mode=True),
           [((2, 3, 8),)]),
]



def _scores_and_label_lists(rng, shapes):
    """Scores, and per row a list of distinct classes ended by -1 (the rest of the row is ignored)."""
    x_shape, _ = shapes
    scores = rng.uniform(-1, 1, x_shape)
    n_classes = x_shape[-1]
    rows = []
    for _ in range(int(np.prod(x_shape[:-1]))):
        count = rng.randint(0, n_classes + 1)
        row = np.concatenate([rng.permutation(n_classes)[:count], [-1] * (n_classes - count)])
        if count < n_classes - 1:
            row[count + 1:] = rng.randint(0, n_classes, n_classes - count - 1)     # after the -1: ignored
        rows.append(row)
    return [scores, np.array(rows, dtype=np.int64).reshape(x_shape)]


def _multilabel(reduction):
    return lambda lib, x, t: F(lib).multilabel_margin_loss(x, t, reduction=reduction)


SPECS += [
    OpSpec(f"multilabel_margin_loss_{reduction}", _multilabel(reduction), [((5, 4), (5, 4)), ((6,), (6,))],
           grad_inputs=[0], make_inputs=_scores_and_label_lists)
    for reduction in ("mean", "sum", "none")
]

test_gradcheck, test_against_torch, test_gradgradcheck = spec_tests(SPECS)


@pytest.mark.parametrize("name", ["max_pool1d_with_indices", "max_pool2d_with_indices"])
def test_pool_with_indices_gives_the_indices_of_torch(name):
    x = np.random.RandomState(0).randint(0, 3, size=(2, 3, 6, 6)).astype(np.float64)
    if name == "max_pool1d_with_indices":
        x = x[:, :, 0]
    ours = getattr(F(gradiente), name)(gradiente.tensor(x), 2, return_indices=False)
    theirs = getattr(F(torch), name)(torch.tensor(x), 2, return_indices=False)
    np.testing.assert_array_equal(ours[0].numpy(), theirs[0].numpy())
    np.testing.assert_array_equal(ours[1].numpy(), theirs[1].numpy())


@pytest.mark.parametrize("call", [
    lambda lib: F(lib).triplet_margin_with_distance_loss(lib.zeros(2, 3), lib.zeros(2, 3), lib.zeros(3)),
    lambda lib: F(lib).triplet_margin_with_distance_loss(lib.zeros(3), lib.zeros(3), lib.zeros(3), margin=0),
    lambda lib: F(lib).triplet_margin_with_distance_loss(lib.zeros(3), lib.zeros(3), lib.zeros(3), reduction="max"),
    lambda lib: lib.nn.TripletMarginWithDistanceLoss(margin=-1.0),
], ids=["dims", "margin", "reduction", "layer_margin"])
def test_triplet_errors_match_torch(call):
    check_same_error(call)


def test_triplet_layer_matches_torch():
    rng = np.random.RandomState(1)
    arrays = [rng.randn(4, 5) for _ in range(3)]
    results = []
    for lib in (torch, gradiente):
        layer = lib.nn.TripletMarginWithDistanceLoss(distance_function=lib.nn.PairwiseDistance(p=1.0), margin=0.5,
                                                     swap=True)
        inputs = [lib.tensor(a, requires_grad=True) for a in arrays]
        out = layer(*inputs)
        out.backward()
        results.append((repr(layer), out.item(), [t.grad.numpy() for t in inputs], out.grad_fn.name()))
    (t_repr, t_val, t_grads, t_name), (g_repr, g_val, g_grads, g_name) = results
    assert g_repr == t_repr and g_name == t_name
    np.testing.assert_allclose(g_val, t_val, rtol=1e-12)
    for g, t in zip(g_grads, t_grads):
        np.testing.assert_allclose(g, t, rtol=1e-10, atol=1e-12)


def test_container_holds_its_keyword_modules_as_torch():
    ours = gradiente.nn.Container(first=gradiente.nn.Linear(2, 3), second=gradiente.nn.ReLU())
    theirs = torch.nn.Container(first=torch.nn.Linear(2, 3), second=torch.nn.ReLU())
    assert repr(ours) == repr(theirs)
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]


def test_nllloss2d_is_nllloss_on_images():
    rng = np.random.RandomState(2)
    scores, labels = rng.randn(2, 3, 4, 4), rng.randint(0, 3, (2, 4, 4))
    outs = []
    for lib in (torch, gradiente):
        layer = lib.nn.NLLLoss2d(weight=lib.tensor([0.2, 1.0, 2.0], dtype=lib.float64), ignore_index=1)
        x = lib.tensor(scores, requires_grad=True)
        out = layer(x, lib.tensor(labels))
        out.backward()
        outs.append((repr(layer), isinstance(layer, lib.nn.NLLLoss), out.item(), x.grad.numpy(), out.grad_fn.name()))
    assert outs[0][:2] == outs[1][:2] and outs[0][4] == outs[1][4]
    np.testing.assert_allclose(outs[1][2], outs[0][2], rtol=1e-12)
    np.testing.assert_allclose(outs[1][3], outs[0][3], rtol=1e-10, atol=1e-14)


@pytest.mark.parametrize("call", [
    lambda lib: F(lib).multilabel_margin_loss(lib.zeros(3, 4), lib.zeros(2, 4, dtype=lib.int64)),
    lambda lib: F(lib).multilabel_margin_loss(lib.zeros(3, 4), lib.zeros(3, 4)),
    lambda lib: F(lib).multilabel_margin_loss(lib.zeros(3, 4), lib.zeros(3, 4, dtype=lib.int32)),
    lambda lib: F(lib).multilabel_margin_loss(lib.zeros(3, 4), lib.full((3, 4), 4, dtype=lib.int64)),
    lambda lib: F(lib).multilabel_margin_loss(lib.zeros(2, 3, 4), lib.zeros(2, 3, 4, dtype=lib.int64)),
], ids=["sizes", "float_target", "int32_target", "out_of_range", "rank"])
def test_multilabel_margin_errors_match_torch(call):
    check_same_error(call)


def test_multilabel_margin_layer_matches_torch():
    x = np.random.RandomState(3).randn(3, 4)
    y = np.array([[3, 0, -1, 1], [1, 2, 3, -1], [-1, 0, 0, 0]])
    outs = []
    for lib in (torch, gradiente):
        layer = lib.nn.MultiLabelMarginLoss(reduction="sum")
        t = lib.tensor(x, requires_grad=True)
        out = layer(t, lib.tensor(y))
        out.backward()
        outs.append((repr(layer), out.item(), t.grad.numpy(), out.grad_fn.name()))
    assert outs[0][0] == outs[1][0] and outs[0][3] == outs[1][3]
    np.testing.assert_allclose(outs[1][1], outs[0][1], rtol=1e-12)
    np.testing.assert_allclose(outs[1][2], outs[0][2], rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("kwargs", [{}, {"tau": 0.5, "dim": 0}, {"hard": True}, {"hard": True, "tau": 2.0, "dim": 0}],
                         ids=["soft", "soft_tau_dim0", "hard", "hard_tau_dim0"])
def test_gumbel_softmax_draws_and_differentiates_as_torch(kwargs):
    logits = np.random.RandomState(4).randn(3, 5)
    weights = np.random.RandomState(5).randn(3, 5)
    seen = []
    for lib in (torch, gradiente):
        lib.manual_seed(7)
        x = lib.tensor(logits, requires_grad=True)
        out = F(lib).gumbel_softmax(x, **kwargs)
        (out * lib.tensor(weights)).sum().backward()
        seen.append((out.detach().numpy(), x.grad.numpy(), out.grad_fn.name()))
    (t_out, t_grad, t_name), (g_out, g_grad, g_name) = seen
    assert g_name == t_name
    np.testing.assert_allclose(g_out, t_out, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(g_grad, t_grad, rtol=1e-10, atol=1e-14)


def test_gumbel_softmax_gradcheck():
    logits = gradiente.tensor(np.random.RandomState(6).randn(2, 4), requires_grad=True)

    def sample(x):
        gradiente.manual_seed(1)        # the same draw at every evaluation
        return F(gradiente).gumbel_softmax(x, tau=0.7)
    assert gradiente.autograd.gradcheck(sample, (logits,), eps=1e-6, atol=1e-5, rtol=1e-3)


def test_gumbel_softmax_warns_of_eps_as_torch():
    for lib in (torch, gradiente):
        with pytest.warns(UserWarning, match="`eps` parameter is deprecated and has no effect."):
            F(lib).gumbel_softmax(lib.zeros(2, 3), eps=0.1)
