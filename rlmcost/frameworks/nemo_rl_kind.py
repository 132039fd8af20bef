"""NeMo RL import: which trainer a config is for, by its top-level section as NeMo RL's example
entry points read them (NVIDIA-NeMo/RL at 7ea279abf: examples/run_grpo.py reads ``grpo``,
run_ppo.py ``ppo``, run_dpo.py ``dpo``, run_sft.py ``sft``, run_rm.py ``rm``,
run_distillation.py ``distillation``). rlmcost prices GRPO (as ``rlvr``), PPO
(:mod:`rlmcost.frameworks.nemo_rl_ppo`), DPO and on-policy distillation (as ``opd``,
:mod:`rlmcost.frameworks.nemo_rl_distill`); supervised fine-tuning and reward-model training
are refused with the reason, never priced as GRPO from the defaults of keys the config does
not have."""

from __future__ import annotations

from rlmcost.errors import SpecError
from rlmcost.frameworks.config import Reader

REFUSED = {
    "sft": "a supervised fine-tuning config (sft section, examples/run_sft.py), which rlmcost "
           "does not price (it prices RL post-training)",
    "rm": "a reward-model training config (rm section, examples/run_rm.py), which rlmcost does "
          "not price",
}  # fmt: skip
"""Top-level sections of configs `rlmcost import nemo-rl` refuses, and why."""


def check_kind(r: Reader) -> None:
    """SpecError for a config of a trainer rlmcost does not price (:data:`REFUSED`): one with
    such a section and no ``grpo``, ``ppo`` or ``dpo`` one."""
    keys = {k.split(".", 1)[0] for k in r.flat}
    if keys & {"grpo", "ppo", "dpo"}:
        return
    for section, why in REFUSED.items():
        if section in keys:
            raise SpecError(f"{r.where}: {why}")
