"""Deployments (issue 9): the typed description, its memory terms, one evaluation behind every
query, documented framework setups, and invariants."""

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from rlmcost.cli import app
from rlmcost.deployment.overhead import COMMUNICATOR_BYTES
from rlmcost.deployment.spec import (
    Deployment,
    EngineSpec,
    LoraSpec,
    Offload,
    TrainLayout,
    load_deployment,
)
from rlmcost.deployment.terms import engine_slots, logits_peak_bytes, lora_params
from rlmcost.errors import SpecError
from rlmcost.parallel.layout import Checkpointing, Layout, ZeroStage
from rlmcost.placement.inputs import IDEAL
from rlmcost.reports.estimate import estimate
from rlmcost.reports.placement import placement_estimate

runner = CliRunner()
GIB = 2**30


def run(*args: str):
    return runner.invoke(app, list(args), env={"COLUMNS": "160"})


# -- the description ------------------------------------------------------------------------


def test_deployment_round_trips_through_json_and_yaml(tmp_path):
    d = Deployment(
        train=TrainLayout(tp=2, zero=ZeroStage.OS_G_P, ckpt=Checkpointing.FULL,
                          offload=("optimizer",), max_tokens_per_gpu=8192),
        engine=EngineSpec(tp=4, gpu_memory_utilization=0.6, sleep=False),
        lora=LoraSpec(rank=16, targets="q_proj,v_proj"),
        offload_idle=True,
    )  # fmt: skip
    for name in ("d.json", "d.yaml"):
        d.dump(tmp_path / name)
        assert load_deployment(tmp_path / name) == d
    assert d.lora.targets == ("q", "v")


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"engine": {"gpu_memory_utilization": 1.5}}, "must be in (0, 1]"),
        ({"engine": {"gpu_memory_utilization": 0}}, "must be in (0, 1]"),
        ({"train": {"offload": "optimizer,disk"}}, "unknown offload 'disk'"),
        ({"lora": {"rank": 8, "targets": ["mlp"]}}, "unknown LoRA target 'mlp'"),
        ({"lora": {"rank": 8, "targets": []}}, "name no projection"),  # adapters on nothing
        ({"lora": {"rank": 8, "targets": ",,"}}, "name no projection"),
        ({"tp": 2}, "'tp' is not a field; did you mean 'engine.tp', 'forward.tp' or 'train.tp'?"),
        ({"train": {"zeroo": 3}}, "field 'train.zeroo' is not a field; did you mean 'zero'?"),
        ({"engine": {"xyzzy": 1}}, "the fields here: block_size, context_length,"),
        ({"ideal": True, "lora": {"rank": 8}}, "ideal=True"),
    ],
)
def test_bad_deployment_files_are_one_line_errors(tmp_path, data, message):
    path = tmp_path / "d.json"
    path.write_text(json.dumps(data))
    with pytest.raises(SpecError) as err:
        load_deployment(path)
    assert message in str(err.value) and "\n" not in str(err.value)


def test_yaml_tags_never_run_code(tmp_path):
    path = tmp_path / "evil.yaml"
    path.write_text("!!python/object/apply:os.system ['touch pwned']\n")
    with pytest.raises(SpecError, match="neither JSON nor safe YAML"):
        load_deployment(path)
    assert not (tmp_path / "pwned").exists()


# -- the memory terms -----------------------------------------------------------------------


def test_logits_peak_by_hand():
    # forward: bf16 logits (2 B) + fp32 upcast (4 B) + fp32 log-softmax (4 B) per element;
    # training adds the fp32 gradient of each (4 + 4 B) and the bf16 gradient (2 B): 16 B
    from rlmcost.choices import Dtype
    from rlmcost.deployment.spec import LogitsMode

    v = 151_936  # Qwen2.5 vocabulary
    args = (Dtype.BF16, Dtype.FP32, 1024)
    assert logits_peak_bytes(8192, v, False, LogitsMode.MATERIALIZED, *args) == 8192 * v * 10
    assert logits_peak_bytes(8192, v, True, LogitsMode.MATERIALIZED, *args) == 8192 * v * 16
    # fused: one 1024-token chunk, fp32 logits and their gradient
    assert logits_peak_bytes(8192, v, True, LogitsMode.FUSED, *args) == 1024 * v * 8


def test_lora_parameters_equal_the_adapted_linears_of_a_transformers_model():
    # independent count: r (in + out) over every nn.Linear PEFT's all-linear would adapt in
    # transformers' LlamaForCausalLM (built on meta, no download); lm_head is excluded
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    cfg = transformers.LlamaConfig(
        hidden_size=256, intermediate_size=688, num_hidden_layers=3, num_attention_heads=8,
        num_key_value_heads=2, vocab_size=1000,
    )  # fmt: skip
    with torch.device("meta"):
        model = transformers.LlamaForCausalLM(cfg)
    rank = 8
    expected = sum(
        rank * (m.in_features + m.out_features)
        for name, m in model.named_modules()
        if isinstance(m, torch.nn.Linear) and "lm_head" not in name
    )
    ours = lora_params(256, 256, 64, 688, 3, 3, LoraSpec(rank=rank))
    assert ours == expected
    # PEFT prints "trainable params: 20,971,520" for Llama-3-8B, r = 8, all-linear targets
    assert lora_params(4096, 4096, 1024, 14336, 3, 32, LoraSpec(rank=8)) == 20_971_520


def test_engine_slots_by_hand():
    # 10 GiB pool, 1 GiB of KV per 4096-token sequence (256 blocks of 16): 10 sequences
    assert engine_slots(10 * GIB, GIB, 4096, 16, 256, 64) == 10
    # a partial block costs a whole block: 4100 tokens take 257 blocks
    per_seq = -(-GIB * 257 * 16 // 4100)
    assert engine_slots(10 * GIB, GIB, 4100, 16, 256, 64) == 10 * GIB // per_seq
    assert engine_slots(10 * GIB, GIB, 4096, 16, 4, 64) == 4  # max_num_seqs caps it
    assert engine_slots(GIB // 2, GIB, 4096, 16, 256, 64) == 0  # not one sequence


def test_engine_kv_pool_is_the_reservation_minus_weights_and_workspace():
    # a dedicated rollout group: 0.9 of the device reserved; the pool is what is left
    e = placement_estimate(
        "grpo", "8b", groups="rollout=8,actor+reference+reward=8", gpus=16, tp=2,
        deployment=Deployment(), batch=64, group=8,
    )  # fmt: skip
    rollout = next(g for g in e.groups if g.name == "rollout")
    (gen,) = rollout.jobs
    capacity = e.groups[0].hbm_bytes
    reserved = int(0.9 * capacity)
    # weights + workspace + KV pool = the reservation less vLLM's non-torch memory (a TP-2
    # replica's communicators, counted in the device's overhead: rlmcost.deployment.vllm_profile)
    assert gen.own.total == reserved - COMMUNICATOR_BYTES
    assert gen.own.kv_cache == (reserved - gen.own.weights - gen.own.activations
                                - gen.own.logits - COMMUNICATOR_BYTES)  # fmt: skip
    # Llama-3.1-8B KV per token per rank at TP 2: 2 (K, V) x 32 layers x 4 KV heads x 128 x
    # 2 B = 65,536 B; a 2048-token sequence (128 blocks of 16) holds 128 MiB; each of the 4
    # replicas owns 512 / 4 = 128 sequences, and vLLM's max_num_seqs is 256
    per_seq = 65_536 * 2048
    assert gen.timeline.slots == min(256, 128, gen.own.kv_cache // per_seq)


# -- one evaluation behind every query --------------------------------------------------------


@pytest.mark.parametrize("dep", [IDEAL, Deployment()])
def test_ppo_and_the_baseline_placement_agree_on_every_number(dep):
    kw = dict(batch=16, prompt_len=512, response_len=512, deployment=dep)
    lay = Layout(dp=8, zero=ZeroStage.OS_G_P)
    e = estimate("ppo", "8b", layout=lay, **kw)
    p = placement_estimate("ppo", "8b", placement="baseline", layout=lay, gpus=8, **kw)
    (group,) = p.groups
    jobs = {j.task.invocation.describe(): j for j in group.jobs}
    for stage in e.stages.values():
        for inv in stage.invocations:
            if inv.model == "-":
                continue
            job = jobs[inv.invocation.describe()]
            assert inv.memory == job.memory and inv.work_flops == job.work_flops
            assert inv.time == job.time and inv.depth == job.depth
    assert e.time_lower_bound_s == pytest.approx(p.iteration_time_lower_bound_s, rel=1e-12)
    assert e.fits == p.fits and e.work_flops == p.work_flops


def test_cli_ppo_and_placement_baseline_print_the_same_iteration():
    # a run that fits (an unfit query's baseline is shown at the layout the search finds)
    args = ["ppo", "-m", "8b", "--gpus", "8", "--zero", "3", "-T", "512", "--json"]
    a = json.loads(run(*args).stdout)
    b = json.loads(run(*args, "--placement", "baseline").stdout)
    # one JSON layout whatever the options: the same keys, the same numbers
    assert a["iteration"] == b["iteration"] and a["stages"] == b["stages"]
    # the deployment records the placement it was given (none, or baseline): the rest is one
    assert b["deployment"]["placement"] == "baseline" and a["deployment"]["placement"] is None
    assert {**a["deployment"], "placement": 0} == {**b["deployment"], "placement": 0}
    assert set(a) == set(b)


# -- documented setups ----------------------------------------------------------------------


def test_openrlhf_70b_on_32_a100_fits_as_documented():
    # OpenRLHF README, "PPO with Ray and vLLM", Llama-3-70B on 32 x A100-80GB: vLLM engines
    # with TP 4 on 16 GPUs, actor + reference on 8, critic + reward on 8; --zero_stage 3
    # --adam_offload --gradient_checkpointing (the setup runs)
    r = run(
        "ppo", "-m", "70b", "-H", "a100-80gb", "--gpus", "32", "--zero", "3",
        "--groups", "rollout=16,actor+reference=8,critic+reward=8", "--rollout-tp", "4",
        "--offload", "optimizer", "--ckpt", "full", "--param-dtype", "bf16", "--json",
    )  # fmt: skip
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert out["fits"] is True and out["host_memory_bytes_per_node"] > 0
    # without Adam offload the 70B actor's fp32 states (12 B/param / 8 ranks = 106 GB) OOM
    r = run(
        "ppo", "-m", "70b", "-H", "a100-80gb", "--gpus", "32", "--zero", "3",
        "--groups", "rollout=16,actor+reference=8,critic+reward=8", "--rollout-tp", "4",
        "--ckpt", "full", "--json",
    )  # fmt: skip
    assert json.loads(r.stdout)["fits"] is False


def test_full_fine_tuning_70b_on_one_node_does_not_fit_and_names_what_would():
    # 16 B/param mixed-precision Adam of a 70B actor: 1.13 TB over 8 x 80 GB cannot fit
    # without offload (ZeRO paper, Rajbhandari et al. 2020, §3.1: 16 Psi bytes)
    r = run("grpo", "-m", "70b", "--gpus", "8", "--zero", "3", "--ckpt", "full")
    assert r.exit_code == 0
    assert "DOES NOT FIT" in r.stdout and "largest term" in r.stdout
    for line in r.stdout.splitlines():
        if line.strip().startswith("fits with"):
            flags = line.split("fits with", 1)[1].split(":")[0].split()
            # every suggestion is a real command that fits when run
            again = run("grpo", "-m", "70b", "--gpus", "8", "--zero", "3", "--ckpt", "full",
                        *flags, "--json")  # fmt: skip
            assert again.exit_code == 0, again.output
            assert json.loads(again.stdout)["fits"] is True


# -- invariants -----------------------------------------------------------------------------


def _train_peak(e) -> int:
    return e.stages["training"].memory_bytes_per_device


@settings(max_examples=8, deadline=None)
@given(
    offload=st.sets(st.sampled_from([Offload.OPTIMIZER, Offload.GRADS, Offload.PARAMS]),
                    min_size=1),  # fmt: skip
)
def test_offload_never_raises_device_memory_and_moves_what_it_frees(offload):
    lay = Layout(dp=4, zero=ZeroStage.OS_G_P)
    base = Deployment(train=TrainLayout(zero=ZeroStage.OS_G_P))
    moved = base.model_copy(
        update={"train": base.train.model_copy(update={"offload": tuple(offload)})}
    )
    kw = dict(batch=8, prompt_len=128, response_len=128, layout=lay)
    a = estimate("grpo", "gpt-2", deployment=base, **kw)
    b = estimate("grpo", "gpt-2", deployment=moved, **kw)
    before = a.stages["training"].peak.memory
    after = b.stages["training"].peak.memory
    assert _train_peak(b) <= _train_peak(a)
    freed = sum(getattr(before, k) - getattr(after, k) for k in ("weights", "gradients",
                                                                 "optimizer"))  # fmt: skip
    host = b.stages["training"].host_bytes_per_device - a.stages["training"].host_bytes_per_device
    assert host == freed > 0


@settings(max_examples=8, deadline=None)
@given(lo=st.floats(0.3, 0.95), step=st.floats(0.0, 0.05))
def test_a_larger_engine_fraction_never_shrinks_the_device_view(lo, step):
    def gen_view(f: float) -> int:
        d = Deployment(engine=EngineSpec(gpu_memory_utilization=min(1.0, f)))
        e = estimate("grpo", "gpt-2", batch=8, layout=Layout(dp=2), deployment=d)
        return e.stages["generation"].memory_bytes_per_device

    assert gen_view(lo + step) >= gen_view(lo)


@settings(max_examples=6, deadline=None)
@given(mb=st.integers(1, 4), budget_sequences=st.integers(1, 4))
def test_smaller_micro_batches_or_token_budgets_never_raise_activations(mb, budget_sequences):
    def act(**train) -> int:
        d = Deployment(train=TrainLayout(**train))
        e = estimate("grpo", "gpt-2", batch=4, group=2, prompt_len=128, response_len=128,
                     layout=Layout(micro_batch=train.get("micro_batch", 1)), deployment=d)
        return e.stages["training"].peak.memory.activations

    assert act(micro_batch=mb) <= act(micro_batch=mb + 1)
    per = 256  # S + T
    assert act(max_tokens_per_gpu=per * budget_sequences) <= act(
        max_tokens_per_gpu=per * (budget_sequences + 1)
    )


# -- bad values on the command line ----------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--gpu-memory-utilization", "1.5"], "must be in (0, 1]"),
        (["--offload", "optimizer,disk"], "unknown offload 'disk'"),
        (["--offload", "params"], "needs ZeRO-3"),
        (["--rollout-tp", "3"], "not a multiple of tp*pp*cp = 3"),
        (["--rollout-tp", "3"], "or a smaller --rollout-tp/--rollout-pp"),  # the engine's knob
        (["--gpus", "12", "--rollout-tp", "12"], "tp=12 must divide"),
        (["--framework", "verl", "--max-tokens-per-gpu", "100"], "which verl refuses"),
        (["--lora-targets", "q"], "needs --lora-rank"),
        (["--lora-rank", "8", "--lora-targets", ",,"], "name no projection"),
        (["--deployment", "/nonexistent.yaml"], "cannot read deployment file"),
    ],
)
def test_bad_deployment_flags_are_one_line_errors(args, message):
    gpus = [] if "--gpus" in args else ["--gpus", "8"]
    framework = [] if "--framework" in args else ["--framework", "none"]  # one --framework
    r = run("grpo", "-m", "8b", *framework, *gpus, *args)
    assert r.exit_code == 2, r.output
    assert message in r.output and "Traceback" not in r.output
    assert len(r.output.strip().splitlines()) == 1


def test_lora_shares_the_reference_and_trains_few_states():
    full = estimate("grpo", "8b", layout=Layout(dp=8, zero=ZeroStage.OS_G_P), framework="none")
    lora = estimate("grpo", "8b", layout=Layout(dp=8, zero=ZeroStage.OS_G_P),
                    deployment=Deployment(lora=LoraSpec(rank=64)))  # fmt: skip
    t_full, t_lora = full.stages["training"].peak.memory, lora.stages["training"].peak.memory
    # adapters only: r = 64 on all linears of Llama-3.1-8B is 167.8M parameters, 2.1% of 8.03B
    assert t_lora.optimizer < t_full.optimizer / 40
    ref = next(i for i in lora.stages["assessment"].invocations if str(i.invocation.role) ==
               "reference")  # fmt: skip
    assert ref.memory.weights < next(
        i for i in full.stages["assessment"].invocations if str(i.invocation.role) == "reference"
    ).memory.weights


def test_groups_carry_their_own_layouts():
    # the OpenRLHF setup written with per-group layouts: the rollout engines at TP 4
    base = ["ppo", "-m", "70b", "-H", "a100-80gb", "--gpus", "32", "--zero", "3",
            "--offload", "optimizer", "--ckpt", "full", "--param-dtype", "bf16", "--json",
            "--groups"]  # fmt: skip
    out = json.loads(run(*base, "rollout=16[tp=4],actor+reference=8,critic+reward=8").stdout)
    layouts = {g["name"]: g["jobs"][-1]["layout"] for g in out["placement_detail"]["groups"]}
    assert layouts["rollout"] == {"dp": 4, "tp": 4, "pp": 1, "zero": "0"}
    assert out["fits"] is True
    # a group's own setting overrides the run's: the critic group without checkpointing OOMs
    out = json.loads(
        run(*base, "rollout=16[tp=4],actor+reference=8,critic+reward=8[ckpt=none]").stdout
    )
    fits = {g["name"]: g["fits"] for g in out["placement_detail"]["groups"]}
    assert fits == {"rollout": True, "actor+reference": True, "critic+reward": False}
    r = run(*base, "rollout=16[tp=four],actor+reference=8,critic+reward=8")
    assert r.exit_code == 2 and "bad value" in r.output


def test_generation_tp_above_the_kv_heads_replicates_them():
    # Llama-3.1-70B: 64 query heads, 8 KV heads. Training TP 16 is Megatron-invalid (and says
    # why); an engine at TP 16 holds one KV head per rank, as vLLM does
    r = run("ppo", "-m", "70b", "--tp", "16", "--gpus", "16")
    assert r.exit_code == 2 and "--rollout-tp 16" in r.output
    from rlmcost.algorithms.options import Options

    e = placement_estimate(
        "grpo", "70b", groups="rollout=16[tp=16],actor+reference=16", gpus=32,
        layout=Layout(tp=8, zero=ZeroStage.OS_G_P), options=Options(rule_reward=True),
    )  # fmt: skip
    (gen,) = next(g for g in e.groups if g.name == "rollout").jobs
    assert gen.layout.tp == 16
    assert any("replicated on 2 ranks" in n for n in e.notes)
    # KV per token per rank: one head (2 x 80 layers x 128 x 2 B), the same as at TP 8
    from rlmcost.parallel.memory import Mode, memory_per_rank
    from rlmcost.specs import get_model

    arch = get_model("70b").arch()
    at16 = memory_per_rank(arch, Layout(tp=16), Mode.GENERATE, 1, 1024)
    at8 = memory_per_rank(arch, Layout(tp=8), Mode.GENERATE, 1, 1024)
    assert at16.kv_cache == at8.kv_cache == 2 * 80 * 128 * 2 * 1024
    assert at16.weights < at8.weights  # the query, MLP and vocabulary shards still halve


def test_low_memory_logits_hold_the_logits_and_their_gradient_only():
    # verl/TRL/OpenRLHF compute log-probs row by row (or in flash-attn's fused cross-entropy):
    # bf16 logits, and in training their bf16 gradient, 2 and 4 B per element
    from rlmcost.choices import Dtype
    from rlmcost.deployment.spec import LogitsMode

    v = 151_936
    args = (LogitsMode.LOW_MEMORY, Dtype.BF16, Dtype.FP32, 1024)
    assert logits_peak_bytes(8192, v, False, *args) == 8192 * v * 2
    assert logits_peak_bytes(8192, v, True, *args) == 8192 * v * 4


def test_max_num_seqs_caps_the_sequences_an_engine_replica_runs():
    # vLLM's max_num_seqs bounds a continuous batch whatever the KV pool holds: GPT-2 on one
    # H100 holds hundreds of 2048-token sequences; with --max-num-seqs 8 it runs 8 at a time
    args = ["grpo", "-m", "gpt-2", "-B", "16", "-K", "4", "--json",
            "--groups", "rollout=1,actor+reference=1"]  # fmt: skip
    wide = json.loads(run(*args).stdout)
    capped = json.loads(run(*args, "--max-num-seqs", "8").stdout)

    def rollout(out):
        g = next(g for g in out["placement_detail"]["groups"] if g["name"] == "rollout")
        return g["jobs"][0]["rollout"]

    assert rollout(wide)["slots_per_replica"] == 64  # all of them (the pool holds more)
    assert rollout(capped)["slots_per_replica"] == 8
    assert rollout(capped)["waves"] == 8
    assert capped["deployment"]["engine"]["max_num_seqs"] == 8


def test_a_run_file_key_typo_names_the_nearest_field():
    # a newcomer's Run file: 'promts' for workload.prompts
    from rlmcost import Run

    typo = r"'workload.promts' is not a field; did you mean 'prompts'"
    with pytest.raises(SpecError, match=typo):
        Run.from_yaml("algorithm: {name: grpo}\nmodels: {actor: 8b}\nworkload: {promts: 64}\n")


@pytest.mark.parametrize("flags", [
    ("--rollout-tp", "2"), ("--gpu-memory-utilization", "0.3"), ("--max-num-seqs", "8"),
    ("--framework", "verl"),
])  # fmt: skip
def test_ideal_refuses_the_engine_and_framework_flags_it_would_ignore(flags):
    # --ideal is the paper's iteration (no engine reservation, no framework terms): these had
    # changed no number (36.25 s for grpo -m 8b --gpus 8 --ideal with or without each)
    r = runner.invoke(app, ["grpo", "-m", "8b", "--gpus", "8", "--ideal", *flags])
    assert r.exit_code == 2 and "--ideal" in r.output and flags[0] in r.output, r.output
    assert "Traceback" not in r.output
    # its own command line (--framework none) still runs
    ok = runner.invoke(app, ["grpo", "-m", "gpt-2", "--gpus", "1", "--ideal",
                                  "--framework", "none", "--json"])  # fmt: skip
    assert ok.exit_code == 0, ok.output
