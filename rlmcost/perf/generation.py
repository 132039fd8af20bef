"""Predicted time of an inference engine's decode steps and prefill chunks (vLLM, SGLang).

One replica of the generation layout (``tp`` ranks, ``ep`` expert ranks) runs continuous batching
(Yu et al. 2022, Orca, OSDI; Kwon et al. 2023, vLLM, arXiv 2309.06180): every *decode step*
advances each in-flight sequence by one token, and admitted prompts are *prefilled* in chunks of
at most ``chunk_tokens`` tokens (vLLM ``max_num_batched_tokens``, chunked prefill; Agrawal et al.
2024, Sarathi-Serve, arXiv 2403.02310). The rollout timeline (:mod:`rlmcost.placement.rollout`)
says how many sequences are in flight at each step and at which contexts; this module prices
one step. Gemma 4's full-attention layers at their own widths: :mod:`rlmcost.perf.full_layers`.

**Decode step** with ``a`` sequences in flight whose contexts sum to ``C`` tokens, on one TP rank
(kernel by kernel, each timed by its shape with :class:`~rlmcost.perf.efficiency.Device`, so a
kernel costs max(bytes / achieved bandwidth, FLOPs / achieved compute) plus its launch gap):

* per layer, the GEMMs of the rank's TP shard with ``M = a`` rows (their weights stream at
  :data:`~rlmcost.perf.rl_constants.VLLM_DECODE_HBM_FRACTION` of the datasheet HBM bandwidth, not
  the ~0.9 of a streaming copy: a decode step's many skinny GEMMs do not reach a copy kernel's
  bandwidth; the published inference measurements of ``rlmcost validate --engine`` put 8B-70B
  decode steps at batch 1-8 on H100/H200 10-25 % slower than the copy bandwidth gives): QKV
  [a, (h + 2 h_kv) d_h / P_t, d], output [a, d, h d_h / P_t], FFN up (gate and up fused) and
  down; an MoE layer's router [a, E, d] and grouped expert GEMMs over the experts the step
  touches, ``E (1 - (1 - k/E)^a)`` of them in expectation under uniform routing, an upper
  bound (:func:`~rlmcost.perf.decode_kernels.expected_experts_touched`; the rank
  holds 1 / P_e of them), each with ``a k / touched`` rows, their weights streamed at the
  fused-MoE kernel's measured rate (:mod:`~rlmcost.perf.fused_moe`). At small ``a`` every
  GEMM is a weight-streaming (memory-bound) GEMV; at large ``a`` the FFN turns compute-bound;
* per layer, paged decode attention (FlashDecoding-class): it reads the in-flight sequences'
  KV cache, 2 h_kv d_h / P_t x ``C`` elements in the KV dtype, and does 4 h d_h / P_t x ``C``
  FLOPs: max of the two sides plus a launch gap; an MLA layer (DeepSeek-V2/V3) as vLLM runs it
  instead, and MoE routing kernels (:mod:`~rlmcost.perf.decode_kernels`);
* per layer, the memory-bound kernels on ``a`` tokens (two norms, two residual adds, the FFN
  activation, RoPE) as in :mod:`~rlmcost.perf.step_pass`;
* per layer two TP all-reduces of the [a, d] activations (Shoeybi et al. 2019), tiny messages
  whose time is almost all latency: alpha-beta with NCCL's tree or ring, whichever is faster
  (:mod:`~rlmcost.perf.collectives`); plus the vocabulary-parallel embedding's all-reduce;
* once per step the LM head [a, V / P_t, d], the all-gather of the [a, V] logits over the TP
  ranks, and the sampler reading fp32 logits (softmax, top-p: three passes of 4 V bytes);
* once per step the engine's CPU overhead ``step_overhead_s`` (scheduling, input
  preparation, detokenization not hidden behind the GPU): an assumption of 1 ms, the order of
  the idle time measured in synchronous continuous batching (Hugging Face, "Asynchronous
  continuous batching" 2025: the GPU idle 24 % of an 8B, batch-32 decode on H200, about 1 ms of
  a ~4 ms step; vLLM v0.6.0 release blog 2024-09-05: CPU scheduling and output processing took
  most of a Llama-3-8B step on H100 before multi-step scheduling);
* per step and per sequence in flight, ``per_sequence_s`` of host time that grows with the
  batch (:data:`VLLM_HOST_S_PER_SEQUENCE`, vLLM's default; 0 for engines whose per-request
  work is not on the step's critical path): vLLM's Python scheduler, input preparation and
  output processing walk every running request each step (``vllm/v1/core/sched/scheduler.py``
  ``schedule`` / ``update_from_output``, ``vllm/v1/engine/output_processor.py``: incremental
  detokenization, the sampled token's logprob that RL frameworks request). The GPU kernels
  are not where it comes from: the same kernels under a C++ runtime (TensorRT-LLM, the
  ``nim_bench_1.0`` rows of ``rlmcost validate --engine``) predicted no faster at 25-50 than 1-5.

**Prefill chunk** of ``c`` prompt tokens (``c / S`` whole prompts of ``S`` tokens): the same
GEMMs with ``M = c``, a FlashAttention forward over each prompt's causal pairs
(:meth:`~rlmcost.perf.efficiency.Device.flash_attention_s`), the KV-cache writes, the
memory-bound kernels and the TP all-reduces of [c, d], and the LM head on the last position of
each prompt only. A batch of ``n`` prompt tokens runs as ``floor(n / chunk)`` full chunks and
one remainder. A prompt longer than a chunk (a long prompt, or a preempted sequence's context
recomputed, :mod:`rlmcost.placement.paged`) is prefilled chunk by chunk, each chunk's queries
attending to the KV cache of the chunks before it and causally within itself (vLLM chunked
prefill: the attention backend's ``cu_seqlens_k`` / ``seqused_k`` span the whole computed
context, ``vllm/v1/attention/backends/flash_attn.py``), so its chunks together do the whole
prompt's S (S + 1) / 2 causal pairs, c (S + 1) / 2 per chunk of c tokens on average.

**Speculative decoding** (``speculation``, :mod:`rlmcost.perf.speculative`): an engine step
runs the draft ``N`` times on the ``a`` sequences (its own decode step each: the MTP block as a
one-layer model plus its [d, 2d] projection, or a draft model; no CPU overhead of its own),
then the target's step above on ``a (N + 1)`` rows (GEMMs, kernels, all-reduces and LM head
over every verified position; attention FLOPs N + 1 times per cached token, its KV bytes read
once), and emits ``1 + sum P^i`` tokens per sequence; :meth:`Engine.decode_step_parts` gives
the step's seconds over those tokens, so the rollout timeline, which advances one token per
step, stays the same. The draft also prefills each prompt.

Prefix caching (a group's K samples share their prompt) is the rollout timeline's: a sample
whose group's prompt is cached prefills only its tail (:mod:`rlmcost.placement.prefix_share`,
:mod:`rlmcost.placement.prefills`), priced here as a chunk of the prompt.

Suppressed: the mixing of prefill chunks into decode steps (each is priced alone, reading the
weights once more), pipeline-parallel engine sends, and CUDA-graph savings on launch gaps.

The roofline bound of a step (:mod:`rlmcost.timing`) reads every weight once, the input
embedding table included, of which a step only gathers ``a`` rows; so the kernel sum here is at
least the bound less the embedding's bytes at HBM bandwidth (kernels read the other weights and
the KV cache, do at least the bound's FLOPs, at efficiencies at most 1), and the rollout
timeline takes the larger of the two per step."""

from __future__ import annotations

from dataclasses import replace
from functools import cached_property

from rlmcost.arch import Arch
from rlmcost.errors import SpecError
from rlmcost.parallel.comm import Collective
from rlmcost.perf import decode_kernels as dk
from rlmcost.perf.attention_shapes import prefill_flops
from rlmcost.perf.collectives import collective_time_s, link
from rlmcost.perf.dp_attention import attention_rows, engine_shard
from rlmcost.perf.efficiency import Device
from rlmcost.perf.engine_host import STEP_OVERHEAD_S, VLLM_HOST_S_PER_SEQUENCE  # noqa: F401
from rlmcost.perf.engine_step import (  # noqa: F401 - re-exported
    CHUNK_TOKENS,
    LOGITS_BYTES,
    DecodeStep,
    EngineOptions,
    packed_devices,
    weight_streaming_device,
)
from rlmcost.perf.fp4_gemm import quantize_s
from rlmcost.perf.full_layers import full_decode, full_gemms_s, full_prefill_s, shared_gemms_s
from rlmcost.perf.fused_moe import fused_moe_device
from rlmcost.perf.linear_decode import (
    gate_gemms_s,
    linear_gemms_delta_s,
    linear_prefill_core_s,
    linear_state_s,
)
from rlmcost.perf.speculative import Speculation


class Engine:
    """One generation replica of ``arch`` on ``tp`` x ``ep`` ranks of ``device``'s hardware.

    ``value_head``: the step also runs a d x 1 head (a shared actor-critic backbone).
    ``speculation``: the engine decodes speculatively (module docstring).
    """

    def __init__(
        self,
        arch: Arch,
        device: Device,
        tp: int = 1,
        ep: int = 1,
        kv_bytes: int = 2,
        activation_bytes: int = 2,
        options: EngineOptions | None = None,
        value_head: bool = False,
        speculation: Speculation | None = None,
    ):
        if tp < 1 or ep < 1:
            raise SpecError(f"engine tp={tp}, ep={ep} must be positive integers")
        self.arch = arch
        self.device = device
        self.tp = tp
        self.ep = ep
        self.kv_bytes = kv_bytes
        self.x = activation_bytes
        self.options = options or EngineOptions()
        self.value_head = value_head
        self.shard = engine_shard(arch, tp, self.options.attention_dp)  # perf.dp_attention
        self.gemm_device = weight_streaming_device(device)
        self.attention_device, self.ffn_device, self.moe_device = packed_devices(  # 4-bit
            self.gemm_device, fused_moe_device(device, self.gemm_device), self.options.packed)
        self._gemm_cache: dict[int, float] = {}
        self._chunk_cache: dict[tuple[int, int], float] = {}
        self._fixed_cache: dict[int, float] = {}
        self.speculation = speculation
        self._spec_cache: dict[int, tuple[float, float]] = {}
        self._draft = None if speculation is None else Engine(
            speculation.draft, device, tp, ep, kv_bytes, activation_bytes,
            replace(self.options, step_overhead_s=0.0, packed=None),
        )  # fmt: skip

    # -- collectives --------------------------------------------------------------------------

    def _all_reduce_s(self, nbytes: float) -> float:
        hw = self.device.hardware
        lk = link(hw, intra_node=self.tp <= hw.gpus_per_node)
        return collective_time_s(Collective.ALL_REDUCE, nbytes, self.tp, lk, self.options.algorithm)

    def _all_gather_s(self, nbytes: float) -> float:
        hw = self.device.hardware
        lk = link(hw, intra_node=self.tp <= hw.gpus_per_node)
        return collective_time_s(Collective.ALL_GATHER, nbytes, self.tp, lk)

    # -- one layer's GEMMs and kernels for m tokens ---------------------------------------------

    def _layer_gemms_s(self, m: int) -> float:
        """GEMM seconds of one layer (dense, and MoE when the model has MoE layers, weighted
        by their counts) for ``m`` tokens, summed over the model's layers."""
        arch, sh, dev, n = self.arch, self.shard, self.gemm_device, self.options.attention_dp
        ad, fd = self.attention_device, self.ffn_device  # packed or not (4-bit engines)
        d, q, kv = int(arch.d_model), int(sh.q_width), int(sh.kv_width)
        p, ma = arch.ffn_kind.projections, attention_rows(m, n)  # DP attention: its rows
        if arch.is_mla:
            attn = dk.mla_layer_gemms_s(ad, arch, self.tp // n, ma, self.x)
        else:
            attn = ad.gemm_s(ma, q + 2 * kv, d) + ad.gemm_s(ma, d, q)
        total = full_gemms_s(arch, sh, ad, ma, attn) + shared_gemms_s(arch, sh, (ad, fd), (ma, m))
        dense = int(arch.n_dense_layers) if arch.is_moe else int(arch.n_layers)
        free = int(arch.n_ffn_free_layers)  # Nemotron-H's mixer-only layers: no FFN
        if dense:
            ff = int(sh.d_ff)
            ffn = fd.gemm_s(m, (p - 1) * ff, d) + fd.gemm_s(m, d, ff)
            total += dense * (attn + ffn) - (0 if arch.is_moe else free * ffn)
        moe = int(arch.n_moe_layers) if arch.is_moe else 0
        if moe:
            e, k = int(arch.n_experts), int(arch.top_k)
            tt = dk.expected_experts_touched(e, k, m)  # experts the step touches
            local, rows = max(1, round(tt / self.ep)), max(1, -(-m * k // max(1, round(tt))))
            de, w, lat = int(sh.d_expert), int(arch.expert_width), int(arch.moe_latent)
            layer = attn + dev.gemm_s(m, e, d)
            fm, fused = dk.FUSED_MOE_MMA_ROWS, self.moe_device  # perf.fused_moe
            layer += (fused.gemm_s(rows, (p - 1) * de, w, local, fm)
                      + fused.gemm_s(rows, w, de, local, fm))  # fmt: skip
            if fused.fp4:  # W4A4: the [m, d] input quantized once, before the dispatch
                layer += quantize_s(fused, m * d)  # (perf.fp4_gemm)
            if lat:  # latent fc1/fc2: vLLM's ReplicatedLinear, whole on each TP rank
                layer += fd.gemm_s(m, lat, d) + fd.gemm_s(m, d, lat)
            if arch.n_shared_experts:
                ds = int(sh.d_shared_expert) * int(arch.n_shared_experts)
                layer += fd.gemm_s(m, (p - 1) * ds, d) + fd.gemm_s(m, d, ds)
            total += moe * layer - free * (layer - attn)
        return total + linear_gemms_delta_s(arch, sh, ad, m) + gate_gemms_s(arch, sh, dev, m)

    def _elementwise_s(self, m: int) -> float:
        """Norms, residual adds, FFN activation and RoPE of ``m`` tokens over all layers."""
        arch, sh = self.arch, self.shard
        d, x, p = int(arch.d_model), self.x, arch.ffn_kind.projections
        width = int(sh.d_expert) * int(arch.top_k) if arch.is_moe else int(sh.d_ff)
        per_token = 2 * 2 * d * x + 2 * 3 * d * x + p * width * x
        kernels = 5
        if not arch.n_positions:
            per_token += 2 * (int(sh.q_width) + int(sh.kv_width)) * x
            kernels += 1
        out = int(arch.n_layers) * self.device.elementwise_s(m * per_token, kernels)
        if arch.is_mla:
            n = self.options.attention_dp
            extra = dk.mla_extra_kernels_s(self.device, arch, self.tp // n, attention_rows(m, n),
                                           self.x)  # fmt: skip
            out += int(arch.n_layers) * extra
        if arch.is_moe:
            out += int(arch.n_moe_layers) * dk.moe_routing_s(self.device.defaults.kernel_gap_s)
        return out

    def _tp_s(self, m: int) -> float:
        """The two all-reduces per layer and the embedding's, of [m, d] activations."""
        if self.tp == 1:
            return 0.0
        ar = self._all_reduce_s(m * int(self.arch.d_model) * self.x)
        return (2 * int(self.arch.n_layers) + 1) * ar

    def _head_s(self, rows: int) -> float:
        """LM head on ``rows`` positions, the logits' all-gather and the sampler (or a d x 1
        value head beside it)."""
        arch, dev = self.arch, self.device
        d, v = int(arch.d_model), int(self.shard.vocab)
        out = self.gemm_device.gemm_s(rows, v, d)
        out += dev.elementwise_s(3 * rows * int(arch.vocab) * LOGITS_BYTES, 3)
        if self.tp > 1:
            out += self._all_gather_s(rows * v * self.tp * self.x)
        if self.value_head:
            out += self.gemm_device.gemm_s(rows, 1, d)
        return out

    # -- decode --------------------------------------------------------------------------------

    @cached_property
    def _attention_per_context_token(self) -> tuple[float, float]:
        """(compute, memory) seconds of decode attention per cached token, all layers."""
        sh, dev = self.shard, self.device
        layers: float = int(self.arch.n_softmax_layers)  # linear-attention layers: no KV
        if self.arch.has_window:  # the sliding layers read their window (engine_step)
            layers -= int(self.arch.n_sliding_layers) * (1 - self.options.window_read)
        layers /= self.options.attention_dp  # a GPU attends for 1 / N of the contexts
        if self.arch.is_mla:
            tp = self.tp // self.options.attention_dp
            f, b = dk.mla_decode_attention_per_token(self.arch, tp, self.kv_bytes)
            flops, nbytes = f * layers, b * layers
            if self.arch.index_topk is not None:  # DSA: the top k (window_read), the indexers
                flops, nbytes = dk.dsa_decode_per_token(self.arch, flops, nbytes, self.options)
        else:
            flops, nbytes = full_decode(self.arch, sh, 4 * int(sh.q_width) * layers, 2 * int(
                sh.kv_width) * self.kv_bytes * layers, self.kv_bytes, self.options.attention_dp)
        p = dev.defaults
        compute = flops / (dev.peak_flops_per_s * p.gemm_efficiency)
        return compute, dev.memory_s(nbytes)

    def decode_step(self, active: int, context_tokens: int) -> DecodeStep:
        """One decode step with ``active`` sequences in flight whose contexts sum to
        ``context_tokens`` (module docstring)."""
        if active < 1 or context_tokens < active:
            raise SpecError(f"a decode step needs at least one sequence and one cached token "
                            f"each (got {active} sequences, {context_tokens} tokens)")
        c, m = self._attention_per_context_token
        gap = self.device.defaults.kernel_gap_s
        attention = max(c, m) * context_tokens + int(self.arch.n_layers) * gap
        attention += linear_state_s(self.arch, self.shard, self.device, active, self.x,
                                    self.options.state_bytes)  # fmt: skip
        per_scheduler = attention_rows(active, self.options.attention_dp)  # one per DP rank
        return DecodeStep(
            gemm_s=self._gemms(active),
            attention_s=attention,
            elementwise_s=self._elementwise_s(active),
            tp_comm_s=self._tp_s(active),
            head_s=self._head_s(active),
            overhead_s=self.options.step_overhead_s + self.options.per_sequence_s * per_scheduler,
        )

    def _gemms(self, m: int) -> float:
        if m not in self._gemm_cache:
            self._gemm_cache[m] = self._layer_gemms_s(m)
        return self._gemm_cache[m]

    def _fixed_s(self, m: int) -> float:
        """The parts of a decode step that depend on the in-flight count only (memoized: a
        timeline asks for each count at many steps)."""
        if m not in self._fixed_cache:
            step = self.decode_step(m, m)
            c, mem = self._attention_per_context_token
            self._fixed_cache[m] = step.total_s - max(c, mem) * m
        return self._fixed_cache[m]

    def decode_step_parts(self, active: int) -> tuple[float, float]:
        """(fixed seconds, seconds per context token) of a decode step with ``active``
        sequences in flight: its time is linear in the contexts' sum (:meth:`decode_step`).
        Speculative: per token emitted (:meth:`_speculative_parts`)."""
        if self.speculation is not None:
            return self._speculative_parts(active)
        c, m = self._attention_per_context_token
        return self._fixed_s(active), max(c, m)

    def _speculative_parts(self, active: int) -> tuple[float, float]:
        """(fixed, per context token) seconds of a speculative step over the tokens it emits
        (:meth:`~rlmcost.perf.speculative.Speculation.step_parts`): the target's step on
        ``active (N + 1)`` rows, ``N`` draft steps on ``active`` rows."""
        if active in self._spec_cache:
            return self._spec_cache[active]
        spec, draft = self.speculation, self._draft
        assert spec is not None and draft is not None
        rows = active * (spec.tokens + 1)
        verify = (self._gemms(rows) + int(self.arch.n_layers) * self.device.defaults.kernel_gap_s
                  + self._elementwise_s(rows) + self._tp_s(rows) + self._head_s(rows)
                  + self.options.step_overhead_s + self.options.launch_s)  # fmt: skip
        d_fixed, d_per_token = draft.decode_step_parts(active)
        if spec.mtp:  # the projection M_k [d, 2d], replicated (vLLM deepseek_mtp.py eh_proj)
            d = int(self.arch.d_model)
            d_fixed += self.gemm_device.gemm_s(active, d, 2 * d)
        out = spec.step_parts(verify, self._attention_per_context_token, (d_fixed, d_per_token))
        self._spec_cache[active] = out
        return out

    def decode_step_s(self, active: int, context_tokens: float) -> float:
        """Seconds of one decode step (:meth:`decode_step`'s total, at least
        :meth:`launch_floor_s`)."""
        fixed, per_token = self.decode_step_parts(active)
        return max(fixed + per_token * context_tokens, self.launch_floor_s(active))

    def launch_floor_s(self, active: int) -> float:
        """The least a decode step with ``active`` sequences takes on the host: eager kernel
        launches (``launch_s``, :mod:`rlmcost.perf.eager_launch`: the GPU waits for them, the
        host overheads come on top; a speculative step carries them in its parts instead) and
        host work that runs beside the GPU (``overlapped_s_per_sequence``,
        :func:`rlmcost.perf.engine_host.host_options`: a pipeline stage, per emitted token);
        0 with CUDA graphs and nothing overlapped."""
        o = self.options
        active = attention_rows(active, o.attention_dp)  # each rank's scheduler: its share
        beside = o.overlapped_s_per_sequence * active
        if self.speculation is not None:
            return beside / self.speculation.tokens_per_step
        if not o.launch_s:
            return beside
        return max(o.launch_s + o.step_overhead_s + o.per_sequence_s * active, beside)

    # -- prefill -------------------------------------------------------------------------------

    def chunk_s(self, tokens: int, prompt: int) -> float:
        """One prefill chunk of ``tokens`` prompt tokens, prompts of ``prompt`` tokens."""
        key = (tokens, prompt)
        if key in self._chunk_cache:
            return self._chunk_cache[key]
        if tokens < 1 or prompt < 1:
            raise SpecError(f"prefill chunk of {tokens} tokens / prompt {prompt} is empty")
        sh, dev = self.shard, self.device
        n = self.options.attention_dp  # perf.dp_attention
        layers = int(self.arch.n_softmax_layers) / n
        prompts = -(-tokens // prompt)
        flops, indexer = prefill_flops(self.arch, int(sh.n_heads), tokens, prompt)
        attention = layers * dev.flash_attention_s(flops, backward=False)
        attention += dev.flash_attention_s(indexer, backward=False)  # DSA's indexers
        kv_write = layers * dev.memory_s(tokens * int(sh.kv_cache_width) * self.kv_bytes) + \
            full_prefill_s(self.arch, sh, dev, (tokens, prompt), flops, self.kv_bytes, n)  # Gemma 4
        gpu = (
            self._layer_gemms_s(tokens) + attention + kv_write + self._elementwise_s(tokens)
            + self._tp_s(tokens) + self._head_s(prompts)
            + linear_prefill_core_s(self.arch, sh, dev, tokens, self.x)
        )  # fmt: skip
        total = max(gpu, self.options.launch_s) + self.options.step_overhead_s
        self._chunk_cache[key] = total
        return total

    def prefill_s(self, tokens: int, prompt: int) -> float:
        """Prefill of ``tokens`` prompt tokens in chunks of at most ``chunk_tokens``."""
        if tokens <= 0:
            return 0.0
        chunk = self.options.chunk_tokens
        full, rest = divmod(tokens, chunk)
        out = full * self.chunk_s(chunk, prompt) if full else 0.0
        draft = self._draft.prefill_s(tokens, prompt) if self._draft is not None else 0.0
        return out + (self.chunk_s(rest, prompt) if rest else 0.0) + draft
