"""slime's and miles's TP-replicated Gated DeltaNet in training memory, the CPU Adam and the
data-parallel gradient reduce (rlmcost.parallel.memory ``linear_mixer_replicated``,
rlmcost.placement.group_own ``GroupTasks.mixer_replicated``, rlmcost.perf.linear_mixer
``rank_param_counts``).

Sources: radixark/miles miles_plugins/models/qwen3_5.py and hf_attention.py at bb6f7dbd (the
mixer from plain nn.Linear inside HuggingfaceAttention, whole on every TP rank; THUDM/slime
slime_plugins/models/ at 624b824a the same); the independent check is the miles page
docs/models/qwen/qwen3-8.md at bb6f7dbd, section 5.3: the Qwen3.8-27B training phase at TP 4
peaks at 88-90 GB a GPU (the miles row of rl_runs.json; its assumptions).
"""

from __future__ import annotations

from dataclasses import replace
from functools import cache

from rlmcost.parallel.breakdown import stage_params
from rlmcost.parallel.layout import Layout, ZeroStage
from rlmcost.parallel.shard import stages
from rlmcost.perf.data_parallel import cpu_adam_s, dp_after_flush
from rlmcost.perf.linear_mixer import mixer_params, rank_param_counts
from rlmcost.perf.rl_step import _context
from rlmcost.perf.step_pass import StagePass, StepOptions, stage_param_counts
from rlmcost.reports.rl_runs import load_runs, model_spec
from rlmcost.specs import ModelSpec, get_hardware

MILES = {r["id"]: r for r in load_runs()["runs"]}["miles-docs-qwen3.8-27b-grpo-colocate-8gpu"]
ARCH = ModelSpec.model_validate(model_spec("q", MILES["model_config"], "hf")).arch()
TP4 = Layout(tp=4, sp=True, dp=2, zero=ZeroStage.OS)
# the rank's parameters at TP 4 with the 48 mixers split, then whole (all but the gated norm's
# d_v = 128 weights, every rank's either way, join from the other 3 ranks)
SPLIT = stage_params(ARCH, TP4, stages(ARCH, TP4)[0]).dense
WHOLE = SPLIT + 48 * (mixer_params(ARCH) - 128) * 3 // 4


@cache
def _miles_jobs() -> dict[str, dict]:
    """The miles row's jobs as ``rlmcost validate --rl`` evaluates them, by what they run."""
    from rlmcost.cli.validate import run_from_argv
    from rlmcost.evaluation.query import evaluate
    from rlmcost.reports.rl_runs_frameworks import recipe
    from rlmcost.reports.rl_runs_rows import build_run

    ev = evaluate(build_run(recipe(MILES), run_from_argv)).evaluation
    assert ev is not None
    (group,) = ev.to_json()["groups"]
    return {j["what"]: j for j in group["jobs"]}


def test_the_trainers_weights_and_gradients_hold_every_mixer_whole() -> None:
    jobs = _miles_jobs()
    train = jobs["actor train"]["memory_breakdown_bytes"]
    # bf16 weights (--param-dtype bf16 on the row) and Megatron's fp32 gradient buffer
    # (--accumulate-allreduce-grads-in-fp32 on the row; rlmcost.placement.grad_buffer) of
    # ~10.9 B parameters a rank: the row's '21.8 GB of bf16 weights and 43.6 GB of fp32 main
    # gradients'
    assert 2 * train["weights"] == train["gradients"] == 4 * WHOLE
    assert round(train["gradients"] / 1e9, 1) == 43.6
    assert round(train["weights"] / 1e9, 1) == 21.8
    # the reference's and the actor's log-prob forwards run in the same Megatron model
    for what in ("reference forward", "actor forward"):
        assert jobs[what]["memory_breakdown_bytes"]["weights"] == 2 * WHOLE, what
    # SGLang's engine (TP 1 here) holds the whole model, 26,895,998,464 bf16 parameters
    assert jobs["actor generate"]["memory_breakdown_bytes"]["weights"] == 2 * 26_895_998_464


def test_the_training_peak_moves_toward_the_pages_88_to_90_gb() -> None:
    # miles docs/models/qwen/qwen3-8.md (bb6f7dbd) section 5.3: training peak 88-90 GB a GPU.
    # The split mixer priced ~42 GB; whole ~60 GB with bf16 gradients; with Megatron's fp32
    # gradient buffer (rlmcost.placement.grad_buffer) 21.8 GB more, ~84 GB, still below the page
    peak = _miles_jobs()["actor train"]["memory_bytes_per_device"]
    before = peak - (2 + 4) * (WHOLE - SPLIT)  # bf16 weights, fp32 gradients of split mixers
    bf16_grads = peak - 2 * WHOLE  # the whole mixers' gradients in bf16
    assert abs(89e9 - peak) < abs(89e9 - bf16_grads) < abs(89e9 - before)
    assert 80e9 < peak < 88e9


def test_the_host_adam_steps_the_rank_whole_mixer_once() -> None:
    # --optimizer-cpu-offload: Megatron-core's torch fused CPU AdamW over the rank's ZeRO-1
    # shard (distributed optimizer over DP 2) of the whole-mixer parameters, counted once, on
    # the one thread Ray gives slime's and miles's training actors (num_cpus 0.4)
    from rlmcost.frameworks.presets import behaviour

    threads = behaviour("slime").host_adam_threads
    assert threads == 1
    parts = _miles_jobs()["actor train"]["predicted_breakdown_s"]
    # the page's H200 host: a DGX H200's Xeon (HardwareSpec.host_cpu)
    assert parts["cpu_adam_s"] == cpu_adam_s(-(-WHOLE // 2), 8, impl="torch-fused",
                                             threads=threads,
                                             host_cpu="intel-sapphire-rapids")  # fmt: skip


def _flush_s(options: StepOptions) -> float:
    c, _ = _context(ARCH, TP4, 1, 8192, get_hardware("h200"), None, options)
    return dp_after_flush(c, stages(ARCH, TP4)[0], StagePass())


def test_the_data_parallel_reduce_moves_the_whole_mixers_gradients() -> None:
    rep = StepOptions(linear_mixer_replicated=True)
    c, _ = _context(ARCH, TP4, 1, 8192, get_hardware("h200"), None, rep)
    stage = stages(ARCH, TP4)[0]
    assert rank_param_counts(c, stage) == (WHOLE, 0)
    assert rank_param_counts(replace(c, options=StepOptions()), stage) == (SPLIT, 0)
    assert stage_param_counts(ARCH, TP4, stage) == (SPLIT, 0)
    # nothing to hide behind (an empty pass), no overlap: the reduce-scatter and the
    # all-gather of ZeRO-1 over DP 2 grow with the rank's reduced parameters
    off = {"overlap_grad_reduce": False, "overlap_param_gather": False}
    whole, split = _flush_s(replace(rep, **off)), _flush_s(StepOptions(**off))
    assert 1.5 < whole / split < 1.7 and 1.6 < WHOLE / SPLIT < 1.65
