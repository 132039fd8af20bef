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

So a training step of a model whose config has a dropout is timed with it, each kind where it
acts (:mod:`rlmcost.perf.dropout`): a hidden dropout (``StepOptions.hidden_dropout``) as the
Hugging Face model's own ``nn.functional.dropout`` kernels (``dropout_add_fused`` off: GPT-2's
``resid_dropout``, Phi-3's ``resid_attn_dropout`` / ``resid_mlp_dropout``, OPT's two
``dropout`` calls in ``OPTDecoderLayer.forward``), and the checkpoint's early stop ending after
the mask saved behind the down projection
(:func:`~rlmcost.perf.ckpt_early_stop.skips_down_projection`; under NeMo RL's per-module
checkpoint GPT-2's dropouts sit inside the modules, after ``c_proj``: neither projection's rerun
is skipped, :mod:`rlmcost.perf.module_ckpt`; Phi-3's sit outside its modules, priced the same,
not apart); an attention dropout (``StepOptions.attention_dropout``) as the attention kernel
with dropout (in-kernel, a pre-FlashAttention-3 kernel; with the scores in HBM, a dropout
kernel over them), which changes nothing of the early stop. Each is on where its own config
probability is above 0: Phi-3's hidden dropout without its attention_dropout 0, OPT's
``dropout`` 0.1 without its ``attention_dropout`` 0.0. The hidden dropout's saved masks (1 byte
per element) are added to the training activations (:mod:`rlmcost.placement.dropout_memory`).
Not where a framework runs
Megatron-core (its own ``hidden_dropout`` from the converted config, not read), nor in the
paper's ideal run, nor where the trainer sets the dropout to 0 (``--disable-dropout``: TRL's
``disable_dropout``; DeepSpeed-Chat's release, whose ``create_hf_model`` sets
``model_config.dropout = 0.0``, :mod:`rlmcost.reports.rl_runs_dschat`).
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
    "steps, as the trainer runs it in training mode: {kinds}; log-prob forwards in eval "
    "mode, none; the hidden masks' bytes (1 per element) in the training activations "
    "(rlmcost.perf.dropout, rlmcost.placement.dropout_memory)"
)
HIDDEN_PART = (
    "the hidden one as the model's own dropout kernels and, under full recomputation, the "
    "rerun through the down projection, whose mask is saved after it (per module, through "
    "the attention's output projection too)"
)
ATTENTION_PART = (
    "the attention one inside the attention kernel (a pre-FlashAttention-3 kernel; with "
    "the scores in HBM, a dropout kernel over them)"
)
DISABLED_NOTE = (
    "{model}'s config dropout set to 0 by the trainer (--disable-dropout: TRL "
    "disable_dropout, DeepSpeed-Chat's create_hf_model): priced without "
    "(rlmcost.placement.model_dropout)"
)


def train_dropout(deployment: Deployment, spec: ModelSpec) -> tuple[bool, bool]:
    """(hidden, attention): which of ``spec``'s config dropouts its training steps run under
    ``deployment`` (the group's view where a group gives its own trainer layout; module
    docstring), each where its probability is above 0."""
    if deployment.ideal or deployment.train.disable_dropout or \
            not (spec.hidden_dropout or spec.attention_dropout):  # fmt: skip
        return False, False
    beh = behaviour(deployment.framework)
    if beh is not None and not runs_hf_model(beh, deployment.train):
        return False, False
    return spec.hidden_dropout > 0, spec.attention_dropout > 0


def trains_with_dropout(deployment: Deployment, spec: ModelSpec) -> bool:
    """Whether ``spec``'s training steps run its hidden dropout (the one that moves the
    checkpoint's early stop) under ``deployment`` (:func:`train_dropout`)."""
    return train_dropout(deployment, spec)[0]


def dropout_note(deployment: Deployment, spec: ModelSpec) -> str | None:
    """The output's note on ``spec``'s dropout in its training steps, None where its config
    has none or the run is the paper's ideal one."""
    if deployment.ideal or not (spec.hidden_dropout or spec.attention_dropout):
        return None
    args = {"model": spec.name, "hidden": spec.hidden_dropout,
            "attention": spec.attention_dropout}  # fmt: skip
    hidden, attention = train_dropout(deployment, spec)
    if hidden or attention:
        kinds = [part for on, part in ((hidden, HIDDEN_PART), (attention, ATTENTION_PART)) if on]
        return DROPOUT_NOTE.format(kinds="; ".join(kinds), **args)
    if deployment.train.disable_dropout:
        return DISABLED_NOTE.format(**args)
    return (f"{spec.name}'s config dropout: {deployment.framework}'s Megatron-core trainer "
            "at this layout takes its own (not read), priced without "
            "(rlmcost.placement.model_dropout)")  # fmt: skip
