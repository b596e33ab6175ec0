"""Questions asked of runs and sweeps of either paper, answered from their files or from a
config: the phase readings, gradient flow beside gradient descent, the cost of a run before it
starts, export to xarray / netCDF, and the plots. The commands ``theorylab phases``,
``theorylab export``, ``theorylab plot`` and ``theorylab run --dry-run`` / ``--flow``,
``theorylab check --rejudge`` are these functions on the command line. Every name below is
importable from ``theorylab.analysis`` itself.

- [`theorylab.analysis.runs`][]: opening what theorylab wrote. ``open_run``,
  ``open_sweep``, ``open_source``: a run folder (``config.toml`` and ``trajectory.csv``, read
  as far as it is written, so a run still going can be read) or a sweep store
  (``results.parquet``), with its paper and config; ``sweep_progress``, ``sweep_table``;
  ``load_claim``: a claim's stored tables (what ``theorylab check`` wrote) with the claim, to
  judge them again with other thresholds, another stored reading or a counterfactual,
  without rerunning (``theorylab check --rejudge``).
- [`theorylab.analysis.questions`][]: ``phase_readings``, the paper's one reading of the phase
  times and end values (``Paper.phase_readings``: jelassi2022 ``t_I``, ``t_II``, ``t_PA``,
  ``t_III``; huang2024 ``t_I``, ``phi_glob_end_I``, ``t_II``, ``T_star`` and the values at T*;
  docs/reproducing.md) of a run folder, a trajectory table or every run of a sweep, one row per
  run and reading with its recording resolution, a censored flag and why a missing one is
  missing: the same call and table as ``theorylab.jelassi2022.phases.phase_readings`` and
  ``theorylab.huang2024.phases.phase_readings``; ``scan``, a config run along an axis (or
  several, zipped) and seeds, as a sweep; ``power_law``, ``log_law``, ``linear_law``: a
  reading fitted against an axis ("how does Φ_glob(t_I) scale with P?"), with the slope's
  95 % interval; ``sweep_values``, ``reading_points``, ``seed_interval``: a reading of every
  run of a sweep and, per setting, its mean and seed interval; ``gd_and_flow``: gradient
  descent and the gradient flow of one config, one table, ``flow_gap`` the GD-to-flow gap on a
  ladder of step sizes with its order in η; ``estimate``: steps, seconds on this machine and
  memory of a run before it starts; ``to_dataset``, ``export``: runs or a sweep as an xarray
  dataset / a netCDF file, with the config and provenance as attributes.
- [`theorylab.analysis.plots`][]: ``plot_run`` (a run's trajectory, its phase readings
  marked), ``plot_sweep`` (a sweep's phase diagram or kept trajectories), ``plot_reading`` (a
  reading against a sweep axis, seed intervals, log axes and the fitted slope): what
  ``theorylab plot`` draws; [`theorylab.analysis.labels`][]: the parameters' symbols on
  their axes and titles.
"""

from . import questions, runs
from .labels import symbol
from .plots import plot_reading, plot_run, plot_sweep
from .questions import *  # noqa: F403  (every question)
from .runs import *  # noqa: F403  (every reader of what theorylab wrote)

__all__ = [*runs.__all__, *questions.__all__, "plot_reading", "plot_run", "plot_sweep", "symbol"]
