"""pytest plugin of qcnmodel (entry point ``pytest11`` named ``qcnmodel.testing.plugin``).

Installed with qcnmodel, it is active in every pytest run; without the installed entry point
load it with ``-p qcnmodel.testing.plugin`` (the entry point has the module's name, so giving
both registers it once; ``-p no:qcnmodel.testing.plugin`` switches it off). It provides:

* fixture ``qcn_sim``: a callable ``qcn_sim(scenario, duration=None, seed=0, **options)``
  returning the :class:`~qcnmodel.sim.SimResult` of :func:`qcnmodel.simulate` (scenario name,
  topology file or NetworkSpec; ``options`` as ``qcnmodel.simulate``: ``protocol``,
  ``params``, ``overrides``, ``bin_width`` ...), cached by all its arguments for the session;
* fixture ``qcn_params``: the :class:`~qcnmodel.params.QCNParams` of the TOML file named by
  ``--qcn-params FILE`` or the ini option ``qcn_params`` (relative to the rootdir); the test
  is skipped when neither is set. The file is read once, before any test runs: an empty
  value, a missing, unreadable or invalid file is a usage error (pytest's exit status 4).
  :func:`~qcnmodel.testing.assert_stable` judges this object at the file's ``[ranges]``
  capacity, as ``qcnmodel check FILE`` does;
* marker ``qcn_slow``: such tests are skipped unless ``--qcn-slow`` is given;
* ``--qcn-report DIR``: after the session, ``DIR/report.md`` and ``DIR/report.html`` list every
  assertion of :mod:`qcnmodel.testing` made (pass or fail) with its numbers and figures
  (written to ``DIR/figures``). A session that did not run all its tests (interrupted,
  stopped by ``-x`` or ``--maxfail``) gets a report that says so in its title and first
  line; figures of an earlier session that the new report does not show are removed.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from qcnmodel.testing import _resolve, _sim, report

__all__ = ["pytest_addoption", "pytest_configure", "qcn_params", "qcn_sim"]

#: tests of the session that finished (their teardown reported), for the report's status
_RAN = {"tests": 0}


def pytest_addoption(parser) -> None:
    """Register ``--qcn-params``, ``--qcn-slow``, ``--qcn-report`` and the ini option."""
    group = parser.getgroup("qcnmodel", "qcnmodel validation")
    group.addoption("--qcn-params", metavar="FILE", default=None,
                    help="QCN parameter file (TOML) for the qcn_params fixture")  # fmt: skip
    group.addoption("--qcn-slow", action="store_true", default=False,
                    help="run the tests marked qcn_slow (skipped otherwise)")  # fmt: skip
    group.addoption("--qcn-report", metavar="DIR", default=None,
                    help="write DIR/report.md and DIR/report.html of every qcnmodel "
                    "assertion, with figures")  # fmt: skip
    parser.addini("qcn_params", "QCN parameter file (TOML) for the qcn_params fixture",
                  default=None)  # fmt: skip


def pytest_configure(config) -> None:
    """Register the ``qcn_slow`` marker; send figures to the report directory if any."""
    config.addinivalue_line(
        "markers", "qcn_slow: long qcnmodel validation, run only with --qcn-slow"
    )
    out = config.getoption("--qcn-report")
    if out:
        d = Path(out)
        if not d.is_absolute():
            d = Path(config.invocation_params.dir) / d
        try:  # the directory and its figures folder, before any test runs
            if d.exists() and not d.is_dir():
                raise NotADirectoryError(f"{str(d)!r} exists and is not a directory")
            report.set_figure_dir(d / "figures")
        except OSError as exc:
            raise pytest.UsageError(
                f"--qcn-report: cannot write the report to {str(d)!r}: {exc.strerror or exc}"
            ) from None
        config._qcn_report_dir = d
        report.keep_figures(True)
        report.clear()
    _RAN["tests"] = 0
    config._qcn_params = _load_params_option(config)


def _params_option(config) -> tuple[str, str, Path] | None:
    """``(name, value, base folder)`` of the parameter file option given, None if neither is.

    ``--qcn-params`` wins over the ini option; an empty value of either is a usage error.
    """
    value = config.getoption("--qcn-params")
    if value is not None:
        name, base = "--qcn-params", Path(config.invocation_params.dir)
    else:
        value = config.getini("qcn_params")
        if value is None or (not value and not _ini_has(config, "qcn_params")):
            return None
        name, base = f"qcn_params (ini option of {config.inipath})", Path(config.rootpath)
    if not str(value).strip():
        raise pytest.UsageError(f"{name}: empty value; give a parameter file (TOML) or leave "
                                "the option out")  # fmt: skip
    return name, str(value), base


def _ini_has(config, key: str) -> bool:
    """Whether the ini file or ``-o`` sets ``key`` (pytest < 9 reads an absent string
    option as ``""``, as it reads an empty one)."""
    inicfg = getattr(config, "_inicfg", None)  # pytest >= 9, ``-o`` values included
    if inicfg is None:
        inicfg = getattr(config, "inicfg", None) or {}
    overrides = getattr(config.known_args_namespace, "override_ini", None) or []
    return key in inicfg or any(o.split("=", 1)[0].strip() == key for o in overrides)


def _load_params_option(config):
    """The QCNParams of the parameter file option, read once at start-up; None if not given.

    A missing file, a directory, a device or pipe, an invalid file or a ``[ranges]`` table
    that ``qcnmodel check`` refuses is a usage error naming the option.
    """
    given = _params_option(config)
    if given is None:
        return None
    name, value, base = given
    p = Path(value)
    if not p.is_absolute():
        p = base / p
    from qcnmodel.params import load_params

    try:
        _resolve.params_file(p, name)
        params = load_params(p, extra_tables=("ranges",))
        _resolve.file_capacity(p)  # the [ranges] table, as check reads it
    except ValueError as exc:  # names the file, the line and the field
        text = str(exc)
        raise pytest.UsageError(text if text.startswith(name) else f"{name}: {text}") from None
    return _resolve.remember_file(params, p)


def pytest_unconfigure(config) -> None:
    """Forget the report's figure directory (a later session in this process starts afresh)."""
    if getattr(config, "_qcn_report_dir", None) is not None:
        report.keep_figures(False)
        report.set_figure_dir(None)
    _resolve.forget_files()


def pytest_collection_modifyitems(config, items) -> None:
    """Skip ``qcn_slow`` tests unless ``--qcn-slow``."""
    if config.getoption("--qcn-slow"):
        return
    skip = pytest.mark.skip(reason="qcn_slow: run with --qcn-slow")
    for item in items:
        if item.get_closest_marker("qcn_slow") is not None:
            item.add_marker(skip)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item) -> None:
    """Name the running test in the assertion records."""
    report.set_test(item.nodeid)


def pytest_runtest_logreport(report) -> None:
    """Count the tests that finished (for the report's status)."""
    if report.when == "teardown":
        _RAN["tests"] += 1


def _incomplete(session, exitstatus) -> str:
    """Why the session's report is incomplete, or "" when every collected test ran."""
    ran, n = _RAN["tests"], session.testscollected
    of = f"{ran} of {n} test(s)" if n >= ran else f"{ran} test(s)"
    if exitstatus == pytest.ExitCode.INTERRUPTED:
        return f"session interrupted after {of}"
    if ran < n:
        why = session.shouldfail or session.shouldstop
        return f"session stopped after {of}" + (f" ({why})" if why else "")
    return ""


def pytest_sessionfinish(session, exitstatus) -> None:
    """Write the report of ``--qcn-report``, saying so when not every test ran."""
    d = getattr(session.config, "_qcn_report_dir", None)
    if d is not None:
        session.config._qcn_incomplete = _incomplete(session, exitstatus)
        report.write_report(d, incomplete=session.config._qcn_incomplete)


def pytest_terminal_summary(terminalreporter, config) -> None:
    """Say where the report is."""
    d = getattr(config, "_qcn_report_dir", None)
    if d is not None:
        n = len(report.records())
        why = getattr(config, "_qcn_incomplete", "")
        terminalreporter.write_line(f"qcnmodel report: {d / 'report.html'} ({n} assertion(s)"
                                    + (f"; INCOMPLETE: {why})" if why else ")"))  # fmt: skip


@pytest.fixture(scope="session")
def qcn_sim():
    """``qcn_sim(scenario, duration=None, seed=0, **options)`` -> SimResult, cached.

    Same arguments as :func:`qcnmodel.simulate` (``scenario`` may also be a topology file);
    the same arguments give the same result object for the whole session.
    """

    def run(scenario, duration=None, seed=0, **options):
        return _sim.run(scenario, duration=duration, seed=seed, **options)

    run.cache_info = _sim.cache_info
    return run


@pytest.fixture(scope="session")
def qcn_params(pytestconfig):
    """The QCNParams of ``--qcn-params FILE`` or the ini option ``qcn_params``.

    Skips the test when neither is given. The file was read when the session started (a bad
    one is a usage error then); :func:`~qcnmodel.testing.assert_stable` judges this object
    at the file's ``[ranges]`` capacity.
    """
    params = getattr(pytestconfig, "_qcn_params", None)
    if params is None:
        pytest.skip("qcn_params: no parameter file (give --qcn-params FILE or ini qcn_params)")
    return params
