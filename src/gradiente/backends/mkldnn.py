"""``torch.backends.mkldnn``: Intel's oneDNN kernels, which PyTorch's CPU builds use and gradiente does not (it
computes with NumPy). ``is_available()`` is therefore False here, where PyTorch's CPU build answers True: a
program that asks before calling ``to_mkldnn()`` keeps to the ordinary path, the one gradiente has. The
``enabled`` flag holds PyTorch's default and changes nothing."""
from ._flags import typed_settings

__all__ = ["is_available", "enabled", "deterministic", "allow_tf32"]

enabled = True
deterministic = False
allow_tf32 = None

_SETTERS = {"enabled": "set_enabled_mkldnn", "deterministic": "set_deterministic_mkldnn"}


def is_available():
    return False


typed_settings(__name__)
