"""NeMo RL's vLLM ``max_num_seqs`` by how it builds the engine (rlmcost.frameworks.nemo_rl_vllm).

Source: NeMo RL ``vllm_worker_async.py`` ``_create_engine`` (v0.6.0, v0.7.0) calls
``AsyncLLM.from_engine_args`` without a usage context; vLLM's ``ENGINE_CONTEXT`` then has no
entry in ``EngineArgs.get_batch_defaults`` and falls through to
``SchedulerConfig.DEFAULT_MAX_NUM_SEQS`` = 128 (vLLM PR 37393; NeMo RL PR 4221).
"""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import pytest

from rlmcost.errors import SpecError
from rlmcost.frameworks.nemo_rl import import_nemo_rl
from rlmcost.frameworks.nemo_rl_vllm import (
    ASYNC_ENGINE_MAX_NUM_BATCHED_TOKENS,
    ASYNC_ENGINE_MAX_NUM_SEQS,
)
from rlmcost.reports.rl_runs import load_runs
from rlmcost.reports.rl_runs_frameworks import recipe

CFG = Path(__file__).parent / "data" / "frameworks" / "nemo_rl_grpo_math.yaml"
G = "policy.generation"


def _flags(overrides: list[str]) -> dict:
    return dict(import_nemo_rl(CFG, overrides, 200).flags)


def test_the_async_engine_runs_vllm_engine_context_default() -> None:
    assert ASYNC_ENGINE_MAX_NUM_SEQS == 128  # vLLM SchedulerConfig.DEFAULT_MAX_NUM_SEQS
    q = import_nemo_rl(CFG, [f"{G}.vllm_cfg.async_engine=true"], 200)
    assert dict(q.flags)["--max-num-seqs"] == 128
    (conv,) = [c for c in q.conversions if c.flag == "--max-num-seqs"]
    assert "ENGINE_CONTEXT" in conv.how and "async_engine=true" in conv.given


def test_the_llm_class_engine_keeps_the_engine_default() -> None:
    # vllm_cfg.async_engine false (the fixture's, grpo_math_1B.yaml's): vllm.LLM, LLM_CLASS
    assert "--max-num-seqs" not in _flags([])


def test_a_given_max_num_seqs_wins() -> None:
    # the DeepSeek-V3 FP8 1-off recipe (v0.5.0-v0.7.0) sets vllm_kwargs.max_num_seqs 32
    on = [f"{G}.vllm_cfg.async_engine=true", f"{G}.vllm_kwargs.max_num_seqs=32"]
    assert _flags(on)["--max-num-seqs"] == 32
    assert _flags([f"{G}.vllm_kwargs.max_num_seqs=512"])["--max-num-seqs"] == 512


def test_rows_with_the_async_engine_run_128_sequences_per_engine() -> None:
    # every NeMo RL row whose recipe turns the async engine on imports the cap, except the
    # DeepSeek-V3 FP8 1-off rows, whose recipe (grpo-deepseek-v3-64n8g-fp8-async-1off.yaml,
    # v0.6.0 and v0.7.0) sets vllm_kwargs.max_num_seqs 32
    by_id = {r["id"]: r for r in load_runs()["runs"]}
    rows = [r for r in by_id.values() if r["framework"] == "nemo-rl"
            and r["framework_settings"].get(f"{G}.vllm_cfg.async_engine")]  # fmt: skip
    assert len(rows) >= 30
    for r in rows:
        q = recipe(r).query
        assert q is not None
        flags = dict(q.flags)
        want = 32 if "fp8-512gpu" in r["id"] and "deepseek" in r["id"] else 128
        assert flags["--max-num-seqs"] == want, r["id"]


def test_the_async_engine_budget_is_engine_context_2048_tokens() -> None:
    # vLLM SchedulerConfig.DEFAULT_MAX_NUM_BATCHED_TOKENS = 2048 for the ENGINE_CONTEXT path;
    # vllm.LLM (LLM_CLASS) leaves it to vLLM's device default (rlmcost.deployment.vllm_profile)
    assert ASYNC_ENGINE_MAX_NUM_BATCHED_TOKENS == 2048
    assert _flags([f"{G}.vllm_cfg.async_engine=true"])["--max-num-batched-tokens"] == 2048
    assert "--max-num-batched-tokens" not in _flags([])
    given = [f"{G}.vllm_cfg.async_engine=true", f"{G}.vllm_kwargs.max_num_batched_tokens=8192"]
    assert _flags(given)["--max-num-batched-tokens"] == 8192


def test_quantization_aware_rl_real_quant_serves_nvfp4() -> None:
    # docs/guides/quantization-aware-rl.md (7ea279abf): real_quant rollouts serve NVFP4 weights
    # of the recipe's parts: nvfp4_a16_mlp_only.yaml the MLPs (W4A16), nvfp4_experts.yaml the
    # routed experts (W4A4: nvfp4-w4a4, FP4 GEMMs where the GPUs have FP4 tensor cores)
    mlp = "examples/modelopt/quant_configs/nvfp4_a16_mlp_only.yaml"
    q = import_nemo_rl(CFG, [f"policy.quant_cfg={mlp}", f"{G}.quant_cfg={mlp}",
                             f"{G}.real_quant=true"], 200)  # fmt: skip
    assert dict(q.flags)["--rollout-weights"] == "nvfp4:mlp"
    assert any(n.startswith("policy.quant_cfg") for n in q.notes)
    assert not any("quant" in k for k in q.ignored)
    experts = "examples/modelopt/quant_configs/nvfp4_experts.yaml"
    q = import_nemo_rl(CFG, [f"{G}.quant_cfg={experts}", f"{G}.real_quant=true"], 200)
    assert dict(q.flags)["--rollout-weights"] == "nvfp4-w4a4:experts"
    (conv,) = [c for c in q.conversions if c.flag == "--rollout-weights"]
    assert "W4A4: activations quantized to NVFP4" in conv.how
    fake = import_nemo_rl(CFG, [f"{G}.quant_cfg={mlp}"], 200)
    assert "--rollout-weights" not in dict(fake.flags)
    assert any("fake-quantized layers" in n for n in fake.notes)


def test_dynamic_sampling_is_dapo_with_the_batch_multiplier() -> None:
    # nemo_rl/algorithms/grpo.py (7ea279abf) setup: a round generates int(num_prompts_per_step x
    # batch_multiplier) prompts; dynamic_sampling keeps num_prompts_per_step x K samples
    q = import_nemo_rl(CFG, ["grpo.use_dynamic_sampling=true", "grpo.batch_multiplier=3"], 200)
    f = dict(q.flags)
    assert q.algorithm == "dapo" and f["--oversample"] == 3
    assert "--kl" not in f and "--no-kl" not in f  # dapo has no reference
    assert any("one round assumed" in n for n in q.notes)
    half = import_nemo_rl(CFG, ["grpo.use_dynamic_sampling=true", "grpo.batch_multiplier=1.5",
                                "grpo.num_prompts_per_step=5",
                                "policy.train_global_batch_size=80"], 200)  # fmt: skip
    assert dict(half.flags)["--oversample"] == Fraction(7, 5)  # int(5 x 1.5) = 7
    assert import_nemo_rl(CFG, [], 200).algorithm == "rlvr"
    with pytest.raises(SpecError, match="NeMo RL refuses it"):
        import_nemo_rl(CFG, ["grpo.batch_multiplier=1.5"], 200)


def test_optimizer_offload_for_the_log_prob_forwards() -> None:
    # dtensor_policy_worker.py prepare_for_lp_inference (7ea279abf): the optimizer to the host
    # before the log-prob forwards, back in prepare_for_training; engines apart
    apart = ["policy.generation.colocated.enabled=false",
             "policy.generation.colocated.resources.gpus_per_node=4"]  # fmt: skip
    on = import_nemo_rl(CFG, [*apart, "policy.offload_optimizer_for_logprob=true"], 200)
    assert dict(on.flags)["--offload"] == "optimizer-idle"
    assert "policy.offload_optimizer_for_logprob" not in on.ignored
    off = import_nemo_rl(CFG, apart, 200)
    assert dict(off.flags)["--offload"] == ""


@pytest.mark.parametrize("section, why", [
    ("sft", "supervised fine-tuning"), ("rm", "reward-model training"),
    ("distillation", "set teacher.model_name"),  # imported as opd (test_opd.py), with a teacher
])  # fmt: skip
def test_trainers_rlmcost_does_not_price_are_refused(tmp_path: Path, section: str,
                                                     why: str) -> None:  # fmt: skip
    # examples/configs/{sft,rm,distillation_math}.yaml (7ea279abf): their top-level
    # section names the entry point; they were read as GRPO from defaults before (an
    # on-policy distillation config is priced as opd, and without its teacher refused)
    cfg = tmp_path / f"{section}.yaml"
    cfg.write_text(f"{section}:\n  seed: 42\npolicy:\n  model_name: Qwen/Qwen2.5-1.5B\n")
    with pytest.raises(SpecError, match=why):
        import_nemo_rl(cfg, [], 200)


def test_a_ppo_config_is_rlmcost_ppo_with_the_value_model_as_critic(tmp_path: Path) -> None:
    # examples/configs/ppo_math_1B.yaml (7ea279abf): the ppo section's keys are the grpo
    # section's; nemo_rl/algorithms/ppo.py: value forward, ppo_epochs x (value update, policy
    # update); rewards from the environments
    text = CFG.read_text().replace("grpo:", "ppo:", 1)
    text += "\nvalue:\n  model_name: Qwen/Qwen2.5-0.5B\n"
    cfg = tmp_path / "ppo.yaml"
    cfg.write_text(text)
    q = import_nemo_rl(cfg, ["ppo.ppo_epochs=2",
                             "ppo.skip_reference_policy_logprobs_calculation=true"], 200)
    f = dict(q.flags)
    assert q.algorithm == "ppo" and f["--reward"] == "rule" and f["--epochs"] == 2
    assert f["--critic"] == "Qwen/Qwen2.5-0.5B" and "--no-kl" in f
    assert f["--batch"] == 32 and not any(k.startswith("grpo.") for k in q.ignored)
    apart = import_nemo_rl(cfg, ["policy.generation.colocated.enabled=false",
                                 "policy.generation.colocated.resources.gpus_per_node=4"], 200)
    assert "actor+critic" in dict(apart.flags)["--groups"]  # the value model beside the policy


def test_trained_drafters_are_priced_or_said() -> None:
    # recipes/llm/grpo-nemotron3-super-120BA12B-16n8g-megatron.yaml (7ea279abf): mtp_num_layers 5
    meg = ["policy.megatron_cfg.enabled=true", "policy.dtensor_cfg.enabled=false"]
    q = import_nemo_rl(CFG, [*meg, "policy.megatron_cfg.mtp_num_layers=5",
                             "policy.draft.enabled=true"], 200)  # fmt: skip
    assert ("--mtp-layers", 5) in q.flags  # priced: rlmcost.placement.mtp
    assert any(n.startswith("policy.draft.enabled") for n in q.notes)
    assert not any("mtp_num_layers" in k or k.startswith("policy.draft.") for k in q.ignored)


def test_refit_transports_are_said() -> None:
    # docs/guides/refit.md (7ea279abf): null is the packed NCCL broadcast; the others are said
    apart = ["policy.generation.colocated.enabled=false",
             "policy.generation.colocated.resources.gpus_per_node=4"]  # fmt: skip
    q = import_nemo_rl(CFG, [*apart, "policy.generation.refit_transport=nccl_reshard"], 200)
    assert any(n.startswith("policy.generation.refit_transport nccl_reshard") for n in q.notes)
    plain = import_nemo_rl(CFG, apart, 200)
    assert not any("refit_transport" in n for n in plain.notes)
    assert not any(k.startswith("policy.generation.refit_cfg.") for k in plain.ignored)
