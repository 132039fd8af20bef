"""Layout: the intra-model parallel configuration of one model invocation (§III).

Degrees multiply to the devices of the invocation, N = P_d P_t P_p P_c P_e (Table V caption,
5D). 1 means "strategy off" everywhere.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import StrEnum
from typing import Any


class ZeroStage(StrEnum):
    """ZeRO / FSDP model-state sharding over the data-parallel group (§III-G1)."""

    NONE = "0"  # replicated parameters, gradients, optimizer states
    OS = "1"  # optimizer states sharded
    OS_G = "2"  # + gradients
    OS_G_P = "3"  # + parameters (= FSDP full shard)


class Checkpointing(StrEnum):
    """Activation checkpointing (§III-G2; Korthikanti et al. 2022 for 'selective')."""

    NONE = "none"  # keep every activation
    SELECTIVE = "selective"  # recompute the attention core only
    FULL = "full"  # keep each layer's input, recompute the whole layer


class PipelineSchedule(StrEnum):
    """Pipeline schedules whose bubbles and in-flight micro-batches differ (§III-E)."""

    GPIPE = "gpipe"  # all-forward-all-backward (AFAB)
    ONE_F_ONE_B = "1f1b"  # PipeDream-flush
    INTERLEAVED = "interleaved"  # interleaved 1F1B with virtual stages
    ZERO_BUBBLE = "zero-bubble"  # Qi et al. 2023 (ZB-H2)


@dataclass(frozen=True)
class Layout:
    """Parallel degrees and memory options of one invocation; all 1 / off by default."""

    dp: int = 1  # P_d data-parallel replicas
    tp: int = 1  # P_t tensor-parallel ranks (Megatron column/row split)
    pp: int = 1  # P_p pipeline stages
    cp: int = 1  # P_c context-parallel ranks (ring attention)
    ep: int = 1  # P_e expert-parallel ranks
    sp: bool = False  # sequence parallelism inside the TP group
    zero: ZeroStage = ZeroStage.NONE  # sharded over the dp ranks (P_z = dp)
    ckpt: Checkpointing = Checkpointing.NONE
    micro_batch: int = 1  # sequences per micro-batch
    schedule: PipelineSchedule = PipelineSchedule.ONE_F_ONE_B
    virtual_stages: int = 1  # v, model chunks per pipeline rank (interleaved only)

    @property
    def n_gpus(self) -> int:
        """N = P_d P_t P_p P_c P_e."""
        return self.dp * self.tp * self.pp * self.cp * self.ep

    @property
    def model_parallel(self) -> int:
        """Ranks that split one replica's weights: P_t P_p (and P_e for the experts)."""
        return self.tp * self.pp

    def with_(self, **changes: Any) -> Layout:
        return replace(self, **changes)
