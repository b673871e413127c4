"""Sphinx configuration of the mpiuq documentation (``sphinx-build -W -b html docs OUT``)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent / "_ext"))

from mpiuq import __version__

project = "mpiuq"
author = "the mpiuq developers"
copyright = "the mpiuq developers"
version = release = __version__

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.napoleon",
    "sphinx.ext.mathjax",
    "mpiuq_docs",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "README.md"]

myst_enable_extensions = ["colon_fence", "deflist"]
myst_heading_anchors = 3

# numpydoc-style docstrings, read by napoleon
napoleon_google_docstring = False
napoleon_numpy_docstring = True
napoleon_use_rtype = False
# Attributes as fields of the class: autodoc documents a named tuple's fields as members too
napoleon_use_ivar = True
autodoc_member_order = "bysource"
autodoc_typehints = "description"
# a name re-exported by its package (``mpiuq.surrogate.BudgetError``) and an attribute name
# shared by several classes (``dim``) resolve to more than one target: any is right
suppress_warnings = ["ref.python"]
autosummary_generate = False

html_theme = "pydata_sphinx_theme"
html_title = f"mpiuq {__version__}"
html_theme_options = {"navigation_depth": 2, "show_toc_level": 2}
