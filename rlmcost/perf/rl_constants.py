"""Global constants for the RL step-time terms, each with a source and a plausible spread.

A :class:`Constant` has ``value`` (the default), ``low`` .. ``high`` (the spread its sources
show, for prediction intervals) and ``source`` (a short citation); the docstring under each
gives the figures and the derivation, and says "engineering estimate" where a number is derived
rather than read. Names carry the unit (:data:`UNIT_SUFFIXES`); dimensionless numbers end in
``_RATIO``, ``_FRACTION`` or ``_LOG_SIGMA``. Framework settings are :class:`EngineDefault`.
Weight bytes are bf16 (2 bytes per parameter); GB = 10**9 bytes. Parameter counts (Hugging Face
configs): Llama-3.1-8B 8.03e9, Llama-3.1-70B 70.55e9, DeepSeek-V3 671e9, Qwen2.5-3B 3.09e9,
Qwen2.5-7B 7.62e9, Qwen3-0.6B 0.596e9, Qwen3-8B 8.19e9, Qwen3-30B-A3B 30.5e9, Phi-3-vision 4.15e9.

Sources by short name: NeMo RL blogs, nvidia-nemo.github.io/blog 2025/07/21 (v0.3) and
2025/08/12 ("Journey of Optimizing Weight Transfer in Large MoE Models by 10x"); NeMo RL perf
summary, NVIDIA-NeMo/RL docs/about/performance-summary.md; vLLM blogs, blog.vllm.ai (2023-06-20
launch, 2024-09-05 v0.6.0, 2025-01-27 V1, 2025-10-26 sleep mode); verl, TRL, RL, vime, sglang,
BaM, nvbandwidth: GitHub issue or PR numbers of verl-project/verl, huggingface/trl,
NVIDIA-NeMo/RL, vllm-project/vime, sgl-project/sglang, ZaidQureshi/bam, NVIDIA/nvbandwidth.

Refit (trainer -> engine weight sync) is ``fixed_s + model_bytes / bytes_per_s`` with the full
bf16 model: each mechanism gathers full parameters per bucket (FSDP / Megatron), hands them over
(CUDA IPC or NCCL broadcast) and each engine rank's ``load_weights`` keeps its shard (NeMo RL
blog 2025-08-12 "How Refit is Done"; verl/workers/sharding_manager/fsdp_vllm.py; OpenRLHF
openrlhf/trainer/ray/ppo_actor.py ``_broadcast_to_vllm``).
"""

from __future__ import annotations

from rlmcost.errors import SpecError
from rlmcost.frozen import dataclass

UNIT_SUFFIXES = (
    "_BYTES_PER_S", "_S_PER_PARAM", "_S_PER_TENSOR", "_S_PER_NODE", "_S_PER_LAYER",
    "_PER_S", "_S", "_TOKENS", "_RATIO", "_FRACTION", "_LOG_SIGMA", "_BYTES_PER_PARAM",
)  # fmt: skip
DEFAULT_SUFFIXES = ("_TOKENS", "_SEQS", "_ENABLED")  # what an EngineDefault's name ends with


@dataclass(frozen=True)
class Constant:
    """A sourced global constant: ``value`` with its plausible ``low`` .. ``high`` spread."""

    value: float
    low: float
    high: float
    source: str

    def __post_init__(self) -> None:
        if not 0 < self.low <= self.value <= self.high:
            raise SpecError(
                f"constant needs 0 < low <= value <= high, got {self.low}, {self.value}, "
                f"{self.high}; fix the bounds"
            )
        if not self.source.strip():
            raise SpecError("constant needs a source; cite where the number comes from")

    def at(self, end: str) -> float:
        """The ``"low"``, ``"value"`` or ``"high"`` end (for interval predictions).

        >>> REFIT_NCCL_FIXED_S.at("high")
        0.6
        """
        if end not in ("low", "value", "high"):
            raise SpecError(f"unknown end {end!r}; use 'low', 'value' or 'high'")
        return float(getattr(self, end))


@dataclass(frozen=True)
class EngineDefault:
    """A framework default setting (not a measurement): its value and the file that sets it."""

    value: int | bool
    source: str


# --- 1. Weight refit / sync ------------------------------------------------------------------

REFIT_IPC_BYTES_PER_S = Constant(33.2e9, 10.08e9, 36.2e9, "NeMo RL blogs 2025-07-21, 2025-08-12")
"""Full-model bf16 bytes per second of a colocated CUDA-IPC refit.

CUDA IPC between Ray processes (NeMo RL update_weights_from_ipc_handles, slime colocate): each GPU
moves the whole model (refit blog 2025-08-12, 'How Refit is Done'). Least-squares line through NeMo
RL v0.3's three published refit times (H100, Megatron): Llama-3.1-8B 16.06 GB in 5 s, Llama-3.1-70B
141.1 GB in 14 s (v0.3 blog step tables), DeepSeek-V3 1342 GB in 47.2 s (refit blog Table 1):
0.03015 s/GB = 33.2 GB/s, intercept REFIT_IPC_FIXED_S (7.5, 11.3, 47.5 s). low: 70B all-in, 10.08
GB/s. high: 70B to DeepSeek-V3 marginal, 1200.9 GB / 33.2 s = 36.2 GB/s. slime Qwen3-30B-A3B, 61 GB
in ~3.0 s on 8xH200 (vllm-project/vime issue 175), is faster still.
"""

REFIT_IPC_FIXED_S = Constant(7.0, 1.0, 8.0, "NeMo RL blog 2025-07-21; RL issue 959")
"""Fixed seconds per colocated CUDA-IPC refit (Ray RPCs, handle exchange, barriers).

Intercept of the REFIT_IPC_BYTES_PER_S line (22.07 s - 0.03015 s/GB x 499.7 GB, the means).
high: 8B reruns of the recipe took 6-8 s (NVIDIA-NeMo/RL issue 959). low: engineering estimate,
the Ray dispatch of a one-node job (RAY_ACTOR_CALL_S x a few hundred calls), tensors packed."""

IPC_REBUILD_S_PER_TENSOR = Constant(1.8e-4, 1.8e-4, 4.5e-4, "NeMo RL blog 2025-08-12; vime #175")
"""Seconds per tensor to open one CUDA IPC handle on the engine side (unpacked refit).

torch.multiprocessing rebuild_cuda_tensor per IPC handle: ~0.18 ms each, measured in the NeMo RL
refit blog (2025-08-12, Part 1). high: vime issue 175, per-tensor handles vs flattened buckets on
Qwen3-30B-A3B, (11.35 - 2.5) s over 115 x 170 tensors = 0.45 ms. Only for one handle per tensor.
"""

REFIT_INPROCESS_BYTES_PER_S = Constant(29.6e9, 26.1e9, 60e9, "verl PR 116 (8xL20, TP4)")
"""Full-model bf16 bytes per second of an in-process (same-process) hybrid-engine resync.

verl hybrid engine, FSDP and vLLM in one process (verl/workers/sharding_manager/fsdp_vllm.py: full
state_dict gather then model.load_weights), measured in verl-project/verl PR 116 on 8xL20 (PCIe, no
NVLink), vLLM TP4: Qwen2.5-3B 6.17 GB 0.236 s, Qwen2.5-7B 15.23 GB 0.547 s, Llama-3-8B 16.06 GB
0.570 s. Line through 3B/8B: 9.89 GB / 0.334 s = 29.6 GB/s. low: 3B all-in 6.17 GB / 0.236 s.
high: engineering estimate, 2x on NVLink machines (the L20's FSDP all-gather runs over PCIe).
"""

REFIT_INPROCESS_FIXED_S = Constant(0.028, 0.01, 0.5, "verl PR 116 (8xL20, TP4)")
"""Fixed seconds per in-process hybrid-engine resync.

Intercept of the REFIT_INPROCESS_BYTES_PER_S line (0.236 s - 6.17 GB x 0.0338 s/GB; verl PR 116).
high: engineering estimate, per-step sleep/wake and cache re-init calls around the sync
(VLLM_WAKE_FIXED_S and Python loops over parameters).
"""

ENGINE_LOAD_WEIGHTS_BYTES_PER_S = Constant(14e9, 7e9, 28e9, "NeMo RL blog 2025-08-12 Table 1")
"""Shard bytes per second the engine's load_weights copies into its parameters.

vLLM model.load_weights on the engine rank, bytes of the rank's own shard: DeepSeek-V3 step 3
'generation parameter update' 1.5 s for 1342 GB / TP64 = 21 GB per executor (NeMo RL refit blog,
Table 1). low/high: engineering estimate, x0.5 / x2 (per-parameter Python weight_loader dispatch
dominates; its speed depends on tensor count).
"""

REFIT_NCCL_INTRA_NODE_BYTES_PER_S = Constant(21e9, 19.3e9, 22.9e9, "verl PR 116 (8xL20)")
"""Full-model bf16 bytes per second of an NCCL weight broadcast inside one node.

Non-colocated NCCL broadcast from trainer rank 0 to engine ranks in one node (OpenRLHF
_broadcast_to_vllm pattern), broadcast part only, verl PR 116 on 8xL20 PCIe: Qwen2.5-7B 15.23 GB /
0.789 s = 19.3 GB/s, Llama-3-8B 16.06 GB / 0.701 s = 22.9 GB/s.
"""

REFIT_NCCL_CROSS_NODE_BYTES_PER_S = Constant(1.5e9, 0.478e9, 1.76e9, "verl PR 7324; TRL #3557")
"""Full-model bf16 bytes per second of a rank-0 NCCL weight broadcast across nodes.

Per-parameter NCCL broadcast from one trainer rank to engines on other nodes: verl PR 7324 (A800,
Qwen3-8B 16.4 GB) full broadcast 11.0 s for 1+1 nodes = 1.49 GB/s and 34.26 s for 2+2 nodes = 0.48
GB/s (low); TRL vLLM server update_named_param, Qwen3-30B-A3B 61 GB in ~40 s on 8xH200 = 1.5 GB/s
(huggingface/trl issue 3557); high: OpenRLHF 70B transition 'exceeds ~80 s' in HybridFlow (arXiv
2409.19256) Fig. 14 as quoted in OpenRLHF issue 647, 141.1 GB / 80 s = 1.76 GB/s (an upper bound).
"""

REFIT_NCCL_FIXED_S = Constant(0.18, 0.15, 0.6, "TRL PR 5892, PR 5249")
"""Fixed seconds per NCCL weight sync (HTTP/RPC round trips, group setup, pause/resume).

Small-model syncs where bytes do not matter: TRL native vLLM weight transfer, Qwen3-0.6B on one node
~0.18 s (huggingface/trl PR 5892); Qwen2-0.5B server sync 0.6 s per-param HTTP (high) -> 0.15 s
batched (low) (huggingface/trl PR 5249).
"""

# --- 2. Engine sleep / wake ------------------------------------------------------------------

VLLM_WAKE_BYTES_PER_S = Constant(12.7e9, 11.3e9, 25e9, "vLLM sleep-mode blog 2025-10-26")
"""Bytes per second restored per GPU by a vLLM level-1 wake (weights back from host).

vLLM sleep level 1 wake_up: vllm/device_allocator/cumem.py maps memory and cudaMemcpy's the pinned
CPU backup to the GPU. vLLM blog 'Zero-Reload Model Switching with vLLM Sleep Mode' (2025-10-26,
A100, vLLM 0.11.0): wake Qwen3-0.6B (1.19 GB) 0.26 s, Phi-3-vision-128k (8.3 GB) 0.82 s -> slope
7.11 GB / 0.56 s = 12.7 GB/s; the BF16 ablation (0.27 s, 0.90 s) gives 11.3 GB/s (low). high: PCIe
Gen4 x16 pinned ceiling (PCIE_GEN4_X16_PINNED_BYTES_PER_S); the blog's 3-6 s for large TP4 models
agrees.
"""

VLLM_WAKE_FIXED_S = Constant(0.17, 0.1, 0.5, "vLLM sleep-mode blog 2025-10-26")
"""Fixed seconds per vLLM wake (re-mapping weight and KV-cache memory).

Intercept of the VLLM_WAKE_BYTES_PER_S line (0.26 s - 1.19 GB / 12.7 GB/s; the ablation pair gives
0.165 s): cuMemCreate/Map of weight and KV-cache regions. low: the same blog's A4000 small-model
wake ~0.1 s. high: engineering estimate for TP>1 engines, where wake_up is a collective_rpc over
every worker.
"""

VLLM_SLEEP_BYTES_PER_S = Constant(8e9, 3e9, 25e9, "vllm cumem.py; estimate")
"""Bytes per second offloaded per GPU by a vLLM level-1 sleep (weights to pinned host).

vLLM sleep level 1 offload: cumem.py allocates a fresh pinned host tensor per allocation
(torch.empty(..., pin_memory=True)) and cudaMemcpy's device -> host. No published sleep time was
found; engineering estimate: the wake path's 12.7 GB/s less the cost of page-locking new host memory
each sleep (~2/3). Level 2 discards weights (no copy), so its sleep costs VLLM_WAKE_FIXED_S only and
its weights return via refit.
"""

SGLANG_RELEASE_RESUME_S = Constant(0.3, 0.05, 2.0, "sglang #19442; estimate")
"""Seconds per SGLang release + resume pair (no weight bytes moved).

SGLang release_memory_occupation / resume_memory_occupation via torch_memory_saver: physical pages
are released and re-created with the same virtual addresses, no copy (sgl-project/sglang issue
19442: 'releasing, not offloading'); weights must then be re-sent by update_weights_from_tensor (a
refit). No timing was published; engineering estimate of the driver map/unmap calls plus the
scheduler drain, bounded above by vLLM's level-2 wake of a small model (0.85 s, vLLM sleep-mode
blog).
"""

# --- 3. Controller and data movement ---------------------------------------------------------

RAY_ACTOR_CALL_S = Constant(4.97e-4, 1.15e-4, 1.86e-3, "ray microbenchmark.json")
"""Seconds per synchronous Ray actor method call (single-controller dispatch).

Ray microbenchmark, ray-project/ray release/perf_metrics/microbenchmark.json: 1_1_actor_calls_sync
2011.9/s -> 0.497 ms; low 1_1_actor_calls_async 8663.7/s; high client__1_1_actor_calls_sync 537.8/s
(Ray client).
"""

RAY_OBJECT_STORE_PUT_BYTES_PER_S = Constant(19.86e9, 10.87e9, 28.84e9, "ray microbenchmark.json")
"""Bytes per second a driver puts batch data into the local Ray object store.

Ray microbenchmark.json single_client_put_gigabytes 19.86 +- 8.98 (mean +- std; low/high are mean -+
one std): local plasma object store writes.
"""

RAY_CROSS_NODE_BYTES_PER_S = Constant(3.17e9, 1.25e9, 12.5e9, "ray object_store.json")
"""Bytes per second of controller batch data moved between nodes through Ray.

Ray release/perf_metrics/scalability/object_store.json: a 1 GiB object broadcast to 50 nodes in
16.94 s = 50 x 1.074 GB / 16.94 s = 3.17 GB/s delivered. low/high: engineering estimate, the line
rate of a 10 Gb/s and a 100 Gb/s front-end NIC (Ray moves objects over TCP on the node's front-end
network, not over NCCL).
"""

CONTROLLER_DISPATCH_S_PER_NODE = Constant(0.125, 0.03, 0.125, "NeMo RL issue 1037")
"""Seconds of Ray task-submission skew per node per distributed call.

NeMo RL policy.train at >= 32 nodes: ranks start ~800 ms apart and the job-submission overhead was
~4 s for 32 nodes (4 s / 32 = 0.125 s per node per call); with a Ray compiled graph it fell below 1
s (low, 1 s / 32) (NVIDIA-NeMo/RL issue 1037).
"""

STEP_OVERHEAD_RESIDUAL_S = Constant(3.0, 2.0, 8.0, "NeMo RL v0.3 blog 2025-07-21")
"""Seconds per RL step outside the modelled phases (controller, data processing, rewards).

NeMo RL v0.3 blog (2025-07-21) GRPO step tables, total step time minus the listed phases (training +
refit + generation + log-probs): Llama-8B Megatron 112-109 = 3, 70B 147-144 = 3, 8B DTensor 122-118
= 4, 70B DTensor 230-222 = 8 (high), Qwen3-32B 213-211 = 2 (low), Qwen3-30B-A3B 167-163 = 4, 70B 16k
445-443 = 2: controller, data, advantages; not the verifier (in generation: perf.nemo_rl_env).
"""

# --- 4. Optimizer on the host, host link ----------------------------------------------------

CPU_ADAM_BYTES_PER_PARAM = Constant(28, 28, 28, "DeepSpeed csrc/adam/cpu_adam_impl.cpp")
"""Host-memory bytes DeepSpeedCPUAdam touches per parameter per step (fp32 state).

DeepSpeed csrc/adam/cpu_adam_impl.cpp Adam_Optimizer::Step_*: per fp32 parameter it reads param,
grad, exp_avg, exp_avg_sq (16 B) and writes param, exp_avg, exp_avg_sq (12 B); the bf16 copy back to
the device is a separate host-link transfer. Exact.
"""

CPU_ADAM_HOST_S_PER_PARAM = Constant(1.4e-10, 6.5e-11, 2.8e-10, "cpu_adam_impl.cpp; estimate")
"""Host seconds per parameter for one CPU Adam step (all of a node's ranks together).

DeepSpeedCPUAdam is memory-bandwidth bound (AVX, 5-7x faster than PyTorch CPU Adam:
deepspeed.ai/tutorials/zero-offload). Engineering estimate: CPU_ADAM_BYTES_PER_PARAM / achieved host
bandwidth, 28 B / 200 GB/s (two-socket 8-channel DDR4-3200, 409.6 GB/s peak at ~50 %); low 28 B /
430 GB/s (two-socket DDR5-4800, 614 GB/s peak at 70 %); high 28 B / 100 GB/s (cores not bound to
NUMA ranks: DeepSpeed's --bind_cores_to_rank tutorial change reports 1.3x on a whole ZeRO-Offload
step). Seconds per parameter for the whole host: ranks sharing a host share its bandwidth, so time =
params on the host x this, independent of core count once the channels are saturated.
"""

PCIE_GEN4_X16_PINNED_BYTES_PER_S = Constant(25e9, 20e9, 28.8e9, "BaM issue 54 (A100)")
"""Pinned host <-> device bytes per second per direction on PCIe Gen4 x16.

Measured peak pinned copy on A100 PCIe Gen4 x16: 25 GB/s of the 32 GB/s raw (ZaidQureshi/bam issue
54, BaM paper). low: engineering estimate, 80 % when the GPUs of a node copy at once through shared
root complexes. high: the protocol ceiling, 32 GB/s x 128/130 (encoding) x 256/280 (256-byte
payloads, ~24 bytes of TLP/DLLP overhead each) = 28.8 GB/s.
"""

PCIE_GEN5_X16_PINNED_BYTES_PER_S = Constant(50e9, 35.2e9, 52.8e9, "nvbandwidth issue 24")
"""Pinned host <-> device bytes per second per direction on PCIe Gen5 x16.

H100 PCIe Gen5 x16, NVIDIA nvbandwidth (NVIDIA/nvbandwidth issue 24): device_to_host_memcpy_sm 52.8
GB/s (high), host_to_device_memcpy_sm 35.2 GB/s (low); value: engineering estimate for copy-engine
transfers, twice Gen4's 25 GB/s.
"""

# --- 5. Inference engine ---------------------------------------------------------------------

VLLM_DECODE_STEP_OVERHEAD_S = Constant(1e-3, 2e-4, 3.8e-3, "vLLM blogs 2024-09-05, 2025-01-27")
"""Exposed engine CPU seconds per decode step with CUDA graphs (vLLM V1).

CPU time per engine step not hidden behind the GPU. high: vLLM v0.6.0 blog (2024-09-05) profile of
Llama-3-8B on 1xH100 before the fixes, scheduling 29 % vs GPU execution 38 % of the time, on a ~5 ms
GPU step (vLLM V1 blog 2025-01-27: 'as low as ~5ms') = 5 x 29/38 = 3.8 ms. value/low: engineering
estimate for V1 (persistent batch, separate EngineCore process, 1.7x over V0 from CPU-overhead cuts,
same blog).
"""

EAGER_LAUNCH_S_PER_LAYER = Constant(1e-4, 5e-5, 2e-4, "estimate (efficiency.py)")
"""Host seconds per dense layer per decode step without CUDA graphs.

Host time to launch a layer's kernels each step when the engine runs eagerly (enforce_eager, HF
generate) instead of replaying CUDA graphs; a step lasts at least the launches (rlmcost.perf.
eager_launch prices MoE layers apart). Engineering estimate: ~15 kernels per decoder layer (norms,
QKV, RoPE, attention, O-proj, residuals, gate-up, activation, down) x ~7 us PyTorch eager
dispatch + launch each (KERNEL_GAP_S in rlmcost/perf/efficiency.py is the 2 us launch part).
"""

VLLM_DECODE_HBM_FRACTION = Constant(0.75, 0.37, 0.96, "vLLM blogs 2024-09-05, 2025-01-27")
"""Weight-streaming HBM bandwidth of a decode step's GEMMs over the datasheet HBM bandwidth.

Llama-3-8B (16.06 GB) on H100 (3.35 TB/s): high, V1 blog GPU step ~5 ms -> 3.21 TB/s = 0.96 (GPU
time only); low, v0.6.0 blog 'one token every 13 ms under light load' -> 1.24 TB/s = 0.37 (CPU
overhead included). value: engineering estimate between them, below the ~0.9 of a streaming copy
(efficiency.py); pytorch-labs/gpt-fast README (batch 1, A100-80GB at 330 W) measures whole steps
at 1.40-1.48 TB/s = 0.69-0.73 of 2.04 TB/s (Llama-2-7B TP1, Llama-2-70B TP2). Used by the
engine's GEMMs (rlmcost/perf/generation.py); `rlmcost validate --engine` checks it.
"""

HF_GENERATE_SLOWDOWN_RATIO = Constant(14.0, 8.5, 24.0, "vLLM launch blog 2023-06-20")
"""How many times slower HF transformers generate is than vLLM (throughput ratio).

vLLM launch blog (blog.vllm.ai 2023-06-20): vLLM throughput 14x-24x HF Transformers generate with
one completion per request, 8.5x-15x with three parallel completions (LLaMA-7B A10G, LLaMA-13B
A100). Applies to padded static-batch generate (TRL use_vllm=False, OpenRLHF without vLLM engines):
time = vLLM time x this ratio.
"""

DEEPSPEED_HE_SPEEDUP_RATIO = Constant(9.0, 1.4, 9.0, "DeepSpeed-Chat blog (2308.01320)")
"""Generation speedup of DeepSpeed-Chat's Hybrid Engine over HF generate.

DeepSpeed-Chat blog (deepspeedai/DeepSpeed blogs/deepspeed-chat/README.md, arXiv 2308.01320): Hybrid
Engine generation 'up to 9x' the throughput of HuggingFace (15x vs Colossal-AI), OPT-1.3B on
8xA100-40G. low: the same blog's smallest end-to-end step-3 speedup over HuggingFace DDP (1.4x), a
lower bound since generation dominates step 3.
"""

VLLM_LARGE_GPU_MAX_NUM_BATCHED_TOKENS = EngineDefault(16384, "vllm/engine/arg_utils.py")
"""Prefill token budget per step (chunked prefill) of offline vLLM on H100-class GPUs.

vllm/engine/arg_utils.py EngineArgs.get_batch_defaults: UsageContext.LLM_CLASS on GPUs with >= 70
GiB that are not A100 (H100, H200, MI300X); 8192 for the OpenAI server.
"""

VLLM_MAX_NUM_BATCHED_TOKENS = EngineDefault(8192, "vllm/engine/arg_utils.py")
"""Prefill token budget per step of offline vLLM on A100 and smaller GPUs.

vllm/engine/arg_utils.py EngineArgs.get_batch_defaults: UsageContext.LLM_CLASS on other GPUs, A100
included (PR 17885: larger budgets slowed A100); 2048 for the OpenAI server.
"""

VLLM_LARGE_GPU_MAX_NUM_SEQS = EngineDefault(1024, "vllm/engine/arg_utils.py")
"""Concurrent sequences per vLLM engine on H100-class GPUs.

vllm/engine/arg_utils.py EngineArgs.get_batch_defaults: max_num_seqs 1024 on >= 70 GiB non-A100
GPUs, 256 otherwise.
"""

VLLM_PREFIX_CACHING_ENABLED = EngineDefault(True, "vllm/engine/arg_utils.py")
"""Whether a vLLM V1 engine caches shared prompt prefixes (the K samples of a prompt).

vLLM V1 enables prefix caching by default (vllm/engine/arg_utils.py, enable_prefix_caching None ->
True; V1 blog 2025-01-27 'Zero-Overhead Prefix Caching', < 1 % throughput loss at 0 % hit rate).
"""

# --- 6. Reasoning-response lengths (defaults when a run gives none) --------------------------

RESPONSE_MEAN_CEILING_TOKENS = Constant(5350, 1000, 8170, "verl docs; AReaL v0.1; NeMo RL v0.7")
"""Cap on the default mean, min(RESPONSE_MEAN_OVER_MAX_FRACTION x max, this): the median, (4,000 +
6,700) / 2, of run-average means of GRPO math runs capped at >= 16K. low: verl-recipe
async_flow/docs/performance.md@5f976c4 Qwen2.5-Math-7B, 16K, '1k'; verl docs/advance/fp8.md
Qwen3-30B-A3B-Base, 20K, ~4,000; AReaL_v0_1.md Fig. 1 R1-Distill-Qwen-1.5B, 24K, ~6,700 (curves
read off; full cites: rl_runs.json mean_response_len_source); high: NeMo RL v0.7 8,170 @ 40,960."""

RESPONSE_MEAN_OVER_MAX_FRACTION = Constant(0.70, 0.199, 0.795, "NeMo RL perf summary v0.7")
"""Mean response length over the configured maximum. NeMo RL performance summary v0.7 (H100, GRPO
math), 'G-Average Seq len' over 'T-Max Sequence Length': Qwen3-235B 5,719 / 8,192 = 0.70, Qwen3-32B
3,256 / 4,096 = 0.795 (high), Qwen3-30B-A3B 3,198 / 4,096 = 0.78, DeepSeek-V3 722 / 1,536 = 0.47,
Qwen3-30B-A3B 8,170 / 40,960 = 0.199 (low)."""

RESPONSE_LENGTH_LOG_SIGMA = Constant(0.67, 0.38, 1.0, "verl #2060; DeepScaleR; estimate")
"""Sigma of ln(response length), lognormal default. low: verl GSM8K GRPO log (verl issue 2060,
step 1: mean 288.7, max 963, min 87): ln(963/87) / (2 x 3.2) = 0.38, 3.2 the expected extreme z of
~1,000 draws. value: estimate for long chains of thought, where incorrect responses run ~3x longer
than correct ones (DeepScaleR blog): a half/half mixture of two sigma-0.38 lognormals whose medians
differ by ln 3 has sqrt(0.38^2 + (ln 3 / 2)^2) = 0.67. high: engineering estimate, 1.0."""

RESPONSE_CLIP_FRACTION = Constant(0.025, 0.001, 0.05, "AReaL v0.2 blog; Skywork-OR1 3.2.3")
"""Share of responses truncated at a long (>= 16K) cap beyond the lognormal tail (CLIP of
lognormal:MEAN,SIGMA,MAX,CLIP; verl's response_length/clip_ratio). high: AReaL_v0_2.md (AReaL
@4aef98d8; R1-Distill-Qwen-7B, 512 x 16, 27K cap) 'the truncation rate remained below 5%'; AReaL
algo_perf.md flags no_eos_ratio > 0.05, verl perf/best_practices.rst clip_ratio > 0.1. low:
Skywork-OR1 (arXiv 2505.22312) 3.2.3: at 32K 'typically not truncated', read as 1 in 1,000; at 8K
~40% (capped-mean regime). value: engineering estimate, the middle of 0 .. 5%."""


def constants() -> dict[str, Constant]:
    """Every :class:`Constant` of this module by name."""
    return {k: v for k, v in globals().items() if isinstance(v, Constant)}


def engine_defaults() -> dict[str, EngineDefault]:
    """Every :class:`EngineDefault` of this module by name."""
    return {k: v for k, v in globals().items() if isinstance(v, EngineDefault)}
