"""Host launch time of an eager decode step (no CUDA graphs), by layer kind.

An engine run with ``enforce_eager`` (vLLM) or Hugging Face ``generate`` launches every kernel
of every layer from Python each decode step; CUDA graphs replay them in one launch. The launches
are asynchronous, so the GPU runs behind the host: a step lasts the longer of its GPU work and
its launches, plus the host's serial work (scheduling, per-sequence processing), that is
``max(GPU, launch) + overheads`` (:meth:`rlmcost.perf.generation.Engine.launch_floor_s`). The
launch time, layer by layer (:func:`eager_launch_s`):

* **a dense layer**: :data:`~rlmcost.perf.rl_constants.EAGER_LAUNCH_S_PER_LAYER` (an
  engineering estimate: about 15 kernels x 7 us);
* **a MoE layer**: :data:`EAGER_MOE_LAYER_S`, measured. vLLM's fused-MoE path issues far more
  host work per layer than a dense FFN's two GEMMs and activation: the router GEMM, the
  top-k softmax, ``moe_align_block_size`` and its buffers, two Triton ``fused_moe_kernel``
  launches (Python-side launchers), the activation and ``moe_sum``
  (vllm/model_executor/layers/fused_moe/fused_moe.py ``fused_experts_impl``; Qwen3-MoE's
  attention adds the per-head q/k RMSNorms, vllm/model_executor/models/qwen3_moe.py).

**The MoE figure** is vLLM issue 45709 (vllm-project/vllm, "TTFT of graph mode is about 25 %
worse than that of eager mode", 2026-06-15): Qwen3-30B-A3B (48 MoE layers), TP 4, 3,500
input / 1,500 output tokens at max-concurrency 8, TPOT 33.92 ms eager against 10.03 ms with
CUDA graphs (``full-and-piecewise``), and 35.20 ms with torch.compile but no graphs
(``compile-only``): the gap is the graphs' (launch), not compilation's (fusion). The eager
step, 3.4x the GPU's, is launch-bound, so the launches take its time less the host's serial
work at 8 sequences (rlmcost's ``STEP_OVERHEAD_S`` + 8 ``VLLM_HOST_S_PER_SEQUENCE``): (33.92
- 1.0 - 0.58) / 48 = 0.674 ms per layer (value). low: (33.92 - 10.03) / 48 = 0.498 ms, the
gap itself (as if launches and GPU work did not overlap); high: 35.20 / 48 = 0.733 ms (the
compile-only step, all of it launches). One concurrency, RTX 4090D hosts (PCIe): other hosts
are assumed alike.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rlmcost.perf.generation import STEP_OVERHEAD_S, VLLM_HOST_S_PER_SEQUENCE
from rlmcost.perf.rl_constants import EAGER_LAUNCH_S_PER_LAYER, Constant

if TYPE_CHECKING:
    from rlmcost.arch import Arch

QWEN3_30B_A3B_LAYERS = 48  # Qwen/Qwen3-30B-A3B config.json num_hidden_layers, all MoE

EAGER_MOE_LAYER_S = Constant(
    (33.92e-3 - STEP_OVERHEAD_S - 8 * VLLM_HOST_S_PER_SEQUENCE.value) / QWEN3_30B_A3B_LAYERS,
    (33.92e-3 - 10.03e-3) / QWEN3_30B_A3B_LAYERS,
    35.20e-3 / QWEN3_30B_A3B_LAYERS,
    "vllm-project/vllm issue 45709: Qwen3-30B-A3B TP4 TPOT eager 33.92, graphs 10.03 ms",
)  # fmt: skip
"""Host seconds to launch one MoE layer's kernels in an eager decode step (module doc)."""


def eager_launch_s(arch: Arch) -> float:
    """Seconds an eager decode step of ``arch`` spends launching what CUDA graphs would
    replay (the step's floor): its dense layers at :data:`EAGER_LAUNCH_S_PER_LAYER`, its MoE
    layers at :data:`EAGER_MOE_LAYER_S` (module doc).

    >>> from rlmcost.specs import get_model
    >>> round(eager_launch_s(get_model("qwen3-30b-a3b").arch()) * 1e3, 2)  # 48 MoE layers
    32.34
    """
    moe = int(arch.n_moe_layers) if arch.is_moe else 0
    dense = int(arch.n_layers) - moe
    return dense * EAGER_LAUNCH_S_PER_LAYER.value + moe * EAGER_MOE_LAYER_S.value


EAGER_MOE_NOTE = (
    f"eager engine (enforce_eager): a decode step lasts at least its kernels' launches from "
    f"the host, {EAGER_LAUNCH_S_PER_LAYER.value * 1e3:.2f} ms per dense layer (estimate) and "
    f"{EAGER_MOE_LAYER_S.value * 1e3:.2f} ms per MoE layer (vLLM issue 45709, Qwen3-30B-A3B "
    "TP4 eager vs CUDA graphs; rlmcost.perf.eager_launch), plus the host's per-step work"
)
"""The output's note for an eager engine running a MoE model."""
