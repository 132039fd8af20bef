"""Exact RL deployment evaluations per second, one query, warm, every deployment distinct.

The query: PPO on Llama-3.1-70B, A100-80GB, the planner's default space on 32 GPUs
(``rlmcost.plan.rl_candidates.candidates``: families, layouts, engines; 3,264 distinct
deployments, each a Run). Warm: modules imported and the query resolved by evaluating a few
deployments of another GPU count (none of those timed). Each deployment is evaluated once:

* plain: ``evaluate_deployment`` inside ``rlmcost.memo.plain()`` (nothing kept; the path
  before the fast one), on every 8th deployment;
* fast, sparse: the same every-8th deployments through ``evaluate_deployment`` (kept query,
  group estimates, memoized passes; few groups recur among them);
* fast, sweep: all deployments in the planner's order, one call each (``evaluate_deployment``),
  then the same sweep again with every group estimate kept (what a deployment costs beyond
  its new groups: the schedule, the lookups, the result; the schedules' periods and values
  kept by their weights forgotten first), and as one batch
  (``evaluate_many``) after the caches are emptied;
* planner rows: the same candidates as the planner evaluates them, rows and all
  (``rl_candidates.evaluate_chunk``: the Run of each candidate, its evaluation, its row of
  numbers; the command and Run JSON are written for the rows a plan shows alone,
  ``plan.rl_rows.with_runs``).

It also prints how many group estimates the sweep computed (the rest were shared with an
earlier deployment, ``placement.group_key``).

Rates are per second of this process's CPU time (the machine is shared; wall time printed
beside it). Run: PYTHONPATH=. python benchmarks/bench_rl_eval.py [--profile]
[--profile-estimates [--cum] [--top=N] [--callers REGEX]] [--steady] [--collector]
(``--collector``: the cyclic collector's collections and time inside the one-call sweep)

Figures (2 shared cores, Python 3.11, December 2026; noisy by about 10 %, before -> after this
version, measured in the same minutes, two runs each): plain 163-167 -> 164-169/s; fast, every
8th 1,310-1,334 -> 1,484-1,507/s; fast sweep one call each 1,592-1,618 -> 1,739-1,751/s
(``--steady``: the sum over 32 chunks of each chunk's fastest of 4 sweeps, which filters a
shared machine's preemption and the collector's full passes: 1,747-1,759 -> 2,006-2,010/s; with
the cyclic collector off, best of 2: 1,774-1,812 -> 2,024-2,103/s); again with every group kept
3,887-3,975 -> 4,926-5,455/s; evaluate_many 1,663-1,747 -> 1,880-1,984/s; planner rows
1,095-1,115 -> 1,123-1,195/s. This version keeps per query whether a model is MoE (its note had
dumped four model specs per deployment, about 60 us), takes a schedule's largest cycle mean
over the cycles no other dominates (595 of 3,150 in the sweep's 42 templates; the same number
bit for bit for weights of one type), interns a group key's constant replaced fields once per
query, keeps the phases with the weight syncs beside the groups' part (a synchronous and an
overlapped loop on the same groups share them), a task's role, kind, stage and hash and a
device group's hash in the instance, and builds the result without a second frozen
``__init__``. Issue 20 asks 5,000/s for the sweep. Where its time goes now: what a deployment
costs beyond its new groups is about 180 us (5,500/s; the group keys about a sixth, the
schedule's cycle means and spans about a sixth, the iteration's groups part, weight syncs,
notes and the result the rest); the 928 group estimates it computes (of 10,432 groups) about 1
ms each (their set-up and layouts, each job's memory beside it, the passes not yet kept), about
290 us per deployment; and two full passes of the cyclic garbage collector inside the one-call
sweep, about 70 us per deployment (the process's 280,000 tracked objects walked twice,
``gc.callbacks``; the sweep keeps about 130,000 new objects: group estimates, the groups' parts
of iterations), which ``evaluate_many`` and the planner pause.

Second round (same machine, before -> after, same minutes, two runs each): plain 167-168 ->
166/s; fast, every 8th 1,471-1,492 -> 1,477-1,478/s; sweep one call each 1,805-1,835 ->
1,811-1,822/s (``--steady`` 1,940 -> 1,938/s, one run each); again with every group kept
5,261-5,308 -> 5,352-5,432/s; evaluate_many 1,954-1,955 -> 1,958-1,967/s; planner rows
1,222-1,229 -> 1,226-1,233/s: within the noise but for the kept sweep. ``Deployment.group`` is a
loop (59,540 calls in the sweep) and the unused-refit note looks up no group's engine when no
engine refits on its own (10,432 look-ups). Measured and left: the collector's two full passes
take 0.19-0.23 s of the one-call sweep (``gc.callbacks``; the younger generations 0.05 s);
sharing a group estimate's own phases with the iterations it takes part in cut the kept Phase
objects from 17,400 to 10,500 but the tracked objects only from 279,000 to 274,000 (still two
passes, no gain); keeping no iteration groups part drops the full passes to one in most sweeps,
but rebuilding it costs as much; 23,000 more kept objects add a third pass now and then. So the
collector's share falls only with a large cut of kept objects (below about 86,000 new ones for
one pass: the 5,300 Layouts with materialized ``__dict__`` from ``Layout.with_``, 8,700
MemoryBreakdowns, 5,300 Transfers, the groups' parts' dicts and tuples holding enums).

Fourth round: the group estimate's cost (before -> after, same minutes, two runs each, a quieter
machine than above): plain 165-167 -> 165-167/s; fast, every 8th 1,469-1,494 -> 1,562-1,571/s;
sweep one call each 1,832-1,853 -> 1,935-1,962/s; again with every group kept 5,365-5,503 ->
5,465-5,500/s; evaluate_many 1,986-1,996 -> 2,079-2,113/s; planner rows 1,225-1,241 ->
1,257-1,282/s. Measured inside the one-call sweep with the collector off (best of 3, two
alternating runs each): the 928 group estimates 740-747 -> 651-662 us each, the rest 259-260 ->
256-263 us per deployment; Python calls per group estimate (cProfile, exact) 2,475 -> 2,123.
What it cut: the 256 group estimates of the colocated family ("all", 40 % of the group
estimates' time, 1,100 -> 830 us each) are 32 training set-ups times 8 engines, and only the
group's generation reads the engine; so a colocated group's forwards' and updates' own bytes,
the other models' bytes beside each task, and a training job's numbers (time, bubble, prediction
and parts) are kept per query under ``group_key.task_key`` (the group key without the run-wide
engine, the task in its final layout), built once per group; a group that generates nothing or
runs the Hybrid Engine keeps none (its group key is that key already); a group's layouts look up
the group, its engine and whether it trains once (``inputs.layouts_for``);
``parallel.shard.tp_shard`` is kept per model and degree (1,015 calls in the sweep, 4 distinct;
a new ``Arch`` walks forty fields). Measured and left: the other 672 group estimates (the
trainer groups of the split families: 32 training set-ups times 3 GPU counts, every one a new
layout) share nothing across groups by any narrower key (the 640 training jobs still computed
are 640 distinct keyed on the task, layout, trainer settings, offload and GPUs alone); their
time is first evaluations of the memoized passes and memory (``train_time``, ``forward_time``,
``memory_per_stage``: a fifth to a quarter) and a flat spread of small steps (about 2,200 calls
per estimate: residents, key parts, rollout buffers, transfers, the start-up peak). The target
(<= 0.3 ms per estimate) needs that spread to be a few tuple operations per job, not a model
object per group. The rest per deployment is unchanged: with every group kept, group keys are a
fifth of it (a Setup's part: interning the deployment's pydantic fields, 16 ``__eq__`` and 16
``__hash__`` of pydantic models per deployment) and ``iteration.combine`` two fifths.

Fifth round (before -> after, same minutes, two alternating runs each, a quiet moment of a
machine five helpers share): plain 150-155 -> 151-154/s; fast, every 8th 1,441-1,479 ->
1,450-1,486/s; sweep one call each 1,699-1,718 -> 1,733-1,748/s; again with every group kept
4,959-5,061 -> 5,015-5,023/s; evaluate_many 1,956-1,963 -> 1,997-1,999/s; planner rows
1,116-1,142 -> 1,154-1,162/s: about 2 % on the sweeps, the kept sweep unchanged (under load,
2.5-5 on the two cores, the same runs spread by 10 % either way). Python calls of the one-call
sweep (cProfile, exact) 5,005,407 -> 4,868,509. What it cut: the critical cycle's label is
kept per query by the schedule template's and the placement tasks' identities (23,552 unit
labels in the sweep -> 888: a new groups' part labelled its cycle again), the template of a
loop without fusion beside the groups' part by staleness and links (the dozen units' shape no
longer built, hashed and compared per deployment), the idle-rank notes per group estimate.
``--profile-estimates`` profiles inside the 928 computed estimates alone (collector paused):
2,072 Python calls each. Timed function by function (collector off, own time per estimate):
``predict_train`` 72 us and ``predict_forward`` 33 (first evaluations of the memoized passes,
``perf/``), ``GroupTasks.__init__`` 71 (layouts, the token budget's and forward ZeRO's layout
copies, the batch checks), ``with_residents`` 65 and ``_beside_of`` 32, ``_train`` 63,
``_job`` 59, ``_generate`` 40, ``group_init`` 39, ``transfers`` 38, ``_own`` 38 and
``memory_per_stage`` 28, ``rollout_buffers_of`` 23, ``host_bytes`` 21: no step above an
eighth of the estimate, so the 0.3 ms target needs all of them flat (a rewrite of the group
model), not one. The rest per deployment with every group kept (us per deployment): group
keys 46 (a Setup's part about 9 per part, a group's ``_reads`` 2.5, the key's look-up 2-3, of
which the pydantic group settings' hash and ``__eq__``), ``evaluate_in``'s own 44,
``combine``'s own 40, the template's values, period and spans 30, ``query_of`` 14,
``weight_syncs`` 9, ``worker_notes`` 9, ``recommended_fraction`` 7. Measured and left:
interning each deployment once per query (its model fields and group settings replaced by the
query's first equal ones, so that keys compare them by identity) cut pydantic ``__eq__`` in
the sweep from 52,922 to 29,680, but the interning costs a hash and an ``__eq__`` per field
(50,373 look-ups), every key still hashes the models (a frozen pydantic model keeps no hash)
and the deployment is copied: the kept sweep 197-204 -> 204-206 us per deployment, reverted;
a plain tuple of a model's values costs 0.95-1.8 us to build, more than the pydantic hash
(0.25-0.35 us) and ``__eq__`` (0.56 us) it would replace; each group estimate's own share of
the groups' part (its stages' work and memory, wave notes, tokens, trainers), joined per
tuple of estimates: ``_build`` 0.253 -> 0.287 s profiled, three groups per tuple pay less than
a record per estimate costs, reverted. The 41 templates a first sweep builds take about 3.6 ms
each (two generated functions compiled, the undominated cycles): 45 us per deployment of a
fresh process's first sweep, none once its shapes are built (templates are kept per process).

Sixth round: a group's memory residents as flat int arithmetic (before -> after, same minutes,
alternating runs, the last two pairs on the final version; the machine shared and noisy):
plain 155-156 -> 156-159/s; fast, every 8th 1,487-1,489 -> 1,512-1,539/s; sweep one call each
1,763-1,797 -> 1,829-1,855/s (over all eight pairs 1,715-1,797 -> 1,780-1,855/s); again with
every group kept 5,096-5,145 -> 5,087-5,153/s (unchanged: no estimate computed); evaluate_many
2,023-2,028 -> 2,112-2,136/s; planner rows 1,166-1,190 -> 1,176-1,209/s. The 928 group
estimates inside the one-call sweep with the collector off (best of 3, two alternating runs
each): 687-691 -> 629 us each, the rest 273-274 -> 270 us per deployment. Python calls
(cProfile, exact): per group estimate 2,095 -> 1,949; the one-call sweep 4,622,556 ->
4,487,076. What it cut: a model's resident states are a tuple of three ints (weights,
gradients, optimizer: the first three terms of a MemoryBreakdown, every other term 0;
``GroupMemory.states``), and so are the states waiting in host memory between phases and the
states present beside a task; the bytes beside a task (``_beside``: its model's states, whether
it runs a second layout, the other models' states plus the fused transients in term order) are
one tuple summed term by term, and ``with_residents`` adds the own bytes to it as ints and
builds the one MemoryBreakdown the job keeps; ``host_bytes`` sums the same tuples (the
trainers' offloaded states, the same for every task, once per group); the refit buffer and
the fused transients are ints and tuples; the resident MemoryBreakdowns are built once per
group, only for the estimate and the start-up peak (``GroupMemory.residents``), whose steady
states are summed as ints; the own bytes' term changes, the engine's profiled budget and the
start-up load's terms skip ``dataclasses.replace`` (``breakdown_ops.with_terms``); a task's
longest response and its workload (dtypes: a memoized ``model_copy`` keyed on the pydantic
workload, looked up 7 times per estimate) are kept per task in the group; the rollout
buffers' key builds no sets. Together: ``resident`` 20,552 -> 2,192 calls in the 928
estimates (and ``states`` 18 a estimate, a dict look-up each), ``own`` 13,094 -> 8,470,
``trains_here`` 33,752 -> 24,680; per estimate ``breakdown_ops.breakdown`` 11.9 -> 6.9,
``only`` 4.5 -> 0.7, ``add`` 3.2 -> 0, ``dataclasses.replace`` 3.5 -> 1.7 (the rest in
``deployment/`` and ``perf/``); profiled own time per estimate
(cProfile, so inflated): ``host_bytes`` 18.9 -> 10.6 us, ``resident`` 10.9 -> 2.4,
``phase_offloaded`` cumulative 108 -> 10.5 (it no longer computes the own bytes first),
``with_residents`` cumulative 319 -> 273 (the own bytes' first evaluations, ``memory_per_stage``
in ``compiled/``, are about 130 of it either way). Every result is the same (the
``validate --rl --json`` output and 2,753 deployments' ``to_json`` across PPO 70B and GRPO 8B
on 16 and 32 GPUs byte for byte). What did not help: the residency side was never a large
share: with it flat, the estimate is still about 1,950 calls, spread over the layouts
(``GroupTasks.__init__``: ``inputs._layout``'s memoized key over fourteen arguments, pydantic
hashes, 3.8 a estimate), the passes (``perf/``), the job set-up (``_job``, ``_train``), the
transfers (Transfer objects with f-string labels) and the start-up peak; ``with_residents``'
own work per call (the deployment's engine, workspace and allocator-slack terms) is a dozen
attribute reads and is not kept per task because each task asks once. Not done: the jobs'
``own`` and ``memory`` MemoryBreakdowns and the Transfers are still built per group estimate
(the reports and the iteration's peak read them), so the kept objects and the collector's two
full passes are as before.

Seventh round: a group's set-up (``GroupTasks.__init__``: its tasks, layouts, forward ZeRO,
token budget, batch checks) as per-query look-ups (before -> after, same minutes, alternating
runs, two each): plain 158 -> 158-160/s; fast, every 8th 1,511-1,513 -> 1,528-1,548/s; sweep
one call each 1,796-1,799 -> 1,788-1,809/s (within the noise); again with every group kept
5,122-5,143 -> 5,082-5,125/s (unchanged: no estimate computed); evaluate_many 2,063-2,093 ->
2,113-2,137/s; planner rows 1,175-1,199 -> 1,198-1,199/s. The 928 group estimates inside the
one-call sweep with the collector off (best of 3, two alternating runs each): 633-644 ->
614-623 us each, the rest 268-274 -> 269-282 us per deployment (not touched; noise). Python
calls (cProfile, exact): per group estimate 1,968 -> 1,874; the one-call sweep 4,520,812 ->
4,430,703. ``GroupTasks.__init__`` alone, rebuilt for the sweep's 928 (Setup, group, GPUs)
with the query warm (best of 5, no profiler): 44.9 -> 24.3 us; ``layouts_for`` in it 13.2 ->
about 5. What it cut: a group's layouts are kept per query in two levels
(``inputs.layouts_for``): the group's shape (the placement's group, the user's layout, whether
the group trains, the engine's kind, TP, PP and EP, ``ideal``, ``hybrid``, the GPU count),
hashed once per group (424 shapes among the 928 estimates), then the task and its model's TP
(a Task keeps its hash), where a memoized key of fourteen arguments (with their types, the
Arch and two enums) was hashed per task; a task's padded context (``seq_len``: the query's
lengths) is kept per query (8.0 -> 2.3 us a group) and its batch per task in the group (read
at eleven places); the group's tasks are sorted once per task tuple; the options check
returns at once on a group given none; forward ZeRO and the token budget copy a layout only
where they change it, and the budget's specs are read once per group; ``DeviceGroup.layout``
builds no dict when the group gives no layout; the rollout buffers' key holds the ``Routes``
(a frozen dataclass hashed in Python, 0.14 us) only under routing replay. Every result is the
same (``validate --rl --json`` byte for byte; the ``to_json`` of the 8,256 candidates of PPO
70B and GRPO 8B on 16 and 32 A100, one sha256). What did not help, measured: a key for the
whole set-up (everything it reads: group, tasks, user layout, TP degrees, engine, ``ideal``,
``hybrid``, the group's deployment settings, trainer and forward layouts, framework) shares
nothing: 928 distinct keys for the 928 estimates (352 distinct results), as the group key
itself; with the trainer's and forwards' layouts in the group's shape, 800 shapes of 928. The
transfers' f-string labels cost 0.35 us each (about 1.5 a group; a kept label's look-up 0.09):
a lazy label on ``Transfer`` (a field the reports and equality read) is not worth its change.
The set-up is now about 4 % of an estimate, which stays a flat spread (``_job``,
``with_residents``, the passes in ``perf/``, transfers, the start-up peak).

Eighth round: fewer objects kept per deployment and per estimate (before -> after, same
minutes, alternating runs, two each; on a quiet machine, all but the last step: plain 149 ->
149-150/s; fast, every 8th 1,435-1,457 -> 1,481-1,523/s; sweep one call each 1,684-1,706 ->
1,869-1,918/s; again with every group kept 4,925 -> 5,159-5,167/s; evaluate_many
2,007-2,044 -> 2,018-2,046/s; planner rows 1,136-1,154 -> 1,146-1,152/s; the final version
in five alternating pairs of the two sweeps alone, at a load of about 2.3, the machine a
quarter slower: one call each 1,184-1,414 -> 1,222-1,591/s, pair by pair -0 to +23 %, median
+12 %; with every group kept 3,156-3,826 -> 3,524-4,212/s, +10 to +16 %): the sweep one call
each gains about a tenth, mostly the collector's share; the batch and the planner rows,
which pause the collector, gain little. Exact counts: the tracked
objects the one-call sweep keeps (after a collection) 128,875 -> 86,600, its collections in
this benchmark's order 3 full and 29 gen-1 -> 2 and 22; Python calls (cProfile) 4,406,367 ->
4,312,620, with every group kept 2,049,870 -> 1,893,026 (628 -> 580 a deployment). What it
cut: the phases with the weight syncs were kept per deployment beside the groups' part (its
syncs, a tuple, 2.6 Phases): a sync's phase is now kept on the sync (itself kept per pair of
estimates) and joined per deployment; a phase that one group alone has is that estimate's own
Phase, shared by every iteration it joins (kept Phases 17,376 -> 6,744); unit shapes are
interned (7,696 tuples -> 57); the groups' part keeps no trainers' or jobs' dict,
is its own entry (no (groups, part) pair) and shares its shape and templates with the parts
of one shape; the values derived from an estimate (units, phases, notes, engine fraction)
live on the estimate (``memo.per_instance``: one dict, not a key and an (object, value)
pair each); kept group keys and task parts hold the query's first equal group settings and TP
degrees. Per deployment: the worker notes are kept per query by what they read (about 10 us),
the engine fraction is keyed on the overhead's values (no pydantic hash and ``__eq__`` per
group), ``combine`` reads the groups' stages in order. Every result is the same
(``validate --rl --json`` byte for byte, the 8,256 candidates' ``to_json`` one sha256). What
did not help: a job's ``own``/``memory`` as a tuple of ints behind a data descriptor (a tuple
of ints is untracked): 8,453 -> 4,037 MemoryBreakdowns kept, but the tuple materializes each
Job's ``__dict__`` (+3,536 dicts) and the sweep reads those breakdowns about 40,000 times
(+86,000 calls): reverted. Caching ``combine`` or the weight syncs per groups' part: all 3,264
(groups' part, staleness) pairs of the sweep are distinct (1,760 parts), so at most the
synchronous and the overlapped loop share one (46 %), which a per-part table pays for in
kept objects. Left: a full pass comes at most every 11 gen-1 collections once the pending
objects exceed a quarter of the long-lived ones, so one pass needs about a third fewer net
allocations; the group keys (a pydantic hash and ``__eq__`` per model field and per group's
settings: the planner's candidates are new objects each) and ``combine`` (weight syncs,
eight schedule evaluations, notes) are each about a quarter of what a kept deployment costs;
the 928 estimates are unchanged (about 615 us each).

Ninth round (December 2026, this version against the eighth round's ac69173 in the same
minutes, two runs each, a quiet machine): plain 159 -> 129-141/s; fast, every 8th 1,590 ->
1,245-1,303/s; sweep one call each 2,050-2,062 -> 1,435-1,512/s; again with every group kept
5,465-5,531 -> 4,104-4,214/s; evaluate_many 2,210-2,231 -> 1,683-1,745/s; planner rows
1,174-1,221 -> 883-904/s. The features priced since (a group's own engine and trainer
settings and their given fields in the keys, NeMo RL's per-rank driver data, the math
environment, MoE capacity and permutation, engine caches, CPU Adam threads, length and sync
notes) cost about a quarter, no single one: bisected, each merge took 1-8 %; Python calls in the
sweep's 928 estimates 4.62 M -> 5.45 M, in the kept sweep 1.89 M -> 2.30 M. What this round cut:
a transfer whose text states its numbers (the driver data's bytes and ranks per shard, a
reshard's target sizes, the environment's responses) names its schedule unit without them
(``Transfer.unit``), so the sweep builds 22 schedule templates, not 84 (each about 6 ms to
build: the cycles, their dominance and two compiled functions); the length note reads the
jobs' phases only when the lengths spread (48,000 calls); ``presets.behaviour`` is kept per
name. Against this session's start (49d49a8, same minutes): sweep one call each 1,446-1,449
-> 1,496-1,512/s, kept 4,243-4,276 -> 4,104-4,165/s, evaluate_many and planner rows equal within
the noise, with the features above added. Measured and left: pydantic's ``__eq__`` on the
deployment's models (63,000 calls in the sweep, equal-but-distinct candidates' fields) and
its hash (85,000); a faster ``__eq__`` showed no gain above the noise. The 5,000/s target for
the one-call sweep needs the group estimate (about 1.5 ms each now, the collector's passes
included) and the kept path (about 240 us) both cut several-fold: a vectorized group
estimate, not more of these rounds.

Tenth round (December 2026, against main 58df34d in the same minutes, two alternating runs each,
the machine at a load of 3-4.5, about a third slower than in the ninth round: main's sweep one
call each ran 967-1,008/s where the ninth round measured 1,435-1,512/s): plain 79-82 -> 82-85/s;
fast, every 8th 781 -> 847-848/s; sweep one call each 967-977 -> 1,038-1,040/s; again with every
group kept 2,454-2,562 -> 2,476-2,531/s (within the noise; this sweep now forgets the
templates' kept periods first, or it would find every one); evaluate_many 1,059-1,076 ->
1,098-1,156/s; planner rows 566-574 -> 565-588/s: the sweeps that compute group estimates 4-8 %
faster. 5,000/s is not met, for any variant. What it cut, each result the same bit for bit
(``validate --rl --json``; the 8,256 candidates' ``to_json`` of PPO 70B and GRPO 8B on 16 and
32 A100, one sha256; ``tests/test_fast_equal.py``): a schedule template's period (the bound's
critical cycle) took every cycle's mean, then ``_critical``'s tie-break, a sort over the
cycles at the largest mean, which 2,848 of the sweep's 3,264 periods need (2,752 have two);
the template now writes its means in that tie-break order, the first mean equal to the
largest being the critical cycle (weights >= 0 of one type, no NaN; others as before): 35.2
-> 25.7 us a period (same process); a template's periods and values are kept by the weights'
values and type (``schedule_template.KEPT``, emptied by ``memo.clear_all``): the sweep's
3,264 deployments have 1,520 distinct bounds and 22 distinct depth vectors (4 values and a
period per deployment, about 11 and 26 us each); NeMo RL's per-rank driver data is kept per
query by the task, bytes, replicas, group, GPUs and cross-node fraction (236 distinct
Transfers of the sweep's 3,232), and a group's pass options per group model (1.7 ``step_options``
a group estimate, each a walk of the framework's behaviour): Python calls per group estimate
(``--profile-estimates``, exact) 2,308 -> 2,121. Where the time goes now: a group estimate
about 2 ms on this machine, 2,121 calls, of which the first evaluations of the memoized passes
(202 ``train_time``, 110 ``forward_time``, 669 ``memory_per_stage``) about a fifth and the rest
a flat spread (no function above 4 % of its own time: the jobs' set-up, memory beside each
task, transfers, the start-up peak); a deployment with every group kept about 390 us and 714
calls: group keys 22-29 % (the Setup part 13 %: each deployment's pydantic fields interned),
``combine`` 38 % before this round's cuts (the templates about 40 % of it), ``evaluate_in``'s
notes and own work about a quarter, ``query_of`` 3 %; pydantic ``__eq__`` 19 and its hash 21 per
deployment (the candidates' fields are equal, distinct objects); the collector's two full
passes 0.22-0.23 s of the one-call sweep (7 %). What did not help, measured: interning the
deployment's groups (a tuple of pydantic models) with its model fields in the Setup part:
pydantic ``__eq__`` in the kept sweep 61,681 -> 71,784 and its hash 69,184 -> 79,360 (most
deployments key one Setup part, so the interning adds a hash and a compare): reverted.
``--profile-estimates`` takes ``--cum``, ``--top=N`` and ``--callers REGEX``. With the spread
this flat, 5,000/s one call each needs a group estimate near 0.3 ms and a kept deployment
near 100 us: a rewrite of the group model (a group's jobs as a few tuple operations, or every
candidate's group at once in numpy) and of the key and ``combine`` path, not more such cuts.

Eleventh round, measured and left: a compiled build with mypyc (mypy 2.4.1, gcc 12, -O3).
Compiled: ``memo``, ``placement/`` (but ``symbolic*`` and the package's ``__init__``),
``evaluation/`` (but ``__init__``), ``perf/`` (but ``validate*``), ``deployment/`` (but
``engine``, ``overhead``, ``pipeline_split``, ``spec``, ``group_brackets``) and ten numeric
``parallel/`` modules (``breakdown``, ``layout``, ``comm``, ``zero``, ``zero_groups``,
``shard``, ``pipeline``, ``pipeline_split``, ``pp_layout``, ``moe_capacity``), with
``compiled/memory``: 150 modules, one 700,000-line C file that one gcc process compiles: 9-13
minutes to build on this machine (65 modules of ``placement/``, ``evaluation/`` and ``memo``
alone: 4.5-6.5). Against the same source interpreted, alternating, two runs each: plain 82-84 ->
100-103/s; fast, every 8th 836-838 -> 968-981/s; sweep one call each 1,037-1,038 ->
1,219-1,229/s (1.18x); again with every group kept 2,612-2,628 -> 3,262-3,286/s (1.25x);
evaluate_many 1,139-1,153 -> 1,310-1,346/s; planner rows 612 -> 650-663/s (the 65 modules alone,
one run each, not alternated: sweep 1.05x, kept 1.18x). Far from the 1.4x that would pay for a
second build, and not equal: the ``validate --rl --json`` output was byte for byte the same, but
every one of the 8,256 candidates' ``to_json`` (PPO 70B, GRPO 8B, 16 and 32 A100) raised
``TypeError: int object expected; got float`` in ``GroupEstimate.busy_s`` (``sum(...) +
sum(...)`` of floats: mypyc 2.4.1 raises the same in a two-line function ``return sum(x for x in
xs) + sum(x for x in xs)``, ``xs: list[float]``), and a compiled ``float`` parameter or return
turns an int into a C double (checked the same way: ``3`` formats as ``3.0``, ``2**53 + 1``
rounds). Why so little: what stays interpreted (pydantic's hash and ``__eq__``, 7 % of the
profiled sweep with the 65 modules compiled, ``dataclasses``, ``enum``, ``fractions``, the
specs), and the hot classes must stay Python classes inside the compiled modules (no
``__dict__`` in a native class): the group model (``GroupSizes`` ... ``GroupModel``,
``memo.kept_property``), ``DeviceGroup`` and ``Task`` (their hash kept in ``__dict__``),
``GroupEstimate`` and ``Transfer`` (``memo.per_instance``), ``PlacementEstimate``,
``MemoryBreakdown`` and ``Layout`` (copied through ``__dict__``), ``Engine``
(``cached_property``), so their attribute reads and method calls still go through Python's
lookups. What mypyc refused, and what it took: a property without a return annotation (internal
error); an int assigned to a ``float``-annotated local (``int | float`` then); a dataclass field
whose type is imported only under ``TYPE_CHECKING`` (mypyc puts the type object in
``__annotations__``: ``KeyError`` at import; imported at run time then); a lambda or nested
function capturing variables inside a method of a Python class (internal error;
``functools.partial`` or a method); a compiled method's missing ``__name__``
(``kept_property``); a module ``__getattr__`` (``rlmcost.arch``, the packages' ``__init__``: a
segfault at import); ``x in (*a, *b)`` (internal error); a module defining pydantic models (its
C does not compile); ``@runtime_checkable`` ``Protocol`` (``rlmcost.timing``: ``TypeError`` at
import); 32 generator expressions built as lists (a warning; each fully consumed);
``--profile-estimates`` replaces ``group_jobs.recall``, which compiled callers bind directly.
Not kept: the speed-up is the size of two of the rounds above, for a 10-minute build,
``mypyc_attr`` markers on a dozen classes and a second, unequal path to test.

Twelfth round, measured and left: a task's numbers shared by groups of other members. Which
sub-results of the sweep's 928 computed group estimates recur (calls against distinct results,
exact): a training job's numbers (``group_jobs._train``) 640 for 416, a task's own bytes
(``GroupTasks._own``) 1,304 for 489, a forward's numbers 312 for 79, a generation job 304 for
68, the memory beside a task (``with_residents``) 3,536 for 738, the transfers 928 for 257, the
start-up peak 928 for 86. The first three recur because the split families put the same task
in the same layout on the same GPU count in groups of other members (``actor=8``,
``actor+reference=8``, ``actor+reward+reference+critic=8``), while their keys
(``group_key.task_key``, ``forward_key``) hold the group's name, members and tasks. Keyed
instead on what a task reads of its group (the tasks of its own model, whether the actor runs
and trains there, whether its model trains there, whether the group generates on the Hybrid
Engine; the group and its own settings less name and members: commit 3eb7b33, reverted after
it): ``_train`` 640 -> 456, ``_own`` 1,304 -> 1,048, ``_forward`` 312 -> 240 calls, Python calls
per estimate 2,222 -> 2,143, every result the same (``validate --rl --json`` byte for byte;
the ``to_json`` of 12,512 planner candidates: PPO 70B and GRPO 8B on 16 and 32 A100, PPO 8B
under verl and OpenRLHF and GRPO Qwen3-30B-A3B under verl on 16 H100). Timed (the one-call
sweep and ``evaluate_many`` alone, best of 3 sweeps per process, three alternating processes
each, load 2-5 on the two cores): against its parent 857-957 -> 849-936/s one call each,
895-994 -> 879-1,031/s ``evaluate_many``; against main 874-914 -> 858-956/s and 946-966 ->
935-972/s: within the noise, short of the 5 % asked, so not kept. The saved calls are the
cheap repeats: the passes behind them (``train_time``, ``forward_time``, ``memory_per_stage``)
were memoized already, so a repeated ``_train`` costs about a third of a first one. What
recurs besides is what the whole group sets (the memory beside each task, generation's slots
and KV pool, transfers, the start-up peak: their inputs are the group's residents). Also
measured: the key parts cost 46 us a group model for the forwards' (the Setup part rebuilt
per deployment; 880 in the sweep) and 16 us for the colocated tasks'; ``engine_budget`` runs
twice per generation job. 5,000/s one call each is not met (about 900/s on this machine, a
loaded one); ``tests/test_fast_membership.py`` keeps the membership grid that round checked
(LoRA's shared base, NeMo RL's reference swap, a parameter offload's round trips) equal to
the plain evaluation.

Thirteenth round: the planner's rows beyond the evaluation (December 2026, against main
00f7ec1 in the same minutes, the machine at a load of 6-7). cProfile of ``evaluate_chunk``
over the 3,264 candidates (every group estimate kept): of 10.1 s profiled, the evaluation 3.4 s,
the candidate's Run (``candidate_run``: ``Run.replace``, the framework defaults and pydantic's
validation) 3.4 s, the row's command (``Run.to_command``: it builds a second Run) 2.3 s and its
``run.to_json()`` 0.3 s; 8.29 M -> 5.90 M Python calls. A plan shows a few dozen of its rows
(the top rows, the Pareto front, the best of each topology, ``--min-gpus``' and the longest
response's row), so an exact row now holds its numbers alone (what a Dask worker returns,
about 650 bytes pickled, 3,100 with its command and Run); the search keeps each fitting row's
base Run and candidate (``rl_rows.SourcedRow``) and ``rl_rows.with_runs`` writes the command
and Run of the rows shown
(``candidate_run`` is deterministic: the Run the evaluation saw); a split's ``--groups`` text is
parsed once per text (20 texts among the 3,008 grouped candidates, about 150 us each:
``rl_runs._groups_data``). Every output the same: ``plan --json`` byte for byte but the timings
(PPO 70B on 32 A100; GRPO 8B ``--framework verl`` on 8 and 16 H100; GRPO Qwen2.5-32B
``--hardware h20:32,h100:16 --objective cost``; PPO 8B ``--min-gpus`` on 4..32 A100) and the
text output; ``--workers 2`` gives the in-process rows. Planner rows (this line alone, two runs
each, alternating) 461-470 -> 632-690/s, the whole benchmark once each 433 -> 622/s (its sweep
one call each 832 -> 897/s and evaluate_many 967 -> 984/s in the same minutes: the load); `plan
ppo -m 70b -H a100-80gb --gpus 32` 4.54-4.72 -> 3.99-4.12 s of user CPU (1,272 evaluated); the
8..1024 plan of ``bench_plan.py`` 22.9-23.0 -> 19.6-20.1 s of CPU (5,958 evaluated; 59-60 s
wall under the load, 65 before). What is left between a row and ``evaluate_many``: the
candidate's Run, about 600 us (the framework defaults about two fifths: the preset's tier,
options and deployment looked up per Run, ``run/defaults.py``; pydantic's validation of the
whole Run about two fifths, the Deployment most of it; the base's ``to_json`` and the merges
the rest). A Run built from validated parts (``model_copy`` of the base's sections, the
preset's lookups kept per actor) would cut most of it; not done here.

Fourteenth round: a candidate's Run from validated parts (December 2026, against main cf00762
in the same minutes, a load average of about 2). ``candidate_run`` is now
``rlmcost.run.replacing.replaced(base, **plan.rl_runs.candidate_sections(base, c))``: the same
data as ``Run.replace`` (the same functions merge the sections and lay the framework's defaults
under them), but each section and each nested layout (trainer and forward layouts, engine,
groups, overheads, the algorithm, models, workload and cluster) validated once per distinct
value, keyed on its ``marshal`` bytes (exact types: 1, 1.0 and True apart; anything not plain
data refused), and handed to pydantic as model instances, which it keeps as they are; the
Deployment's and the Run's own validators still run on each Run, and anything the parts reject
goes ``Run.replace``'s whole way (its error word for word). The base's JSON and its sections'
parts are kept for the last base (by identity). The framework's look-ups (``run/defaults.py``:
the sized preset, its tier, its deployment data per engine kind, its implied options per
algorithm) are kept per what they read; ``actor_moe`` reads a name as ``actor_params`` does (no
file check unless it looks like a path). 3,264 PPO 70B candidates on 32 A100: 364-367 ->
193-194 us a Run (the collector off); 48 trainer and forward layouts, 13 engines, 37 groups
validated in all. Shared layouts also cut the evaluation's own pydantic ``__eq__`` calls
(66,544 -> 752 in the sweep: dict look-ups meet the same instance), so the one-call sweep moved
too. Two runs each, alternating: planner rows 701-705 -> 848-852/s (the sweep one call each
944-962 -> 1,033-1,037/s, evaluate_many 1,053-1,075 -> 1,132-1,138/s); ``bench_plan.py``'s
8..1024 plan 12.2-12.3 -> 10.8 s of CPU (5,958 evaluated), its Dask query's one process
6.70-6.84 -> 5.94-5.96 s of CPU; `plan ppo -m 70b -H a100-80gb --gpus 32` 3.75-3.78 -> 3.42 s
of user CPU. ``plan --json`` byte for byte but the timings (PPO 70B on 32 A100; GRPO 8B
``--framework verl`` on 8 and 16; GRPO Qwen2.5-32B ``--hardware h20:32,h100:16 --objective cost
--price h20=1.2``; PPO 8B ``--min-gpus``; PPO 70B ``--framework openrlhf`` and GRPO 70B
``--framework trl`` on 32) and the text output; ``tests/test_run_replacing.py`` (hypothesis)
keeps ``replaced`` equal to ``Run.replace`` (``==`` and ``to_json``) on random candidates of
six bases and on random changes with bad values (the same error). What is left of a Run: the
framework defaults' merges and copies (about 45 us), the sections' merge with a forward layout
following the trainer's (about 35 us), the parts' keys and the Deployment's validator (the
forward layout over the trainer's).

Fifteenth round: the per-deployment checks added since (host memory, a size tier's layout, the
Megatron trainer and DTensor packing, NeMo RL's offloads apart from the engines) kept per what
they read (December 2026, against main 7fedefb in the same minutes, four alternating runs each
in two sittings, a load of 3-7 on the two cores, noisy by 5-10 %): plain 78-85 -> 82-85/s;
fast, every 8th 724-800 -> 803-841/s; sweep one call each 902-965 -> 975-1,046/s; again with
every group kept 2,220-2,314 -> 2,535-2,717/s; evaluate_many 1,017-1,066 -> 1,052-1,131/s;
planner rows 733-806 -> 783-849/s. Per deployment (collector off, best of 7 kept sweeps / 3
fresh ones, four alternating processes each): kept 428-440 -> 353-367 us, one call each 901-919
-> 839-890 us; Python calls in the kept sweep 2,622,861 -> 2,157,469 (804 -> 661 a deployment),
in the one-call sweep 5,960,781 -> 5,528,350. What each check cost (us a deployment, warm,
before -> after, the function alone): the offloads-apart rule 25 (asked twice: the iteration's
note and the notes' view) -> 17 for both, once per evaluation and none under a framework
without the rule (its flag read first; a group estimate's task kinds kept on it); the tier
check 7.6 -> 1.9 (its imports after the cheap exits, the tier looked up per framework and actor
size); the Megatron-trainer and packing check 10.4 -> a look-up (kept by the identities of the
sections it reads, ``memo.by_identities``: the planner's candidates share their validated
sections); a deployment's device groups 10.0 -> 4.1 (the same); the host check 0.3 (kept per
group estimates already; nothing to cut). Beside them: a group's engine is the deployment's
without a table where the group gives none (``inputs.engine_for``, nine calls a deployment), a
group's task kinds per placement (``group_key._reads``), each deployment field's interned key
part by identity, the worker notes' key and ``query_key`` hashed once per their sections'
identities (``memo.Hashed``: no pydantic hash and no models JSON dump per deployment), the
hybrid-sharding notes per group estimate, the engines' notes per query, an estimate's fleet
kept (a plan row reads it six times). Every result the same: ``validate --rl --json`` byte for
byte; the ``to_json`` (or error) of 14,448 planner candidates, one sha256 (PPO 70B and GRPO 8B
on 16 and 32 A100, GRPO Qwen3-235B-A22B under NeMo RL's tier on 128 H100 (every one refused:
its error text), PPO 70B with ``host_memory_gib`` 256, whose rows are all host-bound);
``tests/test_fast_*.py``. Left: the group estimates (about 430 us of a one-call deployment),
the kept path's flat spread (``combine``'s schedule values about a third of it, group keys a
sixth: the Setup part's fields, a tuple of about 25 pairs hashed and compared per part), and
the planner row's Run (``run/defaults.py``: the preset's data copied per Run, 24 ``_json_copy``
calls).

Sixteenth round: a group estimate found by identities, the preset's data read, not copied
(December 2026, against main 708e733 in the same minutes, three alternating runs each, a load of
3-4 on the two cores): plain 86 -> 86/s; fast, every 8th 838-856 -> 862-865/s; sweep one call
each 1,047-1,082 -> 1,077-1,097/s; again with every group kept 2,616-2,693 -> 3,281-3,290/s;
evaluate_many 1,130-1,158 -> 1,176-1,203/s; planner rows 851-865 -> 885-900/s. Per deployment
(collector off, best of 7 kept sweeps / 3 fresh ones, three alternating processes each): kept
345-349 -> 302-311 us, one call each 831-841 -> 800-802 us; a group key and its look-up
(``group_key.recall`` over the kept sweep's 10,432 groups, in order) 53.3-53.7 -> 27.1-27.3 us a
deployment; a candidate's Run 193-195 -> 186 us. Python calls in the kept sweep 2,157,180 ->
1,638,588 (661 -> 502 a deployment). What it cut: ``recall`` finds an estimate first by the
identities of what its key is made of (``memo.by_identities`` in the query's ``groups_seen``:
the Setup part, the placement's tasks, the group, its own settings and the models' TP degrees as
objects; the GPUs, the part and the TP values as values) and builds, hashes and compares the key
only on a miss (2,424 entries for the sweep's 10,432 look-ups); the Setup part
(``placement/setup_part.py``) is kept per query by the identities of the fields each part reads
(the planner's candidates share their validated sections; the framework's name, a new string per
Run, by value: 372 entries), and which part a group reads by the tasks, the group, the run's
engine and the group's own settings (592); an unnamed placement is one part per equal value (a
synchronous and an overlapped loop share it); ``memo.by_identities`` no longer checks the
identities of a hit (an entry holds its objects, so no other object can take their ids);
``run/defaults.py`` hands the sized preset's kept data to the merge (which makes new mappings
where the Run gives a section) and replaces, not changes, a mapping a rule changes, where it
copied the whole preset per Run. Every result the same: ``validate --rl --json`` byte for byte;
the ``to_json`` of the 14,448 planner candidates' Runs and of their evaluations (or errors), one
sha256 (PPO 70B and GRPO 8B on 16 and 32 A100, GRPO Qwen3-235B-A22B under NeMo RL's tier on 128
H100, PPO 70B with ``host_memory_gib`` 256); ``tests/test_fast_*.py``, ``test_run*.py``. The
one-call sweep keeps 6,600 more tracked objects (119,874 -> 126,468; three full passes of the
collector either way). Left: ``iteration.combine`` is now over half of a kept deployment
(cProfile: its own work about a sixth, the schedule values kept by their weights about a fifth,
the weight syncs, phases and notes the rest), ``evaluate_in``'s own work and notes about a
tenth; the group estimates (about 500 us of a one-call deployment) as before.

Seventeenth round: what a deployment of kept group estimates costs (December 2026, against main
48bb453 in the same minutes). At a load of 0.6-0.8, two alternating runs each: plain 111-112 ->
100-109/s; fast, every 8th 858-1,129 -> 828-999/s; sweep one call each 1,139-1,408 ->
855-1,215/s; again with every group kept 4,247-4,452 -> 4,726-5,008/s; evaluate_many
1,455-1,613 -> 1,402-1,455/s; planner rows 1,047-1,078 -> 1,026-1,185/s (all but the kept sweep
within this machine's noise, which other processes on the two cores set: plain moved 10 % with
no change of its path). Steadier measures: the fastest of 9 kept sweeps chunk by chunk (64
chunks, collector off), at a load of 1.7-2, 243.6-265.1 -> 198.1-212.3 us a deployment (5,047/s
at best; side by side at a load of 5-6, 300.1-334.6 -> 249.0-280.0 before this round's last
step); the one-call sweep, the fastest of 4 per chunk, collector off, side by side, 623.1-643.9
-> 602.4-630.7 us a deployment, and with the collector on 853 -> 776 us (3 full collections
either way); Python calls in the kept sweep 1,638,796 -> 1,376,098 (502 -> 422 a deployment),
in the one-call sweep 5,130,327 -> 5,084,010; tracked objects the one-call sweep keeps 126,562
-> 134,916 (the link parts below). What it cut: without stage fusion, a loop's weight syncs,
their links as ``schedule`` takes them, the whole units' weights (the groups' units then the
links') and the iteration's phases are kept beside the groups' part by what the syncs read of a
deployment (ideal, framework, partial rollout, the refit setting of each group a sync reaches;
``placement/iteration_links.py``, in ``IterationGroups.labels`` under keys led by None), so a
deployment reads them instead of building them (``weight_syncs`` about 12 us, the lists'
copies, the link loop; a synchronous and an overlapped loop on the same groups share one; the
kept sweep finds every one, as it finds the groups' parts, so this share of its gain is what a
deployment saves where its groups' part recurs, not a new one's); the iteration's result (25
fields), its stages (7) and the Setup (17) are built without the frozen ``__init__``
(``placement/frozen.py``; through ``__init__``, an ``object.__setattr__`` per field, they took
about 12 us a deployment); the schedule's value of the prediction and its interval's two ends
in one generated function (``Template.values3``: ``largest``'s lines once per vector, computed
afresh: 9,174 of the sweep's 11,296 such values were not kept, and finding three kept values
cost more than it saved; the prediction's kept for the in-turn comparison); the trainer layout
(a memoized key hashing the pydantic ``TrainLayout``), the train notes (the same), the
generating engines (a set of ``EngineSpec``) and the placement (a key holding the device
groups: 2.9 ``DeviceGroup.__eq__`` a deployment) by identity first; the offloads-apart rule
(NeMo RL, computed per deployment: its table kept one entry) and the engine reservation's
advice by the identities of the sections, placement groups and estimates they read; the groups'
hardware read once per deployment, the vLLM note kept, the speculation notes' exit before the
groups' merged engines. Every result the same bit for bit: ``validate --rl --json`` byte for
byte; the ``to_json`` (or error) of 7,328 planner candidates (PPO Llama-3.1-70B on 16 and 32
A100, GRPO 8B on 16 A100 and under verl on 16 H100), one sha256 fast, plain (``memo.plain``)
and through ``evaluate_many``; ``tests/test_fast_equal.py`` (hypothesis: seeds 1-5 and 7 on the
round's earlier steps, the default seed and seed 3 on the last). Measured and left: the three
values by numpy (each cycle's sums by ``np.add.accumulate``, equal bit for bit) took 14.7-15.6
us against the generated function's 9.8-10.3; the kept path is now a flat spread (the
schedule's values about a sixth: some 80 additions a vector over the undominated cycles;
``evaluate_in``'s own work and notes; the group keys, about 9 us a group: three identity
look-ups); the fresh group estimate (2,151 Python calls each, ``--profile-estimates``: no
function above 4 % of its own time) and ``evaluate_many`` over distinct group keys at once, not
attempted: both need the group model as a few tuple operations.

Eighteenth round: what a fresh deployment's new group estimates and groups' parts repeat
(December 2026, against main e43047c5 in the same minutes, the machine at a load of 2-9 on its
two cores). Side by side (two processes, main's and this version, taking turns chunk by chunk
over the sweep's 32 chunks, which runs first alternating, each chunk's fastest of 4 sweeps, so
that both meet the same load; two such runs): one call each 809-938 -> 768-870 us a deployment
(1,066-1,236 -> 1,149-1,302/s, 1.05-1.08x); the collector off 698-699 -> 664-680 us
(1.03-1.05x); ``evaluate_many`` 702-716 -> 668-682 us (1,396-1,425 -> 1,466-1,498/s, 1.05x). The
benchmark's own lines, two alternating runs each, spread with the load by more than that (the
kept sweep, whose path did not change, 2,734-3,066 -> 4,315-4,796/s): plain 61-81 -> 84-98/s;
fast, every 8th 604-611 -> 962-1,000/s; sweep one call each 756-804 -> 978-1,257/s;
``evaluate_many`` 1,049-1,196 -> 1,158-1,443/s; planner rows 791-860 -> 689-914/s. What it cut,
found by counting which pure functions the one-call sweep asks again with the same arguments: a
GEMM's time (``Device.gemm_s``, the tile model, about 17 us at that load) is memoized on the
device and the shape (the first evaluations of the sweep's passes ask 5,702 of 185 distinct: 2
us a repeat); a deployment's pass options (``pass_options.step_options``: the framework's
behaviour walked, a StepOptions of forty-odd frozen fields built and ``dataclasses.replace``-d,
about 70 us) are kept by the deployment's identity (1,354 asked of 408 deployments: a
deployment's group estimates and its worker notes ask again) and interned per equal fields
(``perf.step_options.kept_options``: 31 us a computation, and the memoized passes' keys meet one
instance); a groups' part (``iteration_groups._build``, 1,760 in the sweep) reads each
estimate's stages, wave notes, token maxima and first and last units from ``_sums``, kept on the
estimate (work, memory and tokens are ints, so per-group sums regroup exactly; duplicate task
indices or a non-int number take the per-job path): 80.7 -> 36.8 us a part over the sweep's
parts, every field the same; ``Roofline.phase`` at the datasheet peaks is ``steps`` of one phase
without its lists and generators (1,006 phases, the same bits, -0.0 included);
``perf.collectives.link`` is memoized (3,724 links of 14); ``Dtype.bytes`` reads a module dict
and ``HardwareSpec.peak`` looks up once. Python calls per group estimate
(``--profile-estimates``, exact) 2,155 -> 1,864; in the one-call sweep 4,700,890 -> 4,419,281;
in the kept sweep 1,376,123 either way (not touched). Every result the same bit for bit:
``validate --rl --json`` (0 of 103 rows moved); the ``to_json`` (or error) of 6,048 planner
candidates (PPO Llama-3.1-70B on 32 A100, GRPO 8B on 16 A100, PPO 8B under verl on 16 H100), one
sha256 fast, plain (``memo.plain``) and through ``evaluate_many``, equal to main's;
``tests/test_fast_equal.py`` with hypothesis seeds 1-5; ``tests/test_fast_parts.py`` holds each
shortcut to the path it replaces. Measured and left: the collector's three full passes in the
one-call sweep (about a tenth of it; three either way, 199,226 -> 203,527 tracked objects after
it: the estimates' kept sums); the rest of a group estimate is as flat as before (about 1,860
Python calls, the memoized passes' and memory's first evaluations about a fifth); pure functions
asked again with few distinct arguments but cheaper than a memoized look-up (``data_share``
5,096 of 269, ``refit_s`` 5,760 of 16, ``Device.memory_s`` 4,916 of 253) were left as they are.
5,000/s one call each is not met.

Nineteenth round: where a fresh deployment's time goes, and two of its per-tuple parts by
value (December 2026, measured on main 326b1731, the machine at a load of 4-7 on two cores).
Measured first, inside the one-call sweep with the collector paused (three runs of main's code
in one process, fresh then every group kept): 656-802 us a deployment fresh, 222-234 us with
every group estimate kept; of the fresh, the 928 group estimates 255-314 us (940-1,070 us
each) and their ``GroupModel`` built 25-27 us, the groups' parts of the 1,760 new tuples of
estimates 50-61 us and their weight-sync links 33-44 us. By family (per estimate): the 256
colocated groups ("all": 32 training set-ups times 8 engines) 1.16-1.46 ms, the 672 trainer
groups of the split families 0.84-0.86 ms; inside them the jobs are 75-80 % (the trainer
groups' 1,120 forwards 219-225 us each and 576 updates 346-354 us, the colocated groups' 256
generations 356-437 us, their 1,024 forwards 69-86 us and 512 updates 92-118 us), the set-up
79-127 us, the transfers 47-193 us, the start-up peak 47-112 us; the memoized passes' and
memory's first evaluations are about three tenths of the estimates' profiled time, the rest
the flat spread of earlier rounds (about 1,900 Python calls). So a group estimate that cost
nothing would make the fresh sweep at most about 1.7x faster; 1.5x from the estimates alone
needs them about five times faster, and a flat rewrite of their glue (seven tenths) at best
halves it: about 1.2x. The rest of a fresh deployment (the groups' parts, links, notes and
keys of new tuples of estimates, 150-240 us beyond the kept path) has to go with it. The
collector, one call each (three runs each, alternating): on 715-870 us a deployment with 3
full passes, paused inside each call 771-789 us with 2, off 610-750 us; within the noise but
for off, which a library cannot leave. What this round changed, each equal bit for bit: a
weight sync is kept per query by what it reads (``weight_syncs.sync_reads``: the model and its
head, the two groups' names, GPUs and accelerators, the iteration's GPUs, and for a refit into
a generating engine its mechanism, the engine's TP, its dtype under NeMo RL's packed broadcast,
whether the rollout streams), not per pair of group estimates: 1,184 computed (58 us each,
about 21 us a deployment) -> 60; a groups' part whose groups share no phase name (all 1,760 of
the sweep) joins each group's own phases (``iteration_groups._phases``: the same sums from 0.0
in the same order) instead of summing every job and transfer again: 11.3 -> 6.1 us a part.
Against main fb41caa8 (merged; the same code elsewhere): Python calls of the one-call sweep
(cProfile, exact) 4,426,862 -> 4,272,551 (1,356 -> 1,309 a deployment); per group estimate
1,922 -> 1,921 (not touched). Rates (per chunk the fastest of 3 sweeps, ``thread_time``, four
alternating pairs at a load of 3-4.7): one call each 781-942 -> 697-844 us a deployment
(1,061-1,280 -> 1,185-1,435/s), the collector paused 657-907 -> 632-754 us (1,102-1,522 ->
1,327-1,583/s): a few per cent, within the noise, as the parts' share (about 3 %) says.
Every result the same: the sha256 of the ``to_json`` (or error) of 4,496 planner
candidates (PPO Llama-3.1-70B on 32 A100, GRPO 8B on 16 A100) one call each, through
``evaluate_many`` and plain, equal to main 326b1731's (one call each and batched again equal to
fb41caa8's after the merge); ``validate --rl --json`` 0 of 103 rows moved;
``tests/test_fast_equal.py`` with hypothesis seeds 1-5; ``tests/test_fast_parts.py`` holds the
kept syncs to each run's own (across frameworks, refits, an FP8 engine, streaming) and the
joined phases to the summed ones. 5,000/s one call each is not met.

Twentieth round: the cyclic collector out of the one-call sweep (December 2026, against main
5fe67dd1 in the same minutes, two alternating runs each, a load of about 2 on the two cores):
plain 82-102 -> 94-102/s (its path not changed: the noise); fast, every 8th 867-902 ->
902-958/s; sweep one call each 1,335-1,390 -> 1,500-1,566/s; again with every group kept
4,462-4,724 -> 4,823-4,914/s; evaluate_many 1,448-1,547 -> 1,405-1,467/s and planner rows
1,016-1,075 -> 1,014-1,039/s (both paused the collector already: unchanged); two more such
pairs minutes later, one call each 1,316-1,457 -> 1,479-1,528/s. The collector inside the
one-call sweep (``--collector``: ``gc.callbacks``, thread time, three sweeps a run, two
alternating runs each): 72-97 -> 24-32 us a deployment, its collections 397 young, 36 middle
and 3 full -> the one young collection that the objects allocated in the sweep wait for
(the first allocation outside an evaluation starts it; ``--collector`` counts it).
What it changed: ``evaluate_deployment`` pauses the collector inside one evaluation (resumed
after when it was on, also after a SpecError; left off when the caller had it off), as
``evaluate_many`` pauses it over its batch. A collection inside an evaluation had found its
temporaries alive and moved them into the older generations, whose growth sets when the
collector walks every object of the process; between the calls of a loop nothing is
allocated, so no collection runs there either until the caller allocates (an evaluation
leaves no cyclic garbage: ``gc.collect()`` after the sweep, and after 300 refused
evaluations, finds none). ``memo.by_identities`` keeps one tuple per entry (the value, then
the objects) where it kept the caller's tuple of objects beside the value: the tracked objects
the sweep keeps, after four full collections, 124,794 -> 111,464. Every result the same
(``validate --rl`` 0 of 103 rows moved; ``tests/test_fast_*.py``, ``tests/test_group_*.py``,
``tests/test_prefix_sharing.py``, ``tests/test_api_robustness.py``);
``tests/test_eval_collector.py`` holds the pause (no collection starts inside an evaluation at
a threshold of 1) and the collector's state after. Where a fresh deployment's time goes now
(the one-call sweep, collector out of the way, main's code instrumented): the 928 group
estimates about 280-300 us a deployment (by family, each: the colocated "all" 256 x 1.25 ms,
"actor+reward+reference+critic" 96 x 2.12 ms, "actor+reference" 88 x 1.08, "critic+reward"
120 x 0.84, "actor" 104 x 0.77, "critic" 72 x 0.74, "rollout" 48 x 0.62, "reward" 72 x 0.34,
"reference" 72 x 0.31; 2,270 Python calls each, the memoized passes' and memory's first
evaluations and a flat spread, no function above a twentieth of its own time); the groups'
parts and weight-sync links of the 1,760 new tuples of estimates 28 us (15 and 13, their
estimates' own values kept); the rest what a deployment of kept estimates costs, 210-250 us
(the group look-ups 6.7 us a group, ``query_of`` 1.9, ``trainer_layout`` 3.2, ``canonical``
3.2, the device groups 1.7, the KV sub-shard check 1.8 us: a flat spread of notes and checks
too). So 5,000/s (200 us) is below the kept path alone: it needs both the group estimate (a
group's jobs as a few tuple operations, or every candidate's group at once in numpy) and the
kept path (``combine``'s schedule values, notes and checks) rewritten, not more caching.
Measured and left: ``compiled.runtime.minimum`` (44 calls an estimate from the compiled memory
functions, an ``all`` over a generator of ``isinstance`` each: about 5 % of an estimate's
profiled time; in the generated package's runtime); ``reference_swap.reference_swap_bytes``
asked 6.8 times an estimate (a function of the group model alone; its own time about 1 % of
an estimate's profile).

Twenty-first round: the notes of a deployment written when first read (December 2026, against
main 2a9e94c3 in the same minutes, two alternating runs each, a load of about 4 on the two
cores): plain 93-104 -> 92-105/s (not changed); fast, every 8th 1,000-1,145 -> 1,035-1,114/s;
sweep one call each 1,454-1,651 -> 1,717-1,808/s; again with every group kept 4,369-5,204 ->
6,722-7,190/s (192-229 -> 139-149 us a deployment; three kept sweeps a process, two processes
each: 206-320 -> 137-180 us); evaluate_many 1,504-1,590 -> 1,642-1,840/s; planner rows
984-1,114 -> 909-1,185/s (noise); main moved to 1286e738 during these runs (validate --memory's
engine rows, catalog entries: not the evaluation path), so two more pairs against an export of
2a9e94c3 at a load of 4.5-4.9 (wall twice the CPU time): the kept sweep 2,336-5,132 ->
4,822-6,449/s, and three kept sweeps a process, two processes each, 209-368 -> 141-213 us a
deployment (fastest 209 -> 141). Where the kept path's time went (py-spy at 400 Hz over 25
kept sweeps, main's code): the notes about a quarter (``evaluate_in``'s offloads, lengths,
speculation, host memory, refits, idle ranks, hybrid sharding, workers, KV heads, engine
caches, MoE, prices: about 14 %; ``combine``'s exposed transfers, offloads apart, syncs and the
overlapped loop's bottleneck, in-turn schedule value and busy times: about 12 %), the group
look-ups 12 %, the schedule's values 14 %, ``memo.by_identities`` 10 % of its own (18 calls a
deployment). What it changed: ``combine`` and ``evaluate_in`` leave their notes to a function
that writes them at the first read of ``notes`` (``placement/later_notes.py``: the estimate
holds the function and what it reads beyond the estimate's fields, never the estimate, so no
reference cycle; ``PlacementEstimate.__getattr__`` answers ``notes`` once the class attribute
is gone, ``__getstate__`` writes them before a pickle or copy); the deployment's notes moved to
``placement/run_notes.py``, the iteration's to ``iteration._notes``. What can refuse a run stays
inside the evaluation: the checks, ``idle_view``, the trained models' and the policy workers'
notes (``pass_options.step_options`` refuses some trainer settings), the prices; the notes'
functions raise nothing (``merged_engine``, the length, host, speculation, overlap, gate and
engine-cache notes read values only). A caller that reads every result's notes pays what it
paid (kept sweep, notes read: 186-229 -> 196-256 us a deployment, the noise). Every result the
same: the ``to_json`` (or error) of 2,248 planner candidates (every 2nd of PPO Llama-3.1-70B
on 32 A100 and GRPO 8B on 16 A100) one sha256 with main's, one call each and every 7th inside
``memo.plain``; ``validate --rl`` 0 of 103 rows moved; ``tests/test_later_notes.py``. Measured
and left: the kept path is now a flat spread (group look-ups about a fifth: a Setup part by the
identities of 16 deployment fields, a group's reads and its estimate by 8 objects and 6
values; the schedule's three values, period and spans about a fifth; ``trainer_layout``,
``query_of``, ``canonical``, the device groups, the KV sub-shard check, the fleet and prices a
few per cent each); a period by the largest mean over the undominated cycles then the first
equal mean in tie-break order would scan about a fifth of the cycles (mean index 18.7 of 95.5
over the 778 periods the kept sweep computes), about 2 us a deployment, not done. The fresh
deployment's 928 group estimates (about 280-300 us a deployment) still keep 5,000/s one call
each out of reach.

With an engine's KV-cache dtype, 4-bit weights and the KV-scale forward in the evaluation
(December 2026; the tree before them, eb2f373d, and this one alternating in the same minutes,
two runs each, a quiet machine that runs slower than the rounds above): kept 5,809-6,419 ->
5,936-6,008/s, one call each 1,417-1,614 -> 1,426-1,503/s, evaluate_many 1,393-1,527 ->
1,450-1,451/s, plain 73-90 -> 67-80/s: within the noise; a cProfile of the kept sweep counts
964,154 -> 964,346 Python calls (the new fields are read where the group estimates are keyed and
built, not per deployment).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

from rlmcost import memo
from rlmcost.errors import SpecError
from rlmcost.evaluation.batch import evaluate_many
from rlmcost.evaluation.deployment import evaluate_deployment
from rlmcost.placement import query as resolved
from rlmcost.placement import schedule_template
from rlmcost.plan import rl_candidates
from rlmcost.plan.rl_candidates import RLSpace, candidate_run, candidates, evaluate_chunk
from rlmcost.reports.estimate import run_of


def _each(runs: Sequence[Any]) -> None:
    for r in runs:
        try:
            evaluate_deployment(r)
        except SpecError:
            pass


def _timed(label: str, n: int, fn: Callable[[], Any]) -> float:
    c0, w0 = time.process_time(), time.perf_counter()
    fn()
    cpu, wall = time.process_time() - c0, time.perf_counter() - w0
    rate = n / cpu
    print(f"{label:<44} {n:>5} deployments  {rate:>7,.0f} /s CPU  ({cpu:.2f} s CPU, "
          f"{wall:.2f} s wall)")
    return rate


def _kept() -> int:
    """Group estimates kept for the (one) query so far."""
    seen = next(iter(resolved._QUERIES.values())).groups_seen or {}
    return sum(isinstance(k, tuple) and not isinstance(k[0], str) for k in seen)


def _reset() -> None:
    memo.clear_all()
    resolved._QUERIES.clear()


def _collector(runs: Sequence[Any], warmed: Callable[[], None], sweeps: int = 3) -> None:
    """The cyclic collector inside the one-call sweep, from a collected warm start: its
    collections per generation and their thread time (``gc.callbacks``) per deployment, the
    young collection that the sweep's last objects wait for included."""
    import gc

    spent, count, started = [0.0, 0.0, 0.0], [0, 0, 0], [0.0]

    def watch(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            started[0] = time.thread_time()
        else:
            spent[info["generation"]] += time.thread_time() - started[0]
            count[info["generation"]] += 1

    for _ in range(sweeps):
        warmed()
        gc.collect()
        spent[:], count[:] = [0.0, 0.0, 0.0], [0, 0, 0]
        gc.callbacks.append(watch)
        try:
            c0 = time.thread_time()
            _each(runs)
            gc.collect(0)  # the young collection the next allocation would start: the sweep's
            cpu = time.thread_time() - c0  # objects allocated with the collector paused
        finally:
            gc.callbacks.remove(watch)
        per = [f"{s / len(runs) * 1e6:.1f}" for s in spent]
        print(f"collector in the one-call sweep: collections {count} (young, middle, full), "
              f"{sum(spent) / len(runs) * 1e6:.1f} us a deployment ({', '.join(per)}) of "
              f"{cpu / len(runs) * 1e6:.0f}")


def _steady(runs: Sequence[Any], warmed: Callable[[], None], chunks: int = 32,
            sweeps: int = 4) -> None:
    """The sweep one call each as the sum over ``chunks`` consecutive chunks of each chunk's
    fastest CPU time in ``sweeps`` sweeps from the same warm start: filters the preemption of
    a shared machine, which one sweep's total does not."""
    parts = [runs[i * len(runs) // chunks:(i + 1) * len(runs) // chunks] for i in range(chunks)]
    best = [float("inf")] * chunks
    for _ in range(sweeps):
        warmed()
        for i, part in enumerate(parts):
            c0 = time.thread_time()
            _each(part)
            best[i] = min(best[i], time.thread_time() - c0)
    print(f"{'fast, all in order, fastest of ' + str(sweeps) + ' per chunk':<44} {len(runs):>5} "
          f"deployments  {len(runs) / sum(best):>7,.0f} /s CPU")


def _profile_estimates(runs: Sequence[Any], warmed: Callable[[], None]) -> None:
    """cProfile inside the group estimates that the one-call sweep computes (each new
    group's set-up, layouts, jobs, memory, transfers and start-up peak; not the look-ups of
    kept ones), with the collector paused: the Python calls per estimate and the top
    functions by own time."""
    import cProfile
    import pstats

    from rlmcost.placement import group_jobs

    prof = cProfile.Profile()
    recall = group_jobs.recall
    count = [0]

    def profiled(setup: Any, group: Any, gpus: int, compute: Callable[[], Any]) -> Any:
        def inner() -> Any:
            count[0] += 1
            prof.enable()
            try:
                return compute()
            finally:
                prof.disable()

        return recall(setup, group, gpus, inner)

    warmed()
    group_jobs.recall = profiled
    try:
        with memo.collector_paused():  # the collector's passes would land on any function
            _each(runs)
    finally:
        group_jobs.recall = recall
    stats = pstats.Stats(prof)
    calls = stats.total_calls  # type: ignore[attr-defined]
    print(f"{count[0]} group estimates profiled: {calls / max(count[0], 1):,.0f} Python calls each")
    if "--callers" in sys.argv:  # --callers REGEX: who calls the functions it matches
        stats.print_callers(sys.argv[sys.argv.index("--callers") + 1])
    top = next((int(a[6:]) for a in sys.argv if a.startswith("--top=")), 25)
    stats.sort_stats("cumulative" if "--cum" in sys.argv else "tottime").print_stats(top)


def main() -> None:
    base = run_of("ppo", "llama-3.1-70b", hardware="a100-80gb")
    cands = list(candidates(base, RLSpace(), 32))
    runs = [candidate_run(base, c) for c in cands]
    warm = [candidate_run(base, c) for c in candidates(base, RLSpace(), 16)][:10]
    sparse = runs[::8]
    print(f"ppo llama-3.1-70b on 32 x a100-80gb: {len(runs)} distinct deployments "
          "(the planner's default space)")

    def warmed() -> None:
        _reset()
        _each(warm)

    warmed()
    with memo.plain():
        before = _timed("plain (nothing kept), every 8th", len(sparse), lambda: _each(sparse))
    warmed()
    _timed("fast, every 8th, one call each", len(sparse), lambda: _each(sparse))
    warmed()
    kept = _kept()
    after = _timed("fast, all in order, one call each", len(runs), lambda: _each(runs))
    computed = _kept() - kept
    # the same deployments again: their schedules' periods and values, kept by the weights,
    # would all be found; forgotten, so that the sweep prices what a new deployment of kept
    # group estimates costs
    schedule_template.KEPT.clear()
    _timed("fast, all in order again (every group kept)", len(runs), lambda: _each(runs))
    groups = sum(len(e.groups) for e in evaluate_many(runs) if not isinstance(e, SpecError))
    print(f"group estimates computed in the sweep: {computed} for {groups} groups")
    warmed()
    _timed("fast, all in order, evaluate_many", len(runs), lambda: evaluate_many(runs))
    warmed()
    rl_candidates._row.cache_clear()
    with memo.collector_paused():  # as the planner's search runs a chunk (rl_search)
        _timed("planner rows, evaluate_chunk", len(cands), lambda: evaluate_chunk((base, cands)))
    print(f"speed-up of the sweep over plain: {after / before:.1f}x")
    if "--steady" in sys.argv:  # each of 32 chunks at its fastest of 4 sweeps
        _steady(runs, warmed)
    if "--collector" in sys.argv:
        _collector(runs, warmed)
    if "--profile-estimates" in sys.argv:
        _profile_estimates(runs, warmed)
    if "--profile" in sys.argv:
        import cProfile
        import pstats

        warmed()
        prof = cProfile.Profile()
        prof.runcall(_each, runs)
        pstats.Stats(prof).sort_stats("tottime").print_stats(25)


if __name__ == "__main__":
    main()
