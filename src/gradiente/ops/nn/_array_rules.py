"""What the layer ops with array-only derivative rules (convolution, pooling, normalization, embedding) share.

Their rules compute on NumPy arrays (fast, and written once); under ``create_graph=True`` the engine hands
rules Tensors to record a differentiable backward pass, which these rules cannot give: they refuse instead
of returning second derivatives that would silently be wrong.
"""
__all__ = ["arrays_only"]


def arrays_only(ops, name):
    """Raise if the backward pass is being recorded (a double backward through ``name``)."""
    if ops.recording:
        raise RuntimeError(f"gradiente computes the backward of {name} on arrays only; differentiating it twice "
                           "(create_graph=True) is not supported")
