"""slime import: on-policy distillation (``--use-opd``) as a teacher beside the algorithm.

slime adds OPD as a KL term to any advantage estimator (examples/on_policy_distillation/
README.md @624b824a: "OPD is orthogonal to advantage estimators"), the teacher's per-token
log-probs of every sample coming one of two ways (``--opd-type``, slime/utils/arguments.py):

* ``megatron``: the teacher's checkpoint (``--opd-teacher-load``) is loaded into the actor's
  Megatron model as another weight set (slime/backends/megatron_utils/actor.py
  ``load_other_checkpoint("teacher", ...)``, kept in host memory by the weights backuper as
  the reference's are) and its forward runs on the actor's GPUs with the reference's
  (slime/ray/placement_group.py ``with_opd_teacher``). The README: the teacher "has same
  architecture as policy/ref model", so it is priced as the actor's model: ``--teacher``;
* ``sglang``: the teacher serves on an SGLang server launched outside slime (``--rm-url``);
  the rollout's reward function asks it for every sample's log-probs
  (slime/rollout/on_policy_distillation.py ``reward_func``). Its GPUs are not slime's, so
  nothing is added to the cluster's work, as for a reward server (a note).
"""

from __future__ import annotations

from rlmcost.frameworks.config import Reader
from rlmcost.frameworks.result import ImportedQuery


def import_opd(r: Reader, q: ImportedQuery) -> bool:
    """``--teacher`` for ``--use-opd --opd-type megatron`` (module docstring); True when the
    teacher's forward runs on the actor's GPUs."""
    if not r.flag("use-opd", False):
        return False
    kind = r.text("opd-type", "megatron", ("megatron", "sglang"))
    r.number("opd-kl-coef", 1.0)  # the term's weight: no cost
    if kind == "sglang":
        q.note("--use-opd --opd-type sglang: the teacher's log-probs come from an SGLang server "
               "outside slime's GPUs (--rm-url; slime/rollout/on_policy_distillation.py), during "
               "the rollout: not on this cluster, as a reward server is not")  # fmt: skip
        return False
    load = r.text("opd-teacher-load", None)
    q.set("--teacher", dict(q.flags)["--model"])
    q.note(f"--use-opd --opd-type megatron: the teacher ({load or 'its checkpoint'}) is loaded "
           "into the actor's Megatron model as another weight set, the actor's architecture "
           "(examples/on_policy_distillation/README.md), its forward on the actor's GPUs beside "
           "the reference's and its weights in host memory between them (actor.py "
           "load_other_checkpoint): --teacher the actor's model, beside it")  # fmt: skip
    return True
