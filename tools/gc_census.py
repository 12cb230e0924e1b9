"""How many objects recording leaves for Python's cyclic garbage collector, per recorded op, and of which kinds.

    python tools/gc_census.py               # the 600-op chain and an MLP forward, the 12 commonest kinds each
    python tools/gc_census.py --top 30      # more kinds

The collector walks every tracked container object (tuples, lists, dicts, instances of Python classes) again and
again while a graph is alive, so a long graph costs in collections what it holds in tracked objects (PyTorch's
nodes, tensors and edges are C++ and invisible to it). Two counts per program, each divided by its number of
recorded nodes:

* *born*: tracked objects the recording left alive, counted with the collector switched off. Every one of them
  is scanned at least once, by the next collection.
* *kept*: those still tracked after a full collection, which untracks a tuple once it finds that the tuple holds
  nothing trackable (a tuple inside a tuple may need a second one). These are scanned by every full collection
  for as long as the graph lives.

A kind is a type's name; a tuple is shown by the kinds of its elements, two levels deep, e.g. ``((Node,int))``
for ``next_functions`` of one edge. ``tests/test_gc_census.py`` holds the counts under fixed bounds.
"""
import argparse
import collections
import gc

import numpy as np

import gradiente as torch
from gradiente.core.node import AccumulateGrad, Node


def kind(obj, depth=0):
    """A short name for what ``obj`` is: its type's name; a tuple by its elements' kinds, two levels deep."""
    if type(obj) is tuple and depth < 2:
        return "(" + ",".join(kind(e, depth + 1) for e in obj) + ")"
    return "Node" if isinstance(obj, Node) and depth else type(obj).__name__


def _tracked_kinds():
    return collections.Counter(kind(o) for o in gc.get_objects())


def recorded_nodes(*outputs):
    """The nodes of the graph behind ``outputs``, leaves' AccumulateGrad left out: one per recorded op."""
    found, stack = {}, [t.grad_fn for t in outputs]
    while stack:
        node = stack.pop()
        if node is not None and id(node) not in found:
            found[id(node)] = node
            stack.extend(n for n, _ in node.next_functions)
    return [n for n in found.values() if not isinstance(n, AccumulateGrad)]


def census(build):
    """Run ``build()`` (which records a graph and returns its outputs) and count what it left tracked.

    Returns ``(nodes, born, kept)``: the number of recorded nodes, and two Counters of kinds, the tracked objects
    alive before any collection ran over them and those still tracked after a full collection. The collector is
    switched off only while ``build`` runs, and put back as it was."""
    build()                         # once first: lazy imports and caches are not the graph's
    _tracked_kinds()                # and the census's own first run (it makes a few weak references once)
    gc.collect()
    before = _tracked_kinds()
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        outputs = build()
        born = _tracked_kinds() - before
    finally:
        if was_enabled:
            gc.enable()
    gc.collect()
    kept = _tracked_kinds() - before
    nodes = len(recorded_nodes(*outputs))
    # the census's own: the tuple ``build`` returned, and the Counters alive as it counts (one, then two)
    own = collections.Counter({kind(outputs): 1, "Counter": 1})
    return nodes, born - own, kept - own - collections.Counter({"Counter": 1})


def chain(length=600):
    """The chain of issue 14: ``+ y, * z, sin, exp, ** 2, / 3.0`` in turn on 3-element float32 tensors."""
    def build():
        x = torch.randn(3, requires_grad=True)
        y, z = torch.randn(3), torch.randn(3)
        steps = (lambda h: h + y, lambda h: h * z, torch.sin, torch.exp, lambda h: h ** 2, lambda h: h / 3.0)
        h = x
        for i in range(length):
            h = steps[i % len(steps)](h)
        return (h,)
    return build


def mlp(batch=64):
    """An MLP 784-256-256-10 forward with its cross-entropy loss, the modules made beforehand."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(784, 256), torch.nn.ReLU(), torch.nn.Linear(256, 256),
                                torch.nn.ReLU(), torch.nn.Linear(256, 10))
    x = torch.tensor(np.random.RandomState(0).randn(batch, 784).astype(np.float32))
    target = torch.tensor(np.arange(batch) % 10)

    def build():
        return (torch.nn.functional.cross_entropy(model(x), target),)
    return build


PROGRAMS = {"600-op chain": chain, "MLP 784-256-256-10 forward, batch 64": mlp}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--top", type=int, default=12, help="how many kinds to list per program")
    args = parser.parse_args()
    for name, program in PROGRAMS.items():
        nodes, born, kept = census(program())
        print(f"{name}: {nodes} recorded nodes; tracked objects per node: "
              f"born {sum(born.values()) / nodes:.2f}, kept after a collection {sum(kept.values()) / nodes:.2f}")
        print(f"  {'kind':48} {'born':>7} {'kept':>7}")
        for k, _ in (born + kept).most_common(args.top):
            print(f"  {k[:48]:48} {born[k] / nodes:7.2f} {kept[k] / nodes:7.2f}")


if __name__ == "__main__":
    main()
