"""Which CPU Adam a framework's optimizer offload runs, and its time over DeepSpeedCPUAdam.

Megatron-core's ``HybridDeviceOptimizer`` (``--optimizer-cpu-offload``; verl's and NeMo RL's
``optimizer_cpu_offload``) builds ``torch.optim.AdamW`` with ``fused=True`` among its defaults
(NVIDIA/Megatron-LM megatron/core/optimizer/__init__.py since 60007c93, at slime's pin
1dcf0daf, core_v0.12.2 and core_v0.13.0); verl's FSDP2 ``offload_policy``
(verl/workers/config/optimizer.py @b178a3cd) and NeMo RL's DTensor ``cpu_offload``
(examples/configs/grpo_math_1B.yaml @7ea279abf) step torch's AdamW with neither flag, the
for-loop on CPU tensors; DeepSpeed's ZeRO-Offload (OpenRLHF, TRL) runs DeepSpeedCPUAdam."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from rlmcost.deployment.spec import TrainLayout
from rlmcost.errors import SpecError
from rlmcost.frameworks.nemo_rl import import_nemo_rl
from rlmcost.frameworks.presets import behaviour
from rlmcost.frameworks.result import ImportedQuery
from rlmcost.frameworks.slime import import_slime
from rlmcost.frameworks.verl import import_verl
from rlmcost.parallel.layout import ZeroStage
from rlmcost.perf.data_parallel import (
    CPU_ADAM_THREAD_S_PER_PARAM,
    TORCH_FUSED_CPU_ADAM_OVER_DEEPSPEED,
    cpu_adam_s,
)
from rlmcost.perf.rl_constants import CPU_ADAM_HOST_S_PER_PARAM
from rlmcost.placement.pass_options import host_adam_impl

FSDP = TrainLayout(zero=ZeroStage.OS_G_P)
MEGATRON = TrainLayout(tp=4, zero=ZeroStage.OS)


@pytest.mark.parametrize(
    ("framework", "train", "impl"),
    [
        ("slime", MEGATRON, "torch-fused"),  # Megatron-core's HybridDeviceOptimizer
        ("slime", TrainLayout(), "torch-fused"),  # slime has no other trainer
        ("verl", MEGATRON, "torch-fused"),  # override_optimizer_config.optimizer_cpu_offload
        ("verl", FSDP, "torch"),  # FSDP2 offload_policy: build_optimizer, no foreach/fused
        ("nemo-rl", MEGATRON, "torch-fused"),  # megatron_cfg.optimizer.optimizer_cpu_offload
        ("nemo-rl", FSDP, "torch"),  # dtensor_cfg.cpu_offload: policy.optimizer's AdamW
        ("openrlhf", FSDP, "deepspeed"),  # --adam_offload: DeepSpeedCPUAdam
        ("trl", FSDP, "deepspeed"),  # accelerate's DeepSpeed offload_optimizer
    ],
)
def test_the_cpu_adam_follows_the_trainer(framework: str, train: TrainLayout, impl: str) -> None:
    assert host_adam_impl(behaviour(framework), train) == impl


def test_no_framework_prices_deepspeed_cpu_adam() -> None:
    assert host_adam_impl(None, MEGATRON) == "deepspeed"


def test_fused_cpu_adamw_takes_deepspeeds_time() -> None:
    # benchmarks/bench_cpu_adam.py: torch 2.13 fused 0.98-1.07 x DeepSpeed 0.19.8 in 4 of 6 runs
    ds = cpu_adam_s(3_000_000_000, 8)
    assert cpu_adam_s(3_000_000_000, 8, impl="torch-fused") == ds * 1.0
    assert cpu_adam_s(3_000_000_000, 8, impl="torch") == ds * 6.0
    f = TORCH_FUSED_CPU_ADAM_OVER_DEEPSPEED
    # the measured spread (0.6-0.7 x at many tensors, 1.5 x in a noisy run) brackets 1
    assert f.low < 1.0 < f.high < 6.0 * f.low


@pytest.mark.parametrize(
    ("framework", "threads"),
    [
        # openrlhf/trainer/ray/launcher.py @dbdd43b0: num_cpus=num_gpus_per_actor (<= 1)
        ("openrlhf", 1),
        # slime/ray/placement_group.py @624b824a: num_gpus_per_actor=0.4, num_cpus the same
        ("slime", 1),
        # verl/single_controller/ray/base.py @b178a3cd: num_gpus, no num_cpus
        ("verl", 1),
        # NeMo RL ray.sub @7ea279abf: export OMP_NUM_THREADS=${OMP_NUM_THREADS:-16}
        ("nemo-rl", 16),
        # TRL runs no Ray actors: not limited here
        ("trl", 0),
    ],
)
def test_each_ray_frameworks_rank_runs_the_threads_ray_gives_it(framework: str,
                                                                 threads: int) -> None:
    # ray/_private/utils.py set_omp_num_threads_if_unset: max(floor(num_cpus), 1), 1 when
    # the actor has no num_cpus, unless OMP_NUM_THREADS is already set
    beh = behaviour(framework)
    assert beh is not None and beh.host_adam_threads == threads


def test_one_thread_a_rank_is_slower_than_the_hosts_bandwidth_share() -> None:
    # 1 B parameters a rank, 8 ranks a host: the bandwidth share is 8 x 0.14 ns a parameter
    # (CPU_ADAM_HOST_S_PER_PARAM), one thread's DeepSpeedCPUAdam is about 2 ns
    # (benchmarks/bench_cpu_adam.py --threads 1): the thread bounds the step
    n = 1_000_000_000
    host = n * 8 * CPU_ADAM_HOST_S_PER_PARAM.value
    one = n * CPU_ADAM_THREAD_S_PER_PARAM.value
    assert one > host
    assert cpu_adam_s(n, 8, threads=1) == pytest.approx(one)
    assert cpu_adam_s(n, 8, threads=1, impl="torch-fused") == pytest.approx(one * 1.0)
    assert cpu_adam_s(n, 8, threads=1, impl="torch") == pytest.approx(one * 6.0)
    # enough threads, and the host's bandwidth bounds it again, as with no limit
    assert cpu_adam_s(n, 8, threads=16) == cpu_adam_s(n, 8) == pytest.approx(host)
    # more threads never make it slower
    times = [cpu_adam_s(n, 8, threads=t) for t in (1, 2, 4, 8, 16, 64)]
    assert times == sorted(times, reverse=True)


def test_a_dgx_h100_hosts_thread_is_the_measured_xeon_core() -> None:
    # DGX H100/H200 datasheets: 2x Xeon Platinum 8480C; benchmarks/bench_cpu_adam.py on an H100
    # device's Xeon: 1.02 ns a parameter on one thread. 8 ranks of one thread each: the host's
    # bandwidth share (8 x 0.14 ns) is then the slower bound, where a generic host's thread
    # (1.9 ns) binds
    from rlmcost.perf.data_parallel import CPU_ADAM_THREAD_S_PER_PARAM_BY_CPU
    from rlmcost.specs import get_hardware

    for name in ("h100-sxm", "h200"):
        assert get_hardware(name).host_cpu == "intel-sapphire-rapids"
    for name in ("a100-80gb", "a800-80gb", "h20", "gb200"):
        assert get_hardware(name).host_cpu is None
    xeon = CPU_ADAM_THREAD_S_PER_PARAM_BY_CPU["intel-sapphire-rapids"]
    assert xeon.value == 1.02e-9 < CPU_ADAM_THREAD_S_PER_PARAM.value
    n = 1_000_000_000
    host = n * 8 * CPU_ADAM_HOST_S_PER_PARAM.value
    assert cpu_adam_s(n, 8, threads=1, host_cpu="intel-sapphire-rapids") == pytest.approx(host)
    assert cpu_adam_s(n, 4, threads=1, host_cpu="intel-sapphire-rapids") == pytest.approx(
        n * 1.02e-9)  # fmt: skip
    assert cpu_adam_s(n, 8, threads=1, host_cpu=None) == pytest.approx(n * 1.9e-9)


def test_a_negative_thread_count_is_a_spec_error() -> None:
    with pytest.raises(SpecError, match="host Adam threads -1"):
        cpu_adam_s(1, 1, threads=-1)


def test_an_unknown_cpu_adam_is_a_spec_error() -> None:
    with pytest.raises(SpecError, match="host Adam 'apex'"):
        cpu_adam_s(1, 1, impl="apex")


def test_megatrons_group_level_fused_flag_reaches_torchs_fused_cpu_kernel() -> None:
    # hybrid_optimizer.py copies HybridDeviceOptimizer's param group (fused=True and
    # bias_correction among its keys) into AdamW([group]); torch's step reads group["fused"]
    torch = pytest.importorskip("torch")
    if not hasattr(torch, "_fused_adamw_"):
        pytest.skip("torch without the fused AdamW kernel")
    p = torch.nn.Parameter(torch.zeros(8))
    p.grad = torch.ones(8)
    group = {"params": [p], "lr": 1e-3, "weight_decay": 0.1, "betas": (0.9, 0.98),
             "eps": 1e-8, "bias_correction": True, "fused": True}  # fmt: skip
    calls: list[str] = []
    real = torch._fused_adamw_

    def spy(params, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003, ANN202
        calls.append(params[0].device.type)
        return real(params, *args, **kwargs)

    torch._fused_adamw_ = spy
    try:
        torch.optim.AdamW([group]).step()
    except RuntimeError as e:  # torch < 2.4: no CPU kernel
        pytest.skip(f"torch {torch.__version__} has no fused CPU AdamW: {e}")
    finally:
        torch._fused_adamw_ = real
    assert calls == ["cpu"]
    assert float(p.detach()[0]) < 0  # the step moved the parameter against its gradient


DATA = Path(__file__).parent / "data" / "frameworks"
NEMO_MEG = ["policy.dtensor_cfg.enabled=false", "policy.megatron_cfg.enabled=true"]
NEMO_OPT = "policy.megatron_cfg.optimizer"
VERL_MEG = ["actor_rollout_ref.actor.strategy=megatron",
            "actor_rollout_ref.actor.megatron.tensor_model_parallel_size=2",
            "actor_rollout_ref.actor.megatron.param_offload=true",
            "actor_rollout_ref.actor.megatron.optimizer_offload=true"]  # fmt: skip
VERL_OPT = "+actor_rollout_ref.actor.optim.override_optimizer_config"


def _offload(q: ImportedQuery) -> str:
    return str(dict(q.flags)["--offload"])


def test_nemo_rl_megatron_cpu_optimizer_keeps_the_states_on_the_host() -> None:
    # nemo_rl/models/megatron/setup.py @7ea279abf passes megatron_cfg.optimizer to Megatron-
    # core's OptimizerConfig; colocated, offload_after_refit still moves the weights and frees
    # the gradient buffers (grpo.py refit_policy_generation)
    assert _offload(import_nemo_rl(DATA / "nemo_rl_grpo_math.yaml", NEMO_MEG)) == \
        "optimizer-idle,params-idle,grads-idle"  # fmt: skip
    whole = [*NEMO_MEG, f"{NEMO_OPT}.optimizer_cpu_offload=true",
             f"{NEMO_OPT}.optimizer_offload_fraction=1.0"]  # fmt: skip
    q = import_nemo_rl(DATA / "nemo_rl_grpo_math.yaml", whole)
    assert _offload(q) == "optimizer,params-idle,grads-idle"
    assert any("torch.optim.AdamW(fused=True)" in n for n in q.notes)
    apart = [*whole, "policy.generation.colocated.enabled=false",
             "policy.generation.colocated.resources.gpus_per_node=4"]  # fmt: skip
    assert _offload(import_nemo_rl(DATA / "nemo_rl_grpo_math.yaml", apart)) == "optimizer"


def test_a_split_cpu_optimizer_is_refused_and_fraction_zero_stays_on_the_gpu() -> None:
    half = [*NEMO_MEG, f"{NEMO_OPT}.optimizer_cpu_offload=true",
            f"{NEMO_OPT}.optimizer_offload_fraction=0.5"]  # fmt: skip
    with pytest.raises(SpecError, match="optimizer_offload_fraction 0.5"):
        import_nemo_rl(DATA / "nemo_rl_grpo_math.yaml", half)
    # verl passes override_optimizer_config into OptimizerConfig, whose fraction defaults to
    # 0.0 (megatron/core/optimizer/optimizer_config.py, core_v0.12.2 and core_v0.13.0): no
    # parameter goes to the CPU; megatron.optimizer_offload's between-phases move stays
    q = import_verl(DATA / "verl_grpo.yaml", [*VERL_MEG, f"{VERL_OPT}.optimizer_cpu_offload=true"])
    assert _offload(q) == "params-idle,optimizer-idle"
    assert any("keeps every state on the GPU" in n for n in q.notes)


def _slime(name: str) -> list[str]:
    lines = [ln for ln in (DATA / f"slime_{name}.args").read_text().splitlines()
             if ln and not ln.startswith("#")]  # fmt: skip
    return [a for ln in lines for a in shlex.split(ln)]


def test_megatron_lm_refuses_cpu_offload_without_precision_aware_optimizer() -> None:
    # megatron/training/arguments.py @1dcf0daf (slime's pin): optimizer_cpu_offload asserts
    # use_precision_aware_optimizer ("the hybrid device optimizer reuses the code path")
    args = _slime("qwen3-30B-A3B")
    assert "optimizer" in _offload(import_slime(args)).split(",")
    with pytest.raises(SpecError, match="--use-precision-aware-optimizer"):
        import_slime([a for a in args if a != "--use-precision-aware-optimizer"])


def test_verl_without_precision_aware_optimizer_notes_the_gpu_main_shard() -> None:
    # distrib_optimizer.py (core_v0.13.0): without it the fp32 main shards are built on the
    # GPU and the hybrid optimizer copies them; verl's DeepSeek-V3 script sets it True
    whole = [*VERL_MEG, f"{VERL_OPT}.optimizer_cpu_offload=true",
             f"{VERL_OPT}.optimizer_offload_fraction=1.0"]  # fmt: skip
    q = import_verl(DATA / "verl_grpo.yaml", whole)
    assert any("fp32 main-parameter shard on the GPU" in n for n in q.notes)
    q = import_verl(DATA / "verl_grpo.yaml",
                    [*whole, f"{VERL_OPT}.use_precision_aware_optimizer=true"])  # fmt: skip
    assert not any("fp32 main-parameter shard on the GPU" in n for n in q.notes)
    assert _offload(q) == "params-idle,optimizer"



def test_openrlhfs_adam_offload_runs_on_one_thread_a_rank() -> None:
    # openrlhf/trainer/ray/launcher.py @dbdd43b0: num_cpus=num_gpus_per_actor, so Ray's
    # OMP_NUM_THREADS=1 and DeepSpeedCPUAdam's omp parallel for runs one thread: the step is
    # CPU_ADAM_THREAD_S_PER_PARAM a parameter of the rank's shard, not the 8 ranks' share of
    # the host's bandwidth (8 x CPU_ADAM_HOST_S_PER_PARAM, 1.7 x faster)
    from rlmcost.algorithms.kinds import Kind
    from rlmcost.cli.validate import run_from_argv
    from rlmcost.evaluation.deployment import evaluate_deployment

    argv = ["--framework", "openrlhf", "--model", "qwen2.5-7b", "--no-kl", "--batch", "64",
            "--group", "8", "--prompt-len", "200", "--response-len", "1024", "--hardware",
            "a800-80gb", "--gpus", "8", "--zero", "2", "--offload", "optimizer"]  # fmt: skip
    # the A800 hosts of OpenRLHF's rows: no known CPU class, the generic thread rate
    est = evaluate_deployment(run_from_argv("rlvr", argv))
    (job,) = [j for g in est.groups for j in g.jobs if j.task.invocation.kind is Kind.TRAIN]
    shard = int(job.own.gradients) // 2  # ZeRO-2: the rank's 1/8 of the bf16 gradients
    steps = job.predicted_parts_s["optimizer_steps"]
    cpu = job.predicted_parts_s["cpu_adam_s"]
    assert cpu == pytest.approx(steps * shard * CPU_ADAM_THREAD_S_PER_PARAM.value, rel=1e-6)
    assert cpu > steps * shard * 8 * CPU_ADAM_HOST_S_PER_PARAM.value


def test_openrlhfs_rows_state_the_one_thread_cpu_adam() -> None:
    # rl_runs.json: the OpenRLHF rows run --adam_offload (benchmark/README.md @dbdd43b0)
    import json

    from rlmcost.reports.rl_runs_frameworks import openrlhf

    data = Path(__file__).parents[1] / "rlmcost" / "perf" / "data" / "rl_runs.json"
    runs = [r for r in json.loads(data.read_text())["runs"] if r["framework"] == "openrlhf"]
    assert runs and all(r["framework_settings"].get("--adam_offload") for r in runs)
    for r in runs:
        choices = openrlhf(r)[2]
        assert any("DeepSpeedCPUAdam on one thread a rank" in c for c in choices)


def test_the_output_states_the_host_cpu_class_where_its_rate_prices_cpu_adam() -> None:
    # a discrete choice (HardwareSpec.host_cpu: h100-sxm's DGX H100 Xeon) is stated as a note
    # where it prices the step: a Ray trainer's CPU Adam on its bounded threads (OpenRLHF: 1)
    from rlmcost.cli.validate import run_from_argv
    from rlmcost.evaluation.deployment import evaluate_deployment

    argv = ["--framework", "openrlhf", "--model", "qwen2.5-7b", "--no-kl", "--batch", "64",
            "--group", "8", "--gpus", "8", "--zero", "2"]  # fmt: skip

    def adam_notes(hardware: str, offload: str = "optimizer") -> list[str]:
        more = ["--hardware", hardware, "--offload", offload]
        notes = evaluate_deployment(run_from_argv("rlvr", [*argv, *more])).notes
        return [n for n in notes if n.startswith("CPU Adam on")]

    (note,) = adam_notes("h100-sxm")
    assert "1 thread(s) a rank at 1.02 ns" in note and "Xeon Platinum 8480C" in note
    assert adam_notes("a800-80gb") == []  # no known class: the generic rate
    assert adam_notes("h100-sxm", "params-idle") == []  # no CPU Adam: parameters only
