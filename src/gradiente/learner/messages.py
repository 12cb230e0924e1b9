"""What learner mode says, in English and Spanish.

Each warning has three parts, always in this order: what happened, why it matters, and the fix. The
explanations added to PyTorch's errors (``EXPLANATIONS``) say what the error means and how to get past it.
Fields in braces are filled in with the learner's own names and lines.
"""

__all__ = ["WARNINGS", "EXPLANATIONS", "HEADINGS", "warning_text", "explanation_text"]

HEADINGS = {
    "en": {"why": "Why it matters", "fix": "Fix", "learner": "Learner mode", "at": "at {site}"},
    "es": {"why": "Por qué importa", "fix": "Solución", "learner": "Modo aprendiz", "at": "en {site}"},
}

#: kind -> language -> (what happened, why it matters, the fix)
WARNINGS = {
    "zero_grad": {
        "en": ("optimizer.step() is about to use gradients that were not reset since the previous step: "
               "{param}.grad holds this iteration's gradient plus the earlier ones.",
               "backward() adds into .grad, it never replaces it. Each step then applies old gradients again, and "
               "the steps grow until training goes astray.",
               "call optimizer.zero_grad() once per iteration, before loss.backward()."),
        "es": ("optimizer.step() va a usar gradientes que no se reiniciaron desde el paso anterior: "
               "{param}.grad guarda el gradiente de esta iteración más los anteriores.",
               "backward() suma en .grad, nunca lo reemplaza. Cada paso vuelve a aplicar gradientes viejos, y los "
               "pasos crecen hasta que el entrenamiento se desvía.",
               "llama a optimizer.zero_grad() una vez por iteración, antes de loss.backward()."),
    },
    "running_total": {
        "en": ("`{code}` adds a tensor that still carries its graph to a running total, so the total keeps the "
               "graph of every iteration alive.",
               "memory grows with each iteration, and the total's graph gets longer every time, though all you "
               "wanted was a number to print.",
               "add the number, not the tensor: `total += loss.item()` (or `loss.detach()`)."),
        "es": ("`{code}` suma a un total acumulado un tensor que todavía lleva su grafo, así que el total mantiene "
               "vivo el grafo de cada iteración.",
               "la memoria crece en cada iteración y el grafo del total se alarga cada vez, aunque solo querías un "
               "número para imprimir.",
               "suma el número, no el tensor: `total += loss.item()` (o `loss.detach()`)."),
    },
    "train_in_eval": {
        "en": ("optimizer.step() follows a forward pass in which {layer} was in eval mode ({where}).",
               "in eval mode Dropout drops nothing and BatchNorm normalizes with its running statistics instead "
               "of the batch's, so the model being trained is not the one you meant to train.",
               "call model.train() before the training loop, and model.eval() only to evaluate."),
        "es": ("optimizer.step() viene después de una pasada hacia adelante en la que {layer} estaba en modo "
               "evaluación ({where}).",
               "en modo evaluación Dropout no apaga nada y BatchNorm normaliza con sus estadísticas acumuladas en "
               "lugar de las del lote, así que el modelo que entrenas no es el que querías entrenar.",
               "llama a model.train() antes del bucle de entrenamiento, y a model.eval() solo para evaluar."),
    },
    "eval_in_train": {
        "en": ("{layer} ran in training mode under {block} ({where}): that looks like evaluation done in train "
               "mode.",
               "in train mode Dropout zeroes values at random and BatchNorm uses the batch's statistics and "
               "updates its running ones, so the results vary from run to run and evaluating changes the model.",
               "call model.eval() before evaluating, and model.train() when you go back to training."),
        "es": ("{layer} se ejecutó en modo entrenamiento dentro de {block} ({where}): parece una evaluación hecha "
               "en modo entrenamiento.",
               "en modo entrenamiento Dropout anula valores al azar y BatchNorm usa las estadísticas del lote y "
               "actualiza las acumuladas, así que los resultados cambian de una ejecución a otra y evaluar "
               "modifica el modelo.",
               "llama a model.eval() antes de evaluar, y a model.train() al volver a entrenar."),
    },
    "data_modified": {
        "en": ("{param} was changed through .data after training began.",
               "PyTorch does not track changes made through .data: if a backward still to come saved the old "
               "values, its gradient is silently wrong, and no error tells you.",
               "update parameters under no_grad: `with torch.no_grad(): {param} -= lr * {param}.grad`, or let an "
               "optimizer do it."),
        "es": ("{param} se modificó a través de .data después de empezar a entrenar.",
               "PyTorch no sigue los cambios hechos a través de .data: si una retropropagación pendiente guardó los "
               "valores viejos, su gradiente será incorrecto sin que ningún error te avise.",
               "actualiza los parámetros dentro de no_grad: `with torch.no_grad(): {param} -= lr * {param}.grad`, "
               "o deja que lo haga un optimizador."),
    },
    "requires_grad_non_leaf": {
        "en": ("{name}.requires_grad_() changes nothing: {name} was computed from other tensors (grad_fn={node}), "
               "so it is not a leaf.",
               "only leaves, the tensors you create, get a .grad. {name} already requires grad because its inputs "
               "do, and its .grad will stay None. This usually means a parameter was made as "
               "`torch.randn(3, requires_grad=True) * 0.1`: the product, not the random tensor, is then your "
               "variable.",
               "make the leaf after the arithmetic: `w = (torch.randn(3) * 0.1).requires_grad_()`; or call "
               "{name}.retain_grad() if you only want to look at its gradient."),
        "es": ("{name}.requires_grad_() no cambia nada: {name} se calculó a partir de otros tensores "
               "(grad_fn={node}), así que no es una hoja.",
               "solo las hojas, los tensores que tú creas, reciben .grad. {name} ya requiere gradiente porque sus "
               "entradas lo requieren, y su .grad seguirá en None. Suele pasar cuando un parámetro se crea como "
               "`torch.randn(3, requires_grad=True) * 0.1`: tu variable es entonces el producto, no el tensor "
               "aleatorio.",
               "crea la hoja después de la aritmética: `w = (torch.randn(3) * 0.1).requires_grad_()`; o llama a "
               "{name}.retain_grad() si solo quieres ver su gradiente."),
    },
}

#: kind -> language -> text added to PyTorch's error
EXPLANATIONS = {
    "non_scalar_backward": {
        "en": ("{name} has shape {shape}: {count} numbers, not one. backward() differentiates one number; for a "
               "tensor of outputs it computes a vector-Jacobian product vᵀ·J, and `gradient=` is that v, how much "
               "each output counts. For a scalar PyTorch takes v = 1 by itself; here it cannot guess. Reduce to one "
               "number first (`{name}.sum().backward()` or `{name}.mean().backward()`), or give the weights: "
               "`{name}.backward(gradient=torch.ones_like({name}))`, the same as `.sum()`."),
        "es": ("{name} tiene forma {shape}: {count} números, no uno. backward() deriva un solo número; para un "
               "tensor de salidas calcula un producto vector-jacobiano vᵀ·J, y `gradient=` es ese v, cuánto cuenta "
               "cada salida. Para un escalar PyTorch toma v = 1 por su cuenta; aquí no puede adivinarlo. Reduce "
               "primero a un número (`{name}.sum().backward()` o `{name}.mean().backward()`), o da los pesos: "
               "`{name}.backward(gradient=torch.ones_like({name}))`, que equivale a `.sum()`."),
    },
    "requires_grad_non_leaf": {
        "en": ("{name} was computed from other tensors (grad_fn={node}), so it is not a leaf: it requires grad "
               "exactly when its inputs do, and only a leaf's flag can be set. To make a parameter, create the leaf "
               "after the arithmetic: `w = (torch.randn(3) * 0.1).requires_grad_()`."),
        "es": ("{name} se calculó a partir de otros tensores (grad_fn={node}), así que no es una hoja: requiere "
               "gradiente exactamente cuando lo requieren sus entradas, y solo se puede cambiar el de una hoja. Para "
               "crear un parámetro, crea la hoja después de la aritmética: "
               "`w = (torch.randn(3) * 0.1).requires_grad_()`."),
    },
    "graph_freed": {
        "en": ("each backward() frees the values its graph saved, to save memory, and this graph was already "
               "used by a backward(){where}. Run the forward pass again (compute the loss anew) before each "
               "backward(); if you really need two passes through one graph, pass retain_graph=True to the first."),
        "es": ("cada backward() libera los valores que guardó su grafo, para ahorrar memoria, y este grafo ya lo "
               "usó un backward(){where}. Vuelve a hacer la pasada hacia adelante (calcula de nuevo la pérdida) "
               "antes de cada backward(); si de verdad necesitas recorrer dos veces el mismo grafo, pasa "
               "retain_graph=True al primero."),
    },
}


def warning_text(kind, lang, **facts):
    """The warning ``kind`` in ``lang``: what happened, why it matters, the fix."""
    what, why, fix = WARNINGS[kind][lang]
    words = HEADINGS[lang]
    return (f"{what.format(**facts)}\n  {words['why']}: {why.format(**facts)}\n"
            f"  {words['fix']}: {fix.format(**facts)}")


def explanation_text(kind, lang, **facts):
    """The explanation added to PyTorch's error ``kind``, after a blank line, headed "Learner mode"."""
    return f"\n\n{HEADINGS[lang]['learner']}: {EXPLANATIONS[kind][lang].format(**facts)}"
