"""The token embedding's backward: a dense [V / P_t, d] gradient every micro-batch.

An ``nn.Embedding`` lookup (and Megatron's ``VocabParallelEmbedding``, a masked lookup on the
rank's V / P_t rows) has a dense backward in PyTorch: ``embedding_dense_backward_cuda``
(aten/src/ATen/native/cuda/Embedding.cu and EmbeddingBackwardKernel.cu) allocates the weight's
gradient with ``at::zeros({num_weights, d})`` and adds the T rows of the output gradient into
it, so each micro-batch writes V / P_t x d elements of the weight dtype however few tokens it
has. That gradient then reaches the accumulation buffer by a separate kernel wherever the
other weight gradients are fused into it (``StepOptions.fused_grad_accumulation``: Megatron's
weight-gradient GEMMs accumulate into ``main_grad``, the lookup has no GEMM, and Megatron-core
DDP's param hook runs ``param.main_grad.add_(param.grad.data)``, distributed_data_parallel.py
``_make_param_hook`` @f2e5db402): reads x + g, writes g bytes per element (g =
``main_grad_bytes``). Where the accumulation is not fused, :mod:`~rlmcost.perf.step_pass`
already prices that add for every parameter of the rank, the embedding's included.

Per micro-batch on the first pipeline stage: V / P_t x d x (x + [x + 2 g if fused]) bytes,
one or two memory-bound kernels. Megatron-Core's H100 1.7B row (V 131,072, d 2048, bf16,
fp32 main grads): 3.2 GB, 1.1 ms per micro-batch on an H100, 1.2 % of its step.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rlmcost.parallel.shard import tp_shard

if TYPE_CHECKING:
    from rlmcost.parallel.shard import PipelineStage
    from rlmcost.perf.step_pass import StagePass, StepContext


def embedding_grad_bytes(c: StepContext) -> int:
    """Bytes one micro-batch's embedding backward moves on a rank of the first stage."""
    rows = int(tp_shard(c.arch, c.layout.tp).vocab)
    x = c.workload.weight_dtype.bytes
    per_element = x + ((x + 2 * c.options.main_grad_bytes) if c.options.fused_grad_accumulation
                       else 0)  # fmt: skip
    return rows * int(c.arch.d_model) * per_element


def embedding_backward(c: StepContext, stage: PipelineStage, p: StagePass) -> None:
    """Add the dense embedding gradient (module docstring) to the first stage's backward."""
    if not stage.first:
        return
    kernels = 2 if c.options.fused_grad_accumulation else 1
    p.bwd["elementwise"] += c.device.elementwise_s(embedding_grad_bytes(c), kernels)
