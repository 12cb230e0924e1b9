"""Named pairs returned by reductions with a ``dim``: ``max(x, dim)`` gives ``(values, indices)``.

Like ``torch.return_types``: a tuple (unpacks, indexes) with named fields, printed as PyTorch prints them
with this module's name: ``gradiente.return_types.max(\\nvalues=tensor(...),\\nindices=tensor(...))``.
"""
import collections

__all__ = ["aminmax", "cummax", "cummin", "frexp", "kthvalue", "linalg_cholesky_ex", "linalg_eigh",
           "linalg_inv_ex", "linalg_qr", "linalg_slogdet", "linalg_solve_ex", "linalg_svd", "max", "median",
           "min", "mode", "slogdet", "sort", "topk"]


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


max = _return_type("max")
min = _return_type("min")
median = _return_type("median")
sort = _return_type("sort")
topk = _return_type("topk")
kthvalue = _return_type("kthvalue")
mode = _return_type("mode")
cummax = _return_type("cummax")
cummin = _return_type("cummin")
aminmax = _return_type("aminmax", ("min", "max"))
slogdet = _return_type("slogdet", ("sign", "logabsdet"))
linalg_slogdet = _return_type("linalg_slogdet", ("sign", "logabsdet"))
linalg_inv_ex = _return_type("linalg_inv_ex", ("inverse", "info"))
linalg_solve_ex = _return_type("linalg_solve_ex", ("result", "info"))
linalg_cholesky_ex = _return_type("linalg_cholesky_ex", ("L", "info"))
linalg_qr = _return_type("linalg_qr", ("Q", "R"))
linalg_eigh = _return_type("linalg_eigh", ("eigenvalues", "eigenvectors"))
linalg_svd = _return_type("linalg_svd", ("U", "S", "Vh"))
frexp = _return_type("frexp", ("mantissa", "exponent"))
