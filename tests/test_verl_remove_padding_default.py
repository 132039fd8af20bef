"""verl's ``model.use_remove_padding`` default by the verl release (issue 18: verl's
examples/grpo_trainer/run_mistral13b_skyworkrm_hhrlhf.sh @b178a3cd5 sets no
``use_remove_padding`` and was imported padded, the default of verl before v0.7.0).

Source: verl PR 4461 (561752996, 2025-12-09, first in v0.7.0) turned
verl/trainer/config/model/hf_model.yaml's ``use_remove_padding: false`` into ``true``
(``_generated_ppo_trainer.yaml`` alike); b178a3cd5 still has ``true``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from rlmcost.frameworks.verl import import_verl

GRPO = Path(__file__).parent / "data" / "frameworks" / "verl_grpo.yaml"
UNSET = ["~actor_rollout_ref.model.use_remove_padding"]


@pytest.mark.parametrize(
    ("version", "padded"),
    [(None, False),  # the current verl (b178a3cd5): unpadded by default
     ("2025-12-09", False),  # PR 4461's day
     ("2025-12-08", True),  # the day before: padded
     ("0.6.1", True)],  # the last release before it
)
def test_the_default_is_the_releases(version, padded) -> None:
    q = import_verl(GRPO, UNSET, version)
    assert ("--padded" in q.argv()) is padded
    said = [n for n in q.notes if "use_remove_padding" in n]
    assert said and ("v0.6.1" in said[0] if padded else "PR 4461" in said[0])


def test_a_given_value_wins_over_the_default() -> None:
    assert "--padded" in import_verl(GRPO, ["actor_rollout_ref.model.use_remove_padding=false"],
                                     None).argv()  # fmt: skip
    assert "--padded" not in import_verl(GRPO, ["actor_rollout_ref.model.use_remove_padding="
                                                "true"], "0.6.1").argv()  # fmt: skip
