"""NeMo RL DPO configs (``examples/configs/dpo.yaml`` and the recipes over it, which
``examples/run_dpo.py`` runs) as an ``rlmcost dpo`` query; the policy worker's layout is read
as for GRPO (:func:`rlmcost.frameworks.nemo_rl._layout`).

Units (``nemo_rl/algorithms/dpo.py`` and ``examples/configs/dpo.yaml`` @7ea279ab):

* the dataloader's batch is ``policy.train_global_batch_size`` preference pairs, one optimizer
  step each (dpo.yaml: "each preference sample corresponds to a pair of chosen and rejected
  responses so the actual batch size processed by the model is train_global_batch_size * 2";
  dpo.py trains with ``gbs=train_global_batch_size * 2``): ``--batch``, in pairs;
* ``policy.train_micro_batch_size`` counts pairs per GPU: the trainer's micro-batches and the
  reference's log-prob forward take ``train_micro_batch_size * 2`` sequences (dpo.py
  ``mbs=...``, ``get_reference_policy_logprobs(micro_batch_size=...)``): ``--micro-batch``;
* ``policy.max_total_sequence_length`` bounds each prompt + response.

No generation: the config has no engine, the reference is the policy's own starting weights.
"""

from __future__ import annotations

from rlmcost.errors import SpecError
from rlmcost.frameworks.config import Reader
from rlmcost.frameworks.result import ImportedQuery

DPO_IGNORED = (
    "dpo.max_num_epochs", "dpo.max_num_steps", "dpo.val_period", "dpo.val_batches",
    "dpo.val_global_batch_size", "dpo.val_micro_batch_size", "dpo.val_at_start",
    "dpo.val_at_end", "dpo.seed", "dpo.reference_policy_kl_penalty",
    "dpo.preference_average_log_probs", "dpo.sft_average_log_probs",
    "dpo.preference_loss_weight", "dpo.sft_loss_weight",
)  # fmt: skip
"""dpo.yaml's ``dpo`` keys that change no cost: steps, validation, the seed, the loss's
coefficients (beta is ``reference_policy_kl_penalty``; the SFT term reuses the chosen
responses' log-probs of the same forward)."""


def is_dpo(r: Reader) -> bool:
    """A DPO config: a ``dpo`` section (dpo.yaml's) and no ``grpo`` one."""
    keys = [k.split(".", 1)[0] for k in r.flat]
    return "dpo" in keys and "grpo" not in keys


def dpo_workload(r: Reader, q: ImportedQuery, prompt_len: int | None) -> None:
    """``--batch`` (pairs) and the prompt / response split of a DPO config."""
    q.algorithm = "dpo"
    q.note("a DPO config (dpo section; examples/run_dpo.py): rlmcost dpo, the policy and its "
           "reference over preference pairs, no generation")  # fmt: skip
    pairs = r.integer("policy.train_global_batch_size", 128)
    q.convert(f"policy.train_global_batch_size={pairs}", "--batch", pairs,
              f"preference pairs per optimizer step: {2 * pairs:,} sequences, chosen and "
              "rejected (dpo.py trains gbs=train_global_batch_size * 2)")  # fmt: skip
    total = r.integer("policy.max_total_sequence_length", 1024, lo=2)
    if prompt_len is not None and prompt_len >= total:
        raise SpecError(f"--prompt-len {prompt_len} leaves no response in "
                        f"policy.max_total_sequence_length={total}")  # fmt: skip
    s = total // 2 if prompt_len is None else prompt_len
    if prompt_len is None:
        q.note(f"NeMo RL gives prompt + response only (max_total_sequence_length={total}); "
               f"prompts taken as {s} tokens (give --prompt-len; DPO's cost depends on the "
               "sum)")  # fmt: skip
    q.convert(f"policy.max_total_sequence_length={total}", "--prompt-len", s,
              "prompt tokens (part of the total)")  # fmt: skip
    q.convert(f"policy.max_total_sequence_length={total}", "--response-len", total - s,
              f"response tokens: {total} - {s}")  # fmt: skip


def pair_micro_batch(r: Reader, q: ImportedQuery) -> None:
    """``--micro-batch``: ``train_micro_batch_size`` pairs per GPU, twice as many sequences."""
    micro = r.integer("policy.train_micro_batch_size", 2)
    q.convert(f"policy.train_micro_batch_size={micro}", "--micro-batch", 2 * micro,
              f"pairs per GPU: {2 * micro} sequences, chosen and rejected, in each trainer and "
              "reference micro-batch (dpo.py: train_micro_batch_size * 2)")  # fmt: skip
