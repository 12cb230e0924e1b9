"""Calling a module with its parameters and buffers given as arguments (``functional_call``), and stacking the
state of several like modules (``stack_module_state``), as ``torch.func``."""
from collections.abc import Sequence

from ..core.tensor import Tensor

__all__ = ["functional_call", "stack_module_state"]


def functional_call(module, parameter_and_buffer_dicts, args=None, kwargs=None, *, tie_weights=True, strict=False):
    """``module(*args, **kwargs)`` with the named parameters and buffers replaced, for this call only, by the
    tensors in ``parameter_and_buffer_dicts`` (a dict of ``"name" -> Tensor`` in ``state_dict`` naming, or a
    sequence of such dicts). ``tie_weights``: a tensor the module holds under several names (tied weights) is
    replaced under all of them when one is given. ``strict``: every parameter and buffer must be given, and no
    other name. ``args`` that is not a tuple is the one positional argument."""
    if isinstance(parameter_and_buffer_dicts, dict):
        given = parameter_and_buffer_dicts
    elif isinstance(parameter_and_buffer_dicts, Sequence):
        if not all(isinstance(d, dict) for d in parameter_and_buffer_dicts):
            raise ValueError("Expected all elements of parameter_and_buffer_dicts to be dictionaries")
        counts: dict = {}
        for d in parameter_and_buffer_dicts:
            for k in d:
                counts[k] = counts.get(k, 0) + 1
        repeated = [k for k, n in counts.items() if n > 1]
        if repeated:
            raise ValueError(f"{repeated} appeared in multiple dictionaries; behavior of functional call is "
                             "ambiguous")
        given = {k: v for d in parameter_and_buffer_dicts for k, v in d.items()}
    else:
        raise ValueError("Expected parameter_and_buffer_dicts to be a dict, or a list/tuple of dicts, but got "
                         f"{type(parameter_and_buffer_dicts)}")
    if tie_weights:
        given = _untied(module, given)
    if strict:
        _check_keys(module, given)
    if kwargs is None:
        kwargs = {}
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    originals = [_swap(module, name, value) for name, value in given.items()]
    try:
        return module(*args, **kwargs)
    finally:
        for name, old in reversed(originals):
            _swap(module, name, old)


def _named_tensors(module):
    named = dict(module.named_parameters(remove_duplicate=False))
    named.update(module.named_buffers(remove_duplicate=False))
    return named


def _untied(module, given):
    """``given`` with each value also under the other names of the tensor it replaces."""
    names_of: dict = {}
    for name, t in _named_tensors(module).items():
        names_of.setdefault(id(t), set()).add(name)
    tied = {name: names for names in names_of.values() if len(names) > 1 for name in names}
    given_tied = {name for name in given if name in tied}
    for name in given_tied:
        names = tied[name]
        if len(names & given_tied) > 1 and len({id(given[n]) for n in names if n in given}) != 1:
            raise ValueError(f"functional_call got multiple values for keys {sorted(names)}, which are tied. "
                             "Consider using tie_weights=False")
    untied = dict(given)
    for name in given_tied:
        for other in tied[name]:
            untied[other] = given[name]
    return untied


def _check_keys(module, given):
    valid = set(_named_tensors(module))
    keys = set(given)
    errors = []
    unexpected, missing = sorted(keys - valid), sorted(valid - keys)
    if unexpected:
        errors.append(f"Unexpected key(s): {', '.join(map(repr, unexpected))}.")
    if missing:
        errors.append(f"Missing key(s): {', '.join(map(repr, missing))}.")
    if errors:
        raise RuntimeError("Error(s) in reparametrizing for {}:\n\t{}".format(module._get_name(), "\n\t".join(errors)))


_ABSENT = object()


def _swap(module, name, value):
    """Put ``value`` at the dotted ``name`` (in the owner's parameter or buffer table, bypassing the check that a
    parameter is assigned a Parameter); returns ``(name, what was there)``. ``_ABSENT`` removes a plain attribute
    that was not there before."""
    path, _, attr = name.rpartition(".")
    owner = module.get_submodule(path)
    for table in (owner._parameters, owner._buffers):
        if attr in table:
            old = table[attr]
            table[attr] = value
            return name, old
    old = owner.__dict__.get(attr, _ABSENT)
    if value is _ABSENT:
        owner.__dict__.pop(attr, None)
    else:
        object.__setattr__(owner, attr, value)
    return name, old


def stack_module_state(models):
    """``(params, buffers)``: dicts from each parameter (buffer) name of ``models[0]`` to the stack of that tensor
    across ``models`` (a new leaf, which requires grad where the originals do)."""
    from .. import stack
    if len(models) == 0:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if not (all(m.training for m in models) or all(not m.training for m in models)):
        raise RuntimeError("stack_module_state: Expected all models to have the same training/eval mode.")
    if not all(type(m) is type(models[0]) for m in models):
        raise RuntimeError("stack_module_state: Expected all models to be of the same class.")

    def stacked(tensors, name):
        flags = {t.requires_grad for t in tensors}
        if len(flags) > 1:
            raise RuntimeError(f"Expected {name} from each model to have the same .requires_grad")
        result: Tensor = stack(tensors)
        return result.detach().requires_grad_() if flags == {True} else result

    all_params = [dict(m.named_parameters()) for m in models]
    all_buffers = [dict(m.named_buffers()) for m in models]
    params = {k: stacked(tuple(p[k] for p in all_params), k) for k in all_params[0]}
    buffers = {k: stacked(tuple(b[k] for b in all_buffers), k) for k in all_buffers[0]}
    return params, buffers
