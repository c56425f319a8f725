"""The layers of qcnmodel, read from the code's own imports, and their picture.

Run ``python docs/layers.py`` to redraw ``docs/layers.png``; ``tests/test_layers.py`` runs it
and fails on any import that runs against the layer order below. Every ``import`` of a
``qcnmodel`` module counts, including the lazy ones inside functions: they are dependencies
too. Old module paths (:data:`qcnmodel._compat.MOVED`) count as the module they moved to.

Layers, bottom to top, and what each may import (besides itself and the foundation)::

    foundation  units, _errors, _io, config, document, _compat, _borrow, _netcdf, _dask_probes,
                _numba_probes
    params      every parameter class, one validator
    analysis    loops, margins, integrators, stability: no protocol, no parameters
    sim         the packet simulator (stands on params alone)
    models      the loop models, their registry and summary      (params, analysis, sim:
                the single-flow model runs the protocols' rule bodies)
    validation  the models against the simulator                 (params, analysis, models, sim)
    studies     check, sweep, compare, report, figures            (all of the above)
    cli         argument parsing and printing                     (all of the above)
    testing     assertions and pytest plugin for users' CI        (all of the above: a
                parameter file is judged in CI as ``qcnmodel check FILE`` judges it)

The package's front door (``qcnmodel/__init__.py``) may name anything; importing the bare
package (e.g. for ``__version__``) counts as the foundation.
"""

from __future__ import annotations

import ast
import sys
from collections import Counter
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "qcnmodel"
OUT = Path(__file__).resolve().with_name("layers.png")

#: layer -> the layers it may import (each layer may always import itself and the foundation)
ALLOWED = {
    "foundation": set(),
    "params": set(),
    "analysis": set(),
    "sim": {"params"},
    "models": {"params", "analysis", "sim"},
    "validation": {"params", "analysis", "models", "sim"},
    "testing": {"params", "analysis", "models", "sim", "validation", "studies", "cli"},
    "studies": {"params", "analysis", "models", "sim", "validation"},
    "cli": {"params", "analysis", "models", "sim", "validation", "studies"},
    "front door": {"params", "analysis", "models", "sim", "validation", "studies", "cli"},
}

#: Imports allowed against the layer order (none: the layers are clean).
KNOWN: set = set()

_FOUNDATION = {"units", "_errors", "_io", "config", "document", "_compat", "_borrow", "_netcdf",
               "_dask_probes", "_numba_probes"}  # fmt: skip


def layer_of(module: str) -> str:
    """The layer of a module name such as ``qcnmodel.models.qcn``."""
    parts = module.split(".")
    if len(parts) == 1:
        return "foundation"  # the bare package: __version__ (it is imported first anyway)
    head = parts[1]
    if head == "__init__":
        return "front door"
    if head in _FOUNDATION:
        return "foundation"
    if head in ("__main__",):
        return "cli"
    if head in ALLOWED:
        return head
    raise ValueError(f"{module}: no layer for {head!r}; add it to docs/layers.py")


def _modules() -> dict[str, Path]:
    """Module name -> file, for every module of the package."""
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(ROOT).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] == "__init__":
            parts = parts[:-1] if len(parts) > 1 else parts
            name = ".".join(parts)
            name = "qcnmodel.__init__" if name == "qcnmodel" else name
        else:
            name = ".".join(parts)
        out[name] = path
    return out


def _moved() -> dict[str, str]:
    sys.path.insert(0, str(ROOT))
    try:
        from qcnmodel._compat import MOVED
    finally:
        sys.path.pop(0)
    return dict(MOVED)


def _resolve(name: str, known: dict, moved: dict) -> str | None:
    """The module a dotted import name refers to (the longest known prefix)."""
    name = moved.get(name, name)
    parts = name.split(".")
    for k in range(len(parts), 0, -1):
        cand = ".".join(parts[:k])
        cand = moved.get(cand, cand)
        if cand in known or cand == "qcnmodel":
            return cand
    return None


def imports() -> list[tuple[str, str]]:
    """Every (importer, imported) pair of package modules, lazy imports included."""
    known = _modules()
    moved = _moved()
    pairs = set()
    for mod, path in known.items():
        package = mod if path.name == "__init__.py" else mod.rpartition(".")[0]
        if mod == "qcnmodel.__init__":
            package = "qcnmodel"
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                    base = ".".join(up + ([base] if base else []))
                names = [f"{base}.{a.name}" for a in node.names]
            for name in names:
                if not name.startswith("qcnmodel"):
                    continue
                target = _resolve(name, known, moved)
                if target and target != mod:
                    pairs.add((mod, target))
    return sorted(pairs)


def violations() -> list[tuple[str, str]]:
    """Imports that run against the layer order (minus :data:`KNOWN`)."""
    bad = []
    for a, b in imports():
        la, lb = layer_of(a), layer_of(b)
        if lb in (la, "foundation") or lb in ALLOWED[la]:
            continue
        if (a, b) not in KNOWN:
            bad.append((a, b))
    return bad


#: the drawing's stack, bottom to top (a layer stands above all that it may import)
STACK = ("foundation", "params", "sim", "analysis", "models", "validation", "studies", "cli",
         "testing", "front door")  # fmt: skip
_COLOURS = {
    "foundation": "#e8e8e8",
    "params": "#fde8c8",
    "analysis": "#d6e6f5",
    "sim": "#e3d9f0",
    "models": "#d5eedb",
    "validation": "#f5dada",
    "testing": "#e0f0f0",
    "studies": "#f8f0c8",
    "cli": "#dde3e8",
    "front door": "#ffffff",
}
_BOX_W, _BOX_H = 0.62, 0.78


def draw(path: Path = OUT) -> Path:
    """Draw the layers as a stack of boxes (their modules with line counts) and the imports
    between layers as arcs on the right (grey, labelled with the number of module pairs);
    an import against the order would be a red arc on the left."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt
    from matplotlib.patches import FancyBboxPatch

    known = _modules()
    pairs = imports()
    members: dict[str, list] = {k: [] for k in STACK}
    for mod, file in known.items():
        members[layer_of(mod)].append((mod, len(file.read_text().splitlines())))
    arrows = Counter((layer_of(a), layer_of(b)) for a, b in pairs if layer_of(a) != layer_of(b))
    bad = {(layer_of(a), layer_of(b)) for a, b in set(violations()) | KNOWN}

    fig, ax = plt.subplots(figsize=(13, 12))
    ax.set_xlim(-0.2, 1.2)
    ax.set_ylim(-0.3, len(STACK))
    ax.axis("off")
    for y, layer in enumerate(STACK):
        ax.add_patch(FancyBboxPatch((0.02, y), _BOX_W, _BOX_H, fc=_COLOURS[layer], ec="0.3",
                                    boxstyle="round,pad=0.004,rounding_size=0.02"))  # fmt: skip
        mods = sorted(members[layer], key=lambda m: -m[1])
        total = sum(n for _, n in mods)
        ax.text(0.03, y + _BOX_H - 0.06, f"{layer}: {len(mods)} modules, {total} lines",
                fontsize=10, weight="bold", va="top")  # fmt: skip
        text = ", ".join(f"{_short(m)} {n}" for m, n in mods)
        size, lines = 6.3, _wrap(text, 90)
        while lines.count("\n") >= 4 and size > 4.0:  # a long list: smaller, wider lines
            size -= 0.3
            lines = _wrap(text, int(90 * 6.3 / size))
        ax.text(0.03, y + _BOX_H - 0.26, lines, fontsize=size, va="top",
                family="monospace")  # fmt: skip
    level = {layer: y for y, layer in enumerate(STACK)}
    for (src, dst), n in sorted(arrows.items(), key=lambda kv: level[kv[0][0]] - level[kv[0][1]]):
        y0, y1 = level[src] + _BOX_H / 2, level[dst] + _BOX_H / 2
        span = y0 - y1
        against = (src, dst) in bad or span < 0
        side = 0.02 if against else 0.02 + _BOX_W
        reach = (0.018 + 0.034 * abs(span)) * (-1 if against else 1)
        colour = "C3" if against else "0.4"
        t = np.linspace(0, np.pi, 60)
        xs = side + reach * np.sin(t)
        ys = y1 + (y0 - y1) * (1 + np.cos(t)) / 2
        ax.plot(xs, ys, color=colour, lw=0.9)
        ax.annotate("", xy=(xs[-1], ys[-1]), xytext=(xs[-3], ys[-3]),
                    arrowprops={"arrowstyle": "-|>", "color": colour, "lw": 0.9})  # fmt: skip
        ax.text(xs[30], ys[30], f"{n}", fontsize=7, color=colour, ha="center", va="center",
                bbox={"fc": "white", "ec": "none", "pad": 0.3})  # fmt: skip
    ax.set_title("qcnmodel, by layer: each stands above what it may import. Arcs: imports "
                 "between layers (importer above -> imported below), labelled with the number "
                 "of module pairs;\nred on the left: against the order (only the known ones "
                 "of docs/layers.py KNOWN can stand). Drawn by docs/layers.py from the code's "
                 "imports.", fontsize=9)  # fmt: skip
    fig.savefig(path, dpi=90, metadata={"Software": None})
    plt.close(fig)
    return path


def _short(mod: str) -> str:
    parts = mod.split(".")
    if mod == "qcnmodel.__init__":
        return "qcnmodel/__init__"
    return ".".join(parts[2:]) if len(parts) > 2 else parts[-1]


def _wrap(text: str, width: int) -> str:
    import textwrap

    return "\n".join(textwrap.wrap(text, width))


if __name__ == "__main__":
    bad = violations()
    for a, b in bad:
        print(f"against the layer order: {a} ({layer_of(a)}) imports {b} ({layer_of(b)})")
    print(f"wrote {draw()}")
    sys.exit(1 if bad else 0)
