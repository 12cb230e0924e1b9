"""The gradiente demo: what the README's first command runs.

1. A tensor that records its operations, and backward() filling .grad (PyTorch's own tutorial example).
2. The computation graph, drawn as text, and the chain rule walked through step by step.
3. A small network trained on scikit-learn's handwritten digits, with a loss plot saved to PNG.

    python examples/demo.py            # all three
    python examples/demo.py --no-train # only 1 and 2 (no scikit-learn needed)
"""
import argparse
import os
import subprocess
import sys

import gradiente as torch
from gradiente import viz


def autograd_tour():
    print("1. Tensors that remember how they were made")
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = (5 * (x + 1) ** 2).mean()
    print("   x =", x)
    print("   y = mean(5·(x+1)²) =", y)
    print("   y.grad_fn =", y.grad_fn.name(), "→", [f.name() for f, _ in y.grad_fn.next_functions if f])
    y.backward()
    print("   after y.backward(), x.grad = dy/dx = 10·(x+1)/3 =", x.grad)
    return x


def graph_and_chain_rule(lang):
    print("\n2. The graph, and the chain rule step by step")
    x = torch.tensor([0.0, 1.0, 2.0], requires_grad=True)
    y = ((x + 1) ** 2 + 2).mean()
    print(viz.to_text(y))
    print(torch.explain(y, lang=lang))


def train():
    print("\n3. Training a small network on handwritten digits (examples/train_digits.py)")
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "train_digits.py")
    subprocess.run([sys.executable, script], check=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--no-train", action="store_true", help="skip the training part")
    ap.add_argument("--lang", default="en", choices=["en", "es"], help="language of the chain-rule walkthrough")
    args = ap.parse_args()
    autograd_tour()
    graph_and_chain_rule(args.lang)
    if not args.no_train:
        train()


if __name__ == "__main__":
    main()
