"""``torch.backends.mkl``: whether PyTorch was built with Intel's MKL. gradiente was not (its linear algebra is
NumPy's, on whatever BLAS NumPy was built with), so the answer is False."""

__all__ = ["is_available"]


def is_available():
    return False
