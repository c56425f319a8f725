"""Products built on the models and the simulator.

* :mod:`.check`: a standards editor's check of a parameter set over operating ranges;
* :mod:`.sweep` and :mod:`.points`: parallel, resumable parameter sweeps and their point
  functions (one model or one simulation per grid point);
* :mod:`.compare` and :mod:`.compare_plots`: protocols side by side on one scenario;
* :mod:`.report`, :mod:`.report_figures`, :mod:`.report_packet`: the stability report;
* :mod:`.figures`: every figure of ``figures/``, regenerated deterministically;
* :mod:`.named_sweeps`: the decks' named simulator sweeps (e.g. the RTT sweep).
"""
