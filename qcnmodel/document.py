"""A tiny document model for qcnmodel's reports: Markdown and self-contained HTML.

A :class:`Document` is a list of blocks (headings, paragraphs, tables, figures). ``report``,
``validate`` and ``check`` build one and write it as Markdown (figures as PNG files next to it)
and as a single HTML file with the figures embedded (base64), so the HTML can be mailed or
attached to a ballot comment without its folder.
"""

from __future__ import annotations

import base64
import html
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["Document"]

_CSS = """
body { font-family: system-ui, sans-serif; max-width: 980px; margin: 2em auto; color: #222;
       line-height: 1.45; padding: 0 1em; }
table { border-collapse: collapse; margin: 1em 0; font-size: 0.92em; }
th, td { border: 1px solid #bbb; padding: 0.25em 0.6em; text-align: right; }
th { background: #eee; }
td.l, th.l { text-align: left; }
figure { margin: 1.5em 0; }
figcaption { font-size: 0.9em; color: #444; }
img { max-width: 100%; }
.pass { color: #176317; font-weight: bold; } .fail { color: #a31515; font-weight: bold; }
code { background: #f4f4f4; padding: 0 0.2em; }
"""


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        if value != value:
            return "n/a"
        if value in (float("inf"), float("-inf")):
            return "∞" if value > 0 else "−∞"
        return f"{value:.4g}"
    return str(value)


@dataclass
class Document:
    """An ordered list of blocks rendered to Markdown and HTML.

    Parameters
    ----------
    title : str
        The document title (first heading).
    """

    title: str
    blocks: list[tuple[str, Any]] = field(default_factory=list)

    def heading(self, text: str, level: int = 2) -> None:
        """Add a heading (level 2 by default; the title is level 1)."""
        self.blocks.append(("heading", (level, text)))

    def paragraph(self, text: str) -> None:
        """Add a paragraph (plain text; `code` spans in backticks are kept)."""
        self.blocks.append(("paragraph", text))

    def bullets(self, items: list[str]) -> None:
        """Add a bulleted list."""
        self.blocks.append(("bullets", list(items)))

    def table(self, header: list[str], rows: list[list[Any]], left: int = 1) -> None:
        """Add a table; the first ``left`` columns are left-aligned, floats shown with 4 digits."""
        self.blocks.append(("table", (list(header), [list(r) for r in rows], left)))

    def figure(self, path: str | Path, caption: str) -> None:
        """Add a figure from a PNG file already written next to the document."""
        self.blocks.append(("figure", (Path(path).resolve(), caption)))

    # ------------------------------------------------------------------ rendering
    def to_markdown(self, relative_to: Path | None = None) -> str:
        """Render as Markdown; figure paths are made relative to ``relative_to``."""
        out = [f"# {self.title}", ""]
        for kind, data in self.blocks:
            if kind == "heading":
                level, text = data
                out += ["#" * level + " " + text, ""]
            elif kind == "paragraph":
                out += [data, ""]
            elif kind == "bullets":
                out += [f"- {item}" for item in data] + [""]
            elif kind == "table":
                header, rows, _ = data
                out.append("| " + " | ".join(header) + " |")
                out.append("|" + "|".join("---" for _ in header) + "|")
                out += ["| " + " | ".join(_fmt(v) for v in row) + " |" for row in rows]
                out.append("")
            elif kind == "figure":
                path, caption = data
                rel = Path(os.path.relpath(path, relative_to)) if relative_to else path
                out += [f"![{caption}]({rel.as_posix()})", "", f"*{caption}*", ""]
        return "\n".join(out)

    def to_html(self) -> str:
        """Render as one self-contained HTML page (figures embedded as base64 PNG)."""
        esc = html.escape
        parts = [
            "<!DOCTYPE html><html><head><meta charset='utf-8'>",
            f"<title>{esc(self.title)}</title><style>{_CSS}</style></head><body>",
            f"<h1>{esc(self.title)}</h1>",
        ]
        for kind, data in self.blocks:
            if kind == "heading":
                level, text = data
                parts.append(f"<h{level}>{esc(text)}</h{level}>")
            elif kind == "paragraph":
                parts.append(f"<p>{_inline(data)}</p>")
            elif kind == "bullets":
                parts.append("<ul>" + "".join(f"<li>{_inline(i)}</li>" for i in data) + "</ul>")
            elif kind == "table":
                header, rows, left = data
                th = "".join(
                    f"<th class='{'l' if i < left else ''}'>{esc(h)}</th>"
                    for i, h in enumerate(header)
                )
                body = []
                for row in rows:
                    cells = []
                    for i, v in enumerate(row):
                        text = _fmt(v)
                        cls = "l" if i < left else ""
                        if text in ("pass", "fail"):
                            cls += f" {text}"
                        cells.append(f"<td class='{cls.strip()}'>{esc(text)}</td>")
                    body.append("<tr>" + "".join(cells) + "</tr>")
                parts.append(f"<table><tr>{th}</tr>{''.join(body)}</table>")
            elif kind == "figure":
                path, caption = data
                b64 = base64.b64encode(Path(path).read_bytes()).decode("ascii")
                parts.append(
                    f"<figure><img alt='{esc(caption)}' src='data:image/png;base64,{b64}'>"
                    f"<figcaption>{esc(caption)}</figcaption></figure>"
                )
        parts.append("</body></html>")
        return "\n".join(parts)

    def write(self, out_dir: str | Path, stem: str = "report") -> tuple[Path, Path]:
        """Write ``<stem>.md`` and ``<stem>.html`` into ``out_dir``; return both paths."""
        out_dir = Path(out_dir)
        out_dir.mkdir(parents=True, exist_ok=True)
        md = out_dir / f"{stem}.md"
        page = out_dir / f"{stem}.html"
        md.write_text(self.to_markdown(relative_to=out_dir.resolve()))
        page.write_text(self.to_html())
        return md, page


def _inline(text: str) -> str:
    """Escape text for HTML, turning `code` spans into <code>."""
    pieces = html.escape(text).split("`")
    return "".join(f"<code>{p}</code>" if i % 2 else p for i, p in enumerate(pieces))
