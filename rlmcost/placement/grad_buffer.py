"""The gradient buffer of a deployment's trainer: the dtype its micro-batches accumulate and its
data-parallel reduce runs in, where the trainer is Megatron-core's.

Megatron-core's ``DistributedDataParallel`` keeps the gradients of a model chunk in one
contiguous buffer per (parameter, gradient) dtype: ``grad_dtype = torch.float if
self.ddp_config.grad_reduce_in_fp32 else param.dtype`` (NVIDIA/Megatron-LM megatron/core/
distributed/distributed_data_parallel.py @1dcf0daf; ``DistributedDataParallelConfig.
grad_reduce_in_fp32`` defaults to False). The buffer is whole on every data-parallel rank,
ZeRO-1 (the distributed optimizer) included, and the reduce moves its dtype
(:mod:`rlmcost.parallel.zero`, :mod:`rlmcost.perf.data_parallel`). How each framework sets it
(``Behaviour.megatron_grad_reduce``; the importers read the run's own key):

* slime and miles: ``fp32``. They parse and validate Megatron-LM's arguments
  (slime/backends/megatron_utils/arguments.py ``validate_args`` -> megatron.training.arguments
  @624b824a; miles/backends/megatron_utils/arguments.py @bb6f7dbd) and build the model with
  Megatron-LM's ``get_model`` (slime/backends/megatron_utils/model.py; miles the same), which
  sets ``grad_reduce_in_fp32 = args.accumulate_allreduce_grads_in_fp32``
  (megatron/training/training.py @1dcf0daf, slime's docker/Dockerfile pin); for bf16 (slime
  sets ``bf16 = not fp16``) ``validate_args`` turns it on ("bfloat16 requires gradient
  accumulation and all-reduce to be done in fp32") unless ``--grad-reduce-in-bf16`` or
  ``--main-grads-dtype bf16`` (megatron/training/arguments.py @1dcf0daf lines 710-723); under
  ``--fp16`` only ``--accumulate-allreduce-grads-in-fp32`` turns it on.
* verl (its Megatron workers): ``fp32``. verl/utils/megatron_utils.py ``get_model``
  (@b178a3cd) builds ``{"use_distributed_optimizer": ..., "grad_reduce_in_fp32": True,
  "overlap_grad_reduce": False}`` updated by ``megatron.override_ddp_config``; the default
  path (config/engine/megatron.yaml: ``use_mbridge`` and ``vanilla_mbridge`` true) is mbridge's
  ``get_model``, whose defaults are ``{"grad_reduce_in_fp32": True, "use_distributed_optimizer":
  True}`` updated by the same override (ISEEKYAN/mbridge mbridge/core/util.py @10cb17f5);
  ``vanilla_mbridge: false`` (Megatron-Bridge's provider) passes
  ``DistributedDataParallelConfig(use_distributed_optimizer=...)`` plus the override, so
  Megatron-core's False.
* NeMo RL (its Megatron worker): ``param``. nemo_rl/models/megatron/setup.py @7ea279abf passes
  ``policy.megatron_cfg.distributed_data_parallel_config.grad_reduce_in_fp32`` (v0.3.0:
  megatron_policy_worker.py), false in examples/configs/grpo_math_1B.yaml and
  grpo_math_1B_megatron.yaml from v0.3.0 on.

A Hugging Face trainer (FSDP, DeepSpeed) has no such buffer (FSDP2's reduce dtype is
``Behaviour.fsdp2_reduce_bytes``); rlmcost's bare layout keeps the gradients in the
parameters' dtype (the ZeRO paper's 2 + 2 + 12 bytes) unless ``--grad-reduce-dtype`` says;
the paper's idealized iteration always does.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rlmcost.choices import Dtype
from rlmcost.deployment.kinds import GradReduce
from rlmcost.frameworks.presets import behaviour
from rlmcost.placement.megatron_only import check_megatron, runs_hf

if TYPE_CHECKING:
    from rlmcost.deployment.spec import Deployment, TrainLayout


def grad_reduce(deployment: Deployment, train: TrainLayout | None = None) -> GradReduce | None:
    """The gradient buffer of the trainer at layout ``train`` (None: the deployment's): the
    layout's ``grad_reduce_dtype``, else its framework's Megatron-core trainer's
    (``Behaviour.megatron_grad_reduce``); None where there is no such choice (the paper's
    ideal run, a framework's Hugging Face trainer, the bare layout without the field).
    SpecError for the field on a Hugging Face trainer.

    >>> from rlmcost.deployment.spec import Deployment
    >>> grad_reduce(Deployment(framework="slime")).value
    'fp32'
    >>> grad_reduce(Deployment(framework="nemo-rl", train={"zero": "1"})).value
    'param'
    >>> grad_reduce(Deployment(framework="verl")) is None  # its FSDP workers
    True
    """
    if deployment.ideal:
        return None
    train = train or deployment.train
    given = train.grad_reduce_dtype
    if given is not None:
        check_megatron(deployment, train, "--grad-reduce-dtype is Megatron-core's gradient "
                       "buffer")  # fmt: skip
        return given
    beh = behaviour(deployment.framework)
    if beh is None or runs_hf(deployment, train):
        return None
    return GradReduce(beh.megatron_grad_reduce)


def grad_dtype(deployment: Deployment, train: TrainLayout | None = None) -> Dtype | None:
    """fp32 where the trainer's gradient buffer is fp32 (:func:`grad_reduce`), else None (its
    gradients in its stored dtype): ``Workload.grad_dtype`` of its training task."""
    return Dtype.FP32 if grad_reduce(deployment, train) is GradReduce.FP32 else None


def grad_reduce_bytes(deployment: Deployment) -> int:
    """``StepOptions.grad_reduce_bytes`` of the deployment's trainer: 4 for an fp32 buffer,
    else 0 (the weight dtype's)."""
    return 4 if grad_dtype(deployment) is Dtype.FP32 else 0


def grad_buffer_note(deployment: Deployment) -> str | None:
    """The output's note on the trainer's gradient buffer, where it is Megatron-core's or
    given (None otherwise)."""
    how = grad_reduce(deployment)
    if how is None:
        return None
    who = f"{deployment.framework}'s Megatron-core trainer" if deployment.framework \
        else "the trainer"  # fmt: skip
    given = " (--grad-reduce-dtype)" if deployment.train.grad_reduce_dtype is not None else ""
    if how is GradReduce.FP32:
        return (f"gradients: {who} accumulates and reduces them in an fp32 buffer{given} "
                "(Megatron-core grad_reduce_in_fp32): 4 B a parameter, whole on each "
                "data-parallel rank under the distributed optimizer, the data-parallel reduce "
                "in fp32 (rlmcost.placement.grad_buffer)")  # fmt: skip
    return (f"gradients: {who} keeps them in the parameters' dtype{given} (Megatron-core "
            "grad_reduce_in_fp32 false), the data-parallel reduce in that dtype "
            "(rlmcost.placement.grad_buffer)")  # fmt: skip
