"""nn.functional from the op table: float64 gradcheck (contiguous and strided inputs) and differential tests
against PyTorch (forward, backward with a non-trivial upstream gradient, grad_fn names; float32 and
float64), then the behaviours a table cannot show: errors and warnings worded as PyTorch's, dropout's
random numbers and statistics, in-place forms, second derivatives."""
import warnings

import numpy as np
import pytest
from harness import OpSpec, cases, make_tensors, spec_tests

import gradiente

torch = pytest.importorskip("torch")

ELEMENTWISE = [((3,),), ((2, 5),), ((2, 3, 4),)]
WIDE = (-4.0, 4.0)
REDUCTIONS = ("mean", "sum", "none")


def F(lib):
    return lib.nn.functional


# --- input makers ---------------------------------------------------------------------------------------

def probabilities(rng, shapes):
    """BCE: input probabilities away from 0 and 1, targets in [0, 1], then any weights."""
    return ([rng.uniform(0.05, 0.95, shapes[0]), rng.uniform(0, 1, shapes[1])]
            + [rng.uniform(0.5, 1.5, s) for s in shapes[2:]])


def logits_targets(rng, shapes):
    """Logits, a same-shaped target in [0, 1], then any (positive) weights."""
    return ([rng.uniform(-3, 3, shapes[0]), rng.uniform(0, 1, shapes[1])]
            + [rng.uniform(0.5, 1.5, s) for s in shapes[2:]])


def classes(ignore=None, logits=True):
    """Scores (N, C, ...) or (C), class indices of the target's shape (some set to ``ignore``), weights."""
    def make(rng, shapes):
        x = rng.uniform(-2, 2, shapes[0])
        if not logits:
            x = np.log(np.exp(x) / np.exp(x).sum(axis=1 if x.ndim > 1 else 0, keepdims=True))
        n_classes = shapes[0][1] if len(shapes[0]) > 1 else shapes[0][0]
        t = rng.randint(0, n_classes, size=shapes[1]).astype(np.int64)
        if ignore is not None and t.ndim:
            t.reshape(-1)[::3] = ignore
        return [x, t] + [rng.uniform(0.5, 1.5, s) for s in shapes[2:]]
    return make


def signs(rng, shapes):
    """Scores, then ±1 targets."""
    return [rng.uniform(-2, 2, shapes[0]), rng.choice([-1.0, 1.0], size=shapes[1])]


def signs_last(rng, shapes):
    """Scores for every shape but the last, then ±1 targets of the last shape."""
    return [rng.uniform(-2, 2, s) for s in shapes[:-1]] + [rng.choice([-1.0, 1.0], size=shapes[-1])]


def class_probabilities(rng, shapes):
    x = rng.uniform(-2, 2, shapes[0])
    axis = 1 if x.ndim > 1 else 0
    p = rng.uniform(0, 1, shapes[1])
    return [x, p / p.sum(axis=axis, keepdims=True)] + [rng.uniform(0.5, 1.5, s) for s in shapes[2:]]


def log_probabilities(log_target):
    def make(rng, shapes):
        x = rng.uniform(-2, 2, shapes[0])
        x = x - np.log(np.exp(x).sum(axis=-1, keepdims=True))
        t = rng.uniform(0.1, 1, shapes[1])
        t = t / t.sum(axis=-1, keepdims=True)
        return [x, np.log(t) if log_target else t]
    return make


def indices(n_classes):
    def make(rng, shapes):
        return [rng.randint(0, n_classes, size=shapes[0]).astype(np.int64)]
    return make


def seeded(fn):
    """A random function made deterministic: both libraries seed their default generator first."""
    def call(lib, *xs):
        lib.manual_seed(1234)
        return fn(lib, *xs)
    return call


# --- the table --------------------------------------------------------------------------------------------

def activation_specs():
    rows = [
        ("relu", lambda lib, x: F(lib).relu(x), (-2, 2)),
        ("relu6", lambda lib, x: F(lib).relu6(x * 4), (-2, 2)),
        ("hardtanh", lambda lib, x: F(lib).hardtanh(x, -0.5, 0.7), (-2, 2)),
        ("leaky_relu", lambda lib, x: F(lib).leaky_relu(x), (-2, 2)),
        ("leaky_relu_0.2", lambda lib, x: F(lib).leaky_relu(x, 0.2), (-2, 2)),
        ("gelu", lambda lib, x: F(lib).gelu(x), WIDE),
        ("gelu_tanh", lambda lib, x: F(lib).gelu(x, approximate="tanh"), WIDE),
        ("elu", lambda lib, x: F(lib).elu(x), (-2, 2)),
        ("elu_0.5", lambda lib, x: F(lib).elu(x, alpha=0.5), (-2, 2)),
        ("selu", lambda lib, x: F(lib).selu(x), (-2, 2)),
        ("celu", lambda lib, x: F(lib).celu(x, alpha=0.7), (-2, 2)),
        ("silu", lambda lib, x: F(lib).silu(x), WIDE),
        ("mish", lambda lib, x: F(lib).mish(x), WIDE),
        ("softplus", lambda lib, x: F(lib).softplus(x), WIDE),
        ("softplus_beta_threshold", lambda lib, x: F(lib).softplus(x, beta=2, threshold=1), (-2, 2)),
        ("logsigmoid", lambda lib, x: F(lib).logsigmoid(x), WIDE),
        ("hardsigmoid", lambda lib, x: F(lib).hardsigmoid(x), WIDE),
        ("hardswish", lambda lib, x: F(lib).hardswish(x), WIDE),
        ("threshold", lambda lib, x: F(lib).threshold(x, 0.1, 20.0), (-2, 2)),
        ("softsign", lambda lib, x: F(lib).softsign(x), (-2, 2)),
        ("tanhshrink", lambda lib, x: F(lib).tanhshrink(x), (-2, 2)),
        ("sigmoid", lambda lib, x: F(lib).sigmoid(x), WIDE),
        ("tanh", lambda lib, x: F(lib).tanh(x), (-2, 2)),
        ("softshrink", lambda lib, x: F(lib).softshrink(x, 0.3), (-2, 2)),
        ("hardshrink", lambda lib, x: F(lib).hardshrink(x, 0.3), (-2, 2)),
        # in-place forms, on a non-leaf (the Backward1 nodes read the saved result)
        ("relu_inplace", lambda lib, x: F(lib).relu(x * 1, inplace=True), (-2, 2)),
        ("leaky_relu_inplace", lambda lib, x: F(lib).leaky_relu(x * 1, 0.1, inplace=True), (-2, 2)),
        ("elu_inplace", lambda lib, x: F(lib).elu(x * 1, inplace=True), (-2, 2)),
        ("selu_inplace", lambda lib, x: F(lib).selu(x * 1, inplace=True), (-2, 2)),
        ("celu_inplace", lambda lib, x: F(lib).celu(x * 1, 0.7, inplace=True), (-2, 2)),
        ("hardtanh_inplace", lambda lib, x: F(lib).hardtanh(x * 1, inplace=True), (-2, 2)),
        ("relu6_inplace", lambda lib, x: F(lib).relu6(x * 4, inplace=True), (-2, 2)),
        ("threshold_inplace", lambda lib, x: F(lib).threshold(x * 1, 0.1, -5.0, inplace=True), (-2, 2)),
        ("silu_inplace", lambda lib, x: F(lib).silu(x * 1, inplace=True), (-2, 2)),
        ("mish_inplace", lambda lib, x: F(lib).mish(x * 1, inplace=True), (-2, 2)),
        ("hardswish_inplace", lambda lib, x: F(lib).hardswish(x * 1, inplace=True), WIDE),
    ]
    return [OpSpec(name, fn, ELEMENTWISE, domain=domain) for name, fn, domain in rows]


# softmax and log_softmax themselves are ops/softmax.py's, tested in test_ops_softmax.py; softmin is composed here
SOFTMIN = [
    OpSpec("softmin", lambda lib, x: F(lib).softmin(x, 1), [((3, 5),)]),
]

GATES = [
    OpSpec("glu", lambda lib, x: F(lib).glu(x), [((4,),), ((3, 4),), ((2, 3, 6),)]),
    OpSpec("glu_dim1", lambda lib, x: F(lib).glu(x, 1), [((2, 6, 3),)]),
    OpSpec("prelu", lambda lib, x, w: F(lib).prelu(x, w), [((4, 5), (1,)), ((4, 5), (5,)), ((2, 3, 4), (3,)),
                                                          ((2, 3, 4), ()), ((5,), (1,))]),
]

LINEAR = [
    OpSpec("linear_bias", lambda lib, x, w, b: F(lib).linear(x, w, b),
           [((4, 5), (3, 5), (3,)), ((5,), (3, 5), (3,)), ((2, 4, 5), (3, 5), (3,)), ((2, 3, 4, 5), (3, 5), (3,))]),
    OpSpec("linear_nobias", lambda lib, x, w: F(lib).linear(x, w),
           [((4, 5), (3, 5)), ((5,), (3, 5)), ((2, 4, 5), (3, 5)), ((4, 5), (5,))]),
    OpSpec("bilinear", lambda lib, x, y, w, b: F(lib).bilinear(x, y, w, b), [((4, 3), (4, 2), (5, 3, 2), (5,)),
                                                                           ((2, 4, 3), (2, 4, 2), (5, 3, 2), (5,))],
           check_name=False),     # composed from einsum here; one _trilinear node in PyTorch
    OpSpec("linear_constant_input", lambda lib, x, w, b: F(lib).linear(x, w, b), [((4, 5), (3, 5), (3,))],
           grad_inputs=[1, 2]),
]


def loss_specs():
    specs = []
    pair = [((4, 5), (4, 5)), ((3,), (3,)), ((2, 3, 4), (2, 3, 4))]
    for r in REDUCTIONS:
        specs += [
            OpSpec(f"mse_loss_{r}", lambda lib, x, y, r=r: F(lib).mse_loss(x, y, reduction=r), pair),
            OpSpec(f"l1_loss_{r}", lambda lib, x, y, r=r: F(lib).l1_loss(x, y, reduction=r), pair),
            OpSpec(f"smooth_l1_loss_{r}", lambda lib, x, y, r=r: F(lib).smooth_l1_loss(x, y, reduction=r), pair),
            OpSpec(f"smooth_l1_loss_beta_{r}",
                   lambda lib, x, y, r=r: F(lib).smooth_l1_loss(x, y, reduction=r, beta=0.5), pair[:1]),
            OpSpec(f"huber_loss_{r}", lambda lib, x, y, r=r: F(lib).huber_loss(x, y, reduction=r), pair),
            OpSpec(f"huber_loss_delta_{r}", lambda lib, x, y, r=r: F(lib).huber_loss(x, y, reduction=r, delta=0.4),
                   pair[:1]),
            OpSpec(f"mse_loss_weight_{r}", lambda lib, x, y, w, r=r: F(lib).mse_loss(x, y, reduction=r, weight=w),
                   [((4, 5), (4, 5), (4, 5))], grad_inputs=[0, 1]),
            OpSpec(f"l1_loss_weight_{r}", lambda lib, x, y, w, r=r: F(lib).l1_loss(x, y, reduction=r, weight=w),
                   [((4, 5), (4, 5), (4, 5))], grad_inputs=[0, 1]),
            OpSpec(f"huber_loss_weight_{r}",
                   lambda lib, x, y, w, r=r: F(lib).huber_loss(x, y, reduction=r, weight=w),
                   [((4, 5), (4, 5), (4, 5))], grad_inputs=[0, 1]),
            OpSpec(f"bce_{r}", lambda lib, x, y, r=r: F(lib).binary_cross_entropy(x, y, reduction=r),
                   pair, make_inputs=probabilities),
            OpSpec(f"bce_weight_{r}",
                   lambda lib, x, y, w, r=r: F(lib).binary_cross_entropy(x, y, weight=w, reduction=r),
                   [((4, 5), (4, 5), (5,)), ((4, 5), (4, 5), (4, 5))], make_inputs=probabilities, grad_inputs=[0, 1]),
            OpSpec(f"bce_logits_{r}", lambda lib, x, y, r=r: F(lib).binary_cross_entropy_with_logits(x, y, reduction=r),
                   pair, make_inputs=logits_targets),
            OpSpec(f"bce_logits_weight_{r}",
                   lambda lib, x, y, w, r=r: F(lib).binary_cross_entropy_with_logits(x, y, w, reduction=r),
                   [((4, 5), (4, 5), (5,))], make_inputs=logits_targets, grad_inputs=[0, 1]),
            OpSpec(f"bce_logits_pos_weight_{r}",
                   lambda lib, x, y, w, p, r=r: F(lib).binary_cross_entropy_with_logits(x, y, w, reduction=r,
                                                                                        pos_weight=p),
                   [((4, 5), (4, 5), (5,), (5,)), ((3,), (3,), (3,), (1,))], make_inputs=logits_targets,
                   grad_inputs=[0, 1]),
            OpSpec(f"kl_div_{r}", lambda lib, x, y, r=r: F(lib).kl_div(x, y, reduction=r),
                   [((4, 5), (4, 5))], make_inputs=log_probabilities(False)),
            OpSpec(f"poisson_nll_loss_{r}", lambda lib, x, y, r=r: F(lib).poisson_nll_loss(x, y, reduction=r),
                   [((4, 5), (4, 5))], make_inputs=probabilities, grad_inputs=[0]),
            OpSpec(f"poisson_nll_loss_rate_full_{r}",
                   lambda lib, x, y, r=r: F(lib).poisson_nll_loss(x, y * 3, log_input=False, full=True, reduction=r),
                   [((4, 5), (4, 5))], make_inputs=probabilities, grad_inputs=[0]),
            OpSpec(f"gaussian_nll_loss_{r}", lambda lib, x, y, v, r=r: F(lib).gaussian_nll_loss(x, y, v, reduction=r),
                   [((4, 5), (4, 5), (4, 5)), ((4, 5), (4, 5), (4,)), ((4, 5), (4, 5), (4, 1))],
                   make_inputs=probabilities),
            OpSpec(f"gaussian_nll_loss_full_{r}",
                   lambda lib, x, y, r=r: F(lib).gaussian_nll_loss(x, y, 0.5, full=True, reduction=r),
                   [((4, 5), (4, 5))]),
            OpSpec(f"soft_margin_loss_{r}", lambda lib, x, y, r=r: F(lib).soft_margin_loss(x, y, reduction=r),
                   [((4, 5), (4, 5)), ((3,), (3,))], make_inputs=signs, grad_inputs=[0]),
            OpSpec(f"margin_ranking_loss_{r}",
                   lambda lib, x, y, t, r=r: F(lib).margin_ranking_loss(x, y, t, margin=0.3, reduction=r),
                   [((6,), (6,), (6,))], make_inputs=signs_last, grad_inputs=[0, 1]),
            OpSpec(f"hinge_embedding_loss_{r}",
                   lambda lib, x, t, r=r: F(lib).hinge_embedding_loss(x, t, margin=1.5, reduction=r),
                   [((4, 5), (4, 5))], make_inputs=signs_last, grad_inputs=[0]),
            OpSpec(f"cosine_embedding_loss_{r}",
                   lambda lib, x, y, t, r=r: F(lib).cosine_embedding_loss(x, y, t, margin=0.1, reduction=r),
                   [((6, 5), (6, 5), (6,))], make_inputs=signs_last, grad_inputs=[0, 1]),
            OpSpec(f"triplet_margin_loss_{r}",
                   lambda lib, a, p, n, r=r: F(lib).triplet_margin_loss(a, p, n, margin=2.0, reduction=r),
                   [((6, 5), (6, 5), (6, 5))]),
            OpSpec(f"triplet_margin_loss_swap_p1_{r}",
                   lambda lib, a, p, n, r=r: F(lib).triplet_margin_loss(a, p, n, margin=2.0, p=1, swap=True,
                                                                      reduction=r),
                   [((6, 5), (6, 5), (6, 5))]),
            OpSpec(f"multilabel_soft_margin_loss_{r}",
                   lambda lib, x, y, r=r: F(lib).multilabel_soft_margin_loss(x, y, reduction=r),
                   [((4, 5), (4, 5))], make_inputs=logits_targets, grad_inputs=[0]),
            OpSpec(f"multi_margin_loss_{r}", lambda lib, x, t, r=r: F(lib).multi_margin_loss(x, t, reduction=r),
                   [((6, 5), (6,)), ((5,), ())], make_inputs=classes(), domain=(-1, 1)),
            OpSpec(f"multi_margin_loss_p2_weight_{r}",
                   lambda lib, x, t, w, r=r: F(lib).multi_margin_loss(x, t, p=2, margin=0.7, weight=w, reduction=r),
                   [((6, 5), (6,), (5,))], make_inputs=classes(), grad_inputs=[0]),
            OpSpec(f"kl_div_log_target_{r}", lambda lib, x, y, r=r: F(lib).kl_div(x, y, reduction=r, log_target=True),
                   [((4, 5), (4, 5))], make_inputs=log_probabilities(True)),
        ]
    specs += [
        OpSpec("mse_loss_broadcast", lambda lib, x, y: F(lib).mse_loss(x, y), [((4, 5), (5,)), ((5,), (4, 5))]),
        OpSpec("l1_loss_broadcast", lambda lib, x, y: F(lib).l1_loss(x, y), [((4, 5), (5,))]),
        OpSpec("smooth_l1_loss_beta0", lambda lib, x, y: F(lib).smooth_l1_loss(x, y, beta=0.0), pair[:1]),
        OpSpec("mse_loss_constant_target", lambda lib, x, y: F(lib).mse_loss(x, y), pair[:1], grad_inputs=[0]),
        OpSpec("bce_constant_target", lambda lib, x, y: F(lib).binary_cross_entropy(x, y), pair[:1],
               make_inputs=probabilities, grad_inputs=[0]),
        OpSpec("kl_div_batchmean", lambda lib, x, y: F(lib).kl_div(x, y, reduction="batchmean"),
               [((4, 5), (4, 5))], make_inputs=log_probabilities(False)),
    ]
    return specs


def classification_specs():
    specs = []
    for r in REDUCTIONS:
        specs += [
            OpSpec(f"nll_loss_{r}", lambda lib, x, t, r=r: F(lib).nll_loss(x, t, reduction=r),
                   [((4, 5), (4,)), ((5,), ()), ((2, 3, 4), (2, 4)), ((2, 3, 4, 2), (2, 4, 2)),
                    ((2, 3, 2, 2, 2), (2, 2, 2, 2))], make_inputs=classes(logits=False)),
            OpSpec(f"nll_loss_weight_ignore_{r}",
                   lambda lib, x, t, w, r=r: F(lib).nll_loss(x, t, w, ignore_index=1, reduction=r),
                   [((6, 5), (6,), (5,)), ((2, 3, 4, 2), (2, 4, 2), (3,))], make_inputs=classes(ignore=1, logits=False),
                   grad_inputs=[0]),
            OpSpec(f"cross_entropy_{r}", lambda lib, x, t, r=r: F(lib).cross_entropy(x, t, reduction=r),
                   [((4, 5), (4,)), ((5,), ()), ((2, 3, 4), (2, 4)), ((2, 3, 4, 2), (2, 4, 2))],
                   make_inputs=classes()),
            OpSpec(f"cross_entropy_weight_{r}", lambda lib, x, t, w, r=r: F(lib).cross_entropy(x, t, w, reduction=r),
                   [((4, 5), (4,), (5,)), ((2, 3, 4), (2, 4), (3,))], make_inputs=classes(), grad_inputs=[0]),
            OpSpec(f"cross_entropy_ignore_{r}",
                   lambda lib, x, t, r=r: F(lib).cross_entropy(x, t, ignore_index=-100, reduction=r),
                   [((6, 5), (6,)), ((2, 3, 4), (2, 4))], make_inputs=classes(ignore=-100)),
            OpSpec(f"cross_entropy_smoothing_{r}",
                   lambda lib, x, t, r=r: F(lib).cross_entropy(x, t, reduction=r, label_smoothing=0.1),
                   [((6, 5), (6,)), ((5,), ()), ((2, 3, 4), (2, 4))], make_inputs=classes()),
            OpSpec(f"cross_entropy_smoothing_weight_ignore_{r}",
                   lambda lib, x, t, w, r=r: F(lib).cross_entropy(x, t, w, ignore_index=2, reduction=r,
                                                                   label_smoothing=0.2),
                   [((6, 5), (6,), (5,)), ((2, 3, 4), (2, 4), (3,))], make_inputs=classes(ignore=2), grad_inputs=[0]),
            OpSpec(f"cross_entropy_probabilities_{r}", lambda lib, x, p, r=r: F(lib).cross_entropy(x, p, reduction=r),
                   [((4, 5), (4, 5)), ((5,), (5,)), ((2, 3, 4), (2, 3, 4))], make_inputs=class_probabilities),
            OpSpec(f"cross_entropy_probabilities_weight_smoothing_{r}",
                   lambda lib, x, p, w, r=r: F(lib).cross_entropy(x, p, w, reduction=r, label_smoothing=0.3),
                   [((4, 5), (4, 5), (5,)), ((2, 3, 4), (2, 3, 4), (3,))], make_inputs=class_probabilities,
                   grad_inputs=[0, 1]),
        ]
    return specs


OTHER = [
    OpSpec("pad_constant", lambda lib, x: F(lib).pad(x, (1, 2)), [((3,),), ((2, 3),)]),
    OpSpec("pad_constant_value", lambda lib, x: F(lib).pad(x, (1, 0, 2, 1), value=-1.5), [((2, 3),), ((2, 3, 4),)]),
    OpSpec("pad_constant_crop", lambda lib, x: F(lib).pad(x, (-1, 2, 1, -1)), [((3, 4),)]),
    OpSpec("pad_constant_3d", lambda lib, x: F(lib).pad(x, (1, 1, 0, 2, 1, 0)), [((2, 3, 4),)]),
    OpSpec("pad_reflect", lambda lib, x: F(lib).pad(x, (2, 1), mode="reflect"), [((2, 4),), ((2, 3, 4),)]),
    OpSpec("pad_reflect_2d", lambda lib, x: F(lib).pad(x, (1, 2, 2, 1), mode="reflect"), [((2, 3, 4),),
                                                                                        ((1, 2, 3, 4),)]),
    OpSpec("pad_reflect_3d", lambda lib, x: F(lib).pad(x, (1, 1, 1, 0, 0, 1), mode="reflect"), [((1, 2, 3, 3, 3),)]),
    OpSpec("pad_replicate", lambda lib, x: F(lib).pad(x, (3, 1), mode="replicate"), [((2, 4),), ((2, 3, 4),)]),
    OpSpec("pad_replicate_2d_crop", lambda lib, x: F(lib).pad(x, (-1, 2, 2, 1), mode="replicate"), [((2, 3, 4),)]),
    OpSpec("pad_replicate_3d", lambda lib, x: F(lib).pad(x, (1, 0, 2, 1, 0, 1), mode="replicate"),
           [((1, 2, 3, 3, 2),)]),
    OpSpec("pad_circular", lambda lib, x: F(lib).pad(x, (2, 1), mode="circular"), [((2, 4),), ((2, 3, 4),)]),
    OpSpec("pad_circular_2d_crop", lambda lib, x: F(lib).pad(x, (-1, 2, 3, 1), mode="circular"), [((2, 3, 4),),
                                                                                                ((1, 2, 3, 4),)]),
    OpSpec("pad_circular_3d", lambda lib, x: F(lib).pad(x, (1, 2, 0, 1, 2, 2), mode="circular"),
           [((1, 2, 3, 3, 2),)]),
    OpSpec("normalize", lambda lib, x: F(lib).normalize(x), [((4, 5),), ((2, 3, 4),)]),
    OpSpec("normalize_p1_dim0", lambda lib, x: F(lib).normalize(x, p=1, dim=0), [((5,),), ((4, 5),)]),
    OpSpec("cosine_similarity", lambda lib, x, y: F(lib).cosine_similarity(x, y), [((4, 5), (4, 5)),
                                                                                  ((4, 5), (1, 5))]),
    OpSpec("cosine_similarity_dim", lambda lib, x, y: F(lib).cosine_similarity(x, y, dim=-1), [((2, 3, 4), (2, 3, 4))]),
    OpSpec("pairwise_distance", lambda lib, x, y: F(lib).pairwise_distance(x, y), [((4, 5), (4, 5)), ((5,), (5,))]),
    OpSpec("pairwise_distance_p3_keepdim", lambda lib, x, y: F(lib).pairwise_distance(x, y, p=3, keepdim=True),
           [((4, 5), (4, 5))]),
    OpSpec("one_hot", lambda lib, t: F(lib).one_hot(t), [((6,),), ((2, 3),)], make_inputs=indices(4),
           gradcheck=False),
    OpSpec("one_hot_num_classes", lambda lib, t: F(lib).one_hot(t, num_classes=7), [((6,),)], make_inputs=indices(4),
           gradcheck=False),
    OpSpec("dropout", seeded(lambda lib, x: F(lib).dropout(x, 0.3)), [((50,),), ((8, 9),)]),
    OpSpec("dropout_inplace", seeded(lambda lib, x: F(lib).dropout(x * 1, 0.6, inplace=True)), [((8, 9),)]),
    OpSpec("dropout_p1", lambda lib, x: F(lib).dropout(x, 1.0), [((8, 9),)]),
    OpSpec("dropout2d", seeded(lambda lib, x: F(lib).dropout2d(x, 0.5)), [((4, 6, 2, 3),)]),
    OpSpec("dropout1d_unbatched", seeded(lambda lib, x: F(lib).dropout1d(x, 0.5)), [((6, 5),)]),
    OpSpec("alpha_dropout", seeded(lambda lib, x: F(lib).alpha_dropout(x, 0.2, training=True)), [((8, 9),)]),
]

SPECS = activation_specs() + GATES + SOFTMIN + LINEAR + loss_specs() + classification_specs() + OTHER


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")     # size-mismatch and 'mean' kl_div warnings; tested below
        yield


test_gradcheck, test_against_torch, test_gradgradcheck = spec_tests(SPECS)


def _graph(out):
    """The node names of the graph below ``out``, breadth first (the whole decomposition, not just the root)."""
    names, queue, seen = [], [out.grad_fn], set()
    while queue:
        node = queue.pop(0)
        if node is None or node in seen:
            continue
        seen.add(node)
        names.append(node.name().replace("torch::autograd::", ""))
        queue.extend(n for n, _ in node.next_functions)
    return names


@pytest.mark.parametrize("spec,shapes", cases(SPECS))
def test_graph_matches_torch(spec, shapes):
    """Every node of the recorded graph, in order, is the node PyTorch records (PyTorch's decomposition)."""
    outs = [spec.fn(lib, *make_tensors(lib, spec, shapes, dtype="float32")) for lib in (gradiente, torch)]
    if spec.check_name and (outs[1].grad_fn is not None or outs[0].grad_fn is not None):
        assert _graph(outs[0]) == _graph(outs[1])


# --- errors and warnings, worded as PyTorch's -------------------------------------------------------------

def _t(lib, values, dtype=None, grad=False):
    t = lib.tensor(values, dtype=getattr(lib, dtype) if dtype else None)
    return t.requires_grad_() if grad else t


def _quiet(fn, *args):
    """``fn(*args)`` with its warnings silenced (the loss functions warn about their shapes before raising)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args)


ERRORS = {
    "ce_target_out_of_bounds": lambda lib: F(lib).cross_entropy(lib.zeros(4, 5), _t(lib, [0, 1, 2, 5])),
    "ce_negative_target": lambda lib: F(lib).cross_entropy(lib.zeros(4, 5), _t(lib, [0, 1, -1, 2])),
    "ce_batch_size": lambda lib: F(lib).cross_entropy(lib.zeros(4, 5), _t(lib, [0, 1, 2])),
    "ce_int32_target": lambda lib: F(lib).cross_entropy(lib.zeros(4, 5), _t(lib, [0, 1, 2, 3], "int32")),
    "ce_float_target_shape": lambda lib: F(lib).cross_entropy(lib.zeros(4, 5), _t(lib, [0., 1, 2, 3])),
    "ce_weight_size": lambda lib: F(lib).cross_entropy(lib.zeros(4, 5), _t(lib, [0, 1, 2, 3]), lib.ones(3)),
    "ce_label_smoothing": lambda lib: F(lib).cross_entropy(lib.zeros(4, 5), _t(lib, [0, 1, 2, 3]),
                                                           label_smoothing=1.5),
    "ce_probabilities_ignore_index": lambda lib: F(lib).cross_entropy(lib.zeros(4, 5), lib.ones(4, 5), ignore_index=1),
    "ce_probabilities_long": lambda lib: F(lib).cross_entropy(lib.zeros(4, 5), lib.ones(4, 5, dtype=lib.long)),
    "ce_probabilities_weight": lambda lib: F(lib).cross_entropy(lib.zeros(4, 5), lib.ones(4, 5), lib.ones(4)),
    "nll_0d_input": lambda lib: F(lib).nll_loss(lib.tensor(1.), lib.tensor(0)),
    "nll_2d_target": lambda lib: F(lib).nll_loss(lib.zeros(2, 3), lib.zeros(2, 4, dtype=lib.long)),
    "nll_3d_target_size": lambda lib: F(lib).nll_loss(lib.zeros(2, 3, 4), lib.zeros(2, 5, dtype=lib.long)),
    "nll_4d_target_size": lambda lib: F(lib).nll_loss(lib.zeros(2, 3, 4, 5), lib.zeros(2, 4, 6, dtype=lib.long)),
    "nll_4d_target_dim": lambda lib: F(lib).nll_loss(lib.zeros(2, 3, 4, 5), lib.zeros(2, 4, dtype=lib.long)),
    "nll_4d_weight": lambda lib: F(lib).nll_loss(lib.zeros(2, 3, 4, 5), lib.zeros(2, 4, 5, dtype=lib.long),
                                                 lib.ones(2)),
    "nll_weight_dtype": lambda lib: F(lib).nll_loss(lib.zeros(2, 3, dtype=lib.float64), lib.zeros(2, dtype=lib.long),
                                                    lib.ones(3)),
    "nll_bad_reduction": lambda lib: F(lib).nll_loss(lib.zeros(2, 3), lib.zeros(2, dtype=lib.long), reduction="avg"),
    "bce_input_range": lambda lib: F(lib).binary_cross_entropy(_t(lib, [1.5]), _t(lib, [1.])),
    "bce_target_range": lambda lib: F(lib).binary_cross_entropy(_t(lib, [.5]), _t(lib, [2.])),
    "bce_size": lambda lib: F(lib).binary_cross_entropy(_t(lib, [.5, .5]), _t(lib, [1.])),
    "bce_target_dtype": lambda lib: F(lib).binary_cross_entropy(_t(lib, [.3, .6]), _t(lib, [1, 0])),
    "bce_logits_size": lambda lib: F(lib).binary_cross_entropy_with_logits(_t(lib, [.5, .5]), _t(lib, [1.])),
    "mse_integers": lambda lib: F(lib).mse_loss(_t(lib, [3, 6]), _t(lib, [1, 0])),
    "smooth_l1_negative_beta": lambda lib: F(lib).smooth_l1_loss(_t(lib, [.3]), _t(lib, [1.]), beta=-1),
    "huber_zero_delta": lambda lib: F(lib).huber_loss(_t(lib, [.3]), _t(lib, [1.]), delta=0),
    "kl_div_integers": lambda lib: F(lib).kl_div(_t(lib, [1, 2]), _t(lib, [1, 2]), reduction="sum"),
    "one_hot_float": lambda lib: F(lib).one_hot(_t(lib, [1., 2])),
    "one_hot_negative": lambda lib: F(lib).one_hot(_t(lib, [1, -2])),
    "one_hot_too_large": lambda lib: F(lib).one_hot(_t(lib, [1, 5]), 3),
    "one_hot_empty": lambda lib: F(lib).one_hot(lib.tensor([], dtype=lib.long)),
    "pad_odd": lambda lib: F(lib).pad(lib.zeros(4, 5), (1,)),
    "pad_too_long": lambda lib: F(lib).pad(lib.zeros(4, 5), (1, 1, 1, 1, 1, 1)),
    "pad_crop_too_much": lambda lib: F(lib).pad(lib.zeros(4, 5), (-3, -3)),
    "pad_float_amount": lambda lib: F(lib).pad(lib.zeros(4, 5), (1.5, 1)),
    "pad_reflect_too_large": lambda lib: F(lib).pad(lib.zeros(4, 5), (5, 5), mode="reflect"),
    "pad_reflect_2d_too_large": lambda lib: F(lib).pad(lib.zeros(2, 3, 4), (1, 1, 3, 3), mode="reflect"),
    "pad_reflect_1d_input": lambda lib: F(lib).pad(lib.zeros(5), (2, 2), mode="reflect"),
    "pad_reflect_value": lambda lib: F(lib).pad(lib.zeros(4, 5), (1, 1), mode="reflect", value=2.0),
    "pad_unknown_mode": lambda lib: F(lib).pad(lib.zeros(4, 5), (1, 1), mode="foo"),
    "pad_circular_wraps_twice": lambda lib: F(lib).pad(lib.zeros(2, 3), (4, 0), mode="circular"),
    "pad_circular_value": lambda lib: F(lib).pad(lib.zeros(2, 3), (1, 1), mode="circular", value=1.0),
    "pad_circular_1d_input": lambda lib: F(lib).pad(lib.zeros(5), (1, 1), mode="circular"),
    "dropout_p": lambda lib: F(lib).dropout(lib.zeros(3), 1.5),
    "dropout1d_dim": lambda lib: F(lib).dropout1d(lib.zeros(3), 0.5),
    "gelu_long": lambda lib: F(lib).gelu(_t(lib, [1, 2])),
    "gelu_approximate": lambda lib: F(lib).gelu(lib.zeros(2), approximate="foo"),
    "leaky_relu_long": lambda lib: F(lib).leaky_relu(_t(lib, [1, 2])),
    "elu_bool": lambda lib: F(lib).elu(_t(lib, [True])),
    "silu_long": lambda lib: F(lib).silu(_t(lib, [1, 2])),
    "softplus_long": lambda lib: F(lib).softplus(_t(lib, [1, 2])),
    "mish_long": lambda lib: F(lib).mish(_t(lib, [1, 2])),
    "hardtanh_min_max": lambda lib: F(lib).hardtanh(lib.zeros(2), 1.0, -1.0),
    "relu_inplace_leaf": lambda lib: F(lib).relu(lib.zeros(2, requires_grad=True), inplace=True),
    "linear_shapes": lambda lib: F(lib).linear(lib.zeros(4, 5), lib.zeros(3, 4)),
    "linear_0d": lambda lib: F(lib).linear(lib.tensor(1.), lib.zeros(3, 4)),
    "linear_bias": lambda lib: F(lib).linear(lib.zeros(4, 5), lib.zeros(3, 5), lib.zeros(4)),
    "linear_dtypes": lambda lib: F(lib).linear(lib.zeros(4, 5), lib.zeros(3, 5, dtype=lib.float64)),
    "cosine_similarity_long": lambda lib: F(lib).cosine_similarity(_t(lib, [[1, 2]]), _t(lib, [[1, 2]])),
    "glu_odd": lambda lib: F(lib).glu(lib.zeros(4, 5), 1),
    "glu_scalar": lambda lib: F(lib).glu(lib.tensor(1.)),
    "prelu_weight_dim": lambda lib: F(lib).prelu(lib.zeros(4, 5), lib.zeros(2, 2)),
    "prelu_channels": lambda lib: F(lib).prelu(lib.zeros(4, 5), lib.zeros(4)),
    "softshrink_negative": lambda lib: F(lib).softshrink(lib.zeros(4), -0.5),
    "soft_margin_target_grad": lambda lib: F(lib).soft_margin_loss(lib.zeros(3), lib.ones(3, requires_grad=True)),
    "multi_margin_p": lambda lib: F(lib).multi_margin_loss(lib.zeros(2, 3), lib.tensor([0, 1]), p=3),
    "multi_margin_target": lambda lib: F(lib).multi_margin_loss(lib.zeros(2, 3), lib.tensor([0, 3])),
    "triplet_margin": lambda lib: F(lib).triplet_margin_loss(lib.zeros(2, 3), lib.zeros(2, 3), lib.zeros(2, 3),
                                                             margin=0),
    "triplet_dims": lambda lib: F(lib).triplet_margin_loss(lib.zeros(2, 3), lib.zeros(3), lib.zeros(2, 3)),
    "margin_ranking_dims": lambda lib: F(lib).margin_ranking_loss(lib.zeros(2, 3), lib.zeros(2, 3), lib.zeros(2)),
    "cosine_embedding_target": lambda lib: F(lib).cosine_embedding_loss(lib.zeros(2, 3), lib.zeros(2, 3),
                                                                        lib.zeros(2, 3)),
    "cosine_embedding_inputs": lambda lib: F(lib).cosine_embedding_loss(lib.zeros(2, 3), lib.zeros(2, 3, 1),
                                                                        lib.zeros(2)),
    "gaussian_nll_var_size": lambda lib: F(lib).gaussian_nll_loss(lib.zeros(4, 5), lib.zeros(4, 5), lib.ones(3)),
    "gaussian_nll_negative_var": lambda lib: F(lib).gaussian_nll_loss(lib.zeros(4, 5), lib.zeros(4, 5), -1.0),
    "mse_shapes_do_not_broadcast": lambda lib: _quiet(F(lib).mse_loss, lib.ones(3), lib.ones(4)),
    "l1_shapes_do_not_broadcast": lambda lib: _quiet(F(lib).l1_loss, lib.ones(2, 3), lib.ones(2)),
    "huber_shapes_do_not_broadcast": lambda lib: _quiet(F(lib).huber_loss, lib.ones(3), lib.ones(2, 4)),
    "leaky_relu_inplace_negative_slope": lambda lib: F(lib).leaky_relu(lib.ones(2, requires_grad=True) * 1, -0.5,
                                                                       inplace=True).sum().backward(),
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


def _as_torch(message):
    """Our messages name our types (``gradiente.Size([2])``) where PyTorch's name its own."""
    return message.replace("gradiente.", "torch.")


WARNINGS = {
    "mse_size": lambda lib: F(lib).mse_loss(lib.zeros(4, 5), lib.zeros(5)),
    "l1_size": lambda lib: F(lib).l1_loss(lib.zeros(4, 5), lib.zeros(5)),
    "huber_size": lambda lib: F(lib).huber_loss(lib.zeros(4, 5), lib.zeros(1, 5)),
    "softmax_implicit_dim": lambda lib: F(lib).softmax(lib.zeros(2, 3)),
    "log_softmax_implicit_dim": lambda lib: F(lib).log_softmax(lib.zeros(3)),
    "kl_div_mean": lambda lib: F(lib).kl_div(lib.zeros(2, 3), lib.ones(2, 3)),
    "size_average": lambda lib: F(lib).mse_loss(lib.zeros(3), lib.ones(3), size_average=False),
    "dropout2d_dim": lambda lib: F(lib).dropout2d(lib.zeros(2, 3), 0.5),
}


@pytest.mark.parametrize("name", list(WARNINGS))
def test_warning_as_torch(name):
    messages = []
    for lib in (torch, gradiente):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            WARNINGS[name](lib)
        messages.append([(w.category.__name__, _as_torch(str(w.message))) for w in caught])
    assert messages[1] == messages[0] and messages[0]


def test_implicit_softmax_dim_choice():
    """Without dim, PyTorch's legacy choice: dim 0 for 0-, 1- and 3-d inputs, else dim 1."""
    for shape in [(), (3,), (2, 3), (2, 3, 4), (2, 3, 4, 5)]:
        x = np.asarray(np.random.RandomState(0).randn(*shape))
        expected = torch.nn.functional.softmax(torch.from_numpy(x)).numpy()
        np.testing.assert_allclose(gradiente.nn.functional.softmax(gradiente.from_numpy(x)).numpy(), expected,
                                   rtol=1e-12)


def test_reduction_legacy_arguments():
    x, y = np.random.RandomState(0).randn(2, 3, 4)
    for kwargs in [{"size_average": False}, {"reduce": False}, {"size_average": True, "reduce": True}]:
        for name in ("mse_loss", "l1_loss", "smooth_l1_loss"):
            expected = getattr(torch.nn.functional, name)(torch.from_numpy(x), torch.from_numpy(y), **kwargs)
            got = getattr(gradiente.nn.functional, name)(gradiente.from_numpy(x), gradiente.from_numpy(y), **kwargs)
            np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-12)


# --- dropout ----------------------------------------------------------------------------------------------

def test_dropout_statistics():
    """About p of the elements are zeroed, the rest scaled by 1/(1 - p): the expectation is unchanged."""
    gradiente.manual_seed(0)
    x = gradiente.ones(200_000)
    for p in (0.1, 0.5, 0.8):
        y = gradiente.nn.functional.dropout(x, p).numpy()
        dropped = np.mean(y == 0)
        assert abs(dropped - p) < 4 * np.sqrt(p * (1 - p) / y.size)
        np.testing.assert_allclose(y[y != 0], 1 / (1 - p), rtol=1e-6)
        assert abs(y.mean() - 1) < 0.02


def test_dropout_mask_is_torchs():
    """With the same seed, the same elements are dropped as in PyTorch (same draws from the same generator)."""
    x = np.random.RandomState(0).rand(7, 33).astype(np.float32)
    gradiente.manual_seed(7)
    torch.manual_seed(7)
    for p in (0.2, 0.5, 0.9):
        got = gradiente.nn.functional.dropout(gradiente.from_numpy(x), p).numpy()
        expected = torch.nn.functional.dropout(torch.from_numpy(x), p).numpy()
        np.testing.assert_array_equal(got, expected)


def test_dropout_identity_cases():
    """Not training, or p = 0: the input itself comes back, as in PyTorch (no copy, no node)."""
    x = gradiente.randn(3, 4, requires_grad=True)
    assert gradiente.nn.functional.dropout(x, 0.5, training=False) is x
    assert gradiente.nn.functional.dropout(x, 0.0) is x
    assert gradiente.nn.functional.alpha_dropout(x, 0.5) is x


def test_dropout_gradient_follows_mask():
    gradiente.manual_seed(3)
    x = gradiente.ones(1000, requires_grad=True)
    y = gradiente.nn.functional.dropout(x, 0.25)
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), y.detach().numpy())


def test_dropout_inplace_changes_the_input():
    gradiente.manual_seed(0)
    x = gradiente.ones(50, requires_grad=True)
    h = x * 1
    out = gradiente.nn.functional.dropout(h, 0.5, inplace=True)
    assert out is h and type(h.grad_fn).__name__ == "MulBackward0" and h._version == 1


# --- values at the edges ----------------------------------------------------------------------------------

def test_bce_log_clamped_at_minus_100():
    """x = 0 or 1 gives a finite loss (each log clamped at -100) and a finite gradient, as in PyTorch."""
    x, y = [0.0, 1.0, 0.0, 1.0], [1.0, 0.0, 0.0, 1.0]
    outs = []
    for lib in (gradiente, torch):
        xt = lib.tensor(x, requires_grad=True)
        loss = lib.nn.functional.binary_cross_entropy(xt, lib.tensor(y), reduction="none")
        loss.sum().backward()
        outs.append((loss.detach().numpy(), xt.grad.numpy()))
    np.testing.assert_array_equal(outs[0][0], outs[1][0])
    np.testing.assert_allclose(outs[0][1], outs[1][1], rtol=1e-6)


def test_bce_with_logits_extreme_logits():
    """No overflow for large logits: the loss stays exact where the naive formula gives inf or nan."""
    x = np.array([-1000.0, -50.0, 0.0, 50.0, 1000.0])
    y = np.array([1.0, 0.0, 0.5, 1.0, 0.0])
    got = gradiente.nn.functional.binary_cross_entropy_with_logits(gradiente.tensor(x), gradiente.tensor(y),
                                                                   reduction="none")
    expected = torch.nn.functional.binary_cross_entropy_with_logits(torch.tensor(x), torch.tensor(y),
                                                                    reduction="none")
    np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-15)


def test_nll_loss_all_ignored_is_nan_with_zero_gradient():
    for lib in (gradiente, torch):
        x = lib.zeros(3, 4, requires_grad=True)
        loss = lib.nn.functional.nll_loss(x, lib.tensor([-100, -100, -100]))
        loss.backward()
        assert np.isnan(loss.item()) and not x.grad.numpy().any()


def test_cross_entropy_matches_log_softmax_then_nll():
    rng = np.random.RandomState(0)
    x, t = rng.randn(6, 4), rng.randint(0, 4, 6)
    F_ = gradiente.nn.functional
    a = F_.cross_entropy(gradiente.tensor(x), gradiente.tensor(t))
    b = F_.nll_loss(F_.log_softmax(gradiente.tensor(x), 1), gradiente.tensor(t))
    assert a.item() == b.item()


def test_gelu_exact_uses_an_accurate_erf():
    """The exact gelu agrees with PyTorch to the last bits in float64, far into both tails."""
    x = np.linspace(-10, 10, 2001)
    got = gradiente.nn.functional.gelu(gradiente.tensor(x)).numpy()
    # 1 + erf(x/√2) cancels for x << 0, in PyTorch as here: agreement is to ~1e-16 of |x|, not of the result.
    np.testing.assert_allclose(got, torch.nn.functional.gelu(torch.tensor(x)).numpy(), rtol=1e-15, atol=1e-15)


def test_seed_004_loss_prints_as_torch():
    """The one-layer net of seed 004: same value, same grad_fn, same printout."""
    printed = []
    for lib in (gradiente, torch):
        lib.manual_seed(0)
        x, y = lib.ones(5), lib.zeros(3)
        w, b = lib.randn(5, 3, requires_grad=True), lib.randn(3, requires_grad=True)
        loss = lib.nn.functional.binary_cross_entropy_with_logits(lib.matmul(x, w) + b, y)
        loss.backward()
        printed.append((repr(loss), repr(w.grad), repr(b.grad)))
    assert printed[0] == printed[1]


# --- second derivatives (rules on tensors under create_graph) ---------------------------------------------

SECOND_ORDER = {
    "gelu": lambda lib, x: F(lib).gelu(x),
    "gelu_tanh": lambda lib, x: F(lib).gelu(x, approximate="tanh"),
    "elu": lambda lib, x: F(lib).elu(x, 0.7),
    "celu_inplace": lambda lib, x: F(lib).celu(x * 1, 0.7, inplace=True),
    "selu": lambda lib, x: F(lib).selu(x),
    "silu": lambda lib, x: F(lib).silu(x),
    "mish": lambda lib, x: F(lib).mish(x),
    "softplus": lambda lib, x: F(lib).softplus(x, beta=2, threshold=3),
    "logsigmoid": lambda lib, x: F(lib).logsigmoid(x),
    "leaky_relu": lambda lib, x: F(lib).leaky_relu(x, 0.2) ** 2,
    "hardswish": lambda lib, x: F(lib).hardswish(x * 2),
    "mse": lambda lib, x: F(lib).mse_loss(x, _fixed(lib, x)),
    "glu": lambda lib, x: F(lib).glu(x, 0),
    "prelu": lambda lib, x: F(lib).prelu(x, x[0] * 0.3) ** 2,
    "soft_margin": lambda lib, x: F(lib).soft_margin_loss(x, _fixed(lib, x).sign()),
    "multi_margin_p2": lambda lib, x: F(lib).multi_margin_loss(x, lib.tensor([0, 4, 2, 1]), p=2, margin=2.0),
    "huber": lambda lib, x: F(lib).huber_loss(x * 3, _fixed(lib, x), reduction="sum"),
    "smooth_l1": lambda lib, x: F(lib).smooth_l1_loss(x * 3, _fixed(lib, x), beta=0.5),
    "bce": lambda lib, x: F(lib).binary_cross_entropy(x.sigmoid(), _fixed(lib, x).sigmoid()),
    "bce_target": lambda lib, x: F(lib).binary_cross_entropy(_fixed(lib, x).sigmoid(), x.sigmoid()),
    "bce_logits_pos_weight": lambda lib, x: F(lib).binary_cross_entropy_with_logits(
        x, _fixed(lib, x).sigmoid(), pos_weight=lib.full((5,), 1.5, dtype=x.dtype)),
    "bce_logits_target_pos_weight": lambda lib, x: F(lib).binary_cross_entropy_with_logits(
        _fixed(lib, x), x.sigmoid(), pos_weight=lib.full((5,), 1.5, dtype=x.dtype)),
    "cross_entropy": lambda lib, x: F(lib).cross_entropy(x, lib.tensor([0, 4, 2, 1])),
    "cross_entropy_smoothing": lambda lib, x: F(lib).cross_entropy(x, lib.tensor([0, 4, 2, 1]), label_smoothing=0.2),
    "pad": lambda lib, x: F(lib).pad(x, (1, -1, 2, 0)) ** 2,
    "pad_reflect": lambda lib, x: F(lib).pad(x, (2, 1), mode="reflect") ** 2,
    "pad_circular": lambda lib, x: F(lib).pad(x, (2, 1), mode="circular") ** 2,
    "linear": lambda lib, x: F(lib).linear(x, x[:3] * 1, x[0, :3]),
}


def _fixed(lib, x):
    """A constant of x's shape (gradgradcheck perturbs x, so a target must not be computed from it)."""
    return lib.from_numpy(np.random.RandomState(1).uniform(-2, 2, tuple(x.shape)))


@pytest.mark.parametrize("name", list(SECOND_ORDER))
def test_second_derivatives(name):
    x = gradiente.from_numpy(np.random.RandomState(0).uniform(-2, 2, (4, 5))).requires_grad_()
    assert gradiente.autograd.gradgradcheck(lambda t: SECOND_ORDER[name](gradiente, t), [x])


@pytest.mark.parametrize("dtype", [np.float64, np.float16])
def test_gelu_saves_its_cdf_and_gives_the_gradient_it_recomputed_before(dtype):
    """The exact gelu keeps Φ(x) from its forward for the rule (erf is its costliest step): the gradient is the
    one the rule computes from x (as under create_graph), bit for bit, and matches PyTorch's. (float32 takes
    oneDNN's kernels instead, as PyTorch does: tests/test_kernel_order.py.)"""
    x = (np.random.RandomState(0).standard_normal((16, 32)) * 3).astype(dtype)
    g = np.random.RandomState(1).standard_normal((16, 32)).astype(dtype)
    t = gradiente.tensor(x, requires_grad=True)
    y = gradiente.nn.functional.gelu(t)
    assert y.grad_fn.cdf is not None
    (saved,) = gradiente.autograd.grad(y, t, gradiente.tensor(g))
    (recomputed,) = gradiente.autograd.grad(gradiente.nn.functional.gelu(t), t, gradiente.tensor(g), create_graph=True)
    np.testing.assert_array_equal(saved.numpy(), recomputed.detach().numpy())
    tt = torch.tensor(x, requires_grad=True)
    torch.nn.functional.gelu(tt).backward(torch.tensor(g))
    tol = {np.float16: 2e-3, np.float64: 1e-14}[dtype]
    np.testing.assert_allclose(saved.numpy(), tt.grad.numpy(), rtol=tol, atol=tol)


@pytest.mark.parametrize("name", ["gelu", "elu", "hardtanh", "softshrink", "selu", "mish", "logsigmoid"])
def test_activations_keep_the_inputs_layout(name):
    """Issue 13, found by tools/random_programs.py: activations computed with np.where (and exact gelu, through
    erf) returned C order for a transposed input; PyTorch keeps the input's strides (and writes log_sigmoid's
    result contiguous)."""
    values = np.random.RandomState(0).standard_normal((3, 4, 2))
    results = [getattr(lib.nn.functional, name)(lib.from_numpy(values).permute(2, 0, 1)) for lib in (gradiente, torch)]
    assert results[0].stride() == results[1].stride()
    np.testing.assert_allclose(results[0].numpy(), results[1].numpy(), rtol=1e-12)


@pytest.mark.parametrize("name", ["logsigmoid", "gelu", "elu"])
def test_activation_of_a_0d_tensor_is_0d(name):
    """A contiguous copy must keep a 0-d result 0-d (np.ascontiguousarray makes it 1-d): caught by
    tools/random_programs.py after log_sigmoid's result was made contiguous."""
    ours, theirs = (getattr(lib.nn.functional, name)(lib.tensor(0.5)) for lib in (gradiente, torch))
    assert ours.shape == theirs.shape == () and ours.item() == pytest.approx(theirs.item(), rel=1e-6)


@pytest.mark.parametrize("loss", ["mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss"])
def test_mean_loss_of_no_elements_backpropagates(loss):
    """Issue 13, found by tools/random_programs.py: a mean-reduced loss of an empty input raised
    ZeroDivisionError in backward (1.0 / count); PyTorch gives nan forward and a zero gradient to a 0-d target."""
    def scenario(lib):
        x = lib.tensor([0.3], dtype=lib.float64, requires_grad=True)
        out = getattr(lib.nn.functional, loss)(x[x > 5], x.sum() * 2)
        (g,) = lib.autograd.grad(out, x, create_graph=True)
        return str(out.item()), g.tolist()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert scenario(gradiente) == scenario(torch)
