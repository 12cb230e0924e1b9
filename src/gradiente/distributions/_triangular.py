"""``solve_triangular`` now lives in ``gradiente.linalg`` (as ``torch.linalg.solve_triangular``); this name stays for
code that imported it from here."""
from ..ops.linalg import solve_triangular

__all__ = ["solve_triangular"]
