"""DeepSpeed-Chat's Hybrid Engine memory and forwards (rlmcost/frameworks/ds_hybrid.py,
rlmcost/placement/hybrid_workspace.py, rlmcost/placement/group_dschat.py).

Independent references: DeepSpeed csrc/transformer/inference/includes/inference_context.h
``GenWorkSpace`` at 9408a86 (2023-04-12), written out again here; deepspeed/runtime/
hybrid_engine.py (``max_out_tokens`` = ``min_out_tokens`` = 512, ``release_workspace`` only
under ``release_inference_cache``); DeepSpeedExamples e468799f step3_rlhf_finetuning/
rlhf_engine.py ``_init_ref`` (the reference is a ZeRO-3 model of its own); the Hugging Face
configs of facebook/opt-30b (48 layers, hidden 7168, 56 heads) and facebook/opt-66b (64 layers,
hidden 9216, 72 heads); the A100's dense fp16 peak (312 TFLOP/s, NVIDIA A100 datasheet).
"""

from __future__ import annotations

import pytest

from rlmcost.algorithms.kinds import Kind, Role
from rlmcost.cli.validate import run_from_argv
from rlmcost.frameworks.ds_hybrid import effective_head_size, inference_workspace


def _gen_workspace(layers, hidden, heads, batch, mp, elem, max_out=512):
    # inference_context.h GenWorkSpace (external_cache false, enough free memory: max_seq_len
    # = max_out_tokens), in floats
    head = hidden // heads
    padded = 32 if head <= 32 else (64 if head <= 64 else 128)
    eff = head if head > 128 else padded
    activation = 10 * (heads * eff) * batch
    temp = batch * (heads / mp) * max_out
    cache = layers * batch * ((heads * eff) / mp) * 2
    return (activation + temp + cache) * max_out * elem


@pytest.mark.parametrize(("layers", "hidden", "heads", "batch", "tp"), [
    (48, 7168, 56, 64, 2),  # facebook/opt-30b, 2 x 32 sequences
    (64, 9216, 72, 64, 8),  # facebook/opt-66b, 8 x 8
    (24, 2048, 32, 16, 1),  # facebook/opt-1.3b: head 64
])  # fmt: skip
def test_workspace_is_gen_workspace(layers, hidden, heads, batch, tp):
    ws = inference_workspace(layers, hidden, heads, batch, tp, 2)
    assert isinstance(ws.total, int)
    assert ws.total == pytest.approx(_gen_workspace(layers, hidden, heads, batch, tp, 2),
                                     rel=1e-12)  # fmt: skip
    # the K, V part is the cache of batch x 512 positions at the TP's share of the heads
    assert ws.kv_cache == layers * batch * 2 * hidden // tp * 512 * 2


def test_head_padding_and_bad_sizes():
    assert effective_head_size(96) == 128  # padded for flash attention
    assert effective_head_size(160) == 160
    with pytest.raises(ValueError):
        inference_workspace(0, 4096, 32, 4, 1, 2)


def _evaluation(suffix, per_gpu, settings=None):
    from rlmcost.evaluation.query import evaluate
    from rlmcost.reports.rl_runs import load_runs
    from rlmcost.reports.rl_runs_frameworks import recipe
    from rlmcost.reports.rl_runs_rows import build_run

    rec = next(r for r in load_runs()["runs"] if r["id"].endswith(suffix))
    rec = {**rec, "prompts_per_step": per_gpu * rec["gpus"],
           "framework_settings": {**rec["framework_settings"], **(settings or {})}}
    return evaluate(build_run(recipe(rec), run_from_argv)).evaluation


def _jobs(est):
    return {(j.task.role, j.task.kind): j for g in est.groups for j in g.jobs}


def test_the_workspace_stays_through_training():
    # OPT-66B on 8 x A100-80GB at inference TP 8 and 8 pairs per GPU: generate() calls of
    # 8 x 8 = 64 sequences; the workspace (not released: release_inference_cache off) sits
    # beside the update and every forward, outside PyTorch's allocator
    est = _evaluation("opt-66b-a100-80gb-8gpu-step3", 8)
    ws = _gen_workspace(64, 9216, 72, 64, 8, 2)
    jobs = _jobs(est)
    for key in ((Role.ACTOR, Kind.TRAIN), (Role.REFERENCE, Kind.FORWARD),
                (Role.CRITIC, Kind.TRAIN)):  # fmt: skip
        assert jobs[key].memory.engine == pytest.approx(ws, rel=1e-12), key
    gen = jobs[(Role.ACTOR, Kind.GENERATE)].memory
    # generating: the workspace's activation and score parts beside the KV cache it reads,
    # and run_66b.sh's --tp_gather_partition_size 4 whole fp16 layers gathered to slice the
    # TP shards (hybrid_engine.py generate); an OPT layer holds 12 h^2 weights and 13 h
    # biases and LayerNorm parameters, and run_66b.sh's rank-128 LoRA adapters (lora.py
    # LinearLayer_LoRA: r x (in + out) on q, k, v, out_proj and fc1, fc2 of 4 h), gathered
    # with them (hybrid_engine.py generate: layer_lora_params)
    adapters = 4 * 128 * (9216 + 9216) + 2 * 128 * (9216 + 4 * 9216)
    layers = 4 * (12 * 9216**2 + 13 * 9216 + adapters) * 2
    assert gen.engine + gen.kv_cache == pytest.approx(ws + layers, rel=1e-12)


def test_tp_one_gathers_no_layer_groups():
    # at inference TP 1 the pinned engine gathers the whole model (its weights term); no
    # group of whole layers besides: generation holds the workspace's parts only
    est = _evaluation("opt-6.7b-a100-80gb-8gpu-step3", 8)
    gen = _jobs(est)[(Role.ACTOR, Kind.GENERATE)].memory
    assert gen.engine + gen.kv_cache == pytest.approx(_gen_workspace(32, 4096, 32, 8, 1, 2),
                                                      rel=1e-12)  # fmt: skip


def test_reference_is_a_model_of_its_own_under_lora():
    # rlhf_engine.py _init_ref: deepspeed.initialize on a second copy of the actor, ZeRO-3
    # over the 8 GPUs: its fp16 shard (facebook/opt-30b decoder 48 x 12 x 7168^2 parameters)
    # is on every GPU beside the actor's, LoRA or not
    est = _evaluation("opt-30b-a100-80gb-8gpu-step3", 4, {"--inference_tp_size": 2})
    ref = _jobs(est)[(Role.REFERENCE, Kind.FORWARD)].memory
    shard = 2 * 48 * 12 * 7168**2 // 8
    assert ref.weights >= 2 * shard


def test_forwards_run_at_the_measured_rate():
    # generate_experience's forwards run the same Hugging Face modules under the same ZeRO-3
    # engines as the training steps Figure 6 measured: the reference forward of 8 x 8 pairs
    # of 512 tokens takes at least perf.py's forward FLOPs at 0.32 of the A100's peak
    est = _evaluation("opt-66b-a100-80gb-8gpu-step3", 8)
    h, layers, s, v = 9216, 64, 512, 50272
    flops = 24 * 64 * s * layers * h**2 * (1 + s / (6 * h) + v / (16 * layers * h))
    reference = next(p.time_s for p in est.phases if p.name == "reference")
    assert reference >= flops / (8 * 312e12 * 0.32) * (1 - 1e-9)


def test_generation_holds_no_adapters_of_its_own_at_tp():
    # hybrid_engine.py generate at 9408a86: at inference TP > 1 each layer's LoRA product is
    # added to its gathered base weights (_fuse_lora) before apply_tensor_parallelism slices
    # the shard, so generation's weights are the TP shards of the base model, the actor's
    # ZeRO-3 partition (with its adapters) and the other models' partitions; no TP share of
    # the adapters besides. The same run without LoRA holds the same weights but the
    # partitions of the adapters (fp16, over 8 ranks): the actor's (facebook/opt-66b, 64
    # layers of hidden 9216) and the critic's (rlmcost gives every trained model the
    # adapters; facebook/opt-350m, 24 layers of hidden 1024)
    def gen_weights(settings):
        est = _evaluation("opt-66b-a100-80gb-8gpu-step3", 4, settings)
        return _jobs(est)[(Role.ACTOR, Kind.GENERATE)].memory.weights

    def adapters(layers, h):
        return layers * (4 * 128 * (h + h) + 2 * 128 * (h + 4 * h))

    with_lora = gen_weights({})
    without = gen_weights({"--actor_lora_dim": 0})
    assert with_lora - without == adapters(64, 9216) * 2 // 8 + adapters(24, 1024) * 2 // 8


def test_hybrid_engine_gather_spreads_over_every_nic_of_a_node():
    # hybrid_engine.py generate gathers every layer over the ZeRO-3 group (all 64 ranks, 8
    # per node: GatheredParameters -> partition_parameters.py _allgather_params_coalesced,
    # one NCCL all_gather_into_tensor per parameter); NCCL's rings cross each node boundary
    # once per channel, one channel per NIC, so the node's 8 HDR NICs (200 Gb/s = 25 GB/s
    # each, A100 datasheet) carry the node-crossing bytes together: per rank 8 x 25 GB/s, at
    # rlmcost's inter-node bus efficiency (0.9), not one NIC's 25 GB/s. Same link as the
    # transfer's roofline bound (8 x 25 GB/s, no efficiency).
    est = _evaluation("opt-13b-a100-80gb-64gpu-step3", 16)
    (reshard,) = [t for g in est.groups for t in g.transfers if t.kind == "reshard"]
    # every rank receives the whole fp16 model but its own ZeRO-3 partition
    assert reshard.bytes_per_device > 2 * 12_000_000_000 * 63 // 64
    assert reshard.time_s == pytest.approx(reshard.bytes_per_device / 200e9, rel=1e-12)
    assert reshard.predicted_s == pytest.approx(reshard.bytes_per_device / (200e9 * 0.9),
                                                rel=1e-3)  # fmt: skip


@pytest.mark.parametrize(("zero", "generation_switches"), [(3, False), (2, True)])
def test_zero3_hybrid_engine_generates_from_an_emptied_cache(monkeypatch, zero,
                                                              generation_switches):
    # deepspeed/runtime/hybrid_engine.py at the DeepSpeed-Chat release (DeepSpeed 47f9f13bd,
    # 2023-04-11): eval() runs gc.collect(); empty_cache() when Z3_enabled, and generate()
    # again after gathering the inference-TP shards; train() empties nothing. So a ZeRO-3
    # actor's generation allocates as a process of one pattern (the allocator's 5 % slack),
    # its training and the forwards keep the switching 10 %; a ZeRO-2 actor's generation too
    from rlmcost.placement import group_jobs
    from rlmcost.placement.group_memory import GroupMemory

    seen: dict[tuple[Role, Kind], bool] = {}
    original = GroupMemory.switching_at

    def spy(self, task):
        seen[(task.role, task.kind)] = out = original(self, task)
        return out

    monkeypatch.setattr(GroupMemory, "switching_at", spy)
    monkeypatch.setattr(group_jobs, "recall", lambda setup, group, gpus, make: make())
    _evaluation("opt-13b-a100-80gb-64gpu-step3", 4,
                {"--actor_zero_stage": zero, "--critic_zero_stage": zero})
    assert seen[(Role.ACTOR, Kind.GENERATE)] is generation_switches
    assert seen[(Role.ACTOR, Kind.TRAIN)] is True
    assert seen[(Role.REFERENCE, Kind.FORWARD)] is True


def test_opt175b_fits_two_pairs_per_gpu_with_the_emptied_cache():
    # OPT-175B (OPT paper Table 1: 96 layers, hidden 12288) on 64 x A100-80GB at run_66b.sh's
    # settings: generation, whose TP shards, gathered group of 4 layers and workspace make the
    # peak, fits 2 pairs per GPU once its slack is the one-pattern 5 %; 4 per GPU still do not
    # fit (the blog: 175B's throughput "drops due to the limited memory to support larger
    # batch sizes")
    two = _evaluation("opt-175b-a100-80gb-64gpu-step3", 2)
    four = _evaluation("opt-175b-a100-80gb-64gpu-step3", 4)
    assert two.fits and two.shortfall_bytes == 0
    assert not four.fits and four.shortfall_bytes > 0
