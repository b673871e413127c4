"""Trace replay: a lowered trace run under each network model, in memory or streamed.

* :mod:`.run` -- :func:`~.run.replay` and :func:`~.run.replay_lowered` per network model;
* :mod:`.setup` -- :class:`~.setup.ReplaySetup` and the network and placement it gives;
* :mod:`.draws` -- one trace under many parameter sets (posterior draws);
* :mod:`.windowed` -- :func:`~.windowed.simulate_windowed`: a run holding a window of
  rows per rank;
* :mod:`.stream` and :mod:`.stream_default` -- the streamed replay of a trace file, and
  when it is the default;
* :mod:`.scenarios` -- what-if scenarios; :mod:`.link_report` -- link utilisation;
  :mod:`.simgrid_like` -- ``--like simgrid``.

The package imports nothing: import the module you need.
"""
