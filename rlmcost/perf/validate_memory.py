"""Predicted versus measured GPU memory per device (``rlmcost validate --memory``).

The table ``rlmcost/perf/data/memory_runs.json`` lists published measurements of one GPU's
memory in a stated run, each with what was measured and the rlmcost query that expresses the
run; nothing here has a formula of its own: every prediction is what the query prints.

* ``train`` rows: a ``rlmcost train`` command (``command``), run as typed (the CLI's own parser
  and report, through the ``train_json`` callable the CLI passes); its allocated peak is
  ``memory_per_rank_bytes.total``, the peak pipeline stage's tensors (weights, gradients,
  optimizer states, activations, logits, buffers), what ``torch.cuda.max_memory_allocated``
  counts.
* ``rl`` rows: a published RL run of ``rlmcost/perf/data/rl_runs.json`` (``rl_run``: its id),
  its Run built as ``rlmcost validate --rl`` builds it (the recipe's command through the
  algorithm command's parser, then its overlay) and evaluated; the allocated peak is the
  ``stage``'s (:attr:`~rlmcost.evaluation.stages.StageEstimate.allocated_bytes_per_device`),
  its ``nvidia-smi`` view :attr:`~rlmcost.evaluation.stages.StageEstimate.
  memory_bytes_per_device`.
* ``engine`` rows: a vLLM or SGLang engine's KV-cache pool as the engine logged it at
  start-up (``kv_gib`` or ``kv_tokens``), against the pool an RL query's evaluation gives the
  engine alone on a group (:mod:`rlmcost.perf.validate_memory_engine`).

What is compared is the quantity the source measured (``measured``):

* ``allocated`` (``torch.cuda.max_memory_allocated``): the allocated peak itself;
* ``reserved`` (``torch.cuda.memory_stats()["reserved_bytes.all.peak"]``, the caching
  allocator's segments; torchtitan's "memory" log line): the allocated peak plus the
  allocator's slack, rlmcost's own term (:meth:`~rlmcost.deployment.overhead.Overhead.
  allocator_slack_for` with the row's ``expandable_segments``; no CUDA context, no NCCL
  buffers: neither is in PyTorch's allocator);
* ``allocated_or_reserved``: a figure whose source does not say which of the two it is (verl
  logs both, ``perf/max_memory_allocated_gb`` and ``perf/max_memory_reserved_gb``): predicted
  as the allocated peak, its interval running to the reserved one's high end;
* ``device`` (``nvidia-smi``): an ``rl`` row's nvidia-smi view.

The interval says how far the published figure may lie from the allocated peak for what
rlmcost leaves out of its tensors' count, the allocator's slack (reserved minus allocated,
fragmentation and cached idle blocks), over its stated range (:data:`SLACK_RANGE`,
:data:`SLACK_RANGE_EXPANDABLE`, from measured fragmentation of PyTorch's allocator in LLM
training); the tensors' count itself carries no range (the framework terms it uses are the
bytes torch keeps, measured on CPU by tests/test_framework_memory.py). A single point for
``allocated`` rows. A published figure is inside when it lies in the interval widened by half
the last digit it was printed with (``resolution_gib``).

Error = predicted / published - 1. The summary per source (and ``all``): rows predicted, mean
and maximum |error|, coverage (the share inside the interval). A row that cannot be expressed
keeps its place with a ``not_predicted`` reason. Bytes: GiB = 2^30 bytes, as the sources print
(torchtitan's ``_to_gib``, verl's ``/ 1024**3``).
"""

from __future__ import annotations

import shlex
from collections.abc import Callable
from fractions import Fraction
from math import ceil
from typing import TYPE_CHECKING, Any

from rlmcost.errors import SpecError
from rlmcost.frozen import dataclass
from rlmcost.perf.validate_data import check_common, read_table

if TYPE_CHECKING:
    from rlmcost.run.spec import Run

GIB = 2**30

MEASURED = ("allocated", "reserved", "allocated_or_reserved", "device", "kv_gib", "kv_tokens")
KINDS = ("train", "rl", "engine")

FRAGMENTATION_MEAN = Fraction(15, 100)
"""Fragmentation, 1 - allocated / reserved, of PyTorch's caching allocator (its default,
block splitting) on LLM training with recomputation, ZeRO, offloading or LoRA, averaged over
eight LLMs on A100-80GB: what GMLake's virtual-memory stitching, near free of fragmentation,
takes away, "15% (up to 33%) fragmentation" (Guo et al., "GMLake: Efficient and Transparent
GPU Memory Defragmentation for Large-scale DNN Training with Virtual Memory Stitching", ASPLOS
2024, arXiv 2401.08156, abstract)."""

FRAGMENTATION_MAX = Fraction(33, 100)
"""The same paper's largest ("up to 33%")."""


def slack_of_fragmentation(f: Fraction) -> float:
    """Reserved / allocated - 1 at fragmentation ``f`` = 1 - allocated / reserved.

    >>> round(slack_of_fragmentation(Fraction(15, 100)), 4)
    0.1765
    """
    return float(f / (1 - f))


SLACK_RANGE = (0.02, slack_of_fragmentation(FRAGMENTATION_MAX))
"""Reserved / allocated - 1 of PyTorch's caching allocator without expandable segments: low
:data:`~rlmcost.deployment.overhead.ALLOCATOR_SLACK`'s stated 0.02 (rlmcost/deployment/
overhead.py), high GMLake's largest measured fragmentation, 33 % of reserved (0.49 of
allocated; :data:`FRAGMENTATION_MAX`)."""

SLACK_RANGE_EXPANDABLE = (0.0, slack_of_fragmentation(FRAGMENTATION_MEAN))
"""The same with ``expandable_segments:True``: low 0 (one growing segment whose freed pages
serve requests of any size, rlmcost/deployment/overhead.py ``ALLOCATOR_SLACK_EXPANDABLE``),
high the default allocator's mean fragmentation in GMLake's measurements, 15 % of reserved
(0.18 of allocated; :data:`FRAGMENTATION_MEAN`): expandable segments map pages into one
virtual range as GMLake's stitching does, so the default's mean bounds them from above (no
published reserved / allocated ratio with expandable segments was found)."""

TrainJson = Callable[[list[str]], dict[str, Any]]
"""The ``--json`` object of ``rlmcost train WORDS`` (the CLI's own command, run in-process)."""

Build = Callable[[str, list[str]], "Run"]
"""The Run of ``rlmcost ALGORITHM ARGV`` (:func:`rlmcost.cli.validate.run_from_argv`)."""

_FIELDS = ("id", "source", "kind", "measured", "cite", "assumptions")


@dataclass(frozen=True)
class MemoryRow:
    """One published measurement and its prediction (None with ``status`` the reason)."""

    row: dict[str, Any]
    status: str = "ok"
    allocated_bytes: int | None = None
    predicted_bytes: int | None = None
    interval_bytes: tuple[int, int] | None = None
    slack: float | None = None
    predicted_tokens: int | None = None
    interval_tokens: tuple[int, int] | None = None

    @property
    def tokens(self) -> bool:
        """The row compares token counts (an engine's ``kv_tokens``), not bytes."""
        return self.row["measured"] == "kv_tokens"

    @property
    def id(self) -> str:
        return str(self.row["id"])

    @property
    def source(self) -> str:
        return str(self.row["source"])

    @property
    def published_bytes(self) -> int | None:
        """The published GiB in bytes, to the byte (the source printed a rounded GiB); None
        for a row that published tokens."""
        if self.tokens:
            return None
        return round(float(self.row["published_gib"]) * GIB)

    @property
    def error(self) -> float | None:
        """predicted / published - 1, in the row's unit (tokens or bytes)."""
        if self.tokens:
            if self.predicted_tokens is None:
                return None
            return self.predicted_tokens / int(self.row["published_tokens"]) - 1
        if self.predicted_bytes is None or self.published_bytes is None:
            return None
        return self.predicted_bytes / self.published_bytes - 1

    @property
    def inside(self) -> bool | None:
        """The published figure, widened by half its printed digit, meets the interval
        (a token count is printed exact)."""
        if self.tokens:
            if self.interval_tokens is None:
                return None
            low_t, high_t = self.interval_tokens
            return low_t <= int(self.row["published_tokens"]) <= high_t
        if self.interval_bytes is None or self.published_bytes is None:
            return None
        half = float(self.row.get("resolution_gib", 0.0)) / 2 * GIB
        low, high = self.interval_bytes
        return low - half <= self.published_bytes <= high + half

    def to_json(self) -> dict[str, Any]:
        r = self.row
        return {
            "id": self.id, "source": self.source, "kind": r["kind"], "setup": r.get("setup"),
            "measured": r["measured"],
            "published_gib": float(r["published_gib"]) if "published_gib" in r else None,
            "published_bytes": self.published_bytes, "predicted_bytes": self.predicted_bytes,
            "published_tokens": r.get("published_tokens"),
            "predicted_tokens": self.predicted_tokens,
            "interval_tokens": list(self.interval_tokens) if self.interval_tokens else None,
            "engine_profile": r.get("profile"),
            "allocated_bytes": self.allocated_bytes, "allocator_slack": self.slack,
            "error": self.error,
            "interval_bytes": list(self.interval_bytes) if self.interval_bytes else None,
            "inside_interval": self.inside, "status": self.status,
            "command": r.get("command"), "rl_run": r.get("rl_run"), "stage": r.get("stage"),
            "expandable_segments": r.get("expandable_segments", False),
            "cite": r["cite"], "assumptions": list(r["assumptions"]),
        }  # fmt: skip


def load_table() -> dict[str, Any]:
    """The shipped table (``rlmcost/perf/data/memory_runs.json``), its rows checked."""
    return read_table("memory_runs.json", check_row)


def check_row(row: dict[str, Any], sources: dict[str, Any]) -> None:
    """A SpecError naming the row and what is wrong with it, if anything is."""
    rid = check_common("memory", row, _FIELDS, sources)
    if row["kind"] not in KINDS:
        raise SpecError(f"memory row {rid}: kind {row['kind']!r} is not one of {KINDS}")
    if row["measured"] not in MEASURED:
        raise SpecError(f"memory row {rid}: measured {row['measured']!r} is not one of "
                        f"{MEASURED}")  # fmt: skip
    if row["kind"] == "engine":
        from rlmcost.perf.validate_memory_engine import check_engine_row

        check_engine_row(row)
        return
    if row["measured"] in ("kv_gib", "kv_tokens"):
        raise SpecError(f"memory row {rid}: {row['measured']!r} rows are engine rows")
    if not float(row.get("published_gib") or 0) > 0:
        raise SpecError(f"memory row {rid}: published_gib must be positive")
    if row.get("not_predicted"):
        return
    need = "command" if row["kind"] == "train" else "rl_run"
    if not row.get(need):
        raise SpecError(f"memory row {rid}: a {row['kind']} row needs {need!r} "
                        "(or a 'not_predicted' reason)")  # fmt: skip
    if row["measured"] == "device" and row["kind"] != "rl":
        raise SpecError(f"memory row {rid}: 'device' (nvidia-smi) rows are rl rows")


def slack_of(row: dict[str, Any]) -> tuple[float, tuple[float, float]]:
    """The allocator's slack (rlmcost's default for the row's allocator setting) and its
    stated range."""
    from rlmcost.deployment.overhead import Overhead

    expandable = bool(row.get("expandable_segments", False))
    slack = Overhead(expandable_segments=expandable).allocator_slack_for(False)
    return slack, SLACK_RANGE_EXPANDABLE if expandable else SLACK_RANGE


def train_allocated(row: dict[str, Any], train_json: TrainJson) -> int:
    """The allocated peak ``rlmcost train`` prints for the row's command."""
    words = shlex.split(row["command"])
    if words[:2] != ["rlmcost", "train"]:
        raise SpecError(f"memory row {row['id']}: command must start 'rlmcost train'")
    out = train_json(words[2:])
    return int(out["memory_per_rank_bytes"]["total"])


def rl_stage(row: dict[str, Any], build: Build) -> Any:
    """The stage estimate of the row's published RL run, its Run as ``validate --rl``'s."""
    from rlmcost.algorithms.kinds import Stage
    from rlmcost.evaluation.query import evaluate
    from rlmcost.reports.rl_runs import recipes
    from rlmcost.reports.rl_runs_rows import build_run

    found = [r for r in recipes() if r.id == row["rl_run"]]
    if not found:
        raise SpecError(f"memory row {row['id']}: no RL run {row['rl_run']!r} in rl_runs.json")
    recipe = found[0]
    if recipe.query is None:
        raise SpecError(f"not expressible: {recipe.unexpressible}")
    stages = evaluate(build_run(recipe, build)).stages
    stage = Stage(row.get("stage", "training"))
    if stage not in stages:
        raise SpecError(f"the run has no {stage} stage")
    return stages[stage]


def predict(row: dict[str, Any], train_json: TrainJson, build: Build) -> MemoryRow:
    """One row's prediction in the quantity its source measured (module docstring)."""
    if row["kind"] == "engine":
        from rlmcost.perf.validate_memory_engine import predict_engine

        return MemoryRow(row, **predict_engine(row, build))
    if row.get("not_predicted"):
        return MemoryRow(row, f"not predicted: {row['not_predicted']}")
    try:
        if row["kind"] == "train":
            allocated, device = train_allocated(row, train_json), None
        else:
            stage = rl_stage(row, build)
            allocated, device = stage.allocated_bytes_per_device, stage.memory_bytes_per_device
    except SpecError as exc:
        return MemoryRow(row, f"not predicted: {exc}")
    if row["measured"] == "allocated":
        return MemoryRow(row, "ok", allocated, allocated, (allocated, allocated))
    slack, (low, high) = slack_of(row)
    if row["measured"] == "allocated_or_reserved":
        return MemoryRow(row, "ok", allocated, allocated,
                         (allocated, allocated + ceil(allocated * high)), slack)  # fmt: skip
    if row["measured"] == "reserved":
        predicted = allocated + ceil(allocated * slack)
        return MemoryRow(row, "ok", allocated, predicted,
                         (allocated + ceil(allocated * low), allocated + ceil(allocated * high)),
                         slack)  # fmt: skip
    assert device is not None
    fixed = device - allocated - ceil(allocated * slack)  # context, communicators (and pool)
    return MemoryRow(row, "ok", allocated, device,
                     (allocated + fixed + ceil(allocated * low),
                      allocated + fixed + ceil(allocated * high)), slack)  # fmt: skip


@dataclass(frozen=True)
class MemoryValidation:
    rows: tuple[MemoryRow, ...]
    sources: dict[str, Any]

    def summary(self) -> dict[str, dict[str, Any]]:
        """Per source and over ``all``: rows, rows predicted, mean and max |error|, coverage."""
        groups: dict[str, list[MemoryRow]] = {}
        for r in self.rows:
            groups.setdefault(r.source, []).append(r)
        groups["all"] = list(self.rows)
        out: dict[str, dict[str, Any]] = {}
        for k, v in groups.items():
            done = [r for r in v if r.error is not None]
            errors = [abs(r.error) for r in done if r.error is not None]
            out[k] = {
                "rows": len(v), "predicted": len(done),
                "mean_abs_error": sum(errors) / len(errors) if errors else None,
                "max_abs_error": max(errors) if errors else None,
                "mean_error": sum(r.error for r in done if r.error is not None) / len(done)
                if done else None,
                "coverage": sum(bool(r.inside) for r in done) / len(done) if done else None,
            }  # fmt: skip
        return out

    def to_json(self) -> dict[str, Any]:
        return {
            "memory_rows": [r.to_json() for r in self.rows],
            "memory_summary": self.summary(),
            "sources": self.sources,
        }


def validate_memory(
    train_json: TrainJson, build: Build, source: str | None = None
) -> MemoryValidation:
    """Every row of the table (of one ``source``) with its prediction."""
    table = load_table()
    rows = [r for r in table["rows"] if source is None or r["source"] == source]
    if not rows:
        have = ", ".join(table["sources"])
        raise SpecError(f"no memory rows of source {source!r}; sources: {have}")
    predicted = tuple(predict(r, train_json, build) for r in rows)
    return MemoryValidation(predicted, table["sources"])
