"""DeepSpeed-Chat's published step-3 runs as an explicit mapping onto ``--framework none``
(rlmcost has no DeepSpeed-Chat importer); one of the mappings of
:mod:`rlmcost.reports.rl_runs_frameworks`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rlmcost.frameworks.result import ImportedQuery
from rlmcost.reports.rl_runs import model_name, model_spec

Record = Mapping[str, Any]
Mapped = tuple[ImportedQuery, dict[str, Any], list[str], str]


def deepspeed_chat(record: Record) -> Mapped:
    """DeepSpeed-Chat step 3 (applications/DeepSpeed-Chat/training/step3_rlhf_finetuning/main.py
    in DeepSpeedExamples): PPO with actor, critic, reward and reference models on every GPU;
    the Hybrid Engine generates in the actor's own process and frees its cache for training."""
    from rlmcost.reports.rl_runs_frameworks import _overlay

    s = record["framework_settings"]
    q = ImportedQuery("none", "DeepSpeed-Chat step 3 (explicit mapping)", algorithm="ppo")
    gpus = int(record["gpus"])
    pairs = int(record["prompts_per_step"]) * int(record["samples_per_prompt"])
    micro = pairs // gpus
    tp = int(s.get("--inference_tp_size", 1))
    critic = model_spec("opt-350m", record["critic"]["model_config"], "facebook/opt-350m")
    reward = model_spec("opt-350m", record["reward"]["model_config"], "facebook/opt-350m")
    for flag, value in (("--model", model_name(record)), ("--critic", "facebook/opt-350m"),
                        ("--reward", "facebook/opt-350m"), ("--kl", None),
                        ("--recompute-logprobs", None), ("--zero", s["--actor_zero_stage"]),
                        ("--ckpt", "full" if s["--actor_gradient_checkpointing"] else "none"),
                        ("--micro-batch", micro), ("--mini-batches", 1),
                        ("--epochs", s["--ppo_epochs"]), ("--engine", "ds-hybrid"),
                        ("--rollout-tp", tp), ("--max-num-seqs", micro * tp),
                        ("--tp-gather-layers", s.get("--tp_gather_partition_size", 8)),
                        ("--logits", "materialized"), ("--disable-dropout", None)):  # fmt: skip
        q.set(flag, value)
    choices = [
        "--framework none with every field given (no DeepSpeed-Chat preset)",
        f"--zero {s['--actor_zero_stage']} for actor and critic (--actor_zero_stage, "
        "--critic_zero_stage); --ckpt full (--actor_gradient_checkpointing)",
        f"--micro-batch {micro} --mini-batches 1: per_device_training_batch_size = "
        f"per_device_generation_batch_size = {pairs} pairs / {gpus} GPUs, "
        "gradient_accumulation_steps 1 (BenckmarkSetting.md)",
        "Hybrid Engine (--engine ds-hybrid): generation on the actor's own weights gathered "
        f"into inference TP {tp} (--inference_tp_size), each TP group running "
        f"its ranks' per-device generation batches together in one generate() call, {tp} x "
        f"{micro} = {micro * tp} sequences (--max-num-seqs; hybrid_engine.py generate "
        "all-gathers the inputs over the TP group), no engine reservation; each decode step "
        "at least its layers' host time (HYBRID_ENGINE_LAUNCH_S_PER_LAYER, rlmcost/perf/"
        "deepspeed_chat.py: DeepSpeedExamples 3a77097a's step-3 log of OPT-1.3B)",
        "old log-probs by an actor forward after generation (--recompute-logprobs: "
        "ppo_trainer.py generate_experience); KL to the reference in the reward (--kl)",
        "logits materialised in fp32 (DeepSpeed-Chat's gather_log_probs on full logits)",
        "critic and reward OPT-350M (step-2 reward model); dtype fp16",
        "trained without dropout (--disable-dropout): the release the blog's tables come from "
        "(DeepSpeedExamples e468799f, 2023-04-11) builds every model through "
        "training/utils/model/model_utils.py create_hf_model, which sets model_config.dropout "
        "= 0.0 over OPTConfig's 0.1 (the rows' model_config), and OPT's attention_dropout and "
        "activation_dropout are 0.0 (rlhf_engine.py: actor, reference, critic and reward "
        "alike); later code keeps the config's unless told, and its OPT step-3 scripts tell "
        "the actor's only (--disable_actor_dropout from 3a77097a, --actor_dropout 0.0 from "
        "4bf1924b's configure_dropout), so there the OPT-350M critic would train with 0.1, "
        "which moves no row: the training steps sit at the blog's measured rate "
        "(rlmcost.placement.model_dropout)",
        "training steps no faster than DeepSpeed-Chat's measured rate: its FLOPs "
        "(dschat/utils/perf.py calculate_flops) at DSCHAT_TRAIN_PEAK_FRACTION of the peak "
        "(blog Figure 6; rlmcost/perf/deepspeed_chat.py), the Hybrid Engine's trainer; the "
        "actor, reference, critic and reward forwards of generate_experience, the same "
        "modules under the same ZeRO-3 engines, at the same rate (perf.py's forward count)",
        "the Hybrid Engine's DeepSpeed-Inference workspace (inference_context.h GenWorkSpace: "
        "10 hidden-sized activations, the scores and the K, V cache of each sequence of a "
        "generate() call at 512 positions) stays allocated beside training "
        "(--release_inference_cache off; rlmcost/frameworks/ds_hybrid.py)",
        "PyTorch's allocator slack of a process that switches between generation and "
        "training (10 %) on every invocation but the generation"
        + (", which starts from an emptied cache (the one-pattern 5 %: hybrid_engine.py "
           "eval() and generate() call empty_cache() under ZeRO-3)"
           if int(s["--actor_zero_stage"]) == 3 else ""),
        "the reference a ZeRO-3 model of its own (rlhf_engine.py _init_ref), not the LoRA "
        "actor's base",
        "ZeRO-3 gathers of every pass of the actor's and critic's training engines exposed, "
        "their forwards in generate_experience too (ds_utils.py get_train_ds_config: "
        "stage3_max_live_parameters = stage3_prefetch_bucket_size = 3e7, no prefetch past a "
        "larger weight; the reference and reward take get_eval_ds_config, which prefetches), "
        "and the Hybrid Engine gathers the whole actor on every rank before slicing its "
        "inference-TP shard (LoRA fused in); across nodes each all-gather crosses on every NIC "
        "of a node",
    ]
    overlay: dict[str, Any] = {
        "models": {**_overlay(record).get("models", {}), "critic": critic, "reward": reward},
        "workload": {"weight_dtype": "fp16", "activation_dtype": "fp16", "kv_dtype": "fp16",
                     "compute_dtype": "fp16"},  # fmt: skip
    }
    rank = int(s.get("--actor_lora_dim", 0))
    if rank:
        script = str(s.get("script", "")).rsplit("/", 1)[-1]
        q.set("--lora-rank", rank)
        choices.append(f"LoRA rank {rank} on the decoder layers ({script}: --actor_lora_dim "
                       f"{rank} --actor_lora_module_name {s['--actor_lora_module_name']}; "
                       "lora.py freezes the base weights); rlmcost puts the adapters on every "
                       "trained model, the critic's too")  # fmt: skip
    return q, overlay, choices, "explicit mapping: DeepSpeed-Chat step 3 -> --framework none"
