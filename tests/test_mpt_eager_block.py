"""llm-foundry MPT's eager block and fused cross-entropy (rlmcost.perf.eager_block,
logprob_head FLASH_ATTN_XENTROPY), counted from mosaicml/llm-foundry @061f2c7ce
(llmfoundry/models/layers/blocks.py MPTBlock, layers/norm.py LPLayerNorm, layers/ffn.py MPTMLP,
layers/attention.py; models/mpt/modeling_mpt.py loss_fn fused_crossentropy)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from rlmcost.errors import SpecError
from rlmcost.parallel.layout import Checkpointing, Layout, ZeroStage
from rlmcost.perf.eager_block import eager_block_bwd_bytes
from rlmcost.perf.efficiency import Device
from rlmcost.perf.logprob_head import FLASH_ATTN_XENTROPY, logprob_head
from rlmcost.perf.step_pass import StepOptions
from rlmcost.perf.train_step import train_step_time
from rlmcost.perf.validate import gpt_arch, load_table
from rlmcost.specs import get_hardware, get_model

# MPT-7B (scripts/train/yamls/pretrain/mpt-7b.yaml @061f2c7ce): d 4096, 32 heads, 32 layers
MPT7B = gpt_arch(32, 4096, 32, 50368, 2048)
D, X = 4096, 2  # bf16 activations (amp_bf16, FSDP mixed_precision DEFAULT)


def test_backward_bytes_are_the_blocks_autograd_kernels():
    # per token and layer, x d: bias-gradient reductions 3 + 1 + 4 + 1, GELU backward 3 x 4,
    # two LayerNorm backwards 2 x (3 + 2), two residual-fork gradient sums 2 x 3, split's
    # backward cat 2 x 3 = 43, in 4 + 1 + 4 + 2 + 1 kernels; step_pass's rule twice its
    # forward (2 norms 2 d, 2 residual adds 3 d, GELU 2 x 4 d) = 36 in 10
    assert eager_block_bwd_bytes(MPT7B, 1, False, X) == (43 * D * X, 12, 36 * D * X, 10)


def test_without_biases_there_are_no_bias_reductions():
    # no_bias True (configuration_mpt.py): 43 - 9 = 34 x d in 12 - 4 kernels
    arch = replace(MPT7B, qkv_bias=False, out_bias=False, mlp_bias=False)
    assert eager_block_bwd_bytes(arch, 1, False, X)[:2] == (34 * D * X, 8)


def test_other_shapes_are_refused_with_a_message():
    with pytest.raises(SpecError, match="torch_eager_block"):
        eager_block_bwd_bytes(get_model("llama-3.1-8b").arch(), 1, False, X)


def test_xentropy_head_moves_four_bytes_each_way():
    # flash-attention csrc/xentropy/xentropy_kernel.cu: forward reads the bf16 row twice
    # (max + sum, then exp sum), backward reads it and writes the gradient, one kernel each
    h = logprob_head("flash-attn-xentropy")
    assert h is FLASH_ATTN_XENTROPY and (h.fwd_bytes, h.bwd_bytes) == (4, 4)
    assert (h.fwd_kernels, h.bwd_kernels) == (1, 1)


def test_the_option_adds_the_backward_difference_with_or_without_recompute():
    hw = get_hardware("h100-sxm")
    dev = Device(hw)
    eager, k_e, rule, k_r = eager_block_bwd_bytes(MPT7B, 1, False, X)
    for ckpt in (Checkpointing.NONE, Checkpointing.FULL):
        lay = Layout(dp=8, zero=ZeroStage.OS_G_P, micro_batch=6, ckpt=ckpt)
        base = train_step_time(MPT7B, lay, 48, 2048, hw, options=StepOptions())
        mpt = train_step_time(MPT7B, lay, 48, 2048, hw,
                              options=StepOptions(torch_eager_block=True))  # fmt: skip
        tokens, layers = 6 * 2048, 32
        want = dev.elementwise_s(tokens * eager * layers, k_e * layers) - dev.elementwise_s(
            tokens * rule * layers, k_r * layers
        )
        got = mpt.compute_s["elementwise"] - base.compute_s["elementwise"]
        # the extra is backward only: the same whether the forward is recomputed or not
        assert got == pytest.approx(want * base.micro_batches, rel=1e-9)
        assert mpt.step_s > base.step_s


def test_every_llm_foundry_row_runs_the_eager_block_and_xentropy():
    rows = [r for r in load_table()["rows"] if r["source"].startswith("llm_foundry")]
    assert len(rows) == 20
    for r in rows:
        assert r["options"]["torch_eager_block"] is True
        assert r["options"]["logprob_head"] == "flash-attn-xentropy"
