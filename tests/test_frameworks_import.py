"""`rlmcost import`: each framework's example config gives the deployment and the estimate
of the flags a user writes by hand, and each framework's batch units are converted right.

The example configs under tests/data/frameworks/ follow the frameworks' published scripts
(each file names the script it follows). The hand-written flags below are derived from those
scripts by hand, with the framework's documented units (the comments show the arithmetic).
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rlmcost.cli import app
from rlmcost.errors import SpecError
from rlmcost.frameworks.nemo_rl import import_nemo_rl
from rlmcost.frameworks.openrlhf import import_openrlhf
from rlmcost.frameworks.trl import import_trl
from rlmcost.frameworks.verl import import_verl

DATA = Path(__file__).parent / "data" / "frameworks"
VERL = DATA / "verl_grpo.yaml"
ORLHF = DATA / "openrlhf_ppo_ray.args"
TRL = DATA / "trl_grpo.yaml"
ACCEL = DATA / "trl_accelerate_zero3.yaml"
NEMO = DATA / "nemo_rl_grpo_math.yaml"
runner = CliRunner()


def _orlhf_args(path: Path = ORLHF) -> list[str]:
    lines = [ln for ln in path.read_text().splitlines() if ln and not ln.startswith("#")]
    return shlex.split(" ".join(lines))


def _json(args: list[str]) -> dict:
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    out = result.stdout
    return json.loads(out[out.index("{") :])


def _flags(q) -> dict:  # noqa: ANN001
    """Every converted value (also those equal to the command's default, left out of the
    query) and every flag of the query."""
    return {c.flag: c.value for c in q.conversions} | dict(q.flags)


# --- the importer's query equals the hand-written one ------------------------------------------

HAND = {
    # verl examples/grpo_trainer/run_qwen2-7b.sh: GRPO with a function reward (rlvr), 1024
    # prompts x n=5, mini-batch 256 prompts -> 4 steps, 40 sequences per GPU, 8 GPUs, rollout
    # TP 2 at 0.6, KL loss (reference kept, offloaded); FSDP/ckpt/sleep are verl's defaults.
    "verl": (
        ["import", "verl", str(VERL), "--json"],
        "rlvr --framework verl --model qwen2.5-7b --batch 1024 --group 5 --mini-batches 4 "
        "--prompt-len 512 --response-len 1024 --gpus 8 --micro-batch 40 "
        "--gpu-memory-utilization 0.6 --offload-idle --kl",
    ),
    # OpenRLHF examples/scripts/train_ppo_llama_ray.sh: PPO, 1024 prompts x 1 sample, train
    # batch 128 samples -> 8 steps, 16 per GPU, ZeRO-3, Adam offload, checkpointing; two vLLM
    # engines of TP 2 on 4 GPUs, actor+ref on 2, critic+reward on 2.
    "openrlhf": (
        ["import", "openrlhf", "--json", "--", *_orlhf_args()],
        "ppo --framework openrlhf --model llama-3.1-8b --batch 1024 --group 1 -S 1024 -T 1024 "
        "--mini-batches 8 --micro-batch 16 --zero 3 --offload optimizer,grads --ckpt full "
        "--forward-micro-batch 32 "  # --micro_rollout_batch_size 32: the forwards' chunks
        "--rollout-tp 2 --groups rollout=4[tp=2],actor+reference=2,critic+reward=2 --gpus 8 "
        "--init-load sharded "  # ZeRO-3: HfDeepSpeedConfig, deepspeed.zero.Init
        # what the script leaves out is OpenRLHF's argument default (vLLM at 0.95, awake), not
        # the Hybrid Engine example's that --framework openrlhf takes for an 8 B actor
        "--no-sized-defaults",
    ),
    # open-r1 recipes/Qwen2.5-1.5B-Instruct/grpo/config_demo.yaml with accelerate zero3.yaml:
    # 16 per device x 7 processes x 16 accumulation = 1792 completions / 7 generations = 256
    # prompts, one optimizer step; vLLM on the 8th GPU at 0.7; beta unset -> no reference.
    "trl": (
        ["import", "trl", str(TRL), "--accelerate", str(ACCEL), "--json"],
        "rlvr --framework trl --model qwen2.5-7b --batch 256 --group 7 --micro-batch 16 "
        "--prompt-len 512 --response-len 1024 --zero 3 --gpu-memory-utilization 0.7 "
        "--groups rollout=1[tp=1],actor=7 --gpus 8 --init-load sharded",  # zero3_init_flag
    ),
    # NeMo RL examples/configs/grpo_math_1B.yaml: 32 prompts x 16 = 512 samples = one global
    # batch of 512 (--mini-batches 1, stated); sequence packing at 512 x 4 = 2048 tokens per
    # GPU, the log-prob forwards at logprob_batch_size 4 packed to 512 x 4 = 2048 tokens; 512
    # total tokens split 256 + 256; FSDP2, vLLM colocated at 0.6, reference kept (KL 0.01);
    # train_micro_batch_size 4, the file's own (not the 8B example's 1 for a 7 B actor).
    "nemo-rl": (
        ["import", "nemo-rl", str(NEMO), "--json"],
        "rlvr --framework nemo-rl --model qwen2.5-7b --batch 32 --group 16 --prompt-len 256 "
        "--response-len 256 --gpus 8 --max-tokens-per-gpu 2048 --forward-micro-batch 4 "
        "--forward-max-tokens-per-gpu 2048 --mini-batches 1 --micro-batch 4",
    ),
}


@pytest.mark.parametrize("framework", list(HAND))
def test_import_equals_hand_written_flags(framework: str) -> None:
    imported_args, hand = HAND[framework]
    imported = _json(imported_args)
    by_hand = _json([*shlex.split(hand), "--json"])
    # Independent: the flags a user writes from the script by hand (HAND's comments).
    assert imported["deployment"] == by_hand["deployment"]
    assert imported["estimate"] == by_hand
    assert imported["query"]["algorithm"] == shlex.split(hand)[0]


def test_import_prints_query_conversions_and_estimate() -> None:
    result = runner.invoke(app, ["import", "verl", str(VERL)])
    assert result.exit_code == 0, result.output
    assert "equivalent query:" in result.stdout
    assert "rlmcost rlvr --framework verl" in result.stdout
    assert "Deployment resolved" in result.stdout
    assert "Generation" in result.stdout  # the estimate's stage table


# --- batch-unit traps, one per framework --------------------------------------------------------


def test_verl_batch_units() -> None:
    f = _flags(import_verl(VERL))
    # verl counts prompts: 1024 prompts, n = 5 responses each (5120 sequences), not 1024/5.
    assert (f["--batch"], f["--group"]) == (1024, 5)
    # ppo_mini_batch_size 256 is in prompts too: 1024 / 256 = 4 steps (not 5120 / 256 = 20).
    assert f["--mini-batches"] == 4
    # ppo_micro_batch_size_per_gpu is per GPU already: 40 (not 40 / 8 GPUs).
    assert f["--micro-batch"] == 40
    # The deprecated global ppo_micro_batch_size=320 over 8 data-parallel ranks: 320 / 8 = 40.
    g = _flags(import_verl(VERL, [
        "~actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu",
        "actor_rollout_ref.actor.ppo_micro_batch_size=320",
    ]))  # fmt: skip
    assert g["--micro-batch"] == 40


def test_verl_overrides_and_contradictions() -> None:
    f = _flags(import_verl(VERL, ["actor_rollout_ref.rollout.n=10", "+trainer.nnodes=2"]))
    assert (f["--group"], f["--gpus"]) == (10, 16)
    # n = 10 on 2 nodes: 256 x 10 = 2560 sequences per mini-batch / 16 ranks = 160 = 4 x 40;
    # n = 8: 256 x 8 = 2048 / 16 = 128, not a multiple of 40 (verl's workers assert it).
    with pytest.raises(SpecError, match="micro-batches of 40"):
        import_verl(VERL, ["actor_rollout_ref.rollout.n=8", "trainer.nnodes=2"])
    with pytest.raises(SpecError, match="both"):
        import_verl(VERL, ["actor_rollout_ref.actor.ppo_micro_batch_size=320"])
    with pytest.raises(SpecError, match="does not divide"):
        import_verl(VERL, ["actor_rollout_ref.actor.ppo_mini_batch_size=300"])
    # 256 prompts x 5 = 1280 sequences per mini-batch / 8 ranks = 160, not a multiple of 48.
    with pytest.raises(SpecError, match="micro-batches of 48"):
        import_verl(VERL, ["actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=48"])


def test_openrlhf_batch_units() -> None:
    args = _orlhf_args() + ["--n_samples_per_prompt", "8"]
    f = _flags(import_openrlhf(args))
    # --rollout_batch_size counts prompts, --n_samples_per_prompt multiplies: B=1024, K=8.
    assert (f["--batch"], f["--group"]) == (1024, 8)
    # --train_batch_size counts samples: 1024 x 8 / 128 = 64 steps (not 1024 / 128 = 8).
    assert f["--mini-batches"] == 64
    # --micro_train_batch_size is per GPU: 16.
    assert f["--micro-batch"] == 16


def test_openrlhf_placement_and_errors() -> None:
    colocated = _orlhf_args() + ["--colocate_all_models", "--vllm_enable_sleep",
                                 "--actor_num_gpus_per_node", "4", "--ref_num_gpus_per_node",
                                 "4"]  # fmt: skip
    f = _flags(import_openrlhf(colocated))
    assert "--groups" not in f and f["--gpus"] == 4 and "--sleep" in f
    with pytest.raises(SpecError, match="colocate_all_models"):
        import_openrlhf(_orlhf_args() + ["--colocate_all_models"])  # 2 x 2 engines != 2 GPUs
    with pytest.raises(SpecError, match="switch"):
        import_openrlhf(["--pretrain", "8b", "--bf16", "yes"])
    with pytest.raises(SpecError, match="not a number"):
        import_openrlhf(_orlhf_args() + ["--rollout_batch_size", "1e3.5"])
    with pytest.raises(SpecError, match="whole number"):
        import_openrlhf(_orlhf_args() + ["--rollout_batch_size", "10.5"])
    q = import_openrlhf(_orlhf_args() + ["--my_unknown_flag", "3"])
    assert q.ignored == ["--my_unknown_flag"]


def test_openrlhf_without_engines_keeps_every_models_gpus() -> None:
    one_each = ["--pretrain", "llama-3.1-8b", "--reward_pretrain", "llama-3.1-8b",
                "--actor_num_gpus_per_node", "1", "--critic_num_gpus_per_node", "1",
                "--ref_num_gpus_per_node", "1", "--reward_num_gpus_per_node", "1"]  # fmt: skip
    for engines in (["--vllm_num_engines", "0"], []):  # 0 and unset both disable vLLM
        f = _flags(import_openrlhf(one_each + engines))
        # train_ppo_ray.py: each model is a RayActorGroup on its own num_nodes x
        # num_gpus_per_node GPUs whether or not vLLM engines exist; the actor generates on its
        # own: 1 + 1 + 1 + 1 = 4 GPUs, no rollout group.
        assert f["--gpus"] == 4
        assert f["--groups"] == "actor=1,reference=1,critic=1,reward=1"
        assert "--rollout-tp" not in f
    paired = _flags(import_openrlhf(
        [*one_each, "--vllm_num_engines", "0", "--colocate_actor_ref", "--colocate_critic_reward",
         "--actor_num_gpus_per_node", "2", "--ref_num_gpus_per_node", "2",
         "--critic_num_gpus_per_node", "2", "--reward_num_gpus_per_node", "2"]
    ))  # fmt: skip
    # colocate_actor_ref / colocate_critic_reward share one placement group each: 2 + 2 GPUs.
    assert (paired["--groups"], paired["--gpus"]) == ("actor+reference=2,critic+reward=2", 4)
    # --colocate_all_models: every model on the actor's 1 x 1 GPUs (no engine GPU count to check).
    alone = _flags(import_openrlhf([*one_each, "--vllm_num_engines", "0", "--colocate_all_models"]))
    assert "--groups" not in alone and alone["--gpus"] == 1


def test_openrlhf_without_engines_runs_from_the_cli() -> None:
    out = _json(["import", "openrlhf", "--json", "--", "--pretrain", "llama-3.1-8b",
                 "--reward_pretrain", "llama-3.1-8b", "--actor_num_gpus_per_node", "1",
                 "--critic_num_gpus_per_node", "1", "--ref_num_gpus_per_node", "1",
                 "--reward_num_gpus_per_node", "1", "--vllm_num_engines", "0"])  # fmt: skip
    # the four models' 1 + 1 + 1 + 1 GPUs of train_ppo_ray.py, not the actor's one
    assert out["estimate"]["gpus"] == 4


def test_trl_batch_units() -> None:
    f = _flags(import_trl(TRL, [], ACCEL))
    # per_device_train_batch_size counts completions per device: 16 x 7 processes x 16
    # accumulation steps = 1792 completions per generation batch; / 7 generations = 256 prompts.
    assert (f["--batch"], f["--group"], f["--micro-batch"]) == (256, 7, 16)
    assert f["--mini-batches"] == 1  # steps_per_generation = accumulation: one optimizer step
    # num_generations must divide 1792: 5 does not (TRL refuses it).
    with pytest.raises(SpecError, match="does not divide"):
        import_trl(TRL, ["num_generations=5"], ACCEL)
    # The recipe's num_processes must agree with the launch.
    with pytest.raises(SpecError, match="agree"):
        import_trl(TRL, ["num_processes=8"], ACCEL)


def test_trl_recomputes_with_several_iterations() -> None:
    f = _flags(import_trl(TRL, ["num_iterations=2"], ACCEL))
    # mu = 2 passes: TRL computes old log-probs with an extra forward.
    assert f["--epochs"] == 2 and "--recompute-logprobs" in f


def test_nemo_rl_batch_units() -> None:
    f = _flags(import_nemo_rl(NEMO, [], 200))
    # num_prompts_per_step 32 x num_generations_per_prompt 16 = 512 samples.
    assert (f["--batch"], f["--group"]) == (32, 16)
    # train_global_batch_size counts samples: 512 / 512 = 1 step (not 512 / 32 = 16).
    assert f["--mini-batches"] == 1
    g = _flags(import_nemo_rl(NEMO, ["policy.train_global_batch_size=128"]))
    assert g["--mini-batches"] == 4  # 512 / 128
    # max_total_sequence_length 512 = prompt 200 + response 312; packing: 512 x 4 tokens/GPU.
    assert (f["--prompt-len"], f["--response-len"]) == (200, 312)
    assert f["--max-tokens-per-gpu"] == 2048
    h = _flags(import_nemo_rl(NEMO, ["policy.sequence_packing.enabled=false"]))
    assert h["--micro-batch"] == 4  # train_micro_batch_size, per GPU
    with pytest.raises(SpecError, match="both enabled"):
        import_nemo_rl(NEMO, ["policy.dynamic_batching.enabled=true"])


def test_nemo_rl_packed_micro_batches_split_over_context_parallel_ranks() -> None:
    """NeMo RL packs each data-parallel shard to train_mb_tokens / logprob_mb_tokens and
    context parallelism then splits the packed sequence over its ranks
    (nemo_rl/models/policy/lm_policy.py at v0.6.0, get_logprobs: 'we just shard into DP shards
    here as Sequence packing allows for CP'), so a GPU holds 1 / CP of the budget."""
    base = _flags(import_nemo_rl(NEMO, [], 200))
    assert (base["--forward-micro-batch"], base["--forward-max-tokens-per-gpu"]) == (4, 2048)
    f = _flags(import_nemo_rl(NEMO, ["policy.dtensor_cfg.context_parallel_size=4",
                                     "policy.sequence_packing.train_mb_tokens=16384",
                                     "policy.sequence_packing.logprob_mb_tokens=65536"], 200))
    assert f["--cp"] == 4
    assert (f["--max-tokens-per-gpu"], f["--forward-max-tokens-per-gpu"]) == (4096, 16384)
    # dynamic batching budgets stay per GPU as given (no packed sequence to split)
    g = _flags(import_nemo_rl(NEMO, ["policy.sequence_packing.enabled=false",
                                     "policy.dynamic_batching.enabled=true",
                                     "policy.dynamic_batching.train_mb_tokens=8192",
                                     "policy.dynamic_batching.logprob_mb_tokens=8192",
                                     "policy.dtensor_cfg.context_parallel_size=2"], 200))
    assert (g["--max-tokens-per-gpu"], g["--forward-max-tokens-per-gpu"]) == (8192, 8192)


# --- malformed and hostile configs --------------------------------------------------------------


def _fails(args: list[str]) -> str:
    result = runner.invoke(app, args)
    assert result.exit_code == 2, result.output
    err = result.stderr.strip()
    assert err.startswith("error:") and "\n" not in err and "Traceback" not in result.output
    return err


def test_yaml_tags_never_run(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    cfg = tmp_path / "evil.yaml"
    cfg.write_text(f'data: !!python/object/apply:os.system ["touch {marker}"]\n')
    assert "safe YAML" in _fails(["import", "verl", str(cfg)])
    assert not marker.exists()


@pytest.mark.parametrize(
    "text, message",
    [
        ("data:\n  train_batch_size: 100000000000000000000\n", "out of range"),
        ("data:\n  train_batch_size: .inf\n", "whole number"),
        ("data:\n  train_batch_size: many\n", "whole number"),
        ("algorithm:\n  adv_estimator: [1, 2]\n", "string"),
        ("- a\n- b\n", "mapping"),
        ("a: &a [*a]\nb: {c: 1\n", "safe YAML"),
        ("algorithm: {adv_estimator: '${oc.env:HOME}'}\n", "resolver"),
    ],
)
def test_malformed_configs_one_line(tmp_path: Path, text: str, message: str) -> None:
    cfg = tmp_path / "bad.yaml"
    head = "actor_rollout_ref: {model: {path: 8b}, actor: {ppo_micro_batch_size_per_gpu: 1}}"
    cfg.write_text(head + "\n" + text)
    assert message in _fails(["import", "verl", str(cfg)])


def test_alias_bomb_is_refused(tmp_path: Path) -> None:
    lines = ["a0: &a0 [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]"]
    lines += [f"a{i}: &a{i} {{{', '.join(f'k{j}: *a{i - 1}' for j in range(10))}}}"
              for i in range(1, 9)]  # fmt: skip
    cfg = tmp_path / "bomb.yaml"
    cfg.write_text("\n".join(lines) + "\n")
    assert "keys" in _fails(["import", "verl", str(cfg)])


def test_unknown_keys_warned_and_ignored(tmp_path: Path) -> None:
    cfg = tmp_path / "extra.yaml"
    cfg.write_text(VERL.read_text() + "mystery:\n  knob: 3\n")
    result = runner.invoke(app, ["import", "verl", str(cfg), "--json"])
    assert result.exit_code == 0, result.output
    assert "warning: ignored 1 key(s)" in result.stderr and "mystery.knob" in result.stderr
    base = _json(["import", "verl", str(VERL), "--json"])
    got = json.loads(result.stdout)
    assert got["query"]["ignored_keys"] == ["mystery.knob"]
    assert got["estimate"] == base["estimate"]


def test_missing_file_and_bad_override() -> None:
    assert "cannot read" in _fails(["import", "verl", "no/such/file.yaml"])
    assert "KEY=VALUE" in _fails(["import", "verl", str(VERL), "not an override"])
    fraction = "actor_rollout_ref.rollout.gpu_memory_utilization=7"
    assert "fraction in (0, 1]" in _fails(["import", "verl", str(VERL), fraction])


EXAMPLE_IMPORTS = [
    ["import", "openrlhf", "--json", "--", *_orlhf_args()],
    ["import", "trl", str(TRL), "--accelerate", str(ACCEL), "--json"],
    ["import", "nemo-rl", str(NEMO), "--json"],
]
"""One import per framework, each of a published example setup (named in its file's header)."""


@pytest.mark.parametrize("args", EXAMPLE_IMPORTS, ids=["openrlhf", "trl", "nemo-rl"])
def test_published_example_setups_fit(args):
    # each config follows a framework's published example script (named in its header),
    # which runs on the GPUs it names: the deployment rlmcost resolves must fit there
    r = runner.invoke(app, args)
    assert r.exit_code == 0, r.output
    estimate = json.loads(r.stdout)["estimate"]
    assert estimate["fits"] is True, {
        s: (v["memory_bytes_per_device"], v["binding_term"])
        for s, v in estimate["stages"].items()
    }


def test_verl_token_budget_reaches_the_engine() -> None:
    # verl/trainer/config/rollout/rollout.yaml @14227201e: max_num_batched_tokens 8192 (the
    # preset's), passed to vllm.LLM by vllm_rollout_spmd.py; another value becomes the flag
    assert "--max-num-batched-tokens" not in _flags(import_verl(VERL))
    f = _flags(import_verl(VERL, ["actor_rollout_ref.rollout.max_num_batched_tokens=16384"]))
    assert f["--max-num-batched-tokens"] == 16384


# --- each option once -----------------------------------------------------------------------


def _option_params(command: str) -> list:
    """The click options of `rlmcost COMMAND` (the CLI's own flag table)."""
    import typer.main

    cmd = typer.main.get_command(app).get_command(None, command)  # type: ignore[attr-defined]
    return [p for p in cmd.params if p.param_type_name == "option"]


@pytest.mark.parametrize("command", ["grpo", "ppo", "rlvr", "dapo", "rloo"])
def test_option_key_names_each_option_of_the_algorithm_commands_once(command) -> None:
    # the CLI's options (rlmcost/cli/_flags.py, _deploy*.py) are the reference: every name
    # of one option (--sleep/--no-sleep, --enforce-eager/--cuda-graphs, -m/--model) has one
    # key, and two options never share one
    from rlmcost.frameworks.result import option_key

    owner: dict[str, str] = {}
    for p in _option_params(command):
        keys = {option_key(n) for n in (*p.opts, *p.secondary_opts)}
        assert len(keys) == 1, (p.name, keys)
        key = keys.pop()
        assert key not in owner, (key, owner.get(key), p.name)
        owner[key] = p.name


def test_a_later_setting_replaces_an_earlier_one_under_any_name() -> None:
    from rlmcost.frameworks.result import ImportedQuery

    q = ImportedQuery("verl", "test")
    q.set("--sleep")
    q.set("--model", "8b")
    q.set("--tp", 2)
    q.set("--no-sleep")
    q.set("-m", "70b")
    q.set("--cuda-graphs")
    q.set("--enforce-eager")
    assert q.argv() == ["--framework", "verl", "--tp", "2", "--no-sleep", "-m", "70b",
                        "--enforce-eager", "--no-sized-defaults"]  # fmt: skip


@pytest.mark.parametrize("args", EXAMPLE_IMPORTS, ids=["openrlhf", "trl", "nemo-rl"])
def test_the_printed_query_states_each_option_once(args) -> None:
    from rlmcost.frameworks.result import option_key

    r = runner.invoke(app, args)
    assert r.exit_code == 0, r.output
    words = shlex.split(json.loads(r.stdout)["query"]["command"])
    names = {n for p in _option_params(words[1]) for n in (*p.opts, *p.secondary_opts)}
    keys = [option_key(w) for w in words[2:] if w in names]
    assert len(keys) == len(set(keys)), words
    assert "--hardware" in keys


def test_verl_example_fits_at_its_logged_lengths_not_at_the_maxima():
    # verl's examples/grpo_trainer/run_qwen2-7b.sh (verl_grpo.yaml) on GSM8K runs 40 unpadded
    # sequences per micro-batch (use_remove_padding). Every sequence at its maxima, 512 + 1,024
    # tokens, its log-prob head alone would hold 4 x 61,440 x 152,064 x 2 B = 69.6 GiB at the
    # backward (rlmcost.placement.head_peak): no fit on an 80 GB H100. At the lengths verl logs
    # for GSM8K GRPO (verl issue 2060, step 1: mean response 288.7; sigma 0.38,
    # rlmcost.perf.rl_constants.RESPONSE_LENGTH_LOG_SIGMA's low end) it fits.
    estimate = _json(["import", "verl", str(VERL), "--json"])["estimate"]
    assert estimate["fits"] is False
    assert estimate["stages"]["training"]["binding_term"] == "logits"
    query = ["rlvr", "--framework", "verl", "--model", "qwen2.5-7b", "--kl", "--batch", "1024",
             "--group", "5", "--mini-batches", "4", "--prompt-len", "512", "--response-len",
             "1024", "--gpus", "8", "--zero", "3", "--param-dtype", "fp32", "--ckpt", "full",
             "--logits", "low-memory", "--micro-batch", "40", "--offload-idle", "--rollout-tp",
             "2", "--gpu-memory-utilization", "0.6", "--sleep", "--hardware", "h100-sxm"]
    assert _json([*query, "--json"])["fits"] is False
    assert _json([*query, "--length-dist", "lognormal:289,0.38,1024", "--json"])["fits"] is True


def test_a_verdict_at_the_maxima_says_so_and_how_to_give_the_lengths():
    # the same verl example (above): its DOES NOT FIT is at every sequence's maxima, which the
    # hints now say, naming --length-dist (issue 18 audit: a published example that fits at
    # its real lengths); a spread distribution drops the line
    r = runner.invoke(app, ["import", "verl", str(VERL)])
    assert r.exit_code == 0, r.output
    text = " ".join(r.output.split())
    assert "DOES NOT FIT" in text
    assert "memory at the maximum lengths" in text
    assert "--length-dist lognormal:MEAN,SIGMA,MAX" in text
    r = runner.invoke(app, ["grpo", "-m", "qwen2.5-7b", "--gpus", "8", "--micro-batch", "40",
                            "-T", "1024", "-S", "512", "--framework", "verl", "--ckpt", "full",
                            "--length-dist", "lognormal:900,0.3,1024"])  # fmt: skip
    assert r.exit_code == 0, r.output
    assert "memory at the maximum lengths" not in " ".join(r.output.split())


def test_an_ignored_key_near_a_read_one_is_named_as_a_typo():
    # a newcomer's override typo: the warning names the key the importer reads
    q = import_verl(str(VERL), ["data.max_response_lenght=2048", "trainer.project_name=x"])
    assert "data.max_response_lenght" in q.ignored
    assert q.near == {"data.max_response_lenght": "data.max_response_length"}
    r = runner.invoke(app, ["import", "verl", str(VERL), "data.max_response_lenght=2048"])
    assert r.exit_code == 0, r.output
    assert "data.max_response_lenght (did you mean data.max_response_length?)" in r.output
    o = import_openrlhf([*_orlhf_args(), "--rollout_batch_sizee", "512"])
    assert o.near == {"--rollout_batch_sizee": "--rollout_batch_size"}
    assert import_verl(str(VERL), []).near == {}  # the example's own keys: no false alarm
