"""The seed notebooks (../shared/conformance) against PyTorch 2.13's recorded output: every cell equal."""
import os
import subprocess
import sys

import pytest

RUNNER = os.path.join(os.path.dirname(__file__), "..", "..", "shared", "conformance", "run_seeds.py")


@pytest.mark.skipif(not os.path.exists(RUNNER), reason="../shared/conformance is not present")
def test_seed_notebooks_match_pytorch():
    proc = subprocess.run([sys.executable, RUNNER], capture_output=True, text=True, timeout=600,
                          check=False)
    summary = proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else proc.stderr[-2000:]
    assert proc.returncode == 0, f"{summary}\n{proc.stdout[-6000:]}"
    assert summary.endswith(" 0 failed"), summary
