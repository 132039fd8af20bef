"""Numeric estimates (`rlmcost.estimate`): a case worked by hand, fit checks, the JSON schema,
the roofline time model, input resolution and one-line errors."""

import json
import math

import pytest

import rlmcost
from rlmcost import blocks as bl
from rlmcost.algorithms.kinds import Role, Stage
from rlmcost.algorithms.options import Options
from rlmcost.choices import Dtype, Head
from rlmcost.errors import SpecError
from rlmcost.parallel.layout import Layout, ZeroStage
from rlmcost.parallel.memory import Mode, memory_per_rank
from rlmcost.placement.inputs import IDEAL
from rlmcost.reports.estimate import compare, estimate
from rlmcost.specs import Workload, get_hardware, get_model
from rlmcost.timing import PEAK, PhaseTime, Roofline

G, A, TR = Stage.GENERATION, Stage.ASSESSMENT, Stage.TRAINING
PEAK_BF16 = 989_400_000_000_000  # h100-sxm dense bf16 FLOP/s (hardware.json, NVIDIA datasheet)
HBM_BW = 3_350_000_000_000  # h100-sxm HBM3 bytes/s (hardware.json)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    """A 2-layer Llama: d = 64, d_ff = 128, 4 heads of 16 (MHA), V = 100, untied head."""
    cfg = {
        "model_type": "llama",
        "hidden_size": 64,
        "intermediate_size": 128,
        "num_attention_heads": 4,
        "num_key_value_heads": 4,
        "num_hidden_layers": 2,
        "vocab_size": 100,
        "tie_word_embeddings": False,
    }
    path = tmp_path_factory.mktemp("tiny") / "config.json"
    path.write_text(json.dumps(cfg))
    return str(path)


def test_grpo_on_a_tiny_model_by_hand(tiny):
    # the paper's idealized iteration: every byte below is a Table III term
    e = estimate("grpo", tiny, batch=2, group=2, prompt_len=3, response_len=2, deployment=IDEAL)
    # Hand arithmetic (Table III conventions: 2 FLOPs per multiply-add, matrix products only,
    # full S x S attention in teacher-forced passes):
    #   projections per token: 2 x L x (4 d^2 attention + 3 d d_ff gated FFN)
    #                        = 2 x 2 x (16384 + 24576)                    = 163840
    #   LM head 2 d V = 2 x 64 x 100 = 12800; value head 2 d = 128
    #   attention per (query, key) pair: 4 h d_h x L = 4 x 64 x 2           = 512
    # Generation, B K = 4 rollouts of S = 3, T = 2:
    #   prefill 3 x 163840 + 512 x 3^2 + 12800 (head on the last token)  = 508928
    #   decode at c = 4: 163840 + 12800 + 512 x 4                         = 178688
    #   decode at c = 5: 163840 + 12800 + 512 x 5                         = 179200
    #   4 x (508928 + 178688 + 179200)                                     = 3467264
    assert e.stages[G].work_flops == 3_467_264
    # Assessment, 4 sequences of m = 5 tokens:
    #   reward (value head): 5 x (163840 + 128) + 512 x 25 = 832640, x 4 = 3330560
    #   reference (LM head): 5 x (163840 + 12800) + 512 x 25 = 896000, x 4 = 3584000
    assert e.stages[A].work_flops == 3_330_560 + 3_584_000
    # Training: the actor's forward + backward = 3 x 3584000 (Table IV caption)
    assert e.stages[TR].work_flops == 10_752_000
    assert e.work_flops == 21_133_824

    # Memory (bytes, bf16 weights and gradients, 12 B/param fp32 Adam, Rajbhandari 2020):
    #   |actor| = |ref| = V d (embedding) + 2 x (16384 + 24576 + 2 x 64) + 64 + V d = 95040
    #   |reward| (d x 1 value head) = 95040 - 6400 + 64 = 88704
    assert int(bl.params(get_model(tiny).arch())) == 95_040
    train = e.stages[TR].peak.memory
    assert train.weights == 2 * (95_040 + 95_040 + 88_704)  # all three models resident
    assert train.gradients == 2 * 95_040  # only the actor trains
    assert train.optimizer == 12 * 95_040
    own = memory_per_rank(get_model(tiny).arch(), Layout(), Mode.TRAIN, 4, 5)
    assert (train.activations, train.logits) == (own.activations, own.logits)

    # Roofline on one H100 (every phase of this tiny model is memory-bound):
    #   training step: 2 x 190080 (weights, fwd + bwd) + 2 x 190080 (gradients)
    #                  + 2 x 1140480 (Adam states read + written)        = 3041280 bytes
    #   generation: KV cache at the final context = 2 (K, V) x 2 layers x 64 x 2 bytes
    #               x 4 sequences x 5 tokens = 10240 bytes, 2048 per context position;
    #               prefill 190080 + 2048 x 3, decode steps 190080 + 2048 x 4 and x 5
    #   assessment: read the reward (177408 bytes) and reference (190080) weights once
    assert e.stages[TR].time.bound_s == pytest.approx(3_041_280 / HBM_BW, rel=1e-12)
    gen_bytes = (190_080 + 2_048 * 3) + (190_080 + 2_048 * 4) + (190_080 + 2_048 * 5)
    assert e.stages[G].time.bound_s == pytest.approx(gen_bytes / HBM_BW, rel=1e-12)
    assert e.stages[A].time.bound_s == pytest.approx((177_408 + 190_080) / HBM_BW, rel=1e-12)
    assert e.time_lower_bound_s == pytest.approx((gen_bytes + 367_488 + 3_041_280) / HBM_BW)
    assert e.stages[TR].time.compute_s == pytest.approx(10_752_000 / PEAK_BF16)
    assert sum(s.share for s in e.stages.values()) == pytest.approx(1.0)
    assert e.fits and e.shortfall_bytes == 0


def test_causal_counting_drops_the_masked_attention_half(tiny):
    kw = dict(batch=2, group=2, prompt_len=3, response_len=2)
    full, causal = estimate("grpo", tiny, **kw), estimate("grpo", tiny, counting="causal", **kw)
    # 512 FLOPs per query-key pair (4 h d_h x L, as above); 4 sequences.
    # prefill of S = 3: 3^2 = 9 pairs full, 3 x 4 / 2 = 6 causal; decode steps unchanged
    assert full.stages[G].work_flops - causal.stages[G].work_flops == 4 * 512 * (9 - 6)
    # teacher-forced m = 5: 25 pairs full, 15 causal; reward + reference forward
    assert full.stages[A].work_flops - causal.stages[A].work_flops == 2 * 4 * 512 * (25 - 15)
    # training: forward + backward = 3 x the forward's attention
    assert full.stages[TR].work_flops - causal.stages[TR].work_flops == 3 * 4 * 512 * 10
    assert causal.to_json()["attention_counting"] == "causal"


def test_ppo_70b_on_8_h100_does_not_fit_and_says_by_how_much():
    e = rlmcost.estimate(algorithm="ppo", model="70b", layout=Layout(tp=8), hardware="h100",
                         framework="none")  # every model resident on the GPUs
    assert e.gpus == 8 and e.hardware.name == "h100-sxm" and not e.fits
    train = e.stages[TR]
    # four 70.6 B-parameter models resident (actor, critic, reward, reference); Adam states of
    # the two trainable ones alone are 2 x 12 B/param x 70.6 B / 8 GPUs = 212 GB per device
    assert train.peak.memory.optimizer > 2 * 12 * 70_553_706_496 // 8 * 0.99
    assert train.memory_bytes_per_device > 80e9
    # against what an H100 gives programs: 81,079 MiB (torch.cuda total_memory), not 80 GB
    assert train.shortfall_bytes == train.memory_bytes_per_device - 81_079 * 2**20
    assert e.shortfall_bytes == max(s.shortfall_bytes for s in e.stages.values())


def test_json_schema_is_stable():
    out = estimate("grpo", "gpt-2").to_json()
    assert {"algorithm", "model", "hardware", "gpus", "stages", "iteration", "fits"} <= set(out)
    assert out["algorithm"] == "grpo" and out["model"] == "gpt-2" and out["gpus"] == 1
    assert set(out["stages"]) == {"generation", "assessment", "training"}
    for stage in out["stages"].values():
        assert {
            "work_flops",
            "depth",
            "memory_bytes_per_device",
            "memory_breakdown_bytes",
            "time_lower_bound_s",
        } <= set(stage)
        assert set(stage["memory_breakdown_bytes"]) == {
            "weights",
            "gradients",
            "optimizer",
            "activations",
            "kv_cache",
            "logits",
            "buffers",
            "engine",
            "overhead",
            "rollout",
        }
        assert isinstance(stage["work_flops"], int) and isinstance(stage["depth"], int)
        assert stage["memory_bytes_per_device"] == sum(stage["memory_breakdown_bytes"].values())
    assert set(out["iteration"]) >= {"work_flops", "time_lower_bound_s"}
    assert out["iteration"]["work_flops"] == sum(s["work_flops"] for s in out["stages"].values())
    # the prediction beside the bound, per stage and for the iteration
    assert set(out["iteration"]) >= {"time_s", "tokens_per_s_per_gpu", "mfu"}
    for stage in out["stages"].values():
        assert stage["time_s"] >= stage["time_lower_bound_s"]
    assert out["iteration"]["time_s"] >= out["iteration"]["time_lower_bound_s"]
    assert 0 < out["iteration"]["mfu"] < 1 and out["iteration"]["tokens_per_s_per_gpu"] > 0
    assert {p["name"] for p in out["phases"]} >= {"generation", "reference", "update actor"}
    assert out["fits"] is True
    json.dumps(out)  # plain JSON types only
    # DPO is offline: no generation stage in the loop
    assert set(estimate("dpo", "gpt-2").to_json()["stages"]) == {"assessment", "training"}


def test_defaults_are_stated_and_applied():
    e = estimate("grpo", "gpt-2")
    i = e.inputs()
    assert (i["B"], i["K"], i["S"], i["T"], i["E_ppo"], i["N_mini"]) == (64, 8, 1024, 1024, 1, 1)
    assert estimate("ppo", "gpt-2").inputs()["K"] == 1
    assert estimate("dpo", "gpt-2").inputs()["K"] is None
    assert e.hardware.name == "h100-sxm" and e.gpus == 1
    assert set(e.models.values()) == {"gpt-2"}  # reward and reference default to the actor
    assert "co-located" in e.to_json()["placement"]


def test_a_smaller_critic_changes_exactly_the_critic_terms():
    big = estimate("ppo", "8b")
    small = estimate("ppo", "8b", critic="gpt-2")
    assert small.models[Role.CRITIC] == "gpt-2"
    a8, a2 = get_model("8b").arch(), get_model("gpt-2").arch()
    seqs, m = 64, 2048
    critic_delta = 4 * (
        int(bl.work_forward(a8, seqs, m, head=Head.VALUE))
        - int(bl.work_forward(a2, seqs, m, head=Head.VALUE))
    )  # one Assessment forward + E_ppo = 1 Training pass (3 forwards)
    assert big.work_flops - small.work_flops == critic_delta
    assert big.stages[G].work_flops == small.stages[G].work_flops


def test_gpus_fill_data_parallelism_and_mismatches_are_errors():
    e = estimate("grpo", "8b", layout=Layout(tp=8), gpus=16)
    assert (e.layout.dp, e.gpus) == (2, 16)
    assert any("dp = gpus" in n for n in e.notes)
    with pytest.raises(SpecError, match="divide the 12 GPUs: give a multiple of 8 GPUs or --tp 1"):
        estimate("grpo", "8b", layout=Layout(tp=8), gpus=12)
    with pytest.raises(SpecError, match="tp=3 must divide"):
        estimate("grpo", "8b", layout=Layout(tp=3))


def test_zero_3_over_data_parallel_ranks_shrinks_the_model_states():
    plain = estimate("ppo", "8b", layout=Layout(dp=8))
    z3 = estimate("ppo", "8b", layout=Layout(dp=8, zero=ZeroStage.OS_G_P))
    assert z3.stages[TR].peak.memory.optimizer * 7 < plain.stages[TR].peak.memory.optimizer
    assert z3.work_flops == plain.work_flops


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (dict(algorithm="dpo", group=4), "samples no groups"),
        (dict(algorithm="grpo", critic="8b"), "grpo has no critic"),
        (dict(algorithm="dpo", reward="8b"), "dpo has no reward"),
        (dict(algorithm="simpo", ref="8b"), "simpo has no reference"),
        (dict(algorithm="ppo", prompt_len=-5), "prompt_len=-5 must be a positive integer"),
        (dict(algorithm="ppo", response_len=0), "response_len=0 must be a positive integer"),
        (dict(algorithm="ppo", options=Options(mini_batches=3)), "3 mini-batches must divide"),
        (dict(algorithm="prm", options=Options(prm_steps=7)), "7 PRM steps must divide"),
        (dict(algorithm="dapo", options=Options(oversample=1.01)), "not a positive whole"),
        (dict(algorithm="ppo", options=Options(oversample=2)), "applies to dapo"),
        (dict(algorithm="pop"), "unknown algorithm 'pop'; did you mean ppo"),
        (dict(algorithm="ppo", hardware="h1000"), "unknown hardware"),
        (dict(algorithm="ppo", workload=Workload(samples_per_prompt=1), group=None), None),
    ],
)
def test_invalid_combinations_are_one_line_errors(kwargs, message):
    if message is None:  # a valid call in the same table, so the table cannot pass vacuously
        assert estimate(model="gpt-2", **kwargs).fits
        return
    with pytest.raises(SpecError, match=message) as err:
        estimate(model="gpt-2", **kwargs)
    assert "\n" not in str(err.value)


def test_epochs_and_mini_batches():
    one = estimate("ppo", "gpt-2", options=Options(epochs=1))
    two = estimate("ppo", "gpt-2", options=Options(epochs=2, mini_batches=4))
    # E_ppo = 2 doubles the Training work; mini-batches only split it into sequential steps
    assert two.stages[TR].work_flops == 2 * one.stages[TR].work_flops
    assert two.stages[A].work_flops == one.stages[A].work_flops
    assert two.stages[TR].depth > 2 * one.stages[TR].depth
    # a step holds the activations of its 16 sequences' micro-batches, not of all 64
    assert two.stages[TR].peak.memory.activations <= one.stages[TR].peak.memory.activations


def test_compare_drops_what_does_not_apply():
    c = compare(["ppo", "grpo", "dpo"], model="gpt-2", group=4, critic="gpt-2")
    assert [e.algorithm.name for e in c.estimates] == ["ppo", "grpo", "dpo"]
    # the default deployment (NeMo RL) recomputes old log-probs for the online algorithms and
    # not for DPO, which has none: each takes its own (own_options), nothing to drop
    assert c.dropped == {"ppo": (), "grpo": ("critic",), "dpo": ("group", "critic")}
    from rlmcost.algorithms.options import Options

    given = compare(["ppo", "dpo"], model="gpt-2", options=Options(recompute_logprobs=True))
    assert given.dropped["dpo"] == ("recompute_logprobs",)  # given, and DPO cannot
    assert c.estimates[0].inputs()["K"] == 4 and c.estimates[1].inputs()["K"] == 4
    out = c.to_json()
    assert len(out["algorithms"]) == 3 and any("dpo" in n for n in out["notes"])


# --------------------------------------------------------------------------------------------
# The roofline
# --------------------------------------------------------------------------------------------


def test_roofline_takes_the_larger_side_per_phase():
    r = Roofline(get_hardware("h100"), 2, Dtype.BF16)
    # compute-bound: 2 PFLOP over 2 GPUs at 989.4 TFLOP/s each vs 1 GB at 3.35 TB/s
    p = r.phase(2e15, 1e9)
    assert p.bound_s == pytest.approx(2e15 / (2 * PEAK_BF16)) and p.bound == "compute"
    # two phases, one of each kind: the sum of maxima exceeds both sums alone
    both = r.steps([2e15, 0], [0, 33.5e9])
    assert both.bound_s == pytest.approx(2e15 / (2 * PEAK_BF16) + 0.01)
    assert both.bound_s > max(both.compute_s, both.memory_s)
    assert PhaseTime(1, 2, 2, 0).times(3) == PhaseTime(3, 6, 6, 0)
    assert r.efficiency is PEAK


def test_calibration_profile_scales_the_time(tmp_path):
    # a profile measured at half the datasheet peaks everywhere doubles every phase's bound
    h100 = get_hardware("h100")
    profile = {
        "schema": "rlmcost-calibration/1",
        "device": "h100-sxm",
        "device_name": "NVIDIA H100 80GB HBM3",
        "torch": "2.13.0",
        "dtype": "bf16",
        "threads": 1,
        "quick": True,
        "peak_flops_per_s": h100.peak(Dtype.BF16),
        "peak_bytes_per_s": h100.hbm_bandwidth_bytes_per_s,
        "peak_source": "datasheet",
        "compute_efficiency": {"gemm": [[1.0, 0.5], [1e18, 0.5]]},
        "bandwidth_efficiency": {"decode": [[1.0, 0.5], [1e15, 0.5]]},
    }
    path = tmp_path / "h100.json"
    path.write_text(json.dumps(profile))
    # the idealized iteration: no host-link transfers, which no profile scales
    plain = estimate("grpo", "gpt-2", deployment=IDEAL)
    measured = estimate("grpo", "gpt-2", calibration=str(path), deployment=IDEAL)
    assert measured.time_lower_bound_s == pytest.approx(2 * plain.time_lower_bound_s)
    assert measured.work_flops == plain.work_flops
    assert "h100.json" in measured.to_json()["calibration"]
    assert plain.to_json()["calibration"].startswith("datasheet peak")
    with pytest.raises(SpecError, match="not h200"):
        estimate("grpo", "gpt-2", hardware="h200", calibration=str(path))


def test_decode_steps_are_summed_exactly():
    # generation time = prefill + sum over the T steps of max(compute, memory): recompute it
    # here step by step from the Table III decode FLOPs and the bytes it reads
    e = estimate("grpo", "8b", group=16, response_len=64, prompt_len=128, deployment=IDEAL)
    inv = e.stages[G].invocations[0]
    arch, n = get_model("8b").arch(), 64 * 16
    own = memory_per_rank(arch, Layout(), Mode.GENERATE, n, 192)
    kv_per_pos = own.kv_cache / 192
    total = max(
        int(bl.work_prefill(arch, 128, n)) / PEAK_BF16, (own.weights + kv_per_pos * 128) / HBM_BW
    )
    for c in range(129, 193):
        flops = int(bl.work_decode_step(arch, c, n))
        total += max(flops / PEAK_BF16, (own.weights + kv_per_pos * c) / HBM_BW)
    assert math.isclose(inv.time.bound_s, total, rel_tol=1e-12)


def test_zero3_streams_gathered_weights_not_the_shard():
    # Under ZeRO-3 each device still multiplies by every (gathered) layer of its TP share, so
    # the memory-bound decode time must equal the unsharded one (same HBM traffic of weights).
    from rlmcost.parallel.layout import Layout, ZeroStage
    from rlmcost.reports.estimate import estimate

    base = dict(model="8b", batch=8, prompt_len=256, response_len=256, hardware="h100")
    z0 = estimate("grpo", layout=Layout(dp=8), **base)
    z3 = estimate("grpo", layout=Layout(dp=8, zero=ZeroStage.OS_G_P), **base)
    g0, g3 = z0.stages["generation"], z3.stages["generation"]
    assert g3.memory_bytes_per_device < g0.memory_bytes_per_device
    # the HBM streams the same gathered weights (memory side equal); the gathers themselves
    # cross the links every decode step, so ZeRO-3 generation is never faster
    assert g3.time.memory_s == pytest.approx(g0.time.memory_s, rel=1e-12)
    assert g3.time.bound_s > g0.time.bound_s


def test_each_phase_reads_its_own_kernel_table(tmp_path):
    # A profile whose "train" table says 25 % of peak (and every other table 100 %): only the
    # Training stage slows down, by the factor its compute-bound phases take (<= 4x).
    import json

    from rlmcost.choices import Dtype
    from rlmcost.specs import get_hardware

    h100 = get_hardware("h100")
    profile = {
        "schema": "rlmcost-calibration/1", "device": "h100-sxm",
        "device_name": "NVIDIA H100 80GB HBM3", "torch": "2.13.0", "dtype": "bf16",
        "threads": 1, "quick": True, "peak_flops_per_s": h100.peak(Dtype.BF16),
        "peak_bytes_per_s": h100.hbm_bandwidth_bytes_per_s, "peak_source": "datasheet",
        "compute_efficiency": {"gemm": [[1.0, 1.0]], "train": [[1.0, 0.25]]},
        "bandwidth_efficiency": {"decode": [[1.0, 1.0]], "copy": [[1.0, 1.0]]},
    }  # fmt: skip
    path = tmp_path / "h100.json"
    path.write_text(json.dumps(profile))
    base = dict(model="8b", batch=64, response_len=512)
    plain, measured = estimate("grpo", **base), estimate("grpo", calibration=str(path), **base)
    for stage in ("generation", "assessment"):
        assert measured.stages[stage].time.bound_s == pytest.approx(
            plain.stages[stage].time.bound_s
        )
    train_plain = plain.stages["training"].time
    train_measured = measured.stages["training"].time
    assert train_measured.compute_s == pytest.approx(4 * train_plain.compute_s)
    assert train_plain.bound_s < train_measured.bound_s <= 4 * train_plain.bound_s * (1 + 1e-12)


def test_context_beyond_the_model_is_noted():
    # GPT-2 has 1024 learned positions (no embedding beyond), Llama-2 a trained context of 4096
    assert any("learned positions" in n for n in estimate("ppo", "gpt-2").notes)
    assert not any("positions" in n for n in estimate("ppo", "gpt-2", prompt_len=512,
                                                      response_len=512).notes)  # fmt: skip
    long = estimate("grpo", "7b", response_len=32768)
    assert any("trained context of 4096" in n for n in long.notes)


def test_absurd_oversampling_is_an_error():
    with pytest.raises(SpecError, match="1..1000"):
        estimate("dapo", "gpt-2", options=Options(oversample=10**300))


def test_pipeline_stages_do_not_shorten_the_decode_memory_floor():
    # A decode step passes every pipeline stage in turn: per step, a device group streams the
    # whole TP shard of the weights and KV cache, however many stages hold it.
    one = estimate("ppo", "70b", layout=Layout(tp=8), deployment=IDEAL)
    four = estimate("ppo", "70b", layout=Layout(tp=8, pp=4), deployment=IDEAL)
    g1, g4 = one.stages["generation"].time, four.stages["generation"].time
    assert g4.memory_s == pytest.approx(g1.memory_s, rel=1e-12)
    # training stretches by the 1F1B bubble (p - 1) / m = 3 / 64 (64 micro-batches of 1)
    t1, t4 = one.stages["training"].time, four.stages["training"].time
    assert t4.bound_s == pytest.approx(t1.bound_s / 4 * (1 + 3 / 64), rel=1e-9)


def test_data_parallelism_wider_than_the_batch_buys_nothing():
    # two preference pairs (4 sequences) on 64 data-parallel replicas: 60 ranks idle, so the
    # busiest rank does what it does on 4 replicas
    four = estimate("dpo", "8b", batch=2, layout=Layout(dp=4, zero=ZeroStage.OS_G_P))
    wide = estimate("dpo", "8b", batch=2, layout=Layout(dp=64, zero=ZeroStage.OS_G_P))
    for stage in ("assessment", "training"):
        # the busiest rank runs one sequence on either: 64 * ceil(4/64) / 4 = 16 times the even
        # share on 16 times the GPUs
        assert wide.stages[stage].time.compute_s == pytest.approx(
            four.stages[stage].time.compute_s, rel=1e-9
        )
    # generation replicas without a sequence are an error that says how to mend it
    with pytest.raises(SpecError, match="cannot feed the 64 generation replicas"):
        estimate("ppo", "8b", batch=1, layout=Layout(dp=64, zero=ZeroStage.OS_G_P))
