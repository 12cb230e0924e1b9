"""Each op's expression and local derivatives written symbolically, in the learner's own names.

``EXPRESSIONS[node name]`` writes the value a node computes from the names of its inputs (``{0}``,
``{1}``; a missing input, a Python number, is ``c``); ``DERIVATIVES[node name]`` gives, per input, the
local derivative of the output with respect to that input in the same names. These are symbols only:
the walkthrough's numbers stay the engine's own.
"""

__all__ = ["DERIVATIVES", "EXPRESSIONS", "bracket", "derivatives", "expression", "power_of_e"]

_SUPERSCRIPTS = dict(zip("abcdefghijklmnoprstuvwxyz0123456789+-()",
                         "ᵃᵇᶜᵈᵉᶠᵍʰⁱʲᵏˡᵐⁿᵒᵖʳˢᵗᵘᵛʷˣʸᶻ⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻⁽⁾"))

EXPRESSIONS = {
    "AddBackward0": "{0} + {1}", "SubBackward0": "{0} - {1}", "RsubBackward1": "c - {0}",
    "MulBackward0": "{0}·{1}", "DivBackward0": "{0}/{1}", "DivBackward1": "{0}/c",
    "PowBackward0": "{0}^{n}", "PowBackward1": "{0}^{1}", "PowBackward2": "c^{0}",
    "ExpBackward0": "exp({0})", "LogBackward0": "log({0})", "SinBackward0": "sin({0})",
    "CosBackward0": "cos({0})", "TanhBackward0": "tanh({0})", "SigmoidBackward0": "sigmoid({0})",
    "ReluBackward0": "relu({0})", "MmBackward0": "{0}@{1}", "MvBackward0": "{0}@{1}",
    "DotBackward0": "{0}@{1}", "SumBackward0": "sum({0})", "SumBackward1": "sum({0})",
    "MeanBackward0": "mean({0})", "MeanBackward1": "mean({0})", "ReciprocalBackward0": "1/{0}",
    "NegBackward0": "-{0}", "SqrtBackward0": "sqrt({0})", "SoftmaxBackward0": "softmax({0})",
    "LogSoftmaxBackward0": "log_softmax({0})", "MseLossBackward0": "mse_loss({0}, {1})",
    "NllLossBackward0": "nll_loss({0})", "TBackward0": "{0}ᵀ", "AddmmBackward0": "{0} + {1}@{2}",
    "ExpandBackward0": "expand({0})", "ViewBackward0": "view({0})", "ReshapeAliasBackward0": "reshape({0})",
    "PermuteBackward0": "permute({0})", "AbsBackward0": "|{0}|", "BinaryCrossEntropyBackward0": "bce({0}, {1})",
}

DERIVATIVES = {
    "AddBackward0": ("1", "1"), "SubBackward0": ("1", "-1"), "RsubBackward1": ("-1",),
    "MulBackward0": ("{1}", "{0}"), "DivBackward0": ("1/{1}", "-{0}/{1}²"), "DivBackward1": ("1/c",),
    "PowBackward0": ("{n}·{0}^({n}-1)",), "PowBackward1": ("{1}·{0}^({1}-1)", "{0}^{1}·log({0})"),
    "PowBackward2": ("c^{0}·log(c)",),
    "ExpBackward0": ("e^{0}",), "LogBackward0": ("1/{0}",), "SinBackward0": ("cos({0})",),
    "CosBackward0": ("-sin({0})",), "TanhBackward0": ("1 - tanh²({0})",),
    "SigmoidBackward0": ("sigmoid({0})·(1 - sigmoid({0}))",), "ReluBackward0": ("1 if {0} > 0 else 0",),
    "MmBackward0": ("grad@{1}ᵀ", "{0}ᵀ@grad"), "MvBackward0": ("grad⊗{1}", "{0}ᵀ@grad"),
    "DotBackward0": ("{1}", "{0}"), "SumBackward0": ("1 {each}",), "SumBackward1": ("1 {each}",),
    "MeanBackward0": ("1/n {each}",), "MeanBackward1": ("1/n {each}",),
    "ReciprocalBackward0": ("-1/{0}²",), "NegBackward0": ("-1",), "SqrtBackward0": ("1/(2·sqrt({0}))",),
    "SoftmaxBackward0": ("s·(grad - Σ grad·s), s = softmax({0})",),
    "LogSoftmaxBackward0": ("grad - softmax({0})·Σ grad",),
    "MseLossBackward0": ("2·({0} - {1})/n", "-2·({0} - {1})/n"),
    "NllLossBackward0": ("-onehot(target)/n",),
    "TBackward0": ("gradᵀ",), "AddmmBackward0": ("1", "grad@{2}ᵀ", "{1}ᵀ@grad"),
    "ExpandBackward0": ("sum over the expanded dims",), "ViewBackward0": ("reshape back",),
    "PermuteBackward0": ("permute back",), "AbsBackward0": ("sign({0})",),
    "BinaryCrossEntropyBackward0": ("({0} - {1})/({0}·(1 - {0}))/n",),
}


def power_of_e(name):
    """``e`` raised to ``name``, with superscript letters where every character has one (``eˣ``)."""
    if all(ch in _SUPERSCRIPTS for ch in name):
        return "e" + "".join(_SUPERSCRIPTS[ch] for ch in name)
    return f"exp({name})"


_EACH = {"en": "(each element)", "es": "(cada elemento)"}


def _fill(template, names, node, lang="en"):
    values = {"n": _format(getattr(node, "exponent", "n")), "each": _EACH[lang]}
    if "e^{0}" in template and names:
        template = template.replace("e^{0}", power_of_e(names[0]))
    padded = list(names) + ["c"] * 3
    for i, name in enumerate(padded):
        # an input that is already an argument in parentheses needs no second pair
        template = template.replace("({" + str(i) + "})", "(" + name.replace("{", "{{").replace("}", "}}") + ")")
    return template.format(*[_bracket(n) for n in padded], **values)


def bracket(name):
    """``name`` in parentheses when it is a sum or difference (``(w·x + b)``), else as it is."""
    return _bracket(name)


def _bracket(name):
    depth = 0
    for k, ch in enumerate(name):
        depth += ch == "("
        depth -= ch == ")"
        if depth == 0 and ch == " " and name[k + 1:k + 2] in "+-":
            return f"({name})"
    return name


def _format(value):
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def expression(node, names):
    """The expression ``node`` computes, written from its inputs' ``names`` (None for an op not in the table)."""
    template = EXPRESSIONS.get(type(node).__name__)
    if template is None:
        return None
    if type(node).__name__ in ("AddBackward0", "SubBackward0"):
        return template.format(*(list(names) + ["c", "c"]))
    return _fill(template, names, node)


def derivatives(node, names, lang="en"):
    """Per input of ``node``, its local derivative written in the inputs' ``names`` (words in ``lang``),
    or None if unknown."""
    templates = DERIVATIVES.get(type(node).__name__)
    if templates is None:
        return None
    return [_fill(t, names, node, lang) for t in templates]
