"""Function transforms, as ``torch.func``: ``grad``, ``grad_and_value``, ``vjp``, ``jvp``, ``linearize``,
``jacrev``, ``jacfwd``, ``hessian``, ``vmap``, and ``functional_call`` / ``stack_module_state`` to call a module
with parameters given as arguments. The transforms compose (``grad(grad(f))``, ``jacfwd(jacrev(f))``,
``jvp(grad(f), ...)``, ``vmap(grad(f))`` for per-sample gradients, nested ``vmap``).

``vmap`` batches for real: a mapped tensor becomes a ``BatchedTensor`` whose physical value carries the batch
dims in front (``_batched_tensor.py``), and each op runs once on the physical values (``_batching_rules.py``;
how calls reach the rules, and the per-example fallback for ops without one, is ``_dispatch.py``). ``jacrev`` and
``jacfwd`` (and so ``hessian``) vmap their basis vectors, as PyTorch's do. docs/architecture.md ("How vmap
batches") lists what runs per example."""
from .eager_transforms import grad, grad_and_value, hessian, jacfwd, jacrev, jvp, linearize, vjp
from .functional_call import functional_call, stack_module_state
from .program_tools import debug_unwrap, functionalize, replace_all_batch_norm_modules_  # issue 16
from .rearrange import rearrange  # issue 16
from .vmap import vmap

__all__ = ["grad", "grad_and_value", "vjp", "jvp", "linearize", "jacrev", "jacfwd", "hessian", "functional_call",
           "stack_module_state", "vmap",
           "functionalize", "debug_unwrap", "replace_all_batch_norm_modules_", "rearrange"]
