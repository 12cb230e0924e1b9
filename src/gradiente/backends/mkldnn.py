"""``torch.backends.mkldnn``: Intel's oneDNN kernels, which PyTorch's CPU builds use and gradiente does not (it
computes with NumPy). ``is_available()`` is therefore False here, where PyTorch's CPU build answers True: a
program that asks before calling ``to_mkldnn()`` keeps to the ordinary path, the one gradiente has. The
``enabled`` flag holds PyTorch's default and changes nothing; ``flags`` sets the flags for a block, as PyTorch's."""
from ._flags import settings_for_block, typed_settings

__all__ = ["is_available", "enabled", "deterministic", "allow_tf32", "flags", "set_flags"]

enabled = True
deterministic = False
allow_tf32 = None

_SETTERS = {"enabled": "set_enabled_mkldnn", "deterministic": "set_deterministic_mkldnn"}


def is_available():
    return False


def set_flags(_enabled=None, _deterministic=None, _allow_tf32=None, _fp32_precision="none"):
    """Set the flags given (None leaves one as it is); returns the previous ``(enabled, deterministic,
    allow_tf32)``, as PyTorch's."""
    import sys
    module = sys.modules[__name__]
    previous = (module.enabled, module.deterministic, module.allow_tf32)
    for name, value in (("enabled", _enabled), ("deterministic", _deterministic), ("allow_tf32", _allow_tf32)):
        if value is not None:
            setattr(module, name, value)
    return previous


def flags(enabled=False, deterministic=False, allow_tf32=True, fp32_precision="none"):
    """Set the flags for a block, and restore them after it."""
    return settings_for_block(__name__, enabled=enabled, deterministic=deterministic, allow_tf32=allow_tf32)


typed_settings(__name__)
