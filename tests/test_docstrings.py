"""numpydoc's validation of the public API, as ``make docs`` runs it, without a docs build.

The public API is every class and function named in the ``__all__`` of a manytask module,
with the public methods and properties (cached ones too) that manytask classes define. Each
object of a converted module must pass the checks docs/conf.py sets
(``numpydoc_validation_checks``: a docstring with a summary, Parameters matching the
signature, Returns where it returns, an Examples section; the examples themselves run under
``--doctest-modules``). Unlike the docs build, this reads the raw docstring, so an
"Example" heading fails here (GL06).
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
import runpy
import warnings
from functools import cached_property
from pathlib import Path

import pytest

import manytask

numpydoc_docscrape = pytest.importorskip("numpydoc.docscrape")
numpydoc_validate = pytest.importorskip("numpydoc.validate")

CONF = runpy.run_path(str(Path(__file__).parents[1] / "docs" / "conf.py"))
CHECKS = CONF["numpydoc_validation_checks"]
EXCLUDED = [re.compile(pattern) for pattern in CONF["numpydoc_validation_exclude"]]


def _import(name):
    """The module, or None when it needs an optional extra that is not installed."""
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as error:
        if error.name is None or error.name.partition(".")[0] == "manytask":
            raise
        return None


def _public_api() -> dict[str, object]:
    """Qualified name -> object, for the public classes, functions, methods and properties."""
    modules = [manytask] + [
        _import(info.name) for info in pkgutil.walk_packages(manytask.__path__, "manytask.")
    ]
    api = {}
    for module in modules:
        for name in getattr(module, "__all__", []):  # (None, a skipped module, has none)
            obj = getattr(module, name)
            if (inspect.isclass(obj) or inspect.isfunction(obj)) and obj.__module__.startswith(
                "manytask"
            ):
                api.setdefault(f"{obj.__module__}.{obj.__qualname__}", obj)
    for cls in [obj for obj in api.values() if inspect.isclass(obj)]:
        for base in cls.__mro__:  # inherited members too, named where they are defined
            if not base.__module__.startswith("manytask"):
                continue
            for name, member in vars(base).items():
                if name.startswith("_") and name != "__call__":
                    continue
                if inspect.isfunction(member) or isinstance(member, (property, cached_property)):
                    api.setdefault(f"{base.__module__}.{base.__qualname__}.{name}", member)
    return api


def _errors(obj) -> list[tuple[str, str]]:
    with warnings.catch_warnings():  # numpydoc warns of an unknown section; GL06 reports it
        warnings.simplefilter("ignore", UserWarning)
        report = numpydoc_validate.validate(numpydoc_docscrape.get_doc_object(obj))
    return [(code, message) for code, message in report["errors"] if code in CHECKS]


API = _public_api()
VALIDATED = sorted(name for name in API if not any(p.search(name) for p in EXCLUDED))


def test_the_whole_public_api_is_validated():
    assert len(VALIDATED) > 600  # 725 public objects at 2026-12-02; none left out


@pytest.mark.parametrize("name", VALIDATED)
def test_docstring_passes_numpydoc_validation(name):
    errors = _errors(API[name])
    assert not errors, "\n".join(f"{name}: {code} {message}" for code, message in errors)


def test_validation_catches_a_missing_section_and_an_example_heading():
    def undocumented(x):
        """Twice x.

        Example
        -------
        >>> undocumented(1)
        2
        """
        return 2 * x

    codes = {code for code, _ in _errors(undocumented)}
    assert {"PR01", "RT01", "GL06", "EX01"} <= codes
