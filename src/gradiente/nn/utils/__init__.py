"""``torch.nn.utils``: gradient clipping, parameter/vector conversion, and ``rnn`` (packed sequences)."""
from . import rnn
from .clip_grad import clip_grad_norm, clip_grad_norm_, clip_grad_value_
from .convert_parameters import parameters_to_vector, vector_to_parameters

# --- issue 16 item 4: parametrizations, the hook-based norms, fusion, memory format, skip_init, stateless ---
from . import parametrizations, parametrize, stateless
from .clip_grad import clip_grads_with_norm_, get_total_norm
from .fusion import fuse_conv_bn_eval, fuse_conv_bn_weights, fuse_linear_bn_eval, fuse_linear_bn_weights
from .init import skip_init
from .memory_format import convert_conv2d_weight_memory_format, convert_conv3d_weight_memory_format
from .spectral_norm import remove_spectral_norm, spectral_norm
from .weight_norm import remove_weight_norm, weight_norm
# --- end issue 16 item 4 ---
