"""Functions that child processes run in tests/test_multiprocessing.py. A process started by 'spawn' imports the
module of its target, so they live here, in a module that imports gradiente but not PyTorch (a fast start)."""
import os

import gradiente


def add_to_weight(model, amount):
    """Adds ``amount`` to every weight of ``model`` in place (a child training a shared model)."""
    with gradiente.no_grad():
        model.weight.add_(amount)


def fail(rank):
    raise ValueError(f"rank {rank} failed")


def exit_with_code(rank):
    os._exit(3)


def report_after(event, queue, tensor):
    """Waits for the parent's write, then sends back what this process reads."""
    event.wait(10)
    queue.put(tensor.tolist())


def hogwild_train(rank, model, inputs, targets, steps):
    """Plain SGD on this process's shard of a regression problem, on the parameters every process shares."""
    gradiente.manual_seed(rank)
    optimizer = gradiente.optim.SGD(model.parameters(), lr=0.05)
    for step in range(steps):
        index = (step * 8 + rank * 4) % len(inputs)
        x, y = inputs[index:index + 8], targets[index:index + 8]
        optimizer.zero_grad()
        loss = ((model(x) - y) ** 2).mean()
        loss.backward()
        optimizer.step()
