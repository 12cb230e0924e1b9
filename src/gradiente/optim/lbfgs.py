"""L-BFGS (Liu & Nocedal, 1989), after minFunc: a quasi-Newton direction from the last ``history_size`` steps,
with a fixed step or a strong-Wolfe line search.

The algorithm runs on NumPy arrays (the parameters flattened into one vector) and NumPy scalars of the
parameters' dtype, which combine with Python numbers as PyTorch's 0-d tensors do (with NumPy >= 2; NumPy 1
widens them to float64): the state holds the same values, as tensors, where PyTorch's holds tensors. Flat
gradients are new arrays at every evaluation and never changed in place, so unlike PyTorch's this code need
not copy them.
"""
import functools
from collections import namedtuple

import numpy as np

from ..core import grad_mode
from ..core.tensor import Tensor
from . import _kernels as K
from .optimizer import Optimizer, _changed, _check_nonnegative, _closure_loss

__all__ = ["LBFGS"]

# A trial step of the line search: step length, loss, flat gradient, directional derivative.
_Point = namedtuple("_Point", ["t", "f", "g", "gtd"])


def _divide(number, x):
    """``number / x`` as PyTorch computes a Python number over a 0-d tensor: ``x.reciprocal() * number``."""
    return np.reciprocal(x) * number if isinstance(x, np.generic) else number / x


def _cubic_interpolate(x1, f1, g1, x2, f2, g2, bounds=None):
    """The minimizer of the cubic through (x1, f1) and (x2, f2) with slopes g1, g2, clamped to ``bounds`` (by
    default the interval between x1 and x2); its midpoint when the cubic has no minimum."""
    xmin_bound, xmax_bound = bounds if bounds is not None else ((x1, x2) if x1 <= x2 else (x2, x1))
    d1 = g1 + g2 - _divide(3 * (f1 - f2), x1 - x2)
    d2_square = d1 ** 2 - g1 * g2
    if d2_square < 0:
        return (xmin_bound + xmax_bound) / 2.0
    d2 = np.sqrt(d2_square)
    if x1 <= x2:
        min_pos = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
    else:
        min_pos = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
    return min(max(min_pos, xmin_bound), xmax_bound)


def _strong_wolfe(obj_func, x, t, d, f, g, gtd, c1=1e-4, c2=0.9, tolerance_change=1e-9, max_ls=25):
    """A step length ``t`` along ``d`` that satisfies the strong Wolfe conditions (sufficient decrease ``c1``,
    curvature ``c2``): bracket an interval that holds one, then zoom in on it by cubic interpolation.
    ``obj_func(x, t, d)`` is ``(loss, flat_grad)`` at ``x + t * d``. Returns ``(loss, flat_grad, t, evaluations)``."""
    d_norm = np.abs(d).max()
    start = _Point(0, f, g, gtd)
    bracket, done, ls_iter, evals = _bracket(obj_func, x, t, d, start, c1, c2, max_ls)
    low, high = (0, 1) if bracket[0].f <= bracket[-1].f else (1, 0)
    insuf_progress = False
    while not done and ls_iter < max_ls:
        if abs(bracket[1].t - bracket[0].t) * d_norm < tolerance_change:
            break
        a, b = bracket
        t = _cubic_interpolate(a.t, a.f, a.gtd, b.t, b.f, b.gtd)
        t, insuf_progress = _away_from_the_ends(t, bracket, insuf_progress)
        new = _evaluate(obj_func, x, t, d)
        evals += 1
        ls_iter += 1
        if new.f > (f + c1 * t * gtd) or new.f >= bracket[low].f:
            # Not a sufficient decrease, or not the lowest point: it closes the interval from above.
            bracket[high] = new
            low, high = (0, 1) if bracket[0].f <= bracket[1].f else (1, 0)
            continue
        if abs(new.gtd) <= -c2 * gtd:
            done = True
        elif new.gtd * (bracket[high].t - bracket[low].t) >= 0:
            bracket[high] = bracket[low]
        bracket[low] = new
    best = bracket[low]
    return best.f, best.g, best.t, evals


def _evaluate(obj_func, x, t, d):
    f_new, g_new = obj_func(x, t, d)
    return _Point(t, f_new, g_new, g_new.dot(d))


def _bracket(obj_func, x, t, d, start, c1, c2, max_ls):
    """Grow ``t`` (by extrapolation) until ``[previous, t]`` holds a strong-Wolfe point, or ``t`` is one.
    Returns ``(bracket, done, iterations, evaluations)``; ``done`` when ``bracket`` is that one point."""
    f, gtd = start.f, start.gtd
    prev, new = start, _evaluate(obj_func, x, t, d)
    evals = 1
    for ls_iter in range(max_ls):
        if new.f > (f + c1 * t * gtd) or (ls_iter > 1 and new.f >= prev.f):
            return [prev, new], False, ls_iter, evals
        if abs(new.gtd) <= -c2 * gtd:
            return [new], True, ls_iter, evals
        if new.gtd >= 0:
            return [prev, new], False, ls_iter, evals
        t = _cubic_interpolate(prev.t, prev.f, prev.gtd, t, new.f, new.gtd,
                               bounds=(t + 0.01 * (t - prev.t), t * 10))
        prev, new = new, _evaluate(obj_func, x, t, d)
        evals += 1
    # Out of evaluations: the last point, against the start (without slopes, which are no longer needed).
    return [start._replace(gtd=None), new._replace(gtd=None)], False, max_ls, evals


def _away_from_the_ends(t, bracket, insuf_progress):
    """Keep a trial step off the bracket's ends: one within a tenth of the bracket's width of an end, at or past
    it or after a trial that was also too close, moves to a tenth from that end. Returns the step and whether it
    was too close (and left there)."""
    high, low = max(bracket[0].t, bracket[1].t), min(bracket[0].t, bracket[1].t)
    eps = 0.1 * (high - low)
    if min(high - t, t - low) < eps:
        if insuf_progress or t >= high or t <= low:
            return (high - eps if abs(t - high) < abs(t - low) else low + eps), False
        return t, True
    return t, False


def _two_loop(flat_grad, old_dirs, old_stps, ro, H_diag, al):
    """The L-BFGS direction ``-H g``: ``H`` the inverse Hessian estimate from the pairs ``s`` (steps, ``old_stps``)
    and ``y`` (gradient changes, ``old_dirs``), with ``ro = 1 / y.s``, starting from ``H_diag * I``. ``al`` is a
    scratch list, filled in place."""
    q = np.negative(flat_grad)
    for i in range(len(old_dirs) - 1, -1, -1):
        al[i] = old_stps[i].dot(q) * ro[i]
        K.add_scaled(q, old_dirs[i], -al[i], out=q)
    r = q * H_diag
    for i in range(len(old_dirs)):
        be_i = old_dirs[i].dot(r) * ro[i]
        K.add_scaled(r, old_stps[i], al[i] - be_i, out=r)
    return r


def _to_state(value):
    """NumPy arrays and scalars as the tensors PyTorch keeps in the state (lists item by item)."""
    if isinstance(value, list):
        return [_to_state(v) for v in value]
    if isinstance(value, (np.ndarray, np.generic)):
        return Tensor._make(np.asarray(value))
    return value


def _from_state(value):
    """The inverse of ``_to_state``: 0-d tensors become NumPy scalars."""
    if isinstance(value, list):
        return [_from_state(v) for v in value]
    if isinstance(value, Tensor):
        return value._data if value._data.ndim else value._data[()]
    return value


class LBFGS(Optimizer):
    """Each ``step(closure)`` runs up to ``max_iter`` iterations (``max_eval`` evaluations of ``closure``, by
    default ``max_iter * 5 // 4``): the direction ``d = -H g`` from the last ``history_size`` steps, then a step
    of ``lr`` along it (the first one scaled down to ``min(1, 1 / |g|_1) * lr``), or of the length a
    ``line_search_fn='strong_wolfe'`` search finds. It stops early when ``max |g| <= tolerance_grad`` or progress
    is below ``tolerance_change``. Only one parameter group; ``closure`` re-evaluates and returns the loss. The
    operations are PyTorch's in its order; dot products and sums come from NumPy, whose summation order differs
    from MKL's, so float32 runs agree with PyTorch's to rounding, not bit for bit."""

    def __init__(self, params, lr=1, max_iter=20, max_eval=None, tolerance_grad=1e-7, tolerance_change=1e-9,
                 history_size=100, line_search_fn=None):
        _check_nonnegative(**{"learning rate": lr})
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        defaults = {"lr": lr, "max_iter": max_iter, "max_eval": max_eval, "tolerance_grad": tolerance_grad,
                    "tolerance_change": tolerance_change, "history_size": history_size,
                    "line_search_fn": line_search_fn}
        super().__init__(params, defaults)
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        self._params = self.param_groups[0]["params"]

    def _gather_flat_grad(self):
        return np.concatenate([np.zeros(p._data.size, p._data.dtype) if p._grad is None else p._grad._data.reshape(-1)
                               for p in self._params])

    def _add_grad(self, step_size, update):
        """``p += step_size * d`` for each parameter's slice of the flat ``update``."""
        offset = 0
        for p in self._params:
            numel = p._data.size
            K.add_scaled(p._data, update[offset:offset + numel].reshape(p._data.shape), step_size, out=p._data)
            offset += numel
            _changed(p)

    def _clone_param(self):
        return [p._data.copy() for p in self._params]

    def _set_param(self, params_data):
        for p, data in zip(self._params, params_data):
            p._data[...] = data
            _changed(p)

    def _directional_evaluate(self, closure, x, t, d):
        """The loss and flat gradient at ``x + t * d``; the parameters are left at ``x``."""
        self._add_grad(t, d)
        loss = float(_closure_loss(closure))
        flat_grad = self._gather_flat_grad()
        self._set_param(x)
        return loss, flat_grad

    def _move(self, closure, t, d, loss, flat_grad, gtd, evals_left, evaluate):
        """Step the parameters along ``d``: by ``t``, or by the length the line search finds. Returns the loss and
        flat gradient there, ``t`` and the number of evaluations; a fixed step is evaluated only if
        ``evaluate``."""
        line_search_fn = self.param_groups[0]["line_search_fn"]
        if line_search_fn is not None:
            if line_search_fn != "strong_wolfe":
                raise RuntimeError("only 'strong_wolfe' is supported")
            obj_func = functools.partial(self._directional_evaluate, closure)
            loss, flat_grad, t, evals = _strong_wolfe(obj_func, self._clone_param(), t, d, loss, flat_grad, gtd,
                                                      max_ls=evals_left)
            self._add_grad(t, d)
            return loss, flat_grad, t, evals
        self._add_grad(t, d)
        if not evaluate:
            return loss, flat_grad, t, 0
        return float(_closure_loss(closure)), self._gather_flat_grad(), t, 1

    def step(self, closure):
        """Up to ``max_iter`` iterations; returns the loss ``closure`` gave before the first. Runs under
        ``no_grad``, as PyTorch's (the closure itself with grad enabled): reading the loss as a number then
        warns of nothing."""
        with grad_mode.no_grad():
            return self._step(closure)

    def _step(self, closure):
        group = self.param_groups[0]
        lr, max_iter, max_eval = group["lr"], group["max_iter"], group["max_eval"]
        tolerance_grad, tolerance_change = group["tolerance_grad"], group["tolerance_change"]
        history_size = group["history_size"]

        # L-BFGS's state is global; PyTorch files it under the first parameter (so that state_dict carries it).
        state = self.state[self._params[0]]
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)

        orig_loss = _closure_loss(closure)
        loss = float(orig_loss)
        current_evals = 1
        state["func_evals"] += 1
        flat_grad = self._gather_flat_grad()
        if np.abs(flat_grad).max() <= tolerance_grad:
            return orig_loss

        d, t, old_dirs, old_stps, ro, H_diag, prev_flat_grad, prev_loss = (
            _from_state(state.get(key)) for key in
            ("d", "t", "old_dirs", "old_stps", "ro", "H_diag", "prev_flat_grad", "prev_loss"))
        al = _from_state(state.get("al"))
        n_iter = 0
        while n_iter < max_iter:
            n_iter += 1
            state["n_iter"] += 1
            if state["n_iter"] == 1:
                d, old_dirs, old_stps, ro, H_diag = np.negative(flat_grad), [], [], [], 1
            else:
                y = flat_grad - prev_flat_grad
                s = d * t
                ys = y.dot(s)
                if ys > 1e-10:
                    # Remember the pair (curvature is positive), forgetting the oldest past history_size.
                    if len(old_dirs) == history_size:
                        del old_dirs[0], old_stps[0], ro[0]
                    old_dirs.append(y)
                    old_stps.append(s)
                    ro.append(1.0 / ys)
                    H_diag = ys / y.dot(y)
                if al is None:
                    al = state["al"] = [None] * history_size
                d = _two_loop(flat_grad, old_dirs, old_stps, ro, H_diag, al)
            if prev_flat_grad is None:
                prev_flat_grad = flat_grad.copy()
            else:
                prev_flat_grad[...] = flat_grad
            prev_loss = loss

            t = min(1.0, 1.0 / np.abs(flat_grad).sum()) * lr if state["n_iter"] == 1 else lr
            gtd = flat_grad.dot(d)
            if gtd > -tolerance_change:
                break
            # The last iteration of a fixed step skips the evaluation: in a stochastic setting it would be wasted.
            loss, flat_grad, t, evals = self._move(closure, t, d, loss, flat_grad, gtd, max_eval - current_evals,
                                                   evaluate=n_iter != max_iter)
            current_evals += evals
            state["func_evals"] += evals

            if n_iter == max_iter or current_evals >= max_eval or np.abs(flat_grad).max() <= tolerance_grad:
                break
            if np.abs(d * t).max() <= tolerance_change or abs(loss - prev_loss) < tolerance_change:
                break

        for key, value in (("d", d), ("t", t), ("old_dirs", old_dirs), ("old_stps", old_stps), ("ro", ro),
                           ("H_diag", H_diag), ("prev_flat_grad", prev_flat_grad), ("prev_loss", prev_loss)):
            state[key] = _to_state(value)
        if al is not None:
            state["al"] = _to_state(al)
        return orig_loss
