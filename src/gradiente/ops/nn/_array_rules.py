"""What the layer ops whose derivative rules compute on NumPy arrays (convolution, pooling, normalization,
embedding) share for ``create_graph=True``, where the engine hands rules recorded Tensors instead.

A rule that cannot give second derivatives refuses (``arrays_only``) rather than return ones that would silently
be wrong. A rule that can computes its gradients on the arrays as usual and records them as the outputs of a
double-backward node of their own (``record_gradients``), as PyTorch records ``NativeLayerNormBackwardBackward0``:
the first derivatives stay bit for bit those of an ordinary backward, and that node's rule differentiates them.
"""
import numpy as np

from ...core.record import record, wants_grad, wrap

__all__ = ["arrays_only", "record_gradients"]


def arrays_only(ops, name):
    """Raise if the backward pass is being recorded (a double backward through ``name``)."""
    if ops.recording:
        raise RuntimeError(f"gradiente computes the backward of {name} on arrays only; differentiating it twice "
                           "(create_graph=True) is not supported")


def record_gradients(node_cls, inputs, arrays, saved=(), **attrs):
    """The gradient ``arrays`` (None where an input needs none) as tensors, recorded as the outputs of one
    ``node_cls`` node whose edges lead to ``inputs`` (the upstream gradient, the saved tensors the gradients
    depend on; None for an edge PyTorch's node has but gradiente's never uses), if any of them requires grad."""
    outputs = tuple(None if a is None else wrap(np.asanyarray(a)) for a in arrays)
    if wants_grad(*inputs):
        record(node_cls, inputs, outputs, saved=saved, **attrs)
    return outputs
