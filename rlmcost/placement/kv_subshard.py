"""Which trainers may run a TP degree above the KV heads: Megatron-core's alone.

``parallel.validate.check_layout`` takes a training TP that is a multiple of the KV heads
(and divides the query heads) as Megatron-core takes it since NVIDIA/Megatron-LM f7dfb99795
(``validate.KV_SUBSHARD_COMMIT``; rlmcost models Megatron-core at d98e8a64dd for every
framework's Megatron backend, with no older version: NeMo RL at 7ea279abf trains
Qwen3.5-397B-A17B, 2 KV heads, at TP 8 in
examples/configs/recipes/llm/grpo-qwen3.5-397ba17b-32n8g-megatron.v2.yaml). A trainer that runs
a Hugging Face model splits ``k_proj`` and ``v_proj`` column-wise by heads and has no such
sub-sharding, so :func:`check_kv_subshard` refuses it there:

* NeMo RL's DTensor policy (``Behaviour.hf_trainer == "zero3"``) asserts
  ``num_key_value_heads % tp_mesh.size() == 0`` (nemo_rl/models/dtensor/parallelize.py at
  7ea279abf, ``_parallelize_model``);
* any other Hugging Face trainer (``pass_options.runs_hf_model``; ``--kernels liger``, Liger's
  patch over a Hugging Face model) shards with the model's tensor-parallel plan, whose
  column-wise ``k_proj`` / ``v_proj`` each rank then views as ``num_key_value_heads / tp``
  heads, which must be whole (the same rule).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from rlmcost.deployment.kinds import TrainerKernels
from rlmcost.errors import SpecError
from rlmcost.frameworks.presets import behaviour
from rlmcost.parallel.validate import KV_SUBSHARD_COMMIT
from rlmcost.placement.megatron_only import MEGATRON_AT
from rlmcost.placement.pass_options import runs_hf_model

if TYPE_CHECKING:
    from rlmcost.deployment.spec import Deployment, TrainLayout
    from rlmcost.specs import ModelSpec

_WHY = {
    "zero3": "NeMo RL's DTensor policy asserts num_key_value_heads % tp == 0 "
             "(nemo_rl/models/dtensor/parallelize.py)",
}
"""The source of the refusal by ``Behaviour.hf_trainer`` (module docstring); others: the
Hugging Face model's tensor-parallel plan."""


def subshards_kv(framework: str | None, train: TrainLayout) -> bool:
    """Whether the trainer of ``framework`` at layout ``train`` may run a TP above the KV
    heads: it runs Megatron-core, not a Hugging Face model (module docstring; the rule
    :func:`check_kv_subshard` applies, which the planner's TP degrees follow)."""
    beh = behaviour(framework)
    if train.kernels is TrainerKernels.LIGER:
        return False
    return beh is None or not runs_hf_model(beh, train)


def check_kv_subshard(dep: Deployment, models: Iterable[ModelSpec]) -> None:
    """SpecError where a trainer layout of ``dep`` (its ``train`` and its groups') runs a
    Hugging Face model (module docstring) at a TP above the KV heads of one of the trained
    ``models``; nothing for the paper's ideal run or a Megatron-core trainer."""
    if dep.ideal:
        return
    beh = behaviour(dep.framework)
    layouts = [dep.train] + [g.train for g in dep.groups if g.train is not None]
    for train in layouts:
        if train.tp == 1 or subshards_kv(dep.framework, train):
            continue
        liger = train.kernels is TrainerKernels.LIGER
        for spec in models:
            h_kv = spec.n_kv_heads
            if train.tp <= h_kv or train.tp % h_kv:
                continue
            who = f"{dep.framework}'s trainer" if beh is not None else "the trainer"
            why = _WHY.get(beh.hf_trainer if beh is not None and not liger else "",
                           "its tensor-parallel plan splits k_proj and v_proj by heads")
            fix = MEGATRON_AT.get(beh.hf_trainer, "") if beh is not None else ""
            raise SpecError(
                f"tp={train.tp} > kv heads={h_kv} of {spec.name}: {who} runs a Hugging Face "
                f"model at this layout ({why}); only Megatron-core sub-shards the QKV "
                f"activations (Megatron-LM {KV_SUBSHARD_COMMIT}): give --tp dividing "
                f"{h_kv}{fix}; an inference engine replicates the kv heads instead (--rollout-tp "
                f"{train.tp} with a training --tp of at most {h_kv})")
