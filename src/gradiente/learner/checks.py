"""The checks learner mode runs, each at a point that exists anyway: ``backward()``, an in-place op that autograd
records, a ``.data`` access, ``optimizer.step()`` (PyTorch's global step hooks) and the call of a Dropout or
BatchNorm layer (PyTorch's global module hooks). None of them runs while learner mode is off.

The heuristics, so that a correct training loop produces no warning:

* **zero_grad**: at ``optimizer.step()``, a parameter's ``.grad`` is the very tensor the previous step used, with
  the same version (so nobody zeroed it: ``zero_grad`` sets it to None, or zeroes it in place, which counts as a
  change), and a ``backward()`` ran in between (which adds into it without a version change).
* **running_total**: an in-place op that autograd records (``total += loss``) joins a graph that a ``backward()``
  has already used (its root, or a node at most three steps below the new one): the total keeps it alive.
* **train_in_eval**: a Dropout or BatchNorm layer ran in eval mode with grad mode on, a ``backward()`` followed,
  and then ``optimizer.step()``, with no forward of that layer in train mode in between.
* **eval_in_train**: a Dropout or BatchNorm layer (BatchNorm only if it keeps running statistics) ran in train mode
  inside a ``no_grad`` or ``inference_mode`` block the learner opened: code that does not want gradients is
  evaluating, and should be in eval mode.
* **data_modified**: a tensor taken from ``param.data`` (or ``param.data = ...``) is changed by the learner's code
  while ``param`` is a leaf that requires grad and already has a ``.grad`` (training has begun).
* **requires_grad_non_leaf**: ``requires_grad_()`` on a computed tensor (it changes nothing).

Each warning is given once per kind and line of the learner's program while the mode is on.
"""
import warnings
import weakref

from ..core import diagnostics
from ..core.grad_mode import state as grad_state
from ..core.tensor import Tensor
from .messages import explanation_text, warning_text

__all__ = ["LearnerWarning", "LearnerChecks"]

_RUNNING_TOTAL_DEPTH = 3    # how far below a new in-place node a used-up graph is looked for


class LearnerWarning(UserWarning):
    """A classic mistake, seen by learner mode: what happened, why it matters, and the fix."""


class LearnerChecks:
    """The checks of one learner-mode session, in one language (``lang``)."""

    def __init__(self, lang):
        self.lang = lang
        self.given = set()                      # (kind, site) of each warning already given
        self.backward_count = 0
        self.used_graphs = weakref.WeakSet()    # the roots of graphs that a backward() has run through
        self.last_backward_site = None
        self.steps = weakref.WeakKeyDictionary()    # optimizer -> {id(param): (grad, version, backward count)}
        self.eval_forward = None                # (layer, site, backward count) of an eval-mode forward with grad
        self._handles = []

    # --- switching the hooks that live above the core on and off ------------------------------------------
    def install(self):
        from ..nn.modules.module import register_module_forward_pre_hook
        from ..optim.optimizer import register_optimizer_step_pre_hook
        self._handles = [register_module_forward_pre_hook(self.module_called),
                         register_optimizer_step_pre_hook(self.step_starting)]

    def uninstall(self):
        for handle in self._handles:
            handle.remove()
        self._handles = []

    # --- saying it ----------------------------------------------------------------------------------------
    def warn(self, kind, site=None, **facts):
        """Give the warning ``kind`` once per line of the learner's program."""
        site = site or diagnostics.call_site(2)
        key = (kind, site[:2] if site is not None else None)
        if key in self.given:
            return
        self.given.add(key)
        if kind == "requires_grad_non_leaf":
            facts = self._tensor_facts(facts.pop("tensor"), site)
        text = warning_text(kind, self.lang, **facts)
        if site is None:
            warnings.warn(text, LearnerWarning, stacklevel=3)
        else:
            warnings.warn_explicit(text, LearnerWarning, site.filename, site.lineno)

    def explain(self, kind, **facts):
        """The explanation to add to PyTorch's error ``kind``."""
        site = diagnostics.call_site(2)
        if kind == "non_scalar_backward":
            tensor = facts["tensor"]
            facts = {"name": _name_in(site, tensor, "out", describe=False), "shape": list(tensor._data.shape),
                     "count": tensor._data.size}
        elif kind == "requires_grad_non_leaf":
            facts = self._tensor_facts(facts["tensor"], site)
        elif kind == "graph_freed":
            where = self.last_backward_site
            facts = {"where": f" ({'at' if self.lang == 'en' else 'en'} {where})" if where else ""}
        return explanation_text(kind, self.lang, **facts)

    @staticmethod
    def _tensor_facts(tensor, site):
        return {"name": _name_in(site, tensor, "tensor"), "node": tensor.grad_fn.name()}

    # --- the points where mistakes show -------------------------------------------------------------------
    def backward_started(self, outputs, retain_graph):
        self.backward_count += 1
        self.last_backward_site = diagnostics.call_site(3)
        for out in outputs:
            node = getattr(out, "grad_fn", None)
            if node is not None:
                self.used_graphs.add(node)

    def recorded_inplace(self, tensor):
        """An in-place op was recorded on ``tensor``: does it tie a used-up graph to a running total?"""
        if not self.used_graphs:
            return
        frontier, seen = [tensor.grad_fn], set()
        for _ in range(_RUNNING_TOTAL_DEPTH):
            below = []
            for node in frontier:
                for next_node, _ in node.next_functions if node is not None else ():
                    if next_node is None or next_node in seen:
                        continue
                    if next_node in self.used_graphs:
                        site = diagnostics.call_site(3)
                        self.warn("running_total", site, code=site.code if site else "total += loss")
                        return
                    seen.add(next_node)
                    below.append(next_node)
            frontier = below

    def data_taken(self, source, result):
        """``source.data`` was read by the learner: if training has begun, watch what is done to it."""
        if source.grad_fn is None and source._grad is not None:
            result.__dict__["_data_of"] = weakref.ref(source)

    def data_written(self, tensor):
        param = tensor.__dict__["_data_of"]()
        if param is not None and diagnostics.called_by_learner(3):
            site = diagnostics.call_site(3)
            self.warn("data_modified", site, param=_name_in(site, param, "the parameter"))

    def data_replaced(self, param):
        if param.grad_fn is None and param._grad is not None:
            site = diagnostics.call_site(3)
            self.warn("data_modified", site, param=_name_in(site, param, "the parameter"))

    def module_called(self, module, args):
        """A module is about to run its forward (global forward pre-hook): the mode checks, for the layers that
        behave differently in train and eval mode."""
        if not _mode_sensitive(module):
            return
        site = diagnostics.call_site(3)
        layer = type(module).__name__
        if grad_state.enabled:
            if module.training:
                self.eval_forward = None
            else:
                self.eval_forward = (layer, site, self.backward_count)
        elif module.training and diagnostics.state.user_block is not None:
            block = "inference_mode" if grad_state.inference else "no_grad"
            self.warn("eval_in_train", site, layer=layer, block=block, where=self._where(site))

    def step_starting(self, optimizer, args, kwargs):
        """An optimizer is about to step (global step pre-hook): gradients piling up, training in eval mode."""
        site = diagnostics.call_site(3)
        if self.eval_forward is not None and self.eval_forward[2] < self.backward_count:
            layer, forward_site, _ = self.eval_forward
            self.warn("train_in_eval", site, layer=layer, where=self._where(forward_site))
            self.eval_forward = None
        seen = self.steps.setdefault(optimizer, {})
        for group in optimizer.param_groups:
            for p in group["params"]:
                g = p._grad
                if g is None:
                    seen.pop(id(p), None)
                    continue
                before = seen.get(id(p))
                if (before is not None and before[0]() is g and before[1] == g._version_box[0]
                        and before[2] < self.backward_count):
                    self.warn("zero_grad", site, param=_name_in(site, p, "a parameter"))
                seen[id(p)] = (weakref.ref(g), g._version_box[0], self.backward_count)

    def _where(self, site):
        return "" if site is None else ("at " if self.lang == "en" else "en ") + str(site)


def _mode_sensitive(module):
    """Whether ``module`` computes differently in train and eval mode: Dropout, and BatchNorm when it keeps
    running statistics."""
    from ..nn.modules.batchnorm import _BatchNorm
    from ..nn.modules.dropout import _DropoutNd
    if isinstance(module, _DropoutNd):
        return True
    return isinstance(module, _BatchNorm) and module.track_running_stats


def _name_in(site, tensor, default, describe=True):
    """The learner's name for ``tensor``: a variable of the frame at ``site`` bound to it (``w``), a parameter of
    a module there (``model.fc.weight``), else ``default`` (with the shape, if ``describe``)."""
    import sys
    frame = sys._getframe(1)
    while frame is not None and (site is None or frame.f_code.co_filename != site.filename
                                 or frame.f_lineno != site.lineno):
        frame = frame.f_back
    if frame is not None:
        for scope in (frame.f_locals, frame.f_globals):
            for name, value in scope.items():
                if value is tensor and not name.startswith("_"):
                    return name
            for name, value in scope.items():
                named = getattr(value, "named_parameters", None)
                if name.startswith("_") or not callable(named) or isinstance(value, type):
                    continue
                for sub, p in named():
                    if p is tensor:
                        return f"{name}.{sub}"
    if describe and isinstance(tensor, Tensor):
        return f"{default} {list(tensor._data.shape)}"
    return default
