"""The words of a walkthrough in each language, and each op's name and derivative in LaTeX.

The plain-text derivative of a node is its class's ``formula`` (kept next to the rule); this table adds
what a learner reads in a notebook: the operation's name in English and Spanish and the same derivative
typeset in LaTeX. An op missing here is still explained, with its ``formula`` in plain text.
"""

__all__ = ["LANGUAGES", "LATEX", "MESSAGES", "OPS", "words"]

LANGUAGES = ("en", "es")

MESSAGES = {
    "en": {
        "title": "Backward pass of {output}, step by step (chain rule)",
        "start": "It starts from {derivative} = {grad}; "
                 "at each step: gradient arriving × local derivative = gradient passed on to the input.",
        "start_given": "It starts from the gradient given to backward(), {grad}; "
                       "at each step: gradient arriving × local derivative = gradient passed on to the input.",
        "step": "Step {n}",
        "output_is": "its output is {name}",
        "rule": "rule",
        "user_rule": "user-defined rule: {name}.backward (an autograd.Function)",
        "with": "with",
        "incoming": "gradient arriving",
        "meet": "{count} paths meet here; their gradients are summed",
        "from": "from {name}",
        "input_nr": "input {i}",
        "local": "local derivative",
        "passes_to": "passes to {target}",
        "input_to": "input {i} → {target}",
        "broadcast": "summed over the broadcast dimensions to shape {shape}",
        "leaf": "leaf {name}",
        "leaf_op": "leaf tensor: the gradient is accumulated into .grad",
        "receives": "{name} receives",
        "result": "Result",
        "grad_is": "{name} = {grad}",
        "grad_not_stored": "d{output}/d{name} = {grad}   ({grad_attr} left unchanged)",
        "previous": "(added to the {previous} it already held)",
        "omitted": "... {count} steps omitted (the middle of the pass; max_steps={max_steps}) ...",
        "step_of": "step {n}",
        "no_steps": "Nothing to do: {output} is a leaf; its gradient is the one given.",
        "words": ("shape", "mean", "min", "max"),
        "freed": "Call explain(y) instead of y.backward(), or call y.backward(retain_graph=True) first.",
        "unnamed": "leaf {i}",
        "symbolic": "local derivatives",
        "notes": "Notes",
    },
    "es": {
        "title": "Retropropagación de {output}, paso a paso (regla de la cadena)",
        "start": "Se parte de {derivative} = {grad}; "
                 "en cada paso: gradiente que llega × derivada local = gradiente que pasa a la entrada.",
        "start_given": "Se parte del gradiente dado a backward(), {grad}; "
                       "en cada paso: gradiente que llega × derivada local = gradiente que pasa a la entrada.",
        "step": "Paso {n}",
        "output_is": "su salida es {name}",
        "rule": "regla",
        "user_rule": "regla definida por el usuario: {name}.backward (una autograd.Function)",
        "with": "con",
        "incoming": "gradiente que llega",
        "meet": "aquí se juntan {count} caminos; sus gradientes se suman",
        "from": "de {name}",
        "input_nr": "entrada {i}",
        "local": "derivada local",
        "passes_to": "pasa a {target}",
        "input_to": "entrada {i} → {target}",
        "broadcast": "sumado sobre las dimensiones difundidas (broadcasting) hasta la forma {shape}",
        "leaf": "hoja {name}",
        "leaf_op": "tensor hoja: el gradiente se acumula en .grad",
        "receives": "{name} recibe",
        "result": "Resultado",
        "grad_is": "{name} = {grad}",
        "grad_not_stored": "d{output}/d{name} = {grad}   ({grad_attr} no se modifica)",
        "previous": "(sumado al {previous} que ya tenía)",
        "omitted": "... se omiten {count} pasos (la parte central; max_steps={max_steps}) ...",
        "step_of": "paso {n}",
        "no_steps": "Nada que hacer: {output} es una hoja; su gradiente es el dado.",
        "words": ("forma", "media", "mín", "máx"),
        "freed": "Llama a explain(y) en lugar de y.backward(), o antes a y.backward(retain_graph=True).",
        "unnamed": "hoja {i}",
        "symbolic": "derivadas locales",
        "notes": "Notas",
    },
}

#: node name -> (English, Spanish) name of the operation
OPS = {
    "AddBackward0": ("addition x + y", "suma x + y"),
    "SubBackward0": ("subtraction x - y", "resta x - y"),
    "RsubBackward1": ("subtraction c - x", "resta c - x"),
    "MulBackward0": ("multiplication x·y", "multiplicación x·y"),
    "DivBackward0": ("division x / y", "división x / y"),
    "ReciprocalBackward0": ("reciprocal 1/x", "inverso 1/x"),
    "PowBackward0": ("power xⁿ", "potencia xⁿ"),
    "PowBackward1": ("power xʸ", "potencia xʸ"),
    "PowBackward2": ("power cˣ", "potencia cˣ"),
    "NegBackward0": ("negation -x", "cambio de signo -x"),
    "ExpBackward0": ("exponential eˣ", "exponencial eˣ"),
    "Exp2Backward0": ("power of two 2ˣ", "potencia de dos 2ˣ"),
    "Expm1Backward0": ("eˣ - 1", "eˣ - 1"),
    "LogBackward0": ("natural logarithm ln x", "logaritmo natural ln x"),
    "Log2Backward0": ("base-2 logarithm", "logaritmo en base 2"),
    "Log10Backward0": ("base-10 logarithm", "logaritmo en base 10"),
    "Log1PBackward0": ("ln(1 + x)", "ln(1 + x)"),
    "SqrtBackward0": ("square root √x", "raíz cuadrada √x"),
    "RsqrtBackward0": ("reciprocal square root 1/√x", "inverso de la raíz cuadrada 1/√x"),
    "SinBackward0": ("sine sin x", "seno sin x"),
    "CosBackward0": ("cosine cos x", "coseno cos x"),
    "TanBackward0": ("tangent tan x", "tangente tan x"),
    "AsinBackward0": ("arcsine", "arcoseno"),
    "AcosBackward0": ("arccosine", "arcocoseno"),
    "AtanBackward0": ("arctangent", "arcotangente"),
    "SinhBackward0": ("hyperbolic sine", "seno hiperbólico"),
    "CoshBackward0": ("hyperbolic cosine", "coseno hiperbólico"),
    "TanhBackward0": ("hyperbolic tangent tanh x", "tangente hiperbólica tanh x"),
    "SigmoidBackward0": ("sigmoid σ(x)", "sigmoide σ(x)"),
    "ReluBackward0": ("ReLU max(0, x)", "ReLU max(0, x)"),
    "AbsBackward0": ("absolute value |x|", "valor absoluto |x|"),
    "SumBackward0": ("sum of all elements", "suma de todos los elementos"),
    "SumBackward1": ("sum over dimensions", "suma sobre dimensiones"),
    "MeanBackward0": ("mean of all elements", "media de todos los elementos"),
    "MeanBackward1": ("mean over dimensions", "media sobre dimensiones"),
    "MmBackward0": ("matrix product X·Y", "producto de matrices X·Y"),
    "MvBackward0": ("matrix-vector product A·v", "producto matriz-vector A·v"),
    "DotBackward0": ("dot product x·y", "producto escalar x·y"),
    "BmmBackward0": ("batched matrix product", "producto de matrices por lotes"),
    "TBackward0": ("transpose", "traspuesta"),
    "UnsafeViewBackward0": ("reshape", "cambio de forma"),
    "ToCopyBackward0": ("dtype conversion", "conversión de tipo"),
    "AccumulateGrad": ("leaf tensor: the gradient is accumulated into .grad",
                       "tensor hoja: el gradiente se acumula en .grad"),
}

#: node name -> the derivative in LaTeX (for Markdown output)
LATEX = {
    "AddBackward0": r"\frac{\partial (x+y)}{\partial x} = 1,\quad \frac{\partial (x+y)}{\partial y} = 1",
    "SubBackward0": r"\frac{\partial (x-y)}{\partial x} = 1,\quad \frac{\partial (x-y)}{\partial y} = -1",
    "RsubBackward1": r"\frac{d (c-x)}{dx} = -1",
    "MulBackward0": r"\frac{\partial (xy)}{\partial x} = y,\quad \frac{\partial (xy)}{\partial y} = x",
    "DivBackward0": r"\frac{\partial (x/y)}{\partial x} = \frac{1}{y},\quad "
                    r"\frac{\partial (x/y)}{\partial y} = -\frac{x}{y^2}",
    "ReciprocalBackward0": r"\frac{d}{dx}\frac{1}{x} = -\frac{1}{x^2}",
    "PowBackward0": r"\frac{d}{dx} x^n = n\,x^{n-1}",
    "PowBackward1": r"\frac{\partial x^y}{\partial x} = y\,x^{y-1},\quad \frac{\partial x^y}{\partial y} = x^y \ln x",
    "PowBackward2": r"\frac{d}{dx} c^x = c^x \ln c",
    "NegBackward0": r"\frac{d}{dx}(-x) = -1",
    "ExpBackward0": r"\frac{d}{dx} e^x = e^x",
    "Exp2Backward0": r"\frac{d}{dx} 2^x = 2^x \ln 2",
    "Expm1Backward0": r"\frac{d}{dx} (e^x - 1) = e^x",
    "LogBackward0": r"\frac{d}{dx} \ln x = \frac{1}{x}",
    "Log2Backward0": r"\frac{d}{dx} \log_2 x = \frac{1}{x \ln 2}",
    "Log10Backward0": r"\frac{d}{dx} \log_{10} x = \frac{1}{x \ln 10}",
    "Log1PBackward0": r"\frac{d}{dx} \ln(1+x) = \frac{1}{1+x}",
    "SqrtBackward0": r"\frac{d}{dx} \sqrt{x} = \frac{1}{2\sqrt{x}}",
    "RsqrtBackward0": r"\frac{d}{dx} x^{-1/2} = -\frac{1}{2 x^{3/2}}",
    "SinBackward0": r"\frac{d}{dx} \sin x = \cos x",
    "CosBackward0": r"\frac{d}{dx} \cos x = -\sin x",
    "TanBackward0": r"\frac{d}{dx} \tan x = 1 + \tan^2 x",
    "AsinBackward0": r"\frac{d}{dx} \arcsin x = \frac{1}{\sqrt{1-x^2}}",
    "AcosBackward0": r"\frac{d}{dx} \arccos x = -\frac{1}{\sqrt{1-x^2}}",
    "AtanBackward0": r"\frac{d}{dx} \arctan x = \frac{1}{1+x^2}",
    "SinhBackward0": r"\frac{d}{dx} \sinh x = \cosh x",
    "CoshBackward0": r"\frac{d}{dx} \cosh x = \sinh x",
    "TanhBackward0": r"\frac{d}{dx} \tanh x = 1 - \tanh^2 x",
    "SigmoidBackward0": r"\frac{d}{dx} \sigma(x) = \sigma(x)\,(1 - \sigma(x))",
    "ReluBackward0": r"\frac{d}{dx} \max(0, x) = \begin{cases} 1 & x > 0 \\ 0 & x \le 0 \end{cases}",
    "AbsBackward0": r"\frac{d}{dx} |x| = \operatorname{sign}(x)",
    "SumBackward0": r"\frac{\partial}{\partial x_j} \sum_i x_i = 1",
    "SumBackward1": r"\frac{\partial}{\partial x_j} \sum_i x_i = 1",
    "MeanBackward0": r"\frac{\partial}{\partial x_j} \frac{1}{n}\sum_i x_i = \frac{1}{n}",
    "MeanBackward1": r"\frac{\partial}{\partial x_j} \frac{1}{n}\sum_i x_i = \frac{1}{n}",
    "MmBackward0": r"\bar X = \bar Z\, Y^\top,\quad \bar Y = X^\top \bar Z \quad (Z = XY)",
    "MvBackward0": r"\bar A = \bar z\, v^\top,\quad \bar v = A^\top \bar z \quad (z = Av)",
    "DotBackward0": r"\frac{\partial (x \cdot y)}{\partial x} = y,\quad \frac{\partial (x \cdot y)}{\partial y} = x",
    "BmmBackward0": r"\bar X = \bar Z\, Y^\top,\quad \bar Y = X^\top \bar Z \quad (\text{per batch})",
    "TBackward0": r"\bar X = \bar Z^\top \quad (Z = X^\top)",
    "AccumulateGrad": r"x.\mathrm{grad} \mathrel{+}= \bar x",
}

#: scalar attributes of a node worth showing next to its rule, with the symbol the rule uses
ATTRIBUTES = (("exponent", "n"), ("base", "c"), ("count", "n"), ("alpha", "alpha"), ("axes", "dim"),
              ("keepdim", "keepdim"))


def words(lang):
    if lang not in MESSAGES:
        raise ValueError(f"lang must be one of {', '.join(LANGUAGES)}; got {lang!r}")
    return MESSAGES[lang]
