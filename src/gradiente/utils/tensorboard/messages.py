"""The protobuf messages of an event file, one encoding function each, with the field numbers of TensorBoard's
``.proto`` files (``tensorboard/compat/proto/event.proto``, ``summary.proto``, ``tensor.proto``,
``tensor_shape.proto``, ``plugins/hparams/*.proto`` and ``google/protobuf/struct.proto``).

Each function takes the field values as Python values (nested messages already encoded) and returns the
message's bytes; a field left at its default is not written, except where the ``.proto`` gives it presence
(``oneof`` members and message fields), as ``protobuf.py`` explains.
"""
from .protobuf import (
    field_bytes,
    field_double,
    field_float,
    field_message,
    field_packed_doubles,
    field_packed_floats,
    field_packed_varints,
    field_string,
    field_varint,
    message,
)

#: TensorFlow's ``DataType`` enum (tensorboard/compat/proto/types.proto), the values TensorProto uses here
DATA_TYPES = {"DT_FLOAT": 1, "DT_DOUBLE": 2, "DT_INT32": 3, "DT_UINT8": 4, "DT_INT16": 5, "DT_INT8": 6,
              "DT_STRING": 7, "DT_COMPLEX64": 8, "DT_INT64": 9, "DT_BOOL": 10, "DT_BFLOAT16": 14,
              "DT_COMPLEX128": 18, "DT_HALF": 19}

#: SessionLog.SessionStatus
SESSION_LOG_START = 1


def event(wall_time=0.0, step=0, file_version=None, summary=None, session_log=None, source_writer=None):
    """``Event``: one record of the file. Exactly one of ``file_version``, ``summary`` and ``session_log`` (the
    ``what`` oneof) is given."""
    return message(
        field_double(1, wall_time),
        field_varint(2, step),
        field_string(3, file_version, keep_default=True) if file_version is not None else b"",
        field_message(5, summary) if summary is not None else b"",
        field_message(7, session_log) if session_log is not None else b"",
        field_message(10, field_string(1, source_writer)) if source_writer is not None else b"",
    )


def session_log(status):
    """``SessionLog`` with its ``status`` (``SESSION_LOG_START`` marks where a restarted run purges)."""
    return field_varint(1, status)


def summary(*values):
    """``Summary``: its ``Summary.Value`` messages."""
    return message(*(field_message(1, value) for value in values))


def summary_value(tag, metadata=None, simple_value=None, image=None, histo=None, tensor=None):
    """``Summary.Value``: a tag, optional metadata, and one value of the ``value`` oneof."""
    return message(
        field_string(1, tag),
        field_float(2, simple_value, keep_default=True) if simple_value is not None else b"",
        field_message(4, image) if image is not None else b"",
        field_message(5, histo) if histo is not None else b"",
        field_message(8, tensor) if tensor is not None else b"",
        field_message(9, metadata) if metadata is not None else b"",
    )


def summary_metadata(plugin_name, content=b""):
    """``SummaryMetadata`` naming the TensorBoard plugin that shows the value (``PluginData``)."""
    return field_message(1, message(field_string(1, plugin_name), field_bytes(2, content)))


def image(height, width, colorspace, encoded_image_string):
    """``Summary.Image``: an encoded (PNG) picture and its size; ``colorspace`` is the number of channels."""
    return message(field_varint(1, height), field_varint(2, width), field_varint(3, colorspace),
                   field_bytes(4, encoded_image_string))


def histogram(min, max, num, sum, sum_squares, bucket_limit, bucket):
    """``HistogramProto``: summary statistics and, per bucket, its right edge and its count."""
    return message(field_double(1, min), field_double(2, max), field_double(3, num), field_double(4, sum),
                   field_double(5, sum_squares), field_packed_doubles(6, bucket_limit),
                   field_packed_doubles(7, bucket))


def tensor_shape(dims):
    """``TensorShapeProto``: one ``Dim`` message per size."""
    return message(*(field_message(2, field_varint(1, size)) for size in dims))


#: how TensorProto stores each kind of value: the field number and how the values are packed
_TENSOR_VALUE_FIELDS = {
    "half_val": (13, field_packed_varints), "float_val": (5, field_packed_floats),
    "double_val": (6, field_packed_doubles), "int_val": (7, field_packed_varints),
    "scomplex_val": (9, field_packed_floats), "int64_val": (10, field_packed_varints),
    "bool_val": (11, field_packed_varints), "dcomplex_val": (12, field_packed_doubles),
    "uint32_val": (16, field_packed_varints),
}


def tensor(dtype, shape=None, values_field=None, values=(), string_val=()):
    """``TensorProto``: a ``DataType`` name, an optional shape, and the values in the field ``values_field``
    (``"float_val"``, ``"int_val"``...) or, for strings, ``string_val`` (bytes)."""
    fields = [field_varint(1, DATA_TYPES[dtype])]
    if shape is not None:
        fields.append(field_message(2, tensor_shape(shape)))
    numbered = [(8, field_bytes(8, s, keep_default=True)) for s in string_val]
    if values_field is not None:
        number, encode = _TENSOR_VALUE_FIELDS[values_field]
        numbered.append((number, encode(number, values)))
    fields.extend(encoded for _number, encoded in sorted(numbered, key=lambda pair: pair[0]))
    return message(*fields)


# --- google.protobuf.Value and the hparams plugin's messages ------------------------------------------------

def struct_value(value):
    """``google.protobuf.Value`` holding a number (float), a string or a bool (its ``kind`` oneof)."""
    if isinstance(value, bool):
        return field_varint(4, value, keep_default=True)
    if isinstance(value, str):
        return field_string(3, value, keep_default=True)
    return field_double(2, value, keep_default=True)


def list_value(values):
    """``google.protobuf.ListValue``."""
    return message(*(field_message(1, struct_value(v)) for v in values))


def hparam_info(name, data_type, domain_discrete=None):
    """``HParamInfo``: a hyperparameter's name, its ``DataType`` (1 string, 2 bool, 3 float64) and, optionally,
    the list of values it can take."""
    return message(field_string(1, name), field_varint(4, data_type),
                   field_message(5, list_value(domain_discrete)) if domain_discrete is not None else b"")


def experiment(hparam_infos, metric_tags):
    """``Experiment``: the hyperparameters and the metrics (``MetricInfo`` by ``MetricName.tag``) compared."""
    return message(*(field_message(4, info) for info in hparam_infos),
                   *(field_message(5, field_message(1, field_string(2, tag))) for tag in metric_tags))


def session_start_info(hparams):
    """``SessionStartInfo``: the map of hyperparameter values (map entries: key 1, ``Value`` 2)."""
    return message(*(field_message(1, message(field_string(1, key), field_message(2, struct_value(value))))
                     for key, value in hparams.items()))


def session_end_info(status):
    """``SessionEndInfo`` with its ``Status`` (1: success)."""
    return field_varint(1, status)


def hparams_plugin_data(version, experiment=None, session_start_info=None, session_end_info=None):
    """``HParamsPluginData``: the version and one of its ``data`` oneof."""
    return message(
        field_varint(1, version),
        field_message(2, experiment) if experiment is not None else b"",
        field_message(3, session_start_info) if session_start_info is not None else b"",
        field_message(4, session_end_info) if session_end_info is not None else b"",
    )
