"""OpenRLHF's vLLM tensor parallelism where its source leaves it open: the smallest that fits.

OpenRLHF's benchmark and README runs (benchmark/README.md at dbdd43b0, README.md 'Performance'
at 391e1de4) give the GPUs of the vLLM engines but not their TP. OpenRLHF's own scripts choose
the smallest TP whose engine holds the model: examples/scripts/train_ppo_llama_ray_70b.sh
(commits 7cfc3f36, 2024-02-18, to 77561119, 2024-07-17; the benchmark's 2:2:4:4:4 split of 16
GPUs) runs Llama-2-70B on ``--vllm_num_engines 2 --vllm_tensor_parallel_size 2``: 69 GB of bf16
weights per GPU, the grouped-query KV cache (8 KV heads) in the rest of
``gpu_memory_utilization``; train_ppo_llama_ray.sh runs the 7B model at TP 1; and the README's
tuning guide says to "minimize the TP size of vLLM engine". So the engines' TP of such a run is
the smallest power of two (dividing the heads, within the engines' GPUs and a node) at which
rlmcost's memory model fits the run (:func:`smallest_fitting_engine_tp`), not the half-HBM rule
of :func:`~rlmcost.reports.rl_runs_frameworks.engine_tp`, which gives 70B TP 4 against the
script's 2. The rule is the source's; the TP it picks is the memory model's, and the row's
choices say so.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rlmcost.reports.rl_runs import Recipe
    from rlmcost.reports.rl_runs_rows import Build, RlRunRow


def leaves_engine_tp_open(recipe: Recipe) -> bool:
    """An OpenRLHF run whose settings give no ``--vllm_tensor_parallel_size``."""
    return recipe.framework == "openrlhf" and recipe.query is not None and \
        "--vllm_tensor_parallel_size" not in recipe.record["framework_settings"]  # fmt: skip


def engine_tp_candidates(record: Mapping[str, Any]) -> list[int]:
    """Powers of two dividing the heads, up to the engines' GPUs (the 1:1:2:2:2 split's vLLM
    share) and a node's 8 GPUs."""
    from rlmcost.reports.rl_runs import model_name
    from rlmcost.reports.rl_runs_frameworks import OPENRLHF_RATIO, _overlay
    from rlmcost.specs import ModelSpec, get_model

    model = _overlay(record).get("models", {}).get("actor", model_name(record))
    spec = get_model(model) if isinstance(model, str) else ModelSpec.model_validate(model)
    heads = int(spec.n_heads)
    engines_gpus = int(record["gpus"]) * OPENRLHF_RATIO["vllm"] // sum(OPENRLHF_RATIO.values())
    out: list[int] = []
    tp = 1
    while tp <= min(8, engines_gpus):
        if heads % tp == 0 and engines_gpus % tp == 0:
            out.append(tp)
        tp *= 2
    return out


def smallest_fitting_engine_tp(recipe: Recipe, build: Build) -> RlRunRow:
    """The row at the smallest candidate engine TP (:func:`engine_tp_candidates`) at which the
    run fits (module docstring); the largest candidate when none fits."""
    from rlmcost.reports.rl_runs_frameworks import recipe as recipe_of
    from rlmcost.reports.rl_runs_rows import _evaluate

    record = recipe.record
    candidates = engine_tp_candidates(record)
    row = None
    for tp in candidates:
        settings = {**record["framework_settings"], "--vllm_tensor_parallel_size": tp}
        row = _evaluate(recipe_of({**record, "framework_settings": settings}), build)
        if row.fits is not False:
            break
    assert row is not None
    why = (f"vLLM TP {tp}: the smallest power of two (of {', '.join(map(str, candidates))}) at "
           "which the run fits, as OpenRLHF's scripts choose it (train_ppo_llama_ray_70b.sh: "
           "Llama-2-70B at --vllm_tensor_parallel_size 2; rlmcost/reports/rl_runs_engine_tp.py)")
    return replace(row, recipe=replace(row.recipe, choices=(*row.recipe.choices, why)))
