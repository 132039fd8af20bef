"""Published NCCL all-reduce times across nodes at small and medium sizes, and what
:mod:`rlmcost.perf.collectives` charges for the same collective.

A tensor-parallel engine that spans nodes (SGLang or vLLM TP 16 on two 8-GPU nodes, TP 32 on
four) all-reduces the [a, d] activations twice per layer in every decode step: a message of
``a x d x 2`` bytes (bf16), 14 KiB for one DeepSeek-V3 sequence (d = 7168), under 1 MiB up to
64 sequences. Those are the sizes of the rows below; each is a measurement that someone other
than rlmcost published, with the fabric and the way it was timed.

Sources (payload = the all-reduced buffer in bytes, time per collective in microseconds):

* ``mscclpp_ndmv4``: Microsoft MSCCL++ ``docs/performance-ndmv4.md`` (Azure NDmv4: 8 A100-80GB
  per node, eight 200 Gb/s HDR InfiniBand NICs, one per GPU; NCCL 2.17.1, nccl-tests
  ``all_reduce_perf`` with CUDA graphs ``-G 1``, in-place): 1 KiB on one node 16.96, on two
  nodes of one GPU 21.27, on two nodes of eight GPUs 35.85.
* ``nccl_tests_150``: NVIDIA/nccl-tests issue 150 (two nodes of 8 A100-80GB on HDR
  InfiniBand, one GPU per node, ``all_reduce_perf -b 8``, out-of-place, no CUDA graph): 8 B
  19.90.
* ``mscclpp_794``: microsoft/mscclpp pull request 794 ("Adding Support 4 Nodes AllReduce Small
  Message Size", results on 4 nodes of H200, NCCL column): 8 KiB 45.75, 16 KiB 47.08, 64 KiB
  50.34, 256 KiB 87.46, 1 MiB 115.0, 4 MiB 177.59. Eight GPUs per node is an assumption (the
  H200 HGX node; the PR names the node count only).
* ``mscclpp_531``: microsoft/mscclpp issue 531 (SGLang's
  ``benchmark/kernels/all_reduce/benchmark_mscclpp.py`` on A100 nodes of 8 GPUs and 4 NICs,
  the setup of sgl-project/sglang pull request 6277; ``pynccl graph time``: SGLang's own NCCL
  all-reduce, 100 of them captured in one CUDA graph, the way an engine's decode step runs
  them): 2 KiB 44.27, 16 KiB 48.01, 64 KiB 55.54, 256 KiB 83.27. Two nodes (TP 16) is an
  assumption: the benchmark runs TP 8 or TP 16, and the same table's MSCCL++ one-shot figure
  (24 us at 2 KiB) is three times its single-node figure (7.2 us at 24 KiB, mscclpp pull
  request 169).

Rows kept out of the comparison, each with its reason in ``excluded``:

* NVIDIA/nccl issue 1453 (H100, two nodes of eight by NCCL's own tuner line, 25.2 us =
  6.8 + 2 (7 x 0.6 + 5.0) of ``src/graph/tuning.cc`` for Tree/LL): 128 B 61.58 us; the same
  run's 512 MiB all-reduce reaches 5.42 GB/s bus bandwidth, a ninth of one 400 Gb/s NIC: a
  misconfigured fabric (the issue is titled "Poor NCCL allreduce performance").
* Google Cloud A3 Mega (two nodes of 8 H100 on GPUDirect-TCPXO, TCP over 200 Gb/s NICs, not
  RDMA; nccl-tests output in lessizzmore/create-a3mega-ztan-fork ``ztan-NCCL-test-result``):
  8-256 B 123 us. rlmcost's ``h100-sxm`` is an InfiniBand DGX-class node.

In an engine's decode step, not a benchmark loop (no rlmcost spec, so not a row):
local-inference-lab/vllm pull request 295 profiles a GLM TP 4 decode step on four DGX Spark
(GB10) nodes over 200 Gb/s RoCE: about 100 NCCL all-reduces of 48 KiB, 54-64 us each, where
``ib_write_lat`` is 8.8 us (GB10 has no GPUDirect RDMA, so NCCL stages through host memory).

What the rows say (``tests/test_collectives_measured.py``): for a TP group that fills its
nodes (8 GPUs each) the charged small-message all-reduce (Hockney alpha-beta with NCCL's
tree, 5 us per inter-node step, :mod:`~rlmcost.perf.collectives`) is 40 us on two nodes and
50 us on four, within 17 % of every kept measurement up to 64 KiB (35.9-55.5 us measured,
charged / measured 0.83-1.12, mean 0.99); NCCL's own tuner predicts less than was measured
(25.2 us on two nodes). Known deviations, none of them a TP-across-nodes decode at small
batch: at 256 KiB-1 MiB the charge is 16-30 % low (NCCL's LL / LL128 protocols carry less than
the link's bandwidth), at 4 MiB on four nodes 33 % high (the engine's all-reduce is priced on
one rank's NIC; NCCL's channels use the node's NICs), and two ranks on two nodes (one GPU per
node) are charged half of the 20-21 us measured (NCCL's fixed per-collective cost, which a
count of hops leaves out). An SGLang TP 16 decode step on two H100 nodes that implies ~145 us
per all-reduce (``ttis356-*`` rows of ``rlmcost validate --engine``) is therefore not NCCL's
all-reduce time as these measurements show it.
"""

from __future__ import annotations

from rlmcost.frozen import dataclass
from rlmcost.parallel.comm import Collective
from rlmcost.perf.collectives import Algorithm, collective_time_s, link
from rlmcost.specs import get_hardware

KIB = 1024


@dataclass(frozen=True)
class MeasuredAllReduce:
    """One published NCCL all-reduce time (module docstring for the sources)."""

    source: str
    hardware: str  # rlmcost hardware name of the GPU
    nodes: int
    gpus_per_node: int  # ranks in each node
    payload_bytes: int
    measured_s: float
    timing: str  # how it was timed
    excluded: str | None = None  # why the row is kept out of the comparison

    @property
    def ranks(self) -> int:
        return self.nodes * self.gpus_per_node


def _rows(source: str, hardware: str, nodes: int, per_node: int, timing: str,
          points: tuple[tuple[int, float], ...], excluded: str | None = None,
          ) -> tuple[MeasuredAllReduce, ...]:  # fmt: skip
    return tuple(
        MeasuredAllReduce(source, hardware, nodes, per_node, b, us * 1e-6, timing, excluded)
        for b, us in points
    )


_GRAPH = "nccl-tests all_reduce_perf, CUDA graph, in-place"
_PYNCCL = "SGLang pynccl all-reduce, 100 per CUDA graph"
_BAD_FABRIC = ("the same run's 512 MiB all-reduce reaches 5.42 GB/s bus bandwidth, a ninth of "
               "one 400 Gb/s NIC: a misconfigured fabric")  # fmt: skip
_TCPXO = "GPUDirect-TCPXO (TCP, not RDMA); rlmcost's h100-sxm is an InfiniBand node"

MEASURED: tuple[MeasuredAllReduce, ...] = (
    *_rows("mscclpp_ndmv4", "a100-80gb", 1, 8, _GRAPH, ((KIB, 16.96),)),
    *_rows("mscclpp_ndmv4", "a100-80gb", 2, 1, _GRAPH, ((KIB, 21.27),)),
    *_rows("mscclpp_ndmv4", "a100-80gb", 2, 8, _GRAPH, ((KIB, 35.85),)),
    *_rows("nccl_tests_150", "a100-80gb", 2, 1, "nccl-tests all_reduce_perf, out-of-place",
           ((8, 19.90),)),  # fmt: skip
    *_rows("mscclpp_794", "h200", 4, 8, "NCCL (mscclpp PR 794 table)",
           ((8 * KIB, 45.75), (16 * KIB, 47.08), (64 * KIB, 50.34), (256 * KIB, 87.46),
            (1024 * KIB, 115.0), (4096 * KIB, 177.59))),  # fmt: skip
    *_rows("mscclpp_531", "a100-80gb", 2, 8, _PYNCCL,
           ((2 * KIB, 44.27), (16 * KIB, 48.01), (64 * KIB, 55.54), (256 * KIB, 83.27))),
    *_rows("nccl_issue_1453", "h100-sxm", 2, 8, "nccl-tests all_reduce_perf",
           ((128, 61.58),), _BAD_FABRIC),  # fmt: skip
    *_rows("gcp_a3mega_tcpxo", "h100-sxm", 2, 8, "nccl-tests all_reduce_perf, out-of-place",
           ((8, 135.8), (256, 123.6)), _TCPXO),  # fmt: skip
)


def charged_s(row: MeasuredAllReduce, algorithm: Algorithm = Algorithm.AUTO) -> float:
    """Seconds :func:`~rlmcost.perf.collectives.collective_time_s` charges for ``row``'s
    all-reduce: NVLink inside one node, else the NIC across nodes (one rank's NIC, as the
    engine's decode all-reduce is priced), with NCCL's faster of ring and tree."""
    hw = get_hardware(row.hardware)
    lk = link(hw, intra_node=row.nodes == 1)
    return collective_time_s(Collective.ALL_REDUCE, row.payload_bytes, row.ranks, lk, algorithm)


def charged_over_measured(rows: tuple[MeasuredAllReduce, ...] = MEASURED) -> list[
    tuple[MeasuredAllReduce, float]
]:  # fmt: skip
    """(row, charged / measured) for each row not excluded."""
    return [(r, charged_s(r) / r.measured_s) for r in rows if r.excluded is None]
