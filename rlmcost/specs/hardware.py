"""HardwareSpec and ClusterSpec: what one accelerator and a cluster of them can do."""

# No `from __future__ import annotations`: pydantic takes the fields' annotations as objects
# (as strings it compiles each as a ForwardRef at every start); methods quote their own class.
from typing import Literal

from pydantic import ConfigDict, Field, model_validator

from rlmcost.choices import Dtype
from rlmcost.specs.validation import Checked


class HardwareSpec(Checked):
    """One accelerator, from its datasheet. Bytes are decimal; bandwidths per direction."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(description="canonical lower-case name, e.g. 'h100-sxm'")
    aliases: tuple[str, ...] = Field(default=())
    vendor: str = Field(default="")
    peak_flops_per_s: dict[Dtype, int] = Field(
        description="dense (not 2:4 sparse) peak tensor FLOP/s per dtype"
    )
    fp4_peak_flops_per_s: int | None = Field(
        default=None, gt=0,
        description="dense peak FLOP/s of the tensor cores on block-scaled FP4 operands (E2M1 "
        "values, NVFP4's E4M3 scale per 16: Blackwell's tcgen05 kind::mxf4nvf4); None: the part "
        "has no FP4 tensor cores (an engine runs FP4 weights through 16-bit GEMMs there)",
    )  # fmt: skip
    fp4_source: str | None = Field(
        default=None, description="where fp4_peak_flops_per_s comes from"
    )
    hbm_bytes: int = Field(gt=0, description="device memory capacity, datasheet [B]")
    hbm_usable_bytes: int = Field(
        gt=0,
        description="device memory programs can allocate [B]: torch.cuda.get_device_properties"
        "(0).total_memory (driver and ECC reservations taken off the datasheet figure)",
    )
    hbm_usable_source: str = Field(description="where hbm_usable_bytes comes from, or its rule")
    hbm_bandwidth_bytes_per_s: int = Field(gt=0, description="device memory bandwidth [B/s]")
    intra_node_bandwidth_bytes_per_s: int = Field(
        gt=0, description="GPU-to-GPU link inside a node, per direction [B/s] (NVLink, xGMI)"
    )
    inter_node_bandwidth_bytes_per_s: int = Field(
        gt=0, description="network bandwidth per GPU across nodes, per direction [B/s]"
    )
    host_link_bandwidth_bytes_per_s: int = Field(
        gt=0, description="CPU <-> GPU link per direction [B/s] (PCIe, NVLink-C2C)"
    )
    host_link_source: str = Field(description="where host_link_bandwidth_bytes_per_s comes from")
    gpus_per_node: int = Field(default=8, gt=0, description="GPUs in one node")
    gpus_per_host: int | None = Field(
        default=None, gt=0,
        description="GPUs sharing one host (its CPUs, host memory and NICs) where fewer than a "
        "node: a GB200 NVL72 'node' is the 72-GPU NVLink rack, its hosts are 4-GPU compute trays",
    )  # fmt: skip
    gpus_per_host_source: str | None = Field(
        default=None, description="where gpus_per_host comes from"
    )
    host_time_factor: float = Field(
        default=1.0, gt=0,
        description="seconds a host-bound, single-threaded framework task (Python and PyTorch "
        "dispatch: the engine's scheduler and output processing, kernel launches) takes on "
        "this accelerator's host CPU per second on the x86 (Xeon) hosts rlmcost's host "
        "constants were measured on; 1 = such a host",
    )  # fmt: skip
    host_time_source: str | None = Field(
        default=None, description="where host_time_factor comes from"
    )
    host_cpu: Literal["intel-sapphire-rapids"] | None = Field(
        default=None,
        description="the CPU class of the platform's reference host where its per-core rates "
        "are measured (rlmcost.perf.data_parallel.CPU_ADAM_THREAD_S_PER_PARAM_BY_CPU); None: "
        "the generic rates",
    )  # fmt: skip
    host_cpu_source: str | None = Field(default=None, description="where host_cpu comes from")
    host_memory_bytes: int | None = Field(
        default=None, gt=0,
        description="host (CPU) memory of the platform's reference system per host, i.e. per "
        "host_gpus GPUs [B, decimal as vendors print it]: what the offloaded states of a node "
        "must fit in (the whole of it: nothing taken off for the OS and the processes); None "
        "= no reference system, unknown, not checked",
    )  # fmt: skip
    host_memory_source: str | None = Field(
        default=None, description="where host_memory_bytes comes from"
    )
    source: str = Field(description="datasheet the numbers come from")

    @model_validator(mode="after")
    def _host_memory_sourced(self) -> "HardwareSpec":
        if self.host_memory_bytes is not None and not self.host_memory_source:
            raise ValueError(f"hardware {self.name}: host_memory_bytes needs its "
                             "host_memory_source (the reference system's datasheet)")  # fmt: skip
        if self.fp4_peak_flops_per_s is not None and not self.fp4_source:
            raise ValueError(f"hardware {self.name}: fp4_peak_flops_per_s needs its fp4_source")
        return self

    @property
    def host_gpus(self) -> int:
        """GPUs of one host (CPUs, host memory, NICs): ``gpus_per_host`` where given, else a
        node's."""
        return self.gpus_per_host or self.gpus_per_node

    def __hash__(self) -> int:
        """Hashable despite its dict of peaks (memoized evaluations key on it); equal specs
        hash equal (pydantic's equality compares every field)."""
        return hash((self.name, self.hbm_bytes, tuple(self.peak_flops_per_s.items())))

    @property
    def hbm_capacity_bytes(self) -> int:
        """Bytes a fit check may fill: the usable capacity (``hbm_usable_bytes``), not the
        datasheet's ``hbm_bytes``. Frameworks' own reserves (CUDA context, NCCL buffers,
        allocator fragmentation) come on top and are not taken off."""
        return self.hbm_usable_bytes

    def peak(self, dtype: Dtype) -> int:
        """Dense peak FLOP/s for ``dtype``; a SpecError names the dtypes it has."""
        try:
            return self.peak_flops_per_s[dtype]
        except KeyError:
            from rlmcost.errors import SpecError

            have = ", ".join(self.peak_flops_per_s)
            raise SpecError(f"hardware {self.name} lists no {dtype} peak; use one of: "
                            f"{have}") from None  # fmt: skip


class ClusterSpec(Checked):
    """``nodes`` x ``gpus_per_node`` accelerators of one kind."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    device: HardwareSpec
    gpus_per_node: int = Field(gt=0, description="GPUs per node")
    nodes: int = Field(default=1, gt=0, description="nodes")

    @property
    def n_gpus(self) -> int:
        return self.gpus_per_node * self.nodes

    @classmethod
    def of(cls, device: HardwareSpec, gpus: int) -> "ClusterSpec":
        """``gpus`` devices packed into full nodes of ``device.gpus_per_node`` (or one node)."""
        from rlmcost.errors import SpecError

        per = device.gpus_per_node
        if gpus <= 0:
            raise SpecError(f"gpus={gpus} must be a positive integer")
        if gpus <= per:
            return cls(device=device, gpus_per_node=gpus, nodes=1)
        if gpus % per:
            raise SpecError(
                f"gpus={gpus} is not a whole number of {per}-GPU nodes of {device.name}; "
                f"try {gpus - gpus % per} or {gpus - gpus % per + per}"
            )
        return cls(device=device, gpus_per_node=per, nodes=gpus // per)
