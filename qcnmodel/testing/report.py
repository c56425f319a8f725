"""Records of the assertions of :mod:`qcnmodel.testing`, their figures and the summary report.

Every assertion, passing or failing, appends one :class:`Record` (what was checked, the
numbers, the verdict, the figures) to the session's list; the pytest plugin writes them as
one Markdown and one HTML page with ``--qcn-report DIR`` (:func:`write_report`). Figures are
PNG files written with Matplotlib's Agg backend to :func:`figure_dir`: ``DIR/figures`` when a
report is requested, else a fresh temporary directory (its path is in every failure message).
A failing assertion always draws its figure; a passing one only when a report is requested
(:func:`keep_figures`), since drawing costs about 0.3 s.
"""

from __future__ import annotations

import html
import itertools
import math
import re
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from qcnmodel._io import atomic_path

__all__ = ["Record", "clear", "figure_dir", "figures_wanted", "keep_figures", "records",
           "save_figure", "set_figure_dir", "set_test", "write_report"]  # fmt: skip

_RECORDS: list[Record] = []
_STATE = {"dir": None, "test": "", "count": itertools.count(1), "always": False}


@dataclass
class Record:
    """One assertion made.

    Attributes
    ----------
    check : str
        The assertion's name (``assert_stable`` ...).
    subject : str
        What was checked (model, parameters, scenario, operating point).
    passed : bool
    numbers : dict
        Name -> value of every number the verdict rests on.
    message : str
        The verdict in words (the failure message when it failed).
    figures : list of str
        Paths of the figures written.
    test : str
        The pytest node id running when the assertion was made ("" outside pytest).
    """

    check: str
    subject: str
    passed: bool
    numbers: dict
    message: str
    figures: list = field(default_factory=list)
    test: str = ""
    when: float = field(default_factory=time.time)


def records() -> list[Record]:
    """The records of this process, oldest first (the list itself)."""
    return _RECORDS


def clear() -> None:
    """Forget every record."""
    _RECORDS.clear()


def set_test(nodeid: str) -> None:
    """Name the test the next records belong to (the plugin calls it for every test)."""
    _STATE["test"] = nodeid


def set_figure_dir(path) -> Path | None:
    """Write the figures to ``path`` (created if needed); None: back to a temporary one."""
    if path is None:
        _STATE["dir"] = None
        return None
    p = Path(path)
    p.mkdir(parents=True, exist_ok=True)
    _STATE["dir"] = p
    return p


def keep_figures(always: bool = True) -> None:
    """Draw a figure for every assertion (``True``; the plugin's ``--qcn-report`` sets it) or
    for failing ones only (``False``, the default: drawing costs ~0.3 s)."""
    _STATE["always"] = bool(always)


def figures_wanted(passed: bool) -> bool:
    """Whether an assertion with this verdict draws its figure (:func:`keep_figures`)."""
    return (not passed) or _STATE["always"]


def figure_dir() -> Path:
    """Directory of the figures: the one set by :func:`set_figure_dir`, else a temporary
    directory created on first use."""
    if _STATE["dir"] is None:
        _STATE["dir"] = Path(tempfile.mkdtemp(prefix="qcnmodel-testing-"))
    return _STATE["dir"]


def save_figure(fig, name: str) -> str:
    """Save a Matplotlib figure as ``<figure_dir>/<n>-<name>.png``, close it, return the path."""
    import matplotlib.pyplot as plt

    slug = re.sub(r"[^A-Za-z0-9_.-]+", "-", name).strip("-")[:80] or "figure"
    path = figure_dir() / f"{next(_STATE['count']):04d}-{slug}.png"
    try:
        with atomic_path(path) as tmp:
            fig.savefig(tmp, dpi=90, format="png")
    finally:
        plt.close(fig)
    return str(path)


def add(check: str, subject: str, passed: bool, numbers: dict, message: str, figures=()) -> Record:
    """Append a record (the assertions call it) and return it."""
    rec = Record(check, subject, bool(passed), dict(numbers), message, list(figures),
                 _STATE["test"])  # fmt: skip
    _RECORDS.append(rec)
    return rec


def fmt(value) -> str:
    """A number as the reports and messages show it (4 significant digits)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, int) or (math.isfinite(value) and value == int(value) and
                                  abs(value) < 1e15):  # fmt: skip
        return str(int(value))
    return f"{value:.4g}"


def _rel(path: str, base: Path) -> str:
    try:
        return str(Path(path).resolve().relative_to(base.resolve()))
    except ValueError:
        return str(path)


def write_report(directory, recs=None, *, incomplete: str = "") -> tuple[Path, Path]:
    """Write ``report.md`` and ``report.html`` in ``directory``: every record with its test,
    verdict, numbers and figures.

    Each file is replaced whole (written atomically); then the figures of ``DIR/figures``
    that an earlier report drew and this one does not show are removed, so the folder holds
    one report's figures.

    Parameters
    ----------
    directory : str or Path
        The report's folder (created if missing).
    recs : list of Record, optional
        The records to list (default: every record of this process).
    incomplete : str
        When not empty, why the records do not cover the whole test session (interrupted,
        stopped early); the title and the first line say the report is incomplete.

    Returns
    -------
    tuple of Path
        The paths of ``report.md`` and ``report.html``.
    """
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    recs = _RECORDS if recs is None else recs
    n_fail = sum(not r.passed for r in recs)
    head = f"{len(recs)} assertion(s), {len(recs) - n_fail} passed, {n_fail} failed"
    title = "qcnmodel validation report" + (" (INCOMPLETE)" if incomplete else "")
    if incomplete:
        head = (f"INCOMPLETE: {incomplete}; the tests that did not run made no assertion. "
                f"{head} in the tests that ran")  # fmt: skip
    md = [f"# {title}", "", head, ""]
    body = [f"<h1>{html.escape(title)}</h1><p>{html.escape(head)}</p>"]
    for i, r in enumerate(recs, 1):
        verdict = "PASS" if r.passed else "FAIL"
        md += [f"## {i}. {verdict} `{r.check}`: {r.subject}", ""]
        if r.test:
            md += [f"Test: `{r.test}`", ""]
        md += ["```", r.message, "```", "", "| quantity | value |", "|---|---|"]
        md += [f"| {k} | {fmt(v)} |" for k, v in r.numbers.items()]
        md += [""] + [f"![{r.check}]({_rel(f, d)})" for f in r.figures] + [""]
        color = "#2e7d32" if r.passed else "#c62828"
        rows = "".join(f"<tr><td>{html.escape(str(k))}</td><td>{html.escape(fmt(v))}</td></tr>"
                       for k, v in r.numbers.items())  # fmt: skip
        imgs = "".join(f'<img src="{html.escape(_rel(f, d))}" style="max-width:48%">'
                       for f in r.figures)  # fmt: skip
        test = f"<p>Test: <code>{html.escape(r.test)}</code></p>" if r.test else ""
        body.append(
            f'<h2><span style="color:{color}">{verdict}</span> {i}. '
            f"<code>{html.escape(r.check)}</code>: {html.escape(r.subject)}</h2>{test}"
            f"<pre>{html.escape(r.message)}</pre><table border=1 cellpadding=3>{rows}</table>"
            f"<div>{imgs}</div>"
        )
    md_path, html_path = d / "report.md", d / "report.html"
    _write(md_path, "\n".join(md))
    _write(
        html_path,
        f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}"
        "</title></head><body style='font-family:sans-serif'>" + "".join(body) + "</body></html>",
    )
    _prune_figures(d / "figures", recs)
    return md_path, html_path


def _prune_figures(folder: Path, recs) -> None:
    """Remove the figures of ``folder`` (named as :func:`save_figure` names them) that no
    record of ``recs`` shows: an earlier session's, which no report now refers to."""
    if not folder.is_dir():
        return
    shown = {Path(f).resolve() for r in recs for f in r.figures}
    for path in folder.glob("*.png"):
        if re.fullmatch(r"\d{4,}-.*\.png", path.name) and path.resolve() not in shown:
            path.unlink(missing_ok=True)


def _write(path: Path, text: str) -> None:
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding="utf-8")
