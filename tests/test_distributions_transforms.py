"""gradiente.distributions.transforms, TransformedDistribution and the constraint registries (biject_to,
transform_to) against torch 2.13: forward and inverse values, log |det J| and their gradients, reprs,
domains and codomains, shapes, caching, equality, errors; float64 gradchecks of each map and its log-det.
"""
import numpy as np
import pytest

import gradiente
import gradiente.distributions as GD
from gradiente.autograd import gradcheck

torch = pytest.importorskip("torch")
TD = torch.distributions
GT, TT = GD.transforms, TD.transforms


def lib_of(D):
    return gradiente if D is GD else torch


def to_np(t):
    if isinstance(t, (torch.Tensor, gradiente.Tensor)):
        return t.detach().numpy()
    return np.asarray(t)


def assert_close(ours, theirs, tol=None):
    a, b = to_np(ours), to_np(theirs)
    assert a.dtype == b.dtype, (a.dtype, b.dtype)
    assert a.shape == b.shape, (a.shape, b.shape)
    tol = tol if tol is not None else {"float32": 3e-6, "float64": 1e-12}.get(a.dtype.name, 0)
    np.testing.assert_allclose(a, b, rtol=tol, atol=tol, equal_nan=True)


def same_repr(ours, theirs):
    assert repr(ours) == repr(theirs).replace("torch.", "gradiente.")


RNG = np.random.default_rng(0)
X_REAL = RNG.normal(size=(2, 3))
X_POS = np.abs(RNG.normal(size=(2, 3))) + 0.2
X_MAT = RNG.normal(size=(2, 3, 3))
X_VEC6 = RNG.normal(size=(2, 6)) * 0.5

# (name, make(T, lib), input) with the input in the transform's domain.
CASES = [
    ("exp", lambda T, lib: T.ExpTransform(), X_REAL),
    ("sigmoid", lambda T, lib: T.SigmoidTransform(), X_REAL),
    ("tanh", lambda T, lib: T.TanhTransform(), X_REAL),
    ("softplus", lambda T, lib: T.SoftplusTransform(), X_REAL),
    ("power", lambda T, lib: T.PowerTransform(lib.tensor([0.5, 2.0, -1.5], dtype=lib.float64)), X_POS),
    ("power_number", lambda T, lib: T.PowerTransform(3.0), X_POS),
    ("affine", lambda T, lib: T.AffineTransform(1.0, -2.0), X_REAL),
    ("affine_tensor", lambda T, lib: T.AffineTransform(lib.tensor([1.0, 0.0, -1.0], dtype=lib.float64),
                                                       lib.tensor([2.0, -0.5, 3.0], dtype=lib.float64)), X_REAL),
    ("affine_event", lambda T, lib: T.AffineTransform(0.5, lib.tensor([2.0, 0.5, 3.0], dtype=lib.float64),
                                                      event_dim=1), X_REAL),
    ("stick_breaking", lambda T, lib: T.StickBreakingTransform(), X_REAL),
    ("corr_cholesky", lambda T, lib: T.CorrCholeskyTransform(), X_VEC6),
    ("compose", lambda T, lib: T.ComposeTransform([T.AffineTransform(0.5, 2.0), T.ExpTransform()]), X_REAL),
    ("compose_event", lambda T, lib: T.ComposeTransform([T.ExpTransform(), T.StickBreakingTransform()]), X_REAL),
    ("independent", lambda T, lib: T.IndependentTransform(T.SigmoidTransform(), 1), X_REAL),
    ("reshape", lambda T, lib: T.ReshapeTransform((3,), (3, 1)), X_REAL),
    ("inverse", lambda T, lib: T.ExpTransform().inv, X_POS),
    ("cat", lambda T, lib: T.CatTransform([T.ExpTransform(), T.AffineTransform(1.0, 3.0)], dim=1,
                                          lengths=[1, 2]), X_REAL),
    ("cat_dim0", lambda T, lib: T.CatTransform([T.ExpTransform(), T.TanhTransform()], dim=0), X_REAL),
    ("stack", lambda T, lib: T.StackTransform([T.ExpTransform(), T.SigmoidTransform(), T.TanhTransform()],
                                              dim=1), X_REAL),
    ("cdf", lambda T, lib: T.CumulativeDistributionTransform(
        lib.distributions.Normal(lib.tensor(0.5, dtype=lib.float64), lib.tensor(2.0, dtype=lib.float64))), X_REAL),
    ("identity", lambda T, lib: T.identity_transform, X_REAL),
]
NOT_BIJECTIVE = [
    ("abs", lambda T, lib: T.AbsTransform(), X_REAL),
    ("softmax", lambda T, lib: T.SoftmaxTransform(), X_REAL),
    ("lower_cholesky", lambda T, lib: T.LowerCholeskyTransform(), X_MAT),
    ("positive_definite", lambda T, lib: T.PositiveDefiniteTransform(), X_MAT),
]
ids = [c[0] for c in CASES]


def both(make, x):
    ours, theirs = make(GT, gradiente), make(TT, torch)
    gx = gradiente.tensor(x, requires_grad=True)
    tx = torch.tensor(x, requires_grad=True)
    return ours, theirs, gx, tx


@pytest.mark.parametrize(("name", "make", "x"), CASES, ids=ids)
def test_forward_inverse_log_det_and_gradients(name, make, x):
    ours, theirs, gx, tx = both(make, x)
    gy, ty = ours(gx), theirs(tx)
    assert_close(gy, ty)
    assert_close(ours.inv(gy.detach()), theirs.inv(ty.detach()), tol=1e-9)
    g_lad, t_lad = ours.log_abs_det_jacobian(gx, gy), theirs.log_abs_det_jacobian(tx, ty)
    assert_close(g_lad, t_lad, tol=1e-10)
    (gy.sum() + g_lad.sum()).backward()
    (ty.sum() + t_lad.sum()).backward()
    assert_close(gx.grad, tx.grad, tol=1e-10)


@pytest.mark.parametrize(("name", "make", "x"), NOT_BIJECTIVE, ids=[c[0] for c in NOT_BIJECTIVE])
def test_non_bijective_transforms(name, make, x):
    ours, theirs, gx, tx = both(make, x)
    gy, ty = ours(gx), theirs(tx)
    assert_close(gy, ty)
    assert_close(ours.inv(gy.detach()), theirs.inv(ty.detach()), tol=1e-9)
    gy.sum().backward()
    ty.sum().backward()
    assert_close(gx.grad, tx.grad, tol=1e-10)
    assert ours.bijective is theirs.bijective is False
    same_repr(ours.codomain, theirs.codomain)


@pytest.mark.parametrize(("name", "make", "x"), CASES + NOT_BIJECTIVE, ids=ids + [c[0] for c in NOT_BIJECTIVE])
def test_attributes_reprs_and_shapes(name, make, x):
    ours, theirs = make(GT, gradiente), make(TT, torch)
    same_repr(ours, theirs)
    same_repr(ours.inv, theirs.inv)
    same_repr(ours.domain, theirs.domain)
    same_repr(ours.codomain, theirs.codomain)
    assert ours.domain.event_dim == theirs.domain.event_dim
    assert ours.codomain.event_dim == theirs.codomain.event_dim
    assert ours.bijective == theirs.bijective
    try:
        their_sign = theirs.sign
    except NotImplementedError:
        with pytest.raises(NotImplementedError):
            _ = ours.sign
    else:
        assert_close(ours.sign, their_sign)
    shape = tuple(x.shape)
    assert tuple(ours.forward_shape(gradiente.Size(shape))) == tuple(theirs.forward_shape(torch.Size(shape)))
    y_shape = tuple(theirs.forward_shape(torch.Size(shape)))
    assert tuple(ours.inverse_shape(gradiente.Size(y_shape))) == tuple(theirs.inverse_shape(torch.Size(y_shape)))


@pytest.mark.parametrize(("name", "make", "x"), CASES, ids=ids)
def test_gradcheck_forward_and_log_det(name, make, x):
    t = make(GT, gradiente)
    gx = gradiente.tensor(x, requires_grad=True)
    assert gradcheck(t, (gx,))
    assert gradcheck(lambda v: t.log_abs_det_jacobian(v, t(v)), (gx,))


def test_gradcheck_through_transform_parameters():
    x = gradiente.tensor(X_POS)
    loc = gradiente.tensor([1.0, 0.0, -1.0], dtype=gradiente.float64, requires_grad=True)
    scale = gradiente.tensor([2.0, -0.5, 3.0], dtype=gradiente.float64, requires_grad=True)
    exponent = gradiente.tensor([0.5, 2.0, -1.5], dtype=gradiente.float64, requires_grad=True)

    def affine(loc, scale):
        t = GT.AffineTransform(loc, scale)
        return t(x) + t.log_abs_det_jacobian(x, t(x))

    def power(exponent):
        t = GT.PowerTransform(exponent)
        return t(x) + t.log_abs_det_jacobian(x, t(x))

    assert gradcheck(affine, (loc, scale))
    assert gradcheck(power, (exponent,))


def test_caching_returns_the_same_objects():
    for T, lib in ((GT, gradiente), (TT, torch)):
        t = T.ExpTransform(cache_size=1)
        x = lib.tensor([0.5, 1.0])
        y = t(x)
        assert t(x) is y
        assert t.inv(y) is x
        assert T.ExpTransform().inv(T.ExpTransform()(x)) is not x
        assert t.with_cache(1) is t
        assert t.with_cache(0)._cache_size == 0
        assert t.inv.inv is t
        assert t.inv is t.inv
        compose = T.ComposeTransform([T.ExpTransform(), T.AffineTransform(1.0, 2.0)], cache_size=1)
        assert all(p._cache_size == 1 for p in compose.parts)
        z = compose(x)
        assert compose.inv(z) is not None


def test_equality_and_no_hash():
    for T, lib in ((GT, gradiente), (TT, torch)):
        for t in (T.ExpTransform(), T.ExpTransform().inv, T.AffineTransform(0.0, 1.0), T.identity_transform):
            with pytest.raises(TypeError, match="unhashable type"):
                hash(t)
        assert T.ExpTransform() == T.ExpTransform()
        assert T.ExpTransform() != T.SigmoidTransform()
        assert T.ExpTransform().inv == T.ExpTransform().inv
        assert T.AffineTransform(1.0, 2.0) == T.AffineTransform(1.0, 2.0)
        assert T.AffineTransform(1.0, 2.0) != T.AffineTransform(1.0, 3.0)
        assert T.PowerTransform(lib.tensor(2.0)) == T.PowerTransform(2.0)
        assert T.ComposeTransform([T.ExpTransform()]) == T.ComposeTransform([T.ExpTransform()])
        assert T.identity_transform == T.ComposeTransform([])


def _error(call):
    try:
        call()
    except Exception as e:  # the test compares whatever was raised
        return type(e).__name__, str(e)
    return None


@pytest.mark.parametrize("call", [
    lambda T, lib: T.ExpTransform(cache_size=2),
    lambda T, lib: T.ReshapeTransform((2, 3), (4,)),
    lambda T, lib: T.ReshapeTransform((2, 3), (6,)).forward_shape((3, 2)),
    lambda T, lib: T.ReshapeTransform((2, 3), (6,)).forward_shape((3,)),
    lambda T, lib: T.CorrCholeskyTransform().forward_shape((4,)),
    lambda T, lib: T.CorrCholeskyTransform().inverse_shape((3, 4)),
    lambda T, lib: T.StickBreakingTransform().forward_shape(()),
    lambda T, lib: T.ReshapeTransform((3,), (3, 1)).event_dim,
    lambda T, lib: T.CatTransform([T.ExpTransform(), 3]),
    lambda T, lib: T.AbsTransform().sign,
    lambda T, lib: T.IndependentTransform(T.ExpTransform(), 1)(lib.tensor(1.0)),
    lambda T, lib: T.IndependentTransform(T.ExpTransform(), 1).inv(lib.tensor(1.0)),
])
def test_errors_match_torch(call):
    ours, theirs = _error(lambda: call(GT, gradiente)), _error(lambda: call(TT, torch))
    assert theirs is not None
    assert ours == (theirs[0], theirs[1].replace("torch.", "gradiente."))


# --- the constraint registries --------------------------------------------------------------------------------

def _constraints(C, lib):
    return [C.real, C.positive, C.nonnegative, C.greater_than(2.0), C.greater_than_eq(-1.0), C.less_than(3.0),
            C.unit_interval, C.interval(-2.0, 5.0), C.half_open_interval(0.0, 2.0), C.simplex, C.real_vector,
            C.independent(C.positive, 1), C.corr_cholesky, C.lower_cholesky, C.positive_definite,
            C.positive_semidefinite, C.cat([C.positive, C.real], dim=1, lengths=[1, 2]),
            C.stack([C.positive, C.unit_interval, C.real], dim=1),
            C.interval(lib.tensor([0.0, 1.0, 2.0], dtype=lib.float64), lib.tensor([1.0, 3.0, 2.5],
                                                                                   dtype=lib.float64))]


@pytest.mark.parametrize("registry", ["biject_to", "transform_to"])
def test_registries_build_torchs_transforms(registry):
    ours_all = _constraints(GD.constraints, gradiente)
    theirs_all = _constraints(TD.constraints, torch)
    for ours_c, theirs_c in zip(ours_all, theirs_all):
        err_ours = _error(lambda c=ours_c: getattr(GD, registry)(c))
        err_theirs = _error(lambda c=theirs_c: getattr(TD, registry)(c))
        assert err_ours == err_theirs
        if err_theirs is not None:
            continue
        ours, theirs = getattr(GD, registry)(ours_c), getattr(TD, registry)(theirs_c)
        same_repr(ours, theirs)
        x = X_VEC6 if theirs_c is TD.constraints.corr_cholesky else X_MAT if theirs_c.event_dim == 2 else X_REAL
        gy, ty = ours(gradiente.tensor(x)), theirs(torch.tensor(x))
        assert_close(gy, ty)
        assert bool(ours_c.check(gy).all())
        if theirs.bijective:
            assert_close(ours.log_abs_det_jacobian(gradiente.tensor(x), gy),
                         theirs.log_abs_det_jacobian(torch.tensor(x), ty), tol=1e-10)


def test_registry_registration_and_errors():
    registry = GD.constraint_registry.ConstraintRegistry()
    ours = _error(lambda: registry(GD.constraints.positive))
    theirs = _error(lambda: TD.constraint_registry.ConstraintRegistry()(TD.constraints.positive))
    assert ours == theirs
    assert _error(lambda: registry.register(3, lambda c: None)) == _error(
        lambda: TD.constraint_registry.ConstraintRegistry().register(3, lambda c: None))

    @registry.register(GD.constraints.positive)
    def _to_positive(constraint):
        return GT.SoftplusTransform()

    assert isinstance(registry(GD.constraints.greater_than(0.0)), GT.SoftplusTransform)
    assert GD.biject_to is GD.constraint_registry.biject_to


# --- TransformedDistribution ----------------------------------------------------------------------------------

def _transformed(D, lib):
    T = D.transforms
    f64 = lib.float64
    return [
        D.TransformedDistribution(D.Normal(lib.tensor([0.0, 1.0], dtype=f64), lib.tensor([1.0, 0.5], dtype=f64)),
                                  [T.AffineTransform(1.0, -2.0), T.SigmoidTransform()]),
        D.TransformedDistribution(D.Normal(lib.zeros(3, dtype=f64), lib.ones(3, dtype=f64)),
                                  T.StickBreakingTransform()),
        D.TransformedDistribution(D.Uniform(lib.zeros(2, dtype=f64), lib.ones(2, dtype=f64)),
                                  [T.AffineTransform(lib.tensor([[1.0], [2.0], [3.0]], dtype=f64), 2.0)]),
        D.TransformedDistribution(D.Normal(lib.zeros(6, dtype=f64), lib.ones(6, dtype=f64)),
                                  [T.ReshapeTransform((6,), (2, 3)), T.ExpTransform()]),
        D.TransformedDistribution(D.MultivariateNormal(lib.zeros(3, dtype=f64), lib.eye(3, dtype=f64)),
                                  [T.TanhTransform()]),
        D.TransformedDistribution(D.Normal(lib.tensor(0.0, dtype=f64), lib.tensor(1.0, dtype=f64)), []),
    ]


@pytest.mark.parametrize("index", range(6))
def test_transformed_distribution(index):
    ours, theirs = _transformed(GD, gradiente)[index], _transformed(TD, torch)[index]
    same_repr(ours, theirs)
    same_repr(ours.support, theirs.support)
    assert tuple(ours.batch_shape) == tuple(theirs.batch_shape)
    assert tuple(ours.event_shape) == tuple(theirs.event_shape)
    assert ours.has_rsample == theirs.has_rsample
    gradiente.manual_seed(9)
    torch.manual_seed(9)
    gs, ts = ours.rsample((2,)), theirs.rsample((2,))
    assert_close(gs, ts)
    assert_close(ours.log_prob(gradiente.tensor(ts.numpy())), theirs.log_prob(ts), tol=1e-10)
    big_ours = ours.expand((4, *ours.batch_shape))
    big_theirs = theirs.expand((4, *theirs.batch_shape))
    assert tuple(big_ours.batch_shape) == tuple(big_theirs.batch_shape)
    assert_close(big_ours.sample(), big_theirs.sample())


def test_transformed_distribution_cdf_icdf_and_gradients():
    values = []
    for D, lib in ((GD, gradiente), (TD, torch)):
        loc = lib.tensor([0.0, 1.0], dtype=lib.float64, requires_grad=True)
        d = D.TransformedDistribution(D.Normal(loc, 1.0), [D.transforms.AffineTransform(1.0, -2.0),
                                                           D.transforms.ExpTransform()])
        cdf = d.cdf(lib.tensor([0.5, 3.0], dtype=lib.float64))
        icdf = d.icdf(lib.tensor([0.2, 0.7], dtype=lib.float64))
        (cdf.sum() + icdf.sum()).backward()
        values.append((cdf, icdf, loc.grad))
    for a, b in zip(*values):
        assert_close(a, b, tol=1e-10)

    def log_prob(loc, scale):
        d = GD.TransformedDistribution(GD.Normal(loc, scale), [GD.transforms.AffineTransform(0.5, 3.0),
                                                               GD.transforms.SigmoidTransform()])
        return d.log_prob(gradiente.tensor([0.2, 0.9], dtype=gradiente.float64))

    leaves = (gradiente.tensor([0.0, 1.0], dtype=gradiente.float64, requires_grad=True),
              gradiente.tensor([1.0, 0.5], dtype=gradiente.float64, requires_grad=True))
    assert gradcheck(log_prob, leaves)


@pytest.mark.parametrize("call", [
    lambda D, lib: D.TransformedDistribution(D.Normal(0.0, 1.0), "exp"),
    lambda D, lib: D.TransformedDistribution(D.Normal(0.0, 1.0), [D.transforms.ExpTransform(), 3]),
    lambda D, lib: D.TransformedDistribution(D.Normal(0.0, 1.0), [D.transforms.StickBreakingTransform()]),
    lambda D, lib: D.TransformedDistribution(D.Normal(0.0, 1.0), [D.transforms.ExpTransform()]).log_prob(
        lib.tensor(-1.0)),
])
def test_transformed_distribution_errors(call):
    ours, theirs = _error(lambda: call(GD, gradiente)), _error(lambda: call(TD, torch))
    assert theirs is not None
    assert ours == (theirs[0], theirs[1].replace("torch.", "gradiente."))


def test_pickled_transforms_rebuild_their_inverse():
    import pickle
    for T in (GT, TT):
        t = T.ComposeTransform([T.ExpTransform(), T.AffineTransform(1.0, 2.0)])
        _ = t.inv
        back = pickle.loads(pickle.dumps(t))
        assert repr(back) == repr(t)
        assert back.inv.inv is back


def test_forward_mode_through_transformed_log_prob():
    # The JVP rules of the ops a TransformedDistribution is built from give the same directional derivative.
    results = []
    for lib in (gradiente, torch):
        D = lib.distributions

        def log_prob(loc, D=D, lib=lib):
            d = D.TransformedDistribution(D.Normal(loc, 1.0), [D.transforms.AffineTransform(0.5, 2.0),
                                                               D.transforms.TanhTransform()])
            return d.log_prob(lib.tensor([0.2, -0.4], dtype=lib.float64))

        loc = lib.tensor([0.1, -0.3], dtype=lib.float64)
        tangent = lib.tensor([1.0, 0.5], dtype=lib.float64)
        results.append(lib.func.jvp(log_prob, (loc,), (tangent,)))
    for a, b in zip(*results):
        assert_close(a, b, tol=1e-12)
