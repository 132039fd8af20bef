"""NeMo RL import: an on-policy distillation config (``distillation`` and ``teacher`` sections,
examples/configs/distillation_math.yaml and the recipes over it, which
examples/run_distillation.py runs) as an ``rlmcost opd`` query.

What NeMo RL's distillation does per step (nemo_rl/algorithms/distillation.py
``distillation_train`` at 7ea279abf): the student (``policy``) generates in vLLM as GRPO does,
``num_generations_per_prompt`` samples of each of ``num_prompts_per_step`` prompts (the math
environment scores them for the logs, inside the generation timer); the teacher, a ``Policy``
of its own on the training GPUs (``teacher``, ``init_optimizer=False``, moved to the host by
``offload_after_refit`` after each use), runs ``get_topk_logits`` over every sample
(``teacher_logprob_inference``); the student trains on the divergence to those top-k logits
(``policy_training``). No reference and no old-policy log-prob forward run. The
``distillation`` section's batch keys are the ``grpo`` section's, so the GRPO importer reads
them under their GRPO names (:func:`distillation_aliases`), with ``DistillationConfig``'s
defaults (128 prompts, 1 generation) where the config leaves them out.

Cross-tokenizer off-policy distillation (``teachers:`` list, ``teacher: null``,
examples/run_xtoken_off_policy_distillation.py) trains on a fixed dataset with no generation:
refused with the reason.
"""

from __future__ import annotations

from typing import Any

from rlmcost.errors import SpecError
from rlmcost.frameworks.config import Reader
from rlmcost.frameworks.result import ImportedQuery
from rlmcost.perf.nemo_rl_dispatch import TOPK_LOGITS_K

DEFAULTS = {"num_prompts_per_step": 128, "num_generations_per_prompt": 1}
"""``DistillationConfig`` defaults (nemo_rl/algorithms/distillation.py at 7ea279abf)."""

IGNORED = ("teacher.tokenizer", "teacher.generation", "teacher.optimizer", "teacher.scheduler",
           "teacher.dynamic_batching", "teacher.sequence_packing", "teacher.max_grad_norm",
           "teacher.train_global_batch_size", "teacher.train_micro_batch_size",
           "teacher.generation_batch_size", "teacher.make_sequence_length_divisible_by",
           "teacher.logprob_batch_size", "teacher.offload_optimizer_for_logprob",
           "teacher.max_total_sequence_length", "teacher.precision", "teacher.logprob_chunk_size",
           "teacher.dtensor_cfg", "teacher.megatron_cfg", "teacher.hf_config_overrides",
           "grpo.topk_logits_k", "grpo.max_num_steps", "grpo.max_num_epochs",
           "grpo.val_period", "grpo.val_at_start", "grpo.val_at_end", "grpo.val_batch_size",
           "grpo.max_val_samples", "grpo.seed")  # fmt: skip
"""Keys that change no priced cost: the teacher's trainer-only settings and its worker's own
layout (said in a note), the top-k width (a top-k of the logits rlmcost prices), the schedule."""


def is_distillation(flat: dict[str, Any], where: str) -> bool:
    """An on-policy distillation config: a ``distillation`` section and no ``grpo``, ``ppo``
    or ``dpo`` one; SpecError for the cross-tokenizer off-policy kind (module docstring)."""
    keys = {k.split(".", 1)[0] for k in flat}
    if "distillation" not in keys or keys & {"grpo", "ppo", "dpo"}:
        return False
    if "teachers" in keys or flat.get("teacher", "") is None:
        raise SpecError(f"{where}: a cross-tokenizer off-policy distillation config (teachers "
                        "list; examples/run_xtoken_off_policy_distillation.py): the student "
                        "trains on a fixed dataset and generates nothing, which rlmcost does not "
                        "price (it prices on-policy distillation: `rlmcost opd`)")  # fmt: skip
    return True


def distillation_aliases(flat: dict[str, Any]) -> tuple[dict[str, Any], dict[str, str]]:
    """``flat`` with each ``distillation.X`` also under ``grpo.X`` and ``DistillationConfig``'s
    batch defaults where absent, and the alias -> original map (for the ignored keys' names)."""
    out, alias = dict(flat), {}
    for name, value in DEFAULTS.items():
        out.setdefault(f"distillation.{name}", value)
    for key, value in list(out.items()):
        if key.startswith("distillation."):
            name = "grpo." + key.removeprefix("distillation.")
            out[name], alias[name] = value, key
    return out, alias


def distillation_query(r: Reader, q: ImportedQuery) -> None:
    """The distillation-only flags: ``opd`` and ``--teacher``; notes on the teacher's worker."""
    q.algorithm = "opd"
    teacher = r.text("teacher.model_name", None)
    if not teacher:
        raise SpecError(f"{r.where}: set teacher.model_name (the teacher model)")
    q.set("--teacher", teacher)
    k = r.integer("grpo.topk_logits_k", 64)
    q.note(f"an on-policy distillation config (distillation section; examples/run_distillation."
           f"py): rlmcost opd, the student generates and the teacher {teacher} runs one forward "
           f"over every sample for its top-{k} logits (distillation.py get_topk_logits); no "
           "reference and no old-policy log-prob forward; the top-k through the driver, back "
           "from the teacher and into the student's call (rlmcost.perf.nemo_rl_dispatch)" + (
               f", priced at NeMo RL's default k {TOPK_LOGITS_K}" if k != TOPK_LOGITS_K else ""))
    megatron = r.flag("teacher.megatron_cfg.enabled", False)
    tp = r.integer("teacher.megatron_cfg.tensor_model_parallel_size" if megatron else
                   "teacher.dtensor_cfg.tensor_parallel_size", 1)  # fmt: skip
    q.note(f"the teacher's own worker ({'Megatron-core' if megatron else 'DTensor'}, TP {tp}) "
           "is priced in the student's layout on the training GPUs; between its forwards its "
           "weights are on the host (offload_after_refit), as --offload-idle keeps them; "
           + ("in the policy's precision (Megatron-core's Float16Module)" if megatron else
              "in fp32, as the student's (the DTensor worker loads every Policy in fp32, "
              "nemo_rl/models/automodel/setup.py; FSDP2 gathers bf16 units): 4 B a parameter "
              "of its shard on the device while it runs and on the host between, and in the "
              "round trip (Behaviour.teacher_policy_stored)"))  # fmt: skip
