"""The commands of ``mpiuq``: one module per command, imported only when it is named.

Also the options several commands share (:mod:`~mpiuq.commands.arguments`,
:mod:`~mpiuq.commands.posterior_args`) and the extrapolation warnings of ``--params``
(:mod:`~mpiuq.commands.calibration_warnings`).
"""
