"""The QCN loop model, at the fidelity the user names: ``QCNFluidModel(params, fidelity=...)``.

* ``fidelity="packet"`` (the default): :class:`~.qcn_packet.QCNPacketModel`. Its analysis
  (fixed point, linearisation, margins) is the reaction points as a renewal population whose
  byte-counter and timer cycles end at fixed, jittered ages after each CNM, with the
  congestion point's sampled feedback taken over the queue's frame-granularity noise; its
  trajectories follow every reaction point as a hybrid system on a fluid queue (each flow's
  own cuts and cycles, ``simulate(method="agents")``). This is the configuration validated
  against the packet simulator (``qcnmodel validate``) and used by every surface (margins,
  check, report, stability maps, sweeps).
* ``fidelity="paper"``: :class:`~.qcn_averaged.QCNAveragedModel`, the delay-differential
  equations after Alizadeh et al. (Allerton 2008; SIGMETRICS 2011) in which cycles end at a
  constant rate; its switches (``reset``, ``sampling_lag``, ``timer``, ``hai`` ...) add the
  mechanisms the validation found one at a time. All off is the published form.

The class is a thin front: it validates the operating point and the options, builds the
engine of the chosen fidelity and hands every method to it (``fixed_point``, ``loop``,
``simulate`` and the engine's own attributes).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from qcnmodel.models._base import LoopModel
from qcnmodel.params import QCNParams

__all__ = ["FIDELITIES", "QCNFluidModel"]

#: fidelity name -> one line for listings
FIDELITIES = {
    "packet": "renewal population of reaction points (analysis), every flow followed "
    "(trajectories); validated",
    "paper": "cycle-averaged delay-differential equations after Alizadeh et al.",
}

#: the cycle-averaged model's options and their defaults (fidelity="paper" only)
_PAPER_OPTIONS = {
    "timer": False, "hai": False, "sampling": "fixed", "quantise": False, "halving": False,
    "min_rate": False, "reset": "sample", "reset_width": None, "sampling_lag": False,
    "enqueue_offset": 0.0, "stage_memory": False,
}  # fmt: skip


@dataclass(frozen=True)
class QCNFluidModel(LoopModel):
    """QCN at one operating point (LoopModel protocol), at a named fidelity.

    Parameters
    ----------
    params : QCNParams
        Protocol parameters.
    rtt : float
        Loop delay CP -> RP -> CP, s (unit strings accepted).
    n_flows : int
        Number of flows N >= 1.
    capacity : float, optional
        CP service rate, bit/s (default ``params.line_rate``).
    ps : float, optional
        Sampling probability in (0, 1] (default: the parameter set's).
    fidelity : {"packet", "paper"}
        Which model (module docstring); ``"packet"`` is the validated default.
    timer, hai, sampling, quantise, halving, min_rate, reset, reset_width, sampling_lag, \
enqueue_offset, stage_memory
        Switches of the cycle-averaged model (``fidelity="paper"`` only; see
        :class:`~qcnmodel.models.qcn_averaged.QCNAveragedModel`).
    """

    params: QCNParams = field(default_factory=QCNParams)
    rtt: float = 100e-6
    n_flows: int = 10
    capacity: float | None = None
    ps: float | None = None
    fidelity: str = "packet"
    timer: bool = False
    hai: bool = False
    sampling: str = "fixed"
    quantise: bool | str = False
    halving: bool = False
    min_rate: bool = False
    reset: str = "sample"
    reset_width: float | None = None
    sampling_lag: bool = False
    enqueue_offset: float = 0.0
    stage_memory: bool = False

    def __post_init__(self) -> None:
        if self.fidelity not in FIDELITIES:
            from qcnmodel._errors import unknown_name

            raise unknown_name("fidelity", "fidelity", self.fidelity, FIDELITIES, sort=False)
        if self.fidelity == "packet":
            for name, default in _PAPER_OPTIONS.items():
                if getattr(self, name) != default:
                    raise ValueError(
                        f"{name}: a switch of the cycle-averaged model; it applies with "
                        "fidelity='paper' (the packet-fidelity model has every mechanism "
                        "built in)"
                    )
        engine = self._build()
        # the engine normalised the operating point (unit strings, integer N)
        for name in ("rtt", "n_flows", "capacity", "ps"):
            object.__setattr__(self, name, getattr(engine, name))
        self.__dict__["_engine"] = engine

    def _build(self):
        common = dict(params=self.params, rtt=self.rtt, n_flows=self.n_flows,
                      capacity=self.capacity, ps=self.ps)  # fmt: skip
        if self.fidelity == "packet":
            from qcnmodel.models.qcn_packet import QCNPacketModel

            return QCNPacketModel(**common)
        from qcnmodel.models.qcn_averaged import QCNAveragedModel

        return QCNAveragedModel(**common, **{k: getattr(self, k) for k in _PAPER_OPTIONS})

    @property
    def engine(self):
        """The model doing the work (:class:`QCNPacketModel` or :class:`QCNAveragedModel`)."""
        return self.__dict__["_engine"]

    @property
    def options(self) -> dict:
        """The cycle-averaged switches that differ from their defaults."""
        return {k: getattr(self, k) for k, v in _PAPER_OPTIONS.items() if getattr(self, k) != v}

    # the LoopModel protocol, handed to the engine
    @property
    def extra_delay(self) -> float:
        """Loop delay beyond the RTT, s (the engine's)."""
        return self.engine.extra_delay

    def fixed_point(self) -> dict:
        """Equilibrium in SI units (the engine's :meth:`fixed_point`).

        Returns
        -------
        dict
            At both fidelities ``q`` (bytes), ``rate_current``, ``rate_target`` (per-flow,
            bit/s) and ``fb`` (bytes); the packet fidelity adds ``cnm_probability``, ``cut``,
            ``cnm_rate``, ``birth_rate_current`` and ``birth_target``
            (:meth:`~.qcn_packet.QCNPacketModel.fixed_point`), the paper's ``u``, ``ps`` and
            ``residual`` (:meth:`~.qcn_averaged.QCNAveragedModel.fixed_point`).
        """
        return self.engine.fixed_point()

    def loop(self):
        """Linearised open loop with the exact delay (the engine's :meth:`loop`).

        Returns
        -------
        FrequencyLoop or DelayedLoop
            ``L(s) = G(s) exp(-s rtt)``: a :class:`~qcnmodel.analysis.freqloop.FrequencyLoop`
            at the packet fidelity (``G`` known by its values), a
            :class:`~qcnmodel.analysis.loop.DelayedLoop` (rational ``G``, the delay
            ``loop_delay``) at the paper's. Both give ``margins()``.
        """
        return self.engine.loop()

    def simulate(self, duration, **kw):
        """Nonlinear trajectory (the engine's :meth:`simulate`; its keywords differ).

        Parameters
        ----------
        duration : float or str
            Simulated time, s (unit strings accepted).
        **kw
            Passed on to the engine. Both fidelities: ``dt``, ``record_dt`` (s or unit
            strings), ``x0`` (initial state: ``q`` in bytes; the paper's also
            ``rate_current``, ``rate_target`` in bit/s), ``hotspot`` (``(t_on, t_off,
            capacity_bps)``) and ``method``. Packet fidelity
            (:meth:`~.qcn_packet.QCNPacketModel.simulate`): ``method`` in {"agents",
            "cohorts", "compiled"} (default ``"agents"`` up to
            ``config.defaults["models.max_agents"]`` flows, else ``"cohorts"``), ``start``
            ({"equilibrium", "idle"}), ``offered`` (per-flow rate, bit/s), ``seed``,
            ``source_buffer`` (bytes) and ``frame_noise``. Paper fidelity
            (:meth:`~.qcn_averaged.QCNAveragedModel.simulate`): ``method`` in {"compiled",
            "reference", "jitcdde"} (default ``"compiled"``) and ``rtol``.

        Returns
        -------
        xarray.Dataset
            Over ``time`` (s): ``q`` (bytes), ``rate_current`` and ``rate_target`` (bit/s),
            and at the packet fidelity also ``rate_sent`` and what the reaction points
            received (``fb``, ``cnm_probability``, ``cut``, ...; the engine's docstring).

        Raises
        ------
        ValueError
            For a keyword value the engine refuses (unknown method, out-of-range time ...).
        TypeError
            For a keyword the engine does not take (e.g. ``start`` at the paper fidelity).
        """
        return self.engine.simulate(duration, **kw)

    def __getattr__(self, name: str):
        if name.startswith("__") or name == "_engine":
            raise AttributeError(name)
        engine = self.__dict__.get("_engine")
        if engine is None or not hasattr(engine, name):
            raise AttributeError(
                f"QCNFluidModel (fidelity={self.__dict__.get('fidelity', '?')!r}) has no "
                f"attribute {name!r}"
            )
        return getattr(engine, name)
