"""Named pairs returned by reductions with a ``dim``: ``max(x, dim)`` gives ``(values, indices)``.

Like ``torch.return_types``: a tuple (unpacks, indexes) with named fields, printed as PyTorch prints them
with this module's name: ``gradiente.return_types.max(\\nvalues=tensor(...),\\nindices=tensor(...))``.
"""
import collections


def _return_type(name, fields=("values", "indices")):
    base = collections.namedtuple(name, fields)  # type: ignore[misc]  # a name made at runtime, by design

    def __repr__(self):
        body = ",\n".join(f"{f}={v!r}" for f, v in zip(fields, self))
        return f"gradiente.return_types.{name}(\n{body})"

    # named for the public module, gradiente.return_types, as PyTorch's are for torch.return_types
    cls = type(name, (base,), {"__slots__": (), "__repr__": __repr__, "__str__": __repr__,
                               "__module__": "gradiente.return_types",
                               "n_fields": len(fields), "n_sequence_fields": len(fields), "n_unnamed_fields": 0})
    cls.__qualname__ = name
    return cls


_FIELDS = {
    "max": ("values", "indices"), "min": ("values", "indices"), "median": ("values", "indices"),
    "sort": ("values", "indices"), "topk": ("values", "indices"), "kthvalue": ("values", "indices"),
    "mode": ("values", "indices"), "cummax": ("values", "indices"), "cummin": ("values", "indices"),
    "aminmax": ("min", "max"), "slogdet": ("sign", "logabsdet"), "linalg_slogdet": ("sign", "logabsdet"),
    "linalg_inv_ex": ("inverse", "info"), "linalg_solve_ex": ("result", "info"), "linalg_cholesky_ex": ("L", "info"),
    "linalg_qr": ("Q", "R"), "linalg_eigh": ("eigenvalues", "eigenvectors"), "linalg_svd": ("U", "S", "Vh"),
    "frexp": ("mantissa", "exponent"),
    "nanmedian": ("values", "indices"), "histogram": ("hist", "bin_edges"), "histogramdd": ("hist", "bin_edges"),
    "svd": ("U", "S", "V"), "qr": ("Q", "R"), "triangular_solve": ("solution", "cloned_coefficient"),
    "lu_unpack": ("P", "L", "U"), "_lu_with_info": ("LU", "pivots", "info"), "geqrf": ("a", "tau"),
    "linalg_eig": ("eigenvalues", "eigenvectors"), "linalg_lstsq": ("solution", "residuals", "rank", "singular_values"),
    "linalg_lu": ("P", "L", "U"), "linalg_lu_factor": ("LU", "pivots"), "linalg_lu_factor_ex": ("LU", "pivots", "info"),
    "linalg_ldl_factor": ("LD", "pivots"), "linalg_ldl_factor_ex": ("LD", "pivots", "info"),
}


__all__ = list(_FIELDS)     # every name is made on first use (__getattr__)


def __getattr__(name):
    """Each class is made on first use and kept (a named tuple costs about 50 µs to make, and ``import
    gradiente`` need not pay for the ones a program never meets)."""
    if name not in _FIELDS:
        raise AttributeError(f"module 'gradiente.return_types' has no attribute '{name}'")
    cls = globals()[name] = _return_type(name, _FIELDS[name])
    return cls


def __dir__():
    return sorted(set(globals()) | set(_FIELDS))
