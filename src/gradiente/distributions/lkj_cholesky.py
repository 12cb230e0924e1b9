"""The LKJ distribution over Cholesky factors of correlation matrices."""
import math
from typing import ClassVar

from .. import Size, arange, cat, diag_embed, lgamma, mvlgamma, randn
from . import constraints
from .beta import Beta
from .distribution import Distribution
from .utils import _finfo, broadcast_all

__all__ = ["LKJCholesky"]


class LKJCholesky(Distribution):
    """LKJ distribution over lower Cholesky factors L of ``dim`` × ``dim`` correlation matrices L Lᵀ, with
    density ∝ det(L Lᵀ)^(concentration - 1) (``concentration`` 1: uniform over correlation matrices).

    ``sample`` is PyTorch's onion method: Beta draws for the squared row lengths, then normal draws for their
    directions (its numbers for the same seed). Samples are not reparameterized, as in PyTorch.
    """

    arg_constraints: ClassVar[dict] = {"concentration": constraints.positive}
    support = constraints.corr_cholesky

    def __init__(self, dim, concentration=1.0, validate_args=None):
        if dim < 2:
            raise ValueError(f"Expected dim to be an integer greater than or equal to 2. Found dim={dim}.")
        self.dim = dim
        (self.concentration,) = broadcast_all(concentration)
        marginal_conc = self.concentration + 0.5 * (self.dim - 2)
        offset = arange(self.dim - 1, dtype=self.concentration.dtype)
        offset = cat([offset.new_zeros((1,)), offset])
        self._beta = Beta(offset + 0.5, marginal_conc.unsqueeze(-1) - 0.5 * offset)
        super().__init__(self.concentration.size(), Size((dim, dim)), validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LKJCholesky, _instance)
        batch_shape = Size(batch_shape)
        new.dim = self.dim
        new.concentration = self.concentration.expand(batch_shape)
        new._beta = self._beta.expand(batch_shape + (self.dim,))
        return self._expanded(new, batch_shape)

    def sample(self, sample_shape=()):
        y = self._beta.sample(sample_shape).unsqueeze(-1)
        u_normal = randn(self._extended_shape(sample_shape), dtype=y.dtype).tril(-1)
        u_hypersphere = u_normal / u_normal.norm(dim=-1, keepdim=True)
        u_hypersphere[..., 0, :].fill_(0.0)  # the first row is (1, 0, ..., 0): its direction is fixed
        w = y.sqrt() * u_hypersphere
        diag_elems = (1 - (w**2).sum(dim=-1)).clamp(min=float(_finfo(w).tiny)).sqrt()
        return w + diag_embed(diag_elems)

    def log_prob(self, value):
        """Σ_i (2(η - 1) + dim - i) log L_ii over rows i = 2..dim, minus the log normalizer."""
        if self._validate_args:
            self._validate_sample(value)
        diag_elems = value.diagonal(dim1=-1, dim2=-2)[..., 1:]
        order = arange(2, self.dim + 1)
        order = 2 * (self.concentration - 1).unsqueeze(-1) + self.dim - order
        unnormalized_log_pdf = (order * diag_elems.log()).sum(dim=-1)
        dm1 = self.dim - 1
        alpha = self.concentration + 0.5 * dm1
        normalize_term = 0.5 * dm1 * math.log(math.pi) + mvlgamma(alpha - 0.5, dm1) - lgamma(alpha) * dm1
        return unnormalized_log_pdf - normalize_term
