"""NeMo RL's per-sequence loss under sequence packing (rlmcost.perf.policy_worker).

Independent references: NVIDIA-NeMo/RL ``SequencePackingLossWrapper`` (nemo_rl/algorithms/
loss_functions.py at v0.3.0-v0.5.0, loss/wrapper.py at v0.6.0-v0.7.0) calls the loss once per
packed sequence on ``next_token_logits[:, slice]`` / ``.narrow``; PyTorch's ``slice_backward``
(aten/src/ATen/native/TensorShape.cpp) returns ``at::zeros(input_sizes)`` with the slice's
gradient copied in, and autograd sums the slices' gradients (InputBuffer ``accumulate``: read
both, write one); ``policy.sequence_packing.fuse_loss`` appeared at v0.6.0 (NeMo RL PR 1904,
default false). The figures below follow from those, not from rlmcost's code.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rlmcost.cli import app
from rlmcost.frameworks.nemo_rl import import_nemo_rl
from rlmcost.perf.efficiency import Device
from rlmcost.perf.policy_worker import (
    PACKED_LOSS_LAUNCHES_PER_SEQUENCE,
    packed_loss_grad_bytes,
    packed_loss_s,
)
from rlmcost.perf.rl_constants import EAGER_LAUNCH_S_PER_LAYER
from rlmcost.specs import get_hardware

CFG = Path(__file__).parent / "data" / "frameworks" / "nemo_rl_grpo_math.yaml"
LLAMA_VOCAB = 128_256  # meta-llama/Llama-3.1-8B config.json vocab_size


def test_each_slice_zero_fills_the_whole_fp32_gradient_and_the_rest_are_added() -> None:
    # k slices: k zero fills of T x V fp32 (4 B) and k - 1 adds (8 B read, 4 B written)
    t, v = 4096, LLAMA_VOCAB
    for k in (1, 2, 5):
        assert packed_loss_grad_bytes(k, t, v) == (4 * k + 12 * (k - 1)) * t * v
    assert packed_loss_grad_bytes(0, t, v) == 0


def test_the_launch_count_is_the_counted_kernels_and_syncs() -> None:
    # v0.3.0 ClippedPGLossFn + DistributedLogprob per sequence: 78 forward kernels,
    # 35 backward kernels, 19 device-to-host syncs (policy_worker's module docstring)
    assert PACKED_LOSS_LAUNCHES_PER_SEQUENCE == 78 + 35 + 19


def test_more_sequences_per_micro_batch_cost_more_than_linearly_in_bytes() -> None:
    dev = Device(get_hardware("h100-sxm"))
    launch = EAGER_LAUNCH_S_PER_LAYER.value / 15  # ~7 us a launch (the constant's 15 kernels)
    tokens = 64 * 4096
    few = packed_loss_s(dev, 64, 64, tokens, LLAMA_VOCAB)  # one sequence a micro-batch
    many = packed_loss_s(dev, 256, 64, tokens, LLAMA_VOCAB)  # four
    assert few > 64 * PACKED_LOSS_LAUNCHES_PER_SEQUENCE * launch
    # the same tokens: the gradient bytes grow as 4k - 3, 13 at k = 4 against 1 at k = 1
    assert many - 256 * PACKED_LOSS_LAUNCHES_PER_SEQUENCE * launch == pytest.approx(
        13 * (few - 64 * PACKED_LOSS_LAUNCHES_PER_SEQUENCE * launch))
    assert packed_loss_s(dev, 0, 64, tokens, LLAMA_VOCAB) == 0.0


def _update_actor_s(*flags: str) -> float:
    args = ["rlvr", "--framework", "nemo-rl", "--model", "llama-3.1-8b", "--gpus", "8",
            "--hardware", "h100-sxm", "--zero", "1", "--batch", "64", "--group", "32",
            "--max-tokens-per-gpu", "4096", *flags, "--json"]  # fmt: skip
    out = CliRunner().invoke(app, args)
    assert out.exit_code == 0, out.output
    phases = json.loads(out.stdout)["phases"]
    return next(p["time_s"] for p in phases if p["name"] == "update actor")


def test_packed_nemo_rl_training_pays_per_sequence_unless_the_loss_is_fused() -> None:
    per_seq = _update_actor_s("--packing")
    fused = _update_actor_s("--packing", "--fused-loss")
    unpacked = _update_actor_s("--no-packing")
    # 2048 sequences over 8 data-parallel ranks: 256 loss calls a rank at least
    launches = 256 * PACKED_LOSS_LAUNCHES_PER_SEQUENCE * EAGER_LAUNCH_S_PER_LAYER.value / 15
    assert per_seq - fused > launches
    assert per_seq - fused < launches + 1.0  # and the zero fills: well under a second here
    assert fused == pytest.approx(unpacked)


def test_the_importer_reads_fuse_loss_and_packing() -> None:
    flags = dict(import_nemo_rl(CFG, [], 200).flags)
    assert "--packing" in flags and "--fused-loss" not in flags
    fused = dict(import_nemo_rl(CFG, ["policy.sequence_packing.fuse_loss=true"], 200).flags)
    assert "--fused-loss" in fused
    off = dict(import_nemo_rl(CFG, ["policy.sequence_packing.enabled=false"], 200).flags)
    assert "--no-packing" in off and "--packing" not in off
