"""Inter-model parallelism (seed paper §IV, Table IX): where each model invocation runs.

Kept import-free so that the CLI can read the configuration enum cheaply; the modules are:

* ``kinds``      the seven configurations of Table IX as a string enum (CLI spellings);
* ``device_groups`` device groups, their members and tasks, and a placement;
* ``groups``     the ``--groups`` syntax (parse_groups);
* ``assign``     every invocation of an algorithm assigned to one group, and the GPU count
                 check (one-line errors for bad placements);
* ``configs``    the seven configurations built for an algorithm (and the shared actor-critic);
* ``lengths``    response-length distributions (fixed, uniform, lognormal, file) by exact quantiles;
* ``schedule``   the steady-state iteration of invocations on groups (max cycle mean of the
                 precedence graph: sums inside a group, max across groups, staleness);
* ``symbolic_pieces`` Table IX's pieces: notation with its exact expression, and each placed
                 invocation's work, depth and memory;
* ``symbolic``   Table IX: per stage global work, global depth and peak memory per device group;
* ``rollout``    the decode timeline of a rollout batch: length skew, KV-cache waves, fusion slack;
* ``transfer``   weight synchronization, resharding and offload bytes and their time;
* ``inputs``     resolved inputs, each invocation's layout, work over a length distribution;
* ``group_own``  one device group on real hardware: its tasks' layouts, sizes and own bytes
                 per device (deployment terms, offload);
* ``group_offload`` its trainer's host-link offload traffic and host Adam parameters;
* ``group_memory`` what else its devices hold (residency, engine pool and reservation, host
                 memory, fused transients);
* ``group_cost`` :class:`GroupModel`: all of that and what a pass reads;
* ``group_jobs`` that group's jobs (work, depth, time, prediction) and transfers;
* ``jobs``       the records a group's evaluation yields (jobs, transfers, group totals, the
                 phase names frameworks print);
* ``iteration``  the groups composed into stages and a steady-state iteration (bytes, seconds);
* ``estimate``   what that yields: per stage, per phase and in all (the ``--json`` schema);
* ``allocate``   the GPUs each group gets when the configuration does not say;
* ``query``      one query (a Run less its deployment) resolved once and kept for each of its
                 deployments, with their group estimates (``group_key``);
* ``weight_syncs``, ``schedule_template``, ``group_dschat``, ``length_defaults``, ``streaming``,
  ``overlap``: the pieces split from the modules above by purpose.
"""
