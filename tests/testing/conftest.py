"""The plugin tests run inner pytest sessions in this process (pytester).

A module imported for the first time inside an inner session is unloaded after it, and some
cannot be loaded twice (numpy's C extensions; dask's ``importlib_metadata`` finder, which
stays on ``sys.meta_path``). The warm-up below imports, once and outside the inner sessions,
everything the inner tests use, and loads the compiled kernel.
"""

import pytest

pytest_plugins = ["pytester"]


@pytest.fixture(scope="session", autouse=True)
def _warm(_figure_dir):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot  # noqa: F401
    import numpy.fft  # noqa: F401

    import qcnmodel as qm
    import qcnmodel.testing.plugin  # noqa: F401
    import qcnmodel.validation.measure  # noqa: F401
    import qcnmodel.validation.network  # noqa: F401
    from qcnmodel.testing import report

    r = qm.simulate("og-hotspot", duration="1ms", seed=0)
    r.dataset.identical(r.dataset)
    qm.build_model("qcn", "802.1qau", rtt=100e-6, n_flows=10).loop().margins()
    report.set_figure_dir(_figure_dir)
    fig = matplotlib.pyplot.figure()
    report.save_figure(fig, "warm-up")
    yield
    report.set_figure_dir(None)


@pytest.fixture(scope="session")
def _figure_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("qcn-figures")


@pytest.fixture(autouse=True)
def _figures_in_pytest_tmp(_figure_dir):
    """The figures of each test's assertions go to pytest's temporary tree (else to a
    directory of their own in the system's, which no one removes; an inner session's plugin
    sets the default again when it ends)."""
    from qcnmodel.testing import report

    report.set_figure_dir(_figure_dir)
