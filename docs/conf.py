"""Sphinx configuration of the manytask documentation (``make docs``).

The API reference is generated from the public modules' ``__all__`` at every build (see
``_write_api_pages``), so a name added to or removed from ``__all__`` needs no edit here.
Nothing is executed beyond importing manytask, and nothing is fetched from the network at
build or view time: no MathJax, no web fonts, no version switcher.
"""

import importlib
import inspect
import re
from pathlib import Path

import manytask

project = "manytask"
author = "the manytask developers"
copyright = "the manytask developers"  # noqa: A001 (Sphinx's name)
release = manytask.__version__
version = release

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "numpydoc",
    "myst_parser",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
# docs/results/ holds the committed outputs of `manytask reproduce`; the reproductions/ pages
# include them, so they are not pages of their own.
exclude_patterns = ["_build", "results"]
templates_path = ["_templates"]

# Autodoc / autosummary / numpydoc. Class members are listed by our autosummary template,
# not by numpydoc.
autosummary_generate = True
autosummary_imported_members = True
autodoc_default_options = {"members": True, "member-order": "bysource"}
autodoc_typehints = "none"
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
# numpydoc's validation (on when this set of checks is not empty) of every object the API
# pages render (functions, classes, and the methods and properties our autosummary template
# lists); a violation is a Sphinx warning, so an error under -W. tests/test_docstrings.py
# runs the same checks under pytest. The checks are the structure STYLE.md asks for, not
# numpydoc's style nits (summary verb mood, capitals and full stops, extended summary, See
# Also), which must not fail a build:
#   GL08 the object has a docstring;  SS01 it has a summary line;
#   GL06 no unknown section ("Example" is one: numpydoc reads only "Examples", and drops
#        an unknown section from the page);
#   GL07 sections in numpydoc's order;
#   PR01 every parameter of the signature documented;  PR02 no parameter that is not in
#        the signature;  PR03 documented in the signature's order;
#   RT01 a Returns section if the function returns a value;  YD01 Yields for a generator;
#   EX01 an Examples section (pytest --doctest-modules runs it).
numpydoc_validation_checks = {
    "GL06", "GL07", "GL08", "SS01", "PR01", "PR02", "PR03", "RT01", "YD01", "EX01"
}  # fmt: skip
# Every public module is validated (patterns here would be matched, with re.search, against
# the documented name, e.g. manytask.boost.AdaBoost); constants are added below.
numpydoc_validation_exclude = set()
numpydoc_xref_param_type = False
nitpicky = False

# The committed results pages (docs/results/*.md) are GitHub Markdown: they link CSV files
# beside them and may skip heading levels; neither is an error of the documentation.
myst_heading_anchors = 3
suppress_warnings = ["myst.header", "myst.xref_missing"]

# PyData theme, self-contained: no icon links to remote sites, no analytics, no switcher.
html_theme = "pydata_sphinx_theme"
html_title = f"manytask {release}"
html_static_path: list[str] = []
html_show_sourcelink = False
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "navbar_align": "left",
    # A search icon instead of the wide search field keeps the navbar on one line.
    "navbar_persistent": [],
    "navbar_end": ["search-button", "theme-switcher"],
    "header_links_before_dropdown": 6,
    "footer_start": ["copyright"],
    "footer_end": [],
}
# Pages without sub-pages need no section navigation on the left.
html_sidebars = {"index": [], "getting-started": [], "families/*": []}

# One reference page per public module: (module, title). Submodules listed in a module's
# __all__ (e.g. ``manytask.bo.problems``) get their own page and are skipped in the parent's.
API_MODULES = [
    ("manytask.kernels", "Kernels"),
    ("manytask.posterior", "Multi-task posteriors"),
    ("manytask.linalg", "Linear algebra"),
    ("manytask.simplex", "Weights on the simplex"),
    ("manytask.bo", "Multi-task Bayesian optimisation"),
    ("manytask.bo.problems", "Test problems"),
    ("manytask.bo.metrics", "Regret and Pareto metrics"),
    ("manytask.bo.optuna", "An Optuna sampler"),
    ("manytask.boost", "Multi-source boosting"),
    ("manytask.boost.federated", "Federated boosting"),
    ("manytask.boost.federated.dask", "Federated boosting on Dask"),
    ("manytask.boost.federated.flower", "Federated boosting on Flower"),
    ("manytask.itl", "Infinite task learning"),
    ("manytask.datasets", "Data sets"),
]


def _public_names(module_name):
    """The public names of a module: its ``__all__``, else its non-underscore callables."""
    module = importlib.import_module(module_name)
    names = getattr(module, "__all__", None)
    if names is None:
        names = [
            name
            for name, obj in vars(module).items()
            if not name.startswith("_")
            and (inspect.isclass(obj) or inspect.isfunction(obj))
            and getattr(obj, "__module__", "").startswith(module_name)
        ]
    return [
        name
        for name in names
        if not name.startswith("__") and not inspect.ismodule(getattr(module, name))
    ]


# A constant (a dict, a tuple) has no docstring of its own: numpydoc would validate its
# type's. Its ``#:`` comment is what the page shows, so it is not validated.
numpydoc_validation_exclude |= {
    rf"^{re.escape(module_name)}\.{name}$"
    for module_name, _ in API_MODULES
    for name in _public_names(module_name)
    if not callable(getattr(importlib.import_module(module_name), name))
}


def _write_api_pages(app, config):
    """Write ``api/<module>.rst``: an autosummary table of the module's public names."""
    api = Path(app.srcdir) / "api"
    api.mkdir(exist_ok=True)
    for module_name, title in API_MODULES:
        heading = f"``{module_name}``: {title}"
        lines = [
            ".. This file is generated by docs/conf.py at every build; do not edit.",
            "",
            heading,
            "=" * len(heading),
            "",
            f".. automodule:: {module_name}",
            "   :no-members:",
            "",
            f".. currentmodule:: {module_name}",
            "",
            ".. autosummary::",
            "   :toctree: generated/",
            "   :template: autosummary/object.rst",
            "",
        ]
        lines += [f"   {name}" for name in _public_names(module_name)]
        text = "\n".join(lines) + "\n"
        path = api / f"{module_name}.rst"
        if not path.exists() or path.read_text() != text:  # keep mtimes: incremental builds
            path.write_text(text)


def _plain_text_pipes(app, what, name, obj, options, lines):
    """Escape ``|`` outside literals and doctests: docstrings write |x| for an absolute value
    or a norm, never a reST substitution."""
    in_doctest = False
    for i, line in enumerate(lines):
        stripped = line.strip()
        if stripped.startswith(">>>"):
            in_doctest = True
        elif not stripped:
            in_doctest = False
        if in_doctest or "|" not in line:
            continue
        parts = line.split("``")
        parts[::2] = [part.replace("|", r"\|") for part in parts[::2]]
        lines[i] = "``".join(parts)


def _no_type_docstring(app, what, name, obj, options, lines):
    """A constant without a docstring of its own shows none, not its type's (``ndarray``)."""
    if what in ("data", "attribute") and lines:
        first = lines[0].strip()
        type_doc = inspect.getdoc(type(obj)) or ""
        if first.startswith(type(obj).__name__ + "(") or (
            type_doc and first == type_doc.splitlines()[0].strip()
        ):
            lines[:] = []


def _skip_metadata_requests(app, what, name, obj, skip, options):
    """Hide scikit-learn's generated ``set_*_request`` methods (metadata routing), and the
    field accessors of a NamedTuple ("Alias for field number 0"): its class docstring's
    Parameters document the fields."""
    if name.startswith("set_") and name.endswith("_request"):
        return True
    if type(obj).__name__ == "_tuplegetter":
        return True
    return None


def setup(app):
    app.connect("config-inited", _write_api_pages)
    # Before numpydoc (priority 500) reads the docstring.
    app.connect("autodoc-process-docstring", _plain_text_pipes, priority=100)
    app.connect("autodoc-process-docstring", _no_type_docstring, priority=100)
    app.connect("autodoc-skip-member", _skip_metadata_requests)
