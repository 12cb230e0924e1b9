"""What a walkthrough says, independent of language and format: one ``Step`` per node the engine ran,
in the order it ran them, built from a ``BackwardRecord``."""
import numpy as np

from ..core.node import AccumulateGrad
from .messages import ATTRIBUTES, LATEX, OPS
from .symbols import derivatives

__all__ = ["Pass", "Step", "build_step"]


class Pass:
    """The gradient a node passes to one input: ``passed`` is the engine's value; for an elementwise
    node ``local`` is the local derivative and ``product`` = upstream × local before any reduction of a
    broadcast input (``reduced_to`` is then the input's shape)."""

    def __init__(self, target, input_nr, passed, local=None, product=None, reduced_to=None):
        self.target = target            # the receiving node
        self.input_nr = input_nr
        self.passed = passed
        self.local = local
        self.product = product
        self.reduced_to = reduced_to


class Step:
    def __init__(self, number, node):
        self.number = number
        self.node = node
        self.name = type(node).__name__
        self.is_leaf = isinstance(node, AccumulateGrad)
        self.user_defined = _is_user_defined(node)
        self.formula = getattr(node, "formula", "") or ""
        self.latex = LATEX.get(self.name)
        self.op = OPS.get(self.name)
        self.attributes = _attributes(node)
        self.out_name = None            # a caller's variable holding this node's output
        self.leaf_name = None
        self.incoming = None
        self.contributions = []         # [(consumer node, input_nr, gradient)] when several arrive
        self.passes = []
        self.n_inputs = sum(1 for nxt, _ in node.next_functions if nxt is not None)
        self.consumers = []             # the nodes that passed it a gradient
        self.expression = None          # what it computes, in the learner's names (``w·x + b``)
        self.symbolic = None            # per input, its local derivative in those names (``cos(x)``)
        self.input_names = []


def build_step(record, index, names):
    """The ``Step`` for ``record.order[index]``; ``names`` gives leaf and output names."""
    node = record.order[index]
    step = Step(index + 1, node)
    step.incoming = record.incoming.get(node)
    contributions = record.contributions.get(node, [])
    step.consumers = [consumer for consumer, _, _ in contributions]
    if len(contributions) > 1:
        step.contributions = contributions
    if step.is_leaf:
        step.leaf_name = names.leaf(node.variable)
    else:
        step.out_name = names.node(node)
        step.input_names = names.inputs(node)
        step.expression = names.expression(node)
        step.symbolic = derivatives(node, step.input_names, names.lang)
        step.passes = _passes(node, record, step.incoming)
    return step


def _passes(node, record, upstream):
    outgoing = record.outgoing.get(node) or []
    locals_ = record.local.get(node)
    passes = []
    for i, ((nxt, _), passed) in enumerate(zip(node.next_functions, outgoing)):
        if nxt is None or passed is None:
            continue
        local = locals_[i] if locals_ is not None and i < len(locals_) else None
        product = reduced_to = None
        if local is not None and upstream is not None:
            product = upstream * local
            if product.shape != passed.shape:
                reduced_to = passed.shape
        passes.append(Pass(nxt, i, passed, local, product, reduced_to))
    return passes


def _attributes(node):
    """The scalar arguments of the op, named as its rule names them (``n`` for an exponent)."""
    found = []
    values = getattr(node, "__dict__", {})
    for key, symbol in ATTRIBUTES:
        if key in values:
            value = values[key]
            if key == "alpha" and value == 1:
                continue
            if isinstance(value, (tuple, list)):
                value = tuple(int(v) if isinstance(v, (int, np.integer)) else v for v in value)
            found.append((symbol, value))
    return found


def _is_user_defined(node):
    from ..autograd.function import BackwardCFunction
    return isinstance(node, BackwardCFunction)
