"""The adversarial suite's table (issue 13): per group, cases tried, same as torch, clear but different,
silent difference; and each case that is not the same, with both outcomes.

    python tools/adversarial_report.py            # the table, then the cases that differ
    python tools/random_programs.py --report      # the random programs' table, then this one

The cases are those of ``tests/test_adversarial.py`` (run there under pytest, compared in the same way).
"""
import collections
import sys
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "src"))

import test_adversarial as suite  # noqa: E402


def table(rows):
    """A Markdown table of ``(group, tried, same, clear, silent)`` rows, with a total."""
    header = "| group | cases tried | same as torch | clear but different | silent difference |\n|---|---|---|---|---|"
    total = [sum(r[i] for r in rows) for i in range(1, 5)]
    lines = [f"| {r[0]} | {r[1]} | {r[2]} | {r[3]} | {r[4]} |" for r in rows]
    return "\n".join([header, *lines, f"| **all** | {total[0]} | {total[1]} | {total[2]} | {total[3]} |"])


def main(argv=None):
    counts = {group: collections.Counter() for group in suite.GROUPS}
    notes = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for case in suite.CASES:
            verdict, why, ours, theirs = suite.classify(case)
            counts[case.group][verdict] += 1
            if verdict != suite.SAME:
                known = f"\n    known: {case.known}" if case.known else ""
                notes.append(f"- {case.group} / {case.name}: {verdict} {why}\n    gradiente: {str(ours)[:300]}\n"
                             f"    torch:     {str(theirs)[:300]}{known}")
    rows = [(g, sum(c.values()), c[suite.SAME], c[suite.CLEAR], c[suite.SILENT]) for g, c in counts.items()]
    print(table(rows))
    if notes:
        print("\n" + "\n".join(notes))
    return 0


if __name__ == "__main__":
    sys.exit(main())
