"""Notes a walkthrough adds below its steps, in English and Spanish: where PyTorch computed an
expression differently from how it was written (a decomposition), and why a dead ReLU passes zeros."""
import numpy as np

__all__ = ["DECOMPOSITIONS", "notes"]

DECOMPOSITIONS = {
    "ReciprocalBackward0": {
        "en": "A division c/(...) by a tensor is computed as reciprocal 1/(...) (ReciprocalBackward0), then a "
              "multiplication by c (MulBackward0): you did not write these two nodes, PyTorch decomposed it.",
        "es": "Una división c/(...) entre un tensor se calcula como el recíproco 1/(...) (ReciprocalBackward0) y "
              "luego una multiplicación por c (MulBackward0): no escribiste esos dos nodos, PyTorch la descompuso.",
    },
    "SubBackward0": {
        "en": "x - y is SubBackward0, PyTorch's x + (-alpha)·y with alpha = 1: the second input gets "
              "-1 × the gradient.",
        "es": "x - y es SubBackward0, el x + (-alpha)·y de PyTorch con alpha = 1: la segunda entrada recibe "
              "-1 × el gradiente.",
    },
    "RsubBackward1": {
        "en": "c - x with a Python number c is recorded as RsubBackward1 (subtraction with its operands swapped).",
        "es": "c - x con un número c de Python se registra como RsubBackward1 (la resta con los operandos al revés).",
    },
    "MeanBackward0": {
        "en": "x.mean() is sum(x)/n in one node (MeanBackward0): each element gets the gradient divided by n.",
        "es": "x.mean() es sum(x)/n en un solo nodo (MeanBackward0): cada elemento recibe el gradiente "
              "dividido entre n.",
    },
    "DivBackward1": {
        "en": "a/b with b a Python number is DivBackward1: only a gets a gradient, the gradient divided by b.",
        "es": "a/b con b un número de Python es DivBackward1: solo a recibe gradiente, el gradiente dividido entre b.",
    },
}

_DEAD_RELU = {
    "en": "The ReLU of step {n} is dead here: every one of its inputs was ≤ 0, where ReLU is flat (derivative 0), "
          "so it passed zeros and nothing before it learns from this path. Try a different initialization, a "
          "smaller learning rate, or LeakyReLU/GELU, whose slope below 0 is not zero.",
    "es": "La ReLU del paso {n} está muerta aquí: todas sus entradas eran ≤ 0, donde ReLU es plana (derivada 0), "
          "así que pasó ceros y nada de lo anterior aprende por este camino. Prueba otra inicialización, una "
          "tasa de aprendizaje menor, o LeakyReLU/GELU, cuya pendiente bajo 0 no es cero.",
}


def notes(steps, lang):
    """The notes for ``steps`` (the ``Step`` objects shown), each once, in ``lang``."""
    found = []
    seen = set()
    for step in steps:
        if step is None:
            continue
        decomposed = step.name != "ReciprocalBackward0" or _feeds_multiplication(step)
        if step.name in DECOMPOSITIONS and step.name not in seen and decomposed:
            seen.add(step.name)
            found.append(DECOMPOSITIONS[step.name][lang])
        if step.name == "ReluBackward0" and _dead(step):
            found.append(_DEAD_RELU[lang].format(n=step.number))
    return found


def _feeds_multiplication(step):
    return any(type(consumer).__name__ == "MulBackward0" for consumer in step.consumers)


def _dead(step):
    """Whether a ReLU got a nonzero gradient and passed only zeros: its derivative was 0 everywhere."""
    if step.incoming is None or not np.any(step.incoming) or not step.passes:
        return False
    return all(not np.any(p.passed) for p in step.passes)
