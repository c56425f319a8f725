"""One adapter module per protocol family: the kernel hooks of :mod:`..dispatch`.

:mod:`.none` (no congestion management), :mod:`.qcn` (plain QCN), :mod:`.qcn_variants` (the
QCN variants with aux timers: probes, SONAR), :mod:`.ecm`
(ECM and ECM-Q), :mod:`.dcqcn` (DCQCN). Each defines every hook of the interface documented
in :mod:`qcnmodel.sim.kernel.dispatch`, with the same arguments, plus ``configure(C, cfg)``
(plain Python: the family's entries of the kernel's configuration vector).
"""
