"""TRL's published runs through :func:`~rlmcost.frameworks.trl.import_trl`, as a TRL user
launches them: the run's GRPOConfig keys (``framework_settings.config``, the recipe file as
published) and the launch's accelerate config (``framework_settings.accelerate``, with the
launch command's ``--num_processes``); one of the mappings of
:mod:`rlmcost.reports.rl_runs_frameworks`.

The TRL code a run used (``framework_settings.code_date``: the day of the TRL commit, or of the
newest commit it may have been) is the importer's ``--trl-version``: the meanings TRL changed
since (:mod:`rlmcost.frameworks.trl_versions`: per_device_train_batch_size in prompts before PR
2776, one vLLM call per micro-step before PR 3283, beta 0.04 by default before PR 3516, ...)
are the importer's rules, and the rules it applied are the row's choices.
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


def trl(record: Record) -> Mapped:
    """The recipe and the accelerate config through :func:`~rlmcost.frameworks.trl.
    import_trl_rules` at the TRL of ``code_date``; its version rules become the choices."""
    from rlmcost.frameworks.trl import import_trl_rules

    s = record["framework_settings"]
    config, accelerate = dict(s["config"]), dict(s["accelerate"])
    config["model_name_or_path"] = model_name(record)
    with tempfile.TemporaryDirectory() as tmp:
        path, launch = Path(tmp) / "config.yaml", Path(tmp) / "accelerate.yaml"
        path.write_text(json.dumps(config))  # JSON is YAML
        launch.write_text(json.dumps(accelerate))
        q, rules = import_trl_rules(path, [], launch, str(s["code_date"]))
    q.source = "rl_runs.json framework_settings (config, accelerate)"
    q.notes = [n for n in q.notes if n not in rules]  # stated once, as the row's choices
    return q, {}, rules, "rlmcost import trl (framework_settings as the recipe + accelerate)"
