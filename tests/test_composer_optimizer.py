"""Composer's optimizer step under FSDP1 (rlmcost.perf.composer_optimizer).

Sources: Composer v0.16.1 ``composer/optim/decoupled_weight_decay.py`` ``DecoupledAdamW.adamw``
(lines 236-263: per parameter ``exp_avg.mul_(beta1).add_(grad)``, ``exp_avg_sq.mul_(beta2)
.addcmul_(grad, grad)``, ``(exp_avg_sq.sqrt() / sqrt(bc2)).add_(eps)``, ``param.addcdiv_``;
``param.mul_`` only when weight_decay != 0); ``composer/algorithms/gradient_clipping/
gradient_clipping.py`` @v0.16.1 (FSDP: the root's ``clip_grad_norm_``); torch 2.1 FSDP1
``clip_grad_norm_`` (a norm per gradient, then ``grad.mul_(clip_coef_clamped)`` always);
llm-foundry's mpt-*.yaml (crinard/llm-foundry add_attns): decoupled_adamw, weight_decay 0.0,
gradient_clipping norm.
"""

from __future__ import annotations

import pytest

from rlmcost.errors import SpecError
from rlmcost.parallel.layout import Layout, ZeroStage
from rlmcost.perf.composer_optimizer import (
    CLIP_BYTES_PER_PARAM,
    DECOUPLED_ADAMW_BYTES_PER_PARAM,
    tensors_on_rank,
    unit_tensor_sizes,
)
from rlmcost.perf.step_pass import StepOptions
from rlmcost.perf.train_step import train_step_time
from rlmcost.perf.validate import gpt_arch, load_table
from rlmcost.specs import get_hardware

MPT_13B = gpt_arch(40, 5120, 40, 50368, 2048)  # llm-foundry's mpt-13b.yaml shape


def test_bytes_are_the_kernels_fp32_reads_and_writes():
    # (reads + writes) of 4-byte elements per kernel of DecoupledAdamW.adamw at weight_decay 0
    adamw = {"exp_avg.mul_": 2, "add_(grad)": 3, "exp_avg_sq.mul_": 2, "addcmul_(grad, grad)": 3,
             "sqrt": 2, "div": 2, "add_(eps)": 2, "param.addcdiv_": 4}  # fmt: skip
    assert DECOUPLED_ADAMW_BYTES_PER_PARAM == 4 * sum(adamw.values()) == 80
    # FSDP1 clip_grad_norm_: vector_norm reads the gradient, mul_ reads and writes it
    assert CLIP_BYTES_PER_PARAM == 4 * (1 + 2)


def test_mpt_units_flatten_the_readme_parameter_count():
    # MPTBlock: norm_1 (w, b), attn.Wqkv (w, b), attn.out_proj (w, b), norm_2 (w, b),
    # ffn.up_proj (w, b), ffn.down_proj (w, b); the root: wte, wpe, norm_f (w, b), head tied
    block, root = unit_tensor_sizes(MPT_13B)
    assert (len(block), len(root)) == (12, 4)
    # llm-foundry README @061f2c7ce, 13b SeqLen 2048: NumParams 12853954560
    assert 40 * sum(block) + sum(root) == 12_853_954_560


def _brute_force(sizes: list[int], ranks: int) -> int:
    """Tensors met by each rank's element range, element index by index (another route)."""
    shard = -(-sum(sizes) // ranks)
    owner = [i for i, n in enumerate(sizes) for _ in range(n)]
    return max(len(set(owner[r * shard:(r + 1) * shard])) for r in range(ranks))


@pytest.mark.parametrize("ranks", [1, 2, 3, 8, 64])
def test_tensors_on_rank_matches_element_walk(ranks):
    sizes = [2, 2, 12, 6, 4, 2, 2, 2, 16, 8, 16, 2]  # an MPT block at d = 2, d_ff = 8
    assert tensors_on_rank(sizes, ranks) == _brute_force(sizes, ranks)


def _step(on: bool, **kw):
    layout = Layout(dp=8, zero=ZeroStage.OS_G_P, micro_batch=2, **kw)
    options = StepOptions(composer_optimizer=on)
    return train_step_time(MPT_13B, layout, 16, 2048, get_hardware("h100-sxm"), options=options)


def test_the_step_pays_the_extra_bytes_once_per_step():
    base, composer = _step(False), _step(True)
    added = composer.optimizer_s - base.optimizer_s
    shard = -(-12_853_954_560 // 8)  # MPT-13b's NumParams (llm-foundry README) over 8 ranks
    # 58 more bytes per parameter of the shard at no more than the H100's 3.35 TB/s
    assert added > 58 * shard / 3.35e12
    assert composer.step_s - base.step_s == pytest.approx(added)
    assert any("DecoupledAdamW" in n for n in composer.notes)
    assert not any("DecoupledAdamW" in n for n in base.notes)


def test_other_layouts_are_refused():
    with pytest.raises(SpecError, match="composer_optimizer"):
        _step(True, tp=2)


def test_llm_foundry_rows_set_it():
    rows = [r for r in load_table()["rows"] if r["source"].startswith("llm_foundry")]
    assert len(rows) == 20 and all(r["options"]["composer_optimizer"] for r in rows)
