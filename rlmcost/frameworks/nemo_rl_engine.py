"""NeMo RL import: the generation engine (``policy.generation``) and where it runs.

Split from :mod:`rlmcost.frameworks.nemo_rl` (the importer), which calls
:func:`import_engine`.
"""

from __future__ import annotations

from rlmcost.errors import SpecError
from rlmcost.frameworks.config import Reader
from rlmcost.frameworks.nemo_rl_megatron import megatron_generation
from rlmcost.frameworks.nemo_rl_vllm import engine_max_num_seqs, engine_switches
from rlmcost.frameworks.result import ImportedQuery

ENGINE_PRECISION = {"bfloat16": None, "bf16": None, "float16": "fp16", "fp16": "fp16",
                    "fp8": "fp8"}  # fmt: skip
"""``vllm_cfg.precision`` -> ``--rollout-dtype`` (bfloat16, the default, needs no flag)."""


def _engine_precision(r: Reader, q: ImportedQuery, v: str) -> None:
    """``vllm_cfg.precision``: NeMo RL's FP8 generation runs vLLM's FP8 W8A8 quantization
    (block-wise 128 x 128 E4M3 weights, dynamic activation scales), the weights re-quantized
    at each refit (nemo_rl/models/generation/vllm/quantization/fp8.py, ``init_fp8``,
    ``FP8_BLOCK_QUANT_KWARGS``). The LM head and any ``num_first_layers_in_bf16`` /
    ``num_last_layers_in_bf16`` stay in bf16 there; rlmcost counts every layer in FP8 (the LM
    head is 6.5 % of Llama-3.1-8B's parameters)."""
    precision = str(r.raw(f"{v}.precision", "bfloat16")).lower()
    if precision not in ENGINE_PRECISION:
        raise SpecError(f"{r.where}: {v}.precision {precision!r}: use bfloat16, float16 or fp8")
    dtype = ENGINE_PRECISION[precision]
    if dtype is not None:
        q.set("--rollout-dtype", dtype)
    kept = sum(r.integer(f"{v}.num_{end}_layers_in_bf16", 0, lo=0) for end in ("first", "last"))
    if dtype == "fp8" and kept:
        q.note(f"vllm_cfg keeps {kept} layer(s) in bf16; rlmcost counts every layer in FP8")


def _engine_kv_cache(r: Reader, q: ImportedQuery, v: str) -> None:
    """``vllm_cfg.kv_cache_dtype`` ("auto" in grpo_math_1B.yaml; "fp8" or "fp8_e4m3",
    nemo_rl/models/generation/vllm/config.py): ``--kv-cache-dtype fp8``. NeMo RL refuses an FP8
    KV cache without FP8 weights (``vllm_cfg.precision: fp8``), on the DTensor policy, with an
    async engine or with pipeline parallelism (nemo_rl/algorithms/grpo.py ``setup`` at 7ea279abf:
    four asserts), so the import does too."""
    kv = str(r.raw(f"{v}.kv_cache_dtype", "auto")).lower()
    if kv == "auto":
        return
    if kv not in ("fp8", "fp8_e4m3"):
        raise SpecError(f"{r.where}: {v}.kv_cache_dtype {kv!r}: NeMo RL takes auto, fp8 or "
                        "fp8_e4m3")  # fmt: skip
    refused = [why for bad, why in (
        (str(r.raw(f"{v}.precision", "bfloat16")).lower() != "fp8",
         "it needs FP8 weights (vllm_cfg.precision: fp8)"),
        (r.flag("policy.dtensor_cfg.enabled", False), "the DTensor policy does not take it"),
        (r.flag(f"{v}.async_engine", False),
         "async rollouts (vllm_cfg.async_engine, interfaces.py should_use_async_rollouts) "
         "do not take it"),
        (r.integer("policy.megatron_cfg.pipeline_model_parallel_size", 1) > 1,
         "it needs pipeline_model_parallel_size 1"),
    ) if bad]  # fmt: skip
    if refused:
        raise SpecError(f"{r.where}: {v}.kv_cache_dtype {kv}: NeMo RL refuses this config "
                        f"at setup (grpo.py asserts): {'; '.join(refused)}")  # fmt: skip
    q.set("--kv-cache-dtype", "fp8")


def _refit_transport(r: Reader, q: ImportedQuery) -> None:
    """``policy.generation.refit_transport`` with the engines apart (docs/guides/refit.md at
    7ea279abf): null is the packed NCCL broadcast rlmcost prices (perf.packed_refit);
    ``nccl_reshard`` (shard-to-shard for the FFN weights), ``nixl`` (a checkpoint engine over
    RDMA) and the sparse-delta transports are said, priced as the broadcast: an upper bound for
    large models (the reshard doc's "Expected Performance": DeepSeek-V3 2.39-2.83 s on H100, the
    broadcast 14 s; checkpoint-engine-refit.md: NIXL 9.25 s against NCCL's 14.21 s)."""
    transport = r.raw("policy.generation.refit_transport")
    if transport in (None, "null", "nccl"):  # refit_cfg configures the other transports only
        for key in [k for k in r.flat if k.startswith("policy.generation.refit_cfg.")]:
            r.raw(key)
        return
    q.note(f"policy.generation.refit_transport {transport}: not modelled; the refit is priced as "
           "NeMo RL's packed NCCL broadcast (an upper bound for large models: the NCCL reshard "
           "doc gives DeepSeek-V3 2.4-2.8 s against the broadcast's 14 s)")  # fmt: skip


def _real_quant_parts(cfg: str) -> tuple[str, str]:
    """(``--rollout-weights`` parts, activations: a4, a8 or a16) of a real-quant recipe's
    ``quant_cfg`` (docs/guides/quantization-aware-rl.md at 7ea279abf, "Verified
    Configurations"): ``nvfp4_experts.yaml`` the routed experts, W4A4; ``nano3_nvfp4_
    weightonly.yaml`` the MoE experts with attention, mixers, shared experts and routers kept
    bf16 by its ``real_quant_ignore`` list, W4A16; ``*mlp_only*`` the MLPs, W4A16;
    ``nvfp4_w4a8_fp8.yaml`` FP8 input activations, W4A8; any other (``nvfp4_a16.yaml``,
    ``NVFP4_DEFAULT_CFG``) the MLPs, NeMo RL's default ignore set keeping attention and output
    heads bf16, W4A4 unless its name says a16."""
    name = cfg.lower()
    parts = "experts" if ("experts" in name or "nano3" in name) else "mlp"
    if "w4a8" in name:
        return parts, "a8"
    return parts, "a16" if ("a16" in name or "weightonly" in name) else "a4"


_ACTIVATIONS = {
    "a4": "W4A4: activations quantized to NVFP4, FP4 GEMMs where the GPUs have FP4 tensor cores "
          "(B200, GB200; W4A16 through Marlin elsewhere: rlmcost.perf.fp4_gemm)",
    "a8": "W4A8 (FP8 input activations) priced as W4A16 (bf16 GEMMs; FP8 x FP4 GEMMs not "
          "modelled)",
    "a16": "W4A16",
}
"""How each real-quant activation setting (:func:`_real_quant_parts`) is priced."""


def _quantization_aware(r: Reader, q: ImportedQuery) -> None:
    """ModelOpt quantization-aware RL (docs/guides/quantization-aware-rl.md at 7ea279abf):
    ``policy.quant_cfg`` fake-quantizes the policy's forward (quantizer nodes, full-precision
    backward); ``policy.generation.quant_cfg`` alone runs vLLM's fake-quantized layers on
    folded bf16 weights; with ``policy.generation.real_quant: true`` vLLM serves packed NVFP4
    weights (E2M1, an FP8 scale per 16 elements) through its ModelOpt kernels, W4A16 (Marlin)
    or W4A4: ``--rollout-weights nvfp4:PARTS`` or ``nvfp4-w4a4:PARTS`` (:func:`_real_quant_parts`;
    W4A4's FP4 GEMMs on Blackwell, W4A16 elsewhere: :mod:`rlmcost.perf.fp4_gemm`). Said, not
    priced: the quantizers' work and the packed export's CPU round trip at refit
    (``real_quant_export_cpu_offload``)."""
    policy = r.raw("policy.quant_cfg")
    engine = r.raw("policy.generation.quant_cfg")
    real = r.flag("policy.generation.real_quant", False)
    for key in ("quant_calib_data", "quant_calib_size", "quant_batch_size",
                "quant_sequence_length"):
        r.raw(f"policy.{key}")
    r.raw("policy.generation.real_quant_ignore")
    r.raw("policy.generation.real_quant_export_cpu_offload")
    if policy is not None:
        q.note(f"policy.quant_cfg {policy}: ModelOpt quantization-aware training; the "
               "fake-quantized forward's quantizer ops are not priced (bf16 GEMMs as given)")
    if real:
        parts, acts = _real_quant_parts(str(engine or ""))
        q.convert(f"policy.generation.real_quant=true, quant_cfg={engine}", "--rollout-weights",
                  f"nvfp4-w4a4:{parts}" if acts == "a4" else f"nvfp4:{parts}", "vLLM serves "
                  f"NVFP4 weights (E2M1 + FP8 scale per 16, 9/16 B an element) for the {parts} "
                  "through ModelOpt's kernels, " + _ACTIVATIONS[acts])  # fmt: skip
    elif engine is not None:
        q.note(f"policy.generation.quant_cfg {engine}: vLLM runs fake-quantized layers on the "
               "folded bf16 weights: priced as bf16 (the quantizer ops not priced)")


_MTP_METHODS = ("deepseek_mtp", "mtp")
"""vLLM ``speculative_config.method`` values that draft with the checkpoint's MTP layer
(vllm/config/speculative.py: ``deepseek_mtp``, folded into ``mtp`` in later releases)."""


def _speculative(r: Reader, q: ImportedQuery, key: str) -> None:
    """vLLM's ``speculative_config`` passed through ``vllm_kwargs`` (the DeepSeek-V3 recipes
    at v0.7.0: method deepseek_mtp, num_speculative_tokens 1; commit 2369c0aec)."""
    n = r.integer(f"{key}.num_speculative_tokens", 0, lo=0)
    if not n:
        return
    method = r.text(f"{key}.method", None)
    if method in _MTP_METHODS:
        q.set("--speculative-tokens", n)
        q.note(f"speculative_config method {method}: {n} draft token(s) per step from the "
               "checkpoint's MTP layer, acceptance 0.85 (MTP_ACCEPTANCE, DeepSeek-V3 report "
               "§5.4.3)")  # fmt: skip
    else:
        q.note(f"speculative_config method {method!r}: only MTP drafts are read; give "
               "--speculative-tokens, --speculative-draft and --speculative-acceptance")


def import_engine(r: Reader, q: ImportedQuery) -> None:
    """``policy.generation``: the engine (vLLM's ``vllm_cfg``, or Megatron-core's with
    ``backend: megatron``, :mod:`rlmcost.frameworks.nemo_rl_megatron`) and where it runs:
    on the policy's GPUs (``colocated.enabled``, its sleep and the policy's offload around
    it) or on GPUs of its own (``colocated.resources``, ``--groups``)."""
    g = "policy.generation"
    _quantization_aware(r, q)
    backend = r.text(f"{g}.backend", "vllm")
    megatron = backend == "megatron"
    if megatron:
        tp, layout = megatron_generation(r, q)
    else:
        if backend != "vllm":
            q.note(f"generation.backend {backend}: rlmcost models a vLLM-style engine (nearest)")
        tp, layout = _vllm_engine(r, q, g)
    offload = dict(q.flags).get("--offload")
    # prepare_for_lp_inference moves the optimizer's states to the host before the log-prob
    # forwards, prepare_for_training back (dtensor_policy_worker.py, megatron_policy_worker.py
    # at 7ea279abf): colocated, the refit's offload does so already
    lp = r.flag("policy.offload_optimizer_for_logprob", False)
    if r.flag(f"{g}.colocated.enabled", True):
        for key in ("gpus_per_node", "num_nodes"):
            r.raw(f"{g}.colocated.resources.{key}")
        if not megatron:
            q.set("--sleep")
        if offload in (None, "optimizer"):  # grpo.py refit_policy_generation, colocated
            trainer = r.flag("policy.megatron_cfg.enabled", False)  # (CPU optimizer: stays)
            params = not megatron or "--rollout-tp" in dict(q.flags)  # megatron: shared
            q.set("--offload", f"{offload or 'optimizer-idle'}" + (",params-idle" if params
                  else "") + (",grads-idle" if trainer else ""))  # fmt: skip
        return
    _refit_transport(r, q)
    if offload is None:  # apart: the policy keeps its states (no refit offload)
        q.convert(f"policy.offload_optimizer_for_logprob={str(lp).lower()}", "--offload",
                  "optimizer-idle" if lp else "", "the optimizer's states on the host outside "
                  "the update" if lp else "the policy keeps its states (engines apart)")
    gpus = dict(q.flags)["--gpus"]
    per_node = r.integer(f"{g}.colocated.resources.gpus_per_node", None)
    nodes = r.integer(f"{g}.colocated.resources.num_nodes", None)
    if per_node is None:
        raise SpecError(f"{r.where}: generation.colocated.enabled is false: set "
                        "generation.colocated.resources.gpus_per_node")  # fmt: skip
    rollout = per_node * (nodes or 1)
    if rollout >= gpus:
        raise SpecError(f"{r.where}: {rollout} generation GPUs leave none of the cluster's "
                        f"{gpus} for training")  # fmt: skip
    q.engines_apart("generation.colocated.resources", f"rollout={rollout}[{layout}]",
                    gpus - rollout, "generation on GPUs of its own (colocated.enabled false), "
                    "training on the rest")  # fmt: skip




def _vllm_engine(r: Reader, q: ImportedQuery, g: str) -> tuple[int, str]:
    """``{g}.vllm_cfg`` and ``vllm_kwargs``: the vLLM engine's settings; its replica's GPUs
    and its ``--groups`` layout."""
    v = f"{g}.vllm_cfg"
    tp = r.integer(f"{v}.tensor_parallel_size", 1)
    q.set("--rollout-tp", tp)
    layout = f"tp={tp}"
    ep = r.integer(f"{v}.expert_parallel_size", 1)
    if ep > tp:  # vllm_generation.py: "vLLM's EP = DP * TP", vllm_dp_size = ep // tp
        if ep % tp:
            raise SpecError(f"{r.where}: {v}.expert_parallel_size {ep} is not a multiple of "
                            f"tensor_parallel_size {tp}: NeMo RL refuses it (vllm_generation.py)")
        q.convert(f"{v}.expert_parallel_size={ep}", "--rollout-tp", ep, f"GPUs of one engine: "
                  f"vLLM's EP = DP x TP = {ep // tp} x {tp} (vllm_generation.py)")  # fmt: skip
        q.convert(f"{v}.expert_parallel_size / tensor_parallel_size", "--dp-attention", ep // tp,
                  f"vLLM's {ep // tp} data-parallel ranks of TP {tp}, each attending for its own "
                  f"requests, the experts over all {ep} GPUs (rlmcost.perf.dp_attention)")
        tp, layout = ep, f"tp={ep};dp-attention={ep // tp}"
    elif ep > 1:
        q.note(f"{v}.expert_parallel_size {ep} = tensor_parallel_size: vLLM's experts over the "
               "TP ranks whole (--enable-expert-parallel), the bytes a GPU holds as under TP; "
               "priced as TP")  # fmt: skip
    if (pp := r.integer(f"{v}.pipeline_parallel_size", 1)) > 1:
        q.set("--rollout-pp", pp)
    q.set("--gpu-memory-utilization", r.fraction(f"{v}.gpu_memory_utilization", 0.6))
    _engine_precision(r, q, v)
    _engine_kv_cache(r, q, v)
    engine_switches(r, q, v)
    _speculative(r, q, f"{g}.vllm_kwargs.speculative_config")
    engine_max_num_seqs(r, q, g)
    return tp, layout
