"""A trained model's own dropout in an RL training step (``ModelSpec.hidden_dropout``, read
from its config.json: :mod:`rlmcost.specs.hf_dropout`).

The RL trainers that run a Hugging Face model train it in training mode with its config's
dropout: NeMo RL's DTensor workers (``self.model.train()`` before the training loop,
``nemo_rl/models/policy/workers/dtensor_policy_worker.py`` and ``dtensor_policy_worker_v2.py``
@7ea279abf), verl's FSDP actor and critic (``verl/workers/actor/dp_actor.py``
``update_policy``, ``critic/dp_critic.py`` ``update_critic`` @b178a3cd; no dropout key set on
load), OpenRLHF (``openrlhf/trainer/ray/ppo_actor.py``, ``ppo_critic.py`` @3c3be623: none
either), TRL's GRPOTrainer unless ``disable_dropout`` (``trl/trainer/grpo_trainer.py``
@f2cd5771: ``disable_dropout_in_model`` sets every ``nn.Dropout`` to p = 0; the key since PR
3234, 47b9515f, v0.17.0, default False: ``TrainLayout.disable_dropout``, ``--disable-dropout``)
and DeepSpeed-Chat (step 3 ``main.py``: ``--disable_actor_dropout`` / ``--disable_critic_dropout``
store_true, later ``--actor_dropout`` / ``--critic_dropout`` default None, "keep the default
dropout configuration"; ``configure_dropout`` sets ``dropout``, ``attention_dropout``,
``hidden_dropout`` and ``activation_dropout`` only, never GPT-2's ``resid_pdrop``). Their
log-prob, reference and value forwards run in eval mode (``model.eval()``: the same files),
without dropout.

So a training step of a model whose config has a hidden dropout is timed with
``StepOptions.dropout`` on: its dropout kernels, its attention with dropout (GPT-2's
``attn_pdrop`` equals ``resid_pdrop``; a pre-FlashAttention-3 kernel) and the checkpoint's early
stop ending after the mask saved behind the down projection
(:func:`~rlmcost.perf.ckpt_early_stop.skips_down_projection`; under NeMo RL's per-module
checkpoint GPT-2's dropouts sit inside the modules, after ``c_proj``: neither projection's rerun
is skipped, :mod:`rlmcost.perf.module_ckpt`; Phi-3's sit outside its modules, priced the same,
not apart). The attention dropout is priced with the hidden one (GPT-2's are equal); Phi-3's
attention_dropout 0 beside a hidden dropout is priced as on (stated in the note). The masks'
bytes are not counted (the memory model's convention, :mod:`rlmcost.parallel.activations`). Not
where a framework runs Megatron-core (its own ``hidden_dropout`` from the converted config, not
read), nor in the paper's ideal run. A config with attention dropout alone is priced without it
(stated).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rlmcost.frameworks.presets import behaviour
from rlmcost.placement.pass_options import runs_hf_model

if TYPE_CHECKING:
    from rlmcost.deployment.spec import Deployment
    from rlmcost.specs.model import ModelSpec

DROPOUT_NOTE = (
    "{model}'s dropout (config hidden {hidden:g}, attention {attention:g}) in its training "
    "steps, as the trainer runs it in training mode: dropout kernels, attention with "
    "dropout (a pre-FlashAttention-3 kernel) and, under full recomputation, the rerun "
    "through the down projection, whose mask is saved after it (per module, through the "
    "attention's output projection too); log-prob forwards in eval mode, none; masks' bytes "
    "not counted (rlmcost.placement.model_dropout)"
)
ATTENTION_ONLY_NOTE = (
    "{model}'s config sets attention dropout {attention:g} alone: not modelled, its training "
    "steps priced without dropout (rlmcost.placement.model_dropout)"
)
DISABLED_NOTE = (
    "{model}'s config dropout set to 0 by the trainer (--disable-dropout, TRL "
    "disable_dropout): priced without (rlmcost.placement.model_dropout)"
)


def trains_with_dropout(deployment: Deployment, spec: ModelSpec) -> bool:
    """Whether ``spec``'s training steps run its hidden dropout under ``deployment`` (the
    group's view where a group gives its own trainer layout; module docstring)."""
    if deployment.ideal or deployment.train.disable_dropout or not spec.hidden_dropout:
        return False
    beh = behaviour(deployment.framework)
    return beh is None or runs_hf_model(beh, deployment.train)


def dropout_note(deployment: Deployment, spec: ModelSpec) -> str | None:
    """The output's note on ``spec``'s dropout in its training steps, None where its config
    has none or the run is the paper's ideal one."""
    if deployment.ideal or not (spec.hidden_dropout or spec.attention_dropout):
        return None
    args = {"model": spec.name, "hidden": spec.hidden_dropout,
            "attention": spec.attention_dropout}  # fmt: skip
    if trains_with_dropout(deployment, spec):
        return DROPOUT_NOTE.format(**args)
    if deployment.train.disable_dropout:
        return DISABLED_NOTE.format(**args)
    if not spec.hidden_dropout:
        return ATTENTION_ONLY_NOTE.format(**args)
    return (f"{spec.name}'s config dropout: {deployment.framework}'s Megatron-core trainer "
            "at this layout takes its own (not read), priced without "
            "(rlmcost.placement.model_dropout)")  # fmt: skip
