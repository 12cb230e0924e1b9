"""Neural-network building blocks: ``functional`` (stateless ops and losses), modules, ``init``."""
from . import attention, functional, init, parallel, utils
from .modules import *
from .parallel import DataParallel
from .parameter import Buffer, Parameter

# --- issue 16 (s4-nnloss): torch.nn.factory_kwargs ---------------------------------------------------------------

def factory_kwargs(kwargs):
    """The factory arguments of a layer's ``**kwargs`` (``device``, ``dtype``, ``memory_format``), as one dict to pass
    to ``empty``/``zeros``: a ``factory_kwargs`` entry holds ones that clash with the layer's own argument names.
    Raises PyTorch's TypeError for any other key, or for a key given both ways."""
    if kwargs is None:
        return {}
    simple_keys = {"device", "dtype", "memory_format"}
    expected_keys = simple_keys | {"factory_kwargs"}
    if not kwargs.keys() <= expected_keys:
        raise TypeError(f"unexpected kwargs {kwargs.keys() - expected_keys}")
    # a copy: the caller's dicts are left as they were
    result = dict(kwargs.get("factory_kwargs", {}))
    for key in simple_keys:
        if key in kwargs:
            if key in result:
                raise TypeError(f"{key} specified twice, in **kwargs and in factory_kwargs")
            result[key] = kwargs[key]
    return result
