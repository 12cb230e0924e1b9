"""``fork`` and ``wait``, run eagerly: ``fork(fn, *args)`` calls ``fn`` at once and returns a completed ``Future``
(PyTorch's may run it on another thread inside TorchScript, but from Python it also runs ``fn`` at once)."""
import warnings

__all__ = ["Future", "fork", "wait"]


class Future:
    """The result of ``fork``: already done, it holds ``fn``'s value (or the exception ``fn`` raised)."""

    def __init__(self, value=None, exception=None):
        self._value = value
        self._exception = exception

    def done(self):
        return True

    def wait(self):
        """The value; re-raises the exception of the forked call if it raised."""
        if self._exception is not None:
            raise self._exception
        return self._value

    def value(self):
        return self.wait()

    def then(self, callback):
        """A new Future holding ``callback(self)``."""
        return fork(callback, self)


def fork(func, *args, **kwargs):
    """Calls ``func(*args, **kwargs)`` now and returns a done ``Future`` with its result."""
    warnings.warn("`torch.jit.fork` is deprecated. Please use `torch.compile` instead.", DeprecationWarning,
                  stacklevel=2)
    try:
        return Future(func(*args, **kwargs))
    except Exception as exc:
        return Future(exception=exc)


def wait(future):
    """The value of a ``Future`` made by ``fork``."""
    warnings.warn("`torch.jit.wait` is deprecated. Please use `torch.compile` instead.", DeprecationWarning,
                  stacklevel=2)
    return future.wait()
