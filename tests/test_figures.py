"""`qcnmodel figures` regenerates captioned figures deterministically."""

import hashlib

import pytest

from qcnmodel.cli import main


def digest(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.slow  # the analysis group twice, ~30 s
def test_regenerate_is_deterministic(tmp_path, capsys, monkeypatch):
    from qcnmodel.studies import report

    # the analysis group on a small grid (the full one costs ~150 loop evaluations per run)
    small = dict(n_rtt=12, flows=(1, 10, 100), weights=(2.0, 8.0), ps_values=(0.01, 0.05))
    real = report.ReportConfig
    monkeypatch.setattr(report, "ReportConfig", lambda **kw: real(**{**small, **kw}))
    out = tmp_path / "figs"
    assert main(["figures", "--out", str(out), "--only", "analysis", "--quiet"]) == 0
    first = {p.name: digest(p) for p in out.glob("*.png")}
    index = (out / "README.md").read_text()
    assert len(first) >= 5 and all(f"`{name}`" in index for name in first)
    assert main(["figures", "--out", str(out), "--only", "analysis", "--quiet"]) == 0
    assert {p.name: digest(p) for p in out.glob("*.png")} == first


def test_unknown_group(tmp_path, capsys):
    assert main(["figures", "--out", str(tmp_path), "--only", "nope", "--quiet"]) == 2
    assert "unknown figure group" in capsys.readouterr().err


def test_nyquist_panel_says_unstable_with_legend_and_arrows():
    import matplotlib.pyplot as plt

    from qcnmodel.analysis.loop import DelayedLoop
    from qcnmodel.analysis.plot import plot_nyquist

    # 3/(s(s+1)) e^(-s tau): by hand, |G| = 1 at w = 1.59 rad/s where arg G = -148 deg, so
    # PM0 = 32 deg and the delay margin is 0.56 rad / 1.59 rad/s = 0.35 s; tau = 2 s is beyond
    loop = DelayedLoop([3.0], [1.0, 1.0, 0.0], 2.0)
    assert not loop.margins().stable  # the analysis says unstable; the figure must say so
    ax = plot_nyquist(loop).axes[0]
    assert ax.get_title().startswith("UNSTABLE: ")
    assert "encirclement" in ax.get_title()
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert "critical point -1" in labels and "L(jw), w > 0" in labels
    assert len(ax.texts) >= 2  # direction arrows (annotations)
    plt.close("all")


def test_stability_map_axes_in_words_and_wrapped_phase():
    import matplotlib.pyplot as plt
    import numpy as np

    from qcnmodel.analysis.plot import plot_stability_map
    from qcnmodel.analysis.stability import stability_map
    from qcnmodel.models.fopdt import FOPDTModel

    ds = stability_map(FOPDTModel(), x="rtt", x_values=np.geomspace(1e-5, 1e-1, 9),
                       y="n_flows", y_values=[1, 10, 100])  # fmt: skip
    assert float(ds["phase_margin_deg"].min()) < -180  # an unwrapped margin to wrap
    fig = plot_stability_map(ds)
    ax = fig.axes[0]
    assert ax.get_xlabel() == "round-trip time RTT (us)"
    assert ax.get_ylabel() == "number of flows N"
    assert fig.axes[1].get_ylabel() == "phase margin (deg, wrapped to (-180, 180])"
    # N = 1 at the line rate does not congest the port: an open loop, PM +inf, drawn at the
    # top of the colour scale and hatched (9 cells), nothing masked
    shown = ax.collections[0].get_array()
    assert np.ma.max(np.abs(shown)) <= 180 and np.ma.count_masked(shown) == 0
    assert np.ma.getdata(shown).reshape(3, 9)[0].tolist() == [90.0] * 9
    assert len(ax.patches) == 9
    plt.close("all")


def test_a_refused_figures_command_leaves_no_folder(tmp_path):
    from qcnmodel.cli import main

    out = tmp_path / "figs"
    assert main(["figures", "--only", "bogus", "--out", str(out)]) == 2
    assert main(["figures", "--jobs", "0", "--out", str(out)]) == 2
    assert not out.exists()


def test_the_help_names_every_group():
    from qcnmodel.cli.figures import GROUP_NAMES
    from qcnmodel.studies.figures import GROUPS, _optional_groups

    _optional_groups()  # the groups registered on import of their modules (compare)
    assert set(GROUPS) == set(GROUP_NAMES)
