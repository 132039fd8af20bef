"""Megatron-core's gradient buffer as each framework allocates it (rlmcost.placement.grad_buffer):
fp32 under ``grad_reduce_in_fp32`` (slime and miles through Megatron-LM's arguments, verl's
Megatron workers), the parameters' dtype otherwise (NeMo RL's configs), in memory (exact and
compiled), in the data-parallel reduce and as the importers read it.

Sources, each read at the commit named: NVIDIA/Megatron-LM 1dcf0daf (slime's docker pin)
megatron/core/distributed/distributed_data_parallel.py (``grad_dtype = torch.float if
grad_reduce_in_fp32 else param.dtype``), megatron/training/arguments.py lines 710-723 (bf16
turns ``accumulate_allreduce_grads_in_fp32`` on unless ``--grad-reduce-in-bf16`` or
``--main-grads-dtype bf16``), megatron/training/training.py ``get_model``; THUDM/slime
624b824a slime/backends/megatron_utils/arguments.py and model.py; volcengine/verl b178a3cd
verl/utils/megatron_utils.py, config/engine/megatron.yaml; ISEEKYAN/mbridge 10cb17f5
mbridge/core/util.py; NVIDIA-NeMo/RL 7ea279abf nemo_rl/models/megatron/setup.py and
examples/configs/grpo_math_1B.yaml. Parameter counts: Llama-3.1-8B 8,030,261,248 (Meta's
config.json, as tests/test_precision_memory.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rlmcost.choices import Dtype
from rlmcost.cli import app
from rlmcost.compiled import memory as twin
from rlmcost.deployment.kinds import GradReduce
from rlmcost.deployment.spec import Deployment
from rlmcost.errors import SpecError
from rlmcost.frameworks.nemo_rl import import_nemo_rl
from rlmcost.frameworks.slime import import_slime
from rlmcost.frameworks.verl import import_verl
from rlmcost.parallel.breakdown import Mode
from rlmcost.parallel.layout import Layout, ZeroStage
from rlmcost.parallel.memory import memory_per_rank
from rlmcost.placement.grad_buffer import grad_reduce
from rlmcost.placement.pass_options import step_options, worker_notes
from rlmcost.specs import Workload, get_model

runner = CliRunner()
DATA = Path(__file__).parent / "data" / "frameworks"
LLAMA8B = 8_030_261_248
FP32_GRADS = Workload(grad_dtype=Dtype.FP32)


def _both(layout: Layout, workload: Workload, mode: Mode = Mode.TRAIN):
    a = memory_per_rank(get_model("llama-3.1-8b").arch(), layout, mode, 8, 1024, workload)
    b = twin.memory_per_rank(get_model("llama-3.1-8b"), layout, mode, 8, 1024, workload)
    assert a == b  # the symbolic module and its numeric twin
    return a


@pytest.mark.parametrize("zero, shard", [(ZeroStage.NONE, LLAMA8B), (ZeroStage.OS, LLAMA8B),
                                         (ZeroStage.OS_G, LLAMA8B // 8),
                                         (ZeroStage.OS_G_P, LLAMA8B // 8)])  # fmt: skip
def test_an_fp32_buffer_adds_two_bytes_a_parameter_as_the_stage_shards_gradients(zero, shard):
    # Megatron-core's distributed optimizer (ZeRO-1) shards the fp32 main parameters and the
    # Adam states, not the gradient buffer: every DP rank holds the buffer of its parameters
    # whole; only a ZeRO-2/3-like sharding (Megatron FSDP) keeps the gradient shard
    assert LLAMA8B % 8 == 0
    layout = Layout(dp=8, zero=zero)
    bf16, fp32 = _both(layout, Workload()), _both(layout, FP32_GRADS)
    assert fp32.gradients - bf16.gradients == 2 * shard
    assert (fp32.gradients, bf16.gradients) == (4 * shard, 2 * shard)
    assert (fp32.weights, fp32.optimizer, fp32.activations) == \
        (bf16.weights, bf16.optimizer, bf16.activations)  # fmt: skip


def test_forwards_hold_no_gradients_and_fp32_parameters_keep_theirs():
    assert _both(Layout(dp=8, zero=ZeroStage.OS), FP32_GRADS, Mode.FORWARD).gradients == 0
    # FSDP mixed precision stores fp32 parameters and gradients already: nothing changes
    fsdp = Workload(param_dtype=Dtype.FP32)
    layout = Layout(dp=8, zero=ZeroStage.OS_G_P)
    assert _both(layout, fsdp) == _both(layout, fsdp.model_copy(update={"grad_dtype": Dtype.FP32}))


def test_each_framework_keeps_its_own_buffer():
    # slime: Megatron-LM's validate_args turns accumulate_allreduce_grads_in_fp32 on for bf16
    assert grad_reduce(Deployment(framework="slime")) is GradReduce.FP32
    # verl's Megatron workers (TP, PP or EP > 1): get_model / mbridge's grad_reduce_in_fp32 True
    assert grad_reduce(Deployment(framework="verl", train={"tp": 2})) is GradReduce.FP32
    # verl's FSDP workers, NeMo RL's DTensor worker, OpenRLHF's and TRL's DeepSpeed/HF models:
    # no Megatron buffer
    assert grad_reduce(Deployment(framework="verl")) is None
    assert grad_reduce(Deployment(framework="nemo-rl", train={"zero": "3"})) is None
    for fw in ("openrlhf", "trl"):
        assert grad_reduce(Deployment(framework=fw, train={"tp": 2})) is None
    # NeMo RL's Megatron worker: grad_reduce_in_fp32 false in its configs
    assert grad_reduce(Deployment(framework="nemo-rl", train={"zero": "1"})) is GradReduce.PARAM
    # the bare layout and the paper's iteration: the parameters' dtype, unless given
    assert grad_reduce(Deployment(framework=None)) is None
    given = Deployment(framework=None, train={"grad_reduce_dtype": "fp32"})
    assert grad_reduce(given) is GradReduce.FP32
    assert grad_reduce(Deployment(framework="slime", ideal=True)) is None


def test_the_data_parallel_reduce_moves_the_buffers_bytes():
    # the reduce-scatter of the distributed optimizer moves the buffer: 4 B a parameter
    assert step_options(Deployment(framework="slime")).grad_reduce_bytes == 4
    assert step_options(Deployment(framework="verl", train={"tp": 2})).grad_reduce_bytes == 4
    nemo = step_options(Deployment(framework="nemo-rl", train={"zero": "1"}))
    assert nemo is not None and nemo.grad_reduce_bytes == 0  # the weight dtype's
    assert step_options(Deployment(framework="verl")).grad_reduce_bytes == 0


def test_the_output_states_the_choice():
    slime = worker_notes(Deployment(framework="slime"), kl=False)
    assert any("fp32 buffer" in n and "grad_reduce_in_fp32" in n for n in slime)
    nemo = worker_notes(Deployment(framework="nemo-rl", train={"zero": "1"}), kl=False)
    assert any("parameters' dtype" in n for n in nemo)
    assert not any("gradients:" in n for n in worker_notes(Deployment(framework="verl"), False))


def _training(*flags: str) -> dict:
    out = runner.invoke(app, ["grpo", "-m", "llama-3.1-8b", "-H", "h100", "--gpus", "8",
                              "-B", "8", "-K", "4", "-S", "256", "-T", "256", "--json",
                              *flags])  # fmt: skip
    assert out.exit_code == 0, out.output
    return json.loads(out.output)


def test_a_slime_query_holds_fp32_gradients_beside_bf16_weights():
    # TP 2, DP 4, ZeRO-1: each rank's parameters in bf16 weights and fp32 gradients, whole
    fp32 = _training("--framework", "slime", "--tp", "2")
    bf16 = _training("--framework", "slime", "--tp", "2", "--grad-reduce-dtype", "param")
    m32 = fp32["stages"]["training"]["memory_breakdown_bytes"]
    m16 = bf16["stages"]["training"]["memory_breakdown_bytes"]
    assert m32["gradients"] == 2 * m32["weights"] and m16["gradients"] == m16["weights"]
    assert m32["gradients"] - m16["gradients"] == m16["weights"]  # 2 B x the rank's params
    assert fp32["inputs"]["dtypes"]["trained_gradients"] == "fp32"
    assert bf16["inputs"]["dtypes"]["trained_gradients"] == "bf16"
    assert fp32["run"]["deployment"]["train"]["grad_reduce_dtype"] is None  # the preset's
    t32, t16 = fp32["stages"]["training"]["time_s"], bf16["stages"]["training"]["time_s"]
    assert t32 > t16  # the DP reduce-scatter moves twice the bytes


@pytest.mark.parametrize("flags, message", [
    # each names where the framework's Megatron-core trainer is (Behaviour.hf_trainer): verl's
    # with TP, PP or EP, NeMo RL's under ZeRO 0/1, none for OpenRLHF's DeepSpeed trainer
    (["--framework", "verl", "--grad-reduce-dtype", "fp32"], "(--tp, --pp or --ep above 1)"),
    (["--framework", "nemo-rl", "--tp", "2", "--zero", "3", "--grad-reduce-dtype", "fp32"],
     "Hugging Face model at this layout; drop it or choose its Megatron trainer (--zero 1"),
    (["--framework", "openrlhf", "--tp", "2", "--grad-reduce-dtype", "fp32"],
     "drop it (it has no Megatron-core trainer)"),
    (["--ideal", "--grad-reduce-dtype", "fp32"], "grad_reduce_dtype"),
    (["--grad-reduce-dtype", "fp64"], "fp64"),
])  # fmt: skip
def test_bad_input_is_one_line(flags, message):
    out = runner.invoke(app, ["grpo", "-m", "llama-3.1-8b", "--gpus", "8", *flags])
    assert out.exit_code != 0 and message in out.output
    assert "Traceback" not in out.output


def test_a_forward_layout_cannot_set_it():
    # the forwards hold no gradients: a forward layout's own value would be ignored
    with pytest.raises(ValueError, match="grad_reduce_dtype"):
        Deployment(framework="slime", forward={"grad_reduce_dtype": "param"})


def _slime(*extra: str) -> dict[str, object]:
    base = ["--hf-checkpoint", "Qwen/Qwen3-4B", "--tensor-model-parallel-size", "2",
            "--rollout-batch-size", "8", "--n-samples-per-prompt", "4",
            "--rollout-max-response-len", "512", "--global-batch-size", "32", "--colocate"]
    q = import_slime([*base, *extra])
    return dict(q.flags)


def test_the_slime_importer_follows_megatron_lms_validate_args():
    # bf16 (slime sets bf16 = not fp16): fp32 unless --grad-reduce-in-bf16 / --main-grads-dtype
    assert _slime()["--grad-reduce-dtype"] == "fp32"
    assert _slime("--accumulate-allreduce-grads-in-fp32")["--grad-reduce-dtype"] == "fp32"
    assert _slime("--grad-reduce-in-bf16")["--grad-reduce-dtype"] == "param"
    assert _slime("--main-grads-dtype", "bf16")["--grad-reduce-dtype"] == "param"
    # fp16: only the explicit flag
    assert _slime("--fp16")["--grad-reduce-dtype"] == "param"
    assert _slime("--fp16", "--accumulate-allreduce-grads-in-fp32")["--grad-reduce-dtype"] == \
        "fp32"  # fmt: skip
    with pytest.raises(SpecError, match="main-grads-dtype bf16"):
        _slime("--accumulate-allreduce-grads-in-fp32", "--main-grads-dtype", "bf16")


def test_the_nemo_rl_importer_reads_its_ddp_key():
    megatron = ["policy.dtensor_cfg.enabled=false", "policy.megatron_cfg.enabled=true"]
    key = "policy.megatron_cfg.distributed_data_parallel_config.grad_reduce_in_fp32"
    nemo = DATA / "nemo_rl_grpo_math.yaml"
    assert dict(import_nemo_rl(nemo, megatron).flags)["--grad-reduce-dtype"] == "param"
    on = import_nemo_rl(nemo, [*megatron, f"+{key}=true"])
    assert dict(on.flags)["--grad-reduce-dtype"] == "fp32"
    assert "--grad-reduce-dtype" not in dict(import_nemo_rl(nemo).flags)  # DTensor: FSDP2


def test_the_verl_importer_reads_the_override_and_the_bridge():
    verl = DATA / "verl_grpo.yaml"
    m = "actor_rollout_ref.actor.megatron"
    megatron = ["actor_rollout_ref.actor.strategy=megatron", f"{m}.tensor_model_parallel_size=2"]
    assert dict(import_verl(verl, megatron).flags)["--grad-reduce-dtype"] == "fp32"
    off = [*megatron, f"+{m}.override_ddp_config.grad_reduce_in_fp32=false"]
    assert dict(import_verl(verl, off).flags)["--grad-reduce-dtype"] == "param"
    # Megatron-Bridge's provider: Megatron-core's DistributedDataParallelConfig default
    bridge = [*megatron, f"+{m}.vanilla_mbridge=false"]
    assert dict(import_verl(verl, bridge).flags)["--grad-reduce-dtype"] == "param"
    assert "--grad-reduce-dtype" not in dict(import_verl(verl).flags)  # FSDP workers


def test_a_verl_megatron_config_without_tp_pp_or_ep_still_runs():
    # verl's preset prices a layout without TP, PP or EP as its FSDP worker (Behaviour.
    # hf_trainer "fsdp"), where --grad-reduce-dtype is refused: the importer leaves it out and
    # says so, and the imported query evaluates
    q = import_verl(DATA / "verl_grpo.yaml", ["actor_rollout_ref.actor.strategy=megatron"])
    assert "--grad-reduce-dtype" not in dict(q.flags)
    assert any("gradient buffer (fp32 here) is not priced" in n for n in q.notes)
    out = runner.invoke(app, [q.algorithm, *q.argv(), "--json"])
    assert out.exit_code == 0, out.output


def _train(*flags: str) -> dict:
    out = runner.invoke(app, ["train", "-m", "llama-3.1-8b", "-H", "h100", "--gpus", "8",
                              "--zero", "1", "--no-overlap-grad-reduce", "--json", *flags])
    assert out.exit_code == 0, out.output
    return json.loads(out.output)


def test_rlmcost_train_takes_megatron_lms_buffer_by_hand():
    # Megatron-LM pre-training in bf16 reduces in fp32 (arguments.py validate_args): ZeRO-1
    # over 8 ranks holds 4 B of gradients per parameter, the reduce-scatter moves 4 B, the
    # all-gather of the updated bf16 parameters 2 B
    fp32, param = _train("--grad-reduce-dtype", "fp32"), _train()
    assert fp32["memory_per_rank_bytes"]["gradients"] == 4 * LLAMA8B
    assert param["memory_per_rank_bytes"]["gradients"] == 2 * LLAMA8B
    assert (fp32["dtypes"]["gradients"], param["dtypes"]["gradients"]) == ("fp32", "bf16")

    def payload(report: dict, collective: str) -> int:
        return next(c["payload_bytes"] for c in report["communication"]
                    if c["strategy"] == "dp" and c["collective"] == collective)

    assert payload(fp32, "reduce-scatter") == 2 * payload(param, "reduce-scatter") == 4 * LLAMA8B
    assert payload(fp32, "all-gather") == payload(param, "all-gather") == 2 * LLAMA8B
    assert fp32["step_time_s"] > param["step_time_s"]  # the exposed reduce-scatter, doubled
    bad = runner.invoke(app, ["train", "-m", "llama-3.1-8b", "--grad-reduce-dtype", "fp64"])
    assert bad.exit_code != 0 and "param, fp32" in bad.output


def test_an_offloaded_optimizer_takes_the_buffers_gradients_to_the_host():
    # the reduced gradient shard goes to the host in the buffer's dtype (Megatron-core's CPU
    # optimizer copies the fp32 main grads), the updated bf16 weights come back: 2 more bytes
    # a parameter of the ZeRO-1 shard (Llama-3.1-8B / 8) at the given 20 GB/s
    flags = ("--offload-optimizer", "--host-link-gb-s", "20")
    fp32 = _train("--grad-reduce-dtype", "fp32", *flags)["step_time"]["offload_s"]
    param = _train(*flags)["step_time"]["offload_s"]
    assert fp32 - param == pytest.approx(2 * (LLAMA8B // 8) / 20e9, rel=1e-9)
