"""The answers a query prints besides its verdict (rlmcost.evaluation.advice and the renderers):
a config.json actor through every command, the longest response and what stops it, the hints
that make a deployment fit, the capacity a verdict prints and host memory per node."""

import json
import re

import pytest
from typer.testing import CliRunner

from rlmcost.cli import app
from rlmcost.units import format_bytes

runner = CliRunner()

# OpenRLHF's 70B example: 16 engine GPUs at TP 4, actor+reference and critic+reward on 8 each
# OpenRLHF's 70B setup: DeepSpeed keeps bf16 parameters on the device (--param-dtype bf16)
GROUPS_70B = ("ppo", "-m", "70b", "-H", "a100-80gb", "--gpus", "32", "--zero", "3",
              "--groups", "rollout=16[tp=4],actor+reference=8,critic+reward=8",
              "--param-dtype", "bf16")  # fmt: skip


def run(*args: str):
    return runner.invoke(app, list(args), env={"COLUMNS": "200"})


def _tiny_config(tmp_path) -> str:
    """A llama-style config.json whose folder name is no built-in model."""
    folder = tmp_path / "tiny-llama"
    folder.mkdir()
    cfg = dict(model_type="llama", hidden_size=256, intermediate_size=688, num_hidden_layers=4,
               num_attention_heads=4, num_key_value_heads=2, vocab_size=1000,
               max_position_embeddings=2048, tie_word_embeddings=False)  # fmt: skip
    (folder / "config.json").write_text(json.dumps(cfg))
    return str(folder / "config.json")


def test_every_model_command_runs_on_a_config_json(tmp_path):
    cfg = _tiny_config(tmp_path)
    for args in (
        ("ppo", "-m", cfg, "--gpus", "1"),
        ("grpo", "-m", cfg, "--gpus", "1"),
        ("dpo", "-m", cfg, "--gpus", "1"),
        ("compare", "ppo", "grpo", "dpo", "-m", cfg, "--gpus", "1"),
        ("placements", "-m", cfg, "--gpus", "2"),
        ("grpo", "-m", cfg, "--gpus", "2", "--groups", "rollout=1,actor+reference=1",
         "--reward", "rule"),
        ("train", "-m", cfg, "--gpus", "1"),
        ("blocks", "-m", cfg),
        ("plan", "grpo", "-m", cfg, "--gpus", "2", "--top", "1"),
        ("plan", "train", "-m", cfg, "--gpus", "2", "--top", "1"),
    ):  # fmt: skip
        r = run(*args)
        assert r.exit_code == 0, (args, r.output)
    r = run("ppo", "-m", cfg, "--gpus", "1")
    # the config's own max_position_embeddings (2048) less the default 1024-token prompt
    assert "longest response that still fits: 1,024 tokens" in r.stdout
    assert "trained context, 2,048 tokens" in r.stdout
    row = json.loads(run("plan", "train", "-m", cfg, "--gpus", "2", "--json").stdout)["rows"][0]
    # the plan's command names the file it read, so it runs as printed
    assert f"--model {cfg}" in row["command"]


def _longest(out: str) -> tuple[int, str]:
    m = re.search(r"longest response that still fits: ([\d,]+) tokens \(--response-len; (.*)\)\.",
                  out)  # fmt: skip
    assert m is not None, out
    return int(m.group(1).replace(",", "")), m.group(2)


def test_longest_response_stops_at_the_token_budget_and_says_so():
    # verl refuses a sequence past its token budget (verl/utils/seqlen_balancing.py:
    # assert max_token_len >= max_seq_len); an explicit budget stays fixed as S + T grows
    base = ("grpo", "-m", "8b", "--gpus", "8", "--zero", "3", "--ckpt", "full", "--framework",
            "verl")
    t, why = _longest(run(*base, "--max-tokens-per-gpu", "16000").stdout)
    # a micro-batch of a 16000-token budget holds one whole sequence at most: S + T <= 16000
    # (verl ppo_max_token_len_per_gpu), so T <= 16000 - 1024 (default prompt) = 14976
    assert t == 14_976 and "token budget" in why
    ok = run(*base, "--max-tokens-per-gpu", "16000", "--response-len", "14976", "--json")
    assert json.loads(ok.stdout)["fits"] is True
    over = run(*base, "--max-tokens-per-gpu", "16000", "--response-len", "14977")
    assert over.exit_code == 2 and "max-tokens-per-gpu" in over.output


def test_longest_response_stops_at_the_context_or_at_memory():
    llama2 = run("grpo", "-m", "7b", "--gpus", "8", "--zero", "3", "--ckpt", "full")
    t, why = _longest(llama2.stdout)
    # Llama 2's trained context is 4096 tokens (Touvron et al. 2023, arXiv:2307.09288 §2.2):
    # 4096 - 1024 prompt tokens, not past it
    assert t == 3072 and "context, 4,096 tokens" in why
    base = ("grpo", "-m", "8b", "--gpus", "8", "--zero", "3", "--ckpt", "full")
    t, why = _longest(run(*base).stdout)
    assert "memory" in why and t < 131_072 - 1024  # Llama 3.1's 128K context does not bind
    # the search's granularity is 256 tokens: the next step up does not fit
    assert json.loads(run(*base, "--response-len", str(t), "--json").stdout)["fits"] is True
    assert json.loads(run(*base, "--response-len", str(t + 256), "--json").stdout)["fits"] is False


def _hints(out: str) -> list[dict[str, str]]:
    """Each 'fits with FLAGS:' line as flag -> value ('' for a switch)."""
    hints = []
    for line in out.splitlines():
        if line.strip().startswith("fits with"):
            words = line.split("fits with", 1)[1].split(":")[0].split()
            flags: dict[str, str] = {}
            for w in words:
                if w.startswith("--"):
                    flags[w] = ""
                    last = w
                else:
                    flags[last] = w
            hints.append(flags)
    return hints


def _given(args: tuple[str, ...]) -> dict[str, str]:
    flags, last = {}, ""
    for a in args:
        if a.startswith("--"):
            flags[a], last = "", a
        elif last:
            flags[last] = a
    return flags


@pytest.mark.parametrize(
    "args",
    [
        ("grpo", "-m", "8b", "--gpus", "8", "--response-len", "16384", "--framework", "none"),
        ("grpo", "-m", "70b", "--gpus", "8", "--zero", "3", "--rollout-tp", "8",
         "--offload", "optimizer"),  # (on 16 it fits: NeMo RL frees the gradients after
        # the update, tests/test_nemo_rl_grads_freed.py)
        ("ppo", "-m", "70b", "--gpus", "16", "--zero", "3", "--rollout-tp", "8", "--ckpt",
         "full", "--micro-batch", "4"),
        ("grpo", "-m", "8b", "--gpus", "8", "--zero", "3", "--ckpt", "full", "--offload-idle",
         "--response-len", "32768"),
        (*GROUPS_70B, "--offload", "optimizer", "--ckpt", "none"),
        (*GROUPS_70B, "--ckpt", "full"),
    ],
)
def test_a_hint_never_names_a_flag_already_set(args):
    r = run(*args)
    assert r.exit_code == 0, r.output
    assert "DOES NOT FIT" in r.stdout
    hints = _hints(r.stdout)
    assert hints, r.stdout
    given = _given(args)
    for hint in hints:
        for flag, value in hint.items():
            if flag == "--offload":  # a list: the kinds set plus at least one more
                had = set(filter(None, given.get(flag, "").split(",")))
                assert had < set(value.split(",")), (hint, given)
            else:
                assert given.get(flag) != value, (hint, given)


def test_groups_are_offered_checkpointing_and_the_hint_fits():
    # without checkpointing (the preset checkpoints from 16.2 B: the 32 B recipe's)
    r = run(*GROUPS_70B, "--offload", "optimizer", "--ckpt", "none")
    hints = _hints(r.stdout)
    # the activations of 8-way ZeRO-3 PPO bind here: checkpointing is tried with --groups too
    assert {"--ckpt": "full"} in hints, r.stdout
    again = run(*GROUPS_70B, "--offload", "optimizer", "--ckpt", "full", "--json")
    assert json.loads(again.stdout)["fits"] is True


def test_the_printed_capacity_is_the_one_the_check_uses():
    r = run(*GROUPS_70B, "--ckpt", "full")
    out = json.loads(run(*GROUPS_70B, "--ckpt", "full", "--json").stdout)
    cap = out["capacity_bytes_per_device"]
    # the verdict compares each group's peak with the capacity (a device's memory less what
    # the driver keeps), not with the datasheet's 80 GB
    assert out["fits"] is False and cap != out["hbm_bytes_per_device"]
    assert f"DOES NOT FIT in {format_bytes(cap)} per device" in r.stdout
    assert format_bytes(out["hbm_bytes_per_device"]) not in r.stdout


def test_a_mixed_pools_capacity_is_the_binding_groups_device():
    # the engines on 8 H100s, the trainer on 8 H20s (96 GB HBM3, rlmcost hardware: NVIDIA's
    # H20 datasheet), 8,192-token responses: the trainer's peak passes an H100's capacity but
    # not an H20's, so the capacity printed beside that peak is the H20's
    args = ("grpo", "-m", "8b", "-T", "8192", "--groups", "rollout=8@h100,actor+reference=8@h20")
    out = json.loads(run(*args, "--json").stdout)
    h100 = json.loads(run("grpo", "-m", "8b", "--gpus", "8", "--json").stdout)
    peak = max(out["device_memory_bytes"].values())
    assert out["fits"] is True and peak > h100["capacity_bytes_per_device"]
    assert peak <= out["capacity_bytes_per_device"] > h100["capacity_bytes_per_device"]


def _host_line(out: str) -> str:
    # "...: 232 GiB of its host's 1.82 TiB." (the capacity beside it: placement/host_memory.py)
    m = re.search(r"host memory per node for offloaded states: (.*?)(?: of its host's [^.]*"
                  r"(?:\.\d+[^.]*)*|; its host's memory is unknown, not checked)?\.(?:\s|$)", out)
    assert m is not None, out
    return m.group(1)


def test_host_memory_per_node_is_one_figure_in_text_and_json():
    args = ("grpo", "-m", "8b", "--gpus", "8", "--zero", "3", "--offload", "optimizer",
            "--reward", "rule", "--groups", "rollout=4,actor+reference=4",
            "--framework", "none")  # the reference on the GPU, not in host memory  # fmt: skip
    out = json.loads(run(*args, "--json").stdout)
    per_node = out["host_memory_bytes_per_node"]
    # the actor's fp32 Adam states, 12 B/param (ZeRO, Rajbhandari et al. 2020 §3.1), sharded
    # over its 4 GPUs, all on the one 8-GPU node: 12 x 8,030,261,248 (Llama-3.1-8B's count)
    assert per_node == 12 * 8_030_261_248
    assert out["placement_detail"]["host_memory_bytes_per_node"] == per_node
    assert _host_line(run(*args).stdout) == format_bytes(per_node)


def test_groups_sharing_a_node_add_their_host_memory():
    args = ("ppo", "-m", "8b", "--gpus", "8", "--zero", "3", "--offload", "optimizer",
            "--groups", "rollout=4,actor+reference=2,critic+reward=2")  # fmt: skip
    out = json.loads(run(*args, "--json").stdout)
    groups = out["placement_detail"]["groups"]
    # one 8-GPU node holds every device: the sum of what each device holds
    held = sum(g["gpus"] * g["host_memory_bytes_per_device"] for g in groups)
    assert held > max(g["gpus"] * g["host_memory_bytes_per_device"] for g in groups)
    assert out["host_memory_bytes_per_node"] == held
    assert _host_line(run(*args).stdout) == format_bytes(held)


def test_what_did_not_help_names_no_flag_already_at_its_value():
    # Llama-3.1-70B's states on 2 H100s: no memory flag helps (on 4 TP 4 with every state
    # offloaded fits, on 8 the engine's smaller reservation with the states offloaded:
    # rlmcost.evaluation.engine_advice)
    r = run("grpo", "-m", "70b", "--gpus", "2", "--zero", "3", "--ckpt", "full",
            "--rollout-tp", "2")
    line = next(ln for ln in r.stdout.splitlines() if "makes it fit" in ln)
    assert "--offload" in line and "--zero" not in line and "--ckpt" not in line
    r = run("placements", "-m", "70b", "--gpus", "4", "--offload", "optimizer",
            "--param-dtype", "bf16")  # CPU Adam beside bf16 parameters (DeepSpeed)
    # the plan's search sizes each configuration (rlmcost.plan.sizing): what did not fit as
    # given is shown at the fastest layout that fits, and says so
    text = " ".join(r.stdout.split())
    assert "no placement fits" not in text and "fastest that fits: " in text
    out = " ".join(r.output.split())
    # (on 4 GPUs ac-shared fits only as the search sizes it; on 8 it fits as given since
    # NeMo RL frees the gradients after the update, tests/test_nemo_rl_grads_freed.py.
    # baseline: its every state offloaded needs more than the 2 TiB of DRAM of the one DGX
    # H100 node, tests/test_host_capacity.py, so no deployment of it fits)
    assert "ac-shared: nothing fits as given, so the plan's search sized it" in out
    assert "baseline: nothing fits on 4 GPUs" in out
    # the line names the predicted iteration of the fastest and its bound
    assert re.search(r"fastest that fits: [\w-]+ \([\d.]+ \w+ per iteration predicted, >= ",
                     text)  # a placement's name may hold a hyphen (ac-shared)


def test_the_logits_hint_is_evaluated_without_a_crash():
    # a 131K-token sequence's materialized logits bind (128,256 vocabulary x 131K tokens)
    r = run("grpo", "-m", "8b", "--gpus", "8", "--zero", "3", "--ckpt", "full",
            "--response-len", "130000")  # fmt: skip
    assert r.exit_code == 0 and r.exception is None, r.output
    assert "largest term: logits" in r.stdout
    # CP splits each sequence's logits over its ranks; NeMo RL's DTensor policy needs packing
    # off for it (megatron_engine.check_dtensor_packing): --logits fused alone does not fit
    assert "fits with --cp 8 --no-packing" in r.stdout


def test_an_engine_short_of_kv_room_is_told_its_rollout_tp():
    # Qwen3-30B-A3B's 61 GB of bf16 weights in a TP 1 engine (grpo_math_8B.yaml's; the preset
    # takes the 32 B recipe's TP 4 from 16.2 B) under NeMo RL's 0.6 reservation (47.5 GiB) leave
    # no KV cache; an engine over 2 GPUs fits on the same 8
    r = run("grpo", "-m", "qwen3-30b-a3b", "--gpus", "8", "--tp", "4", "--ep", "8", "--etp", "1",
            "--rollout-tp", "1")  # fmt: skip
    assert r.exit_code == 0, r.output
    assert "fits with --rollout-tp 2" in r.output
    assert "give more GPUs" not in r.output
    fixed = run("grpo", "-m", "qwen3-30b-a3b", "--gpus", "8", "--tp", "4", "--ep", "8", "--etp",
                "1", "--rollout-tp", "2", "--json")  # fmt: skip
    assert json.loads(fixed.stdout)["fits"] is True
