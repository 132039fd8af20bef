"""The token embedding's dense backward (rlmcost.perf.embedding_grad; issue 18).

Sources: PyTorch aten/src/ATen/native/cuda/Embedding.cu ``embedding_dense_backward_cuda``
(``at::zeros({num_weights, d})`` for the weight's gradient, whatever the token count) and
Megatron-core DDP's param hook (distributed_data_parallel.py ``_make_param_hook`` @f2e5db402:
``param.main_grad.add_(param.grad.data)`` for a gradient no GEMM fused into main_grad)."""

from __future__ import annotations

import pytest

import rlmcost.perf.train_step as train_step
from rlmcost.parallel.breakdown import data_share
from rlmcost.parallel.layout import Layout
from rlmcost.parallel.shard import stages
from rlmcost.perf.efficiency import Device
from rlmcost.perf.embedding_grad import embedding_backward, embedding_grad_bytes
from rlmcost.perf.step_pass import StagePass, StepContext, StepOptions
from rlmcost.perf.validate import gpt_arch
from rlmcost.specs import Workload, get_hardware

H100 = get_hardware("h100-sxm")
# Megatron-Core's 1.7B row (Megatron-LM README @f2e5db402): 24 x 2048, V 131,072, s 4096
ARCH = gpt_arch(24, 2048, 16, 131072, 4096, tie_embeddings=False)


def _context(layout: Layout, options: StepOptions) -> StepContext:
    share = data_share(layout, 8 * layout.dp, 4096)
    return StepContext.of(ARCH, layout, 4096, share, Device(H100), options, Workload())


def test_fused_accumulation_adds_the_gradient_to_fp32_main_grads() -> None:
    c = _context(Layout(), StepOptions(main_grad_bytes=4))
    # zero-filled bf16 gradient (2) + main_grad.add_: read 2 + 4, write 4
    assert embedding_grad_bytes(c) == 131072 * 2048 * (2 + 2 + 2 * 4)
    # the 1.7B row's 3.2 GB take about 1.1 ms at 90 % of the H100's 3.35 TB/s
    p = StagePass()
    embedding_backward(c, stages(ARCH, 1)[0], p)
    assert p.bwd["elementwise"] == pytest.approx(3.22e9 / (3.35e12 * 0.9), rel=0.01)


def test_unfused_accumulation_is_already_priced_so_only_the_zero_fill_is_added() -> None:
    c = _context(Layout(tp=2), StepOptions(fused_grad_accumulation=False))
    # the rank's V / t rows (VocabParallelEmbedding), bf16 zeros only
    assert embedding_grad_bytes(c) == 131072 // 2 * 2048 * 2


def test_only_the_first_stage_pays() -> None:
    lay = Layout(pp=4)
    c = _context(lay, StepOptions())
    for st in stages(ARCH, 4):
        p = StagePass()
        embedding_backward(c, st, p)
        assert (p.bwd["elementwise"] > 0) is st.first


def test_step_grows_by_the_term_once_per_micro_batch(monkeypatch: pytest.MonkeyPatch) -> None:
    lay = Layout(micro_batch=1)  # one GPU, 8 micro-batches, no DP collectives
    with_term = train_step.train_step_time(ARCH, lay, 8, 4096, H100)
    monkeypatch.setattr(train_step, "embedding_backward", lambda c, st, p: None)
    without = train_step.train_step_time(ARCH, lay, 8, 4096, H100)
    c = _context(lay, StepOptions())
    term = c.device.elementwise_s(embedding_grad_bytes(c), 2)
    assert with_term.micro_batches == 8
    assert with_term.step_s - without.step_s == pytest.approx(8 * term, rel=1e-9)
