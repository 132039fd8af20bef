"""NeMo RL import: a GRPO config (the keys of NeMo RL's ``examples/configs/grpo_math_1B.yaml``,
OmegaConf references ``${a.b}`` and ``${mul:...}`` resolved) with Hydra-style overrides, as an
rlmcost query.

Units (grpo_math_1B.yaml and ``nemo_rl/algorithms/grpo.py``): ``grpo.num_prompts_per_step``
counts prompts (``--batch``), each sampled ``grpo.num_generations_per_prompt`` times
(``--group``); ``policy.train_global_batch_size`` counts samples, so a step takes
prompts x generations / train_global_batch_size optimizer steps (``--mini-batches``);
``policy.train_micro_batch_size`` is samples per GPU (``--micro-batch``), or with dynamic
batching or sequence packing ``train_mb_tokens`` tokens per GPU (``--max-tokens-per-gpu``);
``policy.max_total_sequence_length`` is prompt plus response.
"""

from __future__ import annotations

from pathlib import Path

from rlmcost.errors import SpecError
from rlmcost.frameworks import nemo_rl_distill as distill
from rlmcost.frameworks.config import Reader, apply_overrides, flatten
from rlmcost.frameworks.cpu_optimizer import optimizer_config_cpu_offload
from rlmcost.frameworks.fp8_train import import_nemo_rl_fp8
from rlmcost.frameworks.megatron_split import set_split
from rlmcost.frameworks.model_overrides import overridden_model
from rlmcost.frameworks.moe_capacity import import_nemo_rl_capacity
from rlmcost.frameworks.moe_dispatcher import NEMO_RL_DEFAULT, import_dispatcher
from rlmcost.frameworks.nemo_rl_automodel import automodel_parallel
from rlmcost.frameworks.nemo_rl_batching import batching, packed_tokens_per_gpu
from rlmcost.frameworks.nemo_rl_defaults import load_with_defaults
from rlmcost.frameworks.nemo_rl_dpo import DPO_IGNORED, dpo_workload, is_dpo
from rlmcost.frameworks.nemo_rl_engine import import_engine
from rlmcost.frameworks.nemo_rl_env import environment_workers
from rlmcost.frameworks.nemo_rl_kind import check_kind
from rlmcost.frameworks.nemo_rl_lora import nemo_rl_lora
from rlmcost.frameworks.nemo_rl_mopd import IGNORED as MOPD_IGNORED
from rlmcost.frameworks.nemo_rl_mopd import mopd_query
from rlmcost.frameworks.nemo_rl_ppo import is_ppo, own_names, ppo_aliases, ppo_query
from rlmcost.frameworks.nemo_rl_sampling import (
    dynamic_sampling,
    fused_logprobs,
    trained_drafters,
)
from rlmcost.frameworks.nemo_rl_turns import rollout_turns
from rlmcost.frameworks.nemo_rl_vllm import nemo_rl_release, release_vllm
from rlmcost.frameworks.nemo_rl_worker import dtensor_worker
from rlmcost.frameworks.result import ImportedQuery
from rlmcost.frameworks.units import whole_steps
from rlmcost.frameworks.virtual_pipeline import nemo_rl_virtual_stages

__all__ = ["import_nemo_rl", "packed_tokens_per_gpu"]

_MEG = "policy.megatron_cfg"
IGNORED = (
    "grpo.max_num_epochs", "grpo.max_num_steps",
    "grpo.normalize_rewards", "grpo.use_leave_one_out_baseline", "grpo.val_period",
    "grpo.val_at_start", "grpo.overlong_filtering", "grpo.max_val_samples",
    "grpo.val_batch_size", "grpo.seed", "loss_fn",
    "checkpointing", "policy.tokenizer", "policy.generation_batch_size",
    "policy.logprob_batch_size",
    "policy.dtensor_cfg.custom_parallel_plan",
    f"{_MEG}.empty_unused_memory_level", f"{_MEG}.converter_type", f"{_MEG}.pipeline_dtype",
    f"{_MEG}.freeze_moe_router", f"{_MEG}.moe_router_load_balancing_type",
    f"{_MEG}.moe_router_bias_update_rate", f"{_MEG}.apply_rope_fusion", f"{_MEG}.scheduler",
    f"{_MEG}.defer_fp32_logits", f"{_MEG}.optimizer", f"{_MEG}.env_vars",
    f"{_MEG}.distributed_data_parallel_config", "policy.dtensor_cfg.env_vars",
    "policy.dynamic_batching.logprob_mb_tokens",
    "policy.dynamic_batching.sequence_length_round", "policy.sequence_packing.logprob_mb_tokens",
    "policy.sequence_packing.algorithm", "policy.sequence_packing.sequence_length_round",
    "policy.make_sequence_length_divisible_by", "policy.dynamic_batching.train_mb_tokens",
    "policy.sequence_packing.train_mb_tokens", "policy.max_grad_norm", "policy.optimizer",
    "policy.scheduler", "policy.generation.temperature", "policy.generation.top_p",
    "policy.generation.top_k", "policy.generation.stop_token_ids", "policy.generation.stop_strings",
    "policy.generation.vllm_cfg.max_model_len", "policy.generation.vllm_cfg.use_deep_gemm",
    "policy.generation.vllm_cfg.num_last_layers_in_bf16",
    "policy.generation.vllm_cfg.num_first_layers_in_bf16", "policy.generation.vllm_kwargs",
    "data", "env", "logger",
)  # fmt: skip
"""Keys that change no cost (optimizer, sampling, logging, data): ignored silently."""


def import_nemo_rl(
    path: str | Path,
    overrides: list[str] | None = None,
    prompt_len: int | None = None,
    release: str | None = None,
) -> ImportedQuery:
    """The rlmcost query of a NeMo RL GRPO config (or a DPO one: an ``rlmcost dpo`` query,
    :mod:`rlmcost.frameworks.nemo_rl_dpo`); ``prompt_len`` splits the total length;
    ``release``: the NeMo RL release it runs on (``0.5``), whose vLLM pin the engine runs
    (:func:`~rlmcost.frameworks.nemo_rl_vllm.release_vllm`)."""
    release = None if release is None else nemo_rl_release(release)  # refused before reading
    where = f"NeMo RL config {Path(path).name}"
    data, bases = load_with_defaults(Path(path))  # its defaults: as NeMo RL merges them
    flat = apply_overrides(flatten(data, where), overrides or [], where)
    ppo, alias = is_ppo(flat), dict[str, str]()
    opd = distill.is_distillation(flat, where)  # its distillation.* keys too (nemo_rl_distill)
    if ppo or opd:  # its ppo.* keys read under their grpo.* names (nemo_rl_ppo)
        flat, alias = ppo_aliases(flat) if ppo else distill.distillation_aliases(flat)
    r = Reader(flat, where)
    check_kind(r)  # SFT and RM configs: refused with the reason
    q = ImportedQuery("nemo-rl", str(path))
    if bases:
        q.note(f"defaults: merged as NeMo RL does (nemo_rl/utils/config.py): {', '.join(bases)}")
    model = r.text("policy.model_name", None)
    if not model:
        raise SpecError(f"{where}: set policy.model_name (the policy model)")
    q.set("--model", overridden_model(r, q, model, "policy.hf_config_overrides"))
    if is_dpo(r):  # examples/configs/dpo.yaml and its recipes (nemo_rl_dpo)
        dpo_workload(r, q, prompt_len)
        _layout(r, q, pairs=True)
        if release is not None:
            q.note(f"NeMo RL v{release}: DPO generates nothing, so its vLLM pin prices nothing")
        q.ignored, q.near = r.unread(IGNORED + DPO_IGNORED), r.near_misses(IGNORED + DPO_IGNORED)
        return q
    q.algorithm = "rlvr"
    if ppo:
        ppo_query(r, q)
    elif opd:
        distill.distillation_query(r, q)
    else:
        q.note("NeMo RL rewards come from environments (verifiers): rlmcost's rlvr")
    if "--no-kl" not in dict(q.flags) and not opd:
        q.set("--kl" if r.number("loss_fn.reference_policy_kl_penalty", 0.01) > 0 else "--no-kl")
        _on_policy_ratio(r, q)
    _workload(r, q, prompt_len)
    dynamic_sampling(r, q)
    trained_drafters(r, q)
    _layout(r, q)
    import_engine(r, q)
    environment_workers(r, q)
    _async(r, q)
    mopd_query(r, q)  # after the groups: its teacher's GPUs come from the policy's
    if release is not None and dict(q.flags).get("--engine") == "megatron":
        q.note(f"NeMo RL v{release}: the Megatron-core engine generates, so its vLLM pin "
               "prices nothing")  # fmt: skip
    elif release is not None:
        release_vllm(q, release)
    skip = (IGNORED + distill.IGNORED if opd else IGNORED) + MOPD_IGNORED
    q.ignored, q.near = own_names(r.unread(skip), alias), r.near_misses(skip)
    return q


def _on_policy_ratio(r: Reader, q: ImportedQuery) -> None:
    """``loss_fn.force_on_policy_ratio`` (v0.7): NeMo RL skips the old-policy log-prob forward
    and takes the ratio as 1 while ``grpo.seq_logprob_error_threshold`` is unset
    (nemo_rl/algorithms/grpo.py at v0.7.0, ``skip_prev_logprobs`` from
    nemo_rl/algorithms/opd.py ``_skip_prev_logprobs``)."""
    if not r.flag("loss_fn.force_on_policy_ratio", False):
        return
    if r.raw("grpo.seq_logprob_error_threshold", None) is not None:
        return
    q.set("--no-recompute-logprobs")
    q.note("loss_fn.force_on_policy_ratio: no old-policy log-prob forward, the ratio taken as "
           "1 (grpo.py skip_prev_logprobs): --no-recompute-logprobs")  # fmt: skip


def _workload(r: Reader, q: ImportedQuery, prompt_len: int | None) -> None:
    prompts = r.integer("grpo.num_prompts_per_step", 32)
    k = r.integer("grpo.num_generations_per_prompt", 16)
    gbs = r.integer("policy.train_global_batch_size", 512)
    q.convert(f"grpo.num_prompts_per_step={prompts}", "--batch", prompts, "prompts per step")
    q.convert(
        f"grpo.num_generations_per_prompt={k}",
        "--group",
        k,
        f"samples per prompt: {prompts:,} x {k} = {prompts * k:,} samples per step",
    )
    steps = whole_steps(prompts * k, gbs, "num_prompts_per_step x num_generations_per_prompt",
                        "policy.train_global_batch_size", r.where)  # fmt: skip
    q.convert(
        f"policy.train_global_batch_size={gbs}",
        "--mini-batches",
        steps,
        f"counts samples: {prompts * k:,} / {gbs:,} = {steps} optimizer steps per step "
        "(stated when 1: the preset's global batch of 512 is its examples')",
    )
    total = r.integer("policy.max_total_sequence_length", 512, lo=2)
    new = r.integer("policy.generation.max_new_tokens", total)
    if prompt_len is None:
        s = total // 2
        q.note(f"NeMo RL gives prompt + response only (max_total_sequence_length={total}); "
               f"prompts taken as {s} tokens (give --prompt-len)")  # fmt: skip
    elif prompt_len >= total:
        raise SpecError(f"--prompt-len {prompt_len} leaves no response in "
                        f"policy.max_total_sequence_length={total}")  # fmt: skip
    else:
        s = prompt_len
    t = min(new, total - s)
    q.convert(f"policy.max_total_sequence_length={total}", "--prompt-len", s,
              "prompt tokens (part of the total)")  # fmt: skip
    q.convert(
        f"max_total_sequence_length - prompt (max_new_tokens={new})",
        "--response-len",
        t,
        f"response tokens: {total} - {s} = {total - s}, at most max_new_tokens",
    )
    rollout_turns(r, q, t)


GB200_GPUS_PER_NODE = 4
GB200_HOW = ("NeMo RL's nodes of 4 GPUs are its GB200 systems (docs/cluster.md and "
             "docs/about/algorithms/*.md: 'For GB200 systems with 4 GPUs per node, use "
             "--gres=gpu:4'; its *-Nn4g recipes): the accelerator unless -H names another")
"""A config's ``cluster.gpus_per_node`` of 4 read as GB200 when -H is not given."""


def _layout(r: Reader, q: ImportedQuery, pairs: bool = False) -> None:
    gpus = r.integer("cluster.gpus_per_node", 1) * r.integer("cluster.num_nodes", 1)
    q.convert("cluster.gpus_per_node x cluster.num_nodes", "--gpus", gpus, "GPUs in all")
    if r.integer("cluster.gpus_per_node", 1) == GB200_GPUS_PER_NODE:
        q.imply_hardware("cluster.gpus_per_node=4", "gb200", GB200_HOW)
    segment = r.integer("cluster.segment_size", None)  # v0.7.0 docs/cluster.md 'Topology-Aware
    if segment:  # Placement for MoE'; the v0.7.0 GB200 MoE recipes set it
        q.note(f"cluster.segment_size {segment}: Ray ranks ordered so each expert-parallel group "
               "lies inside one NVLink domain, as rlmcost places it")  # fmt: skip
    elif not r.has("cluster.segment_size") and r.integer("cluster.num_nodes", 1) > 1:
        # a config before v0.7.0: v0.7.0's grpo_math_1B.yaml sets segment_size: null, and
        # v0.7.0 sorts hosts by NVLink domain wherever ray.sub's probe finds one (with or
        # without segment_size: virtual_cluster.py _sort_bundle_indices_by_topology)
        q.convert("cluster.segment_size absent (before v0.7.0)", "--rank-order", "random",
                  "hosts in the order of their random Ray node ids (RayVirtualCluster sorts "
                  "bundles by node id, then GPU id): on more GPUs than one NVLink domain a group "
                  "over several hosts may span racks (rlmcost.placement.rank_order)")  # fmt: skip
    dtensor = r.flag("policy.dtensor_cfg.enabled", True)
    megatron = r.flag("policy.megatron_cfg.enabled", False)
    if dtensor == megatron:
        fsdp1 = "" if dtensor else (" (with neither, NeMo RL before v0.3.0 trained with its "
                                    "FSDP1 worker, fsdp1_policy_worker.py, which rlmcost does "
                                    "not model; v0.3.0 on refuses it)")  # fmt: skip
        raise SpecError(f"{r.where}: enable exactly one of policy.dtensor_cfg and "
                        f"policy.megatron_cfg{fsdp1}")  # fmt: skip
    if dtensor:
        c = "policy.dtensor_cfg"
        tp = r.integer(f"{c}.tensor_parallel_size", 1)
        cp = r.integer(f"{c}.context_parallel_size", 1)
        pp, etp = 1, None
        sp = r.flag(f"{c}.sequence_parallel", False)
        zero = "3"
        ckpt: str | bool = r.flag(f"{c}.activation_checkpointing", False)
        v2, own = dtensor_worker(r, q, ckpt is True)  # v1 or v2 (_v2), its checkpoint
        ep = automodel_parallel(r, q, own, v2, tp, cp)  # EP and HSDP (nemo_rl_automodel)
        if r.flag(f"{c}.cpu_offload", False):
            q.set("--offload", "optimizer,params,grads")
        # both workers load the model in float32 whatever policy.precision (nemo_rl_worker)
        q.set("--param-dtype", "fp32")
        r.text("policy.precision", "bfloat16")
    else:
        c = "policy.megatron_cfg"
        tp = r.integer(f"{c}.tensor_model_parallel_size", 1)
        pp = r.integer(f"{c}.pipeline_model_parallel_size", 1)
        cp = r.integer(f"{c}.context_parallel_size", 1)
        ep = r.integer(f"{c}.expert_model_parallel_size", 1)
        etp = r.integer(f"{c}.expert_tensor_parallel_size", None)  # None: TP (Megatron-core)
        sp = r.flag(f"{c}.sequence_parallel", False)
        precision = r.text("policy.precision", "bfloat16")
        stored = {"bfloat16": "bf16", "float16": "fp16", "float32": "fp32"}.get(precision)
        if stored is None:
            raise SpecError(f"{r.where}: policy.precision {precision!r}: use bfloat16, "
                            "float16 or float32")  # fmt: skip
        q.set("--param-dtype", stored)  # Megatron: model in the precision, fp32 main params
        fp32 = r.flag(f"{c}.distributed_data_parallel_config.grad_reduce_in_fp32", False)
        q.set("--grad-reduce-dtype", "fp32" if fp32 else "param")  # setup.py (grad_buffer)
        dist = r.flag(f"{c}.optimizer.use_distributed_optimizer", True)
        zero = "1" if dist else "0"
        if optimizer_config_cpu_offload(r, q, f"{c}.optimizer", []):  # via Megatron-Bridge
            q.set("--offload", "optimizer")
        ckpt = _megatron_recompute(r, q, c)
        q.note("log-probs and loss: DistributedLogprob's fp32 log-softmax "
               "(nemo_rl/distributed/model_utils.py; rlmcost.perf.logprob_head: 46 B forward, "
               "22 B backward per token and vocabulary entry)")
        if not r.flag(f"{c}.moe_permute_fusion", True):  # grpo_math_1B.yaml: false v0.4-v0.6,
            q.set("--no-moe-permute-fusion")  # true from v0.7.0 (dd3e8b721)
            q.note("megatron_cfg.moe_permute_fusion false: Megatron-core's unfused MoE "
                   "permutation, atomic scatter-adds each way (rlmcost.perf.moe_permute)")
        r.integer(f"{c}.moe_hybridep_num_sms", None)  # HybridEP's SMs: not modelled
        # unset before v0.6.0: the provider's alltoall (Megatron-Bridge, moe_dispatcher); v0.7.0
        # GB200 DeepSeek-V3 / Qwen3-235B: flex + hybridep (grpo-deepseek-v3-32n4g.yaml:10-12)
        how = import_dispatcher(r, q, f"{c}.", NEMO_RL_DEFAULT, ep)
        import_nemo_rl_capacity(r, q, c, how)  # model_overrides only (moe_capacity)
        _router_dtype(r, q, c)
        import_nemo_rl_fp8(r, q, c)  # fp8_cfg: Transformer Engine's FP8 (frameworks.fp8_train)
        # v0.7 key; absent: the bridge's (true for Qwen3 MoE: qwen3_moe_bridge.py at v0.4-v0.6's
        if not r.flag(f"{c}.moe_grouped_gemm", True):  # pins 62f4704b8, 1e9a459b4, 95e5f38f8)
            q.note("policy.megatron_cfg.moe_grouped_gemm false: Megatron-core's SequentialMLP "
                   "(a GEMM pair per local expert) is timed as grouped GEMMs (not modelled)")
    conf = r.text(f"{c}.env_vars.PYTORCH_CUDA_ALLOC_CONF", "") or ""
    expandable = "expandable_segments:true" in conf.replace(" ", "").lower()
    q.set("--expandable-segments" if expandable else "--no-expandable-segments")
    set_split(r, q, pp, {k: f"{_MEG}.num_layers_in_{k}_pipeline_stage" for k in ("first", "last")}
              | {"layout": f"{_MEG}.model_overrides.pipeline_model_parallel_layout"})
    if megatron:
        nemo_rl_virtual_stages(r, q, pp)
    if r.raw(f"{_MEG}.pipeline_model_parallel_layout") is not None:  # setup.py @7ea279ab
        q.note(f"{_MEG}.pipeline_model_parallel_layout: NeMo RL copies no such key onto the "
               "model (only model_overrides.pipeline_model_parallel_layout); ignored")
    for flag, v in (("--tp", tp), ("--pp", pp), ("--cp", cp), ("--ep", ep)):
        if v > 1:
            q.set(flag, v)
    if ep > 1 and etp is not None and etp != tp:  # the expert grid only
        q.set("--etp", etp)
    if sp and tp > 1:
        q.set("--sp")
    q.set("--zero", zero)
    q.set("--ckpt", "full" if ckpt is True else ckpt or "none")
    batching(r, q, cp, pairs)
    fused_logprobs(r, q, megatron, cp)
    nemo_rl_lora(r, q, megatron)


def _router_dtype(r: Reader, q: ImportedQuery, c: str) -> None:
    """``moe_router_dtype`` (default fp64: grpo_math_1B[_megatron].yaml, v0.3.0-v0.7.0; null is
    Megatron-core's None, the model dtype, priced as fp32; rlmcost.perf.moe_router)."""
    v = r.text(f"{c}.moe_router_dtype", "fp64", ("fp32", "fp64"))
    q.set("--router-dtype", v or "fp32")
    if v == "fp64":
        q.note("megatron_cfg.moe_router_dtype fp64: a MoE model's router GEMM runs as fp64 "
               "DGEMMs with fp64 casts (rlmcost.perf.moe_router)")


def _megatron_recompute(r: Reader, q: ImportedQuery, c: str) -> str | bool:
    """``megatron_cfg.activation_checkpointing`` with v0.7's ``recompute_granularity`` (default
    full: every layer recomputed, uniform x 1 layer) and ``recompute_modules`` (null: Megatron-
    core's ``["core_attn"]``, rlmcost's ``selective``): nemo_rl/models/megatron/setup.py at
    v0.7.0, lines 793-808; v0.5.0/v0.6.0 set full whenever the flag is on
    (megatron_policy_worker.py:683, megatron/setup.py:470)."""
    granularity = r.text(f"{c}.recompute_granularity", "full", ("full", "selective"))
    modules = r.words(f"{c}.recompute_modules", None)
    if not r.flag(f"{c}.activation_checkpointing", False):
        return False
    if granularity == "full":
        return True
    if modules and list(modules) != ["core_attn"]:
        q.note(f"recompute_modules {','.join(modules)}: rlmcost's selective recomputation "
               "counts the attention core only (Megatron-core's default core_attn)")  # fmt: skip
    return "selective"


def _async(r: Reader, q: ImportedQuery) -> None:
    """``grpo.async_grpo`` (NeMo RL v0.5.0 nemo_rl/algorithms/grpo.py ``async_grpo_train`` and
    nemo_rl/algorithms/async_utils.py ``AsyncTrajectoryCollector``; docs/guides/async-grpo.md).

    The collector generates for training steps up to ``max_trajectory_age_steps`` ahead:
    ``--placement async --staleness`` age, on GPUs of its own or, with the Megatron
    generation backend, on the policy's (PR 2884 at 8863ebeff: ``async_grpo_train`` asserts
    that colocated async GRPO runs a ``MegatronGeneration``; the engine stands down for each
    training step and wakes after it: ``--groups`` of one group, the step their sum).
    With ``in_flight_weight_updates`` and vLLM's ``async_engine`` (or Megatron-core's engine,
    which serves requests as they come) it does not wait for the
    generations in flight at a refit (``prepare_for_refit``): they continue under the new
    weights while new prompt groups start as old ones finish, up to ``num_prompts_per_step x
    max_trajectory_age_steps`` in flight (``_inflight_sema``): the engines stream across steps
    (``--partial-rollout --in-flight-batches`` age). Without it the refit waits for every
    generation in flight, so each batch drains to its longest sample.
    """
    a = "grpo.async_grpo"
    vllm_async = r.flag("policy.generation.vllm_cfg.async_engine", False)
    if not r.flag(f"{a}.enabled", False):
        if vllm_async:
            q.note("vllm_cfg.async_engine without async GRPO: requests served as they come, "
                   "the synchronous iteration")  # fmt: skip
        return
    megatron = dict(q.flags).get("--engine") == "megatron"
    if r.flag("policy.generation.colocated.enabled", True):
        if not megatron:
            raise SpecError(f"{r.where}: async GRPO colocated with inference runs only on the "
                            "Megatron generation backend (grpo.py async_grpo_train: 'Colocated "
                            "async GRPO is only supported for the Megatron generation "
                            "backend'); set policy.generation.backend megatron or "
                            "policy.generation.colocated.enabled false")  # fmt: skip
        q.convert("generation.colocated.enabled=true", "--groups",
                  f"{q.trainer_roles()}={dict(q.flags)['--gpus']}", "one group: the engine and "
                  "the policy share the GPUs, the engine standing down for each training step")
    age = r.integer(f"{a}.max_trajectory_age_steps", 1)
    q.convert(f"{a}.max_trajectory_age_steps={age}", "--staleness", age,
              "trajectories up to that many steps old; --placement async")  # fmt: skip
    q.set("--placement", "async")
    vllm_async = vllm_async or megatron  # Megatron-core's engine serves requests as they come
    in_flight = r.flag(f"{a}.in_flight_weight_updates", False)
    recompute = r.flag(f"{a}.recompute_kv_cache_after_weight_updates", False)
    if in_flight and vllm_async:
        q.set("--partial-rollout")
        q.convert(f"{a}.in_flight_weight_updates=true", "--in-flight-batches", age,
                  "the engines stream across refits, num_prompts_per_step x "
                  "max_trajectory_age_steps prompt groups in flight", default=1)  # fmt: skip
        q.note("recompute_kv_cache_after_weight_updates true: not modelled, rlmcost keeps the "
               "KV caches as NeMo RL's default does (no re-prefill)" if recompute else
               "recompute_kv_cache_after_weight_updates false: NeMo RL keeps the KV caches "
               "computed under the old weights, no re-prefill")  # fmt: skip
    elif in_flight:
        q.note("in_flight_weight_updates needs vllm_cfg.async_engine: the refit waits for the "
               "generations in flight (each batch drains)")  # fmt: skip
    if age > 1 and not (in_flight and vllm_async):
        q.note(f"max_trajectory_age_steps {age} without in-flight weight updates: NeMo RL warns "
               "that the refit stalls on the longest generation")  # fmt: skip
