"""``torch.__version__``, and what a version test reads from it.

Programs test PyTorch's version to choose a code path: ``torch.__version__ >= "2.0"``,
``packaging.version.parse(torch.__version__) >= Version("2.1")``, ``torch.__version__.split(".")``. gradiente
follows PyTorch 2.13's API, so it answers as PyTorch 2.13 would, and says that it is gradiente in the local label
PEP 440 gives for builds of a release (as PyTorch's own ``2.13.0+cpu`` does): ``2.13.0+gradiente.0.1.0``.
Every parser reads the public part, 2.13.0; gradiente's own version, 0.1.0, is ``gradiente.version.gradiente``.

``TorchVersion`` is a ``str``, printed and split as one, whose comparisons are a version's: numerically, part by
part (``"2.13" > "2.2"``, which plain string comparison gets wrong), against a string, a tuple or a Version.
Equality stays a string's: ``"2.13.0+gradiente.0.1.0" == "2.13.0"`` is False, as PyTorch's ``2.13.0+cpu`` is.
"""

__all__ = ["TorchVersion"]


def _release(value):
    """The numeric release parts of a version: ``"2.13.0+cpu"`` -> ``(2, 13, 0)``; trailing zeros dropped so that
    ``2.0 == 2.0.0``."""
    if isinstance(value, tuple):
        parts = [int(part) for part in value]
    else:
        text = str(value).split("+")[0]
        parts = []
        for piece in text.split("."):
            digits = ""
            for char in piece:
                if not char.isdigit():
                    break
                digits += char
            if not digits:
                break
            parts.append(int(digits))
            if len(digits) < len(piece):
                break   # "0a1", "0rc2": the number ends at the pre-release tag
    while parts and parts[-1] == 0:
        parts.pop()
    return tuple(parts)


def _key(value):
    """What a version sorts by: its release, then whether it has a local label (PEP 440 puts ``2.13.0+cpu``
    just above ``2.13.0``)."""
    if hasattr(value, "release"):       # a packaging Version
        return _release(tuple(value.release)), value.local is not None
    if isinstance(value, tuple):
        return _release(value), False
    return _release(value), "+" in value


class TorchVersion(str):
    """A version string compared as a version (PyTorch's ``torch.torch_version.TorchVersion``)."""

    def _compare(self, other, test):
        if not isinstance(other, (str, tuple)) and not hasattr(other, "release"):
            return NotImplemented
        return test(_key(self), _key(other))

    def __lt__(self, other):
        return self._compare(other, lambda a, b: a < b)

    def __le__(self, other):
        return self._compare(other, lambda a, b: a <= b)

    def __gt__(self, other):
        return self._compare(other, lambda a, b: a > b)

    def __ge__(self, other):
        return self._compare(other, lambda a, b: a >= b)
