"""Control analysis of delayed loops, independent of any protocol.

* :mod:`.loop`: :class:`~.loop.DelayedLoop`, ``L(s) = num(s)/den(s) e^{-s delay}``;
* :mod:`.margins` (with :mod:`._rational`): exact gain, phase and delay margins, the
  Nyquist count and the critical delay;
* :mod:`.linearize`: symbolic linearisation of single-delay delay-differential systems;
* :mod:`.dde`: compiled and adaptive delay-differential integrators;
* :mod:`.stability`: stability maps and the critical RTT of any loop model;
* :mod:`.boundary`: the critical RTT of a model judged by its own trajectories;
* :mod:`.overload`: the largest flow count a model holds (where its operating point ends);
* :mod:`.plot`: Bode, Nyquist, step and map figures (drawing only).

This layer imports neither the parameter classes nor the models: a loop model is anything
with ``.loop()``, ``.replace(**changes)`` and an ``rtt``.
"""
