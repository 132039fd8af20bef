"""DeepSpeed-Chat training steps at its blog's measured FLOP rate (rlmcost/perf/deepspeed_chat.py).

Independent references: DeepSpeedExamples applications/DeepSpeed-Chat/dschat/utils/perf.py
(``calculate_flops`` and ``print_throughput_step3``, written out again here in floats), the
DeepSpeed blog blogs/deepspeed-chat/README.md Figure 6 (blogs/assets/images/Throughputs-OPT.png,
training TFLOP/s per GPU), the A100's dense fp16 peak (312 TFLOP/s, NVIDIA A100 datasheet), and
the Hugging Face configs of facebook/opt-6.7b (32 layers, hidden 4096, vocab 50272) and
facebook/opt-30b (48 layers, hidden 7168).
"""

from __future__ import annotations

import statistics

import pytest

from rlmcost.arch import Arch
from rlmcost.cli.validate import run_from_argv
from rlmcost.errors import SpecError
from rlmcost.perf.deepspeed_chat import (
    DSCHAT_TRAIN_PEAK_FRACTION,
    dschat_forward_flops,
    dschat_train_floor_s,
    dschat_train_flops,
)
from rlmcost.reports.rl_runs_rows import validate_rl_runs
from rlmcost.specs import ModelSpec

A100_PEAK = 312e12  # NVIDIA A100 datasheet: 312 TFLOP/s dense fp16/bf16 tensor
FIGURE_6_TRAIN_TFLOPS = (62.9, 100.7, 97.3, 103.6, 110.4, 74.4)  # OPT-1.3B .. 175B


def _opt(layers: int, hidden: int) -> Arch:
    return ModelSpec(
        name=f"opt-{layers}x{hidden}", model_type="opt", n_layers=layers, d_model=hidden,
        d_ff=4 * hidden, n_heads=hidden // 128, n_kv_heads=hidden // 128, head_dim=128,
        vocab=50272, ffn_kind="plain",
        norm="layernorm", source="Hugging Face facebook/opt-* config.json",
    ).arch()  # fmt: skip


def _megatron_formula(f: float, b: int, s: int, layers: int, h: int, v: int) -> float:
    # dschat/utils/perf.py calculate_flops, as written there
    return (24 * f * b * s * layers * h**2) * (1.0 + s / (6.0 * h) + v / (16.0 * layers * h))


def test_flops_are_dschats_formula_as_an_exact_int():
    arch = _opt(32, 4096)  # facebook/opt-6.7b
    got = dschat_train_flops(arch, 512, 512, checkpointing=True)
    assert isinstance(got, int)
    assert got == pytest.approx(_megatron_formula(4, 512, 512, 32, 4096, 50272), rel=1e-12)
    no_ckpt = dschat_train_flops(arch, 512, 512, checkpointing=False)
    assert no_ckpt == pytest.approx(_megatron_formula(3, 512, 512, 32, 4096, 50272), rel=1e-12)


def test_lora_takes_off_the_frozen_weight_gradients_as_dschat_counts():
    arch = _opt(48, 7168)  # facebook/opt-30b, run_30b_lora.sh: --actor_lora_dim 128
    f = 4 - (1 - 128 * 2 / 7168)  # perf.py: factor -= (1 - k), k = lora_dim * 2 / hidden
    got = dschat_train_flops(arch, 8, 512, checkpointing=True, lora_rank=128)
    assert got == pytest.approx(_megatron_formula(f, 8, 512, 48, 7168, 50272), rel=1e-12)


def test_the_fraction_is_figure_6_over_the_a100_peak():
    fractions = [t * 1e12 / A100_PEAK for t in FIGURE_6_TRAIN_TFLOPS]
    assert round(statistics.median(fractions), 2) == DSCHAT_TRAIN_PEAK_FRACTION.value
    assert DSCHAT_TRAIN_PEAK_FRACTION.low == pytest.approx(min(fractions), abs=0.005)
    assert DSCHAT_TRAIN_PEAK_FRACTION.high == pytest.approx(max(fractions), abs=0.0005)


def test_floor_seconds_and_its_ends():
    flops = 10**15
    t = dschat_train_floor_s(flops, 8, A100_PEAK)
    assert t == pytest.approx(flops / (8 * A100_PEAK * 0.32))
    assert dschat_train_floor_s(flops, 8, A100_PEAK, "high") > t  # the slow end: the low rate
    assert dschat_train_floor_s(flops, 8, A100_PEAK, "low") < t
    with pytest.raises(SpecError):
        dschat_train_floor_s(flops, 0, A100_PEAK)
    with pytest.raises(SpecError):
        dschat_train_flops(_opt(32, 4096), 0, 512, True)


@pytest.fixture(scope="module")
def dschat_rows():
    return validate_rl_runs(run_from_argv, "deepspeed-chat").rows


def test_actor_updates_are_no_faster_than_the_measured_rate(dschat_rows):
    row = next(r for r in dschat_rows if r.recipe.id.endswith("opt-6.7b-a100-80gb-8gpu-step3"))
    pairs = row.run.workload.prompts * (row.run.workload.samples_per_prompt or 1)
    floor = _megatron_formula(4, pairs, 512, 32, 4096, 50272) / (8 * A100_PEAK * 0.32)
    assert dict(row.predicted_phases_s)["update actor"] >= floor * (1 - 1e-9)
    assert any("DSCHAT_TRAIN_PEAK_FRACTION" in c for c in row.recipe.choices)


def test_other_engines_keep_the_kernel_model():
    # verl trains with FSDP or Megatron, not DeepSpeed's Hugging Face stack (OpenRLHF's
    # DeepSpeed trainers get the rate: tests/test_openrlhf_benchmark.py)
    rows = validate_rl_runs(run_from_argv, "verl").rows
    for r in rows:
        assert not any("DSCHAT_TRAIN_PEAK_FRACTION" in c for c in r.recipe.choices)


def test_dschat_rows_median_error(dschat_rows):
    # before this rate the median |error| of the 11 DeepSpeed-Chat rows was 0.448 (issue 18);
    # the OPT-6.7B rows share Figure 6's configuration, the others (13B-175B, 64 GPUs,
    # A100-40GB) do not
    errors = sorted(abs(r.error) for r in dschat_rows if r.error is not None)
    print("DeepSpeed-Chat |errors|:", [round(e, 3) for e in errors])
    assert statistics.median(errors) < 0.25


def _evaluate_record(suffix, per_gpu, settings=None, flags=()):
    from rlmcost.evaluation.query import evaluate
    from rlmcost.reports.rl_runs import load_runs
    from rlmcost.reports.rl_runs_frameworks import recipe
    from rlmcost.reports.rl_runs_rows import _with, build_run

    rec = next(r for r in load_runs()["runs"] if r["id"].endswith(suffix))
    rec = {**rec, "prompts_per_step": per_gpu * rec["gpus"],
           "framework_settings": {**rec["framework_settings"], **(settings or {})}}
    return evaluate(build_run(_with(recipe(rec), list(flags)), run_from_argv))


def test_unpinned_hybrid_engine_gathers_every_decode_step():
    # OPT-30B on 8 x A100-40GB under DeepSpeed-Chat's --unpin_actor_parameters: its
    # hybrid_engine.py _zero3_forward gathers each layer in every forward, i.e. every one of
    # the 256 answer tokens (BenckmarkSetting.md) gathers the 7/8 of the decoder weights the
    # GPU does not hold over NVLink (A100 datasheet: 600 GB/s bidirectional, 300 GB/s each way)
    ev = _evaluate_record("opt-30b-a100-40gb-8gpu-step3", 8,
                          flags=["--engine", "ds-hybrid-unpinned"])  # fmt: skip
    assert str(ev.evaluation.deployment.engine.kind) == "ds-hybrid-unpinned"
    decoder_bytes = 2 * 48 * 12 * 7168**2  # facebook/opt-30b: 48 layers of 12 h^2, fp16
    per_step = decoder_bytes * 7 / 8 / 300e9
    generation = next(p.time_s for p in ev.evaluation.phases if p.name == "generation")
    assert generation >= 256 * per_step


def test_rows_keep_the_pinned_engine(dschat_rows):
    # every row fits with the whole actor gathered (the scripts' default pin_parameters) at
    # its script's or a larger inference TP (largest_fitting_options), before unpinning
    for r in dschat_rows:
        assert str(r.run.deployment.engine.kind) == "ds-hybrid", r.recipe.id


def test_hybrid_engine_generates_each_tp_groups_batch_in_one_call(dschat_rows):
    # hybrid_engine.py generate all-gathers the inputs over the inference TP group, so a TP
    # group generates tp x per_device_generation_batch_size sequences in one generate() call
    for r in dschat_rows:
        tp = int(r.recipe.record["framework_settings"].get("--inference_tp_size", 1))
        pairs = r.run.workload.prompts
        per_device = pairs // int(r.recipe.record["gpus"])
        assert r.run.deployment.engine.max_num_seqs == tp * per_device, r.recipe.id


def test_a_batch_whose_cache_does_not_fit_does_not_run_in_pieces():
    # OPT-30B (facebook/opt-30b, 48 layers, hidden 7168) gathered whole in fp16 on one
    # A100-80GB (80 GiB) with 128 sequences of 512 tokens: weights 2 x 48 x 12 x 7168^2 B =
    # 59.2 GB and K, V cache 2 x 48 x 7168 x 2 B x 512 x 128 = 45.1 GB, already over 85.9 GB;
    # DeepSpeed-Chat's generate() takes the whole batch, so the run does not fit (it is not cut
    # into smaller static batches)
    from rlmcost.evaluation.query import evaluate
    from rlmcost.reports.rl_runs import load_runs
    from rlmcost.reports.rl_runs_frameworks import recipe
    from rlmcost.reports.rl_runs_rows import build_run

    rec = next(r for r in load_runs()["runs"]
               if r["id"] == "deepspeed-chat-blog-opt-30b-a100-80gb-8gpu-step3")  # fmt: skip
    assert 2 * 48 * 12 * 7168**2 + 2 * 48 * 7168 * 2 * 512 * 128 > 80 * 2**30
    ev = evaluate(build_run(recipe({**rec, "prompts_per_step": 1024}), run_from_argv))
    assert ev.fits is False


# facebook/opt-66b: 64 decoder layers of hidden 9216, 12 h^2 weights each, fp16
OPT_66B_DECODER_BYTES = 2 * 64 * 12 * 9216**2  # 130.4 GB
IB_PER_GPU = 25e9  # one 200 Gb/s HDR InfiniBand NIC per A100 (DGX A100 / Azure NDv4: 8 per node)
IB_PER_NODE = 8 * IB_PER_GPU  # a collective over whole nodes crosses on all 8 NICs (NCCL rings)


def _row(rows, suffix):
    return next(r for r in rows if r.recipe.id.endswith(suffix))


def test_run_66b_rows_train_lora_as_the_script_does(dschat_rows):
    # run_66b.sh, run_30b_lora.sh and run_13b.sh (release commit e468799f and HEAD):
    # --actor_lora_dim 128 --actor_lora_module_name decoder.layers.; run_6.7b.sh has no LoRA
    for r in dschat_rows:
        script = r.recipe.record["framework_settings"]["script"]
        if script.endswith(("run_66b.sh", "run_30b_lora.sh", "run_13b.sh")):
            assert r.run.deployment.lora is not None and r.run.deployment.lora.rank == 128
        else:
            assert r.run.deployment.lora is None, r.recipe.id


def test_hybrid_engine_gathers_the_whole_model_on_every_rank(dschat_rows):
    # hybrid_engine.py generate (inference TP 8 of 64 ranks): GatheredParameters brings every
    # layer whole to every rank before apply_tensor_parallelism slices the rank's TP shard, so
    # each GPU receives the 63/64 of the model it does not hold; an all-gather over the
    # ZeRO-3 group (partition_parameters.py _allgather_params_coalesced), whose 64-rank rings
    # cross the 8 nodes on all 8 NICs of a node, like the training passes' gathers below
    row = _row(dschat_rows, "opt-66b-a100-80gb-64gpu-step3")
    sync = dict(row.predicted_phases_s)["weight sync"]
    assert sync >= OPT_66B_DECODER_BYTES * 63 / 64 / IB_PER_NODE
    assert sync < OPT_66B_DECODER_BYTES * 63 / 64 / IB_PER_GPU  # not one NIC's rate


def test_dschat_zero3_gathers_wait_in_line(dschat_rows):
    # ds_utils.py: stage3_max_live_parameters = stage3_prefetch_bucket_size = 3e7 elements,
    # below one OPT-66B FFN matrix (9216 x 36864 = 340M): no prefetch, every pass gathers the
    # model in line. One optimizer step of one micro-batch per GPU: forward, checkpointed
    # forward again, backward = 3 gathers; the reference forward 1. The 64-rank all-gather
    # crosses the 8 nodes on every NIC of a node (at most their line rate).
    row = _row(dschat_rows, "opt-66b-a100-80gb-64gpu-step3")
    gather = OPT_66B_DECODER_BYTES * 63 / 64 / IB_PER_NODE
    pairs = row.run.workload.prompts
    lora_f = 4 - (1 - 2 * 128 / 9216)  # perf.py's factor under LoRA and checkpointing
    compute = _megatron_formula(lora_f, pairs, 512, 64, 9216, 50272) / (64 * A100_PEAK * 0.32)
    phases = dict(row.predicted_phases_s)
    assert phases["update actor"] >= compute + 3 * gather
    assert phases["reference"] >= gather


def test_training_engines_forwards_gather_in_line(dschat_rows):
    # rlhf_engine.py (DeepSpeedExamples e468799f): the actor's and critic's engines take
    # get_train_ds_config (3e7-element live and prefetch limits: every gather exposed), the
    # reference's and reward's get_eval_ds_config (DeepSpeed's defaults: prefetched). The
    # actor's old-log-prob forward and the reference forward have the same FLOPs (the same
    # OPT-66B over the same pairs), so they differ by one exposed 64-rank gather of the model
    # (the decoder's bytes, plus the embeddings' 2 %)
    row = _row(dschat_rows, "opt-66b-a100-80gb-64gpu-step3")
    phases = dict(row.predicted_phases_s)
    gather = OPT_66B_DECODER_BYTES * 63 / 64 / IB_PER_NODE
    assert gather <= phases["old log-prob"] - phases["reference"] <= 1.02 * gather


# Figure 6 (blogs/assets/images/Throughputs-OPT.png) as perf.py print_throughput_step3 times it:
# generation = generate() alone (ppo_trainer.py generate_experience: generate_time stops before
# the actor, reference, reward and critic forwards), training = the train_rlhf loop alone
# (step 3 main.py: training_start after generate_experience; "we did not include, e.g., rw
# forward time etc"), DeepSpeedExamples 81a8521f (the first perf.py) through HEAD
FIGURE_6_GEN_TRAIN = {"6.7b": (32.9, 100.7), "30b": (48.2, 103.6), "66b": (29.3, 110.4)}
OPT_350M = (24, 1024)  # facebook/opt-350m config.json: the step-2 critic, trained without ckpt


def _figure_6_s_per_pair_gpu(layers, hidden, lora_rank, model):
    # seconds of generate() and of train_rlhf per pair and GPU at Figure 6's rates, FLOPs as
    # perf.py counts them (prompt 256 + answer 256; actor with gradient checkpointing)
    gen, train = FIGURE_6_GEN_TRAIN[model]
    actor = _opt(layers, hidden)
    flops_train = dschat_train_flops(actor, 1, 512, True, lora_rank) + dschat_train_flops(
        _opt(*OPT_350M), 1, 512, False)
    return dschat_forward_flops(actor, 1, 512) / (gen * 1e12), flops_train / (train * 1e12)


def test_figures_6_and_7_leave_less_for_the_forwards_than_the_measured_rate():
    # OPT-66B on 16 GPUs (Figure 6's point; LoRA 128 as run_66b.sh): 2.31 s of generate() and
    # 1.87 s of train_rlhf per pair and GPU; Figure 7 (blogs/assets/images/figure7.png) gives
    # 3.3 sequences/s on 2 nodes, 16 / 3.3 = 4.85 s per pair and GPU. The rest, 0.67 s, holds
    # the four forwards of generate_experience, which at DSCHAT_TRAIN_PEAK_FRACTION take
    # 1.37 s (OPT-66B twice, OPT-350M twice): the rate rlmcost assumes for the forwards is
    # slower than the blog's figures allow there (the rows' assumptions and deepspeed_chat.py
    # say so); when a sourced forward rate replaces it, revise them and this test
    gen, train = _figure_6_s_per_pair_gpu(64, 9216, 128, "66b")
    rest = 16 / 3.3 - gen - train
    forwards = 2 * (dschat_forward_flops(_opt(64, 9216), 1, 512)
                    + dschat_forward_flops(_opt(*OPT_350M), 1, 512))  # fmt: skip
    at_rate = dschat_train_floor_s(forwards, 1, A100_PEAK)
    assert (round(gen, 2), round(train, 2), round(rest, 2)) == (2.31, 1.87, 0.67)
    assert round(at_rate, 2) == 1.37
    assert 0 < rest < at_rate


def test_opt_6_7b_80gb_hours_are_faster_than_figure_6(dschat_rows):
    # Table 1: 4.1 hours on 8 x A100-80GB, 8 x 4.1 x 3600 / 264,292 = 0.447 s per pair and
    # GPU, below Figure 6's OPT-6.7B generate() and train_rlhf alone (0.210 + 0.285 s, no
    # LoRA: run_6.7b.sh), before the forwards; the 40 GB node's 5.7 hours (0.621 s) are above
    # them. The 80 GB row carries the doubt in its assumptions
    gen, train = _figure_6_s_per_pair_gpu(32, 4096, 0, "6.7b")
    assert (round(gen, 3), round(train, 3)) == (0.21, 0.285)
    assert 8 * 4.1 * 3600 / 264292 < gen + train < 8 * 5.7 * 3600 / 264292
    row = _row(dschat_rows, "opt-6.7b-a100-80gb-8gpu-step3")
    assert any(a.startswith("doubt (issue 18): Table 1's 4.1 hours") and "0.494 s" in a
               for a in row.recipe.record["assumptions"])  # fmt: skip


def test_opt30b_80gb_scripts_batch_cannot_give_the_published_hours(dschat_rows):
    # 18 h over ceil(264292 / 32) steps at run_30b_lora.sh's 4 pairs per GPU (inference TP 1)
    # is less time per step than physics allows at that batch: facebook/opt-30b decoder, 48
    # layers of 12 h^2, h 7168, fp16; A100-80GB datasheet HBM 2,039 GB/s and 312 TFLOP/s
    # dense fp16; 256 answer tokens, 32 pairs of 512 tokens
    params = 12 * 7168**2 * 48
    decode_s = 256 * 2 * params / 2.039e12
    compute_s = 5 * 2 * params * 32 * 512 / (8 * A100_PEAK)  # ref, old log-prob, LoRA update x3
    assert 18 * 3600 / -(-264292 // 32) < decode_s + compute_s
    # the row runs a configuration whose roofline bound is within its published step: a larger
    # inference TP, the blog's way of fitting a model in generation
    row = _row(dschat_rows, "opt-30b-a100-80gb-8gpu-step3")
    assert row.lower_bound_s <= row.published_s
    assert row.run.workload.prompts > 32
    assert any("inference TP" in c and "does not fit one GPU" in c for c in row.recipe.choices)


def test_a_configuration_the_published_time_rules_out_is_skipped():
    # largest_fitting's rule on a record whose first option's bound exceeds the published
    # step: OPT-30B on 8 x A100-80GB with 0.5 hours published (6.8 s per 256-pair step, below
    # the decode bound alone at every inference TP): every fitting option is ruled out, the
    # first that fits is kept and the choices say so
    from rlmcost.reports.rl_runs import load_runs
    from rlmcost.reports.rl_runs_frameworks import recipe
    from rlmcost.reports.rl_runs_rows import largest_fitting

    rec = next(r for r in load_runs()["runs"]
               if r["id"].endswith("opt-30b-a100-80gb-8gpu-step3"))  # fmt: skip
    row = largest_fitting(recipe({**rec, "published": 0.5}), run_from_argv)
    assert row.lower_bound_s > row.published_s
    assert any("every fitting option is; the first is kept" in c for c in row.recipe.choices)


def test_options_grow_the_inference_tp_before_offload():
    # the blog: "leverage tensor-parallelism (TP) when it does not [fit]. Using TP in the
    # generation phase instead of ZeRO to fit the model"; heads 56 (facebook/opt-30b) take 2,
    # 4 and 8 on a node of 8 GPUs
    from rlmcost.reports.rl_runs import load_runs
    from rlmcost.reports.rl_runs_rows import largest_fitting_options

    rec = next(r for r in load_runs()["runs"]
               if r["id"].endswith("opt-30b-a100-80gb-8gpu-step3"))  # fmt: skip
    options = largest_fitting_options(rec)
    assert [tp for tp, flags in options if not flags] == [1, 2, 4, 8]
    assert options[4] == (1, ["--offload", "optimizer,params,grads"])


def _epoch_s(rows, suffix):
    row = _row(rows, suffix)
    return -(-264292 // row.run.workload.prompts) * row.predicted_s


def test_eight_to_sixty_four_gpus_speedup_as_published(dschat_rows):
    # the blog's own 8- and 64-GPU epochs (264,292 pairs, BenckmarkSetting.md) give the
    # speedup of the 64-GPU step (its ZeRO-3 gathers across 8 nodes, the Hybrid Engine's
    # whole-model gather, inference TP 8) over the single node. OPT-13B (Table 1, 8x
    # A100-80GB: 9 hours; Table 2, 64x: 1.25 hours): rlmcost's epochs match it within 15 %
    predicted = _epoch_s(dschat_rows, "opt-13b-a100-80gb-8gpu-step3") / _epoch_s(
        dschat_rows, "opt-13b-a100-80gb-64gpu-step3"
    )
    print(f"OPT-13B 8 -> 64 GPUs: predicted {predicted:.2f}x, published {9.0 / 1.25:.2f}x")
    assert predicted == pytest.approx(9.0 / 1.25, rel=0.15)


def test_opt_30b_64gpu_hours_against_figure_6(dschat_rows):
    # Figure 6's OPT-30B point (32 GPUs) as generate() and train_rlhf per pair and GPU, plus
    # the four forwards at DSCHAT_TRAIN_PEAK_FRACTION: 2.19 s, against Table 2's 4 hours on 64
    # GPUs, 64 x 4 x 3600 / 264,292 = 3.49 s (1.59x); OPT-66B's same sum (Figure 6 at 16
    # GPUs) against Table 2's 7.5 hours on 64: 1.18x. The 30B row's doubt gives this arithmetic
    def with_forwards(layers, hidden, model):
        gen, train = _figure_6_s_per_pair_gpu(layers, hidden, 128, model)
        forwards = 2 * (dschat_forward_flops(_opt(layers, hidden), 1, 512)
                        + dschat_forward_flops(_opt(*OPT_350M), 1, 512))  # fmt: skip
        return gen + train + dschat_train_floor_s(forwards, 1, A100_PEAK)

    opt_30b = 64 * 4 * 3600 / 264292 / with_forwards(48, 7168, "30b")
    opt_66b = 64 * 7.5 * 3600 / 264292 / with_forwards(64, 9216, "66b")
    assert (round(opt_30b, 2), round(opt_66b, 2)) == (1.59, 1.18)
    row = _row(dschat_rows, "opt-30b-a100-80gb-64gpu-step3")
    assert any(a.startswith("doubt (issue 18)") and "(1.59x)" in a
               for a in row.recipe.record["assumptions"])  # fmt: skip


GENERATE = ("weight sync", "generation")
FORWARDS = ("old log-prob", "reference", "values", "reward")


def test_66b_split_against_figures_6_and_7_is_a_known_gap(dschat_rows):
    # the OPT-66B 8-GPU row (8 per GPU): rlmcost's generate() (the Hybrid Engine's gather and
    # generation) per pair and GPU is below Figure 6's 2.31 s and its four forwards above the
    # 0.67 s Figures 6 and 7 leave for them (test above; the row's 'generation (issue 18)'
    # assumption): the split is the open question, at a per-GPU batch the blog does not give;
    # when a change moves either, this fails and the note is to be revised
    row = _row(dschat_rows, "opt-66b-a100-80gb-8gpu-step3")
    phases = dict(row.predicted_phases_s)
    per = 8 / row.run.workload.prompts
    gen, _ = _figure_6_s_per_pair_gpu(64, 9216, 128, "66b")
    assert sum(phases[k] for k in GENERATE) * per < gen / 2
    assert sum(phases[k] for k in FORWARDS) * per > 2 * 0.67
    assert any(a.startswith("generation (issue 18)") and "generate() alone" in a
               for a in row.recipe.record["assumptions"])  # fmt: skip
