"""The one line on stderr that names what compiles (numba, once) before it does, also when
stderr is not a terminal, and nothing with --quiet: margins and validate (check: in
tests/test_check.py). The compiled state is faked: only the wiring is tested."""

from qcnmodel.cli import main


def test_margins_says_what_compiles_unless_quiet(capsys, monkeypatch):
    # stderr is not a terminal here: the packet-fidelity model's kernels are still named
    # before they compile (pretended not compiled), and --quiet silences it
    from qcnmodel.studies import compiling

    for quiet in (False, True):
        monkeypatch.setattr(compiling, "_ANNOUNCED", set())
        monkeypatch.setattr(compiling, "_ready", lambda what, family="qcn": False)
        code = main(["margins", "--flows", "10", "--rtt", "100us", "--json"]
                    + (["--quiet"] if quiet else []))  # fmt: skip
        err = capsys.readouterr().err
        said = [ln for ln in err.splitlines() if ln.startswith("qcnmodel: compiling")]
        assert code == 0
        if quiet:
            assert said == []
        else:  # N = 10 is judged by the trajectories: both kernels
            assert len(said) == 2 and "cohort kernel" in said[0]
            assert "trajectory kernel" in said[1]


def test_validate_names_the_model_kernels_before_it_runs(capsys, monkeypatch, tmp_path):
    # the simulator's kernels say so themselves (the engines' notice); the model's two are
    # named once, before the suite starts (the suite is stopped here: only the wiring counts)
    import qcnmodel.validation.suite as suite
    from qcnmodel.studies import compiling

    def stop(**kw):
        raise KeyboardInterrupt

    monkeypatch.setattr(suite, "run_validation", stop)
    for quiet in (False, True):
        monkeypatch.setattr(compiling, "_ANNOUNCED", set())
        monkeypatch.setattr(compiling, "_ready", lambda what, family="qcn": False)
        main(["validate", "--quick", "--out", str(tmp_path / "v")]
             + (["--quiet"] if quiet else []))  # fmt: skip
        said = [ln for ln in capsys.readouterr().err.splitlines()
                if ln.startswith("qcnmodel: compiling")]  # fmt: skip
        assert said == [] if quiet else (len(said) == 1 and "cohorts, trajectories" in said[0])


def test_a_model_sweep_says_what_compiles_unless_quiet(capsys, monkeypatch, tmp_path):
    from qcnmodel.studies import compiling

    for quiet in (False, True):
        monkeypatch.setattr(compiling, "_ANNOUNCED", set())
        monkeypatch.setattr(compiling, "_ready", lambda what, family="qcn": False)
        out = tmp_path / f"s{int(quiet)}.nc"
        code = main(["sweep", "--model", "qcn", "--grid", "rtt=100us", "--grid", "n_flows=10",
                     "--out", str(out)] + (["--quiet"] if quiet else []))  # fmt: skip
        said = [ln for ln in capsys.readouterr().err.splitlines()
                if ln.startswith("qcnmodel: compiling")]  # fmt: skip
        assert code == 0 and out.is_file()
        if quiet:
            assert said == []
        else:  # N = 10 is judged by the trajectories: both kernels
            assert len(said) == 2 and "cohort kernel" in said[0]
            assert "trajectory kernel" in said[1]
