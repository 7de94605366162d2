"""Sphinx configuration of soadyn's documentation (``make docs``).

The pages in Markdown (notation.md, references.md, derivatives.md, getting_started.md,
coming_from.md) are read by myst-parser as they are; the benchmark pages (docs/benchmarks/)
are generated from benchmarks/results/*.json when the build starts (``_benchmark_pages``); the API reference is generated from the docstrings
(autodoc + autosummary; the docstrings' numpy-style sections are shown as
they are written, see ``_tolerate_plain_text``); the gallery runs every
``examples/plot_*.py`` (sphinx-gallery) and keeps its figures.
"""
import os
import re
import sys

import matplotlib

matplotlib.use("Agg")  # the gallery draws without a display

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "src"))  # the checkout's sources, not an installed copy

import soadyn  # noqa: E402

project = "soadyn"
author = "soadyn developers"
copyright = "soadyn developers"
release = version = soadyn.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "sphinx.ext.viewcode",
    "myst_parser",
    "sphinx_gallery.gen_gallery",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
templates_path = ["_templates"]
exclude_patterns = ["_build", "_templates", "Thumbs.db", ".DS_Store", "auto_examples/*.ipynb", "auto_examples/*.py",
                    "auto_examples/*.zip", "auto_examples/*.md5", "auto_examples/*.codeobj.json"]
myst_heading_anchors = 3  # README-style links to section anchors (#the-tangent-space-convention)

autosummary_generate = True
autosummary_imported_members = True
autodoc_default_options = {"members": True, "undoc-members": False, "show-inheritance": False}
autodoc_typehints = "none"  # the docstrings state shapes and units; few signatures carry hints
autodoc_member_order = "bysource"
html_theme = "furo"
html_title = f"soadyn {release}"

sphinx_gallery_conf = {
    "examples_dirs": os.path.join(ROOT, "examples"),
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"/plot_",  # every example runs: its figures are part of the page
    "abort_on_example_error": True,
    "download_all_examples": False,
    "remove_config_comments": True,
    "within_subsection_order": "FileNameSortKey",
    "matplotlib_animations": False,
    "show_memory": False,
}


# |x| is an absolute value or a norm in the docstrings' plain-text mathematics, never an
# rST substitution: escape the bars outside ``literals`` and outside simple tables (whose
# rows may hold such bars too, but whose borders are "=" lines)
_LITERAL = re.compile(r"(``.*?``)")


_RULE = re.compile(r"^-{3,}\s*$")
_TERM = re.compile(r"^[A-Za-z_]\w*(, [A-Za-z_]\w*)* : \S")


def _tolerate_plain_text(app, what, name, obj, options, lines):
    """The docstrings are written as plain text first: make them valid rST (bars escaped,
    argument lists after a paragraph separated from it), without changing what they say."""
    for i, line in enumerate(lines):
        if "|" in line:
            parts = _LITERAL.split(line)
            lines[i] = "".join(p if p.startswith("``") else re.sub(r"(?<!\\)\|", r"\\|", p) for p in parts)
    for i in range(len(lines) - 2, -1, -1):
        # an entry's first line is its term in rST: a ``literal`` that it opens and the next
        # (indented) line closes moves down into the definition with its closing part
        line, following = lines[i], lines[i + 1]
        if _TERM.match(line) and line.count("``") % 2 and following.startswith(" "):
            cut = line.rindex("``")
            indent = following[:len(following) - len(following.lstrip())]
            lines[i:i + 1] = [line[:cut].rstrip(), indent + line[cut:]]
    for i in range(len(lines) - 1, 0, -1):
        # a numpy-style section ("Parameters" over a dashed line) becomes a heading; its
        # entries ("name : shape, meaning [unit]") stay as written, a definition list: the
        # text after "name :" is free prose here, not the type that numpydoc/napoleon expect
        if _RULE.match(lines[i]) and lines[i - 1].strip() and len(lines[i].strip()) >= len(lines[i - 1].strip()):
            lines[i - 1:i + 1] = [f".. rubric:: {lines[i - 1].strip()}", ""]
            continue
        prev, line = lines[i - 1], lines[i]
        if not (prev.strip() and line.strip()) or line.startswith(" "):
            continue
        # a list entry after a paragraph, or prose after an entry's indented continuation
        # (plain text ends a list without a blank line; rST needs one)
        if prev.startswith(" ") or _TERM.match(line):
            lines.insert(i, "")


def _check_api_listed(app):
    """Every name of ``soadyn.__all__`` has an entry in api.rst (the reference must not
    silently miss a public name added later)."""
    with open(os.path.join(HERE, "api.rst"), encoding="utf-8") as f:
        text = f.read()
    listed = set(re.findall(r"^\s{3,}~?(?:soadyn\.)?([A-Za-z_][\w.]*)\s*$", text, flags=re.M))
    missing = sorted(n for n in soadyn.__all__ if n not in listed)
    if missing:
        raise RuntimeError(f"docs/api.rst: public names of soadyn.__all__ missing from the API reference: {missing}")


def _skip_top_level_names(app, what, name, obj, skip, options):
    """On a module's page (``soadyn.geometry``), leave out the members that soadyn exports
    at the top level: they have a page of their own (``soadyn.Contacts``), and a second
    description of the same object is a warning."""
    if what == "module" and name in soadyn.__all__ and getattr(soadyn, name, None) is obj:
        return True
    return None


def _benchmark_pages(app):
    """The benchmark pages (docs/benchmarks/) from the committed results, before the sources
    are read: ``benchmarks/report.py``, the same as ``soadyn bench --report``; no benchmark
    runs, so the pages cannot drift from benchmarks/results/."""
    import importlib.util
    path = os.path.join(ROOT, "benchmarks", "report.py")
    spec = importlib.util.spec_from_file_location("soadyn_benchmark_report", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # (its dataclasses look their module up)
    spec.loader.exec_module(module)
    module.build(os.path.join(ROOT, "benchmarks", "results"), os.path.join(HERE, "benchmarks"))


def setup(app):
    app.connect("builder-inited", _benchmark_pages)
    app.connect("builder-inited", _check_api_listed)
    app.connect("autodoc-skip-member", _skip_top_level_names)
    app.connect("autodoc-process-docstring", _tolerate_plain_text)
