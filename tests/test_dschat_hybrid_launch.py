"""The Hybrid Engine's host time per layer (rlmcost/perf/deepspeed_chat.py
HYBRID_ENGINE_LAUNCH_S_PER_LAYER) and where it binds.

Reference: DeepSpeedExamples commit 3a77097a, applications/DeepSpeed-Chat/training/
step3_rlhf_finetuning/training_log_output/actor_opt-1.3b_critic_opt-350m_globalBatchSize64.log:
the Hybrid Engine's "Generate time" of OPT-1.3B (facebook/opt-1.3b: 24 layers), 4 sequences of
256 prompt + 256 answer tokens per generate(), ZeRO-2 (no gather), 476 steps: median 2.52 s,
fastest 2.36 s, 90th percentile 2.76 s.
"""

from __future__ import annotations

import pytest

from rlmcost.cli.validate import run_from_argv
from rlmcost.perf.deepspeed_chat import HYBRID_ENGINE_LAUNCH_S_PER_LAYER, hybrid_engine_launch_s
from rlmcost.perf.engine_host import STEP_OVERHEAD_S
from rlmcost.reports.rl_runs_rows import validate_rl_runs

OPT_1_3B_LAYERS = 24
FORWARDS_PER_GENERATE = 256  # max_length 512 from a 256-token prompt: 256 new tokens


@pytest.mark.parametrize(("end", "generate_s"), [("value", 2.52), ("low", 2.36), ("high", 2.76)])
def test_constant_is_the_logs_step_less_its_fixed_host_work(end, generate_s):
    per_layer = (generate_s / FORWARDS_PER_GENERATE - STEP_OVERHEAD_S) / OPT_1_3B_LAYERS
    assert HYBRID_ENGINE_LAUNCH_S_PER_LAYER.at(end) == pytest.approx(per_layer, rel=0.005)


def test_the_log_is_host_bound():
    # OPT-1.3B's fp16 weights (about 1.3e9 parameters, 2 bytes) read once per step at the
    # 32 GB V100's 900 GB/s datasheet bandwidth: under a third of the logged step
    gpu_step_s = 1.3e9 * 2 / 900e9
    assert gpu_step_s < (2.52 / FORWARDS_PER_GENERATE) / 3


@pytest.fixture(scope="module")
def dschat_rows():
    return validate_rl_runs(run_from_argv, "deepspeed-chat").rows


def test_hybrid_engine_decode_steps_last_at_least_the_layers_host_time(dschat_rows):
    # the OPT-30B 8 x A100-40GB row (facebook/opt-30b: 48 layers) runs small generate() calls
    # at inference TP 8, where the GPU's step is shorter than the host's: its generation lasts
    # at least 256 steps of 48 layers' host time and the step's fixed host work (2.94 s
    # before the term, on the GPU's time alone)
    row = next(r for r in dschat_rows if r.recipe.id.endswith("opt-30b-a100-40gb-8gpu-step3"))
    arch = row.run.models.actor.arch()
    assert int(arch.n_layers) == 48
    floor = FORWARDS_PER_GENERATE * (hybrid_engine_launch_s(arch) + STEP_OVERHEAD_S)
    assert dict(row.predicted_phases_s)["generation"] >= floor
