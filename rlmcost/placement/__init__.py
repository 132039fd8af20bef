"""Inter-model parallelism (seed paper §IV, Table IX): where each model invocation runs.

Kept import-free so that the CLI can read the configuration enum cheaply; the modules are:

* ``kinds``      the seven configurations of Table IX as a string enum (CLI spellings);
* ``groups``     device groups, a placement, the ``--groups`` syntax and the assignment of every
                 invocation of an algorithm to one group (one-line errors for bad placements);
* ``configs``    the seven configurations built for an algorithm (and the shared actor-critic);
* ``lengths``    response-length distributions (fixed, uniform, lognormal, file) by exact quantiles;
* ``schedule``   the steady-state iteration of invocations on groups (max cycle mean of the
                 precedence graph: sums inside a group, max across groups, staleness);
* ``symbolic``   Table IX: per stage global work, global depth and peak memory per device group;
* ``rollout``    the decode timeline of a rollout batch: length skew, KV-cache waves, fusion slack;
* ``transfer``   weight synchronization, resharding and offload bytes and their time;
* ``inputs``     resolved inputs, each invocation's layout, work over a length distribution;
* ``group_cost`` one device group on real hardware: what its devices hold (memory per device,
                 engine pool, residency) and what a pass reads;
* ``group_jobs`` that group's jobs (work, depth, time, prediction) and transfers;
* ``jobs``       the records a group's evaluation yields (jobs, transfers, group totals, the
                 phase names frameworks print);
* ``iteration``  the groups composed into stages and a steady-state iteration (bytes, seconds);
* ``estimate``   what that yields: per stage, per phase and in all (the ``--json`` schema);
* ``allocate``   the GPUs each group gets when the configuration does not say.
"""
