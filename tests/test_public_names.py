"""PyTorch 2.13's public names, namespace by namespace, against gradiente's (issue 16): every name gradiente
lacks is listed in docs/public-names.md with the reason it is absent, and every name listed there is still
absent. ``python tools/public_names.py`` prints the survey; ``--write`` updates the table."""
import os
import sys

import pytest

pytest.importorskip("torch")
sys.path.insert(0, os.path.join(os.path.dirname(__file__), os.pardir, "tools"))
import public_names

#: the share of all of PyTorch's public names gradiente has, never to fall below this
COVERAGE_FLOOR = 0.87
#: the same share among the names in scope: PyTorch's, less those the table lists as absent by design
IN_SCOPE_FLOOR = 1.0


@pytest.fixture(scope="module")
def survey():
    return public_names.survey()


def test_every_missing_name_is_listed_with_its_reason(survey):
    table = public_names.read_table()
    unlisted = [(public_names.label(space), name) for space, (_, lacking) in survey.items() for name in lacking
                if (public_names.label(space), name) not in table]
    assert unlisted == [], "missing from gradiente and from docs/public-names.md (implement, or run " \
                           "tools/public_names.py --write and give the reason)"
    assert [key for key, reason in table.items() if not reason] == [], "a row without a reason"


def test_no_listed_name_exists(survey):
    lacking = {(public_names.label(space), name) for space, (_, names) in survey.items() for name in names}
    stale = sorted(set(public_names.read_table()) - lacking)
    assert stale == [], "listed as absent but gradiente has them: run tools/public_names.py --write"


def test_coverage_does_not_fall(survey):
    fraction, total, missing = public_names.coverage(survey)
    print(f"public-name coverage: {total - missing} of {total} ({fraction:.1%})")
    assert fraction >= COVERAGE_FLOOR
    in_scope, scope, gaps = public_names.in_scope_coverage(survey, public_names.read_table())
    print(f"in scope: {total - missing} of {scope} ({in_scope:.1%}), {gaps} gaps")
    assert in_scope >= IN_SCOPE_FLOOR
