"""Every figure in ``figures/``, regenerated deterministically (``qcnmodel figures``).

Figures come in groups; each group is a function ``draw(out_dir) -> [(path, caption), ...]``
registered in :data:`GROUPS`. :func:`regenerate` runs the groups, then writes
``figures/README.md`` listing every file with its caption. All figures are saved with fixed
size, dpi and no timestamp metadata, and every simulation in them uses a fixed seed, so a
rerun writes the same bytes.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from qcnmodel._errors import unknown_name

__all__ = ["GROUPS", "register", "regenerate"]

GROUPS: dict[str, Callable[[Path], list[tuple[Path, str]]]] = {}

#: whether the running :func:`regenerate` shows progress (the groups then say on stderr when a
#: numba compilation starts, so that the bar does not stall silently)
_PROGRESS = {"on": False}


def register(name: str):
    """Decorator adding a figure group under ``name``."""

    def deco(func):
        GROUPS[name] = func
        return func

    return deco


@register("analysis")
def _analysis(out_dir: Path) -> list[tuple[Path, str]]:
    """Bode, Nyquist, step, nonlinear, stability map and critical RTT at the 802.1Qau set."""
    from tqdm.auto import tqdm

    from qcnmodel.studies import report_figures
    from qcnmodel.studies.compiling import announce_compile
    from qcnmodel.studies.report import ReportConfig, compute_margins_grid

    cfg = ReportConfig(packet=False)
    announce_compile("loop", _PROGRESS["on"])
    with tqdm(total=len(cfg.weights) * len(cfg.ps_values), desc="analysis: margins grid",
              unit="map", leave=False, disable=not _PROGRESS["on"]) as bar:  # fmt: skip
        grid = compute_margins_grid(cfg, progress=bar)
    return report_figures.draw_all(cfg, grid, out_dir, progress=_PROGRESS["on"])


@register("packet")
def _packet(out_dir: Path) -> list[tuple[Path, str]]:
    """The report's packet-level confirmation (two RTTs around the model's critical RTT)."""
    from qcnmodel.document import Document
    from qcnmodel.studies.report import ReportConfig
    from qcnmodel.studies.report_figures import announce_compile
    from qcnmodel.studies.report_packet import add_section

    announce_compile("sim", _PROGRESS["on"])
    doc = Document("packet")
    add_section(doc, ReportConfig(), out_dir)
    return [data for kind, data in doc.blocks if kind == "figure"]


@register("validation")
def _validation(out_dir: Path) -> list[tuple[Path, str]]:
    """The full validation run's figures: matched pairs and the seed decks reproduced."""
    import re
    import tempfile

    from qcnmodel.validation.report import write_report
    from qcnmodel.validation.suite import run_validation

    result = run_validation(quick=False, progress=False, decks_too=True)
    with tempfile.TemporaryDirectory() as tmp:
        md, _ = write_report(result, tmp, figures_dir=out_dir)
        text = Path(md).read_text()
    found = re.findall(r"!\[(.*?)\]\((.*?)\)", text)
    return [(out_dir / Path(path).name, caption) for caption, path in found]


def _optional_groups() -> None:
    """Register groups that live in other sub-packages (validation, protocol comparisons)."""
    import importlib

    for modname in ("qcnmodel.studies.compare",):
        try:
            importlib.import_module(modname)
        except ModuleNotFoundError as exc:
            if exc.name != modname and not modname.startswith(str(exc.name)):
                raise


def regenerate(out_dir: str | Path = "figures", only: list[str] | None = None, progress=True):
    """Draw the figure groups into ``out_dir`` and write its ``README.md`` index.

    The figures are drawn in a temporary folder beside ``out_dir`` and move in once all are
    written (:func:`qcnmodel._io.atomic_dir`): an interrupted or failed run leaves
    ``out_dir`` as it was (missing, or with its earlier files).

    Parameters
    ----------
    out_dir : str or Path
        Destination (default ``figures``); its parent folders are created when missing.
    only : list of str, optional
        Group names to draw (default: all). The index keeps the entries of the other files
        already listed in ``out_dir``'s ``README.md``.
    progress : bool
        Progress bar on stderr.

    Returns
    -------
    list of (Path, str)
        Every figure written (its path in ``out_dir``), with its caption.
    """
    from qcnmodel._io import atomic_dir, moved_paths

    _optional_groups()
    out = Path(out_dir)
    names = list(GROUPS) if not only else list(only)
    for name in names:  # before anything is written: a refused command leaves no folder
        if name not in GROUPS:
            raise unknown_name("only", "figure group", name, GROUPS, sort=False)
    out.parent.mkdir(parents=True, exist_ok=True)
    with atomic_dir(out) as tmp:
        figures = _draw(names, tmp, progress)
        _write_index(tmp / "README.md", out / "README.md" if only else None, figures)
    return [(Path(moved_paths(str(p), tmp, out)), c) for p, c in figures]


def _draw(names: list[str], out: Path, progress: bool) -> list[tuple[Path, str]]:
    """Run the groups ``names`` into the folder ``out``: every figure with its caption."""
    from tqdm.auto import tqdm

    figures: list[tuple[Path, str]] = []
    _PROGRESS["on"] = bool(progress)
    bar = tqdm(names, desc="figures", unit="group", disable=not progress)
    try:
        for name in bar:
            bar.set_postfix_str(f"drawing {name}")
            figures += [(Path(p), c) for p, c in GROUPS[name](out)]
    finally:
        _PROGRESS["on"] = False
    return figures


def _write_index(index: Path, earlier: Path | None, figures: list[tuple[Path, str]]) -> None:
    """Write the ``README.md`` table of ``figures`` to ``index``, keeping the other entries of
    the ``earlier`` index (when given and present)."""
    lines = ["# Figures", "", "Regenerate with `qcnmodel figures` (deterministic).", ""]
    known = {}
    if earlier is not None and earlier.exists():
        for line in earlier.read_text().splitlines():
            if line.startswith("| `"):
                fname = line.split("`")[1]
                known[fname] = line
    for path, caption in figures:
        known[path.name] = f"| `{path.name}` | {caption} |"
    lines += ["| file | caption |", "|---|---|", *[known[k] for k in sorted(known)], ""]
    index.write_text("\n".join(lines))
