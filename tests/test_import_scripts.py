"""Launch scripts as `rlmcost import` input (rlmcost.frameworks.shell_script, launch_scripts):
the frameworks' own scripts, copied under tests/data/scripts (each names its repository path
and commit on its first lines), import as the same overrides/arguments typed by hand; what a
script does not give is a one-line error naming the variable; nothing in a script is run."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rlmcost.cli import app
from rlmcost.errors import SpecError
from rlmcost.frameworks.launch_scripts import (
    import_openrlhf_script,
    import_slime_script,
    import_verl_script,
)
from rlmcost.frameworks.shell_script import read_launch

DATA = Path(__file__).parent / "data"
SCRIPTS = DATA / "scripts"
runner = CliRunner()

# verl examples/tuning/7b/qwen2-7b_grpo-lora_1_h100_fsdp_vllm.sh @b178a3cd5, typed: its
# $(( nproc_per_gpu * nnodes * ngpu_per_node )) = 16 * 1 * 1 written out by hand.
VERL_LORA_7B = [
    "algorithm.adv_estimator=grpo", "data.train_batch_size=16", "data.max_prompt_length=512",
    "data.max_response_length=1024", "actor_rollout_ref.model.path=Qwen/Qwen2.5-7B-Instruct",
    "actor_rollout_ref.model.use_shm=True",
    "actor_rollout_ref.model.enable_gradient_checkpointing=True",
    "actor_rollout_ref.model.lora_rank=32", "actor_rollout_ref.model.lora_alpha=32",
    "actor_rollout_ref.model.target_modules=all-linear",
    "actor_rollout_ref.model.use_remove_padding=True",
    "actor_rollout_ref.actor.ppo_mini_batch_size=16",
    "actor_rollout_ref.actor.ppo_micro_batch_size=16", "actor_rollout_ref.actor.use_kl_loss=True",
    "actor_rollout_ref.actor.fsdp_config.fsdp_size=-1",
    "actor_rollout_ref.actor.fsdp_config.param_offload=True",
    "actor_rollout_ref.actor.fsdp_config.optimizer_offload=True",
    "actor_rollout_ref.rollout.log_prob_micro_batch_size=16",
    "actor_rollout_ref.rollout.tensor_model_parallel_size=1",
    "actor_rollout_ref.rollout.name=vllm", "actor_rollout_ref.rollout.gpu_memory_utilization=0.2",
    "actor_rollout_ref.rollout.n=5", "actor_rollout_ref.rollout.max_num_seqs=512",
    "actor_rollout_ref.rollout.max_num_batched_tokens=1536",
    "actor_rollout_ref.rollout.layered_summon=True",
    "actor_rollout_ref.ref.log_prob_micro_batch_size=16",
    "actor_rollout_ref.ref.fsdp_config.param_offload=True",
    "actor_rollout_ref.actor.ulysses_sequence_parallel_size=1",
    "algorithm.use_kl_in_reward=False", "trainer.n_gpus_per_node=1", "trainer.nnodes=1",
]  # fmt: skip


def _empty(tmp_path: Path) -> Path:
    p = tmp_path / "empty.yaml"
    p.write_text("{}\n")
    return p


def test_verl_script_imports_as_its_overrides_typed(tmp_path) -> None:
    from rlmcost.frameworks.verl import import_verl

    script = import_verl_script(SCRIPTS / "verl_qwen2-7b_grpo-lora_1_h100.sh", [], [], None,
                                "h100")  # fmt: skip
    typed = import_verl(_empty(tmp_path), VERL_LORA_7B, None, "h100")
    assert script.algorithm == typed.algorithm and script.flags == typed.flags
    # $(date) feeds only the run's names (trainer.project_name: cost-free), kept unexpanded
    assert any("trainer.project_name=gsm8k-grpo-lora-qwen2.5-7b-$NOW" in n for n in script.notes)
    # the script's `$@ 2>&1 | tee ...`: extra overrides land where $@ stands
    more = import_verl_script(SCRIPTS / "verl_qwen2-7b_grpo-lora_1_h100.sh",
                              ["actor_rollout_ref.rollout.n=8"], [], None, "h100")  # fmt: skip
    assert dict(more.flags)["--group"] == 8


def test_verl_megatron_config_name_is_the_megatron_strategy(tmp_path) -> None:
    """--config-name='ppo_megatron_trainer.yaml' (verl's own, its actor strategy megatron) under
    --config-path=config, verl's trainer folder (main_ppo.py's config_path)."""
    from rlmcost.frameworks.verl import import_verl

    script = import_verl_script(SCRIPTS / "verl_qwen2-32b_grpo_8_h20_megatron.sh", [], [],
                                None, "h100")  # fmt: skip
    launch = read_launch(SCRIPTS / "verl_qwen2-32b_grpo_8_h20_megatron.sh",
                         ("verl.trainer.main_ppo",), [], {})  # fmt: skip
    overrides = [w for w in launch.words if not w.startswith("--")]
    typed = import_verl(_empty(tmp_path), ["actor_rollout_ref.actor.strategy=megatron",
                                           *overrides], None, "h100")  # fmt: skip
    assert script.flags == typed.flags
    assert dict(script.flags)["--tp"] == 8  # megatron.tensor_model_parallel_size=8
    # $HOME is not given: the data paths keep it ("['$HOME/data/rlhf/gsm8k/train.parquet']")
    assert "data.train_files=['$HOME/data/rlhf/gsm8k/train.parquet']" in launch.words


def test_openrlhf_script_imports_as_its_arguments_typed() -> None:
    from rlmcost.frameworks.openrlhf import import_openrlhf

    path = SCRIPTS / "openrlhf_train_ppo_ray_hybrid_engine.sh"
    lines = [ln.strip().rstrip("\\") for ln in path.read_text().splitlines()[4:]]
    typed = import_openrlhf(shlex.split(" ".join(lines)))
    script = import_openrlhf_script(path, [], [])
    assert script.flags == typed.flags and script.algorithm == typed.algorithm


def test_slime_script_expands_as_bash_did() -> None:
    """tests/data/frameworks/slime_qwen3-4B.args is bash's expansion of the same script
    (NUM_GPUS=8): the arrays, the sourced scripts/models/qwen3-4B.sh and
    ${MODEL_ARGS_ROTARY_BASE:-1000000} read here give the same words, and the same query."""
    from rlmcost.frameworks.slime import import_slime

    lines = [ln for ln in (DATA / "frameworks" / "slime_qwen3-4B.args").read_text().splitlines()
             if ln and not ln.startswith("#")]  # fmt: skip
    bash = shlex.split(" ".join(lines))
    launch = read_launch(SCRIPTS / "slime_run-qwen3-4B.sh", ("train.py",), [],
                         {"NUM_GPUS": "8"})  # fmt: skip
    assert ["python3", launch.entry, *launch.words] == bash
    q = import_slime_script(SCRIPTS / "slime_run-qwen3-4B.sh", [], ["NUM_GPUS=8"], None, None)
    assert q.flags == import_slime(bash).flags


def test_a_value_the_script_does_not_give_is_one_line_naming_it() -> None:
    # NUM_GPUS is set from nvidia-smi's output, then under an if: --env gives it
    with pytest.raises(SpecError, match=r"\$NUM_GPUS .* is set under a condition .*--env "
                                        r"NUM_GPUS=VALUE"):  # fmt: skip
        import_slime_script(SCRIPTS / "slime_run-qwen3-4B.sh", [], [], None, None)


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("python3 -m verl.trainer.main_ppo trainer.nnodes=$(nproc)", r"\$\(nproc\).* command's"),
        ("python3 -m verl.trainer.main_ppo trainer.nnodes=$NODES", r"\$NODES .*not set.*--env"),
        ("N=$(hostname)\npython3 -m verl.trainer.main_ppo trainer.nnodes=$N",
         r"\$N .*is set from \$\(hostname\)"),
        ("python3 -m verl.trainer.main_ppo trainer.nnodes=$((2 / 0))", "divides by zero"),
        ("python3 -m verl.trainer.main_ppo trainer.nnodes=${X?unset}", r"\$\{X\?\.\.\.\}"),
        ("python3 -m verl.trainer.main_ppo trainer.nnodes=$1", "argument 1, not given"),
        ("python3 -m verl.trainer.main_ppo trainer.nnodes=$$", "special parameter"),
        ("python3 -m verl.trainer.main_ppo ${ARGS[@]}", r"\$ARGS .*not set"),
        ("python3 -m verl.trainer.main_ppo 'unclosed", "quote does not close"),
        ("python3 -m verl.trainer.main_ppo --multirun", "option '--multirun' is not read"),
        ("python3 -m verl.trainer.main_ppo --config-name=my_cfg", "my_cfg in verl's own"),
        ("python3 -m verl.trainer.main_ppo --config-path=/nowhere --config-name=x",
         "/nowhere/x.yaml is not there"),
        ("echo hello", "no command runs verl.trainer.main_ppo"),
        ("source ./env.sh\npython3 -m verl.trainer.main_ppo trainer.nnodes=$N",
         r"\$N .*env.sh \(line 1\), which is not there"),
    ],
)
def test_each_unread_construct_is_one_line(tmp_path, text, match) -> None:
    script = tmp_path / "run.sh"
    script.write_text(text + "\n")
    res = runner.invoke(app, ["import", "verl", str(script)])
    assert res.exit_code != 0
    assert res.exception is None or isinstance(res.exception, SystemExit), res.exception
    err = res.output.strip().splitlines()
    assert len(err) == 1 and "Traceback" not in res.output, res.output
    import re

    assert re.search(match, err[0]), err[0]


def test_a_script_is_never_run(tmp_path) -> None:
    """rm -rf, $(touch ...) and backquotes are text: no file is made or removed."""
    keep = tmp_path / "keep"
    keep.mkdir()
    made = tmp_path / "made"
    script = tmp_path / "run.sh"
    script.write_text(f"rm -rf {keep}\nX=$(touch {made})\nY=`touch {made}`\ntouch {made}\n"
                      f"python3 -m verl.trainer.main_ppo actor_rollout_ref.model.path=qwen3-8b "
                      "actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=4 "
                      "trainer.project_name=$X$Y\n")  # fmt: skip
    q = import_verl_script(script, [], [], None, "h100")
    assert keep.is_dir() and not made.exists()
    assert dict(q.flags)["--model"] == "qwen3-8b"


def test_shell_words_assignments_arithmetic_and_arrays(tmp_path) -> None:
    """The shell's own expansions (bash 5 gives the words asserted)."""
    script = tmp_path / "run.sh"
    script.write_text(
        "#!/bin/bash\nset -x\nexport A=3 # three\nB=${B:-4}\nC=${UNSET:=x y}\n"
        "ARR=(\n  --one 1  # a comment\n# --dropped 2\n\n  \"--two words\"\n)\nARR+=(--three)\n"
        "if [ -z \"$A\" ]; then\n  Z=99\nfi\n"
        "python3 -m verl.trainer.main_ppo \\\n  n=$((A * B + 10 / 4 - -7 % 3)) "
        "'q=$A' \"c=$C\" ${ARR[@]} \"${ARR[@]}\" n2=${#ARR[@]} z=$Z $@ 2>&1 | tee log\n")
    launch = read_launch(script, ("verl.trainer.main_ppo",), ["x=1"], {"B": "5"})
    assert launch.words == ["n=18", "q=$A", "c=x y", "--one", "1", "--two", "words",
                            "--three", "--one", "1", "--two words", "--three", "n2=4", "z=$Z",
                            "x=1"]  # fmt: skip
    # Z is set under an if whose condition fails (A is 3): bash leaves Z unset
    assert launch.unresolved[13].why == "is not set in the script"


def test_cli_reads_scripts_and_env(tmp_path) -> None:
    res = runner.invoke(app, ["import", "slime", str(SCRIPTS / "slime_run-qwen3-4B.sh"),
                              "--env", "NUM_GPUS=8", "--json"])  # fmt: skip
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert "--model" in out["query"]["command"] and "qwen3-4b" in out["query"]["command"].lower()
    bad = runner.invoke(app, ["import", "slime", "--env", "X=1", "--", "python3", "train.py"])
    assert bad.exit_code != 0 and "--env sets a launch script's variables" in bad.output
    res = runner.invoke(app, ["import", "openrlhf",
                              str(SCRIPTS / "openrlhf_train_ppo_ray_hybrid_engine.sh")])
    assert res.exit_code == 0, res.output
    assert "never run" in res.output


def test_unexpanded_values_only_where_no_cost_reads_them(tmp_path) -> None:
    """slime: a data path (--prompt-data, cost-free) and a model folder whose name is written
    out (--hf-checkpoint $BASE/Qwen3-4B: its folder name is the model) keep their variable;
    a batch size does not."""
    args = [ln for ln in (DATA / "frameworks" / "slime_qwen3-4B.args").read_text().splitlines()
            if ln and not ln.startswith("#")][1:]  # fmt: skip
    body = " \\\n  ".join(ln.replace("/root/Qwen3-4B", "$BASE/Qwen3-4B", 1)
                          .replace("/root/dapo-math-17k", "$DATA") for ln in args)
    script = tmp_path / "run.sh"
    script.write_text(f"python3 train.py \\\n  {body}\n")
    q = import_slime_script(script, [], [], None, None)
    assert "--model" in dict(q.flags)
    assert any("$BASE, $DATA not given" in n for n in q.notes), q.notes
    script.write_text(f"python3 train.py \\\n  {body} --rollout-batch-size $BS\n")
    with pytest.raises(SpecError, match=r"\$BS in '\$BS' is not set in the script"):
        import_slime_script(script, [], [], None, None)
    assert import_slime_script(script, [], ["BS=64"], None, None).flags != q.flags


def test_verl_config_folder_of_the_script_with_hydra_defaults(tmp_path) -> None:
    """verl examples/sglang_multiturn/run_qwen2.5-3b_megatron_gsm8k_multiturn.sh @b178a3cd5's
    shape: PROJECT_DIR="$(pwd)", --config-path="$PROJECT_DIR/..." (given with --env, or the
    folder above the script that holds the config), a YAML
    whose Hydra defaults name ppo_megatron_trainer (config/gsm8k_multiturn_megatron_grpo.yaml,
    trimmed)."""
    from rlmcost.frameworks.verl import import_verl

    repo = tmp_path / "repo"  # the checkout: its config/ and the script
    (repo / "config").mkdir(parents=True)
    (repo / "config" / "multiturn.yaml").write_text(
        "hydra:\n  searchpath:\n    - file://verl/trainer/config\n"
        "defaults:\n  - ppo_megatron_trainer\n  - _self_\n"
        "data:\n  max_prompt_length: 1024\n  max_response_length: 1024\n"
        "  train_batch_size: 256\n")
    script = repo / "run.sh"
    script.write_text(
        'PROJECT_DIR="$(pwd)"\nCONFIG_PATH="$PROJECT_DIR/config"\n'
        'python3 -m verl.trainer.main_ppo --config-path="$CONFIG_PATH" '
        "--config-name='multiturn' actor_rollout_ref.model.path=qwen2.5-3b "
        "actor_rollout_ref.actor.ppo_mini_batch_size=256 "
        "actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=32 $@\n")
    elsewhere = tmp_path / "other" / "run.sh"  # no folder above it holds config/
    elsewhere.parent.mkdir()
    elsewhere.write_text(script.read_text())
    with pytest.raises(SpecError, match=r"\$PROJECT_DIR .* is set from \$\(pwd\)"):
        import_verl_script(elsewhere, [], [], None, "h100")
    q = import_verl_script(elsewhere, [], [f"PROJECT_DIR={repo}"], None, "h100")
    # in its checkout, $(pwd) is the folder above the script holding config/multiturn.yaml
    assert import_verl_script(script, [], [], None, "h100").flags == q.flags
    typed = import_verl(_empty(tmp_path), [
        "actor_rollout_ref.actor.strategy=megatron", "data.max_prompt_length=1024",
        "data.max_response_length=1024", "data.train_batch_size=256",
        "actor_rollout_ref.model.path=qwen2.5-3b",
        "actor_rollout_ref.actor.ppo_mini_batch_size=256",
        "actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=32"], None, "h100")
    assert q.flags == typed.flags


def test_an_assignment_before_a_command_is_that_command_s_only(tmp_path) -> None:
    """`A=2 echo hi` sets A for echo alone (bash); `export B=3` for the script."""
    script = tmp_path / "run.sh"
    script.write_text("A=1\nA=2 echo hi\nexport B=3\npython3 -m verl.trainer.main_ppo a=$A b=$B\n")
    assert read_launch(script, ("verl.trainer.main_ppo",), [], {}).words == ["a=1", "b=3"]


def test_every_missing_variable_is_named_in_one_line(tmp_path) -> None:
    """Each value the launch needs that the script does not give is named at once, with the
    --env items for all of them; a cost-free one (trainer.project_name) is not asked for."""
    script = tmp_path / "run.sh"
    script.write_text("python3 -m verl.trainer.main_ppo trainer.nnodes=$NODES "
                      "trainer.project_name=$NAME trainer.n_gpus_per_node=$(nproc) "
                      "data.train_batch_size=$BS ${EXTRA[@]}\n")  # fmt: skip
    res = runner.invoke(app, ["import", "verl", str(script)])
    err = res.output.strip().splitlines()
    assert res.exit_code != 0 and len(err) == 1, res.output
    assert err[0].endswith("give them with --env NODES=VALUE --env BS=VALUE --env EXTRA=VALUE "
                           "and a copy of the script that writes the value of $(nproc)"), err[0]
    assert "$NAME" not in err[0]
    # slime's --name value words: the batch size and the GPU count, not the data path
    script.write_text("python3 train.py --prompt-data $DATA --rollout-batch-size $BS "
                      "--actor-num-gpus-per-node $GPUS\n")  # fmt: skip
    with pytest.raises(SpecError, match=r"\$BS .*; \$GPUS .*give them with --env BS=VALUE "
                                        r"--env GPUS=VALUE$"):  # fmt: skip
        import_slime_script(script, [], [], None, None)


def test_read_a_splits_a_here_string_as_bash_does(tmp_path) -> None:
    """`read -ra NAME <<< WORD` (miles' scripts): NAME is WORD's words (bash 5 gives the
    words asserted); from a command's output it has no value, and the error says where."""
    script = tmp_path / "run.sh"
    script.write_text('LINE="--a 1  --b two"\nread -ra ARGS <<< "${LINE}"\n'
                      'read -r X\nOUT="$(python3 helper.py m)"\nread -ra MORE <<< "$OUT"\n'
                      'python3 train.py "${ARGS[@]}" n=${#ARGS[@]} x=$X ${MORE[@]}\n')
    launch = read_launch(script, ("train.py",), [], {"MORE": "--c 3"})
    assert launch.words == ["--a", "1", "--b", "two", "n=4", "x=$X", "--c", "3"]
    assert "is read (read, line 3) from the script's input" in launch.unresolved[5].why
    bare = read_launch(script, ("train.py",), [], {})
    assert bare.unresolved[6].why == ("is read (read -a, line 5) from $OUT, which is set from "
                                      "$(python3 helper.py m) (line 4)")  # fmt: skip
    assert 6 in bare.many


MILES_LORA = SCRIPTS / "miles_run-qwen3-4B-megatron-lora.sh"
# radixark/miles scripts/models/qwen3-4B.py @31f1ca96: model_args()'s string, as
# miles/utils/external_utils/model_args_utils.py prints it (one line) for MODEL_ARGS_LINE
MILES_QWEN3_4B = ("--swiglu --num-layers 36 --hidden-size 2560 --ffn-hidden-size 9728 "
                  "--num-attention-heads 32 --group-query-attention --num-query-groups 8 "
                  "--use-rotary-position-embeddings --disable-bias-linear --normalization "
                  "RMSNorm --norm-epsilon 1e-6 --rotary-base 1000000 --vocab-size 151936 "
                  "--kv-channels 128 --qk-layernorm")  # fmt: skip


def test_miles_script_imports_with_its_model_args_given() -> None:
    """`rlmcost import miles` is slime's importer. miles examples/lora/
    run-qwen3-4B-megatron-lora.sh @31f1ca96 reads MODEL_ARGS from a Python helper's output:
    without it, one line names the helper's command; with its output (--env MODEL_ARGS_LINE or
    MODEL_ARGS) the launch is the bash expansion (tests/data/frameworks/
    slime_miles-qwen3-4B-lora.args, whose MODEL_ARGS were empty) with the model's arguments
    where "${MODEL_ARGS[@]}" stands, and the same query as those arguments typed."""
    from rlmcost.frameworks.slime import import_slime

    res = runner.invoke(app, ["import", "miles", str(MILES_LORA)])
    err = res.output.strip().splitlines()
    assert res.exit_code != 0 and len(err) == 1, res.output
    assert "$MODEL_ARGS in '$MODEL_ARGS' is read (read -a, line 35) from $MODEL_ARGS_LINE, " \
        "which is set from $(python3 \"${REPO_ROOT}/miles/utils/external_utils/" \
        "model_args_utils.py\" \"qwen3-4B\")" in err[0] and \
        err[0].endswith("--env MODEL_ARGS=VALUE"), err[0]  # fmt: skip
    lines = [ln for ln in (DATA / "frameworks" / "slime_miles-qwen3-4B-lora.args").read_text()
             .splitlines() if ln and not ln.startswith("#")]  # fmt: skip
    bash = shlex.split(" ".join(lines))
    bash[7:7] = MILES_QWEN3_4B.split()  # after --colocate, where the script puts them
    launch = read_launch(MILES_LORA, ("train.py",), [], {"MODEL_ARGS_LINE": MILES_QWEN3_4B})
    assert ["python3", launch.entry, *launch.words] == bash
    for env in (f"MODEL_ARGS_LINE={MILES_QWEN3_4B}", f"MODEL_ARGS={MILES_QWEN3_4B}"):
        q = import_slime_script(MILES_LORA, [], [env], None, None)
        assert q.flags == import_slime(bash).flags
        assert (dict(q.flags)["--lora-rank"], dict(q.flags)["--lora-targets"]) == \
            (32, "all-linear")  # fmt: skip
    res = runner.invoke(app, ["import", "miles", str(MILES_LORA), "--env",
                              f"MODEL_ARGS_LINE={MILES_QWEN3_4B}", "--json"])  # fmt: skip
    assert res.exit_code == 0, res.output
    assert "--lora-rank 32" in json.loads(res.stdout)["query"]["command"]


def test_profiling_and_logging_keys_are_cost_free(tmp_path) -> None:
    """verl examples/ppo_trainer/run_qwen2-7b_rm_seq_balance_nsys.sh @b178a3cd5's profiling
    keys (global_profiler.*, the workers' profiler.*; ppo_trainer.yaml's sections) and the
    rollout's metrics (rollout.prometheus.*) change no step's cost: not listed as ignored,
    their unset $PROFILE_RANKS kept unexpanded."""
    script = tmp_path / "run.sh"
    script.write_text(
        'PROFILE_STEPS="[1,2,5]"\nDISCRETE=True\n'
        "python3 -m verl.trainer.main_ppo actor_rollout_ref.model.path=qwen2.5-7b "
        "actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=2 "
        "actor_rollout_ref.actor.profiler.enable=True "
        "actor_rollout_ref.actor.profiler.ranks=$PROFILE_RANKS "
        "critic.profiler.all_ranks=$PROFILE_RANKS_ALL global_profiler.tool=nsys "
        "global_profiler.profile_continuous_steps=True global_profiler.steps=$PROFILE_STEPS "
        "global_profiler.global_tool_config.nsys.discrete=$DISCRETE "
        "actor_rollout_ref.rollout.prometheus.enable=True trainer.logger='[console,wandb]' "
        "trainer.save_freq=20 actor_rollout_ref.actor.data_loader_seed=1\n")
    q = import_verl_script(script, [], [], None, "h100")
    assert q.ignored == [] and q.near == {}, q.ignored
    assert any("$PROFILE_RANKS, $PROFILE_RANKS_ALL not given" in n for n in q.notes), q.notes


def test_openrlhf_reward_function_path_keeps_its_folder_variable(tmp_path) -> None:
    """OpenRLHF examples/scripts/train_prorlv2_math_hybrid_engine.sh @3c3be623's shape:
    REWARD_FUNC_PATH="${WORK_DIR}/examples/python/math_reward_func.py" for --reward.remote_url
    (WORK_DIR here from $(pwd), unknown): the importer reads only that a function scores, so
    the folder's variable is kept, as a model's folder's is."""
    text = (SCRIPTS / "openrlhf_train_ppo_ray_hybrid_engine.sh").read_text()
    text = text.replace("--reward.model_name_or_path OpenRLHF/Llama-3-8b-rm-700k",
                        '--reward.remote_url "$WORK_DIR/examples/python/math_reward_func.py"')
    script = tmp_path / "run.sh"
    script.write_text('WORK_DIR="$(pwd)"\n' + text)
    q = import_openrlhf_script(script, [], [])
    assert any("$WORK_DIR not given" in n for n in q.notes), q.notes
    assert "--reward" not in dict(q.flags)


def test_folder_idioms_resolve_as_bash_does(tmp_path) -> None:
    """$(dirname WORD) and $(cd DIR && pwd) over the script's own path (bash 5 prints the
    folders asserted): slime's SLIME_DIR="$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/../.."
    &>/dev/null && pwd)", OpenRLHF's WORK_DIR=$(cd "$SCRIPT_DIR/../.." && pwd); a relative
    cd (the folder it starts from) has no value."""
    root = tmp_path / "repo"
    (root / "examples" / "x").mkdir(parents=True)
    script = root / "examples" / "x" / "run.sh"
    script.write_text(
        'SCRIPT_DIR="$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" &>/dev/null && pwd)"\n'
        'SLIME_DIR="$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/../.." &>/dev/null && pwd)"\n'
        'WORK_DIR=$(cd "$SCRIPT_DIR/../.." && pwd)\nUP=$(dirname "$0")\nREL=$(cd ../.. && pwd)\n'
        "python3 train.py a=$SCRIPT_DIR b=$SLIME_DIR c=$WORK_DIR d=$UP e=$REL\n")
    launch = read_launch(script, ("train.py",), [], {})
    here = str(script.parent.resolve())
    top = str(root.resolve())
    assert launch.words[:4] == [f"a={here}", f"b={top}", f"c={top}", f"d={here}"]
    assert "is set from $(cd ../.. && pwd)" in launch.unresolved[4].why


def test_a_verl_ascend_script_says_it_is_priced_on_other_hardware(tmp_path) -> None:
    # verl's Ascend examples (examples/grpo_trainer/*_npu.sh @b178a3cd5) name no device key:
    # verl/utils/device.py picks the NPU itself; their file names and HCCL_ / ASCEND_ variables
    # say so, and rlmcost (no Ascend accelerator) notes the hardware it prices them on
    text = (SCRIPTS / "verl_qwen2-7b_grpo-lora_1_h100.sh").read_text()
    named = tmp_path / "run_qwen2_5_7b_grpo_npu.sh"
    named.write_text(text)
    q = import_verl_script(named, [], [], None, "h100")
    assert any("written for Ascend NPUs (its name;" in n and "on h100" in n for n in q.notes)
    hccl = tmp_path / "run_qwen3_8b.sh"
    hccl.write_text("export HCCL_CONNECT_TIMEOUT=1500\n" + text)
    q = import_verl_script(hccl, [], [], None, None)
    assert any("(HCCL_CONNECT_TIMEOUT;" in n for n in q.notes)
    plain = import_verl_script(SCRIPTS / "verl_qwen2-7b_grpo-lora_1_h100.sh", [], [], None,
                               "h100")  # fmt: skip
    assert not any("Ascend" in n for n in plain.notes)
