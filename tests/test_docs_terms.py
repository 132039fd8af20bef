"""Issue 18: each new term and choice is in --help, the README's time-term table and notebook 04.

The terms are the CHANGELOG's 'Unreleased' rounds': among them the weight update through
shared storage (--refit disk, rlmcost/perf/disk_refit.py), NeMo RL's async engine's 128
sequences (rlmcost/frameworks/nemo_rl_vllm.py), the MTP draft's checkpoint requirement
(ModelSpec.mtp_layers), NeMo RL's reference swap and FSDP2 copies (rlmcost/perf/policy_worker.py),
NeMo RL's version gate (rlmcost/placement/version_gate.py), pageable offload
(rlmcost/perf/host_offload.py), the busiest EP rank (rlmcost/perf/moe_imbalance.py) and the
training rows' DeepSpeed blocking p2p and embedding gradient.
"""

import json
from pathlib import Path

import pytest
import typer.main

from rlmcost.cli import app

ROOT = Path(__file__).resolve().parents[1]


def _help_of(command: str) -> dict[str, str]:
    """Each option's help text of `rlmcost COMMAND`, by its long name."""
    group = typer.main.get_command(app)
    cmd = group.get_command(None, command)  # type: ignore[attr-defined]
    return {opt: p.help or "" for p in cmd.params for opt in p.opts if opt.startswith("--")}


@pytest.mark.parametrize(
    ("flag", "words"),
    [
        # rlmcost/perf/disk_refit.py: DISK_REFIT_BYTES_PER_S 1.02e9 from AReaL PR 324
        ("--refit", ("disk", "DISK_REFIT_BYTES_PER_S", "1.02 GB/s", "AReaL PR 324")),
        # rlmcost/frameworks/nemo_rl_vllm.py ASYNC_ENGINE_MAX_NUM_SEQS
        ("--max-num-seqs", ("128", "async_engine", "vLLM PR 37393")),
        # ModelSpec.mtp_layers: the config key it is read from
        ("--speculative-draft", ("num_nextn_predict_layers", "error")),
        # rlmcost/placement/grad_buffer.py: Megatron-core's DDP config key and its choices
        ("--grad-reduce-dtype", ("grad_reduce_in_fp32", "fp32", "param", "4 B/param")),
        # rlmcost/placement/rank_order.py: NeMo RL's key and Ray's random node ids
        ("--rank-order", ("random", "cluster.segment_size", "node ids", "72")),
    ],
)
def test_new_flags_help_names_value_and_source(flag, words):
    text = _help_of("grpo")[flag]
    for word in words:
        assert word in text, f"{flag} help lacks {word!r}"


def test_refit_is_a_choice():
    """The help shows the choice, and another value is a usage error (exit 2), not a
    validation error from deep inside the Run."""
    from typer.testing import CliRunner

    res = CliRunner().invoke(app, ["grpo", "--help"], env={"COLUMNS": "200"})
    assert "--refit <disk>" in res.output
    res = CliRunner().invoke(app, ["grpo", "-m", "7b", "--refit", "nfs"])
    assert res.exit_code == 2 and "Traceback" not in res.output
    assert "'nfs' is not one of 'disk'" in res.output


def _table_terms() -> str:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    start = readme.index("| term (phase) | model | source |")
    return readme[start:readme.index("\n\n", start)]


@pytest.mark.parametrize(
    "term",
    ["--refit disk", "reference swap", "FSDP2 copies", "fsdp2_reduce_bytes", "eager HF layers",
     "ENGINE_CONTEXT default of 128", "ModelSpec.mtp_layers", "padded_call_bytes",
     "LoRA fused into the TP shards", "per-sequence loss under packing", "overlap contention",
     "layer_launches", "chunked prefill of a long context", "fp64 MoE router",
     "packed micro-batches padded under pipeline parallelism", "AReaL's realhf trainer",
     "sharded_call_bytes", "version gate", "pageable offload", "Hybrid Engine host floor",
     "verl fully-async step", "DeepSpeed blocking pipeline p2p", "embedding gradient",
     "busiest EP rank", "prefix sharing", "KV admission", "environment step",
     "MoE capacity factor", "--moe-pad-to-capacity", "virtual pipeline",
     "sliding-window attention", "unfused MoE permutation", "Megatron gradient buffer",
     "MoE sort by local expert", "per-module checkpoint", "random rank order", "FP8 training"],
)
def test_readme_time_terms_table_has_term(term):
    assert term in _table_terms()


def _notebook_code(name: str) -> str:
    nb = json.loads((ROOT / "notebooks" / name).read_text(encoding="utf-8"))
    return "\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code")


@pytest.mark.parametrize(
    "switch",
    ["'refit': 'disk'", "reference_swap_s", "--zero 1", "async_engine",
     "'speculative_draft': 'mtp'", "mtp_layers", "'fused_loss': True", "overlap_slowdown",
     "layer_launches", "padded_share", "'router_dtype': 'fp32'", "sharded_call_bytes",
     "version gate", "pageable_offload_s", "moe_rank_imbalance", "for_params",
     "HYBRID_ENGINE_LAUNCH_S_PER_LAYER", "pp_serial_p2p", "embedding_grad_bytes",
     "--no-prefix-caching", "host work", "'eager': False", "--groups rollout=8,actor=8",
     "'moe_capacity_factor': 1.25", "virtual_pipeline_model_parallel_size",
     "'grad_reduce_dtype': 'param'", "module_ckpt=True"],
)
def test_notebook_04_shows_switch(switch):
    assert switch in _notebook_code("04_placement.ipynb")


@pytest.mark.parametrize("command", ["grpo", "train"])
def test_ep_dispatcher_help_names_the_sort_by_local_expert(command):
    """The dispatcher decides the sort by local expert (alltoall only,
    rlmcost.perf.moe_sort_chunks), so its help says so, not only how tokens cross nodes."""
    text = _help_of(command)["--ep-dispatcher"]
    assert "rlmcost.perf.moe_sort_chunks" in text and "local expert" in text


def test_help_states_the_pageable_rate_and_the_ep_imbalance_as_their_constants():
    """--offload and --ep name the values of rlmcost.perf.host_offload (NeMo RL PR 1404's
    pageable rate) and rlmcost.perf.moe_imbalance (UltraEP's low end), so the text cannot drift
    from the constants it states."""
    from rlmcost.perf.host_offload import PAGEABLE_OFFLOAD_BYTES_PER_S
    from rlmcost.perf.moe_imbalance import EP_RANK_IMBALANCE_RATIO

    helps = _help_of("grpo")
    assert f"{PAGEABLE_OFFLOAD_BYTES_PER_S.value / 1e9:.2f} GB/s" in helps["--offload"]
    assert "pageable" in helps["--offload"]
    assert f"{EP_RANK_IMBALANCE_RATIO.value:.2f} x the mean" in helps["--ep"]


@pytest.mark.parametrize(
    "switch",
    ["moe_capacity_factor=1.0", "moe_pad_to_capacity=True", "moe_rank_imbalance",
     "--virtual-stages"],
)
def test_notebook_03_shows_switch(switch):
    assert switch in _notebook_code("03_parallelism.ipynb")


@pytest.mark.parametrize(
    ("command", "flag", "words"),
    [
        # rlmcost/parallel/moe_capacity.py: Megatron-core's get_capacity and its flag names
        ("grpo", "--moe-capacity-factor", ("--moe-expert-capacity-factor",
                                           "ceil(tokens x top_k / experts x CF)", "dropless")),
        ("train", "--moe-capacity-factor", ("--moe-expert-capacity-factor", "dropless")),
        ("grpo", "--moe-pad-to-capacity", ("--moe-pad-expert-input-to-capacity",
                                           "needs --moe-capacity-factor")),
        ("train", "--moe-pad-to-capacity", ("--moe-pad-expert-input-to-capacity",)),
        # rlmcost/frameworks/virtual_pipeline.py: Megatron's name of the size
        ("grpo", "--virtual-stages", ("virtual_pipeline_model_parallel_size", "interleaved")),
        ("train", "--virtual-stages", ("virtual_pipeline_model_parallel_size", "interleaved")),
    ],
)
def test_this_stops_flags_help_names_the_mechanism(command, flag, words):
    text = _help_of(command)[flag]
    for word in words:
        assert word in text, f"{command} {flag} help lacks {word!r}"


def _rendered_help_options():
    """(argv, option, help text) of every command's options whose help has a '[...]'."""
    group = typer.main.get_command(app)
    for name in group.list_commands(None):  # type: ignore[attr-defined]
        cmd = group.get_command(None, name)  # type: ignore[attr-defined]
        subs = getattr(cmd, "commands", None)
        pairs = [([name, sub], c) for sub, c in subs.items()] if subs else [([name], cmd)]
        for argv, c in pairs:
            for p in c.params:
                if "[" in (p.help or ""):
                    yield argv, p.opts[0], p.help


def test_no_bracket_of_a_help_text_is_eaten_by_rich_markup():
    """rich reads '[tp=4]' as a markup tag and drops it unless written '\\[tp=4]': every
    bracketed part of an option's help shows in the rendered --help (the --groups and plan
    helps had lost theirs, CHANGELOG 'Unreleased')."""
    import re

    from typer.testing import CliRunner

    cases = list(_rendered_help_options())
    assert any(opt == "--groups" for _, opt, _ in cases)  # the check reaches a bracket
    eaten, shown = [], {}
    for argv, opt, text in cases:
        key = " ".join(argv)
        if key not in shown:
            out = CliRunner().invoke(app, [*argv, "--help"], env={"COLUMNS": "1000"}).output
            shown[key] = re.sub(r"[\s│]+", " ", out)
        plain = re.sub(r"\s+", " ", text.replace("\\[", "["))
        eaten += [f"{key} {opt}: {part}" for part in re.findall(r"\[[^\]]*\]", plain)
                  if part not in shown[key]]  # fmt: skip
    assert not eaten


def _breakdown_section() -> str:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    start = readme.index("### Phases and breakdown keys")
    return readme[start:readme.index("\n## ", start)]


def _notebook_text(name: str) -> str:
    nb = json.loads((ROOT / "notebooks" / name).read_text(encoding="utf-8"))
    return "\n".join("".join(c["source"]) for c in nb["cells"])


# queries whose jobs show every phase and part the output can name: PPO under NeMo RL's defaults
# (offload, controller, values, reward), CPU Adam (OpenRLHF, --offload optimizer), a hybrid
# placement's reshard, a streamed rollout's re-prefills (--partial-rollout)
_QUERIES = [
    "ppo -m llama-2-7b --gpus 16 --framework nemo-rl",
    "grpo -m llama-3.1-8b --gpus 16 --framework openrlhf --offload optimizer",
    "grpo -m llama-3.1-8b --gpus 16 --placement hybrid",
    "grpo -m llama-3.1-8b --gpus 16 --framework verl --placement async --partial-rollout "
    "--length-dist reasoning -T 4096",
]


def test_every_phase_and_breakdown_key_is_in_the_readme_and_notebook_04():
    """Issue 18: each term the output names is in the README and notebook 04. The names come
    from the output itself (the phases and each job's predicted_breakdown_s of these queries)
    and from the training step's part tables (rlmcost.perf.step_pass COMPUTE_PARTS and
    COMM_PARTS, whose keys the training job writes as compute_*_s and exposed_*_s)."""
    import shlex

    from rlmcost import evaluate
    from rlmcost.cli.validate import run_from_argv
    from rlmcost.perf.step_pass import COMM_PARTS, COMPUTE_PARTS

    phases: set[str] = set()
    keys = {f"compute_{k}_s" for k in COMPUTE_PARTS} | {f"exposed_{k}_s" for k in COMM_PARTS}
    for query in _QUERIES:
        command, *argv = shlex.split(query)
        ev = evaluate(run_from_argv(command, argv)).evaluation
        phases |= {p.name for p in ev.phases}
        keys |= {k for g in ev.groups for j in g.jobs for k in j.predicted_parts_s}
    assert {"reshard", "offload", "controller", "weight sync"} <= phases  # the queries reach them
    assert {"cpu_adam_s", "reprefill_s", "reference_swap_s"} <= keys
    section, notebook = _breakdown_section(), _notebook_text("04_placement.ipynb")
    assert sorted(n for n in phases | keys if f"`{n}`" not in section) == []
    assert sorted(n for n in phases | keys if f"`{n}`" not in notebook) == []


@pytest.mark.parametrize("command", ["ppo", "grpo"])
def test_every_option_of_the_rl_commands_is_in_notebook_04(command):
    """Issue 18: each choice is in --help and in notebook 04. The options are `rlmcost
    COMMAND --help`'s own (typer's click command); an option counts where notebook 04 names it
    whole (``--sleep`` inside ``--no-sleep`` does not)."""
    import re

    group = typer.main.get_command(app)
    cmd = group.get_command(None, command)  # type: ignore[attr-defined]
    notebook = _notebook_text("04_placement.ipynb")
    options = [o for p in cmd.params for o in (*p.opts, *p.secondary_opts) if o.startswith("--")]
    missing = [o for o in options if re.search(re.escape(o) + r"(?![\w-])", notebook) is None]
    assert missing == []


def test_notebook_04s_option_table_quotes_the_help():
    """Notebook 04's table of the other RL options quotes each option's `--help` entry (whole,
    or its start up to a sentence's end), of `rlmcost ppo` or `rlmcost grpo`: an entry the help
    has since changed (a default, a framework that now sets it) does not stand stale."""
    import re

    helps = [_help_of(c) for c in ("ppo", "grpo")]
    rows = re.findall(r"^\| `(--[^`]+)` \| (.*) \|$", _notebook_text("04_placement.ipynb"), re.M)
    assert len(rows) > 50
    stale = []
    for names, text in rows:
        quoted = text.replace("\\|", "|").rstrip(". ")
        entries = [h[names.split(" / ")[0]] for h in helps if names.split(" / ")[0] in h]
        if not any(e.rstrip(". ") == quoted or e.startswith(quoted) for e in entries):
            stale.append(names)
    assert stale == []


@pytest.mark.parametrize("command", ["ppo", "grpo"])
def test_every_option_of_the_rl_commands_is_in_the_readme(command):
    """Issue 18: each choice is in --help/README and notebook 04. Every option of `rlmcost
    COMMAND --help` (typer's click command) is named whole in the README (``--sp`` inside
    ``--no-sp`` does not count)."""
    import re

    group = typer.main.get_command(app)
    cmd = group.get_command(None, command)  # type: ignore[attr-defined]
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    options = [o for p in cmd.params for o in (*p.opts, *p.secondary_opts)
               if o.startswith("--") and o != "--help"]  # fmt: skip
    missing = [o for o in options if re.search(r"(?<![\w-])" + re.escape(o) + r"(?![\w-])",
                                               readme) is None]  # fmt: skip
    assert missing == []


def test_the_readmes_option_table_quotes_the_help():
    """The README's table of the RL commands' other options quotes each option's `--help`
    entry (its start, up to a sentence's end outside brackets), so an entry the help has since
    changed does not stand stale."""
    import re

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    start = readme.index("### Other options of the RL commands")
    section = readme[start:readme.index("\n## ", start)]
    rows = re.findall(r"^\| `(--[^`]+)`[^|]* \| (.*) \|$", section, re.M)
    assert len(rows) >= 30
    helps = [_help_of(c) for c in ("ppo", "grpo")]
    stale = []
    for name, text in rows:
        quoted = text.replace("\\|", "|")
        entries = [" ".join(h[name].replace("\\[", "[").split()) for h in helps if name in h]
        if not entries or not all(e.startswith(quoted) for e in entries):
            stale.append(name)
    assert stale == []
