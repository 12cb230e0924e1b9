"""Running a program written for PyTorch twice, with ``import gradiente as torch`` here and with real PyTorch in a
subprocess, and comparing what the two print (``tests/test_examples.py``, ``tests/test_programs.py``).

Library names count as one: ``gradiente.Size([3])`` reads as ``torch.Size([3])``."""
import contextlib
import io
import json
import math
import os
import re
import subprocess
import sys

NUMBER = re.compile(r"-?\d+\.?\d*(?:e[-+]?\d+)?%?")


def as_torch(source):
    """The same program written for PyTorch."""
    return (source.replace("import gradiente as torch", "import torch").replace("from gradiente", "from torch")
            .replace("import gradiente.", "import torch."))


def run_here(path, argv=()):
    """Run a program in this process (with gradiente) and return what it printed."""
    out = io.StringIO()
    old_argv = sys.argv
    sys.argv = [str(path)] + list(argv)
    try:
        with contextlib.redirect_stdout(out):
            exec(compile(path.read_text(), str(path), "exec"), {"__name__": "__main__", "__file__": str(path)})
    finally:
        sys.argv = old_argv
    return out.getvalue()


_RUNNER = """
import contextlib, io, json, sys
results = []
for path, argv, source in json.load(sys.stdin):
    out = io.StringIO()
    sys.argv = [path] + argv
    with contextlib.redirect_stdout(out):
        exec(compile(source, path, "exec"), {"__name__": "__main__", "__file__": path})
    results.append(out.getvalue())
print(json.dumps(results))
"""


def run_with_torch(runs, cwd, timeout=300):
    """What each ``(path, argv)`` of ``runs`` prints with real PyTorch, all in one subprocess (one torch import),
    one thread as in the tests."""
    jobs = [[str(path), list(argv), as_torch(path.read_text())] for path, argv in runs]
    env = dict(os.environ, OMP_NUM_THREADS="1")
    done = subprocess.run([sys.executable, "-c", _RUNNER], input=json.dumps(jobs), capture_output=True, text=True,
                          cwd=cwd, env=env, timeout=timeout, check=False)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def assert_same_output(ours, theirs, rtol, atol):
    """Line by line: the words equal (the library's own name read as ``torch``), the numbers within tolerance."""
    ours_lines = ours.replace("gradiente.", "torch.").strip().splitlines()
    their_lines = theirs.strip().splitlines()
    assert len(ours_lines) == len(their_lines), (ours, theirs)
    for mine, reference in zip(ours_lines, their_lines):
        assert NUMBER.sub("#", mine) == NUMBER.sub("#", reference), (mine, reference)
        for a, b in zip(NUMBER.findall(mine), NUMBER.findall(reference)):
            x, y = float(a.rstrip("%")), float(b.rstrip("%"))
            assert math.isclose(x, y, rel_tol=rtol, abs_tol=atol), (mine, reference)
