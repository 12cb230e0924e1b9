"""Grad modes: whether operations record the graph. Thread-local, as in PyTorch: ``no_grad`` in one
thread leaves the others recording."""
import functools
import inspect
import warnings

from . import diagnostics, threads

__all__ = ["no_grad", "enable_grad", "set_grad_enabled", "inference_mode", "is_grad_enabled",
           "is_inference_mode_enabled"]


class _State(threads.local):
    def __init__(self):
        self.enabled = True
        self.inference = False
        self.multithreading = True

    # Set (for every thread) once inference mode is first entered: until then no tensor can be an inference
    # tensor, and the recording path skips its checks for one.
    inference_made = False


state = _State()


def is_grad_enabled():
    """True when operations are recorded for backward in this thread (False inside ``no_grad`` or
    ``inference_mode``)."""
    return state.enabled


def is_inference_mode_enabled():
    """True inside ``inference_mode()`` in this thread: tensors made there are inference tensors that never join
    a graph."""
    return state.inference


class _Mode:
    """Base of the grad-mode context managers; each also works as a decorator (``decorate``)."""

    def __call__(self, func):
        if inspect.isclass(func):
            warnings.warn("Decorating classes is deprecated and will be disabled in future versions. You should only "
                          "decorate functions or methods. To preserve the current behavior of class decoration, you "
                          "can directly decorate the `__init__` method and nothing else.", FutureWarning, stacklevel=2)
            cls = func

            def func(*args, **kwargs):
                return cls(*args, **kwargs)
        return decorate(self.clone, func)

    def _args(self):
        return ()

    def _set(self):
        """Switch the thread's mode to this one (each subclass says how)."""
        raise NotImplementedError

    def __enter__(self):
        self._prev = (state.enabled, state.inference)
        self._set()
        if diagnostics.state.sites:     # learner or anomaly mode: remember the line of a block that stops recording
            self._outer_block = diagnostics.enter_block(recording=state.enabled)

    def __exit__(self, *exc):
        state.enabled, state.inference = self._prev
        if "_outer_block" in self.__dict__:
            diagnostics.state.user_block = self.__dict__.pop("_outer_block")
        return False

    def clone(self):
        return type(self)(*self._args())


def decorate(make_mode, func):
    """``func`` run with a fresh mode from ``make_mode()`` around each call (PyTorch's ``_contextlib``): around
    each step of a generator function's generator, so that the code between its steps, the caller's, runs in
    the caller's own mode."""
    if inspect.isgeneratorfunction(func):
        return _decorate_generator(make_mode, func)

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        with make_mode():
            return func(*args, **kwargs)
    return wrapper


def _decorate_generator(make_mode, func):
    @functools.wraps(func)
    def generator(*args, **kwargs):
        inner = func(*args, **kwargs)
        try:
            with make_mode():
                response = inner.send(None)
            while True:
                try:
                    request = yield response
                except GeneratorExit:
                    with make_mode():
                        inner.close()
                    raise
                except BaseException as error:       # thrown in by the caller: the generator handles it
                    with make_mode():
                        response = inner.throw(error)
                else:
                    with make_mode():
                        response = inner.send(request)
        except StopIteration as stop:
            return stop.value
    return generator


class no_grad(_Mode):
    """A context manager (and decorator) under which operations record no graph: results have
    ``requires_grad=False`` and no ``grad_fn``, and no values are saved for backward. Used for a training step's
    weight update (``with torch.no_grad(): w -= lr * w.grad``) and for evaluation. Thread-local, as in PyTorch;
    ``enable_grad`` turns recording back on inside it."""

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


class set_multithreading_enabled(_Mode):
    """``torch.autograd.set_multithreading_enabled``: PyTorch runs a backward pass on per-device worker threads
    unless this is off. gradiente's backward always runs on the calling thread, so the flag (per thread, as in
    PyTorch) is kept for ``is_multithreading_enabled`` and changes nothing else. Takes effect when called, as
    PyTorch's does, and is undone on leaving a ``with`` block."""

    def __init__(self, mode):
        self.mode = bool(mode)
        self.prev = state.multithreading
        state.multithreading = self.mode

    def _args(self):
        return (self.mode,)

    def __enter__(self):
        return None

    def __exit__(self, *exc):
        state.multithreading = self.prev
        return False


def is_multithreading_enabled():
    """Whether backward may use worker threads (see ``set_multithreading_enabled``)."""
    return state.multithreading
