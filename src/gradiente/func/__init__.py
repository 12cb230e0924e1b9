"""Function transforms, as ``torch.func``: ``grad``, ``grad_and_value``, ``vjp``, ``jvp``, ``linearize``,
``jacrev``, ``jacfwd``, ``hessian``, and ``functional_call`` / ``stack_module_state`` to call a module with
parameters given as arguments. The transforms compose (``grad(grad(f))``, ``jacfwd(jacrev(f))``,
``jvp(grad(f), ...)``). ``vmap`` is not here yet: the Jacobians loop over the basis vectors in Python where PyTorch
batches them."""
from .eager_transforms import grad, grad_and_value, hessian, jacfwd, jacrev, jvp, linearize, vjp
from .functional_call import functional_call, stack_module_state
from .vmap import vmap

__all__ = ["grad", "grad_and_value", "vjp", "jvp", "linearize", "jacrev", "jacfwd", "hessian", "functional_call",
           "stack_module_state", "vmap"]
