"""Composer's training metrics after every micro-batch (rlmcost.perf.train_metrics).

Source: Composer v0.16.4 ``composer/trainer/trainer.py`` ``_train_microbatch`` /
``_eval_train_metrics`` and ``composer/metrics/nlp.py`` ``LanguageCrossEntropy.update``;
llm-foundry @061f2c7ce ``llmfoundry/models/mpt/modeling_mpt.py`` (train_metrics
[LanguageCrossEntropy(), LanguagePerplexity()]); PyTorch 2.0 AMP docs (cross_entropy autocasts
to float32); ATen ``SoftMax.cu`` ``cunn_SoftMaxForward`` (three reads, one write).
"""

from __future__ import annotations

import pytest

from rlmcost.errors import SpecError
from rlmcost.parallel.layout import Layout, ZeroStage
from rlmcost.perf.step_pass import StepOptions
from rlmcost.perf.train_metrics import CROSS_ENTROPY_BYTES_PER_LOGIT, train_metric_bytes
from rlmcost.perf.train_step import train_step_time
from rlmcost.perf.validate import gpt_arch, load_table, validate
from rlmcost.specs import get_hardware

ARCH = gpt_arch(24, 2048, 16, 50368, 2048)  # MPT 1b (llm-foundry's mpt-1b.yaml shape)


def test_bytes_per_logit_are_the_kernels_reads_and_writes():
    # autocast's fp32 cast reads 2 and writes 4; log_softmax reads the fp32 row 3 times, writes 1
    assert CROSS_ENTROPY_BYTES_PER_LOGIT == (2 + 4) + (3 * 4 + 4)
    # two metrics over micro-batch 14 x 2048 tokens of the 50368-entry vocabulary
    assert train_metric_bytes(14 * 2048, 50368, 2) == 2 * 22 * 14 * 2048 * 50368


def _step(metrics: int, micro_batches: int = 1):
    layout = Layout(dp=8, zero=ZeroStage.OS_G_P, micro_batch=14)
    options = StepOptions(train_metrics=metrics)
    return train_step_time(ARCH, layout, 8 * 14 * micro_batches, 2048, get_hardware("h100-sxm"),
                           options=options)  # fmt: skip


def test_the_metrics_cost_their_bytes_at_hbm_rate_per_micro_batch():
    base, one, two = _step(0), _step(1), _step(2)
    added = two.step_s - base.step_s
    # 63.5 GB at the H100's 3.35 TB/s HBM3 (datasheet) is 19 ms; the achieved rate is lower
    assert 63.5e9 / 3.35e12 < added < 63.5e9 / 3.35e12 / 0.6
    assert two.step_s - one.step_s == pytest.approx(one.step_s - base.step_s, rel=1e-6)
    # per micro-batch: four micro-batches per step cost four times one
    four = _step(2, 4).step_s - _step(0, 4).step_s
    assert four == pytest.approx(4 * added, rel=1e-6)
    assert any("training metrics" in n for n in two.notes)
    assert not any("training metrics" in n for n in base.notes)


def test_negative_metric_count_is_rejected():
    with pytest.raises(SpecError, match="train_metrics=-1"):
        _step(-1)


def test_llm_foundry_rows_run_the_two_metrics_and_get_closer_on_h100():
    rows = [r for r in load_table()["rows"] if r["source"].startswith("llm_foundry")]
    assert len(rows) == 20 and all(r["options"]["train_metrics"] == 2 for r in rows)
    # the H100 rows without recomputation were 15-25 % fast before this term (issue 18);
    # with it every one of them is predicted slower, so closer (none beyond 20.0 % then).
    # The runs' bf16 gradient reduce-scatter (tests/test_llm_foundry_stack.py) took them to
    # +13.9 .. +27.5 %, Composer's optimizer step back to +13.7 .. +26.0 %: none beyond 26.5 %
    v = validate("llm_foundry_h100")
    no_ckpt = {r["id"] for r in rows if r["layout"]["ckpt"] == "none"}
    errors = [r.error for r in v.rows if r.id in no_ckpt]
    assert len(errors) == 8 and all(0 < e < 0.265 for e in errors), errors
