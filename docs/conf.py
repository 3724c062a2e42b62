"""Sphinx configuration of skdpgd's documentation site.

Build: ``pip install ".[docs]"`` then ``python -m sphinx -W -b html docs docs/_build/html``.
The user guide, theory, benchmark and neural-net pages are the markdown files beside this one
(MyST); the API pages are generated from the numpydoc docstrings; the examples gallery runs
``examples/*.py`` (each a few seconds on bundled data).
"""

import os
import re
import sys
import warnings

sys.path.insert(0, os.path.abspath(".."))

import skdpgd  # noqa: E402

project = "skdpgd"
author = "the skdpgd developers"
copyright = "2026, the skdpgd developers"
release = skdpgd.__version__
version = release

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "sphinx.ext.intersphinx",
    "numpydoc",
    "myst_parser",
    "sphinx_gallery.gen_gallery",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = [
    "_build",
    "Thumbs.db",
    ".DS_Store",
    "auto_examples/*.ipynb",
    "auto_examples/*.py",
    "auto_examples/*.zip",
    "auto_examples/*.json",
    "auto_examples/*.md5",
]
myst_heading_anchors = 3
suppress_warnings = ["myst.header"]

autosummary_generate = True
autodoc_default_options = {"members": True}  # the class template adds inherited members
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False

intersphinx_mapping = {}  # offline builds: no inventories are fetched

# a theme with a wide content column (code blocks and tables are not cut at the right edge);
# alabaster (Sphinx's own) when the docs extra was not installed
try:
    import pydata_sphinx_theme  # noqa: F401

    html_theme = "pydata_sphinx_theme"
    html_theme_options = {
        "navigation_with_keys": False,
        "show_toc_level": 2,
        "secondary_sidebar_items": ["page-toc"],
    }
except ImportError:  # pragma: no cover - depends on the environment
    html_theme = "alabaster"
    html_theme_options = {"page_width": "1200px"}
html_title = f"skdpgd {release}"
html_static_path = []
templates_path = ["_templates"]

sphinx_gallery_conf = {
    "examples_dirs": "../examples",
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"/plot_",
    "download_all_examples": False,
    "within_subsection_order": "FileNameSortKey",
    "remove_config_comments": True,
    # "Examples using ..." on the API pages (the minigallery directive in the templates)
    "backreferences_dir": "generated/backreferences",
    "doc_module": ("skdpgd",),
}

# examples fit without public bounds on purpose in one place; keep the build output clean
warnings.filterwarnings("ignore", category=skdpgd.PrivacyLeakWarning)
warnings.filterwarnings("ignore", message="Matplotlib is currently using agg")


def _skip_metadata_routing(app, what, name, obj, skip, options):
    """scikit-learn generates ``set_*_request`` methods on every estimator; their docstrings
    refer to scikit-learn's own guide, so they stay out of these pages."""
    if name == "get_metadata_routing" or (name.startswith("set_") and name.endswith("_request")):
        return True
    return skip


_SKLEARN_REF = re.compile(r":ref:`([^<`]+?)\s*<[^>`]+>`")
_SKLEARN_BARE_REF = re.compile(r":ref:`([^<>`]+)`")  # :ref:`label` with no link text


def _plain_sklearn_refs(app, what, name, obj, options, lines):
    """Inherited scikit-learn methods (``score``, ``get_params``, ...) keep their docstrings;
    their ``:ref:`` links point into scikit-learn's guide, which is not in this build: keep
    the link text only."""
    lines[:] = [_SKLEARN_BARE_REF.sub(r"``\1``", _SKLEARN_REF.sub(r"\1", line)) for line in lines]


def setup(app):
    app.connect("autodoc-skip-member", _skip_metadata_routing)
    app.connect("autodoc-process-docstring", _plain_sklearn_refs)
