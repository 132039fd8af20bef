"""How a deployment's framework runs its teacher-forced passes: the
:class:`~rlmcost.perf.step_pass.StepOptions` its log-prob forwards and training steps are timed
with, from the framework's :class:`~rlmcost.frameworks.preset_model.Behaviour` (its source is
there): today the log-softmax its log-prob and loss heads run over fp32 logits
(``Behaviour.logprob_head``, :mod:`rlmcost.perf.logprob_head`) and an FSDP2 trainer's reduce
dtype (``Behaviour.fsdp2_reduce_bytes``) and, when it trains under ZeRO-3, its eager Hugging Face
layers (``Behaviour.zero3_hf_eager``; both :mod:`rlmcost.perf.policy_worker`). The paper's idealized
iteration and frameworks without a preset take rlmcost's defaults (None).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rlmcost.frameworks.presets import behaviour
from rlmcost.parallel.layout import ZeroStage
from rlmcost.perf.logprob_head import FUSED, logprob_head
from rlmcost.perf.step_pass import StepOptions

if TYPE_CHECKING:
    from rlmcost.deployment.spec import Deployment


def step_options(deployment: Deployment) -> StepOptions | None:
    """The framework's pass options, None where they are rlmcost's defaults.

    >>> from rlmcost.deployment.spec import Deployment
    >>> step_options(Deployment(framework="nemo-rl")).logprob_head.name
    'nemo-rl-distributed-logprob'
    >>> step_options(Deployment(framework="verl")) is None
    True
    """
    beh = None if deployment.ideal else behaviour(deployment.framework)
    if beh is None or (beh.logprob_head == FUSED.name and not beh.fsdp2_reduce_bytes):
        return None
    eager = beh.zero3_hf_eager and deployment.train.zero is ZeroStage.OS_G_P
    return StepOptions(logprob_head=logprob_head(beh.logprob_head),
                       fsdp2_reduce_bytes=beh.fsdp2_reduce_bytes, hf_eager=eager)  # fmt: skip


def worker_notes(deployment: Deployment, kl: bool) -> tuple[str, ...]:
    """The notes that state the framework's policy-worker terms a query is priced with
    (:mod:`rlmcost.perf.policy_worker`): the reference swap (with a reference forward, ``kl``)
    and, under ZeRO-3, FSDP2's copies and the eager Hugging Face layers."""
    beh = None if deployment.ideal else behaviour(deployment.framework)
    if beh is None:
        return ()
    out = []
    if beh.reference_swap and kl:
        out.append(f"reference forward: {deployment.framework} swaps the reference's weights "
                   "into the policy's model through host memory, 3 host-link copies of the "
                   "rank's model state per step (rlmcost.perf.policy_worker)")  # fmt: skip
    if deployment.train.zero is ZeroStage.OS_G_P and (beh.fsdp2_reduce_bytes or beh.zero3_hf_eager):
        out.append(f"ZeRO-3 trainer as {deployment.framework} runs it: FSDP2 with gradients "
                   f"reduced in {beh.fsdp2_reduce_bytes or 2} B, its all-gather copy-out and "
                   "reduce-scatter copy-in every micro-batch"
                   + (", the Hugging Face model's layers run eagerly (unfused fp32 RMSNorm, "
                      "RoPE, SiLU x up)" if beh.zero3_hf_eager else "")
                   + " (rlmcost.perf.policy_worker)")  # fmt: skip
    return tuple(out)
