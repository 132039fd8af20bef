"""The accelerate config of a TRL launch (``accelerate launch --config_file``), read by
:mod:`rlmcost.frameworks.trl`: processes, ZeRO stage or FSDP, offload and model loading; every
other key that can change the cost and is not read is listed among the ignored keys (as
``accelerate config FILE: key=value``), the rest (:data:`ACCELERATE_COST_FREE`) silently.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rlmcost.errors import SpecError
from rlmcost.frameworks.config import Reader, flatten, load_mapping
from rlmcost.frameworks.openrlhf import DEEPSPEED_ADAM_OFFLOAD
from rlmcost.frameworks.result import ImportedQuery

DISTRIBUTED_TYPES = ("NO", "MULTI_GPU", "DEEPSPEED", "FSDP")
"""accelerate's DistributedType values (accelerate/utils/dataclasses.py) of the GPU launches read:
DEEPSPEED and FSDP shard the model states, NO and MULTI_GPU (DDP) replicate them; another value
(a typo, which accelerate refuses, or an XLA, Megatron-LM or CPU launch) is an error, as is an
offload device other than none and cpu (ZeRO-Infinity's nvme is not modelled)."""

ACCELERATE_COST_FREE = (
    "compute_environment", "debug", "machine_rank", "main_training_function", "rdzv_backend",
    "same_network", "tpu", "tpu_env", "tpu_use_cluster", "tpu_use_sudo", "use_cpu", "num_machines",
    "enable_cpu_affinity", "downcast_bf16", "gpu_ids", "main_process_ip", "main_process_port",
    "deepspeed_multinode_launcher", "deepspeed_hostfile",
    "deepspeed_config.deepspeed_multinode_launcher", "deepspeed_config.zero3_save_16bit_model",
    "deepspeed_config.gradient_clipping", "deepspeed_config.gradient_accumulation_steps",
    "deepspeed_config.zero3_init_flag", "fsdp_config.fsdp_state_dict_type",
    "fsdp_config.fsdp_sync_module_states", "fsdp_config.fsdp_use_orig_params",
    "fsdp_config.fsdp_transformer_layer_cls_to_wrap", "fsdp_config.fsdp_auto_wrap_policy",
    "fsdp_config.fsdp_version", "fsdp_config.fsdp_backward_prefetch",
    "fsdp_config.fsdp_forward_prefetch",
)  # fmt: skip
"""Keys of accelerate's config files (TRL examples/accelerate_configs/*.yaml @f2cd5771,
open-r1 recipes/accelerate_configs/*.yaml @1416fa0c) that change no cost: launch bookkeeping,
checkpoint formats, the FSDP wrapping of each decoder layer (rlmcost's unit) in either FSDP
version (both shard as ZeRO-3 here); DeepSpeed's ``gradient_accumulation_steps``, which the
Trainer sets from TrainingArguments' own, and ``zero3_init_flag`` (read under ZeRO-3, of no
effect below it)."""

PRICED: dict[str, tuple[Any, ...]] = {
    "mixed_precision": ("bf16",), "fsdp_config.fsdp_sharding_strategy": ("FULL_SHARD",),
    "fsdp_config.fsdp_reshard_after_forward": (True, "FULL_SHARD"),
    "fsdp_config.fsdp_activation_checkpointing": (False,),
}  # fmt: skip
"""Keys read where they hold the value rlmcost prices (bf16 compute; FSDP's full sharding,
parameters resharded after the forward, which FSDP1 configs spell as the strategy
``FULL_SHARD`` (TRL examples/accelerate_configs/fsdp1.yaml); no FSDP-applied checkpoint, TRL's own
``gradient_checkpointing`` read instead); another value is listed among the ignored keys, as
is every ``parallelism_config`` size above 1 (accelerate's context / sequence / tensor
parallelism, ``accelerate/parallelism_config.py``; TRL examples/accelerate_configs/
context_parallel_2gpu.yaml, alst_ulysses_4gpu.yaml @f2cd5771)."""


def _unread(a: Reader, where: str) -> list[str]:
    """The accelerate config's keys that may change the cost and were not read (a value other
    than :data:`PRICED`'s, a parallelism size above 1, an unknown key), as ``where: key=value``."""
    for key, priced in PRICED.items():
        value = a.flat.get(key)
        if value is None or str(value).lower() in {str(p).lower() for p in priced}:
            a.raw(key)
    for key, value in a.flat.items():  # the sizes of cp, sp, tp and dp_replicate (HSDP) count
        size = key.endswith("_size") and not key.endswith("dp_shard_size")
        if key.startswith("parallelism_config.") and (not size or value in (1, None)):
            a.raw(key)
    return [f"{where}: {k}={a.flat[k]}" for k in a.unread(ACCELERATE_COST_FREE)]


def launch(r: Reader, q: ImportedQuery,
           accelerate: Any) -> tuple[int, str, list[str], bool, list[str]]:  # fmt: skip
    """Processes (= GPUs of the trainer), ZeRO stage, offload, whether DeepSpeed runs it, and
    the accelerate config's keys not read (:func:`_unread`), from the accelerate config;
    ``num_processes`` in the recipe itself (open-r1 puts it there) must agree."""
    procs = r.integer("num_processes", None)
    zero, offload, kind = "0", [], "NO"
    unread: list[str] = []
    if accelerate is not None:
        aw = f"accelerate config {Path(accelerate).name}"
        a = Reader(flatten(load_mapping(accelerate, "accelerate config"), aw), aw)
        launch = a.integer("num_processes", 1)
        if procs is not None and procs != launch:
            raise SpecError(f"{r.where}: num_processes={procs} but {aw} launches {launch}; "
                            "make them agree")  # fmt: skip
        procs = launch
        kind = a.text("distributed_type", "NO", DISTRIBUTED_TYPES)
        if kind == "DEEPSPEED":
            zero = str(a.integer("deepspeed_config.zero_stage", 0, lo=0, hi=3))
            devices = ("none", "cpu")
            if a.text("deepspeed_config.offload_optimizer_device", "none", devices) == "cpu":
                # ZeRO-Offload keeps the gradient partition on the host as well
                # (frameworks.openrlhf.DEEPSPEED_ADAM_OFFLOAD, DeepSpeed stage3.py)
                offload += DEEPSPEED_ADAM_OFFLOAD.split(",")
            if a.text("deepspeed_config.offload_param_device", "none", devices) == "cpu":
                offload.append("params")
            # accelerate DeepSpeedPlugin: zero3_init_flag defaults to is_zero3(); on,
            # from_pretrained builds the model inside deepspeed.zero.Init
            if zero == "3" and a.flag("deepspeed_config.zero3_init_flag", True):
                q.set("--init-load", "sharded")
        elif kind == "FSDP":
            zero = "3"
            if a.flag("fsdp_config.fsdp_offload_params", False):
                offload += ["params", "grads", "optimizer"]
            # accelerate FullyShardedDataParallelPlugin: rank 0 loads, the rest on meta
            if a.flag("fsdp_config.fsdp_cpu_ram_efficient_loading", False):
                q.set("--init-load", "host-rank0")
        unread = _unread(a, aw)
        q.convert(f"{aw}: distributed_type={kind}", "--zero", zero, "sharding of the model "
                  "states (DeepSpeed stage, FSDP = 3, DDP = 0)")  # fmt: skip
    if procs is None:
        procs = 1
        q.note("no num_processes (give --accelerate FILE): one training process")
    return procs, zero, offload, kind == "DEEPSPEED", unread


