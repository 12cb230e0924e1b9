"""``torch.ops.aten`` as far as gradiente has it: a handle for each op a graph node records, to compare with.

PyTorch's ``torch.ops.aten.mm.default`` is an ``OpOverload``, the object its dispatcher hands to a selective
checkpointing policy (``utils/checkpoint_selective.py``). gradiente has no dispatcher: its unit of "one op" is one
recorded backward node, and ``handle_of(node)`` names that node's op the way PyTorch names the ATen op that
records the same node: ``MmBackward0`` is ``aten.mm.default``, ``MulBackward0`` ``aten.mul.Tensor``,
``SumBackward1`` ``aten.sum.dim_IntList``. So a policy written for PyTorch::

    def policy(ctx, func, *args, **kwargs):
        return CheckpointPolicy.MUST_SAVE if func in (torch.ops.aten.mm.default,) else ...

reads the same with ``import gradiente as torch``. Handles are made on first use and then unique, so ``is``,
``==``, ``in`` and hashing all work. Intended differences from PyTorch: a handle runs nothing (calling one raises
TypeError), and gradiente accepts any op name and overload name here, since which names exist is the
dispatcher's knowledge, which gradiente does not have.
"""
from ..core.node import _aten_name

__all__ = ["OpOverload", "OpOverloadPacket", "handle_of"]

#: nodes whose ATen op is an overload other than ``default`` (PyTorch's schema names)
_OVERLOADS = {
    **dict.fromkeys(("AddBackward0", "SubBackward0", "MulBackward0", "DivBackward0", "RsubBackward0",
                     "SliceBackward0"), "Tensor"),
    "AddBackward1": "Scalar", "SubBackward1": "Scalar", "MulBackward1": "Scalar", "DivBackward1": "Scalar",
    "DivBackward2": "Tensor_mode", "PowBackward0": "Tensor_Scalar", "PowBackward1": "Tensor_Tensor",
    "PowBackward2": "Scalar", "SumBackward1": "dim_IntList", "MeanBackward1": "dim", "VarBackward0": "correction",
    "StdBackward0": "correction", "MaxBackward0": "dim", "MinBackward0": "dim", "TransposeBackward0": "int",
    "SelectBackward0": "int", "IndexBackward0": "Tensor", "ProdBackward1": "dim_int", "NormBackward1": "ScalarOpt_dim",
    "NormBackward0": "Scalar",
    "SplitBackward0": "Tensor", "SplitWithSizesBackward0": "default", "CumsumBackward0": "default",
}

#: nodes named otherwise than their ATen op (PyTorch's softmax records ``_softmax``; its ``_reshape_alias``, which
#: records ReshapeAliasBackward0 in a plain run, reaches a policy as ``view``)
_OPS = {"SoftmaxBackward0": "_softmax", "LogSoftmaxBackward0": "_log_softmax", "UnsafeViewBackward0": "_unsafe_view",
        "MaxBackward1": "max", "MinBackward1": "min", "ReshapeAliasBackward0": "view"}


class OpOverloadPacket:
    """``aten.<op>``: the op of all its overloads; ``aten.mm.default`` is one of them."""

    def __init__(self, op):
        self._qualified_op_name = f"aten::{op}"
        self.__name__ = op
        self._overloads: dict = {}

    def __getattr__(self, overload):
        # Only reached for names a packet does not have: each is an overload, made once (PyTorch's lookup of the
        # op's schema; gradiente has no schemas to check the name against)
        if overload.startswith("__"):
            raise AttributeError(overload)
        found = self._overloads.get(overload)
        if found is None:
            found = self._overloads[overload] = OpOverload(self, overload)
        return found

    def __repr__(self):
        return f"<OpOverloadPacket(op='aten.{self.__name__}')>"

    def __str__(self):
        return f"aten.{self.__name__}"

    def __call__(self, *args, **kwargs):
        raise TypeError(f"gradiente's aten.{self.__name__} is a name to compare with, not an op to run: call "
                        f"gradiente.{self.__name__}(...) instead")


class OpOverload:
    """``aten.<op>.<overload>``, what a selective checkpointing policy is given as ``func``."""

    def __init__(self, packet, overload):
        self.overloadpacket = packet
        self._overloadname = overload
        self.__name__ = f"{packet.__name__}.{overload}"

    def name(self):
        return self.overloadpacket._qualified_op_name

    def __repr__(self):
        return f"<OpOverload(op='aten.{self.overloadpacket.__name__}', overload='{self._overloadname}')>"

    def __str__(self):
        return f"aten.{self.__name__}"

    def __call__(self, *args, **kwargs):
        return self.overloadpacket(*args, **kwargs)


_packets: dict = {}


def __getattr__(op):
    """``aten.<op>``, made on first use (PyTorch's ``torch.ops.aten`` namespace is as open-ended)."""
    if op.startswith("__"):
        raise AttributeError(f"module {__name__!r} has no attribute {op!r}")
    found = _packets.get(op)
    if found is None:
        found = _packets[op] = OpOverloadPacket(op)
    return found


def handle_of(node):
    """The ``OpOverload`` of the ATen op that records ``node`` in PyTorch (``aten.mm.default`` for a
    ``MmBackward0``)."""
    name = node.name()
    op = _OPS.get(name) or node.aten_name or _aten_name(name)
    return getattr(__getattr__(op), _OVERLOADS.get(name, "default"))
