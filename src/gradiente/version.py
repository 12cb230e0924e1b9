"""``torch.version``: what the build is. gradiente follows PyTorch 2.13 (see ``torch_version.py``); it has no
CUDA, no ROCm and no git revision of PyTorch, which a CPU-only PyTorch reports as None too."""
from .torch_version import TorchVersion

__all__ = ["__version__", "cuda", "hip", "git_version", "debug", "gradiente"]

gradiente = "0.1.0"     # gradiente's own release (pyproject.toml)
__version__ = TorchVersion(f"2.13.0+gradiente.{gradiente}")
cuda = None
hip = None
git_version = None
debug = False
