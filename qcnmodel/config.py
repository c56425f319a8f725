"""Tuning numbers of qcnmodel in one dict, as python-control's ``control.config.defaults``.

Every number that is a choice of the toolkit rather than a property of QCN (grid densities,
caps, default bin widths, tolerances of numerical searches) lives here, under a
``"<layer>.<name>"`` key. Modules read ``config.defaults[...]`` at call time, so a user can
change a default for a session::

    import qcnmodel as qm
    qm.config.defaults["sim.bin_width"] = 1e-4

:func:`reset_defaults` restores the shipped values.
"""

from __future__ import annotations

import copy

__all__ = ["defaults", "reset_defaults"]

_SHIPPED: dict = {
    # -- analysis: margins, loops, stability maps ------------------------------------------
    # log grid (points per decade) on which gain crossovers are bracketed before brentq
    "analysis.crossover_grid_per_decade": 200,
    # log grid (points per decade) on which phase crossings are bracketed before Newton
    "analysis.phase_grid_per_decade": 50,
    # phase crossings where |G| is below this are ignored (gain margin above 200 dB)
    "analysis.gain_floor": 1e-10,
    # cap on the points of the Nyquist contour along the imaginary axis
    "analysis.nyquist_max_points": 200_000,
    # default frequency grid of DelayedLoop.frequency_response (points per decade)
    "analysis.frequency_points_per_decade": 100,
    # step responses: Pade order of the delay, points, and length in crossover periods
    "analysis.pade_order": 10,
    "analysis.step_points": 3000,
    "analysis.step_periods": 15,
    # stability_map defaults: RTT (lo, hi, points, log-spaced) and flows 1..max
    "analysis.map_rtt": (1e-6, 1e-3, 100),
    "analysis.map_max_flows": 100,
    # the most grid points of a stability map and delays of one margins_over_delay call
    "analysis.map_max_points": 1_000_000,
    "analysis.max_delays": 1_000_000,
    # critical_rtt's search interval (s) when the RTT enters the rational part
    "analysis.rtt_search": (1e-9, 1.0),
    # ... and for models judged by their trajectories (the congested packet-fidelity QCN
    # model): each RTT tried costs nonlinear runs (their step shrinks with the RTT below
    # 100 us), so the interval is the one data-centre loops live in
    "analysis.trajectory_rtt_search": (20e-6, 0.1),
    # ... its first RTT where the model has no linearised critical RTT inside that interval,
    # and the relative spacing of the RTTs across the bracket (one ladder rung, x 1.5) where
    # the odds are counted: four RTTs, whose odds are interpolated
    "analysis.trajectory_rtt_start": 100e-6,
    "analysis.trajectory_rel_tol": 0.15,
    # runs per RTT of that search: while it looks for the turn, and across its bracket (27:
    # a binomial standard error of 0.096 at even odds)
    "analysis.trajectory_seeds": (9, 27),
    # the largest flow count judged by its trajectories: each run follows every flow, and
    # past a few hundred flows a critical RTT costs minutes (N = 100: 11 s; N = 800: over 7
    # minutes, most of it in the idle start's samples at large RTTs); beyond it, and beyond
    # the validation's N = 100, the linearised loop judges, and the outputs say so
    "analysis.trajectory_max_flows": 200,
    # ... and at most this many frames at the port over one verdict's runs (seeds x duration
    # x capacity / frame size; 4.5e6 at 10 Gb/s, 4.5e7 at 100 Gb/s, about 45 s): each run
    # realises every frame, so past it (about 220 Gb/s with 1500-B frames) the linearised
    # loop judges instead of runs taking minutes
    "analysis.trajectory_max_frames": 1e8,
    # a tqdm counter on stderr of the runs a trajectory critical-RTT search takes (seconds to
    # a minute each); the CLI turns it on where it shows progress
    "analysis.trajectory_progress": False,
    # -- models: fluid integration ---------------------------------------------------------
    # largest step of the compiled integrator (s): QCN, QCN classes, ECM; and DCQCN
    "models.max_dt": 10e-6,
    "models.dcqcn_max_dt": 5e-6,
    # output intervals over the duration when record_dt is not given
    "models.record_points": 2000,
    # bounds on one packet-fidelity QCN trajectory: records kept, and steps taken (memory and
    # time are refused up front rather than exhausted)
    "models.max_records": 20_000_000,
    "models.max_steps": 2_000_000_000,
    # the port fed by a trajectory's frames (models._port) holds five numbers per frame; past
    # this many frames (about 2 GB) the trajectory reports the collision queue's mean instead
    "models.max_port_frames": 50_000_000,
    # the packet-fidelity QCN model integrates each flow up to this many flows (its cost grows
    # with N per event); beyond it, the population's cohorts (the mean field, exact as N grows)
    "models.max_agents": 1000,
    # a trajectory's verdict (one flow's stability): runs from idle rate limiters, each this
    # long, classified after the settling time (the start from idle settles within ~0.2 s at
    # N = 1, RTT 500 us) by the oscillation detector, majority over this many seeds: near
    # its boundary a trajectory's verdict is a coin whose odds move with the RTT (N = 10 at
    # 5 Gb/s: 1 in 20 seeds unstable at 400 us, 5 at 476, 10 at 566, 16 at 617), so its
    # verdict is the majority of an odd number of runs (9: a 1-in-4 coin still reads
    # "stable" 95 % of the time). The validation estimates the model's prediction with it.
    # Its sources are the packet simulator's greedy ones of the matched pairs and of
    # `check --confirm` (qcnmodel.validation.network): each offers min(line rate,
    # offered_share x C/N) from idle and holds back up to source_buffer bytes in its
    # adapter, so a backlogged flow sends at its rate limiter's rate. Where the loop is slow
    # (a small fair rate C/N) the run is stretched until its analysed part holds
    # window_cycles of the loop's slowest cycle (models._verdict_run.loop_cycle: a flow's
    # sampling interval, or its byte-counter/timer cycle; 10, as a window holds 10 RTTs:
    # the detector's longest period is a third of it), up to max_duration, the longest
    # packet run `check --confirm` allows (past it the linearised loop judges); the
    # shipped run holds 10 cycles of up to 30 ms (N = 250 at 10 Gb/s, 25 at 1 Gb/s)
    "models.verdict_run": {
        "duration": 0.6,
        "settle": 0.3,
        "record_dt": 50e-6,
        "seeds": 9,
        "offered_share": 2.0,
        "source_buffer": 1.5e6,
        "window_cycles": 10,
        "max_duration": 10.0,
    },
    # a DCQCN run of the every-flow model for its verdict (models.dcqcn_runs), and of the
    # validation's matched pairs, which read it from here (the cycle through Kmax settles
    # within 50 ms from an empty queue at N = 2-64, 25-100 us), read on 10 us bin means;
    # seeds as models.verdict_run
    "models.dcqcn_run": {
        "duration": 0.15,
        "settle": 0.05,
        "record_dt": 10e-6,
        # ... stretched at long loops: settling and window in RTTs, at least
        # (models.dcqcn_runs.run_length: 16 periods of the model's 24 RTTs)
        "settle_delays": 50,
        "window_delays": 400,
    },
    # the RTTs (s) over which a boundary search of the DCQCN every-flow runs looks
    # (data-centre loops; the runs are validated at 25-100 us, their critical RTT to 1.6 ms)
    "analysis.runs_rtt_search": (5e-6, 1e-3),
    # the every-flow DCQCN model's largest step (s; it steps by one packet time at the line
    # rate below it): a rate change and a mark take effect at a step's start. Halving it from
    # 0.2 to 0.1 us leaves the nine-run period and means unchanged (N = 10, 50 us at 10 Gb/s:
    # 2.25 ms both, 79.4 KB; with 4 KB frames at 40 Gb/s: 2.50 ms, 46.3 KB); one packet time
    # of 0.8 us (10 Gb/s, or 4 KB at 40 Gb/s) made the period 2-4 % longer
    "models.dcqcn_agents_max_dt": 0.2e-6,
    # the validation's boundary scans count a stochastic model's unstable runs in this many
    # seeds at each RTT and place its boundary where those odds pass one half
    # (analysis.boundary.odds_crossing): their binomial standard error at one half is
    # 0.5 / sqrt(27) = 0.096, against 0.167 over 9 seeds
    "validation.boundary_seeds": 27,
    # the packet-fidelity agents draw the sampled queue's whole-frame deviation (N paced
    # flows' independent frame phases, variance N/12 frames^2) at each CP sample
    "models.frame_noise": True,
    # the largest loop delay (s) and flow count a model accepts
    "models.max_rtt": 1e3,
    "models.max_flows": 10**9,
    # relative tolerance of the adaptive reference integrators
    "models.reference_rtol": 1e-8,
    # -- sim: the packet-level simulator ---------------------------------------------------
    "sim.bin_width": 1e-3,  # s, trace bin width of simulate()
    "sim.max_traced_flows": 64,  # per-flow traces of every flow up to this many flows
    "sim.default_duration": 1.0,  # s, simulated time of a NetworkSpec run without duration
    "sim.progress_chunks": 50,  # slices of simulated time between progress-bar updates
    "sim.heap_capacity": 4096,  # initial event-heap slots of the kernel (it grows)
    "sim.pool_capacity": 4096,  # initial frame-pool slots of the kernel (it grows)
    # bytes of trace tables one simulator run may allocate (estimated before allocating)
    "sim.max_trace_bytes": 2 * 2**30,
    # bytes of the routing (switch pairs) and flow tables of one network (estimated first)
    "sim.max_table_bytes": 2 * 2**30,
    "sim.recovery_hold": 10e-3,  # s, hold window of the recovery-time metric
    "sim.recovery_tol": 0.1,  # recovered at (1 - tol) x the target throughput
    # -- studies: report, check, sweep, compare --------------------------------------------
    # qcnmodel check: default ranges, grid sizes, phase-margin threshold (deg)
    "studies.check_rtt": (2e-6, 1e-3),
    "studies.check_flows": (1, 100),
    "studies.check_n_rtt": 60,
    "studies.check_n_flows": 12,
    "studies.check_pm_threshold": 30.0,
    # check recommendations: the [qcn] fields searched for a fix, each with its log-uniform
    # search interval (a number: an absolute bound; "xF": F times the current value), and the
    # candidates per interval (ends included)
    "studies.check_search": {
        "w": (0.25, 64.0),
        "gd": (1 / 2048, 1 / 16),
        "qeq": ("x0.25", "x4"),
        "timer": ("x0.1", "x4"),
        "bc_limit": ("x0.25", "x4"),
        "ps_fixed": (0.005, 0.2),
        "sample_base": ("x0.25", "x4"),
    },
    "studies.check_candidates": 6,
    # qcnmodel report: the margins grid and the representative operating points
    "studies.report_rtt": (2e-6, 1e-3),
    "studies.report_n_rtt": 80,
    "studies.report_flows": (1, 2, 3, 5, 7, 10, 15, 20, 30, 50, 70, 100),
    "studies.report_weights": (2.0, 8.0, 32.0),
    "studies.report_ps": (0.01, 0.02, 0.05, 0.10),
    "studies.report_point_rtts": (10e-6, 100e-6, 500e-6),
    "studies.report_point_flows": (1, 10, 100),
    # the report's packet-level confirmation: flows, CP capacity (bit/s), seeds, run length
    # (s), trace bin (s), and the RTTs simulated as multiples of the critical RTT
    "studies.packet_flows": 10,
    "studies.packet_capacity": 5e9,
    "studies.packet_seeds": (0, 1),
    "studies.packet_duration": 0.3,
    "studies.packet_bin_width": 20e-6,
    "studies.packet_rtt_factors": (0.5, 2.0),
    # qcnmodel sweep: most grid points of one sweep (refused up front, before the grid is
    # built), and points per parallel task (None: about four tasks per worker)
    "studies.max_sweep_points": 1_000_000,
    "studies.sweep_chunk": None,
    # -- cli: limits on values typed on the command line -----------------------------------
    # largest time (s, durations, windows), loop delay (s: the analysis' frequency grids grow
    # with it), rate (bit/s) and flow count accepted on the command line
    "cli.max_time": 1e4,
    "cli.max_rtt": 1.0,
    "cli.max_rate": 1e13,
    "cli.max_flows": 100_000,
}


class _Defaults(dict):
    """The defaults dict: a value set is checked against the shipped one's kind, so a typo
    or a value the code cannot use is a ValueError naming the key, not a wrong answer later.

    Unknown keys are refused. A number must be a finite real number (not a string: values
    are in SI units), positive where the shipped one is, and whole where the shipped one is
    an integer; a flag must be True or False; a tuple must hold such numbers (as many as
    the shipped one when it is a range or a triple); a table may give a subset of its keys.
    """

    def __setitem__(self, key, value) -> None:
        if key not in _SHIPPED:
            import difflib

            near = difflib.get_close_matches(str(key), list(_SHIPPED), n=3)
            hint = f"; did you mean {', '.join(map(repr, near))}?" if near else ""
            raise ValueError(f"config.defaults: unknown key {key!r}{hint}")
        _check(f"config.defaults[{key!r}]", value, _SHIPPED[key], key in _RANGES)
        super().__setitem__(key, value)

    def update(self, *args, **kw) -> None:
        for key, value in dict(*args, **kw).items():
            self[key] = value

    def setdefault(self, key, value=None):
        if key not in self:
            self[key] = value
        return self[key]

    def __ior__(self, other):
        self.update(other)
        return self

    def _no_removal(self, *args, **kw):
        raise ValueError("config.defaults: a key cannot be removed (every module reads its "
                         "keys); set a value, or restore all with reset_defaults()")  # fmt: skip

    __delitem__ = pop = popitem = clear = _no_removal


#: tuples of a fixed length (ranges, and the RTT map's (min, max, count)); the other tuples
#: are lists of any length
_RANGES = {"analysis.map_rtt", "analysis.rtt_search", "analysis.trajectory_rtt_search",
           "analysis.runs_rtt_search", "studies.check_rtt", "studies.check_flows",
           "studies.report_rtt"}  # fmt: skip


def _check(name: str, value, shipped, fixed: bool = False) -> None:
    """``value`` is of the shipped value's kind (:class:`_Defaults`), else a ValueError;
    ``fixed``: a tuple of the shipped one's length."""
    import math
    import numbers

    if isinstance(shipped, bool) or shipped is None and isinstance(value, bool):
        if not isinstance(value, bool):
            raise ValueError(f"{name}: expected True or False, got {value!r}")
    elif shipped is None:  # optional count (None: chosen by the code)
        if value is not None:
            _check(name, value, 1)
    elif isinstance(shipped, numbers.Real):
        ok = isinstance(value, numbers.Real) and not isinstance(value, bool)
        if not (ok and math.isfinite(value)):
            raise ValueError(f"{name}: expected a finite number (SI units), got {value!r}")
        if isinstance(shipped, int) and not float(value).is_integer():
            raise ValueError(f"{name}: expected a whole number, got {value!r}")
        if shipped > 0 and not value > 0 or shipped == 0 and value < 0:
            low = "> 0" if shipped > 0 else ">= 0"
            raise ValueError(f"{name}: must be {low}, got {value!r}")
    elif isinstance(shipped, tuple):
        if not isinstance(value, (tuple, list)) or not value:
            raise ValueError(f"{name}: expected a tuple like {shipped!r}, got {value!r}")
        if fixed and len(value) != len(shipped):
            raise ValueError(f"{name}: expected {len(shipped)} values like {shipped!r}, "
                             f"got {value!r}")  # fmt: skip
        if fixed and len(value) >= 2 and not isinstance(value[0], str) and value[0] > value[1]:
            raise ValueError(f"{name}: a range (lo, hi, ...) needs lo <= hi, got {value!r}")
        if any(isinstance(x, str) for x in shipped):
            return
        # a list's entries: of its entries' kind (whole if they all are, > 0 if they all are)
        like = min(shipped) if all(isinstance(x, int) for x in shipped) else float(min(shipped))
        for i, v in enumerate(value):
            _check(f"{name}[{i}]", v, shipped[i] if fixed else like)
    elif isinstance(shipped, dict):
        if not isinstance(value, dict):
            raise ValueError(f"{name}: expected a table like {shipped!r}, got {value!r}")
        for k, v in value.items():
            if k not in shipped:
                raise ValueError(f"{name}: unknown key {k!r} (allowed: {', '.join(shipped)})")
            _check(f"{name}[{k!r}]", v, shipped[k], fixed=True)


#: The current defaults (a dict; set a key to change a default for this session: a value
#: of the wrong kind, or an unknown key, is a ValueError naming the key).
defaults: dict = _Defaults(copy.deepcopy(_SHIPPED))


def reset_defaults() -> None:
    """Restore every default to its shipped value."""
    dict.clear(defaults)
    dict.update(defaults, copy.deepcopy(_SHIPPED))
