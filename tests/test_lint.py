"""House style as tests: ruff over the code, mypy over the engine (STYLE.md: no blanket ignores)."""
import os
import shutil
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _run(*command):
    return subprocess.run(list(command), cwd=ROOT, capture_output=True, text=True, timeout=300, check=False)


@pytest.mark.skipif(shutil.which("ruff") is None, reason="ruff is not installed (pip install -e '.[test]')")
def test_ruff_is_clean():
    result = _run("ruff", "check", "src", "tests", "bench", "examples", "tools")
    assert result.returncode == 0, result.stdout + result.stderr


def test_mypy_on_the_engine():
    pytest.importorskip("mypy")
    result = _run(sys.executable, "-m", "mypy")
    assert result.returncode == 0, result.stdout + result.stderr
