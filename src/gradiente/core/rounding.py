"""Float32 math rounded as PyTorch's CPU kernels round it, near enough: computed in double and rounded once.

PyTorch's float32 ``exp``, ``tanh``, ``log``, ``sin`` ... (SLEEF's vectorized functions, accurate to 1 ulp) give the
correctly rounded value in 92-99.98% of elements; NumPy's own float32 loops in 60-90%. A real program's printed
losses depend on those last bits wherever they are amplified (a large learning rate, a threshold that stops a
loop), so the unary table and the rules' namespace compute float32 through double."""
import numpy as np


def through_double(ufunc):
    """``ufunc`` for arrays, a float32 argument computed in float64 and rounded once to float32."""
    def on_arrays(a):
        if a.dtype != np.float32:
            return ufunc(a)
        # (the ufunc's own casting, in buffers, is three times as fast as casting the whole array first; a value
        # beyond float32's range becomes inf, its RuntimeWarning silenced as all of NumPy's inside gradiente)
        return ufunc(a, dtype=np.float64).astype(np.float32)
    on_arrays.__name__ = on_arrays.__qualname__ = ufunc.__name__
    on_arrays.__doc__ = ufunc.__doc__
    return on_arrays
