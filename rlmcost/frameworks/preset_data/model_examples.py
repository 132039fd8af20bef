"""Examples a framework ships for this very model: :class:`~rlmcost.frameworks.preset_model.
Sized` tiers matched by the actor's ``model_type`` and size (``Sized.models``), which an actor
of that model takes before the size tiers (:meth:`~rlmcost.frameworks.preset_model.Preset.
tier`): a size tier is the layout of another model's example, which may not suit this one
(NeMo RL's Qwen3-235B recipe's vLLM TP 16 over Nemotron 3 Super's 8 Mamba-2 groups; slime's
Qwen3-30B-A3B script's SGLang TP 8 over GLM-4.7-Flash's 20 heads).

Every value is the example's, the key and the file @ commit in its source; the importers read
the same examples to the same values (tests/test_model_examples.py). Data only.

* NeMo RL, Nemotron 3 Super 120B-A12B: examples/configs/recipes/llm/performance/
  grpo-nemotron3-super-120BA12B-32n8g.yaml @7ea279abf, of the Super recipes the one for
  8-GPU (H100-class) nodes with its MTP heads off (``mtp_num_layers: 0``), so nothing it runs
  is left out here, and one of the performance recipes the 235 B and DeepSeek-V3 tiers are
  (asynchronous vLLM engine, no old-policy log-probs); grpo-nemotron3-super-120BA12B-16n8g-
  megatron.yaml has the same trainer and engine TP but trains five MTP layers and drafts
  with them (speculative decoding), and the 32n4g / 8n4g / 16n4g recipes are GB200 (4 GPUs
  a node).
* slime, GLM-4.7-Flash (model_type ``glm4_moe_lite``): scripts/run-glm4.7-30B-A3B.sh
  @624b824a (its MTP training and EAGLE draft left out, as the other slime tiers leave them).
"""

from __future__ import annotations

from rlmcost.frameworks.preset_model import Default, Sized

NEMOTRON_SUPER_FROM = 61_800_000_000
"""``nemotron_h`` mixtures of experts from which NeMo RL's preset takes its Nemotron 3 Super
recipe: the geometric mean of Nemotron 3 Nano 30B-A3B's 31.58 B and Super's 120.67 B
parameters (61.73 B), rounded up to the next 0.1 B, as the size tiers' thresholds lie
between two examples' models; a Nano stays under it."""

_SUPER = ("NeMo RL examples/configs/recipes/llm/performance/grpo-nemotron3-super-120BA12B-"
          "32n8g.yaml @7ea279abf")  # fmt: skip
_BASE = "examples/configs/grpo_math_1B.yaml"
_ASYNC = (f"{_SUPER}: generation.vllm_cfg.async_engine: true (AsyncLLM, vLLM's ENGINE_CONTEXT "
          "defaults: rlmcost.frameworks.nemo_rl_vllm.engine_max_num_seqs)")  # fmt: skip


def _train(src: str, field: str, value: object, flag: str, key: str) -> Default:
    return Default(f"train.{field}", value, flag, f"{src}: {key}")


NEMO_RL_SUPER = Sized(NEMOTRON_SUPER_FROM, (
    _train(_SUPER, "zero", "1", "--zero 1", f"megatron_cfg.enabled: true, {_BASE} megatron_cfg."
           "optimizer.use_distributed_optimizer: true"),
    _train(_SUPER, "param_dtype", "bf16", "--param-dtype bf16", "policy.precision: bfloat16 "
           f"({_BASE}; Megatron-core: the model in bf16, fp32 main parameters)"),
    _train(_SUPER, "tp", 4, "--tp 4", "megatron_cfg.tensor_model_parallel_size: 4"),
    _train(_SUPER, "sp", True, "--sp", "megatron_cfg.sequence_parallel: true"),
    _train(_SUPER, "pp", 1, "--pp 1", f"{_BASE} megatron_cfg.pipeline_model_parallel_size: 1"),
    _train(_SUPER, "cp", 1, "--cp 1", f"{_BASE} megatron_cfg.context_parallel_size: 1"),
    _train(_SUPER, "ep", 32, "--ep 32", "megatron_cfg.expert_model_parallel_size: 32"),
    _train(_SUPER, "etp", 1, "--etp 1", f"{_BASE} megatron_cfg.expert_tensor_parallel_size: 1"),
    _train(_SUPER, "ckpt", "full", "--ckpt full", "megatron_cfg.activation_checkpointing: true"),
    _train(_SUPER, "micro_batch", 1, "--micro-batch 1", "policy.train_micro_batch_size: 1 "
           "(packed: train_mb_tokens = max_total_sequence_length)"),
    _train(_SUPER, "router_dtype", "fp32", "--router-dtype fp32",
           "megatron_cfg.moe_router_dtype: fp32"),
    _train(_SUPER, "offload", ("optimizer-idle", "params-idle", "grads-idle"),
           "--offload optimizer-idle,params-idle,grads-idle", "colocated vLLM: "
           "megatron_policy_worker.py offload_before_refit / offload_after_refit "
           "(rlmcost.frameworks.nemo_rl_engine.import_engine)"),
    Default("forward.micro_batch", 1, "--forward-micro-batch 1",
            f"{_SUPER}: policy.logprob_batch_size: 1"),
    Default("engine.tp", 8, "--rollout-tp 8",
            f"{_SUPER}: generation.vllm_cfg.tensor_parallel_size: 8", engines=("vllm", "sglang")),
    Default("engine.gpu_memory_utilization", 0.7, "--gpu-memory-utilization 0.7",
            f"{_SUPER}: generation.vllm_cfg.gpu_memory_utilization: 0.7", engines=("vllm",)),
    Default("engine.max_num_seqs", 128, "--max-num-seqs 128", _ASYNC, engines=("vllm",)),
    Default("engine.max_num_batched_tokens", 2048, "--max-num-batched-tokens 2048", _ASYNC,
            engines=("vllm",)),
    Default("global_batch", 256, "--global-batch 256",
            f"{_SUPER}: policy.train_global_batch_size: 256"),
    Default("recompute_logprobs", False, "--no-recompute-logprobs",
            f"{_SUPER}: loss_fn.force_on_policy_ratio: true (grpo.py skip_prev_logprobs: no "
            "old-policy log-prob forward)"),
), "performance/grpo-nemotron3-super-120BA12B-32n8g.yaml, NeMo RL's Megatron-core recipe for "
   "Nemotron 3 Super 120B-A12B on 256 GPUs (H100-class nodes of 8), for a nemotron_h mixture "
   "of experts of >= 61.8 B parameters: TP 4 with SP, EP 32, activation checkpointing, "
   "micro-batches of 1, a global batch of 256, vLLM TP 8 at 0.7 (async engine), no "
   "old-policy log-probs", moe_only=True, models=("nemotron_h",),
   summary="NeMo RL: Megatron-core policy (megatron_cfg) and vLLM colocated on the same GPUs, "
   "the reference kept in host memory")  # fmt: skip

_GLM = "slime scripts/run-glm4.7-30B-A3B.sh @624b824a"
_GLM_LAYERS = 47
_COLOCATED = ("slime: Megatron trainer and SGLang engines on the same GPUs, each offloaded "
              "while the other runs (--colocate)")  # fmt: skip

SLIME_GLM_FLASH = Sized(0, (
    _train(_GLM, "param_dtype", "bf16", "--param-dtype bf16", "Megatron-LM --bf16 (slime's "
           "default)"),
    _train(_GLM, "sp", True, "--sp", "--sequence-parallel"),
    _train(_GLM, "tp", 2, "--tp 2", "--tensor-model-parallel-size 2"),
    _train(_GLM, "pp", 2, "--pp 2", "--pipeline-model-parallel-size 2"),
    _train(_GLM, "cp", 2, "--cp 2", "--context-parallel-size 2"),
    _train(_GLM, "ep", 8, "--ep 8", "--expert-model-parallel-size 8"),
    _train(_GLM, "etp", 1, "--etp 1", "--expert-tensor-parallel-size 1"),
    Default("train.pp_split.last_layers", 23, "--pp-last-layers 23",
            f"{_GLM}: --decoder-last-pipeline-num-layers 23 (applied to an actor of the "
            f"example's {_GLM_LAYERS} layers alone, else the even split)", layers=_GLM_LAYERS),
    _train(_GLM, "ckpt", "full", "--ckpt full", "--recompute-granularity full "
           "--recompute-method uniform --recompute-num-layers 1"),
    _train(_GLM, "max_tokens_per_gpu", 32768, "--max-tokens-per-gpu 32768",
           "--use-dynamic-batch-size --max-tokens-per-gpu 32768"),
    _train(_GLM, "ep_dispatcher", "deepep", "--ep-dispatcher deepep",
           "--moe-token-dispatcher-type flex --moe-enable-deepep"),
    _train(_GLM, "offload", ("params-idle", "grads-idle", "optimizer"),
           "--offload params-idle,grads-idle,optimizer", "--colocate (offload_train) and "
           "--optimizer-cpu-offload (Megatron-core's CPU optimizer)"),
    Default("engine.tp", 8, "--rollout-tp 8", f"{_GLM}: --rollout-num-gpus-per-engine 8"),
    Default("engine.gpu_memory_utilization", 0.8, "--gpu-memory-utilization 0.8",
            f"{_GLM}: --sglang-mem-fraction-static 0.8", engines=("sglang",)),
    Default("engine.dp_attention", 8, "--dp-attention 8",
            f"{_GLM}: --sglang-enable-dp-attention --sglang-dp-size 8", engines=("sglang",)),
    Default("engine.max_num_seqs", 512, "--max-num-seqs 512",
            f"{_GLM}: --sglang-max-running-requests 512", engines=("sglang",)),
    Default("engine.sleep", True, "--sleep", f"{_GLM}: --colocate (offload_rollout)"),
    Default("kl", True, "--kl", f"{_GLM}: --use-kl-loss --kl-loss-coef 0.00 (the reference "
            "loaded, --ref-load, its forward run)"),
    Default("offload_idle", True, "--offload-idle", f"{_GLM}: the reference's weights in host "
            "memory, copied in for its forward (weights_backuper 'ref')"),
), "scripts/run-glm4.7-30B-A3B.sh, slime's example for GLM-4.7-Flash (glm4_moe_lite): "
   "Megatron TP 2 with SP, PP 2 (23 layers last for 47 layers), CP 2, EP 8 over DeepEP, full "
   "recomputation, 32,768 tokens per GPU, the CPU optimizer, SGLang TP 8 with 8 data-parallel "
   "attention ranks at 0.8 on the same GPUs (--colocate; its MTP draft left out), a KL loss",
   moe_only=True, models=("glm4_moe_lite",), summary=_COLOCATED)  # fmt: skip
