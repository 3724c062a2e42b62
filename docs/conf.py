"""Sphinx configuration of skdpgd's documentation site.

Build: ``pip install ".[docs]"`` then ``python -m sphinx -W -b html docs docs/_build/html``.
The user guide, theory, benchmark and neural-net pages are the markdown files beside this one
(MyST); the API pages are generated from the numpydoc docstrings; the examples gallery runs
``examples/*.py`` (each a few seconds on bundled data).
"""

import os
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
exclude_patterns = ["_build", "Thumbs.db", ".DS_Store", "auto_examples/*.ipynb",
                    "auto_examples/*.py", "auto_examples/*.zip", "auto_examples/*.json",
                    "auto_examples/*.md5"]
myst_heading_anchors = 3
suppress_warnings = ["myst.header"]

autosummary_generate = True
autodoc_default_options = {"members": True, "inherited-members": False}
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False

intersphinx_mapping = {}  # offline builds: no inventories are fetched

html_theme = "alabaster"
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


def setup(app):
    app.connect("autodoc-skip-member", _skip_metadata_routing)
