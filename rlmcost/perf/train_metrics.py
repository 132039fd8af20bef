"""Composer's training metrics: cross-entropies over the logits after every micro-batch.

Composer v0.16.4 (``composer/trainer/trainer.py``, ``_train_microbatch``: "Use microbatch
outputs to update training metrics") calls ``_eval_train_metrics`` after each micro-batch's
backward, under the run's precision context (``amp_bf16``: ``torch.autocast`` to bf16) and
``torch.no_grad``. llm-foundry's ``ComposerMPTCausalLM`` (``llmfoundry/models/mpt/
modeling_mpt.py`` @061f2c7ce) sets ``train_metrics = [LanguageCrossEntropy(),
LanguagePerplexity()]`` unless ``use_train_metrics`` is false (no benchmark yaml or
``submit_benchmarks.py`` sets it), and ``use_logits=True``, so ``HuggingFaceModel.eval_forward``
hands each metric the cached bf16 logits [T, V]. ``LanguageCrossEntropy.update``
(``composer/metrics/nlp.py`` @v0.16.4; ``LanguagePerplexity`` subclasses it and shares
``update``) runs ``torch.nn.CrossEntropyLoss(reduction='sum')`` on them. Per metric and logit:

=======================================================================  ============  =====
kernel                                                                   read + write  bytes
=======================================================================  ============  =====
autocast's cast of the bf16 logits to fp32 (``cross_entropy`` is on the
  "CUDA ops that can autocast to float32" list, PyTorch 2.0 AMP docs)     2 + 4         6
``log_softmax`` on fp32 (ATen ``SoftMax.cu`` ``cunn_SoftMaxForward``:
  ``ilpReduce`` of the max, ``ilpReduce`` of the exponentials' sum, then
  the epilogue reads the row again and writes it)                        3 x 4 + 4     16
=======================================================================  ============  =====

22 bytes per logit per metric (no L2 reuse credited, as :mod:`~rlmcost.perf.logprob_head`
counts flash-attn's two row reads), in 7 kernels per metric: the cast, ``log_softmax``,
``nll_loss`` (reads T targets), ``target != ignore_index``, its ``sum`` and the two state adds.
Nothing runs backward. Priced per micro-batch on the last pipeline stage
(``StepOptions.train_metrics``: how many such metrics; 0 off, rlmcost's default).

Not priced, and why (issue 18's per-step host gap). After each batch Composer reads the
summed loss back (``loss.cpu().item()``) and ``_accumulate_time_across_ranks`` reads the
sample / token all-reduce back, so the GPU idles from that sync until the host has launched
the next batch's first kernels. No published figure sizes that gap for Composer + FSDP1, and
the llm-foundry H100 table (README @061f2c7ce) bounds it small: 1b at micro-batch 14 on 8
GPUs takes 0.631 s per step, at micro-batch 20 on 16 GPUs 0.890 s (one micro-batch each), a
line through both meets zero sequences at 0.027 s; 760m at micro-batch 24 takes 0.717 s with
one micro-batch per step (16 GPUs) and 1.557 s with two (8 GPUs), more than twice, not less.
The rows' miss grows with the micro-batches (a rate), not per step. Also unpriced: Composer's
``DecoupledAdamW`` reads each parameter's step count back (``state_steps[i].item()``,
``composer/optim/decoupled_weight_decay.py`` @v0.16.4) under FSDP1 ``use_orig_params`` (True
by default, ``dist_strategy.py`` @v0.16.4 line 148), one host sync per original parameter the
rank holds a shard of (tens to ~250 per step): milliseconds, and no measured host sync time
for PyTorch 2.x to price them with (its eight unfused kernels per tensor and the norm clip's
bytes are priced: :mod:`~rlmcost.perf.composer_optimizer`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rlmcost.errors import SpecError
from rlmcost.parallel.shard import tp_shard

if TYPE_CHECKING:
    from rlmcost.parallel.shard import PipelineStage
    from rlmcost.perf.step_pass import StagePass, StepContext

CROSS_ENTROPY_BYTES_PER_LOGIT = 22
"""One metric's bytes per logit: fp32 cast 2 + 4, log_softmax 3 x 4 + 4 (module docstring)."""

CROSS_ENTROPY_KERNELS = 7
"""One metric's kernels per micro-batch (module docstring)."""

TRAIN_METRICS_NOTE = (
    "Composer training metrics: each runs an autocast fp32 cross-entropy over the bf16 logits "
    "after every micro-batch (22 B per logit and metric; perf.train_metrics); Composer's "
    "per-step loss / time syncs not priced"
)


def train_metric_bytes(tokens: int, vocab_shard: int, metrics: int) -> int:
    """Bytes the ``metrics`` cross-entropies move over one micro-batch's [T, V / P_t] logits.

    >>> train_metric_bytes(14 * 2048, 50368, 2)  # llm-foundry 1b, micro-batch 14: 63.5 GB
    63542657024
    """
    if metrics < 0:
        raise SpecError(f"train_metrics={metrics} must be >= 0 (0: no training metrics)")
    return metrics * tokens * vocab_shard * CROSS_ENTROPY_BYTES_PER_LOGIT


def train_metric_kernels(c: StepContext, stage: PipelineStage, p: StagePass) -> None:
    """Add the training metrics' kernels (``StepOptions.train_metrics``) to the last stage's
    micro-batch, after its backward."""
    n = c.options.train_metrics
    if n < 0:
        raise SpecError(f"train_metrics={n} must be >= 0 (0: no training metrics)")
    if not n or not stage.last:
        return
    v = int(tp_shard(c.arch, c.layout.tp).vocab)
    b = train_metric_bytes(c.tokens, v, n)
    p.bwd["elementwise"] += c.device.elementwise_s(b, n * CROSS_ENTROPY_KERNELS)
