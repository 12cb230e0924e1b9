"""``torch.hub``: the cache directory for downloaded weights, downloading a checkpoint into it, and the progress
bar scripts import from here (``from torch.hub import tqdm``).

Loading a *model* from a hub repository (``torch.hub.load``, ``list``, ``help``) means running that repository's
``hubconf.py``: gradiente never runs code it fetched, so those raise, and say how to get the same weights as data
(``load_state_dict_from_url``, read by the same safe loader as ``torch.load``).
"""
import hashlib
import os
import re
import shutil
import sys
import tempfile
import warnings
from urllib.parse import urlparse
from urllib.request import Request, urlopen

__all__ = ["download_url_to_file", "get_dir", "help", "list", "load", "load_state_dict_from_url", "set_dir"]


class _Progress:
    """What ``tqdm`` offers a download loop, for a machine without the tqdm package: a percentage on stderr."""

    def __init__(self, total=None, disable=False, unit=None, *args, **kwargs):
        self.total, self.disable, self.n = total, disable, 0

    def update(self, n):
        if not self.disable:
            self.n += n
            shown = f"{100 * self.n / float(self.total):.1f}%" if self.total else f"{self.n:.1f} bytes"
            sys.stderr.write("\r" + shown)
            sys.stderr.flush()

    def set_description(self, *args, **kwargs):
        pass

    def write(self, s):
        sys.stderr.write(f"{s}\n")

    def close(self):
        self.disable = True

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if not self.disable:
            sys.stderr.write("\n")


try:
    from tqdm import tqdm  # the real progress bar where it is installed, as PyTorch does
except ImportError:
    tqdm = _Progress

_chosen = {"dir": None}       # (set_dir's choice)
_HASH_IN_NAME = re.compile(r"-([a-f0-9]*)\.")      # resnet18-bfd8deac.pth: the file's sha256 begins bfd8deac


def get_dir():
    """The cache directory: the one ``set_dir`` chose, else ``$TORCH_HOME/hub`` (``$TORCH_HOME`` defaulting to
    ``$XDG_CACHE_HOME/torch``, and that to ``~/.cache/torch``), as PyTorch's."""
    if os.getenv("TORCH_HUB"):
        warnings.warn("TORCH_HUB is deprecated, please use env TORCH_HOME instead", stacklevel=2)
    if _chosen["dir"] is not None:
        return _chosen["dir"]
    cache = os.getenv("XDG_CACHE_HOME", os.path.join("~", ".cache"))
    return os.path.join(os.path.expanduser(os.getenv("TORCH_HOME", os.path.join(cache, "torch"))), "hub")


def set_dir(d):
    """Use ``d`` as the cache directory from now on."""
    _chosen["dir"] = os.path.expanduser(os.fspath(d))


def download_url_to_file(url, dst, hash_prefix=None, progress=True):
    """Download ``url`` to the file ``dst`` (through a temporary file beside it, moved into place when complete),
    checking that its SHA-256 digest begins with ``hash_prefix`` when given."""
    request = Request(url, headers={"User-Agent": "gradiente"})
    with urlopen(request) as response:
        length = response.headers.get("Content-Length")
        total = int(length) if length else None
        folder = os.path.dirname(os.path.abspath(os.path.expanduser(dst)))
        digest = hashlib.sha256()
        with tempfile.NamedTemporaryFile(delete=False, dir=folder, suffix=".partial") as handle:
            partial = handle.name
            with tqdm(total=total, disable=not progress, unit="B") as bar:
                while chunk := response.read(8192):
                    handle.write(chunk)
                    digest.update(chunk)
                    bar.update(len(chunk))
    try:
        if hash_prefix is not None and not digest.hexdigest().startswith(hash_prefix):
            raise RuntimeError(f'invalid hash value (expected "{hash_prefix}", got "{digest.hexdigest()}")')
        shutil.move(partial, dst)
    finally:
        if os.path.exists(partial):
            os.remove(partial)


def load_state_dict_from_url(url, model_dir=None, map_location=None, progress=True, check_hash=False, file_name=None,
                             weights_only=False):
    """The object saved at ``url`` (a ``state_dict``, usually), downloaded once into ``model_dir`` (by default
    ``get_dir()/checkpoints``) and read with ``torch.load``, which never runs code from the file."""
    from .serialization import load
    if model_dir is None:
        model_dir = os.path.join(get_dir(), "checkpoints")
    os.makedirs(model_dir, exist_ok=True)
    cached_file = os.path.join(model_dir, file_name or os.path.basename(urlparse(url).path))
    if not os.path.exists(cached_file):
        sys.stdout.write(f'Downloading: "{url}" to {cached_file}\n')
        found = _HASH_IN_NAME.search(os.path.basename(cached_file)) if check_hash else None
        download_url_to_file(url, cached_file, found.group(1) if found else None, progress=progress)
    return load(cached_file, map_location=map_location, weights_only=weights_only)


def _runs_repository_code(name):
    def refuse(*args, **kwargs):
        raise RuntimeError(
            f"torch.hub.{name}() runs the Python code of a model repository (its hubconf.py), and gradiente never "
            "runs code it fetched. Build the model in your own code and load its weights as data with "
            "torch.hub.load_state_dict_from_url(url) (or torch.load of a downloaded state_dict).")
    refuse.__name__ = refuse.__qualname__ = name
    refuse.__doc__ = f"``torch.hub.{name}``: refused (it would run a repository's code); see the module's docstring."
    return refuse


list = _runs_repository_code("list")         # (PyTorch's names, which shadow the builtins here only)
help = _runs_repository_code("help")
load = _runs_repository_code("load")
