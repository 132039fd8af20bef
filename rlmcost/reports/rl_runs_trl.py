"""TRL's published runs through :func:`~rlmcost.frameworks.trl.import_trl`, as a TRL user
launches them: the run's GRPOConfig keys (``framework_settings.config``, the recipe file as
published) and the launch's accelerate config (``framework_settings.accelerate``, with the
launch command's ``--num_processes``); one of the mappings of
:mod:`rlmcost.reports.rl_runs_frameworks`.

The importer reads today's GRPOConfig semantics. The TRL code a run used
(``framework_settings.code_date``: the day of the TRL commit, or of the newest commit it may
have been) decides three meanings that TRL changed since, each applied from its source:

* :data:`TRL_COMPLETIONS_PER_DEVICE_DATE`: before it, ``per_device_train_batch_size`` counted
  prompts per device, each generated ``num_generations`` times;
* :data:`TRL_GENERATE_PER_BATCH_DATE`: before it, the trainer generated once per micro-step,
  one vLLM call over that micro-step's prompts of every process;
* :data:`TRL_BETA_ZERO_DATE`: before it, GRPOConfig's ``beta`` defaulted to 0.04 (a
  reference model).
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from rlmcost.frameworks.result import ImportedQuery
from rlmcost.reports.rl_runs import model_name

Record = Mapping[str, Any]
Mapped = tuple[ImportedQuery, dict[str, Any], list[str], str]

TRL_COMPLETIONS_PER_DEVICE_DATE = "2025-02-06"
"""TRL PR 2776 (commit cf97133d, 2025-02-06, "Optimize GRPO memory usage by redefining
``per_device_batch_size`` as generations per device"). Before it (``grpo_trainer.py`` at
724acb97, its parent) ``_prepare_inputs`` repeats each of a device's
``per_device_train_batch_size`` prompts ``num_generations`` times
(``torch.repeat_interleave(prompt_ids, self.num_generations)``; vLLM's ``SamplingParams(n=
num_generations)``), so a device trains per_device_train_batch_size x num_generations
completions per micro-step."""

TRL_GENERATE_PER_BATCH_DATE = "2025-04-17"
"""TRL PR 3283 (commit 294f35bf, 2025-04-17, "[GRPO] Generate once per effective batch").
Before it ``_prepare_inputs`` runs at every micro-step of the gradient accumulation
(``grpo_trainer.py`` at 724acb97: ``gather_object(prompts_text)`` of every process, one
``self.llm.generate`` on the main process, ``broadcast_object_list`` of the completions), so a
step's completions come in gradient_accumulation_steps vLLM calls, one after another, of the
micro-step's completions of all processes each (rlmcost's ``--sequences-per-call``)."""

TRL_BETA_ZERO_DATE = "2025-05-30"
"""TRL PR 3516 (commit 7359ddcc, 2025-05-30, "New default: ``beta=0.0`` for GRPO"); before it
``GRPOConfig.beta`` defaulted to 0.04 (``grpo_config.py`` at 724acb97), which loads a
reference model."""


def trl(record: Record) -> Mapped:
    """The recipe and the accelerate config through :func:`~rlmcost.frameworks.trl.import_trl`
    (the module docstring's version rules applied first)."""
    from rlmcost.frameworks.trl import import_trl

    s = record["framework_settings"]
    config, accelerate = dict(s["config"]), dict(s["accelerate"])
    code = str(s["code_date"])
    choices: list[str] = []
    config["model_name_or_path"] = model_name(record)
    k = int(config.get("num_generations", 8))
    per_device = int(config.get("per_device_train_batch_size", 8))
    if code < TRL_COMPLETIONS_PER_DEVICE_DATE:
        per_device *= k
        config["per_device_train_batch_size"] = per_device
        choices.append(f"per_device_train_batch_size {per_device // k} prompts x num_generations "
                       f"{k} = {per_device} completions per device: TRL code of {code}, before "
                       f"PR 2776 ({TRL_COMPLETIONS_PER_DEVICE_DATE}) made the key count "
                       "completions")  # fmt: skip
    if "beta" not in config and code < TRL_BETA_ZERO_DATE:
        config["beta"] = 0.04
        choices.append(
            f"beta 0.04 (a reference model): GRPOConfig's default in TRL code of "
            f"{code}, before PR 3516 ({TRL_BETA_ZERO_DATE}) made it 0.0"
        )
    with tempfile.TemporaryDirectory() as tmp:
        path, launch = Path(tmp) / "config.yaml", Path(tmp) / "accelerate.yaml"
        path.write_text(json.dumps(config))  # JSON is YAML
        launch.write_text(json.dumps(accelerate))
        q = import_trl(path, [], launch)
    q.source = "rl_runs.json framework_settings (config, accelerate)"
    if code < TRL_GENERATE_PER_BATCH_DATE:
        per_call = per_device * int(accelerate["num_processes"])
        q.set("--sequences-per-call", per_call)
        choices.append(
            f"generation once per micro-step, {int(config.get('gradient_accumulation_steps', 1))}"
            f" vLLM calls per step of per_device_train_batch_size x num_processes = {per_call} "
            f"completions each, one after another (--sequences-per-call {per_call}): TRL code "
            f"of {code}, before PR 3283 ({TRL_GENERATE_PER_BATCH_DATE}) generated once per "
            "gradient-accumulation batch"
        )
    return q, {}, choices, "rlmcost import trl (framework_settings as the recipe + accelerate)"
