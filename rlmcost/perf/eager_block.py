"""The backward of an eager PyTorch 2.x GPT block (llm-foundry's MPT) against the rule
:mod:`~rlmcost.perf.step_pass` prices its memory-bound kernels by.

llm-foundry's MPT benchmarks (``scripts/train/benchmarking/submit_benchmarks.py`` @061f2c7ce:
``norm_type`` forced to ``low_precision_layernorm``, ``compile_config`` None unless
``--torch_compile``, which ``sweep.sh`` does not pass; ``precision: amp_bf16``, FSDP
``mixed_precision`` DEFAULT as the README table prints: bf16 ``param_dtype`` and, in the
runs' Composer (before PR 2628, v0.16.4), reduce_dtype None: a bf16 gradient reduction) run the
block of ``llmfoundry/models/layers/blocks.py`` (``MPTBlock.forward``; crinard/llm-foundry
branch add_attns, the runs' code, has the same block) eagerly under torch 2.1.0.dev20230821
(the runs' image, published.json's llm_foundry_h100 source). Its forward is the kernels
step_pass already prices, one each, in bf16:

* ``LPLayerNorm`` (``layers/norm.py``) casts its input, weight and bias to the autocast dtype
  (bf16 already: the FSDP-gathered parameters and the residual stream are bf16, so no copy) and
  runs ``F.layer_norm`` with autocast off: one kernel, ``2 x d`` bytes per token, not
  torch.nn.LayerNorm's fp32 autocast output;
* ``Wqkv``, ``out_proj``, ``up_proj``, ``down_proj`` (``nn.Linear`` with biases, ``no_bias``
  False) on contiguous 3-D inputs go through ``at::addmm`` with a 1-D bias, which CUDA's
  ``addmm`` runs as a cuBLASLt GEMM with a bias epilogue (pytorch/pytorch PR 72148, "use cublas
  lt interface for bias fusion", 2022; ``aten/src/ATen/native/cuda/Blas.cpp``
  ``addmm_out_cuda_impl``'s ``useLtInterface``: CUDA >= 11.4, beta 1, a contiguous 1-D bf16
  bias, sizes under 65535 x 32 before CUDA 12.1, as every MPT row's are): no bias kernel
  (without it the forward would copy the bias into each output first, 2 x per output
  element);
* ``qkv.split`` and the ``rearrange`` of ``triton_flash_attn_fn`` (``layers/attention.py``)
  are views; the attention is :mod:`~rlmcost.perf.triton_attention`'s kernel;
* the residual adds (``x + self.resid_attn_dropout(b)``: ``resid_pdrop`` 0 and ATen's
  ``dropout`` returns its input at p = 0, no kernel) and ``nn.GELU(approximate='none')``
  (``layers/ffn.py`` ``MPTMLP``): one kernel each.

So the forward equals step_pass's (``18 x d`` for d_ff = 4d). The backward is autograd's,
per token and layer, ``x`` the activation bytes (:func:`eager_block_bwd_bytes`):

* each bias's gradient is a reduction of the output gradient over the tokens (``addmm``'s
  ``self`` gradient summed to the bias's shape): read ``x`` per output column, one kernel per
  biased projection (``q + 2 kv + d + d_ff + d``);
* GELU's backward reads the gradient and the input and writes one: ``3 x d_ff``;
* each LayerNorm's backward is PyTorch's two kernels, the input gradient (read dy, x; write
  dx: ``3 x d``) and ``GammaBetaBackward`` (read dy, x again: ``2 x d``);
* the residual add passes its gradient through (no kernel); where the residual stream forks
  (into a norm and the skip) autograd sums the two gradients: ``3 x d``, twice;
* ``split``'s backward concatenates dq, dk, dv (FlashAttention in Triton writes them as three
  tensors) into the gradient of ``Wqkv``'s output: ``2 x (q + 2 kv)``.

step_pass prices the backward as twice the forward bytes (``2 x (10 d + 2 d_ff)``, 10 kernels);
the eager block moves ``7 x d`` more per token and layer for MPT's shape (43 against 36
``x d``). The loss is flash-attn's fused cross-entropy (:data:`~rlmcost.perf.logprob_head.
FLASH_ATTN_XENTROPY`), priced by the row's ``logprob_head``. Not priced: the learned position
embedding's add and both embeddings' backward (per micro-batch, not per layer).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rlmcost.choices import NormKind
from rlmcost.errors import SpecError
from rlmcost.parallel.shard import tp_shard

if TYPE_CHECKING:
    from rlmcost.arch import Arch
    from rlmcost.parallel.shard import PipelineStage
    from rlmcost.perf.step_pass import StagePass, StepContext


def eager_block_bwd_bytes(arch: Arch, tp: int, sp: bool, x: int) -> tuple[int, int, int, int]:
    """(eager bytes, eager kernels, step_pass's bytes, step_pass's kernels) of one dense
    layer's memory-bound backward kernels per token (module docstring); d-wide tensors split
    over TP under SP, q, k, v and d_ff over TP.

    >>> from rlmcost.perf.validate import gpt_arch
    >>> eager_block_bwd_bytes(gpt_arch(24, 2048, 16, 50368, 2048), 1, False, 2)  # 43 / 36 x d
    (176128, 12, 147456, 10)
    """
    if arch.ffn_kind.projections != 2 or arch.norm is not NormKind.LAYERNORM or arch.is_mla:
        raise SpecError(
            f"torch_eager_block prices llm-foundry MPT's block (LayerNorm, 2-projection GeLU "
            f"FFN, multi-head attention); {arch.name} is not that shape: drop the option"
        )
    if not arch.n_positions:
        raise SpecError(
            f"torch_eager_block prices a block without RoPE (MPT's learned positions); "
            f"{arch.name} uses RoPE: drop the option"
        )
    sh = tp_shard(arch, tp)
    d = int(arch.d_model) // (tp if sp else 1)
    qkv, ff = int(sh.q_width) + 2 * int(sh.kv_width), int(sh.d_ff)
    biases = [w for w, on in ((qkv, arch.qkv_bias), (d, arch.out_bias), (ff, arch.mlp_bias),
                              (d, arch.mlp_bias)) if on]  # fmt: skip
    eager = sum(biases) + 3 * ff + 2 * 5 * d + 2 * 3 * d + 2 * qkv
    kernels = len(biases) + 1 + 2 * 2 + 2 + 1
    rule = 2 * (2 * 2 * d + 2 * 3 * d + 2 * ff)
    return eager * x, kernels, rule * x, 2 * 5


def eager_block_kernels(c: StepContext, stage: PipelineStage, p: StagePass) -> None:
    """Replace step_pass's backward memory-bound kernels of ``stage``'s dense layers with the
    eager block's (``StepOptions.torch_eager_block``): add the difference of their times."""
    if not c.options.torch_eager_block or not stage.dense_layers:
        return
    lay, n, dev = c.layout, stage.dense_layers, c.device
    eager, k_eager, rule, k_rule = eager_block_bwd_bytes(
        c.arch, lay.tp, lay.sp, c.workload.activation_dtype.bytes
    )
    t = c.tokens * n
    p.bwd["elementwise"] += dev.elementwise_s(t * eager, k_eager * n) - dev.elementwise_s(
        t * rule, k_rule * n
    )
