"""The machine-readable twin (``NAME.json``) of a benchmark's Markdown result (``NAME.md``).

Every benchmark writes its result as Markdown for people and as JSON for programs (the
benchmark pages of the documentation, ``soadyn bench --report``, are drawn from the JSON
alone). The scripts whose data are tables write the JSON from the tables of the Markdown
they have just written (``write_twin``): the twin holds the same numbers, with the provenance
of the run (machine, date, commit; ``parse_machine``).

Results committed before the scripts wrote twins are converted once with

    python benchmarks/results_json.py benchmarks/results/NAME.md ... [benchmarks/results/bench]

which reads the provenance from the file's own machine block (the fenced ``date: ... versions:
soadyn X (git SHA)`` lines of ``timing.machine_description``) and, where the file has none,
from the commit that added the result (``git log``); ``tests/docs/test_bench_report.py``
checks that each twin is what this conversion gives for its Markdown file.

The tables are read with markdown-it-py (the CommonMark parser that myst-parser uses, with
its GFM table rule); cells that read as numbers become numbers (a ``-`` or an empty cell,
``None``), the rest stay text.
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys

__all__ = ["parse_machine", "markdown_tables", "twin", "write_twin", "bench_twin", "write_bench_twin", "git_commit"]

_DATE = re.compile(r"^date:\s*(.+?)\s*$", re.M)
_CPU = re.compile(r"^cpu:\s*(.+?)\s*$", re.M)
_OS = re.compile(r"^os:\s*(.+?)\s*$", re.M)
_CORES = re.compile(r"^logical cores:\s*(\d+)", re.M)
_COMMIT = re.compile(r"\(git ([0-9a-f]{6,40})\)")
_NUMBER = re.compile(r"^[-+]?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?$")


def parse_machine(text):
    """Provenance from a machine block of ``timing.machine_description``: a dict with
    ``machine`` (the block as written), ``date``, ``cpu``, ``os``, ``cores`` and
    ``commit`` (the short git SHA of soadyn), each ``None`` when the block lacks it."""
    def first(pattern, cast=str):
        m = pattern.search(text or "")
        return cast(m.group(1)) if m else None
    return {"machine": text, "date": first(_DATE), "cpu": first(_CPU), "os": first(_OS),
            "cores": first(_CORES, int), "commit": first(_COMMIT)}


def _cell(text):
    """A table cell as a number when it reads as one ("1,234" and "**3.20**" included)."""
    t = text.strip()
    bare = t.strip("*").replace(",", "")
    if bare in ("", "-", "—"):
        return None
    if _NUMBER.match(bare):
        return float(bare) if any(c in bare for c in ".eE") else int(bare)
    return t


def markdown_tables(md):
    """The sections of a Markdown text with their prose and tables: a list of ``{"heading",
    "paragraphs": [{"text", "after_tables"}, ...], "tables": [{"columns": [...], "rows": [[...],
    ...]}]}``, headings in document order (the text before the first heading is the section
    ``""``); a paragraph as written (inline Markdown kept) with the number of the section's
    tables before it; cells as ``_cell`` reads them."""
    try:
        from markdown_it import MarkdownIt
    except ImportError as e:  # a dependency of the test extra (and of myst-parser, rich)
        raise SystemExit("results_json: markdown-it-py is needed to read the tables (pip install markdown-it-py)") from e
    tokens = MarkdownIt("commonmark").enable("table").parse(md)
    sections = [{"heading": "", "paragraphs": [], "tables": []}]
    table = row = None
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        if tok.type == "heading_open":
            sections.append({"heading": tokens[i + 1].content, "paragraphs": [], "tables": []})
        elif tok.type == "paragraph_open" and table is None:
            sections[-1]["paragraphs"].append({"text": tokens[i + 1].content,
                                               "after_tables": len(sections[-1]["tables"])})
        elif tok.type == "table_open":
            table = {"columns": [], "rows": []}
        elif tok.type == "tr_open":
            row = []
        elif tok.type in ("th_open", "td_open"):
            content = tokens[i + 1].content if tokens[i + 1].type == "inline" else ""
            row.append(content.strip() if tok.type == "th_open" else _cell(content))
        elif tok.type == "tr_close":
            if table is not None and not table["columns"]:
                table["columns"] = row
            else:
                table["rows"].append(row)
        elif tok.type == "table_close":
            sections[-1]["tables"].append(table)
            table = None
        i += 1
    return [s for s in sections if s["tables"] or s["heading"] or s["paragraphs"]]


def _machine_block(md):
    """The fenced machine block of a result (the one that starts with ``date:``), or None."""
    for block in re.findall(r"```\n(.*?)```", md, flags=re.S):
        if block.startswith("date:"):
            return block
    return None


def _git_provenance(path):
    """(short SHA, ISO date) of the commit that last changed ``path``, or (None, None)."""
    try:
        out = subprocess.run(["git", "log", "-1", "--format=%h %cI", "--", os.path.basename(path)],
                             cwd=os.path.dirname(os.path.abspath(path)), capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None, None
    parts = out.stdout.split()
    return (parts[0], parts[1]) if out.returncode == 0 and len(parts) == 2 else (None, None)


def twin(md_path, machine=None):
    """The JSON twin of the Markdown result at ``md_path`` as a dict: ``meta`` (provenance:
    from ``machine``, a ``timing.machine_description`` text, when the benchmark passes the
    one of its run; else from the file's machine block; else ``machine`` not recorded, with
    the commit and date of the commit that added the file and ``provenance`` saying so),
    ``title`` and ``sections`` (``markdown_tables``)."""
    with open(md_path, encoding="utf-8") as f:
        md = f.read()
    block = machine or _machine_block(md)
    if block:
        meta = parse_machine(block)
        meta["provenance"] = "machine block of the run"
    else:
        sha, date = _git_provenance(md_path)
        meta = {"machine": None, "date": date, "cpu": None, "os": None, "cores": None, "commit": sha,
                "provenance": "not recorded by the run: date and commit of the commit that added the result"}
    sections = markdown_tables(md)
    title = next((s["heading"] for s in sections if s["heading"]), os.path.basename(md_path))
    return {"meta": meta, "title": title, "source": os.path.basename(md_path), "sections": sections}


def write_twin(md_path, machine=None):
    """Write ``twin(md_path, machine)`` beside the Markdown file (``NAME.md`` → ``NAME.json``);
    return its path."""
    path = os.path.splitext(md_path)[0] + ".json"
    with open(path, "w", encoding="utf-8") as f:
        json.dump(twin(md_path, machine), f, indent=1, ensure_ascii=False)
        f.write("\n")
    return path


def bench_twin(folder):
    """The JSON twin of a ``soadyn bench`` output folder: ``meta`` (its machine.txt) and
    ``sections``, one list of row dicts per CSV file (per_call, overhead, chains, batch,
    startup, rollout, distributed; numbers as numbers, empty cells ``None``)."""
    import csv
    with open(os.path.join(folder, "machine.txt"), encoding="utf-8") as f:
        meta = parse_machine(f.read())
    meta["provenance"] = "machine.txt of the run"
    sections = {}
    for name in sorted(os.listdir(folder)):
        if name.endswith(".csv"):
            with open(os.path.join(folder, name), newline="", encoding="utf-8") as f:
                rows = list(csv.DictReader(f))
            sections[name[:-4]] = [{k: (_cell(v) if _NUMBER.match(v.strip()) or not v.strip() else
                                        {"True": True, "False": False}.get(v, v)) for k, v in r.items()} for r in rows]
    return {"meta": meta, "title": "soadyn bench", "source": os.path.basename(os.path.abspath(folder)) + "/",
            "sections": sections}


def write_bench_twin(folder):
    """Write ``bench_twin(folder)`` to ``folder/bench.json``; return its path."""
    path = os.path.join(folder, "bench.json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump(bench_twin(folder), f, indent=1, ensure_ascii=False)
        f.write("\n")
    return path


def git_commit():
    """The short SHA of the checkout's HEAD (the code a benchmark run measures), or None."""
    try:
        out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=os.path.dirname(os.path.abspath(__file__)),
                             capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None if out.returncode == 0 else None


def main(argv=None):
    paths = sys.argv[1:] if argv is None else argv
    if not paths:
        raise SystemExit("usage: python benchmarks/results_json.py RESULT.md [RESULT.md ...]")
    for p in paths:
        print(write_bench_twin(p) if os.path.isdir(p) else write_twin(p))
    return 0


if __name__ == "__main__":
    sys.exit(main())
