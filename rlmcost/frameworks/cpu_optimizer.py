"""Megatron-core's hybrid CPU optimizer as the importers read it: slime's and miles's
``--optimizer-cpu-offload`` with ``--optimizer-offload-fraction``, verl's
``optim.override_optimizer_config.optimizer_cpu_offload`` and NeMo RL's
``megatron_cfg.optimizer.optimizer_cpu_offload`` with ``optimizer_offload_fraction``, all
passed to Megatron-core's ``OptimizerConfig``.

``HybridDeviceOptimizer`` (megatron/core/optimizer/cpu_offloading/hybrid_optimizer.py) moves
the first ``offload_fraction`` of the rank's parameters (by count) to pinned host memory as fp32
copies and steps them there with ``torch.optim.AdamW(fused=True)``
(megatron/core/optimizer/__init__.py; :data:`rlmcost.perf.data_parallel.
TORCH_FUSED_CPU_ADAM_OVER_DEEPSPEED`), the rest on the GPU. At fraction 1 that is rlmcost's
``--offload optimizer`` (host-resident states, CPU step); a smaller fraction splits the
states, which rlmcost does not model."""

from __future__ import annotations

from rlmcost.errors import SpecError
from rlmcost.frameworks.config import Reader
from rlmcost.frameworks.result import ImportedQuery


def optimizer_config_cpu_offload(r: Reader, q: ImportedQuery, prefix: str,
                                 offload: list[str]) -> bool:  # fmt: skip
    """The hybrid CPU optimizer of a framework that hands ``prefix``'s keys to Megatron-core's
    ``OptimizerConfig`` (verl's ``optim.override_optimizer_config``:
    verl/utils/megatron/optimizer.py ``init_megatron_optim_config`` @b178a3cd; NeMo RL's
    ``megatron_cfg.optimizer`` through Megatron-Bridge: nemo_rl/models/megatron/setup.py
    @7ea279abf), at that dataclass's defaults (``optimizer_cpu_offload`` False,
    ``optimizer_offload_fraction`` 0.0, ``use_precision_aware_optimizer`` False):
    :func:`hybrid_cpu_optimizer`; False where it is off."""
    if not r.flag(f"{prefix}.optimizer_cpu_offload", False):
        return False
    key = f"{prefix}.optimizer_offload_fraction"
    aware = r.flag(f"{prefix}.use_precision_aware_optimizer", False)
    return hybrid_cpu_optimizer(q, offload, r.raw(key, 0.0), f"{r.where}: {key}", aware)


def hybrid_cpu_optimizer(q: ImportedQuery, offload: list[str], fraction: object, key: str,
                         precision_aware: bool = True) -> bool:  # fmt: skip
    """Set ``offload`` to the hybrid CPU optimizer at ``fraction`` (given as ``key``, e.g.
    ``"slime arguments: --optimizer-offload-fraction"``); True where the states step on the
    host. At 1 its between-phases ``optimizer-idle`` becomes ``optimizer``, with a note; at 0
    ``offload`` stays (every parameter stays with the GPU optimizer: ``offload_threshold`` 0 in
    ``_get_sub_optimizer_param_groups``), with a note; an error in between. Megatron-core's
    ``OptimizerConfig`` defaults the fraction to 0.0 (megatron/core/optimizer/
    optimizer_config.py, core_v0.12.2 to 1dcf0daf), Megatron-LM's ``--optimizer-offload-
    fraction`` to 1.0 (megatron/training/arguments.py). Without ``precision_aware``
    (``use_precision_aware_optimizer``) DistributedOptimizer builds fp32 main-parameter shards on
    the GPU and hands those to the hybrid optimizer, which copies them to the host
    (megatron/core/optimizer/distrib_optimizer.py ``_build_model_and_main_param_groups``,
    core_v0.13.0): the GPU keeps 4 bytes a parameter of its shard, noted, not priced.

    >>> from rlmcost.frameworks.result import ImportedQuery
    >>> off = ["params-idle", "optimizer-idle"]
    >>> hybrid_cpu_optimizer(ImportedQuery("slime", "x"), off, 1.0, "f")
    True
    >>> off
    ['params-idle', 'optimizer']
    """
    try:
        value: float | None = float(fraction)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        value = None
    if value == 0.0:
        q.note(f"{key} 0: Megatron-core's hybrid CPU optimizer keeps every state on the GPU "
               "and steps there (no CPU Adam)")  # fmt: skip
        return False
    if value != 1.0:
        raise SpecError(f"{key} {fraction!r}: rlmcost models Megatron-core's hybrid CPU "
                        "optimizer at fraction 1 (all states on the host) only; set it to 1 "
                        "or turn the CPU offload off")  # fmt: skip
    offload[:] = [x for x in offload if x not in ("optimizer-idle", "optimizer")] + ["optimizer"]
    if not precision_aware:
        q.note("hybrid CPU optimizer without use_precision_aware_optimizer: DistributedOptimizer "
               "keeps its fp32 main-parameter shard on the GPU as well (4 bytes a parameter of "
               "the shard, distrib_optimizer.py); rlmcost prices the states all on the host")
    q.note("Megatron-core's hybrid CPU optimizer at offload fraction 1: fp32 main parameters "
           "and Adam states on the host, stepped there by torch.optim.AdamW(fused=True), "
           "torch's fused CPU kernel (megatron/core/optimizer/__init__.py; rlmcost.perf."
           "data_parallel.TORCH_FUSED_CPU_ADAM_OVER_DEEPSPEED) (--offload optimizer)")
    return True
