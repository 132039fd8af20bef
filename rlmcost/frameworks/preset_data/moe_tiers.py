"""The size tiers of large mixture-of-experts actors: each framework's own example for
Qwen3-235B-A22B and for DeepSeek-V3 (671 B), as :class:`~rlmcost.frameworks.preset_model.Sized`
tiers that only a mixture-of-experts actor takes (``moe_only``); a dense actor keeps the
framework's dense tiers. Every value is the example's, the key and the file @ commit in its
source; the importers read the same examples to the same values (tests/test_moe_tiers.py).

Thresholds, geometric means between two examples' sizes as the dense tiers' are (rlmcost's
parameter counts: Qwen3-30B-A3B 30.53 B, Qwen3-Next-80B-A3B 79.67 B, Qwen3-235B-A22B 235.09 B,
DeepSeek-V3 671.03 B): :data:`MOE_235B_EXAMPLE_FROM` and :data:`MOE_671B_EXAMPLE_FROM`. A
mixture of experts under the first (the 30B-A3B class, Qwen3-Next-80B) keeps what it had under
NeMo RL and verl; slime's tiers also take its 30B-A3B and Qwen3-Next-80B-A3B examples
(:data:`SLIME_30B_A3B_EXAMPLE_FROM`, :data:`SLIME_80B_A3B_EXAMPLE_FROM`), and so its 235 B one
from :data:`SLIME_235B_EXAMPLE_FROM`.

Pipeline first/last-stage layer counts (and verl's embedding/loss slots) are the example's
model's: a default with ``layers`` applies to an actor of that many decoder layers alone; an
actor of another depth takes Megatron-core's even split (rlmcost's, the first ranks one layer
more where PP does not divide the layers). Speculative drafts from a checkpoint's MTP layer
(NeMo RL's and slime's DeepSeek examples) are the checkpoint's, not the layout's: left out
(``--speculative-tokens``). The gradient buffer's dtype is each framework's own
(``Behaviour.megatron_grad_reduce``: NeMo RL bf16, verl and slime fp32), as the examples leave
it, not a tier value. Data only.
"""

from __future__ import annotations

from rlmcost.frameworks.preset_model import Default, Sized
from rlmcost.frameworks.tier_placement import TierPlacement

MOE_235B_EXAMPLE_FROM = 84_700_000_000
"""Mixture-of-experts actors from which a framework's preset takes its Qwen3-235B-A22B example:
the geometric mean of Qwen3-30B-A3B's 30.53 B and Qwen3-235B-A22B's 235.09 B parameters
(84.72 B), rounded down. GLM-4.5-Air (107 B), gpt-oss-120b, Mixtral-8x22B, DeepSeek-V2 and
GLM-4.5 (353 B) take it too (under slime, with an 80B-A3B example between, from
:data:`SLIME_235B_EXAMPLE_FROM`)."""

MOE_671B_EXAMPLE_FROM = 397_000_000_000
"""Mixture-of-experts actors from which a framework's preset takes its DeepSeek-V3 / R1 (671 B)
example instead of its 235 B one: the geometric mean of Qwen3-235B-A22B's 235.09 B and
DeepSeek-V3's 671.03 B parameters (397.18 B), rounded down; Kimi-K2 (1.03 T) takes it."""

MOE_NO_EXAMPLE = {
    "openrlhf": "OpenRLHF's examples train no mixture of experts with RL (examples/scripts "
                "@c250c21a and @3c3be623; its one MoE example is SFT, examples/test_scripts/"
                "train_sft_moe.sh, README.md @3c3be623), so its dense example's settings apply",
    "trl": "TRL documents no training setup for a mixture of experts (docs/source/"
           "grpo_trainer.md @f2cd5771 names MoE models only as tested with tool calling), so "
           "its dense defaults apply",
}
"""Frameworks with no example that trains a mixture of experts with RL, with the sources
searched: a mixture-of-experts actor takes their dense defaults, and the deployment line says
so (:func:`rlmcost.cli.deployment_line.untested_moe`)."""

_QWEN3_235B_LAYERS = 94
_DEEPSEEK_V3_LAYERS = 61
_ONLY = "applied to an actor of the example's {} layers alone, else the even split"


_Keys = tuple[tuple[str, object, str], ...]
"""(field, value, the example's key) triples."""


def _megatron(src: str, layout: _Keys, split: _Keys, layers: int) -> tuple[Default, ...]:
    """The trainer layout of an example: (field, value, key) triples as Defaults, and its
    pipeline split's (field, value, key) for an actor of ``layers`` layers alone."""
    out = [Default(f"train.{f}", v, _flag(f, v), f"{src}: {key}") for f, v, key in layout]
    out += [Default(f"train.pp_split.{f}", v, _flag(f, v), f"{src}: {key} ({_ONLY.format(layers)})",
                    layers=layers) for f, v, key in split]  # fmt: skip
    return tuple(out)


_FLAGS = {"tp": "--tp", "pp": "--pp", "cp": "--cp", "ep": "--ep", "etp": "--etp",
          "zero": "--zero", "param_dtype": "--param-dtype", "ckpt": "--ckpt",
          "grad_reduce_dtype": "--grad-reduce-dtype", "ep_dispatcher": "--ep-dispatcher",
          "micro_batch": "--micro-batch", "max_tokens_per_gpu": "--max-tokens-per-gpu",
          "first_layers": "--pp-first-layers", "last_layers": "--pp-last-layers"}  # fmt: skip
_SWITCHES = {"sp": "--sp", "fused_loss": "--fused-loss", "embedding_slot": "--pp-embedding-slot",
             "loss_slot": "--pp-loss-slot"}  # fmt: skip


def _flag(field: str, value: object) -> str:
    if field in _SWITCHES:
        return _SWITCHES[field]
    if field == "offload":
        return "--offload " + ",".join(str(v) for v in value)  # type: ignore[attr-defined]
    return f"{_FLAGS[field]} {value}"


# NeMo RL (NVIDIA-NeMo/RL @7ea279abf): the Megatron-core performance recipes, their defaults
# examples/configs/grpo_math_1B.yaml (what `rlmcost import nemo-rl` reads of megatron_cfg).
_NEMO = "NeMo RL examples/configs/recipes/llm/performance/{} @7ea279abf"
_NEMO_BASE = "examples/configs/grpo_math_1B.yaml"


def _nemo_tier(recipe: str, layout: _Keys, split: _Keys, layers: int, rollout_tp: int,
               example: str, min_params: int) -> Sized:
    src = _NEMO.format(recipe)
    common = (("zero", "1", f"megatron_cfg.enabled: true, {_NEMO_BASE} megatron_cfg.optimizer."
               "use_distributed_optimizer: true"),
              ("param_dtype", "bf16", "policy.precision: bfloat16 (Megatron-core: the model in "
               "bf16, fp32 main parameters in the distributed optimizer)"),
              ("ckpt", "full", "megatron_cfg.activation_checkpointing: true"),
              ("micro_batch", 1, "policy.train_micro_batch_size: 1 (packed: train_mb_tokens = "
               "max_total_sequence_length, split over CP)"),
              ("fused_loss", True, "policy.sequence_packing.fuse_loss: true"),
              ("offload", ("optimizer-idle", "params-idle", "grads-idle"), "colocated vLLM: "
               "megatron_policy_worker.py offload_before_refit / offload_after_refit "
               "(rlmcost.frameworks.nemo_rl_engine.import_engine)"))  # fmt: skip
    async_engine = f"{src}: generation.vllm_cfg.async_engine: true (AsyncLLM, vLLM's " \
        "ENGINE_CONTEXT defaults: rlmcost.frameworks.nemo_rl_vllm.engine_max_num_seqs)"
    return Sized(min_params, (
        *_megatron(src, (*common, *layout), split, layers),
        Default("forward.micro_batch", 1, "--forward-micro-batch 1",
                f"{src}: policy.logprob_batch_size: 1"),
        Default("engine.tp", rollout_tp, f"--rollout-tp {rollout_tp}",
                f"{src}: generation.vllm_cfg.tensor_parallel_size: {rollout_tp}",
                engines=("vllm", "sglang")),
        Default("engine.max_num_seqs", 128, "--max-num-seqs 128", async_engine,
                engines=("vllm",)),
        Default("engine.max_num_batched_tokens", 2048, "--max-num-batched-tokens 2048",
                async_engine, engines=("vllm",)),
        Default("recompute_logprobs", False, "--no-recompute-logprobs",
                f"{src}: loss_fn.force_on_policy_ratio: true (grpo.py skip_prev_logprobs: no "
                "old-policy log-prob forward)"),
    ), example, moe_only=True, summary="NeMo RL: Megatron-core policy (megatron_cfg) and vLLM "
        "colocated on the same GPUs, the reference kept in host memory")


NEMO_RL_MOE = (
    _nemo_tier("grpo-qwen3-235b-16n8g.yaml", (
        ("tp", 2, "megatron_cfg.tensor_model_parallel_size: 2"),
        ("sp", True, "megatron_cfg.sequence_parallel: true"),
        ("pp", 8, "megatron_cfg.pipeline_model_parallel_size: 8"),
        ("cp", 2, "megatron_cfg.context_parallel_size: 2"),
        ("ep", 16, "megatron_cfg.expert_model_parallel_size: 16"),
        ("etp", 1, f"{_NEMO_BASE} megatron_cfg.expert_tensor_parallel_size: 1")),
        (("first_layers", 11, "megatron_cfg.num_layers_in_first_pipeline_stage: 11"),
         ("last_layers", 11, "megatron_cfg.num_layers_in_last_pipeline_stage: 11")),
        _QWEN3_235B_LAYERS, 16,
        "grpo-qwen3-235b-16n8g.yaml, NeMo RL's Megatron-core recipe for Qwen3-235B-A22B on 128 "
        "GPUs, for a mixture of experts of >= 84.7 B parameters: TP 2 with SP, PP 8 (11 layers "
        "first and last for 94 layers), CP 2, EP 16, activation checkpointing, micro-batches "
        "of 1, fused loss, vLLM TP 16 (async engine), no old-policy log-probs",
        MOE_235B_EXAMPLE_FROM),
    _nemo_tier("grpo-deepseek-v3-32n8g.yaml", (
        ("pp", 16, "megatron_cfg.pipeline_model_parallel_size: 16"),
        ("ep", 16, "megatron_cfg.expert_model_parallel_size: 16")),
        (("first_layers", 3, "megatron_cfg.num_layers_in_first_pipeline_stage: 3"),
         ("last_layers", 2, "megatron_cfg.num_layers_in_last_pipeline_stage: 2")),
        _DEEPSEEK_V3_LAYERS, 32,
        "grpo-deepseek-v3-32n8g.yaml, NeMo RL's Megatron-core recipe for DeepSeek-V3 on 256 "
        "GPUs, for a mixture of experts of >= 397 B parameters: PP 16 (3 layers first, 2 last "
        "for 61 layers), EP 16, activation checkpointing, micro-batches of 1, fused loss, vLLM "
        "TP 32 (async engine; its MTP draft left out), no old-policy log-probs",
        MOE_671B_EXAMPLE_FROM),
)  # fmt: skip

# verl (volcengine/verl @b178a3cd): examples/grpo_trainer/, what `rlmcost import verl` reads.
_VERL = "verl examples/grpo_trainer/{} @b178a3cd"
_VERL_235B = _VERL.format("run_qwen3-235b_megatron_96gb.sh")
_VERL_671B = _VERL.format("run_deepseek671b_math_megatron_80gb.sh")
_MCORE = "actor_rollout_ref.actor.megatron"
_OVERRIDE = f"+{_MCORE}.override_transformer_config"
_VERL_COMMON = (("zero", "1", "ppo_megatron_trainer.yaml: megatron.use_distributed_optimizer"),
                ("param_dtype", "bf16", "ppo_megatron_trainer.yaml: bf16 Megatron-core model"))


def _verl_engine(src: str, tp: int, fraction: float) -> tuple[Default, ...]:
    return (Default("engine.tp", tp, f"--rollout-tp {tp}",
                    f"{src}: rollout.tensor_model_parallel_size={tp}"),
            Default("engine.gpu_memory_utilization", fraction,
                    f"--gpu-memory-utilization {fraction}",
                    f"{src}: rollout.gpu_memory_utilization={fraction}"),
            Default("logits", "fused", "--logits fused",
                    f"{src}: actor_rollout_ref.model.use_fused_kernels=True"),
            Default("kl", True, "--kl", f"{src}: actor.use_kl_loss=True, kl_loss_coef=0.001 "
                    "(a reference forward every step)"))  # fmt: skip


VERL_MOE = (
    Sized(MOE_235B_EXAMPLE_FROM, (
        *_megatron(_VERL_235B, (*_VERL_COMMON,
            ("tp", 4, f"{_MCORE}.tensor_model_parallel_size=${{TP:-4}}"),
            ("sp", True, "Megatron TP > 1: verl sets sequence_parallel"),
            ("pp", 8, f"{_MCORE}.pipeline_model_parallel_size=${{PP:-8}}"),
            ("ep", 4, f"{_MCORE}.expert_model_parallel_size=${{EP:-4}}"),
            ("etp", 1, f"{_MCORE}.expert_tensor_parallel_size=1"),
            ("ep_dispatcher", "deepep", f"{_OVERRIDE}.moe_token_dispatcher_type=flex, "
             "moe_enable_deepep=True"),
            ("ckpt", "none", "no recompute_granularity (verl's default null)"),
            ("max_tokens_per_gpu", 11680, "actor.use_dynamic_bsz=True, ppo_max_token_len_per_gpu "
             "= max_prompt_length + max_response_length = 2048 + 9632 (the log-prob forwards' "
             "the same)"),
            ("offload", ("params-idle", "grads-idle", "optimizer"), f"{_MCORE}.param_offload, "
             "grad_offload=True; optim override_optimizer_config.optimizer_cpu_offload=True, "
             "optimizer_offload_fraction=1 (Megatron-core's CPU optimizer)")),
            (("embedding_slot", True, f"{_OVERRIDE}.account_for_embedding_in_pipeline_split"),
             ("loss_slot", True, f"{_OVERRIDE}.account_for_loss_in_pipeline_split")),
            _QWEN3_235B_LAYERS),
        *_verl_engine(_VERL_235B, 8, 0.85),
        Default("engine.eager", True, "--enforce-eager", f"{_VERL_235B}: rollout.enforce_eager"),
        Default("offload_idle", True, "--offload-idle", f"{_VERL_235B}: actor_rollout_ref.ref."
                "megatron.param_offload=${offload} (True; megatron_workers.py "
                "_ref_is_offload_param)"),
        Default("engine.max_num_batched_tokens", 11680, "--max-num-batched-tokens 11680",
                f"{_VERL_235B}: rollout.max_num_batched_tokens = 2048 + 9632"),
    ), "examples/grpo_trainer/run_qwen3-235b_megatron_96gb.sh, verl's Megatron example for "
       "Qwen3-235B-A22B on 32 GPUs, for a mixture of experts of >= 84.7 B parameters: TP 4 "
       "with SP, PP 8 (the embedding and loss as layers for 94 layers), EP 4 over DeepEP, the "
       "CPU optimizer, parameters and gradients in host memory between phases, 11,680 tokens "
       "per GPU, vLLM TP 8 at 0.85 (eager), a KL loss", moe_only=True),
    Sized(MOE_671B_EXAMPLE_FROM, (
        *_megatron(_VERL_671B, (*_VERL_COMMON,
            ("pp", 16, f"{_MCORE}.pipeline_model_parallel_size=$PP (16)"),
            ("ep", 16, f"{_MCORE}.expert_model_parallel_size=$EP (16)"),
            ("max_tokens_per_gpu", 6144, "actor.ppo_max_token_len_per_gpu = max_prompt_length + "
             "max_response_length = 2048 + 4096"),
            ("offload", ("params-idle", "grads-idle", "optimizer-idle"), f"{_MCORE}.param_"
             "offload, grad_offload, optimizer_offload=$ALL_OFFLOAD (True)")),
            (("first_layers", 4, f"+{_MCORE}.override_transformer_config."
              "num_layers_in_first_pipeline_stage=4"),
             ("last_layers", 1, f"+{_MCORE}.override_transformer_config."
              "num_layers_in_last_pipeline_stage=1")), _DEEPSEEK_V3_LAYERS),
        Default("forward.max_tokens_per_gpu", 18432, "--forward-max-tokens-per-gpu 18432",
                f"{_VERL_671B}: rollout.log_prob_max_token_len_per_gpu = 3 x 6144"),
        *_verl_engine(_VERL_671B, 32, 0.8),
        Default("offload_idle", True, "--offload-idle", f"{_VERL_671B}: actor_rollout_ref.ref."
                "megatron.param_offload=$REF_PARAM_OFFLOAD (COMMON_PARAM_OFFLOAD: True)"),
    ), "examples/grpo_trainer/run_deepseek671b_math_megatron_80gb.sh, verl's Megatron example "
       "for DeepSeek-V3 on 256 GPUs, for a mixture of experts of >= 397 B parameters: PP 16 (4 "
       "layers first, 1 last for 61 layers), EP 16, full recomputation, parameters, gradients "
       "and optimizer in host memory between phases, 6,144 tokens per GPU, vLLM TP 32 at 0.8, "
       "a KL loss", moe_only=True),
)  # fmt: skip

# slime (THUDM/slime @624b824a): scripts/, what `rlmcost import slime` reads.
_SLIME_235B = "slime scripts/run-qwen3-235B-A22B.sh @624b824a"
_SLIME_671B = "slime scripts/run-deepseek-r1.sh @624b824a"
_SLIME_COMMON = (("param_dtype", "bf16", "Megatron-LM --bf16 (slime's default)"),
                 ("sp", True, "--sequence-parallel"),
                 ("etp", 1, "--expert-tensor-parallel-size 1"),
                 ("ckpt", "full", "--recompute-granularity full --recompute-method uniform "
                  "--recompute-num-layers 1"),
                 ("max_tokens_per_gpu", 16384, "--use-dynamic-batch-size --max-tokens-per-gpu "
                  "16384"))  # fmt: skip


def _slime_engine(src: str, tp: int, fraction: float = 0.7, dp: int = 1) -> tuple[Default, ...]:
    attention = (Default("engine.dp_attention", dp, f"--dp-attention {dp}", f"{src}: "
                         f"--sglang-enable-dp-attention --sglang-dp-size {dp}",
                         engines=("sglang",)),) if dp > 1 else ()  # fmt: skip
    return (Default("engine.tp", tp, f"--rollout-tp {tp}",
                    f"{src}: --rollout-num-gpus-per-engine {tp}"),
            Default("engine.gpu_memory_utilization", fraction,
                    f"--gpu-memory-utilization {fraction}",
                    f"{src}: --sglang-mem-fraction-static {fraction}", engines=("sglang",)),
            *attention)


SLIME_30B_A3B_EXAMPLE_FROM = 22_000_000_000
"""Mixtures of experts from which slime's preset takes its Qwen3-30B-A3B example
(scripts/run-qwen3-30B-A3B.sh) instead of its dense defaults: the geometric mean of its next
smaller MoE example's model, Moonlight-16B-A3B (scripts/run-moonlight-16B-A3B.sh: 15.96 B), and
Qwen3-30B-A3B's 30.53 B parameters (22.07 B), rounded down, as the dense tiers' thresholds lie
between two examples; up to :data:`SLIME_80B_A3B_EXAMPLE_FROM`."""

SLIME_80B_A3B_EXAMPLE_FROM = 49_300_000_000
"""Mixtures of experts from which slime's preset takes its Qwen3-Next-80B-A3B example
(scripts/run-qwen3-next-80B-A3B.sh) instead of its Qwen3-30B-A3B one: the geometric mean of
Qwen3-30B-A3B's 30.53 B and Qwen3-Next-80B-A3B's 79.67 B parameters (49.32 B), rounded down;
Mixtral-8x7B (46.7 B) stays under it."""

SLIME_235B_EXAMPLE_FROM = 136_800_000_000
"""Mixtures of experts from which slime's preset takes its Qwen3-235B-A22B example: the
geometric mean of Qwen3-Next-80B-A3B's 79.67 B and Qwen3-235B-A22B's 235.09 B parameters
(136.86 B), rounded down, slime's next smaller MoE example being its 80B-A3B one (the other
frameworks' :data:`MOE_235B_EXAMPLE_FROM` lies between 30B-A3B and 235B-A22B). GLM-4.5-Air
(106.9 B) and gpt-oss-120b (116.8 B) take the 80B-A3B example; Mixtral-8x22B (140.6 B) this."""

_SLIME_30B = "slime scripts/run-qwen3-30B-A3B.sh @624b824a"
_SLIME_80B = "slime scripts/run-qwen3-next-80B-A3B.sh @624b824a"
_QWEN3_NEXT_LAYERS = 48
_COLOCATED = ("slime: Megatron trainer and SGLang engines on the same GPUs, each offloaded "
              "while the other runs (--colocate)")

_SLIME_COLOCATE = (("engine.sleep", True),
                   ("train.offload", ("params-idle", "grads-idle", "optimizer")))
"""What slime's ``--colocate`` sets (slime/utils/arguments.py lines 1939-1950 @624b824a:
``offload_rollout`` and, without ``--release-train``, ``offload_train`` default to True
under it): the engines release their memory while the trainer runs (``--sleep``) and the
trainer's parameters and gradients leave the GPUs while the engines run, beside the 235 B
example's CPU optimizer (``--optimizer-cpu-offload``), as slime's co-located examples run
(scripts/run-deepseek-r1.sh, run-qwen3-30B-A3B.sh)."""
_SLIME_COLOCATE_TEXT = ("as slime's --colocate runs them: the engines asleep while the trainer "
                        "runs (offload_rollout) and the trainer's parameters and gradients in "
                        "host memory while the engines run (offload_train; "
                        "slime/utils/arguments.py @624b824a)")

SLIME_MOE = (
    Sized(SLIME_30B_A3B_EXAMPLE_FROM, (
        *_megatron(_SLIME_30B, (
            ("param_dtype", "bf16", "Megatron-LM --bf16 (slime's default)"),
            ("sp", True, "--sequence-parallel"),
            ("tp", 4, "--tensor-model-parallel-size 4"),
            ("ep", 8, "--expert-model-parallel-size 8"),
            ("etp", 1, "--expert-tensor-parallel-size 1"),
            ("ckpt", "full", "--recompute-granularity full --recompute-method uniform "
             "--recompute-num-layers 1"),
            ("max_tokens_per_gpu", 20480, "--use-dynamic-batch-size --max-tokens-per-gpu 20480"),
            ("offload", ("params-idle", "grads-idle", "optimizer"), "--colocate (offload_train) "
             "and --optimizer-cpu-offload (Megatron-core's CPU optimizer)")), (), 0),
        *_slime_engine(_SLIME_30B, 8),
        Default("engine.sleep", True, "--sleep", f"{_SLIME_30B}: --colocate (offload_rollout)"),
        Default("kl", True, "--kl", f"{_SLIME_30B}: --use-kl-loss --kl-loss-coef 0.00 (the "
                "reference loaded, --ref-load, its forward run)"),
        Default("offload_idle", True, "--offload-idle", f"{_SLIME_30B}: the reference's "
                "weights in host memory, copied in for its forward (weights_backuper 'ref')"),
    ), "scripts/run-qwen3-30B-A3B.sh, slime's example for Qwen3-30B-A3B on 8 GPUs, for a "
       "mixture of experts of >= 22 B parameters: Megatron TP 4 with SP, EP 8, full "
       "recomputation, 20,480 tokens per GPU, the CPU optimizer, SGLang TP 8 at 0.7 on the same "
       "GPUs (--colocate), a KL loss", moe_only=True, summary=_COLOCATED),
    Sized(SLIME_80B_A3B_EXAMPLE_FROM, (
        *_megatron(_SLIME_80B, (*_SLIME_COMMON[:4],
            ("tp", 2, "--tensor-model-parallel-size 2"),
            ("pp", 4, "--pipeline-model-parallel-size 4"),
            ("cp", 4, "--context-parallel-size \"${CP_SIZE}\" (CP_SIZE default 4)"),
            ("ep", 8, "--expert-model-parallel-size 8"),
            ("max_tokens_per_gpu", 8192, "--use-dynamic-batch-size --max-tokens-per-gpu 8192"),
            ("ep_dispatcher", "deepep", "--moe-token-dispatcher-type flex --moe-enable-deepep"),
            ("offload", ("params-idle", "grads-idle", "optimizer"), "--colocate (offload_train) "
             "and --optimizer-cpu-offload (Megatron-core's CPU optimizer)")),
            (("last_layers", 9, "--decoder-last-pipeline-num-layers 9"),), _QWEN3_NEXT_LAYERS),
        *_slime_engine(_SLIME_80B, 8, 0.8),
        Default("engine.max_num_seqs", 256, "--max-num-seqs 256",
                f"{_SLIME_80B}: --sglang-max-running-requests 256", engines=("sglang",)),
        Default("engine.sleep", True, "--sleep", f"{_SLIME_80B}: --colocate (offload_rollout)"),
        Default("kl", False, "--no-kl", f"{_SLIME_80B}: --kl-loss-coef 0.00 --kl-coef 0.00 "
                "without --use-kl-loss (no reference: slime/ray/placement_group.py "
                "with_ref=kl_coef != 0 or use_kl_loss)"),
    ), "scripts/run-qwen3-next-80B-A3B.sh, slime's example for Qwen3-Next-80B-A3B on 32 GPUs, "
       "for a mixture of experts of >= 49.3 B parameters: Megatron TP 2 with SP, PP 4 (9 layers "
       "last for 48 layers), CP 4, EP 8 over DeepEP, full recomputation, 8,192 tokens per GPU, "
       "the CPU optimizer, SGLang TP 8 at 0.8 on the same GPUs (--colocate; its MTP draft left "
       "out), no reference", moe_only=True, summary=_COLOCATED),
    Sized(SLIME_235B_EXAMPLE_FROM, (
        *_megatron(_SLIME_235B, (*_SLIME_COMMON,
            ("tp", 4, "--tensor-model-parallel-size 4"),
            ("pp", 4, "--pipeline-model-parallel-size 4"),
            ("cp", 2, "--context-parallel-size 2"),
            ("ep", 16, "--expert-model-parallel-size 16"),
            ("offload", ("optimizer",), "--optimizer-cpu-offload (Megatron-core's CPU "
             "optimizer; engines apart, no --colocate: nothing offloaded between phases)")),
            (("last_layers", 22, "--decoder-last-pipeline-num-layers 22"),),
            _QWEN3_235B_LAYERS),
        *_slime_engine(_SLIME_235B, 32, dp=4),
        Default("engine.dtype", "fp8", "--rollout-dtype fp8",
                f"{_SLIME_235B}: --hf-checkpoint Qwen3-235B-A22B-FP8 (SGLang serves the FP8 "
                "checkpoint; the trainer loads bf16, --ref-load ..._torch_dist)",
                engines=("sglang", "vllm")),
    ), "scripts/run-qwen3-235B-A22B.sh, slime's example for Qwen3-235B-A22B on 128 GPUs, for "
       "a mixture of experts of >= 136.8 B parameters: Megatron TP 4 with SP, PP 4 (22 layers "
       "last for 94 layers), CP 2, EP 16, full recomputation, 16,384 tokens per GPU, the CPU "
       "optimizer; SGLang TP 32 at 0.7 serving FP8 weights on half the GPUs",
       moe_only=True, placement=TierPlacement(
           (("rollout", 64, "tp=32"), ("actor", 64, "")),
           f"{_SLIME_235B}: --actor-num-nodes 8 --actor-num-gpus-per-node 8, "
           "--rollout-num-gpus 64", colocated=_SLIME_COLOCATE,
           colocated_text=_SLIME_COLOCATE_TEXT)),
    Sized(MOE_671B_EXAMPLE_FROM, (
        *_megatron(_SLIME_671B, (*_SLIME_COMMON,
            ("tp", 8, "--tensor-model-parallel-size 8"),
            ("pp", 4, "--pipeline-model-parallel-size 4"),
            ("cp", 4, "--context-parallel-size 4"),
            ("ep", 32, "--expert-model-parallel-size 32"),
            ("ep_dispatcher", "deepep", "--moe-token-dispatcher-type flex --moe-enable-deepep"),
            ("offload", ("params-idle", "grads-idle", "optimizer"), "--colocate (offload_train) "
             "and --optimizer-cpu-offload")),
            (("last_layers", 13, "--decoder-last-pipeline-num-layers 13"),),
            _DEEPSEEK_V3_LAYERS),
        *_slime_engine(_SLIME_671B, 64, dp=8),
        Default("engine.sleep", True, "--sleep", f"{_SLIME_671B}: --colocate (offload_rollout)"),
        Default("kl", True, "--kl", f"{_SLIME_671B}: --use-kl-loss (the reference loaded, "
                "--ref-load, its forward run)"),
        Default("offload_idle", True, "--offload-idle", f"{_SLIME_671B}: the reference's "
                "weights in host memory, copied in for its forward (weights_backuper 'ref')"),
    ), "scripts/run-deepseek-r1.sh, slime's example for DeepSeek-R1 on 128 GPUs, for a mixture "
       "of experts of >= 397 B parameters: Megatron TP 8 with SP, PP 4 (13 layers last for 61 "
       "layers), CP 4, EP 32 over DeepEP, full recomputation, 16,384 tokens per GPU, the CPU "
       "optimizer, SGLang TP 64 at 0.7 colocated (--colocate; its MTP draft left out), a KL "
       "loss", moe_only=True),
)  # fmt: skip
