"""Static batches (HF generate, DeepSpeed-Chat's Hybrid Engine, an engine handed
``--sequences-per-call`` at a time) reach the rollout timeline whole: the timeline admits
sequences in :func:`~rlmcost.placement.rollout.admission_order`, so the batches the job pads in
that order must come out of it in that order (group_jobs ``_unadmitted``).

Independent reference: the static-batch identity, decode steps = the sum over consecutive
batches of ``slots`` sequences of each batch's longest response (every slot waits for its
batch's longest), checked on the timeline's own admitted lengths.
"""

from __future__ import annotations

from rlmcost.cli.validate import run_from_argv
from rlmcost.evaluation.deployment import evaluate_deployment


def test_calls_decode_as_whole_batches():
    argv = ["--framework", "verl", "--model", "qwen2.5-7b", "--no-kl", "--batch", "64",
            "--group", "8", "--prompt-len", "256", "--response-len", "4096",
            "--hardware", "h100-sxm", "--gpus", "8", "--rollout-tp", "2",
            "--sequences-per-call", "16", "--length-dist", "lognormal:800,0.67,4096"]  # fmt: skip
    est = evaluate_deployment(run_from_argv("rlvr", argv))
    tl = next(j.timeline for g in est.groups for j in g.jobs if j.task.kind == "generate")
    assert tl is not None and tl.slots == 16 and tl.sequences == 64 * 8 // 4
    batches = [tl.lengths[i:i + tl.slots] for i in range(0, tl.sequences, tl.slots)]
    assert all(len(set(b)) == 1 for b in batches)  # each admitted batch padded to one length
    assert len({b[0] for b in batches}) > 1  # and the batches differ (a real spread)
    assert tl.steps == sum(b[0] for b in batches)
