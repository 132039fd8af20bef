"""Predicted versus published training throughput (``rlmcost validate``).

The table ``rlmcost/perf/data/published.json`` lists published measurements, each with its
setup (model shape, GPUs, layout, batch), the figure, the source (paper, table, row) and the
assumptions the prediction needs where the source is silent (micro-batch, schedule, kernels).
Every row is predicted with :func:`~rlmcost.perf.train_step.train_step_time` and the default
efficiency profile of its accelerator (its pre-FlashAttention-3 slot holding the run's kernel,
``options.fa2_kernel``: :mod:`~rlmcost.perf.triton_attention`), and converted to the source's
own metric with the source's own FLOP formula, so that predicted and published numbers are the
same quantity (a row's ``options.fp8`` names Transformer Engine's FP8 recipe of its Linear layers,
:mod:`~rlmcost.perf.fp8_train`, as ``rlmcost train --train-fp8``; its ``dtype`` stays bf16, the
attention's and activations'; ``options.mtp_layers`` / ``mtp_repeated`` / ``mtp_detach_heads`` the
multi-token prediction depths the run trains, :mod:`~rlmcost.perf.mtp_pass`, as ``rlmcost train
--mtp-layers``; ``options.moe_layer_host_s`` the MoE layers' host floor,
:mod:`~rlmcost.perf.moe_host`'s measured figure unless the row says otherwise, 0 for a run whose
whole forward-backward is one CUDA graph, Megatron-core's ``cuda_graph_impl`` "full_iteration";
``options.moe_ep_overlap`` Megatron-core's ``overlap_moe_expert_parallel_comm``,
:mod:`~rlmcost.perf.ep_overlap`):

* ``tflops_per_gpu_narayanan2021``: F / (step x GPUs), F = 96 B s l h^2 (1 + s / 6h +
  V / 16 l h) (Narayanan et al. 2021, eq. 3: model FLOPs with full recomputation);
* ``mfu_korthikanti2022``: F / (step x GPUs x peak), F = 72 B s l h^2 (1 + s / 6h +
  V / 12 l h) (Korthikanti et al. 2022, §6: model FLOPs, no recomputation);
* ``tflops_per_gpu_korthikanti2022``: the same F / (step x GPUs) in TFLOP/s: what
  Megatron-LM's ``num_floating_point_operations`` (``megatron/training/training.py``
  @f2e5db402) counts for a GPT of multi-head attention and a 4h GeLU FFN,
  12 B s l h^2 ((1 + g/a + s/h) + 4 + V / 2 l h) with g = a, and its log prints per GPU;
* ``step_time_s``: the published time per global step itself (rows of a built-in model,
  ``model.name``, whose source prints its step time, e.g. NeMo AutoModel's table);
* ``tflops_per_gpu_megatron``: F / (step x GPUs) in TFLOP/s with F Megatron-LM's
  ``num_floating_point_operations`` of a built-in model (grouped-query attention, SwiGLU, MoE
  experts; :mod:`~rlmcost.perf.megatron_flops`), what its ``--log-throughput`` prints
  (Megatron-MoE-ModelZoo's "TFLOPS" and "Per GPU TF" columns);
* ``tokens_per_s_per_gpu``: B s / (step x GPUs), the tokens of a global step per second and
  GPU, as NVIDIA's Megatron-Bridge performance summary prints it ("Tokens / sec / GPU"): a
  count of the batch, free of any FLOP convention.

Error = predicted / published - 1; summaries give the mean and maximum of |error| per source.

The table's ``rl_rows`` are published RL step times, predicted by the whole iteration model
(:mod:`~rlmcost.perf.validate_rl`).
"""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

from rlmcost.arch import Arch
from rlmcost.choices import Dtype, FfnKind, Fp8Recipe, NormKind
from rlmcost.errors import SpecError
from rlmcost.frozen import dataclass
from rlmcost.parallel.layout import Checkpointing, Layout, PipelineSchedule, ZeroStage
from rlmcost.perf.efficiency import default_profile
from rlmcost.perf.ep_dispatch import EpDispatcher
from rlmcost.perf.ep_overlap import check_ep_overlap
from rlmcost.perf.fsdp_prefetch import BackwardPrefetch
from rlmcost.perf.logprob_head import FUSED, logprob_head
from rlmcost.perf.megatron_flops import megatron_train_flops
from rlmcost.perf.moe_host import MOE_LAYER_HOST_S
from rlmcost.perf.selective_ac import SelectiveRecompute
from rlmcost.perf.step_pass import AttentionKernel, StepOptions
from rlmcost.perf.train_step import StepTime, train_step_time
from rlmcost.perf.triton_attention import FLASH_ATTENTION_2, pre_fa3_kernel_profile
from rlmcost.perf.validate_rl import RlRow, predict_rl_row
from rlmcost.specs import Workload, get_hardware


@dataclass(frozen=True)
class Row:
    """One published measurement and its prediction."""

    id: str
    source: str
    setup: str
    cite: str
    metric: str
    published: float
    predicted: float
    step: StepTime

    @property
    def error(self) -> float:
        return self.predicted / self.published - 1

    @property
    def interval(self) -> tuple[float, float]:
        """The prediction's interval in the row's metric: the step's own
        (:attr:`~rlmcost.perf.train_step.StepTime.interval_s`); a rate's ends are the rate over
        the longest and over the shortest step."""
        low_s, high_s = self.step.interval_s
        if self.metric == "step_time_s":
            return low_s, high_s
        work = self.predicted * self.step.step_s  # the rate x its step: the same for any step
        return work / high_s, work / low_s

    @property
    def inside_interval(self) -> bool:
        low, high = self.interval
        return low <= self.published <= high

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "source": self.source,
            "setup": self.setup,
            "metric": self.metric,
            "published": self.published,
            "predicted": self.predicted,
            "error": self.error,
            "predicted_interval": list(self.interval),
            "inside_interval": self.inside_interval,
            "predicted_step_time_s": self.step.step_s,
            "cite": self.cite,
        }


@dataclass(frozen=True)
class Validation:
    rows: tuple[Row, ...]
    sources: dict[str, dict[str, Any]]
    rl_rows: tuple[RlRow, ...] = ()

    def summary(self) -> dict[str, dict[str, float]]:
        """Training rows per source (and ``all``): rows, mean |error|, max |error|."""
        return _summary(self.rows)

    def rl_summary(self) -> dict[str, dict[str, float]]:
        """The same for the RL step-time rows."""
        return _summary(self.rl_rows)

    def to_json(self) -> dict[str, Any]:
        return {
            "rows": [r.to_json() for r in self.rows],
            "rl_rows": [r.to_json() for r in self.rl_rows],
            "summary": self.summary(),
            "rl_summary": self.rl_summary(),
            "sources": self.sources,
        }


def _summary(rows: tuple[Row, ...] | tuple[RlRow, ...]) -> dict[str, dict[str, float]]:
    """Rows, mean and max |error| per source and over ``all``; for training rows also the
    coverage, the share whose published figure lies inside the predicted interval."""
    groups: dict[str, list[Row | RlRow]] = {}
    for r in rows:
        groups.setdefault(r.source, []).append(r)
    if rows:
        groups["all"] = list(rows)
    out: dict[str, dict[str, float]] = {}
    for k, v in groups.items():
        errors = [abs(r.error) for r in v]
        out[k] = {"rows": len(v), "mean_abs_error": sum(errors) / len(errors),
                  "max_abs_error": max(errors)}  # fmt: skip
        inside = [r.inside_interval for r in v if isinstance(r, Row)]
        if inside:
            out[k]["coverage"] = sum(inside) / len(inside)
    return out


def gpt_arch(
    layers: int, hidden: int, heads: int, vocab: int, seq: int, tie_embeddings: bool = True
) -> Arch:
    """The GPT shape of the Megatron-LM papers: MHA, 4h GeLU FFN, LayerNorm, biases, learned
    positions, tied embeddings (Narayanan et al. 2021 §5; Korthikanti et al. 2022 §2);
    ``tie_embeddings`` False: a separate output layer (Megatron-LM's
    ``--untie-embeddings-and-output-weights``)."""
    if hidden % heads:
        raise SpecError(f"hidden={hidden} must be a multiple of heads={heads}")
    return Arch(
        name=f"gpt-{layers}x{hidden}", n_layers=layers, d_model=hidden, d_ff=4 * hidden,
        n_heads=heads, n_kv_heads=heads, head_dim=hidden // heads, vocab=vocab,
        ffn_kind=FfnKind.PLAIN, norm=NormKind.LAYERNORM, qkv_bias=True, out_bias=True,
        mlp_bias=True, tie_embeddings=tie_embeddings, n_positions=seq,
    )  # fmt: skip


def published_flops(metric: str, batch: int, seq: int, layers: int, hidden: int, vocab: int):
    """The source's own FLOP count of one step (module docstring)."""
    base = batch * seq * layers * hidden * hidden
    if metric == "tflops_per_gpu_narayanan2021":
        return 96 * base * (1 + seq / (6 * hidden) + vocab / (16 * layers * hidden))
    if metric in ("mfu_korthikanti2022", "tflops_per_gpu_korthikanti2022"):
        return 72 * base * (1 + seq / (6 * hidden) + vocab / (12 * layers * hidden))
    raise SpecError(f"unknown metric {metric!r} in the validation table")


def load_table() -> dict[str, Any]:
    """The shipped table (``rlmcost/perf/data/published.json``)."""
    text = resources.files("rlmcost.perf").joinpath("data", "published.json").read_text()
    return json.loads(text)


def _arch(m: dict[str, Any]) -> Arch:
    """A row's model: a built-in model by ``name`` (its Hugging Face config), a ``spec`` of
    the row's own (the fields of a ModelSpec, for a model that is not built in, its source
    in the spec), else the GPT shape of the Megatron-LM papers from ``layers``/``hidden``/
    ``heads``/``vocab`` (and ``tie_embeddings``, default true)."""
    if "spec" in m:
        from rlmcost.specs.model import ModelSpec

        return ModelSpec(**m["spec"]).arch()
    if "name" in m:
        from rlmcost.specs.registry import get_model

        return get_model(m["name"]).arch()
    tie = m.get("tie_embeddings", True)
    return gpt_arch(m["layers"], m["hidden"], m["heads"], m["vocab"], m["seq"], tie)


def _fp8_recipe(options: dict[str, Any]) -> Fp8Recipe | None:
    """A row's ``options.fp8``: Transformer Engine's FP8 recipe, None (absent) for bf16."""
    if "fp8" not in options:
        return None
    try:
        return Fp8Recipe(options["fp8"])
    except ValueError:
        raise SpecError(f"validation row option fp8 {options['fp8']!r:.40} is not one of: "
                        f"{', '.join(r.value for r in Fp8Recipe)}") from None


def predict_row(row: dict[str, Any]) -> Row:
    """Predict one row of the table."""
    m, lay = row["model"], row["layout"]
    arch = _arch(m)
    layout = Layout(
        dp=lay["dp"], tp=lay["tp"], pp=lay["pp"], sp=lay["sp"], ckpt=Checkpointing(lay["ckpt"]),
        micro_batch=lay["micro_batch"], schedule=PipelineSchedule(lay["schedule"]),
        virtual_stages=lay["virtual_stages"], ep=lay.get("ep", 1), cp=lay.get("cp", 1),
        zero=ZeroStage(lay.get("zero", "0")), etp=lay.get("etp"),
        pp_first_layers=lay.get("pp_first_layers"), pp_last_layers=lay.get("pp_last_layers"),
        pp_embedding_slot=lay.get("pp_embedding_slot", False),
        pp_loss_slot=lay.get("pp_loss_slot", False), pp_layout=lay.get("pp_layout"),
        moe_capacity_factor=lay.get("moe_capacity_factor"),
        moe_pad_to_capacity=lay.get("moe_pad_to_capacity", False),
    )  # fmt: skip
    dtype = Dtype(row["dtype"])
    workload = Workload(weight_dtype=dtype, activation_dtype=dtype, compute_dtype=dtype)
    o = row["options"]
    options = StepOptions(
        attention=AttentionKernel(o["attention"]),
        hidden_dropout=o["dropout"],  # Megatron-LM's --hidden-dropout and
        attention_dropout=o["dropout"],  # --attention-dropout, both 0.1 by default
        overlap_grad_reduce=o["overlap_grad_reduce"],
        fused_grad_accumulation=o["fused_grad_accumulation"],
        main_grad_bytes=o.get("main_grad_bytes", 4),
        grad_reduce_bytes=o.get("grad_reduce_bytes", 0),
        pp_grad_scatter_gather=o.get("pp_grad_scatter_gather", True),
        checkpoint_embeddings=o.get("checkpoint_embeddings", False),
        pp_serial_p2p=o.get("pp_serial_p2p", False),
        pp_overlap_p2p=o.get("pp_overlap_p2p", True),
        fsdp2_reduce_bytes=int(o.get("fsdp2_reduce_bytes", 0)),
        fsdp_backward_prefetch=BackwardPrefetch(o.get("fsdp_backward_prefetch", "pre")),
        fsdp1_post_backward=o.get("fsdp1_post_backward", False),
        hf_eager=o.get("hf_eager", False),
        torch_eager_block=o.get("torch_eager_block", False),
        train_metrics=int(o.get("train_metrics", 0)),
        composer_optimizer=o.get("composer_optimizer", False),
        tp_comm_overlap=o.get("tp_comm_overlap", False),
        megatron_loop=o.get("megatron_loop", False),
        logprob_head=logprob_head(o.get("logprob_head", FUSED.name)),
        selective=SelectiveRecompute(o.get("selective", SelectiveRecompute.ATTENTION_CORE)),
        recompute_early_stop=o.get("recompute_early_stop", False),
        recompute_modules=tuple(o.get("recompute_modules", ("core_attn",))),
        moe_rank_imbalance=float(o.get("moe_rank_imbalance", 1.0)),
        moe_act_clamp=o.get("moe_act_clamp", False),
        rope_unfused=o.get("rope_unfused", False),
        ep_dispatcher=EpDispatcher(o.get("ep_dispatcher", EpDispatcher.ALLTOALL)),
        moe_ep_overlap=o.get("moe_ep_overlap", False),  # Megatron-core's (perf.ep_overlap)
        moe_permute_fusion=o.get("moe_permute_fusion", True),
        fp8=_fp8_recipe(o),  # TE's FP8 Linear layers (perf.fp8_train); None: bf16
        mtp_layers=int(o.get("mtp_layers", 0)),  # Megatron-core's MTP depths (perf.mtp_pass)
        mtp_detach_heads=o.get("mtp_detach_heads", False),
        mtp_repeated=o.get("mtp_repeated", False),
        moe_layer_host_s=float(o.get("moe_layer_host_s", MOE_LAYER_HOST_S.value)),
    )
    check_ep_overlap(layout, options)
    hw = get_hardware(row["hardware"])
    kernel = o.get("fa2_kernel", FLASH_ATTENTION_2)  # the run's pre-FA3 attention kernel
    profile = pre_fa3_kernel_profile(default_profile(hw), kernel)
    step = train_step_time(arch, layout, row["batch"], m["seq"], hw, workload, options,
                           profile=profile)  # fmt: skip
    if row["metric"] == "step_time_s":
        predicted = step.step_s
    elif row["metric"] == "tokens_per_s_per_gpu":
        predicted = row["batch"] * m["seq"] / (step.step_s * layout.n_gpus)
    elif row["metric"] == "tflops_per_gpu_megatron":
        flops = megatron_train_flops(arch, row["batch"], m["seq"])
        predicted = flops / (step.step_s * layout.n_gpus) / 1e12
    else:
        flops = published_flops(
            row["metric"], row["batch"], m["seq"], m["layers"], m["hidden"], m["vocab"]
        )
        rate = flops / (step.step_s * layout.n_gpus)
        predicted = rate / 1e12 if row["metric"].startswith("tflops") else rate / hw.peak(dtype)
    return Row(
        row["id"], row["source"], row["setup"], row["cite"], row["metric"],
        float(row["published"]), predicted, step,
    )  # fmt: skip


def validate(source: str | None = None) -> Validation:
    """Every row of the table (or of one ``source``), predicted and compared."""
    table = load_table()
    rows = [r for r in table["rows"] if source is None or r["source"] == source]
    rl = [r for r in table.get("rl_rows", []) if source is None or r["source"] == source]
    if not rows and not rl:
        have = ", ".join(table["sources"])
        raise SpecError(f"no validation rows from source {source!r}; sources: {have}")
    return Validation(
        tuple(predict_row(r) for r in rows),
        table["sources"],
        tuple(predict_rl_row(r) for r in rl),
    )
