"""The summary builders: a tag and a value (a gradiente Tensor, a NumPy array or a Python number) to the bytes of
a ``Summary`` message, one function per kind of data TensorBoard shows (scalars, histograms, images, text,
tensors, hyperparameters), computing what PyTorch's ``torch.utils.tensorboard.summary`` computes."""
import struct

import numpy as np

from ... import core
from ...core.tensor import Tensor
from . import messages
from .images import convert_to_HWC
from .png import encode_png

__all__ = ["make_np", "scalar", "tensor_proto", "histogram_raw", "histogram", "make_histogram", "image",
           "make_image", "text", "hparams"]


def make_np(x):
    """``x`` as a NumPy array: an array as it is, a Python or NumPy number as a 1-element array, a Tensor
    detached (bfloat16, which NumPy lacks, as float16, as PyTorch does)."""
    if isinstance(x, np.ndarray):
        return x
    if np.isscalar(x):
        return np.array([x])
    if isinstance(x, Tensor):
        if x.dtype == core.dtype.bfloat16:
            x = x.to(core.dtype.float16)
        return x.detach().numpy()
    raise NotImplementedError(f"Got {type(x)}, but numpy array or torch tensor are expected.")


def scalar(name, tensor, collections=None, new_style=False, double_precision=False):
    """One number: old style in ``simple_value`` (a float32), new style as a scalar ``TensorProto`` read by the
    scalars plugin (float32, or float64 with ``double_precision``)."""
    array = make_np(tensor).squeeze()
    if array.ndim != 0:
        raise AssertionError("Tensor should contain one element (0 dimensions).             "
                             f"Was given size: {array.size} and {array.ndim} dimensions.")
    value = float(array)
    if not new_style:
        return messages.summary(messages.summary_value(name, simple_value=value))
    if double_precision:
        proto = messages.tensor("DT_DOUBLE", values_field="double_val", values=[value])
    else:
        proto = messages.tensor("DT_FLOAT", values_field="float_val", values=[value])
    return messages.summary(messages.summary_value(name, metadata=messages.summary_metadata("scalars"),
                                                   tensor=proto))


def _float_bits_as_int(value):
    # PyTorch stores half and bfloat16 values as the int32 reading of their float32 bits (its half_to_int)
    return struct.unpack("i", struct.pack("f", value))[0]


#: a Tensor's dtype name -> the TensorProto ``DataType`` and the field that holds its values
_TENSOR_FIELDS = {
    "float16": ("DT_HALF", "half_val"), "bfloat16": ("DT_BFLOAT16", "half_val"),
    "float32": ("DT_FLOAT", "float_val"), "float64": ("DT_DOUBLE", "double_val"),
    "int8": ("DT_INT8", "int_val"), "uint8": ("DT_UINT8", "uint32_val"), "int16": ("DT_INT16", "int_val"),
    "int32": ("DT_INT32", "int_val"), "int64": ("DT_INT64", "int64_val"),
    "complex64": ("DT_COMPLEX64", "scomplex_val"), "complex128": ("DT_COMPLEX128", "dcomplex_val"),
    "bool": ("DT_BOOL", "bool_val"),
}


def tensor_proto(tag, tensor):
    """A whole Tensor as a ``TensorProto`` (dtype, shape and every value), for the ``tensor`` plugin."""
    if tensor.numel() * tensor.itemsize >= (1 << 31):
        raise ValueError("tensor is bigger than protocol buffer's hard limit of 2GB in size")
    name = str(tensor.dtype).rpartition(".")[2]
    if name not in _TENSOR_FIELDS:
        raise ValueError(f"{tag} has unsupported tensor dtype {tensor.dtype}")
    dtype, field = _TENSOR_FIELDS[name]
    if field == "half_val":
        values = [_float_bits_as_int(v) for v in tensor.flatten().tolist()]
    elif field in ("scomplex_val", "dcomplex_val"):
        values = np.stack([tensor.detach().numpy().real, tensor.detach().numpy().imag], -1).reshape(-1).tolist()
    else:
        values = tensor.flatten().tolist()
    proto = messages.tensor(dtype, shape=tuple(tensor.shape), values_field=field, values=values)
    return messages.summary(messages.summary_value(tag, metadata=messages.summary_metadata("tensor"),
                                                   tensor=proto))


def histogram_raw(name, min, max, num, sum, sum_squares, bucket_limits, bucket_counts):
    """A histogram whose statistics and buckets the caller computed."""
    return messages.summary(messages.summary_value(name, histo=messages.histogram(
        min, max, num, sum, sum_squares, list(bucket_limits), list(bucket_counts))))


def histogram(name, values, bins, max_bins=None):
    """A histogram of ``values`` (any shape) over ``bins`` (edges, a count, or a NumPy bin rule such as
    ``"auto"``)."""
    return messages.summary(messages.summary_value(
        name, histo=make_histogram(make_np(values).astype(float), bins, max_bins)))


def make_histogram(values, bins, max_bins=None):
    """The ``HistogramProto`` of ``values``: NumPy's histogram, merged down to at most ``max_bins`` bins,
    trimmed to the buckets between the first and the last non-empty one. TensorBoard stores only each bucket's
    right edge, so one empty bucket is kept on the left to carry the leftmost edge."""
    if values.size == 0:
        raise ValueError("The input has no element.")
    values = values.reshape(-1)
    counts, limits = np.histogram(values, bins=bins)
    if max_bins is not None and len(counts) > max_bins:
        group = len(counts) // max_bins
        if len(counts) % group:
            counts = np.pad(counts, [[0, group - len(counts) % group]])
        counts = counts.reshape(-1, group).sum(axis=-1)
        limits = np.concatenate([limits[:-1:group], limits[-1:]])
    nonempty_so_far = np.cumsum(counts > 0)
    start, end = np.searchsorted(nonempty_so_far, [0, nonempty_so_far[-1] - 1], side="right")
    start, end = int(start), int(end) + 1
    counts = counts[start - 1:end] if start > 0 else np.concatenate([[0], counts[:end]])
    limits = limits[start:end + 1]
    if counts.size == 0 or limits.size == 0:
        raise ValueError("The histogram is empty, please file a bug report.")
    return messages.histogram(values.min(), values.max(), len(values), values.sum(), values.dot(values),
                              limits.tolist(), counts.tolist())


def image(tag, tensor, rescale=1, dataformats="NCHW"):
    """Pictures as one PNG: floats are read as [0, 1] and scaled by 255, ``uint8`` as [0, 255]; values outside
    are clipped. A batch (N in ``dataformats``) is tiled into one grid."""
    array = convert_to_HWC(make_np(tensor), dataformats)
    scale = 1 if array.dtype == np.uint8 else 255
    pixels = (array.astype(np.float32) * scale).clip(0, 255).astype(np.uint8)
    return messages.summary(messages.summary_value(tag, image=make_image(pixels, rescale=rescale)))


def make_image(pixels, rescale=1):
    """The ``Summary.Image`` of a height × width × channels ``uint8`` array. ``rescale`` other than 1 (a
    resampling that PyTorch does with Pillow) is not supported: gradiente encodes the pixels as given."""
    height, width, channels = pixels.shape
    if rescale != 1:
        raise NotImplementedError("gradiente's add_image encodes images at their own size: rescale must be 1")
    return messages.image(height, width, channels, encode_png(pixels))


def text(tag, text):
    """A string for the text plugin (a 1-element ``DT_STRING`` tensor under ``<tag>/text_summary``)."""
    proto = messages.tensor("DT_STRING", shape=(1,), string_val=[text.encode("utf_8")])
    # the plugin's content is TextPluginData(version=0): every field at its default, so no bytes at all
    return messages.summary(messages.summary_value(tag + "/text_summary",
                                                   metadata=messages.summary_metadata("text"), tensor=proto))


# --- hyperparameters ------------------------------------------------------------------------------------------

_HPARAMS_PLUGIN, _HPARAMS_VERSION = "hparams", 0
_DATA_TYPE_STRING, _DATA_TYPE_BOOL, _DATA_TYPE_FLOAT64 = 1, 2, 3
_STATUS_SUCCESS = 1


def _hparams_summary(tag, content):
    return messages.summary(messages.summary_value(
        tag, metadata=messages.summary_metadata(_HPARAMS_PLUGIN, content)))


def hparams(hparam_dict=None, metric_dict=None, hparam_domain_discrete=None):
    """The three summaries of the hparams plugin: the experiment (which hyperparameters and metrics there are),
    the session start (this run's hyperparameter values) and the session end (success)."""
    if not isinstance(hparam_dict, dict):
        raise TypeError("parameter: hparam_dict should be a dictionary, nothing logged.")
    if not isinstance(metric_dict, dict):
        raise TypeError("parameter: metric_dict should be a dictionary, nothing logged.")
    hparam_domain_discrete = hparam_domain_discrete or {}
    if not isinstance(hparam_domain_discrete, dict):
        raise TypeError("parameter: hparam_domain_discrete should be a dictionary, nothing logged.")
    for k, v in hparam_domain_discrete.items():
        if k not in hparam_dict or not isinstance(v, list) or not all(isinstance(d, type(hparam_dict[k]))
                                                                        for d in v):
            raise TypeError(f"parameter: hparam_domain_discrete[{k}] should be a list of same type as "
                            f"hparam_dict[{k}].")
    infos, values = [], {}
    for k, v in hparam_dict.items():
        if v is None:
            continue
        # bool is an int, so True is logged as the number 1.0 (PyTorch tests int and float first)
        if isinstance(v, (int, float)):
            values[k], data_type = float(v), _DATA_TYPE_FLOAT64
            domain = [float(d) for d in hparam_domain_discrete[k]] if k in hparam_domain_discrete else None
        elif isinstance(v, str):
            values[k], data_type = v, _DATA_TYPE_STRING
            domain = hparam_domain_discrete.get(k)
        elif isinstance(v, Tensor):
            values[k], data_type, domain = float(make_np(v)[0]), _DATA_TYPE_FLOAT64, None
        else:
            raise ValueError("value should be one of int, float, str, bool, or torch.Tensor")
        infos.append(messages.hparam_info(k, data_type, domain))
    experiment = _hparams_summary("_hparams_/experiment", messages.hparams_plugin_data(
        _HPARAMS_VERSION, experiment=messages.experiment(infos, list(metric_dict))))
    start = _hparams_summary("_hparams_/session_start_info", messages.hparams_plugin_data(
        _HPARAMS_VERSION, session_start_info=messages.session_start_info(values)))
    end = _hparams_summary("_hparams_/session_end_info", messages.hparams_plugin_data(
        _HPARAMS_VERSION, session_end_info=messages.session_end_info(_STATUS_SUCCESS)))
    return experiment, start, end
