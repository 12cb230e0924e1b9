"""Memory layouts (``torch.strided``, ``torch.sparse_coo``): how a tensor keeps its elements."""

__all__ = ["layout", "strided", "sparse_coo"]


class layout:
    """A tensor's memory layout, printed as PyTorch prints it (``torch.strided``). gradiente has two: ``strided``
    (a NumPy array) and ``sparse_coo`` (index and value arrays, ``core/sparse_tensor.py``)."""
    __slots__ = ("_name",)
    __module__ = "gradiente"

    def __init__(self, name):
        self._name = name

    def __repr__(self):
        return f"torch.{self._name}"

    def __reduce__(self):
        return self._name       # pickled by name: the module's own instance comes back


strided = layout("strided")
sparse_coo = layout("sparse_coo")
