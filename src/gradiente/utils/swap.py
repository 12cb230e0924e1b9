"""``torch.utils.swap_tensors``: two tensors exchange everything they are, in place, so that every reference to
either now sees the other's values, shape, history and class (how ``nn.Module.to`` can keep a parameter's
identity while changing its contents)."""
import weakref

__all__ = ["swap_tensors"]


def _slot_names(cls):
    names = []
    for klass in cls.__mro__:
        slots = klass.__dict__.get("__slots__", ())
        for name in ([slots] if isinstance(slots, str) else slots):
            if name not in ("__dict__", "__weakref__") and name not in names:
                names.append(name)
    return names


def swap_tensors(t1, t2):
    """Exchange what ``t1`` and ``t2`` are. Refused, in PyTorch's words, for a tensor someone holds a weak reference
    to (it would see the other one), and for classes with different slots."""
    if weakref.getweakrefs(t1):
        raise RuntimeError("Cannot swap t1 because it has weakref associated with it")
    if weakref.getweakrefs(t2):
        raise RuntimeError("Cannot swap t2 because it has weakref associated with it")
    slots = _slot_names(type(t1))
    if set(slots) != set(_slot_names(type(t2))):
        raise RuntimeError("Cannot swap t1 and t2 if they have different slots")
    t1.__class__, t2.__class__ = t2.__class__, t1.__class__
    state1, state2 = dict(t1.__dict__), dict(t2.__dict__)
    t1.__dict__.clear()
    t1.__dict__.update(state2)
    t2.__dict__.clear()
    t2.__dict__.update(state1)
    missing = object()
    for name in slots:
        value1, value2 = getattr(t1, name, missing), getattr(t2, name, missing)
        for target, value in ((t1, value2), (t2, value1)):
            if value is missing:
                if hasattr(target, name):
                    delattr(target, name)
            else:
                setattr(target, name, value)
