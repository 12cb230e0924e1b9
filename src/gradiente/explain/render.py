"""Writing a walkthrough: plain text for terminals, Markdown with LaTeX for notebooks, in English or Spanish."""
from ..viz.summary import format_shape, format_values
from .messages import words
from .notes import notes
from .symbols import bracket

__all__ = ["to_markdown", "to_text"]


class _Writer:
    """What both formats share: the words of one language and how numbers are written."""

    def __init__(self, explanation, lang, markdown):
        self.e = explanation
        self.w = words(lang)
        self.lang = lang
        self.md = markdown

    def values(self, array):
        text = format_values(array, self.e.max_elems, words=self.w["words"])
        return f"`{text}`" if self.md else text

    def code(self, text):
        return f"`{text}`" if self.md else text

    def op_name(self, step):
        if step.op is not None:
            return step.op[0 if self.lang == "en" else 1]
        doc = (type(step.node).__doc__ or "").strip().splitlines()
        return doc[0].split(";")[0].strip() if doc else ""

    def node_ref(self, node):
        """How a step names another node: a leaf by its name, an op by class name and step number."""
        if hasattr(node, "variable"):
            return self.code(self.e.names.leaf(node.variable))
        number = self.e.step_number(node)
        name = self.code(type(node).__name__)
        return name if number is None else f"{name} ({self.w['step_of'].format(n=number)})"

    def rule(self, step):
        if step.user_defined:
            return self.w["user_rule"].format(name=self.code(step.name[:-len("Backward")] or step.name))
        if self.md and step.latex:
            text = f"${step.latex}$"
        else:
            text = self.code(step.formula) if step.formula else ""
        if step.attributes:
            attrs = ", ".join(f"{sym} = {value}" for sym, value in step.attributes)
            text += f"   {self.w['with']} " + (f"${attrs}$" if self.md else attrs)
        return f"{self.w['rule']}: {text}"

    def meeting(self, step):
        """The lines saying which gradients are summed at a node reached along several edges: a header,
        then one sub-line per gradient and one for the sum (``(1, text)`` marks a sub-line)."""
        lines = [self.w["meet"].format(count=len(step.contributions)) + ":"]
        counts = {}
        for consumer, _, _ in step.contributions:
            counts[consumer] = counts.get(consumer, 0) + 1
        plus = "\\+ " if self.md else "+ "
        for k, (consumer, input_nr, grad) in enumerate(step.contributions):
            source = self.node_ref(consumer)
            if counts[consumer] > 1:
                source += f", {self.w['input_nr'].format(i=input_nr)}"
            sign = ("" if self.md else "  ") if k == 0 else plus
            lines.append((1, f"{sign}{self.values(grad)}  ({self.w['from'].format(name=source)})"))
        lines.append((1, f"= {self.values(step.incoming)}"))
        return lines

    def passes(self, step):
        lines = []
        several = len(step.passes) > 1
        for p in step.passes:
            key = "input_to" if several else "passes_to"
            target = self.w[key].format(i=p.input_nr, target=self.node_ref(p.target))
            if p.local is not None and p.product is not None:
                times = " $\\odot$ " if self.md else " × "
                text = f"{self.values(step.incoming)}{times}{self.values(p.local)} = "
                if p.reduced_to is not None:
                    reduced = self.w["broadcast"].format(shape=format_shape(p.reduced_to))
                    text += f"{self.values(p.product)}, {reduced}: "
                text += self.values(p.passed)
                lines.append(f"{target}: {text}")
            else:
                lines.append(f"{target}: {self.values(p.passed)}")
        return lines

    def heading(self, step):
        if step.is_leaf:
            what = self.w["leaf"].format(name=self.code(step.leaf_name))
            accumulate = self.w["leaf_op"].split(": ", 1)[-1]
            return f"{self.w['step'].format(n=step.number)} · {what} ({self.code('AccumulateGrad')}): {accumulate}"
        title = f"{self.w['step'].format(n=step.number)} · {self.code(step.name)}"
        op = self.op_name(step)
        if op:
            title += f": {op}"
        shown = step.out_name or step.expression
        if shown:
            title += f"  ({self.w['output_is'].format(name=self.code(shown))})"
        return title

    def symbolic(self, step):
        """The local derivative with respect to each input, named (``∂/∂x = cos(x)``); its values are
        in the lines that pass the gradient on."""
        if not step.symbolic:
            return []
        parts = [f"∂/∂{bracket(name)} = {form}" for name, form, (nxt, _) in
                 zip(step.input_names, step.symbolic, step.node.next_functions) if nxt is not None]
        return [f"{self.w['symbolic']}: " + ", ".join(self.code(part) for part in parts)] if parts else []

    def notes(self, steps):
        return notes(steps, self.lang)

    def body(self, step):
        lines = []
        if step.is_leaf:
            if step.contributions:
                lines += self.meeting(step)
            lines.append(f"{self.w['receives'].format(name=self.code(step.leaf_name))} {self.values(step.incoming)}")
            return lines
        lines.append(self.rule(step))
        lines += self.symbolic(step)
        if step.contributions:
            lines += self.meeting(step)
        elif step.incoming is not None:
            lines.append(f"{self.w['incoming']}: {self.values(step.incoming)}")
        lines += self.passes(step)
        return lines

    def result_lines(self):
        out = []
        output = self.e.output_name
        for tensor, name, grad, previous in self.e.results:
            if self.e.record.accumulated:
                stored = tensor.grad._data if tensor.grad is not None else grad
                line = self.w["grad_is"].format(name=self.code(name + ".grad"), grad=self.values(stored))
                if previous is not None:
                    line += " " + self.w["previous"].format(previous=self.values(previous))
            else:
                line = self.w["grad_not_stored"].format(output=output, name=name, grad=self.values(grad),
                                                        grad_attr=self.code(name + ".grad"))
            out.append(line)
        return out

    def visible_steps(self):
        """All steps, or the first and last halves of ``max_steps`` with None between them; and how
        many steps are left out."""
        head, tail = self.e.window()
        total = len(self.e.record.order)
        if head + tail >= total:
            return [self.e.step(i) for i in range(total)], None
        steps = [self.e.step(i) for i in range(head)] + [None] + [self.e.step(i) for i in range(total - tail, total)]
        return steps, total - head - tail


def to_text(explanation, lang):
    w = _Writer(explanation, lang, markdown=False)
    e = explanation
    lines = [w.w["title"].format(output=e.output_name), _start(w, e), ""]
    if not e.record.order:
        lines.append(w.w["no_steps"].format(output=e.output_name))
    steps, omitted = w.visible_steps()
    for step in steps:
        if step is None:
            lines += [w.w["omitted"].format(count=f"{omitted:,}", max_steps=e.max_steps), ""]
            continue
        lines.append(w.heading(step))
        lines += [("      " + line[1]) if isinstance(line, tuple) else ("    " + line) for line in w.body(step)]
        lines.append("")
    found = w.notes(steps)
    if found:
        lines.append(w.w["notes"])
        lines += ["    " + note for note in found] + [""]
    lines.append(w.w["result"])
    lines += ["    " + line for line in w.result_lines()]
    return "\n".join(lines)


def to_markdown(explanation, lang):
    w = _Writer(explanation, lang, markdown=True)
    e = explanation
    lines = [f"#### {w.w['title'].format(output=w.code(e.output_name))}", "", _start(w, e), ""]
    if not e.record.order:
        lines.append(w.w["no_steps"].format(output=w.code(e.output_name)))
    steps, omitted = w.visible_steps()
    for step in steps:
        if step is None:
            lines += [f"*{w.w['omitted'].format(count=f'{omitted:,}', max_steps=e.max_steps)}*", ""]
            continue
        lines.append(f"**{w.heading(step)}**")
        lines.append("")
        lines += [f"  - {line[1]}" if isinstance(line, tuple) else f"- {line}" for line in w.body(step)]
        lines.append("")
    found = w.notes(steps)
    if found:
        lines += [f"**{w.w['notes']}**", ""] + [f"- {note}" for note in found] + [""]
    lines.append(f"**{w.w['result']}**")
    lines.append("")
    lines += [f"- {line}" for line in w.result_lines()]
    return "\n".join(lines)


def _start(w, e):
    if e.gradient_given:
        return w.w["start_given"].format(grad=w.values(e.record.root_grad))
    name = e.output_name
    derivative = f"$\\partial {name}/\\partial {name}$" if w.md else f"d{name}/d{name}"
    return w.w["start"].format(derivative=derivative, grad=w.values(e.record.root_grad))
