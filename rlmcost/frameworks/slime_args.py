"""The slime arguments :mod:`rlmcost.frameworks.slime` reads, with their argparse kinds, and
those that change no cost (THUDM/slime 624b824a ``slime/utils/arguments.py``; Megatron-LM's
``megatron/training/arguments.py`` for the Megatron names). Data only."""

from __future__ import annotations

from typing import Any

from rlmcost.frameworks.argv import NEGATABLE, SWITCH

SLIME_COMMIT = "624b824a"
"""The THUDM/slime commit every mapping of the importer was read at (2026-08-21)."""

ARGUMENTS = f"slime/utils/arguments.py@{SLIME_COMMIT}"
"""The file that defines slime's arguments, at that commit (cited in the importer's notes)."""

WHERE = "slime arguments"
"""How errors name the command line."""

CRITIC = "vapo"
"""rlmcost's algorithm of slime's ppo estimator, the one with a critic (its reward a verifier:
:data:`rlmcost.frameworks.slime._ESTIMATORS`)."""

SHAPE = (
    "num-layers", "hidden-size", "ffn-hidden-size", "num-attention-heads", "num-query-groups",
    "vocab-size", "num-experts", "moe-ffn-hidden-size", "moe-router-topk",
)  # fmt: skip
"""Megatron's model-shape arguments checked against the model (slime's own check,
``_hf_validate_args`` in slime/backends/megatron_utils/arguments.py, compares the same
against the checkpoint's config.json)."""

ARGS: dict[str, Any] = {
    # cluster (arguments.py add_cluster_arguments)
    "actor-num-nodes": int, "actor-num-gpus-per-node": int, "rollout-num-gpus": int,
    "rollout-num-gpus-per-engine": int, "num-gpus-per-node": int, "colocate": SWITCH,
    "rollout-external-engine-addrs": ("list", None), "update-weight-transport": str,
    "update-weight-mode": str, "update-weight-transfer-mode": str,
    "offload": SWITCH, "offload-train": NEGATABLE, "offload-rollout": NEGATABLE,
    # model
    "hf-checkpoint": str, **{k: int for k in SHAPE}, "group-query-attention": SWITCH,
    "multi-latent-attention": SWITCH,
    # rollout and data
    "rollout-batch-size": int, "n-samples-per-prompt": int, "global-batch-size": int,
    "num-steps-per-rollout": int, "micro-batch-size": int, "use-dynamic-batch-size": SWITCH,
    "max-tokens-per-gpu": int, "log-probs-max-tokens-per-gpu": int,
    "rollout-max-prompt-len": int, "rollout-max-response-len": int,
    "rollout-max-context-len": int, "over-sampling-batch-size": int,
    "dynamic-sampling-filter-path": str, "partial-rollout": SWITCH,
    "custom-generate-function-path": str,
    "use-rollout-logprobs": SWITCH, "use-rollout-routing-replay": SWITCH,
    "use-routing-replay": SWITCH,
    # algorithm
    "advantage-estimator": str, "kl-coef": float, "use-kl-loss": SWITCH,
    "kl-loss-coef": float, "rm-type": str, "rm-url": str, "custom-rm-path": str,
    "keep-old-actor": SWITCH, "debug-rollout-only": SWITCH, "debug-train-only": SWITCH,
    # Megatron layout
    "tensor-model-parallel-size": int, "pipeline-model-parallel-size": int,
    "context-parallel-size": int, "expert-model-parallel-size": int,
    "expert-tensor-parallel-size": int, "sequence-parallel": SWITCH,
    "recompute-granularity": str, "recompute-method": str, "recompute-num-layers": int,
    "recompute-activations": SWITCH, "use-distributed-optimizer": SWITCH,
    "optimizer-cpu-offload": SWITCH, "optimizer-offload-fraction": float,
    "bf16": SWITCH, "fp16": SWITCH, "decoder-last-pipeline-num-layers": int,
    "accumulate-allreduce-grads-in-fp32": SWITCH, "grad-reduce-in-bf16": SWITCH,
    "main-grads-dtype": str,
    "decoder-first-pipeline-num-layers": int, "moe-token-dispatcher-type": str,
    "num-layers-per-virtual-pipeline-stage": int, "num-virtual-stages-per-pipeline-rank": int,
    "virtual-pipeline-model-parallel-size": int,
    "account-for-embedding-in-pipeline-split": SWITCH,
    "account-for-loss-in-pipeline-split": SWITCH,
    "moe-enable-deepep": SWITCH, "moe-router-dtype": str, "moe-flex-dispatcher-backend": str,
    "moe-expert-capacity-factor": float, "moe-pad-expert-input-to-capacity": SWITCH,
    "moe-permute-fusion": SWITCH,
    "fp8-format": str, "fp8-recipe": str, "fp8-param-gather": SWITCH,  # frameworks.fp8_train
    # SGLang (slime/backends/sglang_utils/arguments.py: SGLang's own, prefixed --sglang-)
    "sglang-mem-fraction-static": float, "sglang-speculative-algorithm": str,
    "sglang-speculative-num-steps": int, "sglang-speculative-eagle-topk": int,
    "sglang-speculative-num-draft-tokens": int, "sglang-server-concurrency": int,
    "sglang-max-running-requests": int, "sglang-ep-size": int, "sglang-dp-size": int,
    "sglang-enable-dp-attention": SWITCH, "sglang-enable-dp-lm-head": SWITCH,
    "sglang-kv-cache-dtype": str,
    # Megatron's MTP training (said, not priced: slime_engine.engine)
    "enable-mtp-training": SWITCH, "mtp-num-layers": int, "mtp-loss-scaling-factor": float,
    # LoRA (radixark/miles miles/utils/arguments.py @31f1ca96; not in slime)
    "lora-rank": int, "target-modules": str,
}  # fmt: skip
"""The arguments the importer reads, with their argparse kinds."""

COST_FREE = {
    "lora-alpha", "lora-dropout",  # miles: the adapter's scale and dropout
    # paths, data and bookkeeping
    "ref-load", "load", "save", "save-interval", "save-hf", "prompt-data", "input-key",
    "label-key", "metadata-key", "tool-key", "apply-chat-template", "apply-chat-template-kwargs",
    "rollout-shuffle", "rollout-seed", "num-rollout", "num-epoch", "start-rollout-id",
    "eval-interval", "eval-prompt-data", "eval-config", "n-samples-per-eval-prompt",
    "eval-max-response-len", "eval-max-prompt-len", "eval-max-context-len", "eval-top-p",
    "eval-top-k", "eval-temperature", "eval-input-key", "eval-label-key", "eval-tool-key",
    "use-wandb", "wandb-project", "wandb-group", "wandb-key", "wandb-host", "wandb-team",
    "wandb-run-id", "use-tensorboard", "tb-project-name", "tb-experiment-name", "seed",
    "runtime-env-json", "model-name", "tokenizer-model", "tokenizer-type", "ref-ckpt-step",
    "async-save", "no-save-optim", "no-load-optim", "no-load-rng", "finetune",
    "distributed-timeout-minutes", "distributed-backend", "check-weight-update-equal",
    "dump-details", "save-debug-rollout-data", "load-debug-rollout-data",
    "log-passrate", "log-multi-turn", "log-probs-chunk-size",
    "balance-data",  # reorders samples over the DP ranks; rlmcost's shares are balanced
    # sampling, loss and optimizer hyperparameters
    "rollout-temperature", "rollout-top-p", "rollout-top-k", "rollout-stop",
    "rollout-stop-token-ids", "rollout-skip-special-tokens", "eps-clip", "eps-clip-high",
    "eps-clip-c", "value-clip", "kl-loss-type", "entropy-coef", "gamma", "lambd",
    "normalize-advantages", "grpo-std-normalization", "use-tis", "loss-type", "optimizer",
    "lr", "min-lr", "lr-decay-style", "lr-warmup-iters", "lr-warmup-fraction", "weight-decay",
    "adam-beta1", "adam-beta2", "adam-eps", "clip-grad", "attention-dropout", "hidden-dropout",
    "attention-softmax-in-fp32", "attention-backend",
    "calculate-per-token-loss", "use-unbiased-kl", "reward-key", "eval-reward-key",
    "group-rm", "use-precision-aware-optimizer", "overlap-cpu-optimizer-d2h-h2d",
    "overlap-grad-reduce", "overlap-param-gather", "moe-aux-loss-coeff",
    "moe-router-bias-update-rate", "moe-router-load-balancing-type", "moe-token-drop-policy",
    # the model's details, which the built-in spec or the config.json carries
    "swiglu", "kv-channels", "use-rotary-position-embeddings", "position-embedding-type",
    "disable-bias-linear", "add-qkv-bias", "normalization", "norm-epsilon", "rotary-base",
    "rotary-percent", "rotary-interleaved", "rotary-scaling-factor", "no-rope-fusion",
    "qk-layernorm", "untie-embeddings-and-output-weights", "post-self-attn-layernorm",
    "post-mlp-layernorm", "spec", "q-lora-rank", "kv-lora-rank", "qk-head-dim",
    "qk-pos-emb-head-dim", "v-head-dim", "mscale", "mscale-all-dim", "moe-layer-freq",
    "moe-shared-expert-intermediate-size", "moe-router-score-function",
    "moe-router-pre-softmax", "moe-router-enable-expert-bias", "moe-router-group-topk",
    "moe-router-num-groups", "moe-router-topk-scaling-factor", "moe-grouped-gemm",
    "padded-vocab-size", "make-vocab-size-divisible-by",
}  # fmt: skip
"""Arguments that change no cost, or whose cost the model's spec carries: ignored silently."""
