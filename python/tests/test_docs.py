"""The examples in the package's docstrings, docs/python.md and README.md (``>>>``) are run and
must print what they show."""

from __future__ import annotations

import doctest
import unittest

import hus
import hus.bot
import hus.env
from support import REPO


def load_tests(loader, tests, ignore):
    finder = doctest.DocTestFinder()
    found = []
    found += finder.find(hus, "hus", globs={"hus": hus})
    # The classes and functions of the extension module (its constants are plain ints,
    # whose own docstrings are Python's).
    for name in hus.__all__:
        obj = getattr(hus, name)
        if callable(obj):
            found += finder.find(obj, f"hus.{name}", module=False, globs={"hus": hus})
    for module in (hus.bot, hus.env):
        found += finder.find(module, module.__name__, globs={"hus": hus})
    found = [test for test in found if test.examples]
    assert len(found) >= 8, f"only {len(found)} docstrings with examples found"
    for test in found:
        tests.addTest(doctest.DocTestCase(test))
    # And the examples of docs/python.md and of README's section on the package.
    for page in ("docs/python.md", "README.md"):
        tests.addTest(doctest.DocFileSuite(str(REPO / page), module_relative=False))
    return tests


if __name__ == "__main__":
    unittest.main()
