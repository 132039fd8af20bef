"""A search's evaluations in this process and on Dask (rlmcost.plan.distributed, plan.tasks):
the task-size arithmetic, the key -> worker slots, the items waiting to be sent, and, on a
local Dask cluster (an optional extra: those tests skip without it), results identical and in
order to the in-process run, progress, and Ctrl-C keeping the rows found so far."""

from __future__ import annotations

import operator

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rlmcost.plan import tasks
from rlmcost.plan.distributed import Compute, Runner, _each
from rlmcost.plan.tasks import Slots, TaskSizer, Waiting

# -- task sizes ----------------------------------------------------------------------------


def test_the_first_task_is_small_then_sized_to_the_target_from_the_measured_cost() -> None:
    s = TaskSizer()
    assert s.per_item_s() is None and s.size(workers=2) == tasks.FIRST_TASK_ITEMS
    s.record(items=40, seconds=0.08)  # 2 ms per item: 0.3 s / 2 ms = 150 items
    assert s.per_item_s() == pytest.approx(0.002)
    assert s.size(workers=2) == 150
    # every worker gets TASKS_PER_WORKER tasks of what is left: ceil(600 / (2 * 4)) = 75
    assert s.size(workers=2, left=600) == 75
    assert s.size(workers=3, left=5) == 1  # never below one item
    s.record(items=0, seconds=5.0)  # an empty task measures nothing
    assert s.per_item_s() == pytest.approx(0.002)


def test_recent_tasks_weigh_more_in_the_cost_per_item() -> None:
    s = TaskSizer()
    s.record(items=10, seconds=1.0)  # cold: 100 ms per item
    s.record(items=10, seconds=0.01)  # warm: 1 ms per item
    d = tasks.DECAY
    cost = (d * 1.0 + 0.01) / (d * 10 + 10)  # the decayed sums, by hand
    assert s.per_item_s() == pytest.approx(cost)
    assert s.size(workers=1) == round(tasks.TARGET_TASK_S / cost)
    assert 0.01 / 10 < cost < (1.0 + 0.01) / 20  # below the plain mean: warm counts more


def test_free_items_are_capped() -> None:
    s = TaskSizer()
    s.record(items=100, seconds=0.0)
    assert s.size(workers=1) == tasks.MOST_TASK_ITEMS
    s.record(items=1, seconds=1e-9)
    assert s.size(workers=1) == tasks.MOST_TASK_ITEMS


# -- slots: the same key, the same worker ------------------------------------------------


def test_a_key_keeps_its_worker_and_new_keys_go_to_the_least_loaded() -> None:
    s = Slots(3)
    assert [s.take(k) for k in ("x", "x", "x", "y", "z", "w", "y")] == [0, 0, 0, 1, 2, 1, 1]
    assert s.load == [3, 3, 1]
    with pytest.raises(ValueError, match="at least one worker"):
        Slots(0)


@given(st.lists(st.integers(0, 6), max_size=60), st.integers(1, 4))
def test_slots_are_consistent_and_greedy(keys: list[int], workers: int) -> None:
    s = Slots(workers)
    seen: dict[int, int] = {}
    for k in keys:
        before = list(s.load)
        w = s.take(k)
        if k in seen:
            assert w == seen[k]  # a key never moves
        else:
            assert before[w] == min(before)  # a new key goes to a least-loaded worker
            seen[k] = w
    assert sum(s.load) == len(keys)


def test_a_synchronous_and_an_overlapped_candidate_of_one_layout_share_a_slot() -> None:
    """rl_search.slot_key: a group's estimate is not keyed on the placement's staleness
    (rlmcost.placement.group_key), so roles and async-roles on one GPU count and trainer TP
    go to one worker; another GPU count or trainer TP is another slot."""
    from dataclasses import replace

    from rlmcost.plan.rl_candidates import RLSpace, candidates
    from rlmcost.plan.rl_search import slot_key
    from rlmcost.run.spec import Run

    base = Run.from_data({"algorithm": {"name": "ppo"}, "models": {"actor": "llama-3.2-1b"},
                          "deployment": {"framework": "openrlhf"}})  # fmt: skip
    got = candidates(base, RLSpace(placements=("roles", "async-roles"), tp=(1, 2)), 8)
    sync = next(c for c in got if c.family == "roles")
    stale = next(c for c in got if c.family == "async-roles" and c.tp == sync.tp)
    assert slot_key((0, sync)) == slot_key((1, stale)) == (8, "roles", sync.tp)
    assert slot_key((0, replace(sync, tp=3 - sync.tp))) != slot_key((0, sync))
    assert slot_key((0, replace(sync, gpus=16))) != slot_key((0, sync))


# -- items waiting to be sent --------------------------------------------------------------


def test_waiting_items_go_to_their_keys_worker_in_order() -> None:
    items = [(i, k) for i, k in enumerate("aabbabbaab")]
    w = Waiting(iter(items), 2, key=operator.itemgetter(1))
    sent: dict[int, list[tuple[int, str]]] = {0: [], 1: []}
    turn = 0
    while True:
        batch = w.batch(turn, 3)
        if not batch and w.ended and not w.held():
            break
        sent[turn] += batch
        turn = 1 - turn
    assert sorted(sent[0] + sent[1]) == items  # each item once
    for worker in sent.values():  # drawn order kept per worker
        assert worker == sorted(worker)
    assert {k for _, k in sent[0]} == {"a"} and {k for _, k in sent[1]} == {"b"}


def test_waiting_draws_little_ahead() -> None:
    drawn: list[int] = []

    def source():  # noqa: ANN202
        for i in range(100):
            drawn.append(i)
            yield i

    w = Waiting(source(), 4)  # no key: every item to the asking worker
    assert w.batch(2, 5) == [0, 1, 2, 3, 4] and len(drawn) == 5
    w = Waiting(source(), 2, key=lambda i: 0)  # one key: worker 1 has none of its own
    assert w.batch(1, 5) == [0, 1, 2, 3, 4]  # taken from worker 0's items, oldest first
    assert len(drawn) == 5 + 2 * 5  # at most size x workers waiting: 10 drawn


# -- this process --------------------------------------------------------------------------


def test_in_process_map_is_in_order_with_progress() -> None:
    seen: list[tuple[int, int]] = []
    run = Runner()
    assert run.map(operator.neg, [3, 1, 2], lambda d, n: seen.append((d, n))) == [-3, -1, -2]
    assert seen == [(1, 3), (2, 3), (3, 3)]
    assert run.stats["local"].items == 3


def test_in_process_stream_draws_one_item_per_result() -> None:
    drawn: list[int] = []

    def source():  # noqa: ANN202
        for i in range(5):
            drawn.append(i)
            yield i, i  # (index, item), as _each takes them

    out = Runner().stream(_each, source(), shared=operator.neg)
    assert next(out) == ([(0, 0)], [0]) and drawn == [0]
    assert next(out) == ([(1, 1)], [-1]) and drawn == [0, 1]


def test_ctrl_c_stops_the_later_parts_of_a_plan() -> None:
    """A plan whose families run under two base Runs (role groups under OpenRLHF's preset)
    stops at the first part interrupted, and says which families were not searched."""
    from rlmcost.parallel.layout import Checkpointing
    from rlmcost.plan.rl import plan_rl
    from rlmcost.plan.rl_candidates import RLSpace
    from rlmcost.run.spec import Run

    base = Run.from_data({"algorithm": {"name": "grpo"}, "models": {"actor": "llama-3.1-8b"},
                          "workload": {"prompts": 16, "samples_per_prompt": 4,
                                       "response_len": 2048},
                          "deployment": {"framework": None}})  # fmt: skip
    space = RLSpace(placements=("baseline", "roles"), tp=(1, 2), rollout_tp=(1,),
                    micro_batch=(1,), ckpt=(Checkpointing.FULL,), fractions=(0.5,))  # fmt: skip
    orl = base.replace(deployment={"framework": "openrlhf"})

    def stop(done: int, total: int) -> None:
        raise KeyboardInterrupt

    r = plan_rl(base, 4, space=space, bases={"roles": orl}, compute=Compute(progress=stop))
    assert any("interrupted (Ctrl-C)" in n for n in r.notes)
    assert "not searched after the interruption: roles" in r.notes
    assert r.counts.evaluated == 1  # the one item before the first progress call


# -- on a local Dask cluster ---------------------------------------------------------------


@pytest.fixture(scope="module")
def local_dask():  # noqa: ANN201
    """One local cluster of 2 single-threaded workers for the module (start-up once), as
    `--workers 2` starts it."""
    pytest.importorskip("dask.distributed", reason="dask[distributed] is an optional extra")
    from rlmcost.plan.distributed import DaskRunner

    run = DaskRunner(workers=2)
    yield run
    run.close()


@pytest.fixture
def cluster(local_dask) -> str:  # noqa: ANN001
    """The module cluster's scheduler address (`--cluster ADDRESS`)."""
    return local_dask._cluster.scheduler_address


def test_local_workers_ignore_a_terminals_ctrl_c(local_dask) -> None:  # noqa: ANN001
    """Ctrl-C reaches the whole foreground process group; the workers (plan.dask_worker)
    ignore it, so the search, not a dead worker, handles it."""
    import signal

    got = local_dask.client.run(signal.getsignal, signal.SIGINT)
    assert len(got) == 2 and set(got.values()) == {signal.SIG_IGN}


def test_dask_map_is_in_order_with_progress(cluster: str) -> None:
    seen: list[tuple[int, int]] = []
    items = list(range(-200, 200, 3))
    with Compute(cluster=cluster).runner() as run:
        out = run.map(operator.neg, items, lambda d, n: seen.append((d, n)))
        stats = run.stats
    assert out == [-x for x in items]
    dones = [d for d, _ in seen]
    assert dones == sorted(dones) and seen[-1] == (len(items), len(items))
    assert sum(w.items for w in stats.values()) == len(items)
    assert len(seen) == sum(w.tasks for w in stats.values()) < len(items)  # batched


def test_dask_stream_sends_a_key_to_one_worker(cluster: str) -> None:
    items = [(i, i % 5) for i in range(400)]  # (index, item); the item is its key too
    with Compute(cluster=cluster).runner() as run:
        done = list(run.stream(_each, items, shared=operator.neg, key=operator.itemgetter(1),
                               total=len(items)))  # fmt: skip
        stats = run.stats
    got = [(item, r) for batch, results in done for item, r in zip(batch, results, strict=True)]
    assert sorted(item for item, _ in got) == items  # each once
    assert all(r == -item[1] for item, r in got)  # each result with its item
    assert len(stats) == 2 and all(w.items > 0 for w in stats.values())


def test_dask_gives_the_in_process_plan(cluster: str) -> None:
    from rlmcost.parallel.layout import Checkpointing
    from rlmcost.plan.rl import plan_rl
    from rlmcost.plan.rl_candidates import RLSpace
    from rlmcost.plan.train import plan_train
    from rlmcost.run.spec import Run

    base = Run.from_data({"algorithm": {"name": "grpo", "rule_reward": True},
                          "models": {"actor": "llama-3.2-1b"},
                          "workload": {"prompts": 16, "samples_per_prompt": 4,
                                       "response_len": 2048}})  # fmt: skip
    space = RLSpace(placements=("baseline", "split"), tp=(1, 2), rollout_tp=(1, 2),
                    micro_batch=(1,), ckpt=(Checkpointing.FULL,), offload=(False,),
                    fractions=(0.5,))  # fmt: skip
    where = Compute(cluster=cluster)
    every = plan_rl(base, "2..4", space=space, top=50)  # nothing skipped: every row
    dist = plan_rl(base, "2..4", space=space, top=50, compute=where)
    assert every.counts.bounded == 0 and dist.counts == every.counts
    assert dist.rows == every.rows and dist.front == every.front  # same rows, same order
    assert dist.per_topology == every.per_topology and dist.failures == every.failures
    assert dist.runner.startswith("Dask cluster")
    t_local = plan_train("llama-3.1-8b", "4..8", seq=4096, batch=64, top=5)
    t_dist = plan_train("llama-3.1-8b", "4..8", seq=4096, batch=64, top=5, compute=where)
    assert t_dist.rows == t_local.rows and t_dist.failures == t_local.failures


def test_the_workers_skip_by_the_engines_floor_and_keep_the_in_process_rows(
        local_dask) -> None:  # noqa: ANN001
    """The engines' floor checked on the workers (rlmcost.plan.floor_tasks): a candidate
    whose floor the state sent with its task, or a result of the same task, rules out comes
    back skipped, not evaluated (the items the workers took outnumber the rows evaluated);
    the top rows, the Pareto front and the failures are those of one process, and every
    candidate is counted once (evaluated, skipped or pruned). The query is
    tests/test_plan_engine_floor.py's slime stream with engines apart, where one process
    skips candidates by the floor."""
    from rlmcost.plan.rl import plan_rl
    from rlmcost.plan.rl_candidates import RLSpace
    from rlmcost.run.spec import Run

    base = Run.from_data({"algorithm": {"name": "grpo", "rule_reward": True},
                          "models": {"actor": "llama-3.2-1b"},
                          "workload": {"prompts": 8, "samples_per_prompt": 4,
                                       "response_len": 2048,
                                       "length_dist": "lognormal:700,0.67,2048"},
                          "deployment": {"framework": "slime"}})  # fmt: skip
    space = RLSpace(placements=("split", "async-split"), tp=(1, 2), rollout_tp=(1, 2),
                    micro_batch=(1,))  # fmt: skip
    here = plan_rl(base, "4..64", space=space, top=5)
    local_dask.stats.clear()
    dist = plan_rl(base, "4..64", space=space, top=5, compute=Compute(use=local_dask))
    sent = sum(w.items for w in local_dask.stats.values())
    assert here.counts.bounded > 0  # one process skips by the floor
    assert sent > dist.counts.evaluated  # the workers skipped some of what they were sent
    c = dist.counts
    assert c.evaluated + c.bounded + c.pruned == c.valid == here.counts.valid
    assert dist.rows == here.rows and dist.front == here.front
    assert dist.failures == here.failures
    def topologies(rows: list[dict]) -> set[tuple]:
        return {(r["gpus"], r["family"], r["groups"]) for r in rows}

    assert topologies(dist.per_topology) == topologies(here.per_topology)  # one row each


def test_ctrl_c_on_dask_keeps_the_rows_found_so_far(cluster: str) -> None:
    """A KeyboardInterrupt in the client (here from the progress callback, as Ctrl-C lands
    there) ends the search with the rows found so far; the tasks in flight are cancelled
    and the cluster serves the next plan whole, with the top rows of the in-process plan
    (branch and bound: the top k are exact however the tasks were sized and sent)."""
    from rlmcost.plan.rl import plan_rl
    from rlmcost.plan.rl_candidates import RLSpace
    from rlmcost.run.spec import Run

    # verl's deployment at micro-batches 1 and 2: its top rows leave some candidates' bounds
    # above the top 5 (under NeMo RL's, the FSDP2 copies and eager layers of perf.policy_worker
    # lift the top rows above every bound of this space, and branch and bound has nothing to
    # skip; at micro-batch 1 alone neither since verl's Megatron candidates reduce their
    # gradients in fp32, rlmcost.placement.grad_buffer)
    base = Run.from_data({"algorithm": {"name": "ppo"}, "models": {"actor": "llama-3.1-8b"},
                          "workload": {"prompts": 64, "samples_per_prompt": 8,
                                       "response_len": 2048},
                          "deployment": {"framework": "verl"}})  # fmt: skip
    space = RLSpace(placements=("baseline", "split"), tp=(1, 2, 4), rollout_tp=(1, 2, 4),
                    micro_batch=(1, 2), fractions=(0.5,))  # fmt: skip
    calls: list[tuple[int, int]] = []

    def progress(done: int, total: int) -> None:
        calls.append((done, total))
        if len(calls) == 2:
            raise KeyboardInterrupt

    cut = plan_rl(base, "4..16", space=space, top=5, compute=Compute(cluster=cluster,
                                                                      progress=progress))
    assert len(calls) == 2 and any("interrupted (Ctrl-C)" in n for n in cut.notes)
    whole = plan_rl(base, "4..16", space=space, top=5, compute=Compute(cluster=cluster))
    assert not any("interrupted" in n for n in whole.notes)
    here = plan_rl(base, "4..16", space=space, top=5)  # branch and bound skips some
    assert here.counts.bounded > 0 and whole.rows == here.rows  # the top 5 are exact
    c = whole.counts
    assert c.evaluated + c.bounded + c.pruned == c.valid
    assert 0 < cut.counts.evaluated < whole.counts.evaluated
    assert cut.counts.fitting >= len(cut.rows) > 0
    best = whole.rows[0]["time_s"]
    assert all(r["time_s"] >= best for r in cut.rows)  # found so far: none beats the best


def test_a_lent_runner_serves_a_search_and_stays_open() -> None:
    """Compute(use=run): the search runs on ``run`` and closing it, as a search does when
    done, leaves ``run`` open for the next (a benchmark reusing one warm cluster)."""
    run = Runner()
    closed: list[bool] = []
    run.close = lambda: closed.append(True)  # type: ignore[method-assign]
    with Compute(use=run).runner() as got:
        assert got is run
        got.map(operator.neg, [1])
    assert not closed and run.stats["local"].items == 1


def test_cli_plan_on_a_dask_cluster_prints_json_alone_on_stdout(cluster: str) -> None:
    """`rlmcost plan ... --cluster ADDRESS --json`: stdout parses as the plan (progress and
    notes go to stderr), with the rows of the same plan in this process."""
    import json

    from typer.testing import CliRunner

    from rlmcost.cli import app

    args = ["plan", "grpo", "-m", "llama-3.2-1b", "--gpus", "2..4", "--placements",
            "baseline,split", "--tp", "1,2", "--rollout-tp", "1,2", "--json"]  # fmt: skip
    runner = CliRunner()
    here = runner.invoke(app, args)
    there = runner.invoke(app, [*args, "--cluster", cluster])
    assert here.exit_code == 0 and there.exit_code == 0, there.output
    a, b = json.loads(here.stdout), json.loads(there.stdout)
    assert b["runner"] == f"Dask cluster {cluster}"
    assert [r["run"] for r in b["rows"]] == [r["run"] for r in a["rows"]]


def test_the_next_search_is_screened_while_the_workers_finish(local_dask,  # noqa: ANN001
                                                              monkeypatch) -> None:  # noqa: ANN001
    """A plan of two searches (one per launcher's base Run): on Dask the second's screen is
    made while the workers run the first's last tasks (``Runner.stream``'s ``meanwhile``,
    rlmcost.plan.rl_screened), and the plan is one process's, row for row."""
    from rlmcost.parallel.layout import Checkpointing
    from rlmcost.plan import rl
    from rlmcost.plan.rl import plan_rl
    from rlmcost.plan.rl_candidates import RLSpace
    from rlmcost.run.spec import Run

    base = Run.from_data({"algorithm": {"name": "ppo"}, "models": {"actor": "llama-3.2-1b"},
                          "workload": {"prompts": 16, "samples_per_prompt": 4,
                                       "response_len": 1024}})  # fmt: skip
    space = RLSpace(placements=("baseline", "roles"), tp=(1, 2), rollout_tp=(1,),
                    micro_batch=(1,), ckpt=(Checkpointing.FULL,), fractions=(0.5,))  # fmt: skip
    bases = {"roles": base.replace(deployment={"framework": "openrlhf"})}
    here = plan_rl(base, "2..4", space=space, bases=bases, top=3)
    made: list[bool] = []
    later = rl.screen_later

    def counted(*args):  # noqa: ANN002, ANN202
        then = later(*args)
        return None if then is None else lambda: (made.append(True), then())

    monkeypatch.setattr(rl, "screen_later", counted)
    dist = plan_rl(base, "2..4", space=space, bases=bases, top=3,
                   compute=Compute(use=local_dask))  # fmt: skip
    assert made == [True]  # the second search's screen, made in the first's wait
    assert dist.rows == here.rows and dist.front == here.front
    assert dist.failures == here.failures and dist.counts.valid == here.counts.valid
