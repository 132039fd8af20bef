"""AReaL v0.3's trainer (realhf) at the FLOP rate its authors measured.

AReaL v0.3 trains with realhf's own model (``ReaLModel``: FlashAttention-2, eager norms,
:mod:`rlmcost.perf.policy_worker`) under Megatron's DDP and distributed optimizer, driven by
realhf's master worker, which runs each model function call (the actor's log-prob forward, its
PPO update) as a request to the model workers with the data redistributed between them
(``realhf/system/master_worker.py``, ``model_worker.py``, ``data_manager.py`` at tag v0.3.0).
The kernel model prices its passes at about 0.55 of the H800's dense peak in realhf's own FLOP
count below (the 1.5B and 7B rows of ``rlmcost validate --rl``), while arXiv 2505.24298
(assets/paper.pdf at inclusionAI/AReaL 4aef98d8) Figure 6a measured 0.29-0.46 of it: the
system's overheads between and inside the passes are not in the kernel model. A realhf
training step therefore takes at least its FLOPs, counted as realhf counts them
(:func:`realhf_forward_flops`, times 4 for a training step), over the GPUs' dense peak times
:data:`REALHF_PEAK_FRACTION` (:func:`realhf_floor_s`); its log-prob forwards alike, as the
master worker's figure counts both (``realhf/system/flops_counter.py``: TRAIN_STEP and
INFERENCE calls over the same elapsed time). The same mechanism as DeepSpeed-Chat's measured
rate (:mod:`rlmcost.perf.deepspeed_chat`).

Assumption: Figure 6a's sequences (AReaL's long-context math runs, a 32,768-token budget per
micro-batch) are of the validated runs' order, so that realhf's count (whose attention term is
the full ``s^2``, not the causal half) weighs attention alike in both.
"""

from __future__ import annotations

from collections.abc import Sequence

from rlmcost.arch import Arch
from rlmcost.errors import SpecError
from rlmcost.perf.measured_rate import measured_rate_s
from rlmcost.perf.rl_constants import Constant

REALHF_PEAK_FRACTION = Constant(0.40, 0.286, 0.46, "arXiv 2505.24298 Figure 6a")
"""Achieved PPO training FLOP/s of AReaL's trainer over the H800's dense 16-bit peak.

arXiv 2505.24298 (assets/paper.pdf at inclusionAI/AReaL 4aef98d8) Figure 6a, "Ablation study
of dynamic micro-batch allocation": throughput in TFLOP/s per GPU as realhf counts it
(:func:`realhf_forward_flops`; ``realhf/system/master_worker.py`` divides the counter's FLOPs
by the step's elapsed time and the model workers), dynamic and standard batching: 427.4 and
454.7 (the 1.5B-class model on 1 node), 387.7 and 404.4 (7B, 2 nodes), 303.1 and 283.0 (32B, 8
nodes), on H800 (Appendix B), 989.4 TFLOP/s dense: 0.432, 0.460, 0.392, 0.409, 0.306, 0.286.
value: the median of the six, (387.7 + 404.4) / 2 / 989.4 = 0.400; low 0.286 (the lowest
figure), high 0.46 (the highest).
"""

REALHF_TRAIN_FACTOR = 4
"""A training step's FLOPs in realhf's count: 4 forwards (``realhf/system/flops_counter.py``
``calculate_llama_train_flops(checkpoint_activations_factor=4, ...)``, always 4)."""


def realhf_forward_flops(arch: Arch, lengths: Sequence[int]) -> int:
    """One forward over sequences of ``lengths`` tokens as realhf counts it
    (``realhf/base/monitor.py`` ``caculuate_llama_forward_flops`` at tag v0.3.0):
    ``2 L (4 S d^2 + 2 d sum s^2 + 3 S d d_ff) + 4 S V d`` with ``S = sum s`` (full
    multi-head QKV and output, the full ``s^2`` attention, a gated FFN, the head twice over).

    >>> from rlmcost.specs import get_model
    >>> realhf_forward_flops(get_model("deepseek-r1-distill-qwen-1.5b").arch(), [1]) // 10**6
    3774
    """
    if not lengths or min(lengths) < 1:
        raise SpecError(f"realhf's FLOP count needs sequences of >= 1 token, got {lengths!r}")
    layers, d, ff, vocab = int(arch.n_layers), int(arch.d_model), int(arch.d_ff), int(arch.vocab)
    tokens = sum(lengths)
    squares = sum(s * s for s in lengths)
    dense = 4 * tokens * d * d + 2 * d * squares + 3 * tokens * d * ff
    return 2 * layers * dense + 4 * tokens * vocab * d


def realhf_floor_s(flops: int, gpus: int, peak_flops_per_s: float, end: str = "value") -> float:
    """Seconds of ``flops`` (realhf's count) on ``gpus`` GPUs at :data:`REALHF_PEAK_FRACTION`
    of the dense peak; ``end``: ``"low"``, ``"value"`` or ``"high"`` time.

    >>> round(realhf_floor_s(10**18, 32, 989.4e12), 1)
    79.0
    """
    return measured_rate_s(flops, gpus, peak_flops_per_s, REALHF_PEAK_FRACTION, end)
