"""Grad modes: whether operations record the graph. Thread-local, as in PyTorch: ``no_grad`` in one
thread leaves the others recording."""
import functools
import threading

__all__ = ["no_grad", "enable_grad", "set_grad_enabled", "inference_mode", "is_grad_enabled",
           "is_inference_mode_enabled"]


class _State(threading.local):
    def __init__(self):
        self.enabled = True
        self.inference = False

    # Set (for every thread) once inference mode is first entered: until then no tensor can be an inference
    # tensor, and the recording path skips its checks for one.
    inference_made = False


state = _State()


def is_grad_enabled():
    return state.enabled


def is_inference_mode_enabled():
    return state.inference


class _Mode:
    """Base of the grad-mode context managers; each also works as a decorator."""

    def __call__(self, func):
        mode = type(self)
        args = self._args()

        @functools.wraps(func)
        def wrapper(*a, **k):
            with mode(*args):
                return func(*a, **k)
        return wrapper

    def _args(self):
        return ()

    def _set(self):
        """Switch the thread's mode to this one (each subclass says how)."""
        raise NotImplementedError

    def __enter__(self):
        self._prev = (state.enabled, state.inference)
        self._set()

    def __exit__(self, *exc):
        state.enabled, state.inference = self._prev
        return False

    def clone(self):
        return type(self)(*self._args())


class no_grad(_Mode):
    """Operations inside record no graph; results have ``requires_grad=False``."""

    def __new__(cls, orig_func=None):
        self = super().__new__(cls)
        if callable(orig_func):     # used as @no_grad without parentheses
            return self(orig_func)
        return self

    def __init__(self, orig_func=None):
        pass

    def _set(self):
        state.enabled = False


class enable_grad(no_grad):
    """Recording on again inside a ``no_grad`` region."""

    def _set(self):
        state.enabled = True


class set_grad_enabled(_Mode):
    """Recording on or off; takes effect at once when called, and is undone when used as a context."""

    def __init__(self, mode):
        self.mode = bool(mode)
        self._prev = (state.enabled, state.inference)
        state.enabled = self.mode

    def _args(self):
        return (self.mode,)

    def __call__(self, func):
        state.enabled, state.inference = self._prev    # as a decorator it must not change the mode now
        return super().__call__(func)

    def __enter__(self):
        return None

    def _set(self):
        state.enabled = self.mode


class inference_mode(_Mode):
    """``no_grad`` and more: tensors made inside are *inference tensors* (``Tensor.is_inference()``), with no
    version counter, that autograd may not save or change in place outside inference mode, and views of them
    are not views to autograd. ``inference_mode(False)`` inside turns grad mode back on, as in PyTorch."""

    def __new__(cls, mode=True):
        self = super().__new__(cls)
        if callable(mode):
            self.mode = True
            return self(mode)
        return self

    def __init__(self, mode=True):
        if not callable(mode):
            self.mode = bool(mode)

    def _args(self):
        return (self.mode,)

    def _set(self):
        state.enabled, state.inference = not self.mode, self.mode
        if self.mode:
            _State.inference_made = True
