"""What ``why_no_grad`` says for each cause, in English and Spanish.

Fields: ``{x}`` and ``{loss}`` are the learner's names for the two tensors; ``{where}`` is " at file:line
(`code`)" when the line is known, else empty; the others are named where they are used.
"""

__all__ = ["DIAGNOSES", "TITLES", "CAUSES", "WHERE", "HOW", "SITES_HINT"]

#: the causes, each with a short label per language (shown as the diagnosis's heading)
CAUSES = {
    "dtype": ("not a floating-point tensor", "no es un tensor de punto flotante"),
    "inference_mode": ("inference mode", "modo de inferencia"),
    "no_grad": ("no_grad", "no_grad"),
    "detach": ("detach()", "detach()"),
    "data": (".data", ".data"),
    "numpy": ("a round trip through NumPy or Python", "un viaje de ida y vuelta por NumPy o Python"),
    "requires_grad_false": ("requires_grad is False", "requires_grad es False"),
    "not_leaf": ("not a leaf", "no es una hoja"),
    "replaced": ("the name now holds another tensor", "el nombre ahora guarda otro tensor"),
    "modified_in_place": ("changed in place", "modificado en el lugar"),
    "never_used": ("never used", "nunca se usó"),
    "no_graph": ("the result has no graph", "el resultado no tiene grafo"),
    "graph_freed": ("graph already freed", "grafo ya liberado"),
    "not_backpropagated": ("backward() not called yet", "aún no se llamó a backward()"),
    "has_grad": ("it has a gradient", "tiene gradiente"),
}

TITLES = {"en": "Why is {x}.grad None?", "es": "¿Por qué {x}.grad es None?"}
WHERE = {"en": " at {site} (`{code}`)", "es": " en {site} (`{code}`)"}
SITES_HINT = {
    "en": " To see the file and line, turn on learner mode (`gradiente.learner_mode()`) or anomaly detection "
          "before computing {loss}, and run it again.",
    "es": " Para ver el archivo y la línea, activa el modo aprendiz (`gradiente.learner_mode()`) o la detección "
          "de anomalías antes de calcular {loss}, y vuelve a ejecutarlo.",
}
#: how values left the graph on a round trip through NumPy or Python
HOW = {
    "item": (".item()", ".item()"),
    "tolist": (".tolist()", ".tolist()"),
    "numpy": (".numpy()", ".numpy()"),
    "shared": ("a NumPy array on the same memory", "un arreglo de NumPy sobre la misma memoria"),
    "copy": ("a copy of its values", "una copia de sus valores"),
}

#: message key -> (English, Spanish). A cause may have several messages (``detach`` cutting the path, or
#: ``detach`` having made ``x`` itself).
DIAGNOSES = {
    "dtype": (
        "{x} cannot have a gradient: its dtype is {dtype}, and only floating-point (or complex) tensors can require "
        "grad. Create it as floating point: `torch.tensor([1., 2.], requires_grad=True)`, or "
        "`{x} = {x}.float().requires_grad_()`.",
        "{x} no puede tener gradiente: su dtype es {dtype}, y solo los tensores de punto flotante (o complejos) "
        "pueden requerir gradiente. Créalo en punto flotante: `torch.tensor([1., 2.], requires_grad=True)`, o "
        "`{x} = {x}.float().requires_grad_()`."),
    "inference_mode_self": (
        "{x} was created inside torch.inference_mode(){where}: it is an inference tensor, which autograd never "
        "records. Create it outside that block (or use torch.no_grad() there and `.clone()` it outside).",
        "{x} se creó dentro de torch.inference_mode(){where}: es un tensor de inferencia, que autograd nunca "
        "registra. Créalo fuera de ese bloque (o usa allí torch.no_grad() y haz `.clone()` fuera)."),
    "inference_mode": (
        "{x} was used inside torch.inference_mode(){where}: nothing computed there is recorded, so the path from "
        "{x} to {loss} stops there. Compute {loss} outside the block.",
        "{x} se usó dentro de torch.inference_mode(){where}: nada de lo que se calcula ahí queda registrado, así "
        "que el camino de {x} a {loss} se corta ahí. Calcula {loss} fuera del bloque."),
    "no_grad": (
        "{x} was used under torch.no_grad(){where}: operations there are not recorded, so what came out has no "
        "history and the path from {x} to {loss} stops there. Compute {loss} outside the no_grad block (keep "
        "no_grad for evaluating and for updating parameters).",
        "{x} se usó dentro de torch.no_grad(){where}: las operaciones ahí no se registran, así que lo que salió "
        "no tiene historia y el camino de {x} a {loss} se corta ahí. Calcula {loss} fuera del bloque no_grad "
        "(deja no_grad para evaluar y para actualizar parámetros)."),
    "no_grad_self": (
        "{x} does not require grad, and the last use of a tensor that requires grad under torch.no_grad() was"
        "{where}: if {x} was computed there, it was made without history. Compute it outside the block.",
        "{x} no requiere gradiente, y el último uso de un tensor que requiere gradiente dentro de torch.no_grad() "
        "fue{where}: si {x} se calculó ahí, se creó sin historia. Calcúlalo fuera del bloque."),
    "detach": (
        "The path from {x} to {loss} was cut by .detach(){where}: detach() gives the same values without history, "
        "so no gradient flows back through it. Use the tensor itself; detach only what you do not want to train "
        "(a target, a value to print).",
        "El camino de {x} a {loss} se cortó con .detach(){where}: detach() da los mismos valores sin historia, así "
        "que ningún gradiente vuelve a través de él. Usa el tensor mismo; separa con detach solo lo que no quieres "
        "entrenar (un objetivo, un valor para imprimir)."),
    "detach_self": (
        "{x} was made by .detach(){where}: it has the values of the tensor it came from, but no history, and does "
        "not require grad. Use the original tensor in the computation and read its .grad.",
        "{x} se obtuvo con .detach(){where}: tiene los valores del tensor del que viene, pero no su historia, y no "
        "requiere gradiente. Usa el tensor original en el cálculo y lee su .grad."),
    "data": (
        "The path from {x} to {loss} was cut by .data{where}: .data gives the values without history (an old "
        "idiom of PyTorch). Use {x} itself in the computation; to change values without recording, write "
        "`with torch.no_grad():`.",
        "El camino de {x} a {loss} se cortó con .data{where}: .data da los valores sin historia (un modismo viejo "
        "de PyTorch). Usa {x} mismo en el cálculo; para cambiar valores sin registrarlos, escribe "
        "`with torch.no_grad():`."),
    "data_self": (
        "{x} was made by .data{where}: it has the values of the tensor it came from, but no history, and does not "
        "require grad. Use the original tensor in the computation and read its .grad.",
        "{x} se obtuvo con .data{where}: tiene los valores del tensor del que viene, pero no su historia, y no "
        "requiere gradiente. Usa el tensor original en el cálculo y lee su .grad."),
    "numpy": (
        "The path from {x} to {loss} went through NumPy or plain Python ({how}){where}: an array or a number has no "
        "history, so a tensor made again from it (`torch.tensor(...)`, `torch.from_numpy(...)`) starts a new graph. "
        "Keep the computation in tensor operations (`torch.exp`, `.sum()`, ...) and call .item() or .numpy() only "
        "on the final result, to print it.",
        "El camino de {x} a {loss} pasó por NumPy o por Python ({how}){where}: un arreglo o un número no tiene "
        "historia, así que un tensor creado de nuevo a partir de él (`torch.tensor(...)`, `torch.from_numpy(...)`) "
        "empieza un grafo nuevo. Haz el cálculo con operaciones de tensores (`torch.exp`, `.sum()`, ...) y llama a "
        ".item() o .numpy() solo sobre el resultado final, para imprimirlo."),
    "requires_grad_false": (
        "{x}.requires_grad is False, so autograd does not track {x} and never fills {x}.grad. Create it with "
        "`requires_grad=True` (`torch.tensor([1., 2.], requires_grad=True)`), or call `{x}.requires_grad_()` before "
        "using it. (Had {x} been computed from other tensors, none of them required grad, or it was computed under "
        "no_grad.)",
        "{x}.requires_grad es False, así que autograd no sigue a {x} y nunca llena {x}.grad. Créalo con "
        "`requires_grad=True` (`torch.tensor([1., 2.], requires_grad=True)`), o llama a `{x}.requires_grad_()` antes "
        "de usarlo. (Si {x} se calculó a partir de otros tensores, ninguno requería gradiente, o se calculó dentro "
        "de no_grad.)"),
    "not_leaf": (
        "{x} is not a leaf: it was computed (grad_fn={node}){where}, and PyTorch keeps .grad only for leaves, the "
        "tensors you create, to save memory. Call `{x}.retain_grad()` before backward() to keep it{leaf}.",
        "{x} no es una hoja: se calculó (grad_fn={node}){where}, y PyTorch guarda .grad solo para las hojas, los "
        "tensores que tú creas, para ahorrar memoria. Llama a `{x}.retain_grad()` antes de backward() para "
        "guardarlo{leaf}."),
    "leaf_hint": ("; or read the gradient of the leaf it comes from, `{leaf}.grad`",
                  "; o lee el gradiente de la hoja de la que viene, `{leaf}.grad`"),
    "replaced": (
        "The name {x} no longer refers to the tensor you created: it now holds a computed result "
        "(grad_fn={node}){where}, as after `{x} = {x} * 2`. The gradient went to the original leaf, which no "
        "variable holds any more. Give the result a new name (`y = {x} * 2`); to change the leaf's values, do it in "
        "place under no_grad: `with torch.no_grad(): {x}.mul_(2)`.",
        "El nombre {x} ya no se refiere al tensor que creaste: ahora guarda un resultado calculado "
        "(grad_fn={node}){where}, como tras `{x} = {x} * 2`. El gradiente fue a la hoja original, que ya no guarda "
        "ninguna variable. Dale otro nombre al resultado (`y = {x} * 2`); para cambiar los valores de la hoja, hazlo "
        "en el lugar dentro de no_grad: `with torch.no_grad(): {x}.mul_(2)`."),
    "modified_in_place": (
        "{x} was changed in place{where} after {loss} was computed from it: {loss}'s graph uses {x}'s old values, "
        "and {x} now has a new history (grad_fn={node}) on which {loss} does not depend, so its .grad stays None. "
        "Compute {loss} after the change, or change a copy (`{x}2 = {x} * 2`).",
        "{x} se modificó en el lugar{where} después de calcular {loss} a partir de él: el grafo de {loss} usa los "
        "valores viejos de {x}, y {x} tiene ahora una historia nueva (grad_fn={node}) de la que {loss} no depende, "
        "así que su .grad sigue en None. Calcula {loss} después del cambio, o modifica una copia "
        "(`{x}2 = {x} * 2`)."),
    "never_used": (
        "{loss} does not depend on {x}: no path in {loss}'s graph leads back to {x}. Check that {x} is really used "
        "to compute {loss} (a typo, another variable, a model whose parameters are not the tensors you hold).",
        "{loss} no depende de {x}: ningún camino del grafo de {loss} lleva de vuelta a {x}. Revisa que {x} se use de "
        "verdad para calcular {loss} (un error de tipeo, otra variable, un modelo cuyos parámetros no son los "
        "tensores que tienes)."),
    "no_graph": (
        "{loss} has no graph (requires_grad=False): none of the tensors it was computed from required grad when it "
        "was computed, so there is no path back to {x}. Usually it was computed under torch.no_grad(), or from "
        "values cut by .detach(), .data, .item() or NumPy.",
        "{loss} no tiene grafo (requires_grad=False): ninguno de los tensores con que se calculó requería gradiente "
        "en ese momento, así que no hay camino de vuelta a {x}. Suele pasar cuando se calculó dentro de "
        "torch.no_grad(), o con valores cortados por .detach(), .data, .item() o NumPy."),
    "graph_freed": (
        "The path from {x} to {loss} exists, but {loss}'s graph was already used by a backward(){where}, which "
        "freed the values it saved: a second backward() through it raises. Compute {loss} again before each "
        "backward(), or pass retain_graph=True to the first.",
        "El camino de {x} a {loss} existe, pero el grafo de {loss} ya lo usó un backward(){where}, que liberó los "
        "valores guardados: un segundo backward() por él da error. Calcula {loss} de nuevo antes de cada "
        "backward(), o pasa retain_graph=True al primero."),
    "not_backpropagated": (
        "The path from {x} to {loss} is intact: {x}.grad is filled when you call `{loss}.backward()`, which has not "
        "run on this graph yet.",
        "El camino de {x} a {loss} está intacto: {x}.grad se llena cuando llamas a `{loss}.backward()`, que todavía "
        "no se ejecutó sobre este grafo."),
    "has_grad": (
        "{x}.grad is not None: the path from {x} to {loss} is intact and {x} already has its gradient.",
        "{x}.grad no es None: el camino de {x} a {loss} está intacto y {x} ya tiene su gradiente."),
}
