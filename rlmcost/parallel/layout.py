"""Layout: the intra-model parallel configuration of one model invocation (§III).

The degrees follow Megatron-core's two grids over the same ranks
(``megatron/core/parallel_state.py``, ``initialize_model_parallel``): the dense grid
N = P_d P_t P_c P_p (TP innermost, then CP, DP, PP) and, for the routed experts of a MoE model,
a second decomposition of each pipeline stage's P_t P_c P_d ranks into expert TP (ETP) x
expert parallelism (EP) x expert data parallelism (EDP). EP is therefore *folded* inside
DP x TP x CP and adds no GPUs: TP 4 with EP 8 runs on 8 GPUs (ETP 1, EDP 1). Megatron-core
requires ETP * EP * PP to divide the world size (``expert_tensor_model_pipeline_parallel_size``),
i.e. ETP * EP to divide P_t P_c P_d, and takes ETP = TP when it is not set
(``expert_tensor_parallel_size=None`` in ``initialize_model_parallel`` and
``megatron/training/arguments.py``); NeMo RL's and slime's MoE recipes set it to 1.
DeepSpeed-MoE (``deepspeed/utils/groups.py``) and vLLM (EP over its TP x DP ranks) fold EP
the same way. The seed paper's 5D row (Table V caption, N = P_d P_t P_p P_c P_e with EP ranks
owning tokens) is this grid with ETP = TP and P_d^Megatron = P_d P_e; the paper's tables keep
their own degrees (:class:`rlmcost.parallel.cost.Degrees`). 1 means "strategy off" everywhere.
"""

from __future__ import annotations

from dataclasses import fields
from enum import StrEnum
from math import gcd
from typing import Any

from rlmcost.frozen import dataclass


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
    ep: int = 1  # P_e expert-parallel ranks, folded inside P_t P_c P_d (no extra GPUs)
    sp: bool = False  # sequence parallelism inside the TP group
    zero: ZeroStage = ZeroStage.NONE  # sharded over the P_z ranks of ``zero_shard``
    ckpt: Checkpointing = Checkpointing.NONE
    micro_batch: int = 1  # sequences per micro-batch
    schedule: PipelineSchedule = PipelineSchedule.ONE_F_ONE_B
    virtual_stages: int = 1  # v, model chunks per pipeline rank (interleaved only)
    etp: int | None = None  # expert TP; None = tp (Megatron-core's default)
    zero_shard: int | None = None  # P_z dividing P_d P_c; None or >= P_d P_c: full shard
    # Megatron-core's uneven pipeline split (parallel.pipeline_split); None / False: rlmcost's
    pp_first_layers: int | None = None  # layers on the first rank (num_layers_in_first_...)
    pp_last_layers: int | None = None  # layers on the last rank (num_layers_in_last_...)
    pp_embedding_slot: bool = False  # the embedding counts as a layer (account_for_embedding_...)
    pp_loss_slot: bool = False  # the output layer and loss count as one (account_for_loss_...)
    pp_layout: str | None = None  # --pipeline-model-parallel-layout (parallel.pp_layout)
    # Megatron-core's MoE expert capacity (parallel.moe_capacity); None / False: dropless
    moe_capacity_factor: float | None = None  # --moe-expert-capacity-factor
    moe_pad_to_capacity: bool = False  # --moe-pad-expert-input-to-capacity
    # SGLang's data-parallel attention inside an engine (--enable-dp-attention --dp-size):
    attention_dp: int = 1  # P_a attention ranks of tp / P_a each (dp_attention.py); 1: off
    # a trainer's own allocations (parallel.framework_memory); False: rlmcost's convention
    op_sac: bool = False  # selective ckpt as torchtitan's op-level SAC (every second mm saved)
    loss_upcast: bool = False  # the loss F.cross_entropy(logits.float()) (torchtitan's)
    loss_compiled: bool = False  # that loss under torch.compile (torchtitan's with compile)
    pp_fsdp_gathered: bool = False  # FSDP2 in torch's pipelining: stage gathered, grads fp32
    pp_stage_buffers: bool = False  # torch's PipelineStage: per-micro-batch outputs, buffers
    act_offload: bool = False  # saved activations to host but the last two layers' (verl's)

    @property
    def n_gpus(self) -> int:
        """N = P_d P_t P_p P_c (EP is folded inside P_t P_c P_d)."""
        return self.dp * self.tp * self.pp * self.cp

    @property
    def expert_tp(self) -> int:
        """Ranks that split each routed expert's matrices: ``etp``, else P_t."""
        return self.tp if self.etp is None else self.etp

    @property
    def expert_dp(self) -> int:
        """Ranks holding a replica of each expert shard (Megatron's expert data parallel
        group): P_t P_c P_d / (ETP P_e) (``validate.check_layout`` makes it whole)."""
        return self.tp * self.cp * self.dp // (self.expert_tp * self.ep)

    @property
    def zero_group(self) -> int:
        """P_z: the ranks one dense parameter's ZeRO/FSDP states are sharded over. Full
        sharding (``zero_shard`` None, or at least P_d P_c as verl reads ``fsdp_size`` >= the
        world size) spans the P_d P_c ranks that replicate the dense parameters; hybrid
        sharding (HSDP) a smaller divisor of them, consecutive ranks (PyTorch FSDP
        ``ShardingStrategy.HYBRID_SHARD``, torch/distributed/fsdp/_init_utils.py: shard
        within a node, replicate across; FSDP2 ``fully_shard(mesh)`` with a 2-D (replicate,
        shard) mesh; verl ``create_device_mesh``, verl/workers/fsdp_workers.py @b25bb7d4f:
        mesh (world / fsdp_size, fsdp_size); DeepSpeed ZeRO++ hpZ, Wang et al. 2023,
        arXiv:2306.10209 §3.2). Under ZeRO 0 nothing is sharded: P_d P_c."""
        ranks = self.dp * self.cp
        z = self.zero_shard
        return ranks if z is None or z >= ranks or self.zero == ZeroStage.NONE else z

    @property
    def zero_replicas(self) -> int:
        """P_d P_c / P_z: the shard groups, each holding one copy of the model states (1 under
        full sharding); a gradient shard is all-reduced across them."""
        return self.dp * self.cp // self.zero_group

    @property
    def expert_zero_group(self) -> int:
        """Ranks a routed expert's states are sharded over: the expert-DP group divided by
        the :attr:`zero_replicas` (``validate.check_layout`` makes it whole)."""
        return self.expert_dp // self.zero_replicas

    @property
    def dp_unit(self) -> int:
        """The smallest P_d for which ETP P_e divides P_t P_c P_d; every valid P_d is a
        multiple of it (:func:`dp_unit`)."""
        return dp_unit(self.tp, self.cp, self.ep, self.etp)

    @property
    def model_parallel(self) -> int:
        """Ranks that split one replica's dense weights: P_t P_p."""
        return self.tp * self.pp

    def one_stage(self) -> Layout:
        """This layout on one pipeline stage: PP 1 without virtual stages or Megatron-core's
        uneven split (``pp_first_layers`` ... ``pp_layout``), which need PP >= 2. A decode
        step passes every stage in turn, so generation reads and caches as one stage does."""
        return self.with_(pp=1, virtual_stages=1, pp_first_layers=None, pp_last_layers=None,
                          pp_embedding_slot=False, pp_loss_slot=False, pp_layout=None)

    def with_(self, **changes: Any) -> Layout:
        """``dataclasses.replace`` (every field is an init field, none derived, no
        ``__post_init__``), without its per-call field walk or the frozen ``__init__``'s
        ``object.__setattr__`` per field: a new instance whose fields are this one's with
        ``changes``; TypeError for a name that is not a field."""
        if not changes.keys() <= _FIELDS:
            raise TypeError(f"Layout has no field {sorted(changes.keys() - _FIELDS)}")
        new = object.__new__(type(self))
        new.__dict__.update(self.__dict__, **changes)
        return new


_FIELDS = frozenset(f.name for f in fields(Layout))


def dp_unit(tp: int, cp: int = 1, ep: int = 1, etp: int | None = None) -> int:
    """The smallest P_d with ETP P_e dividing P_t P_c P_d (Megatron-core's check that
    ``expert_tensor_parallel_size * expert_model_parallel_size`` fits the stage's ranks): a
    group of GPUs holds replicas of a layout only in multiples of P_t P_p P_c times this.

    >>> dp_unit(4, ep=8, etp=1), dp_unit(4, ep=8), dp_unit(2, cp=2, ep=16, etp=1)
    (2, 8, 4)
    """
    need = (tp if etp is None else etp) * ep
    return need // gcd(need, tp * cp)
