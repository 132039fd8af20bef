"""OpenRLHF's and slime's presets below their large-actor examples, and slime's for a 30B-A3B
mixture of experts: the values of each framework's own example for that size (issue 18:
"Defaults are what frameworks run"; a query expressed with a preset fits as the framework runs
it).

Independent references, quoted below from the frameworks' files:
- OpenRLHF examples/scripts/train_ppo_llama_ray_hybrid_engine.sh (OpenRLHF/OpenRLHF @c250c21a,
  the Hybrid Engine quick start of its README.md: --colocate_all_models, --vllm_enable_sleep,
  --vllm_gpu_memory_utilization 0.5);
- slime scripts/run-qwen3-4B.sh and scripts/run-qwen3-30B-A3B.sh (THUDM/slime @624b824a, with
  --colocate).
The example lines are run through rlmcost's importers (which read each key as the framework
does, written apart from the presets), and the preset's tier must give the same fields.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rlmcost.cli import app
from rlmcost.cli.validate import run_from_argv
from rlmcost.frameworks.openrlhf import import_openrlhf
from rlmcost.frameworks.preset_data.moe_tiers import (
    MOE_235B_EXAMPLE_FROM,
    SLIME_30B_A3B_EXAMPLE_FROM,
)
from rlmcost.frameworks.preset_data.openrlhf import OPENRLHF_70B_EXAMPLE_FROM
from rlmcost.frameworks.preset_data.slime import SLIME_32B_EXAMPLE_FROM
from rlmcost.frameworks.presets import get_preset
from rlmcost.frameworks.slime import import_slime
from rlmcost.run.defaults import actor_params

runner = CliRunner()
DATA = Path(__file__).parent / "data" / "frameworks"

OPENRLHF_8B_HYBRID_ARGS = """
    --ref_num_nodes 1 --ref_num_gpus_per_node 8 --reward_num_nodes 1 --reward_num_gpus_per_node 8
    --critic_num_nodes 1 --critic_num_gpus_per_node 8 --actor_num_nodes 1
    --actor_num_gpus_per_node 8 --vllm_num_engines 4 --vllm_tensor_parallel_size 2
    --colocate_all_models --vllm_gpu_memory_utilization 0.5 --pretrain llama-3-8b
    --reward_pretrain llama-3-8b --micro_train_batch_size 4 --train_batch_size 128
    --micro_rollout_batch_size 8 --rollout_batch_size 1024 --n_samples_per_prompt 1
    --max_epochs 1 --prompt_max_len 1024 --max_samples 100000 --generate_max_len 1024
    --zero_stage 3 --bf16 --init_kl_coef 0.01 --normalize_reward --gradient_checkpointing
    --packing_samples --vllm_sync_backend nccl --enforce_eager --vllm_enable_sleep
    --deepspeed_enable_sleep
"""  # train_ppo_llama_ray_hybrid_engine.sh (model: OpenRLHF/Llama-3-8b-sft-mixture)

SLIME_COMMON = """
    --actor-num-nodes 1 --actor-num-gpus-per-node 8 --colocate --rm-type deepscaler
    --rollout-batch-size 32 --n-samples-per-prompt 8 --rollout-max-response-len 8192
    --global-batch-size 256 --advantage-estimator grpo --use-kl-loss --kl-loss-coef 0.00
    --kl-loss-type low_var_kl --optimizer adam --sequence-parallel --pipeline-model-parallel-size 1
    --context-parallel-size 1 --expert-tensor-parallel-size 1 --recompute-granularity full
    --recompute-method uniform --recompute-num-layers 1 --use-dynamic-batch-size
    --sglang-mem-fraction-static 0.7
"""  # the lines run-qwen3-4B.sh and run-qwen3-30B-A3B.sh share

SLIME_4B_ARGS = SLIME_COMMON + """
    --hf-checkpoint /root/Qwen3-4B --tensor-model-parallel-size 2 --expert-model-parallel-size 1
    --max-tokens-per-gpu 9216 --rollout-num-gpus-per-engine 2
"""  # run-qwen3-4B.sh

SLIME_30B_A3B_ARGS = SLIME_COMMON + """
    --hf-checkpoint /root/Qwen3-30B-A3B --tensor-model-parallel-size 4
    --expert-model-parallel-size 8 --max-tokens-per-gpu 20480 --optimizer-cpu-offload
    --overlap-cpu-optimizer-d2h-h2d --use-precision-aware-optimizer
    --rollout-num-gpus-per-engine 8
"""  # run-qwen3-30B-A3B.sh


def _field(run, key: str) -> object:
    """A Run's value of a tier field (a dotted deployment field, or the KL option)."""
    if key == "kl":
        return run.algorithm.kl
    node: object = run.deployment.to_json()
    for part in key.split("."):
        node = node.get(part) if isinstance(node, dict) else None
    return node


def _run_json(*args: str) -> dict:
    res = runner.invoke(app, [*args, "--json"])
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


@pytest.mark.parametrize(("framework", "model", "moe", "argv", "imported"), [
    ("openrlhf", "llama-3-8b", False, ["ppo"],
     lambda: import_openrlhf(OPENRLHF_8B_HYBRID_ARGS.split())),
    ("slime", "qwen3-4b", False, ["grpo", "-B", "32", "-K", "8", "-T", "8192"],
     lambda: import_slime(SLIME_4B_ARGS.split(), None, None)),
    ("slime", "qwen3-30b-a3b", True, ["grpo", "-B", "32", "-K", "8", "-T", "8192"],
     lambda: import_slime(SLIME_30B_A3B_ARGS.split(), None, None)),
])  # fmt: skip
def test_the_tier_gives_what_the_imported_example_gives(framework, model, moe, argv,
                                                         imported) -> None:  # fmt: skip
    q = imported()
    assert "--no-sized-defaults" in q.argv()  # the importer reads the framework's own defaults
    got = run_from_argv(q.algorithm, q.argv())
    preset = run_from_argv(argv[0], [*argv[1:], "-m", model, "--gpus", "8",
                                     "--framework", framework])  # fmt: skip
    tier = get_preset(framework).tier(actor_params(model), moe)
    assert tier is not None
    for d in tier.defaults:
        assert _field(preset, d.field) == _field(got, d.field), d.field
    assert tier.followed_by(got.deployment)  # the imported example is the tier's, whole
    # both examples co-locate the engines with the trainers and put them to sleep in turn
    assert got.deployment.engine.sleep and not got.deployment.groups


def test_slimes_glm4_9b_example_trains_as_its_4b_one() -> None:
    """Why scripts/run-glm4-9B.sh (@624b824a, tests/data/frameworks/slime_glm4-9B.args) is not
    a tier of its own (rlmcost/frameworks/preset_data/slime.py): its TP, SP and recomputation
    are the 4B tier's, and its --max-tokens-per-gpu times its CP is the 4B tier's token bin
    (slime/utils/dp_schedule.py: max_per_bin = max_tokens_per_gpu * cp_size)."""
    lines = [ln for ln in (DATA / "slime_glm4-9B.args").read_text().splitlines()
             if ln and not ln.startswith("#")]  # fmt: skip
    f = dict(import_slime(" ".join(lines).split()[2:], None, None).flags)
    tier = {d.field: d.value for d in get_preset("slime").tier(actor_params("glm-4-9b-0414"))
            .defaults}  # type: ignore[union-attr]  # fmt: skip
    assert (f["--tp"], "--sp" in f, f["--ckpt"]) == (tier["train.tp"], tier["train.sp"],
                                                    tier["train.ckpt"]) == (2, True, "full")
    assert f["--max-tokens-per-gpu"] * f["--cp"] == tier["train.max_tokens_per_gpu"] == 9216


def test_the_thresholds_sit_between_two_examples_on_a_log_scale() -> None:
    # slime's MoE examples: scripts/run-moonlight-16B-A3B.sh and run-qwen3-30B-A3B.sh
    mean = (actor_params("moonlight-16b-a3b") * actor_params("qwen3-30b-a3b")) ** 0.5
    assert abs(SLIME_30B_A3B_EXAMPLE_FROM - mean) / mean < 0.01
    assert actor_params("moonlight-16b-a3b") < SLIME_30B_A3B_EXAMPLE_FROM
    assert SLIME_30B_A3B_EXAMPLE_FROM <= actor_params("qwen3-30b-a3b") < MOE_235B_EXAMPLE_FROM
    # the small tiers reach up to the large ones: an actor of any size follows an example
    for fw, large in (("openrlhf", OPENRLHF_70B_EXAMPLE_FROM), ("slime", SLIME_32B_EXAMPLE_FROM)):
        small = get_preset(fw).tier(actor_params("llama-3-8b"))
        assert small is not None and small.min_params == 0 < large
        assert get_preset(fw).tier(large).min_params == large
    # a dense actor does not take the MoE example, nor a MoE one the dense 32 B example
    slime = get_preset("slime")
    assert slime.tier(actor_params("qwen3-30b-a3b"), moe=True).moe_only
    assert not slime.tier(actor_params("qwen3-32b")).moe_only


@pytest.mark.parametrize("argv", [
    # issue 18's new-user review: each was "DOES NOT FIT" with the engines awake beside the
    # trainers (217 GiB; 118 GiB; 269 GiB at TP 1 without EP)
    ["ppo", "-m", "8b", "-H", "a100-80gb", "--gpus", "8", "--framework", "openrlhf"],
    ["grpo", "-m", "8b", "-H", "a100-80gb", "--gpus", "8", "--framework", "openrlhf"],
    ["grpo", "-m", "8b", "--gpus", "8", "--framework", "slime"],
    ["grpo", "-m", "qwen3-30b-a3b", "--gpus", "16", "--framework", "slime"],
    # slime's 30B-A3B example on its own 8 GPUs and lengths
    ["grpo", "-m", "qwen3-30b-a3b", "--gpus", "8", "--framework", "slime", "-B", "32", "-K", "8",
     "-T", "8192"],
])  # fmt: skip
def test_the_queries_fit_with_the_preset_and_not_with_the_argument_defaults(argv) -> None:
    assert _run_json(*argv)["fits"] is True
    assert _run_json(*argv, "--no-sized-defaults")["fits"] is False


def _deployment_note(*argv: str) -> str:
    return next(n for n in _run_json(*argv)["notes"] if n.startswith("deployment:"))


@pytest.mark.parametrize("framework", ["openrlhf", "trl"])
def test_a_moe_actor_is_told_the_defaults_are_not_the_frameworks_tested_setup(framework) -> None:
    """Neither OpenRLHF's examples (examples/scripts @c250c21a, @3c3be623: MoE only for SFT)
    nor TRL's docs (@f2cd5771) train a mixture of experts with RL."""
    moe = _deployment_note("grpo", "-m", "qwen3-30b-a3b", "--gpus", "8", "--framework", framework)
    assert f"not a setup {framework} is known to run" in moe
    dense = _deployment_note("grpo", "-m", "qwen3-8b", "--gpus", "8", "--framework", framework)
    assert "known to run" not in dense
    # slime has a MoE example for it: no such clause
    slime = _deployment_note("grpo", "-m", "qwen3-30b-a3b", "--gpus", "8", "--framework", "slime")
    assert "known to run" not in slime and "run-qwen3-30B-A3B.sh" in slime


def test_a_moe_actor_that_does_not_fit_is_offered_what_fits() -> None:
    res = runner.invoke(app, ["grpo", "-m", "qwen3-30b-a3b", "--gpus", "8", "--framework",
                              "openrlhf"])  # fmt: skip
    assert res.exit_code == 0, res.output
    text = " ".join(res.output.split())
    assert "DOES NOT FIT" in text and "fits with --offload" in text


def test_an_actor_the_examples_layout_cannot_hold_is_told_the_mends() -> None:
    """Qwen3-Next-80B-A3B on 16 GPUs under its own example's TP 2 x PP 4 x CP 4 = 32
    (scripts/run-qwen3-next-80B-A3B.sh; before that tier, the 30B-A3B example's TP 4 over its 2
    KV heads), and a small actor on 1 GPU under slime's Qwen3-4B example's TP 2: an error
    naming the example and the mends, never a silently different layout
    (rlmcost.run.default_gpus.check_tier_layout)."""
    for argv in (["-m", "qwen3-next-80b-a3b", "--gpus", "16"], ["-m", "qwen3-0.6b", "--gpus", "1"]):
        res = runner.invoke(app, ["grpo", *argv, "--framework", "slime"])
        assert res.exit_code != 0
        text = " ".join(res.output.split())
        assert "comes from its example" in text and "--no-sized-defaults" in text
        mended = _run_json("grpo", *argv, "--framework", "slime", "--tp", "1",
                           "--rollout-tp", "1")  # the mends named run  # fmt: skip
        assert mended["run"]["deployment"]["train"]["tp"] == 1


def test_deepspeed_sleep_is_read_as_deepspeed_offloads_its_states() -> None:
    """OpenRLHF --deepspeed_enable_sleep (openrlhf/utils/deepspeed/deepspeed_utils.py
    offload_deepspeed_states @c250c21a): the ZeRO-3 optimizer states and gradient buffers to
    the host between phases; nothing more under --adam_offload (it returns: the states are
    there already); NotImplementedError under another ZeRO stage. It had been read and
    dropped: the trainers' states stayed counted on the GPUs while vLLM ran (75.9 GiB for the
    example on 8 A100-80GB, 48.0 with them offloaded)."""
    from rlmcost.errors import SpecError

    args = OPENRLHF_8B_HYBRID_ARGS.split()
    assert dict(import_openrlhf(args).flags)["--offload"] == "optimizer-idle,grads-idle"
    adam = dict(import_openrlhf([*args, "--adam_offload"]).flags)["--offload"]
    assert adam == "optimizer,grads"
    i = args.index("--zero_stage")
    with pytest.raises(SpecError, match="needs --zero_stage 3"):
        import_openrlhf([*args[:i], "--zero_stage", "2", *args[i + 2:]])
    without = [a for a in args if a != "--deepspeed_enable_sleep"]
    assert "--offload" not in dict(import_openrlhf(without).flags)
