"""`rlmcost train`'s options for how the trainer allocates its memory (``Layout.loss_upcast``,
``loss_compiled``, ``pp_fsdp_gathered``, ``pp_stage_buffers``; ``op_sac`` follows
``--selective every-second-mm``), each priced in :mod:`rlmcost.parallel.framework_memory`."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from rlmcost.errors import SpecError
from rlmcost.parallel.layout import Checkpointing

LOSS_LOGITS = ("fp32", "upcast", "compiled")
"""The ``--loss-logits`` choices."""


def train_memory_options() -> dict[str, Any]:
    """The typer parameters (name -> (annotation, default))."""
    return {
        "loss_logits": (Annotated[str, typer.Option(
            help="What the loss holds of the last stage's logits per micro-batch: fp32 (one "
            "fp32 copy, a fused or chunked loss) or upcast (F.cross_entropy(logits.float()), "
            "torchtitan's loss at 9dec370: the fp32 log-softmax, its gradient and the input's "
            "fp32 gradient at the backward's start, 12 bytes a logit, + the bf16 logits under "
            "--pp; under --tp torchtitan's loss parallel, 16 bytes a logit) or compiled (that "
            "loss under torch.compile, torchtitan's with --training.compile since "
            "components/loss.py: the bf16 logits and their bf16 gradient, 4 bytes a logit); "
            "upcast and compiled also keep the head's whole input (the final norm's output, "
            "gathered under --sp); rlmcost.parallel.framework_memory).")], "fp32"),
        "pp_fsdp_gathered": (Annotated[bool, typer.Option(
            help="With --pp > 1 and --zero 3: FSDP2 inside torch's pipelining, torchtitan's "
            "default (reshard_after_forward False under PP, parallelize_llama.py @9dec370): "
            "each stage's parameters stay gathered across its micro-batches and its unsharded "
            "gradients accumulate in fp32 until the last backward. Memory only: the step "
            "time still prices ZeRO-3's gathers per micro-batch (default off: two layers "
            "gathered).")], False),
        "pp_stage_buffers": (Annotated[bool, typer.Option(
            help="With --pp > 1: what torch.distributed.pipelining's PipelineStage keeps per "
            "micro-batch (torch 2.5-2.6 stage.py; torchtitan's pipeline): every micro-batch's "
            "stage output until the next step (the last stage's logits), a receive buffer per "
            "micro-batch for the input and one for the output's gradient, and the input "
            "gradients of the backwards done; rlmcost.parallel.framework_memory "
            "(default off: the layers' saved activations only).")], False),
    }  # fmt: skip


def train_memory_fields(opts: dict[str, Any]) -> dict[str, Any]:
    """The ``Layout`` fields the options give: ``op_sac`` where ``--ckpt selective`` is
    torchtitan's (``--selective every-second-mm``)."""
    if opts["loss_logits"] not in LOSS_LOGITS:
        raise SpecError(f"--loss-logits {opts['loss_logits']!r} is not one of: "
                        f"{', '.join(LOSS_LOGITS)}")  # fmt: skip
    return {
        "op_sac": opts["ckpt"] is Checkpointing.SELECTIVE
        and opts["selective"] == "every-second-mm",
        "loss_upcast": opts["loss_logits"] == "upcast",
        "loss_compiled": opts["loss_logits"] == "compiled",
        "pp_fsdp_gathered": bool(opts["pp_fsdp_gathered"]),
        "pp_stage_buffers": bool(opts["pp_stage_buffers"]),
    }
