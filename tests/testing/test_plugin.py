"""The pytest plugin in inner sessions (pytester), loaded explicitly with ``-p`` (the
entry point's name is the module's, so this holds with or without the installed entry point;
the inner sessions do not autoload plugins)."""

import importlib
import shutil
from pathlib import Path

import pytest

from qcnmodel import testing as qt

ROOT = Path(__file__).resolve().parents[2]
PLUGIN = ("-p", "qcnmodel.testing.plugin", "-p", "no:cacheprovider")


@pytest.fixture(autouse=True)
def _no_autoload(monkeypatch):
    # the inner sessions load only this plugin (the others cost seconds per session)
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")


def run(pytester, *args):
    return pytester.runpytest_inprocess(*PLUGIN, *args)


def test_entry_point_is_declared():
    import tomllib

    data = tomllib.loads((ROOT / "pyproject.toml").read_text())
    ((name, target),) = data["project"]["entry-points"]["pytest11"].items()
    assert name == target == "qcnmodel.testing.plugin"
    module = importlib.import_module(target)
    assert callable(module.pytest_addoption) and hasattr(module, "qcn_sim")


def test_qcn_sim_is_simulate_cached_by_its_arguments(pytester):
    pytester.makepyfile(
        """
        import qcnmodel as qm

        def test_cached(qcn_sim):
            a = qcn_sim("og-hotspot", duration="10ms", seed=1)
            assert qcn_sim("og-hotspot", duration="10ms", seed=1) is a
            assert qcn_sim("og-hotspot", duration="10ms", seed=2) is not a
            b = qm.simulate("og-hotspot", duration="10ms", seed=1)
            assert a.counters == b.counters and a.summary()["cnms"] == b.summary()["cnms"]
            assert a.dataset.identical(b.dataset)
        """
    )
    run(pytester).assert_outcomes(passed=1)


def test_a_plugin_test_on_a_10ms_run_runs_again_after_the_cache_is_cleared(pytester):
    # a second session simulates again (its time is a benchmark's, not a test's:
    # benchmarks/cold_start.py), with the engine the first chose or the compiled kernel
    pytester.makepyfile(
        """
        from qcnmodel.testing import assert_invariants

        def test_run(qcn_sim):
            misses = qcn_sim.cache_info()["misses"]  # counted per process (pytester: ours)
            r = qcn_sim("og-hotspot", duration="10ms", seed=3)
            assert_invariants(r)
            assert r.dataset.attrs["engine"] in ("kernel", "oracle")
            assert qcn_sim.cache_info()["misses"] == misses + 1  # simulated, not a hit
        """
    )
    run(pytester).assert_outcomes(passed=1)
    qt.cache_clear()  # the next session simulates again
    run(pytester).assert_outcomes(passed=1)


def test_qcn_params_from_the_command_line_and_the_ini_file(pytester):
    shutil.copy(ROOT / "examples" / "netfpga-1g.toml", pytester.path / "mine.toml")
    pytester.makepyfile(
        """
        def test_params(qcn_params):
            assert qcn_params.line_rate == 1e9  # the netfpga-1g preset's 1 Gb/s
        """
    )
    run(pytester, "--qcn-params", "mine.toml").assert_outcomes(passed=1)
    run(pytester).assert_outcomes(skipped=1)  # no file named: skipped, not failed
    pytester.makeini("[pytest]\nqcn_params = mine.toml\n")
    run(pytester).assert_outcomes(passed=1)
    result = run(pytester, "--qcn-params", "nope.toml")
    assert "no such parameter file" in result.stdout.str() + result.stderr.str()
    assert result.ret == 4


def test_bad_plugin_options_are_usage_errors(pytester):
    # a report path that is a file, and parameter files that are missing, a directory, a
    # device, invalid or with a [ranges] table check refuses: each a usage error at start-up
    # (exit 4) naming the option, without a traceback, whether or not a selected test asks
    # for the parameters
    pytester.makepyfile("def test_params(qcn_params):\n    pass\n\ndef test_other():\n    pass\n")
    (pytester.path / "taken").write_text("a file\n")
    (pytester.path / "adir.toml").mkdir()
    (pytester.path / "bad.toml").write_text("[qcn]\nw = nan\n")
    (pytester.path / "badrange.toml").write_text('[ranges]\ncapacity = "0bps"\n')
    for args, needle in (
        (("--qcn-report", "taken"), "--qcn-report: cannot write the report to"),
        (("--qcn-params", "nope.toml"), "--qcn-params: no such parameter file"),
        (("--qcn-params", "adir.toml"), "is a directory, not a parameter file"),
        (("--qcn-params", "/dev/zero"), "'/dev/zero' is a device, not a regular file"),
        (("--qcn-params", "bad.toml"), "--qcn-params: "),
        (("--qcn-params", "badrange.toml"), "badrange.toml, line 2: "),
    ):
        for select in ((), ("-k", "test_other")):
            result = run(pytester, *args, *select)
            text = result.stdout.str() + result.stderr.str()
            assert needle in text, (args, select, text)
            assert "Traceback" not in text and "plugin.py" not in text, (args, text)
            assert result.ret == 4, (args, select, text)  # pytest's usage error
            assert "passed" not in text  # no test ran


def test_an_empty_parameter_file_option_is_a_usage_error(pytester):
    # what `pytest --qcn-params "$PARAMS"` gives when the CI variable is unset
    pytester.makepyfile("def test_params(qcn_params):\n    pass\n\ndef test_other():\n    pass\n")
    for args, ini, needle in (
        (("--qcn-params", ""), None, "--qcn-params: empty value"),
        (("--qcn-params", " "), None, "--qcn-params: empty value"),
        ((), "[pytest]\nqcn_params =\n", "qcn_params (ini option of "),
        (("-o", "qcn_params="), None, "qcn_params (ini option of "),
    ):
        if ini:
            pytester.makeini(ini)
        result = run(pytester, *args)
        text = result.stdout.str() + result.stderr.str()
        assert needle in text and "empty value" in text, (args, text)
        assert result.ret == 4 and "Traceback" not in text, (args, text)
        assert "passed" not in text
        (pytester.path / "tox.ini").unlink(missing_ok=True)
    run(pytester).assert_outcomes(passed=1, skipped=1)  # not given at all: skipped


def test_assert_stable_judges_the_fixture_params_at_the_files_capacity(pytester):
    # the file's [ranges] capacity, as `qcnmodel check FILE` (test_assert_stable_capacity.py:
    # unstable there, N = 10 at 300 us on a 10 Gb/s port)
    (pytester.path / "cap10.toml").write_text(
        'preset = "802.1qau"\n[ranges]\nrtt = "300us"\nflows = "10"\ncapacity = "10Gbps"\n'
    )
    pytester.makepyfile(
        """
        from qcnmodel.testing import assert_stable

        def test_file(qcn_params):
            assert_stable(qcn_params, rtt="300us", n_flows=10)

        def test_copy(qcn_params):  # a changed copy is not the file: half the line rate
            assert_stable(qcn_params.replace(w=qcn_params.w), rtt="300us", n_flows=10)
        """
    )
    result = run(pytester, "--qcn-params", "cap10.toml")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*C = 10 Gb/s (the file's ?ranges? capacity)*",
                                 "*model UNSTABLE*"])  # fmt: skip


def test_qcn_slow_marker(pytester):
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.qcn_slow
        def test_long():
            pass

        def test_short():
            pass
        """
    )
    run(pytester, "--strict-markers").assert_outcomes(passed=1, skipped=1)
    run(pytester, "--strict-markers", "--qcn-slow").assert_outcomes(passed=2)


def test_report_lists_passing_and_failing_assertions(pytester):
    pytester.makepyfile(
        """
        import numpy as np
        from qcnmodel.testing import assert_trace_close

        T = np.arange(1, 101) * 1e-3

        def test_close():
            assert_trace_close((T, T * 0 + 100.0), (T, T * 0 + 101.0), tolerance=0.05)

        def test_far():
            assert_trace_close((T, T * 0 + 100.0), (T, T * 0 + 150.0), tolerance=0.05)
        """
    )
    result = run(pytester, "--qcn-report", "out")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*qcnmodel report: *report.html (2 assertion(s))*"])
    md = (pytester.path / "out" / "report.md").read_text()
    assert "2 assertion(s), 1 passed, 1 failed" in md
    assert "PASS `assert_trace_close`" in md and "FAIL `assert_trace_close`" in md
    assert "test_report_lists_passing_and_failing_assertions.py::test_far" in md
    figures = sorted((pytester.path / "out" / "figures").glob("*.png"))
    html = (pytester.path / "out" / "report.html").read_text()
    assert len(figures) == 2 and 'src="figures/' in html


REPORT_TESTS = """
import numpy as np
from qcnmodel.testing import assert_trace_close

T = np.arange(1, 101) * 1e-3

def test_one():
    assert_trace_close((T, T * 0 + 100.0), (T, T * 0 + 101.0), tolerance=0.05)

def test_two():
    {second}

def test_three():
    assert_trace_close((T, T * 0 + 100.0), (T, T * 0 + 101.0), tolerance=0.05)
"""


def test_a_session_that_did_not_run_every_test_says_so_in_its_report(pytester):
    # Ctrl-C in the second of three tests: one test finished, its assertion is listed, and
    # the report and the terminal line say the session was interrupted
    pytester.makepyfile(REPORT_TESTS.format(second="raise KeyboardInterrupt"))
    result = pytester.runpytest_inprocess(*PLUGIN, "--qcn-report", "out", no_reraise_ctrlc=True)
    assert result.ret == 2  # pytest's "interrupted"
    result.stdout.fnmatch_lines(["*qcnmodel report: *report.html (1 assertion(s); INCOMPLETE: "
                                 "session interrupted after 1 of 3 test(s))*"])  # fmt: skip
    md = (pytester.path / "out" / "report.md").read_text()
    html = (pytester.path / "out" / "report.html").read_text()
    assert md.startswith("# qcnmodel validation report (INCOMPLETE)\n")
    assert "INCOMPLETE: session interrupted after 1 of 3 test(s)" in md
    assert "(INCOMPLETE)</title>" in html and "session interrupted after 1 of 3" in html
    # -x after a failing second test: stopped, not interrupted
    pytester.makepyfile(REPORT_TESTS.format(second="assert False"))
    result = run(pytester, "--qcn-report", "out", "-x")
    result.assert_outcomes(passed=1, failed=1)
    md = (pytester.path / "out" / "report.md").read_text()
    assert "INCOMPLETE: session stopped after 2 of 3 test(s)" in md
    # every test ran: no such line
    run(pytester, "--qcn-report", "out").assert_outcomes(passed=2, failed=1)
    md = (pytester.path / "out" / "report.md").read_text()
    assert md.startswith("# qcnmodel validation report\n") and "INCOMPLETE" not in md


def test_a_new_report_keeps_no_figure_of_an_earlier_one(pytester):
    pytester.makepyfile(REPORT_TESTS.format(second="pass"))
    run(pytester, "--qcn-report", "out").assert_outcomes(passed=3)
    figures = pytester.path / "out" / "figures"
    assert len(list(figures.glob("*.png"))) == 2
    (figures / "mine.png").write_bytes(b"not the plugin's")  # not named as its figures
    run(pytester, "--qcn-report", "out", "-k", "test_one").assert_outcomes(passed=1, deselected=2)
    md = (pytester.path / "out" / "report.md").read_text()
    assert "INCOMPLETE" not in md  # deselected tests are not tests that did not run
    left = sorted(p.name for p in figures.glob("*.png"))
    assert len(left) == 2 and "mine.png" in left, left
    (shown,) = [name for name in left if name != "mine.png"]
    assert f"figures/{shown}" in md


def test_readme_three_line_test(pytester):
    shutil.copy(ROOT / "examples" / "802.1qau.toml", pytester.path / "my-params.toml")
    pytester.makepyfile(
        """
        from qcnmodel.testing import assert_stable

        def test_my_parameters(qcn_params):
            assert_stable(qcn_params, rtt=["50us", "200us"], n_flows=[1, 10], confirm="packets")
        """
    )
    run(pytester, "--qcn-params", "my-params.toml").assert_outcomes(passed=1)


@pytest.fixture
def example(pytester):
    for f in (ROOT / "examples" / "custom_model").glob("*.py"):
        shutil.copy(f, pytester.path / f.name)
    pytester.syspathinsert()
    return pytester


def test_custom_model_example_passes(example):
    run(example).assert_outcomes(passed=2)


@pytest.mark.slow
def test_custom_model_example_fails_for_a_wrong_model(example):
    # 16 x the additive increase: the equilibrium queue moves far above the simulated one
    test = example.path / "test_aimd_qcn.py"
    test.write_text(test.read_text().replace("k=1.0", "k=16.0"))
    result = run(example, "-k", "equilibrium")
    result.assert_outcomes(failed=1, deselected=1)
    result.stdout.fnmatch_lines(["*assert_trace_close: queue (mean): error*", "*figure: *.png"])
