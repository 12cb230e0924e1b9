"""Warnings PyTorch raises from its C++ core: their words, how often they print, and the line they name.

PyTorch attributes such a warning to the Python line that called into C++ (the user's), whatever path the call took;
gradiente's core and ops stand where that C++ stands, behind wrappers PyTorch does not have (the sparse check,
NumPy's argument names), so each of these warnings must still name the user's line (``core/warnings_at_caller.py``).
One program runs under both libraries with Python's default filter, and stderr must say the same."""
import re
import subprocess
import sys

import pytest

pytest.importorskip("torch")

PROGRAM = """\
import sys, importlib
import numpy as np
torch = importlib.import_module(sys.argv[1])
a = torch.tensor(torch.ones(2))
b = torch.ones(2).new_tensor(torch.ones(2))
x = torch.ones(1, requires_grad=True)
c = torch.tensor([x, x])
d = float(x)
e = torch.tensor([np.zeros(2), np.ones(2)])
f = torch.FloatTensor([np.eye(3)[0], np.eye(3)[1]])
g = (x * 2).grad
h = (x * 3).grad
"""


def warnings_printed(library, tmp_path):
    script = tmp_path / "program.py"
    script.write_text(PROGRAM)
    result = subprocess.run([sys.executable, "-W", "default", str(script), library], capture_output=True,
                            text=True, check=True)
    # "<file>:<line>: <Category>: <message>": the file must be the program's, the rest equal
    found = re.findall(r"^(.*):(\d+): (\w+): (.*)$", result.stderr, flags=re.MULTILINE)
    return [(path == str(script), int(line), category, message) for path, line, category, message in found]


def test_cpp_warnings_name_the_users_line_once_as_pytorchs_do(tmp_path):
    ours, theirs = warnings_printed("gradiente", tmp_path), warnings_printed("torch", tmp_path)
    assert ours == theirs
    lines = [line for _, line, _, _ in theirs]
    # the copy construction twice (two texts), the scalar once (a second reading is silent), the arrays once, the
    # non-leaf .grad from each of its two lines
    assert lines == [4, 5, 7, 9, 11, 12] and all(users for users, _, _, _ in theirs)
