"""``Tensor.fill_diagonal_``: writes one value along the main diagonal, in place.

The diagonal of an n-d tensor whose dims are all equal, or of a matrix of any shape (its first ``min(h, w)``
entries), is a strided view of the tensor's memory, one step being the sum of the strides; the value is written
through that view with ``fill_``, so autograd sees an in-place write on a view (``grad_fn=<CopySlices>``, as in
PyTorch: the filled entries get no gradient). With ``wrap=True``, a tall matrix's diagonal starts again below
the square block, every ``w + 1`` rows down, as NumPy's ``fill_diagonal(wrap=True)`` does.
"""
from .fill import fill_
from .views import as_strided

__all__ = ["fill_diagonal_"]


def fill_diagonal_(self, fill_value, wrap=False):
    """Sets the main diagonal of ``self`` (at least 2-d; all dims equal beyond two) to ``fill_value`` and returns
    ``self``; ``wrap``: continue the diagonal of a tall matrix after each ``w + 1`` rows."""
    shape = self.shape
    if len(shape) < 2:
        raise RuntimeError("dimensions must larger than 1")
    height, width = shape[0], shape[1]
    if len(shape) > 2 and any(n != height for n in shape[1:]):
        raise RuntimeError("all dimensions of input must be of equal length")
    step = sum(self.stride())
    offset = self.storage_offset()
    fill_(as_strided(self, (min(height, width),), (step,), offset), fill_value)
    if wrap and len(shape) == 2 and height > width + 1:
        # the rows below the square block: the next diagonal starts at row w + 1
        rows_per_turn = width + 1
        count = -(-self.numel() // rows_per_turn) - min(height, width)
        fill_(as_strided(self, (count,), (step,), offset + self.stride(0) * rows_per_turn), fill_value)
    return self
