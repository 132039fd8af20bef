"""DeepSpeed-Chat's step-3 training phase at the FLOP rate its authors measured.

DeepSpeed-Chat (DeepSpeedExamples applications/DeepSpeed-Chat, step3_rlhf_finetuning) trains
the actor and the critic as Hugging Face models (OPT in the blog) under DeepSpeed ZeRO-3 in
fp16: eager attention with the [s, s] scores in HBM (transformers' OPTAttention), module-by-module
parameter fetches with ``stage3_max_live_parameters`` = ``stage3_prefetch_bucket_size`` = 3e7
elements (dschat/utils/ds_utils.py ``get_train_ds_config``), and the largest batch that fits
(BenckmarkSetting.md), so the allocator runs near full. rlmcost's kernel model
(:mod:`~rlmcost.perf.step_pass`, the time of Megatron-LM's fused kernels; it matches the
Megatron-LM A100 rows of ``rlmcost validate``) prices that phase at about 0.7 of the A100's peak
in hardware FLOPs, while the DeepSpeed-Chat blog measured about 0.32 (Figure 6 below): the
engine's Python and memory overheads are not in the kernel model. A DeepSpeed-Chat training
step therefore takes at least its FLOPs, counted as DeepSpeed-Chat counts them
(:func:`dschat_train_flops`), over the GPUs' dense peak times
:data:`DSCHAT_TRAIN_PEAK_FRACTION` (:func:`dschat_train_floor_s`). Its forwards (the actor's
old log-probs, the reference, the critic's values and the reward, the same modules under the
same ZeRO-3 engines) take at least their FLOPs as perf.py counts a forward
(:func:`dschat_forward_flops`) at the same rate. That rate for the forwards is an assumption:
Figure 6 does not time them. Its generation time is generate() alone (the Hybrid Engine's gather
included) and its training time the ``train_rlhf`` loop alone: ppo_trainer.py
``generate_experience`` stops ``generate_time`` before the four forwards, and step 3's main.py
starts ``training_start`` after ``generate_experience`` returns ("it is an approximation, we did
not include, e.g., rw forward time etc"; DeepSpeedExamples 81a8521f, the first perf.py, through
HEAD). Figures 6 and 7 together bound them: OPT-66B on 16 GPUs spends 2.31 s of generation and
1.87 s of training per pair and GPU at Figure 6's rates, of the 4.85 s per pair and GPU that
Figure 7's 3.3 sequences/s give, leaving 0.67 s for the forwards, which take 1.37 s at this rate
(the rows' assumptions give the arithmetic; tests/test_deepspeed_chat_rate.py pins it).

The same stack, Hugging Face models under DeepSpeed ZeRO, trains in OpenRLHF (openrlhf/models/
actor.py, openrlhf/utils/deepspeed.py), whose preset says so
(``Behaviour.deepspeed_hf_trainer``): its steps get the same floor, measured on DeepSpeed-Chat's
blog runs, not on OpenRLHF's. They do not get DeepSpeed-Chat's exposed gathers: OpenRLHF's
ZeRO config (openrlhf/utils/deepspeed_utils.py ``get_train_ds_config`` at commit dbdd43b0) sets
``stage3_prefetch_bucket_size`` and ``stage3_max_live_parameters`` to "auto", which DeepSpeed
drops for its defaults 5e7 and 1e9 (deepspeed/runtime/config_utils.py
``DeepSpeedConfigModel``), so the next weights are prefetched under compute. OpenRLHF's own
benchmark (benchmark/README.md at dbdd43b0) cannot check the rate: its TFLOPs columns are
openrlhf/utils/perf.py's formula at full-length sequences over every GPU of the run.
"""

from __future__ import annotations

from fractions import Fraction

from rlmcost.arch import Arch
from rlmcost.errors import SpecError
from rlmcost.perf.measured_rate import measured_rate_s
from rlmcost.perf.rl_constants import Constant

DSCHAT_TRAIN_PEAK_FRACTION = Constant(0.32, 0.20, 0.354, "DeepSpeed-Chat blog Figure 6")
"""Achieved training FLOP/s of DeepSpeed-Chat's step 3 over the A100's dense fp16 peak.

DeepSpeed blog blogs/deepspeed-chat/README.md (arXiv 2308.01320), Figure 6 "RLHF Generation,
training, and effective throughput with DeepSpeed-HE for different model sizes"
(blogs/assets/images/Throughputs-OPT.png), training throughput per GPU in TFLOP/s as
dschat/utils/perf.py ``print_throughput_step3`` counts it (:func:`dschat_train_flops`): OPT-1.3B
62.9, 6.7B 100.7, 13B 97.3, 30B 103.6, 66B 110.4, 175B 74.4, over the A100's 312 TFLOP/s:
0.202, 0.323, 0.312, 0.332, 0.354, 0.238. value: the median of the six, (0.312 + 0.323) / 2 =
0.317, rounded to 0.32; low 0.20 (1.3B, the smallest GEMMs), high 0.354 (66B).
"""


HYBRID_ENGINE_LAUNCH_S_PER_LAYER = Constant(
    3.68e-4, 3.43e-4, 4.08e-4, "DeepSpeedExamples 3a77097a step-3 training log, OPT-1.3B")
"""Host seconds per decoder layer of one Hybrid Engine forward (a decode step or the prefill):
Hugging Face ``generate`` driving DeepSpeed-Inference's layers from Python without CUDA graphs.

DeepSpeedExamples commit 3a77097a (2023-04-21), applications/DeepSpeed-Chat/training/
step3_rlhf_finetuning/training_log_output/actor_opt-1.3b_critic_opt-350m_globalBatchSize64.log:
the Hybrid Engine's own timer (hybrid_engine.py ``eval``, "Generate time": generate() less the
gather, none under ZeRO-2) over the 476 steps of OPT-1.3B (24 layers, inference TP 1,
``--per_device_generation_batch_size 4``, 256 prompt + 256 answer tokens, so 256 forwards per
generate()) is 2.52 s median, 2.36 s fastest and 2.76 s at the 90th percentile (the first step's
5.26 s, which allocates the workspace, left out). The GPU part of such a step is small (OPT-1.3B's
2.6 GB of fp16 weights read per step at the 32 GB GPU's 900 GB/s: 2.9 ms of the 9.8 ms), so the
step is the host's: value (2.52 / 256 - STEP_OVERHEAD_S) / 24 = 0.368 ms per layer, low from the
fastest step (0.343 ms), high from the 90th percentile (0.408 ms), STEP_OVERHEAD_S (1 ms,
rlmcost/perf/engine_host.py) being the step's fixed host work. Assumes the host time grows with
the layers (the Python per DeepSpeed-Inference layer: its qkv, attention, output and MLP ops
called one by one each forward) and is alike on the A100 hosts of the blog's runs (x86, host
factor 1); the log's hosts are not named.
"""


def hybrid_engine_launch_s(arch: Arch) -> float:
    """Host seconds of one Hybrid Engine forward's layers:
    :data:`HYBRID_ENGINE_LAUNCH_S_PER_LAYER` per decoder layer, the least a decode step takes
    (``EngineOptions.launch_s``, :meth:`~rlmcost.perf.generation.Engine.launch_floor_s`).

    >>> from rlmcost.specs import get_model
    >>> round(hybrid_engine_launch_s(get_model("llama-2-7b").arch()) * 1e3, 2)  # 32 layers, ms
    11.78
    """
    return HYBRID_ENGINE_LAUNCH_S_PER_LAYER.value * int(arch.n_layers)


def dschat_train_flops(
    arch: Arch, sequences: int, seq_len: int, checkpointing: bool, lora_rank: int = 0
) -> int:
    """Training FLOPs of ``sequences`` x ``seq_len`` tokens as DeepSpeed-Chat counts them
    (dschat/utils/perf.py ``calculate_flops``, the Megatron-LM paper's formula):
    ``24 f B s L h^2 (1 + s / (6 h) + V / (16 L h))`` with ``f`` 4 under gradient checkpointing
    (else 3), less ``1 - 2 r / h`` under LoRA of rank ``r`` (no weight gradients of the frozen
    weights); rounded down to an integer.

    >>> from rlmcost.specs import get_model
    >>> dschat_train_flops(get_model("llama-2-7b").arch(), 1, 512, True) // 10**12  # exact int
    27
    """
    if sequences < 1 or seq_len < 1 or lora_rank < 0:
        raise SpecError(f"training FLOPs need sequences, seq_len >= 1 and lora_rank >= 0, got "
                        f"{sequences}, {seq_len}, {lora_rank}")  # fmt: skip
    factor = Fraction(4 if checkpointing else 3)
    if lora_rank:
        factor -= 1 - Fraction(2 * lora_rank, int(arch.d_model))
    return _megatron_flops(arch, sequences, seq_len, factor)


def dschat_forward_flops(arch: Arch, sequences: int, seq_len: int) -> int:
    """One forward over ``sequences`` x ``seq_len`` tokens as DeepSpeed-Chat counts it
    (dschat/utils/perf.py ``print_throughput_step3``, "Modified formula for calculating flops
    in the forward pass only": the Megatron-LM formula of :func:`dschat_train_flops` with the
    factor 1); rounded down to an integer.

    >>> from rlmcost.specs import get_model
    >>> dschat_forward_flops(get_model("llama-2-7b").arch(), 1, 512) // 10**12  # exact int
    6
    """
    if sequences < 1 or seq_len < 1:
        raise SpecError(f"forward FLOPs need sequences, seq_len >= 1, got {sequences}, {seq_len}")
    return _megatron_flops(arch, sequences, seq_len, Fraction(1))


def _megatron_flops(arch: Arch, sequences: int, seq_len: int, factor: Fraction) -> int:
    """``24 f B s L h^2 (1 + s / (6 h) + V / (16 L h))`` (dschat/utils/perf.py
    ``calculate_flops``), exact, rounded down."""
    h, layers, vocab = int(arch.d_model), int(arch.n_layers), int(arch.vocab)
    per = 24 * factor * sequences * seq_len * layers * h * h
    per *= 1 + Fraction(seq_len, 6 * h) + Fraction(vocab, 16 * layers * h)
    return int(per)


def dschat_train_floor_s(
    flops: int, gpus: int, peak_flops_per_s: float, end: str = "value"
) -> float:
    """Seconds of a DeepSpeed-Chat training step of ``flops`` (:func:`dschat_train_flops`) on
    ``gpus`` devices of dense peak ``peak_flops_per_s`` at :data:`DSCHAT_TRAIN_PEAK_FRACTION`
    (``end``: its ``"low"`` end gives the longest time).

    >>> round(dschat_train_floor_s(10**15, 8, 312e12), 3)  # 1 PFLOP on 8 A100s at 0.32
    1.252
    """
    return measured_rate_s(flops, gpus, peak_flops_per_s, DSCHAT_TRAIN_PEAK_FRACTION, end)
