"""Predicted versus published inference measurements (``rlmcost validate --engine``).

The table ``rlmcost/perf/data/engine_runs.json`` lists published measurements of inference
engines, independent of RL: a model on ``tp`` GPUs of one kind, weights in ``dtype``, the KV
cache in ``kv_dtype``, a fixed ``batch`` (a static batch, or a closed-loop benchmark's
concurrency), prompts of ``input_tokens`` and responses of ``output_tokens``; the figure is
either a replica's output throughput (``throughput``, tokens/s, per GPU where the source
divides by its GPUs) or the mean inter-token latency of a closed-loop benchmark (``itl``, ms).

Each row is predicted with the engine model (:class:`~rlmcost.perf.generation.Engine`, the
accelerator's default efficiency profile, the engine's default options; a source whose
``runtime`` is not ``vllm`` gets no per-sequence host time,
:data:`~rlmcost.perf.generation.VLLM_HOST_S_PER_SEQUENCE`, which is vLLM's) and converted to
the source's quantity by this arithmetic (``b`` = batch, ``S`` = input, ``O`` = output tokens):

* a decode step's time is linear in the sum of the in-flight contexts
  (:meth:`~rlmcost.perf.generation.Engine.decode_step_s`), so the mean of the ``O - 1`` decode
  steps of a response (the first token comes from the prefill) is the step at the mean
  context, ``S + O / 2`` tokens per sequence: ``step = decode_step_s(b, b (S + O / 2))``;
* ``throughput`` (a static batch: the prompts prefilled together, then the decode steps):
  ``b O / (prefill(b S) + (O - 1) step)``, divided by ``tp`` where ``per_gpu``;
* ``itl`` (closed loop at concurrency ``b``: a finished request is replaced at once, so
  every response of ``O - 1`` decode steps shares them with the prefills of the ``b - 1``
  others, each prefilled once per response in steady state):
  ``step + (b - 1) prefill(S) / (O - 1)``;
* ``itl`` with ``"statistic": "median"`` (the source gives the median inter-token latency):
  ``step`` alone. Of a response's ``O - 1`` steps at most ``b - 1`` carry another request's
  prefill, fewer than half on every such row (``b < O / 2``, checked), so the median step is a
  pure decode step.

Error = predicted / published - 1 (for ``itl`` a positive error is a prediction too slow;
for ``throughput``, too fast); the summary gives the median and maximum of |error| per source
and per accelerator, and the median *speed* error (predicted speed / published speed - 1: a
throughput's error, or published / predicted ITL - 1), whose sign says whether the model is
fast or slow.
"""

from __future__ import annotations

import statistics
from typing import Any

from rlmcost.choices import Dtype
from rlmcost.errors import SpecError
from rlmcost.frozen import dataclass
from rlmcost.perf.efficiency import Device
from rlmcost.perf.generation import DecodeStep, Engine, EngineOptions
from rlmcost.perf.validate_data import check_common, read_table
from rlmcost.specs import get_hardware, get_model

METRICS = ("throughput", "itl", "latency")
RUNTIMES = ("vllm", "tensorrt-llm", "sglang")
STATISTICS = ("mean", "median")
_FIELDS = ("id", "source", "model", "hardware", "tp", "dtype", "kv_dtype", "input_tokens",
           "output_tokens", "batch", "metric", "per_gpu", "published", "cite")  # fmt: skip


@dataclass(frozen=True)
class EngineRow:
    """One published inference figure and its prediction."""

    row: dict[str, Any]
    predicted: float
    step_s: float
    prefill_s: float
    parts: DecodeStep

    @property
    def id(self) -> str:
        return str(self.row["id"])

    @property
    def published(self) -> float:
        return float(self.row["published"])

    @property
    def error(self) -> float:
        return self.predicted / self.published - 1

    @property
    def speed_error(self) -> float:
        """Predicted speed / published speed - 1 (negative: the model is slow)."""
        if self.row["metric"] in ("itl", "latency"):
            return self.published / self.predicted - 1
        return self.error

    @property
    def setup(self) -> str:
        r = self.row
        return (f"{r['model']} {r['hardware']} TP{r['tp']} {r['dtype']} b={r['batch']} "
                f"{r['input_tokens']}/{r['output_tokens']}")  # fmt: skip

    def to_json(self) -> dict[str, Any]:
        r = self.row
        return {
            "id": self.id, "source": r["source"], "setup": self.setup, "metric": r["metric"],
            "unit": unit(r), "published": self.published, "predicted": self.predicted,
            "error": self.error, "speed_error": self.speed_error,
            "predicted_decode_step_s": self.step_s, "predicted_prefill_s": self.prefill_s,
            "predicted_step_parts_s": {
                "gemm": self.parts.gemm_s, "attention": self.parts.attention_s,
                "elementwise": self.parts.elementwise_s, "tp_comm": self.parts.tp_comm_s,
                "head": self.parts.head_s, "overhead": self.parts.overhead_s,
            },
            "model": r["model"], "hardware": r["hardware"], "tp": r["tp"], "dtype": r["dtype"],
            "kv_dtype": r["kv_dtype"], "batch": r["batch"], "input_tokens": r["input_tokens"],
            "output_tokens": r["output_tokens"], "cite": r["cite"],
            "assumptions": list(r.get("assumptions", ())),
            "excluded": r.get("excluded"),
        }  # fmt: skip


def unit(row: dict[str, Any]) -> str:
    if row["metric"] in ("itl", "latency"):
        return "ms"
    return "tokens/s/GPU" if row["per_gpu"] else "tokens/s"


def load_table() -> dict[str, Any]:
    """The shipped table (``rlmcost/perf/data/engine_runs.json``), its rows checked."""
    table = read_table("engine_runs.json", check_row)
    for name, src in table["sources"].items():
        if src.get("runtime") not in RUNTIMES:
            raise SpecError(f"engine source {name}: runtime {src.get('runtime')!r} is not one of "
                            f"{RUNTIMES}")  # fmt: skip
    return table


def check_row(row: dict[str, Any], sources: dict[str, Any]) -> None:
    """A SpecError naming the row and what is wrong with it, if anything is."""
    rid = check_common("engine", row, _FIELDS, sources)
    if row["metric"] not in METRICS:
        raise SpecError(f"engine row {rid}: metric {row['metric']!r} is not one of {METRICS}")
    for k in ("tp", "batch", "input_tokens", "output_tokens"):
        if not isinstance(row[k], int) or row[k] < 1:
            raise SpecError(f"engine row {rid}: {k}={row[k]!r} must be a positive integer")
    if row["output_tokens"] < 2:
        raise SpecError(f"engine row {rid}: output_tokens must be at least 2 (one decode step)")
    if not row["published"] > 0:
        raise SpecError(f"engine row {rid}: published={row['published']!r} must be positive")
    stat = row.get("statistic", "mean")
    if stat not in STATISTICS or (stat == "median" and row["metric"] != "itl"):
        raise SpecError(f"engine row {rid}: statistic {stat!r} must be one of {STATISTICS} "
                        "(median: itl rows only)")  # fmt: skip
    if stat == "median" and not 2 * row["batch"] < row["output_tokens"]:
        raise SpecError(f"engine row {rid}: a median ITL is a pure decode step only when "
                        "batch < output_tokens / 2")  # fmt: skip


def decode_period(engine: Engine, batch: int, prompt: int, output: int) -> tuple[float, float]:
    """(mean decode step seconds, prefill seconds of the batch's prompts) (module docstring)."""
    step = engine.decode_step_s(batch, batch * (prompt + output / 2))
    return step, engine.prefill_s(batch * prompt, prompt)


def predict(row: dict[str, Any], runtime: str = "vllm") -> EngineRow:
    """Predict one row run on ``runtime`` (module docstring)."""
    arch = get_model(row["model"]).arch()
    hw = get_hardware(row["hardware"])
    kv = Dtype(row["kv_dtype"])
    options = None if runtime == "vllm" else EngineOptions(per_sequence_s=0.0)
    engine = Engine(arch, Device(hw, Dtype(row["dtype"])), tp=row["tp"], kv_bytes=kv.bytes,
                    options=options)  # fmt: skip
    b, s, o = row["batch"], row["input_tokens"], row["output_tokens"]
    step, prefill = decode_period(engine, b, s, o)
    if row["metric"] == "itl" and row.get("statistic") == "median":
        predicted = 1e3 * step
    elif row["metric"] == "itl":
        single = engine.prefill_s(s, s)
        predicted = 1e3 * (step + (b - 1) * single / (o - 1))
    elif row["metric"] == "latency":
        predicted = 1e3 * (prefill + (o - 1) * step)
    else:
        predicted = b * o / (prefill + (o - 1) * step)
        if row["per_gpu"]:
            predicted /= row["tp"]
    parts = engine.decode_step(b, round(b * (s + o / 2)))
    return EngineRow(row, predicted, step, prefill, parts)


@dataclass(frozen=True)
class EngineValidation:
    rows: tuple[EngineRow, ...]
    sources: dict[str, Any]

    def summary(self) -> dict[str, dict[str, Any]]:
        """Median and maximum |error| and the median speed error over ``all``, per source and
        per accelerator (``hardware <name>``: whether the model is fast or slow on one GPU
        generation), the rows marked ``excluded`` left out."""
        kept = [r for r in self.rows if not r.row.get("excluded")]
        groups: dict[str, list[EngineRow]] = {"all": kept}
        for r in kept:
            groups.setdefault(str(r.row["source"]), []).append(r)
        for r in kept:
            groups.setdefault(f"hardware {r.row['hardware']}", []).append(r)
        return {
            k: {
                "rows": len(v),
                "median_abs_error": statistics.median(abs(r.error) for r in v),
                "max_abs_error": max(abs(r.error) for r in v),
                "median_speed_error": statistics.median(r.speed_error for r in v),
            }
            for k, v in groups.items()
            if v
        }

    def to_json(self) -> dict[str, Any]:
        return {
            "engine_rows": [r.to_json() for r in self.rows],
            "engine_summary": self.summary(),
            "sources": self.sources,
        }


def validate_engine(source: str | None = None) -> EngineValidation:
    """Every row of the table (of one ``source``) with its prediction."""
    table = load_table()
    rows = [r for r in table["rows"] if source is None or r["source"] == source]
    if not rows:
        have = ", ".join(table["sources"])
        raise SpecError(f"no engine rows of source {source!r}; sources: {have}")
    src = table["sources"]
    return EngineValidation(tuple(predict(r, src[r["source"]]["runtime"]) for r in rows), src)
