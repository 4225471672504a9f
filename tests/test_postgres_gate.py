"""A PostgreSQL test may be skipped on a developer's machine without a server,
never under CI=true: there a skipped one fails the run."""

from __future__ import annotations

import pytest

pytest_plugins = ["pytester"]

INNER_CONFTEST = """
from tests.conftest import pytest_collection_modifyitems, pytest_configure, pytest_runtest_makereport
"""
INNER_TESTS = """
import pytest

@pytest.fixture
def postgres_server():
    pytest.skip("no server here")

def test_needs_postgres(postgres_server):
    pass

@pytest.mark.postgres
def test_marked():
    pytest.skip("skipped by hand")

def test_other():
    pytest.skip("not about PostgreSQL")
"""


@pytest.mark.parametrize("ci", ["true", ""])
def test_a_skipped_postgres_test_fails_only_under_ci(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, ci: str
) -> None:
    monkeypatch.setenv("CI", ci)
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")
    pytester.makeconftest(INNER_CONFTEST)
    pytester.makepyfile(INNER_TESTS)
    result = pytester.runpytest("-p", "no:cacheprovider", "-rfs")
    if ci:
        # A skip in setup reports as an error, one in the test as a failure.
        result.assert_outcomes(errors=1, failed=1, skipped=1)
        result.stdout.fnmatch_lines(["*a PostgreSQL test was skipped under CI=true*no server*"])
    else:
        result.assert_outcomes(skipped=3)
