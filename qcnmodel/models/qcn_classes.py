"""N-class QCN fluid model: flow classes with their own RTT and flow count.

Class k has n_k identical flows with loop delay tau_k. The equations are those of
:mod:`qcnmodel.models.qcn` (same switches, same reconstruction caveats) with the CP feedback
computed from the aggregate arrival rate and delayed per class:

.. math::

    \\dot q &= \\textstyle\\sum_k n_k R_C^k(t) - C \\\\
    Fb_k(t) &= -\\Bigl(q(t-\\tau_k) - Q_{eq} + \\frac{w}{p C}
        \\bigl(\\textstyle\\sum_j n_j R_C^j(t-\\tau_k) - C\\bigr)\\Bigr)

and each class's (R_C^k, R_T^k) driven by Fb_k and its own delayed rate R_C^k(t - tau_k).

Equilibrium: every class settles at the same rate C / sum(n_k) (in the base model the
equilibrium gap R_T - R_C does not depend on the rate, and the cut balance then fixes R_C), so
the fixed point is that of the symmetric model with N = sum(n_k), whatever the RTTs: the
reconstructed model predicts RTT-fair rates, to be checked against the packet simulator.

Linearisation: the delayed paths enter through the per-class feedback Fb_k (rank one each,
the same gradient c), so

.. math::

    \\det\\Bigl(sI - A_0 - \\sum_k b_k c^T e^{-s\\tau_k}\\Bigr)
      = P_0(s)\\Bigl(1 + \\sum_k \\frac{N_k(s)}{P_0(s)} e^{-s\\tau_k}\\Bigr),

i.e. the open loop broken at the CP is a *sum* of delayed terms :math:`L(s) = \\sum_k
N_k(s)/P_0(s)\\, e^{-s\\tau_k}` (:meth:`QCNClassesFluidModel.loop_terms`, one
:class:`~qcnmodel.analysis.loop.DelayedLoop` per class). :meth:`~QCNClassesFluidModel.loop`
returns a single DelayedLoop only when all RTTs are equal. With ``timer=True`` the direct
delayed-rate paths are treated as undelayed, as in the single-class model.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field

import numba as nb
import numpy as np
import sympy as sp

from qcnmodel import config
from qcnmodel.analysis.dde import compile_rhs
from qcnmodel.analysis.linearize import charpoly_batch
from qcnmodel.models import _qcn_eqs as eq
from qcnmodel.models._base import initial_state, integrate, replace_model, trajectory
from qcnmodel.models.qcn_averaged import QCNAveragedModel
from qcnmodel.params import QCNParams
from qcnmodel.units import parse_time

__all__ = ["QCNClassesFluidModel"]

P_K = eq.N_PARAMS  # number of classes; then n_k (K values), then tau_k (K values)


@nb.njit(cache=True)
def _classes_rhs_impl(t, x, xd, p, out):
    nk = int(p[P_K])
    total_n = p[eq.P_N]
    cap = eq.capacity_at(t, p)
    dq = -cap
    for k in range(nk):
        n_k = p[P_K + 1 + k]
        tau_k = p[P_K + 1 + nk + k]
        agg = 0.0
        for j in range(nk):
            agg += p[P_K + 1 + j] * xd[k, 1 + j]
        cap_d = eq.capacity_at(t - tau_k, p)
        # cp_signals expects the per-flow rate of N identical flows: pass agg / N
        ind, u, ps, idx = eq.cp_signals(xd[k, 0], agg / total_n, cap_d, p)
        rc = x[1 + k]
        rt = x[1 + nk + k]
        d_rc, d_rt = eq.rate_derivatives(rc, rt, xd[k, 1 + k], ind, u, ps, idx, p)
        out[1 + k] = d_rc
        out[1 + nk + k] = d_rt
        dq += n_k * rc
    if x[0] <= 0.0 and dq < 0.0:
        dq = 0.0
    out[0] = dq


def _classes_rhs(t, x, xd, p, out):
    _classes_rhs_impl(t, x, xd, p, out)


CLASSES_RHS = compile_rhs(_classes_rhs)


@functools.lru_cache(maxsize=16)
def _symbolic(n_classes: int, switches: tuple):
    """Lambdified (A0, [b_k], c-rows, [direct_k]) builders for K classes."""
    timer, hai, quant, halving, reset = switches
    f, (q, rc, rt), (qd, rcd, _), syms, (fb_sym, _) = eq.qcn_symbolic(
        timer, hai, quant, halving, reset
    )
    n_sym, c_sym, qeq, w, ps0 = syms[:5]
    kk = n_classes
    ns = sp.symbols(f"n_0:{kk}", positive=True)
    x = [sp.Symbol("q")] + list(sp.symbols(f"Rc_0:{kk}")) + list(sp.symbols(f"Rt_0:{kk}"))
    xds = [[sp.Symbol(f"{v.name}_d{k}") for v in x] for k in range(kk)]
    fbs = sp.symbols(f"Fb_0:{kk}")
    rows = [sum(ns[j] * x[1 + j] for j in range(kk)) - c_sym]
    rc_rows, rt_rows, fb_exprs = [], [], []
    for k in range(kk):
        sub = {rc: x[1 + k], rt: x[1 + kk + k], rcd: xds[k][1 + k], fb_sym: fbs[k]}
        rc_rows.append(f[1].subs(sub))
        rt_rows.append(f[2].subs(sub))
        agg = sum(ns[j] * xds[k][1 + j] for j in range(kk))
        fb_exprs.append(-(xds[k][0] - qeq + w / (ps0 * c_sym) * (agg - c_sym)))
    fm = sp.Matrix(rows + rc_rows + rt_rows)
    fb_sub = dict(zip(fbs, fb_exprs))
    f_full = fm.subs(fb_sub)
    flat_xd = [v for row in xds for v in row]
    args = (x, flat_xd, list(syms) + list(ns))
    a0 = f_full.jacobian(x)
    bs = [fm.jacobian([fbs[k]]).subs(fb_sub) for k in range(kk)]
    cs = [sp.Matrix([fb_exprs[k]]).jacobian(xds[k]) for k in range(kk)]
    direct = [fm.jacobian(xds[k]).subs(fb_sub) for k in range(kk)]
    full = [f_full.jacobian(xds[k]) for k in range(kk)]
    mats = [a0] + bs + cs + direct + full
    fun = sp.lambdify(args, [m.tolist() for m in mats], modules=["numpy", "scipy"], cse=True)
    rhs = sp.lambdify(args, list(f_full), modules=["numpy", "scipy"], cse=True)
    return fun, rhs, (x, xds, n_sym)


@dataclass(frozen=True)
class QCNClassesFluidModel:
    """QCN fluid model with flow classes of different RTTs.

    Parameters
    ----------
    params : QCNParams
        Protocol parameters.
    classes : tuple of (rtt, n_flows)
        One entry per class: loop delay (s, unit strings accepted) and flow count (>= 1).
    capacity, ps, timer, hai, halving, min_rate, quantise :
        As for :class:`~qcnmodel.models.qcn_averaged.QCNAveragedModel` (``sampling`` is fixed).
    reset, reset_width, sampling_lag, enqueue_offset :
        As for :class:`~qcnmodel.models.qcn_averaged.QCNAveragedModel`; with ``sampling_lag`` every
        class's loop delay gains the one CP's Ts/2.
    """

    params: QCNParams = field(default_factory=QCNParams)
    classes: tuple = ((100e-6, 5), (300e-6, 5))
    capacity: float | None = None
    ps: float | None = None
    timer: bool = False
    hai: bool = False
    quantise: bool | str = False
    halving: bool = False
    min_rate: bool = False
    reset: str = "sample"
    reset_width: float | None = None
    sampling_lag: bool = False
    enqueue_offset: float = 0.0

    def __post_init__(self) -> None:
        try:
            cls = tuple(tuple(c) for c in self.classes)
        except TypeError:
            raise ValueError("classes: expected a sequence of (rtt, n_flows) pairs") from None
        if not cls or any(len(c) != 2 for c in cls):
            raise ValueError("classes: expected a non-empty sequence of (rtt, n_flows) pairs")
        out = []
        for i, (rtt, n) in enumerate(cls):
            rtt = parse_time(rtt, f"classes[{i}].rtt")
            if not (rtt > 0 and math.isfinite(rtt)):
                raise ValueError(f"classes[{i}].rtt: must be in (0, inf) s, got {rtt!r}")
            if isinstance(n, bool) or not float(n).is_integer() or n < 1:
                raise ValueError(f"classes[{i}].n_flows: must be an integer >= 1, got {n!r}")
            out.append((rtt, int(n)))
        object.__setattr__(self, "classes", tuple(out))
        self._symmetric  # validates the remaining fields  # noqa: B018

    @functools.cached_property
    def _symmetric(self) -> QCNAveragedModel:
        """The symmetric model with N = sum(n_k) (shared equilibrium, parameter vector)."""
        return QCNAveragedModel(
            params=self.params, rtt=min(r for r, _ in self.classes), n_flows=self.n_flows,
            capacity=self.capacity, ps=self.ps, timer=self.timer, hai=self.hai,
            quantise=self.quantise, halving=self.halving, min_rate=self.min_rate,
            reset=self.reset, reset_width=self.reset_width, sampling_lag=self.sampling_lag,
            enqueue_offset=self.enqueue_offset,
        )  # fmt: skip

    @property
    def n_flows(self) -> int:
        """Total number of flows."""
        return sum(n for _, n in self.classes)

    def replace(self, **changes) -> QCNClassesFluidModel:
        """New model; QCNParams field names are applied to ``params``."""
        return replace_model(self, changes)

    def param_vector(self, hotspot=None) -> np.ndarray:
        """Parameter vector: the symmetric model's, then K, n_k, tau_k."""
        base = self._symmetric.param_vector(hotspot)
        ns = [n for _, n in self.classes]
        taus = self._delays
        return np.concatenate([base, [len(ns)], ns, taus]).astype(float)

    @property
    def _delays(self) -> list:
        """Loop delay per class: rtt_k + the CP sampling lag (``sampling_lag``; one CP)."""
        lag = self._symmetric.sampling_lag_s
        return [r + lag for r, _ in self.classes]

    def _state(self, x_sym: np.ndarray) -> np.ndarray:
        kk = len(self.classes)
        return np.concatenate([[x_sym[0]], np.full(kk, x_sym[1]), np.full(kk, x_sym[2])])

    def fixed_point(self) -> dict:
        """Equilibrium (SI): ``q``, ``rate_current`` and ``rate_target`` (arrays per class)."""
        fp = self._symmetric.fixed_point()
        kk = len(self.classes)
        x = self._state(self._symmetric._x_star)
        out = np.empty_like(x)
        xd = np.tile(x, (kk, 1))
        CLASSES_RHS.jit(0.0, x, xd, self.param_vector(), out)
        c = self._symmetric.param_vector()[eq.P_C]
        return {
            "q": fp["q"],
            "rate_current": np.full(kk, fp["rate_current"]),
            "rate_target": np.full(kk, fp["rate_target"]),
            "residual": float(np.max(np.abs(out) / np.r_[c, np.full(2 * kk, x[1] * c)])),
        }

    def jacobians(self):
        """(A0, [A_k]) at the equilibrium (packet units), A_k = d f / d x(t - tau_k)."""
        a0, _, _, _, full = self._linear_parts()
        return a0, full

    def _linear_parts(self):
        kk = len(self.classes)
        sym = self._symmetric
        switches = (self.timer, self.hai, _quant(sym), self.halving, self.reset == "cnm")
        fun, _, _ = _symbolic(kk, switches)
        x = self._state(sym._x_star)
        xd = np.tile(x, kk)
        pv = list(sym.symbolic_param_values()) + [n for _, n in self.classes]
        mats = [np.array(m, dtype=float) for m in fun(list(x), list(xd), pv)]
        a0 = mats[0]
        bs = [m[:, 0] for m in mats[1 : 1 + kk]]
        cs = [m[0, :] for m in mats[1 + kk : 1 + 2 * kk]]
        direct = mats[1 + 2 * kk : 1 + 3 * kk]
        full = mats[1 + 3 * kk :]
        return a0, bs, cs, direct, full

    def loop_terms(self):
        """Per-class delayed terms of the open loop, L(s) = sum of the returned loops."""
        from qcnmodel.analysis.loop import DelayedLoop

        a0, bs, cs, direct, _ = self._linear_parts()
        a0e = a0 + sum(direct)
        den = charpoly_batch(a0e)
        terms = []
        for k, ((rtt, n), delay) in enumerate(zip(self.classes, self._delays)):
            num = charpoly_batch(a0e + np.outer(bs[k], cs[k])) - den
            num[0] = 0.0
            name = f"QCN class {k} (n={n}, rtt={rtt * 1e6:g}us)"
            terms.append(DelayedLoop(num, den, delay, name))
        return terms

    def loop_value(self, s) -> np.ndarray:
        """Exact L(s) = sum_k N_k(s)/P_0(s) e^{-s tau_k} at complex ``s``."""
        return sum(term(s) for term in self.loop_terms())

    def loop(self):
        """Single DelayedLoop (only when all classes share one RTT)."""
        from qcnmodel.analysis.loop import DelayedLoop

        rtts = {r for r, _ in self.classes}
        if len(rtts) != 1:
            raise ValueError(
                "classes: different RTTs give a multi-delay loop; use loop_terms() / loop_value()"
            )
        terms = self.loop_terms()
        num = sum(t.num if len(t.num) == len(terms[0].num) else np.pad(t.num, (1, 0))
                  for t in terms)  # fmt: skip
        return DelayedLoop(num, terms[0].den, terms[0].delay, "QCN classes")

    def simulate(self, duration, dt=None, method="compiled", x0=None, hotspot=None,
                 record_dt=None, rtol=None):  # fmt: skip
        """Nonlinear trajectory: xarray Dataset with ``q`` (bytes) over ``time`` and
        ``rate_current``/``rate_target`` (bit/s) over (``time``, ``cls``). ``x0`` keys: q,
        rate_current, rate_target (scalars or per-class arrays). ``method``: "compiled" or
        "reference"; dt defaults to min(min rtt / 10, 10 us)."""
        p = self.param_vector(hotspot)
        kk = len(self.classes)
        fr = float(self.params.frame_size)
        bits = 8.0 * fr
        try:
            xs = self._state(self._symmetric._x_star)
        except (ValueError, RuntimeError):
            xs = np.r_[0.0, np.full(2 * kk, p[eq.P_RLINE])]
        layout = {"q": (0, fr), "rate_current": (slice(1, 1 + kk), bits),
                  "rate_target": (slice(1 + kk, None), bits)}  # fmt: skip
        x = initial_state(xs, x0, layout)
        delays = self._delays
        lower = np.r_[0.0, np.full(2 * kk, p[eq.P_RMIN] if self.min_rate else 0.0)]
        max_dt = config.defaults["models.max_dt"]
        res = integrate(CLASSES_RHS, x, delays, p, duration, method=method, dt=dt,
                        default_dt=min(min(delays) / 10.0, max_dt), record_dt=record_dt,
                        rtol=rtol, lower=lower, scale=xs)  # fmt: skip
        variables = {
            "q": ("time", res.x[:, 0] * fr, {"units": "B"}),
            "rate_current": (("time", "cls"), res.x[:, 1 : 1 + kk] * bits, {"units": "bit/s"}),
            "rate_target": (("time", "cls"), res.x[:, 1 + kk :] * bits, {"units": "bit/s"}),
        }
        coords = {
            "cls": np.arange(kk),
            "rtt": ("cls", np.array([r for r, _ in self.classes])),
            "n_flows": ("cls", np.array([n for _, n in self.classes])),
        }
        return trajectory(res, variables, self, coords)


def _quant(sym: QCNAveragedModel) -> int:
    from qcnmodel.models.qcn_averaged import _QUANT

    q = _QUANT[sym.quantise]
    return eq.QUANT_SMOOTH if q == eq.QUANT_FLOOR else q
