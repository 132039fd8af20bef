"""Host memory as a capacity: the offloaded states of each node against its host's memory.

A deployment that offloads (ZeRO-Offload's optimizer, parameters and gradients; an engine's
weights asleep; a reference kept in host memory) holds, on every node, the host bytes of each
of its devices (:meth:`~rlmcost.placement.estimate.PlacementEstimate.host_nodes`: groups packed
onto consecutive devices of their accelerator's hosts). Those bytes must fit in the node's
host memory, as the devices' bytes must fit in HBM: a node over it does not run (the kernel's
OOM killer ends the rank, or the pinned allocation fails). :func:`host_check` compares the
busiest node of each accelerator with its host's memory:

* the Run's ``cluster.host_memory_gib`` (``--host-memory-gib``: GiB per host, the same for
  every accelerator of the run; servers differ), else
* ``HardwareSpec.host_memory_bytes``, the memory of the platform's reference system (DGX
  H100: 2 TB per 8 GPUs; a GB200 NVL72 compute tray: 960 GB per 4), decimal as vendors print
  it, with its source (``host_memory_source``), else
* unknown (a platform with no reference system: HGX H20, H800, L40S, MI300X ...): not
  checked, and a note says so.

The whole host memory is the capacity: nothing is taken off for the OS, the framework's
processes or the data loader, so a node that passes may still be tight (stated in the
problem and README). Exact ints; the bytes are the devices' host bytes as the memory model
counts them (``GroupEstimate.host_bytes_per_device``: fp32 master weights and Adam states, the
gradients' dtype, the engine's weights asleep, at each device's peak).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from rlmcost.frozen import dataclass
from rlmcost.specs import HardwareSpec

GIB = 2**30

HOST_FLAG = "--host-memory-gib"
"""The flag (and ``cluster.host_memory_gib`` the Run field) that gives a host's memory."""


@dataclass(frozen=True)
class HostCheck:
    """The host memory check of one evaluation: each accelerator's busiest node over its
    host's memory (``over``: accelerator, bytes held, capacity) or on a host of unknown memory
    (``unknown``: accelerator, bytes held), and the Run's host memory per host. The lines are
    written when read (most evaluations ask only whether anything is over)."""

    over: tuple[tuple[HardwareSpec, int, int], ...] = ()
    unknown: tuple[tuple[HardwareSpec, int], ...] = ()
    given_gib: float | None = None

    @property
    def problems(self) -> tuple[str, ...]:
        """One line per node over its host: its bytes, the capacity, its source, the mends."""
        return tuple(_problem(hw, held, cap, host_capacity(hw, self.given_gib)[1])
                     for hw, held, cap in self.over)  # fmt: skip

    @property
    def binding(self) -> tuple[str, int] | None:
        """(term, bytes) of the node furthest over its host, for the planner's rows."""
        if not self.over:
            return None
        hw, held, _ = max(self.over, key=lambda o: o[1] - o[2])
        return f"host memory per node ({hw.name})", held

    @property
    def unchecked(self) -> str | None:
        """The note of the nodes whose host's memory is unknown, not checked."""
        if not self.unknown:
            return None
        nodes = "; ".join(f"a node of {hw.host_gpus} x {hw.name} holds {_gib(held)}"
                          for hw, held in self.unknown)  # fmt: skip
        return (
            f"host memory not checked: {nodes} of offloaded states, but its platform has no "
            f"reference system whose host memory rlmcost knows (HGX boards go into servers of "
            f"many sizes); give {HOST_FLAG} N (GiB per host) to check it"
        )


def node_bytes(groups: Iterable[tuple[HardwareSpec, int, int]]) -> dict[tuple[str, int], int]:
    """Host bytes of each node, keyed by (its accelerator, its index among that accelerator's
    nodes), from the groups in order as (accelerator, GPUs, host bytes per device): each
    accelerator's groups take consecutive devices of its hosts (``HardwareSpec.host_gpus``),
    filling one before the next; a node holds, per group, its devices there x the group's
    bytes per device.

    >>> from rlmcost.specs import get_hardware
    >>> h = get_hardware("h100")
    >>> node_bytes([(h, 4, 10), (h, 8, 1)])
    {('h100-sxm', 0): 44, ('h100-sxm', 1): 4}
    """
    nodes: dict[tuple[str, int], int] = {}
    first: dict[str, int] = {}  # each accelerator's next free device
    for hw, gpus, per_device in groups:
        start, width = first.get(hw.name, 0), hw.host_gpus
        end = start + gpus
        for node in range(start // width, (end - 1) // width + 1):
            devices = min(end, (node + 1) * width) - max(start, node * width)
            key = (hw.name, node)
            nodes[key] = nodes.get(key, 0) + devices * per_device
        first[hw.name] = end
    return nodes


def host_capacity(hw: HardwareSpec, given_gib: float | None) -> tuple[int | None, str]:
    """Bytes one host of ``hw`` holds and where that comes from: the Run's
    ``host_memory_gib`` (GiB per host), else the reference system's (decimal), else None."""
    cap = _capacity(hw, given_gib)
    if cap is None:
        return None, ""
    if given_gib is not None:
        return cap, f"{HOST_FLAG} {given_gib:g} (the Run's host_memory_gib)"
    system = (hw.host_memory_source or "").partition(":")[0]
    return cap, f"{hw.name}'s reference host, {system} (`rlmcost hardware`)"


def _capacity(hw: HardwareSpec, given_gib: float | None) -> int | None:
    return round(given_gib * GIB) if given_gib is not None else hw.host_memory_bytes


Group = tuple[HardwareSpec, int, int]
"""A group as the check reads it: its accelerator, GPUs and host bytes per device."""


def host_check(groups: list[Group], given_gib: float | None) -> HostCheck:
    """:class:`HostCheck` of ``groups`` (in order, :func:`node_bytes`), each accelerator's
    busiest node against its host's memory (:func:`host_capacity`). Where the sum over its
    groups of min(GPUs, host) x bytes per device fits (no node holds more: a group has at
    most that many devices on one node), its nodes are not packed one by one."""
    bound: dict[str, list[Any]] = {}  # accelerator -> [spec, bound, its groups]
    for hw, gpus, per_device in groups:
        b = bound.setdefault(hw.name, [hw, 0, 0])
        b[1] += min(gpus, hw.host_gpus) * per_device
        b[2] += 1
    over: list[tuple[HardwareSpec, int, int]] = []
    unknown: list[tuple[HardwareSpec, int]] = []
    for name, (hw, most, n) in bound.items():
        cap = _capacity(hw, given_gib)
        if not most or (cap is not None and most <= cap):
            continue
        # its only group: from device 0, its first node holds min(GPUs, host) of its devices
        held = most if n == 1 else max(node_bytes(g for g in groups if g[0].name == name)
                                       .values())  # fmt: skip
        if cap is None:
            unknown.append((hw, held))
        elif held > cap:
            over.append((hw, held, cap))
    return HostCheck(tuple(over), tuple(unknown), given_gib) if over or unknown else _NOTHING


_NOTHING = HostCheck()


def _gib(n: int) -> str:
    from rlmcost.units import format_bytes

    return format_bytes(n)


def _problem(hw: HardwareSpec, held: int, cap: int, source: str) -> str:
    """The problem line of a node of ``hw`` holding ``held`` bytes over ``cap``."""
    return (
        f"host memory: a node of {hw.host_gpus} x {hw.name} holds {_gib(held)} of offloaded "
        f"states ({held / 1e12:.2f} TB), over its host's {_gib(cap)} ({cap / 1e12:.2f} TB: "
        f"{source}; all of it, none kept for the OS and processes); give more GPUs (more "
        f"nodes share the offloaded states), offload less (--offload), or {HOST_FLAG} for "
        f"your servers' host memory"
    )
