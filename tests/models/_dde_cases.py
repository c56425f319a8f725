"""Right-hand sides used by the DDE integrator tests (module level so numba can cache them)."""

from qcnmodel.analysis.dde import compile_rhs


def _linear_scalar(t, x, xd, p, out):
    # x'(t) = -p0 * x(t - tau): the classic test equation, solvable piecewise in closed form
    out[0] = -p[0] * xd[0, 0]


def _two_delays(t, x, xd, p, out):
    # x' = -x(t - tau1) + 0.5 y(t - tau2), y' = -x(t) + 0 * ...
    out[0] = -xd[0, 0] + 0.5 * xd[1, 1]
    out[1] = -x[0] - 0.2 * x[1]


LINEAR_SCALAR = compile_rhs(_linear_scalar)
TWO_DELAYS = compile_rhs(_two_delays)
