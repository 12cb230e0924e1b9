"""einsum, decomposed as PyTorch decomposes it (ATen's ``einsum`` and ``sumproduct_pair``), step for step.

PyTorch has no einsum node: it aligns every operand to one order of subscripts (the output's first, then the
summed ones) with diagonals, unsqueezes and a permute; sums a subscript that only one operand has; multiplies
the operands left to right, each pair either with ``mul`` or, where subscripts are summed, with one ``bmm`` over
permuted and reshaped operands, viewed and permuted back; and finally views away the summed dims. The grad_fn
chain a learner sees (ViewBackward0 over PermuteBackward0 over ViewBackward0 over BmmBackward0 ...) and the
strides of the result are therefore those of these steps, so gradiente takes the same steps with its own ops:
their nodes, layouts and derivatives (any order) are PyTorch's.
"""
from ..core import dtype as dt
from .arithmetic import mul
from .autocast import autocast_entry
from .matmul import bmm
from .reductions import sum as reduce_sum
from .views import diagonal, movedim, permute, reshape, unsqueeze, view

__all__ = ["einsum"]

ELLIPSIS = "..."


def _split_subscripts(term):
    """One operand's subscripts as a list of labels, ``...`` kept as one item."""
    head, found, tail = term.partition(ELLIPSIS)
    return list(head) + ([ELLIPSIS] if found else []) + list(tail)


def _ellipsis_letters(equation, n_ell):
    """Letters that stand for the ``n_ell`` dims an ellipsis covers: ones the equation does not use."""
    spare = [c for c in "ZYXWVUTSRQPONMLKJIHGFEDCBAzyxwvutsrqponmlkjihgfedcba" if c not in equation]
    return "".join(spare[:n_ell][::-1])


def _parse(equation, operands):
    """``(labels per operand, output subscripts, ellipsis letters)``, checked with PyTorch's errors; the
    labels keep ``...`` as one item, the output spells it out in ellipsis letters."""
    equation = equation.replace(" ", "")
    lhs, arrow, rhs = equation.partition("->")
    terms = lhs.split(",")
    if len(terms) > len(operands):
        raise RuntimeError("einsum(): fewer operands were provided than specified in the equation")
    if len(terms) < len(operands):
        raise RuntimeError("einsum(): more operands were provided than specified in the equation")
    labels = [_split_subscripts(term) for term in terms]
    for k, (ls, x) in enumerate(zip(labels, operands)):
        if ELLIPSIS not in ls and len(ls) != x.ndim:
            raise RuntimeError(f"einsum(): the number of subscripts in the equation ({len(ls)}) does not match the "
                               f"number of dimensions ({x.ndim}) for operand {k} and no ellipsis was given")
    n_ell = max((x.ndim - len(ls) + 1 for ls, x in zip(labels, operands) if ELLIPSIS in ls), default=0)
    ell = _ellipsis_letters(equation, n_ell)
    named = [c for ls in labels for c in ls if c != ELLIPSIS]
    if arrow:
        output = rhs.replace(ELLIPSIS, ell)
        for c in rhs.replace(ELLIPSIS, ""):
            if c not in named:
                raise RuntimeError(f"einsum(): output subscript {c} does not appear in the equation for any input "
                                   "operand")
    else:   # implicit output: the ellipsis, then the subscripts used once, in PyTorch's label order (A-Z, a-z)
        output = ell + "".join(sorted(c for c in dict.fromkeys(named) if named.count(c) == 1))
    return labels, output, ell


def _check_sizes(labels, operands, ell):
    """A subscript repeated in one operand must have one size there; across operands, sizes must broadcast
    (PyTorch's messages, for the first clash met dim by dim)."""
    seen = {}
    for k, (ls, x) in enumerate(zip(labels, operands)):
        here = {}
        for c, n in zip(_spelled(ls, x.ndim, ell), x.shape):
            if c in here:
                if n != here[c]:
                    raise RuntimeError(f"einsum(): subscript {c} is repeated for operand {k} but the sizes don't "
                                       f"match, {n} != {here[c]}")
                continue
            here[c] = n
            if c in seen and n != seen[c] and n != 1 and seen[c] != 1:
                raise RuntimeError(f"einsum(): subscript {c} has size {n} for operand {k} which does not broadcast "
                                   f"with previously seen size {seen[c]}")
            seen[c] = n if c not in seen or seen[c] == 1 else seen[c]


def _spelled(labels, ndim, ell):
    """The operand's subscripts as letters, its ellipsis as the last of the ellipsis letters."""
    if ELLIPSIS not in labels:
        return labels
    covered = ndim - len(labels) + 1
    at = labels.index(ELLIPSIS)
    return labels[:at] + list(ell[len(ell) - covered:]) + labels[at + 1:]


def _check_dtypes(operands, labels, output):
    """A subscript summed over in two operands makes PyTorch contract them with bmm, which refuses mixed
    dtypes; otherwise it multiplies them, and mul promotes."""
    first = operands[0]._data.dtype
    wrong = next((x._data.dtype for x in operands if x._data.dtype != first), None)
    if wrong is None:
        return
    named = [set(ls) for ls in labels]
    if any(c not in output and c != ELLIPSIS and sum(c in s for s in named) > 1 for c in set().union(*named)):
        raise RuntimeError(f"expected scalar type {dt.scalar_name(first)} but found {dt.scalar_name(wrong)}")


def _aligned(x, labels, order, ell):
    """``x`` with one dim per subscript of ``order``, in that order: a repeated subscript becomes its diagonal,
    missing ellipsis dims are unsqueezed where the ellipsis stands, other missing subscripts at the end (size 1),
    then one permute (even an identity: PyTorch records it)."""
    dim_of = {}
    j = 0
    covered = x.ndim - len(labels) + 1       # by the ellipsis, if there is one
    for label in labels:
        if label == ELLIPSIS:
            for _ in range(len(ell) - covered):
                x = unsqueeze(x, j)
            for c in ell:
                dim_of[c] = j
                j += 1
        elif label in dim_of:
            x = movedim(diagonal(x, 0, dim_of[label], j), -1, dim_of[label])
        else:
            dim_of[label] = j
            j += 1
    permutation = []
    for c in order:
        if c not in dim_of:
            x = unsqueeze(x, -1)
            dim_of[c] = j
            j += 1
        permutation.append(dim_of[c])
    return permute(x, permutation)


def _sumproduct_pair(left, right, summed):
    """``(left * right)`` summed over the dims ``summed`` (kept, with size 1), as one bmm: the dims both sides
    have (lro), the left's only (lo) and the right's only (ro) are folded into a (lro, lo, summed) @ (lro, summed,
    ro) product, whose result is viewed and permuted back to the operands' order of dims. Where all of the right's
    own dims precede the left's, the two swap sides, as in PyTorch, so that the product is already in order."""
    if not summed:
        return mul(left, right)
    lro, lo, ro = [], [], []
    lro_size = lo_size = ro_size = sum_size = 1
    for d in range(left.ndim):
        in_left, in_right = left.shape[d] != 1, right.shape[d] != 1
        if d in summed:
            if in_left and in_right:
                sum_size *= left.shape[d]
            elif in_left:
                left = reduce_sum(left, d, True)
            elif in_right:
                right = reduce_sum(right, d, True)
        elif in_left and in_right:
            lro.append(d)
            lro_size *= left.shape[d]
        elif in_left:
            lo.append(d)
            lo_size *= left.shape[d]
        else:
            ro.append(d)
            ro_size *= right.shape[d]
    if lo and ro and ro[-1] < lo[0]:    # the right's dims all come first in the output: bmm(right, left) lays
        left, right, lo, ro, lo_size, ro_size = right, left, ro, lo, ro_size, lo_size   # them out in that order
    out_shape = ([left.shape[d] for d in lro] + [left.shape[d] for d in lo] + [1] * len(summed)
                 + [right.shape[d] for d in ro])
    left = reshape(permute(left, lro + lo + summed + ro), (lro_size, lo_size, sum_size))
    right = reshape(permute(right, lro + summed + ro + lo), (lro_size, sum_size, ro_size))
    back = [0] * len(out_shape)
    for position, d in enumerate(lro + lo + summed + ro):
        back[d] = position
    return permute(view(bmm(left, right), out_shape), back)


@autocast_entry
def einsum(equation, *operands):
    """Einstein summation (``einsum('ij,jk->ik', a, b)``), operands as arguments or one list; the result has
    the output subscripts' sizes (broadcast where an operand's size is 1).

    Computed, and recorded, as PyTorch's einsum: diagonals, unsqueezes and permutes, sums, then ``mul`` or
    ``bmm`` per pair of operands, left to right (PyTorch orders three or more with ``opt_einsum`` when that
    package is installed; ``torch.backends.opt_einsum.is_available()`` is False here, as without it)."""
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    labels, output, ell = _parse(equation, operands)
    _check_dtypes(operands, labels, output)
    _check_sizes(labels, operands, ell)
    named = dict.fromkeys(c for ls in labels for c in ls if c != ELLIPSIS)
    summed_labels = [c for c in ell if c not in output] + sorted(c for c in named if c not in output)
    order = list(output) + summed_labels
    aligned = [_aligned(x, ls, order, ell) for x, ls in zip(operands, labels)]
    n_out, contraction = len(output), range(len(output), len(order))
    if len(aligned) == 1:
        return reduce_sum(aligned[0], list(contraction)) if summed_labels else aligned[0]
    holders = {d: sum(x.shape[d] != 1 for x in aligned) for d in contraction}
    for i, x in enumerate(aligned):     # a subscript only one operand has is summed there first
        alone = [d for d in contraction if holders[d] == 1 and x.shape[d] != 1]
        if alone:
            aligned[i] = reduce_sum(x, alone, True)
            holders.update(dict.fromkeys(alone, 0))
    result = aligned[0]
    for x in aligned[1:]:
        summed = []
        for d in contraction:
            if result.shape[d] != 1 and x.shape[d] != 1:
                holders[d] -= 1
                if holders[d] == 1:     # no operand after this one has it: sum it in this product
                    summed.append(d)
                    holders[d] = 0
        result = _sumproduct_pair(result, x, summed)
    return view(result, tuple(result.shape[:n_out])) if summed_labels else result
