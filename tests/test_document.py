"""The report document model renders Markdown and self-contained HTML."""

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from qcnmodel.document import Document  # noqa: E402


def test_markdown_and_html(tmp_path):
    fig, ax = plt.subplots()
    ax.plot([0, 1], [1, 0])
    fig.savefig(tmp_path / "f.png")
    plt.close(fig)
    doc = Document("T")
    doc.heading("Section")
    doc.paragraph("Use `qcnmodel check`.")
    doc.table(
        ["quantity", "value", "verdict"], [["pm", 12.3456789, "pass"], ["gm", float("inf"), "fail"]]
    )
    doc.figure(tmp_path / "f.png", "A line")
    md, page = doc.write(tmp_path / "out")
    text = md.read_text()
    assert "| pm | 12.35 | pass |" in text and "| gm | ∞ | fail |" in text
    assert "![A line](../f.png)" in text
    h = page.read_text()
    assert "data:image/png;base64," in h and "<code>qcnmodel check</code>" in h
    assert "class='l pass'" in h or "class='pass'" in h
