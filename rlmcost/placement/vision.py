"""The vision tower's share of an iteration of a vision-language model (``--image-tokens``).

Each sequence carries one image of ``workload.image_tokens`` tokens inside its prompt (one
image per sample, as the geometry and chart datasets of verl's and EasyR1's VL examples pose
it). The text tokens' costs are the decoder's (the image tokens count among the prompt
tokens S); the tower adds, per sequence and pass, its forward over the image's patches
(:meth:`~rlmcost.specs.model.ModelSpec.encoder_forward_flops`, exact against transformers'
tower under ``FlopCounterMode``):

* generation: one forward per sequence (vLLM encodes a request's image once, before its
  prefill; counted per sequence as the prefill is, though vLLM's encoder cache can serve the
  K samples of one prompt from one encoding);
* a forward (log-probs, reference, reward, values): one forward per sequence and prefix pass;
* training: the forward, and the backward (2 x the forward's matmuls, Table III's rule)
  unless the tower is frozen (``TrainLayout.freeze_vision_tower``; verl
  ``actor.freeze_vision_tower`` default False, ``verl/workers/config/actor.py``, applied in
  ``verl/workers/fsdp_workers.py``; EasyR1 ``verl/workers/actor/config.py``
  ``ModelConfig.freeze_vision_tower = False``), per epoch.

Memory: a training step whose tower trains keeps the tower's saved activations for its
backward on the first pipeline stage (the tower is there, whole on every TP rank, as its
parameters are: ``parallel.memory``): the faithful per-layer bytes of
:func:`~rlmcost.parallel.activations.saved_bytes_per_token_layer` on the tower's block shape
(width d_v, its heads, its MLP; no TP, no SP), per patch, for every block, under the step's
checkpointing, for the images of every micro-batch in flight (one per sequence), plus one
block rebuilt under full checkpointing. A frozen tower runs without gradients and saves none;
its one-block transients and a forward's are left out (below the decoder's).

Time: the tower's FLOPs over the job's GPUs (the busiest data rank's share), bounded at the
datasheet peak and predicted at the profile's sustained GEMM efficiency (its matmuls are
GEMMs of the patches by the tower's widths; attention scores are a small part at the
windows' sizes). A model without a tower adds nothing.
"""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction
from math import ceil
from typing import TYPE_CHECKING

from rlmcost.algorithms.kinds import Kind
from rlmcost.compiled.arch import arch_numbers
from rlmcost.compiled.memory import saved_bytes
from rlmcost.parallel.breakdown import DataShare
from rlmcost.parallel.layout import Checkpointing, Layout
from rlmcost.parallel.pipeline import in_flight_layer_microbatches
from rlmcost.perf.efficiency import Device
from rlmcost.placement.device_groups import Task
from rlmcost.placement.jobs import Job
from rlmcost.specs.model import ModelSpec
from rlmcost.specs.workload import Workload
from rlmcost.timing import FORWARD

if TYPE_CHECKING:
    from rlmcost.placement.group_cost import GroupModel


def tower_activation_bytes(
    spec: ModelSpec, workload: Workload, layout: Layout, share: DataShare, seq_len: int,
    frozen: bool,
) -> int:  # fmt: skip
    """Saved activation bytes of the tower on a first-stage rank of a training step (module
    docstring): 0 without image tokens, tower or gradients through it."""
    tokens = workload.image_tokens
    if not tokens or not spec.encoder_flops_per_patch or frozen:
        return 0
    h, d = spec.encoder_heads, spec.encoder_width
    block = arch_numbers({
        "name": f"{spec.name} vision", "n_layers": spec.encoder_layers, "d_model": d,
        "d_ff": spec.encoder_ffn_width, "n_heads": h, "n_kv_heads": h, "head_dim": d // h,
        "vocab": 1, "ffn_kind": "gated" if spec.encoder_ffn_gated else "plain",
        "norm": "rmsnorm" if spec.encoder_ffn_gated else "layernorm", "qkv_bias": True,
        "out_bias": True, "mlp_bias": True,
    })  # fmt: skip
    x = workload.activation_dtype.bytes
    images = ceil(Fraction(share.tokens_per_micro_batch, seq_len))
    patches = images * tokens * spec.encoder_patches_per_token
    in_flight = in_flight_layer_microbatches(
        layout.schedule, 0, layout.pp, share.micro_batches, layout.virtual_stages
    )
    kept = Fraction(saved_bytes(block, 1, False, layout.ckpt, False, x)) * spec.encoder_layers
    total = in_flight * patches * kept
    if layout.ckpt is Checkpointing.FULL:
        total += patches * Fraction(saved_bytes(block, 1, False, Checkpointing.NONE, False, x))
    return ceil(total)


def vision_flops(g: GroupModel, task: Task) -> int:
    """The tower's FLOPs in ``task`` (module docstring); 0 without image tokens or tower."""
    spec = g.s.specs[task.role]
    per_image = spec.encoder_forward_flops(g.s.workload.image_tokens)
    if not per_image or task.kind is Kind.VERIFY:
        return 0
    inv = task.invocation
    n = g._int(inv.sequences)
    if task.kind is Kind.GENERATE:
        return n * per_image
    if task.kind is Kind.FORWARD:
        return n * g._int(inv.prefixes) * per_image
    frozen = g.train_layout().freeze_vision_tower
    return g._int(inv.passes) * n * per_image * (1 if frozen else 3)


def with_vision(g: GroupModel, task: Task, job: Job) -> Job:
    """``job`` with the tower's FLOPs in its work and their seconds in its bound and
    prediction (module docstring)."""
    flops = vision_flops(g, task)
    if not flops:
        return job
    busy = flops * g.load_factor(task)
    extra = g.roofline(job.layout.n_gpus).phase(busy, 0, FORWARD)
    device = Device(g.s.hardware, g.s.workload.compute_dtype)
    predicted = float(busy) / (
        job.layout.n_gpus * device.peak_flops_per_s * device.defaults.gemm_efficiency
    )
    parts = {**job.predicted_parts_s, "vision_tower_s": predicted}
    return replace(
        job,
        work_flops=job.work_flops + flops,
        time=job.time + extra,
        predicted_s=job.predicted_s + max(predicted, extra.bound_s),
        predicted_ideal_s=job.predicted_ideal_s + max(predicted, extra.bound_s),
        predicted_parts_s=parts,
    )
