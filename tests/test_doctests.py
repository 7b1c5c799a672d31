"""The ``>>>`` examples in the package's docstrings run, and pass.

Modules are imported by their ``taskloom.*`` names (the repository root is the
package directory, so collecting the files by path would give them the wrong names).
"""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import importlib.util


SUBPACKAGES = ("tools", "server", "harness", "resources", "prompts")
FLAGS = doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS


def _modules_with_examples() -> list[str]:
    names = []
    for sub in SUBPACKAGES:
        package = importlib.import_module(f"taskloom.{sub}")
        names.append(package.__name__)
        names += [info.name for info in pkgutil.walk_packages(package.__path__, prefix=f"{package.__name__}.")]
    found = []
    for name in sorted(names):
        spec = importlib.util.find_spec(name)
        origin = spec.origin if spec is not None else None
        if origin and origin.endswith(".py") and ">>>" in open(origin, encoding="utf-8").read():
            found.append(name)
    return found


MODULES = _modules_with_examples()


def test_the_package_has_examples() -> None:
    assert len(MODULES) >= 25, MODULES  # the modules that carry examples are found (not silently none)


@pytest.mark.parametrize("name", MODULES)
def test_examples_pass(name: str) -> None:
    module = importlib.import_module(name)
    finder = doctest.DocTestFinder()
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    tests = [t for t in finder.find(module, name) if t.examples]
    assert tests, f"{name} mentions >>> but has no runnable example"
    for test in tests:
        runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples failed in {name}"
