"""``torch.onnx``: exporting a model to the ONNX format. gradiente records no graph that ONNX could take (its
graph is the autograd graph of one run, of NumPy calls), so ``export`` explains the way that works: load the
``state_dict`` into the same model in PyTorch and export from there. ``is_in_onnx_export()``, which model code
asks, is always False."""

__all__ = ["export", "is_in_onnx_export"]


def export(model, args=(), f=None, **kwargs):
    raise RuntimeError(
        "gradiente cannot export to ONNX: it computes with NumPy and keeps no graph that ONNX could hold. Save the "
        "model's state_dict (gradiente.save), load it into the same model in PyTorch, and export there with "
        "torch.onnx.export.")


def is_in_onnx_export():
    return False
