"""NeMo RL's Megatron generation backend (``--engine megatron``, rlmcost.deployment.
megatron_engine) and async GRPO colocated with it (rlmcost.frameworks.nemo_rl_megatron,
placement.group_gate ``colocated_note``).

Sources (NVIDIA-NeMo/RL at 7ea279abf): the recipes examples/configs/recipes/llm/
grpo-nanov3-30BA3B-4n4g-megatron_{sync,async}_colocated.yaml and
grpo-nanov3-30BA3B-4n4g-megatron_colocated_reshard.yaml (their text quoted below, the keys
that cost something; Nemotron-3-Nano is not in rlmcost's registry, so ``policy.model_name``
is Qwen3-30B-A3B, an MoE model of the same active size), grpo_math_1B.yaml's
``mcore_generation_config`` (quoted), nemo_rl/models/generation/megatron/config.py
(``dedicated_inference_megatron_cfg``), nemo_rl/weight_sync/megatron_weight_synchronizer.py
(colocated: no transfer), nemo_rl/algorithms/grpo.py ``async_grpo_train`` (the colocated
assert, ``blocks_training``); Megatron-LM at d98e8a64d, megatron/core/inference/contexts/
dynamic_context.py (the pool of ``buffer_size_gb * 1024**3`` bytes, ``max_requests``).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rlmcost.algorithms.kinds import Kind
from rlmcost.cli import app
from rlmcost.cli.validate import run_from_argv
from rlmcost.deployment.megatron_engine import kv_buffer_bytes, max_requests
from rlmcost.errors import SpecError
from rlmcost.evaluation.deployment import evaluate_deployment
from rlmcost.frameworks.nemo_rl import import_nemo_rl

BASE = Path(__file__).parent / "data" / "frameworks" / "nemo_rl_grpo_math.yaml"

MCORE = """\
    mcore_generation_config:
      max_model_len: ${policy.max_total_sequence_length}
      cuda_graph_impl: "local"
      inference_cuda_graph_scope: "block"
      buffer_size_gb: 10
      num_cuda_graphs: 4
      block_size_tokens: 256
      use_cuda_graphs_for_non_decode_steps: true
      enable_chunked_prefill: true
      enable_prefix_caching: false
      max_tokens: 16384
      kv_cache_management_mode: "persist"
      materialize_only_last_token_logits: true
      num_speculative_tokens: 0
      refit_backend: "nccl"
"""
"""grpo_math_1B.yaml's ``policy.generation.mcore_generation_config`` (lines 394-408)."""

SYNC = """\
grpo:
  num_prompts_per_step: 2
  num_generations_per_prompt: 8
policy:
  model_name: qwen3-30b-a3b
  train_global_batch_size: 16
  train_micro_batch_size: 1
  logprob_batch_size: 1
  max_total_sequence_length: 2048
  megatron_cfg:
    enabled: true
    bias_activation_fusion: false
    tensor_model_parallel_size: 2
    expert_model_parallel_size: 8
    sequence_parallel: true
  dtensor_cfg:
    enabled: false
  sequence_packing:
    enabled: false
  generation:
    backend: megatron
{generation}cluster:
  gpus_per_node: 4
  num_nodes: 4
  segment_size: 2
"""
"""grpo-nanov3-30BA3B-4n4g-megatron_sync_colocated.yaml (model renamed, logging left out)."""

ASYNC = SYNC.replace("  num_generations_per_prompt: 8\n", """\
  num_generations_per_prompt: 8
  async_grpo:
    enabled: true
    max_trajectory_age_steps: 4
    in_flight_weight_updates: true
""")
"""grpo-nanov3-30BA3B-4n4g-megatron_async_colocated.yaml: the sync recipe with these keys."""

RESHARD = """\
    mcore_generation_config:
      transformer_impl: inference_optimized
      moe_router_dtype: fp32
      activation_checkpointing: false
      tensor_model_parallel_size: 4
      expert_model_parallel_size: 4
      sequence_parallel: true
"""
"""grpo-nanov3-30BA3B-4n4g-megatron_colocated_reshard.yaml's generation keys."""


def _recipe(tmp_path: Path, body: str, generation: str = MCORE) -> Path:
    """A recipe two directories below a copy of the base config, as NeMo RL lays them out."""
    shutil.copy(BASE, tmp_path / "grpo_math.yaml")
    (tmp_path / "recipes" / "llm").mkdir(parents=True, exist_ok=True)
    recipe = tmp_path / "recipes" / "llm" / "recipe.yaml"
    recipe.write_text("defaults: ../../grpo_math.yaml\n" + body.format(generation=generation))
    return recipe


def _flags(tmp_path: Path, body: str, generation: str = MCORE,
           overrides: list[str] | None = None) -> dict:  # fmt: skip
    return dict(import_nemo_rl(_recipe(tmp_path, body, generation), overrides).flags)


def test_the_sync_colocated_recipe_runs_the_megatron_engine(tmp_path: Path) -> None:
    f = _flags(tmp_path, SYNC)
    assert f["--engine"] == "megatron" and f["--kv-buffer-gib"] == 10  # buffer_size_gb
    # persist: the pool stays beside the trainer; the engine serves the policy's weights, so
    # only the optimizer and the gradient buffers leave at refit (offload_before_refit)
    assert "--no-sleep" in f and f["--offload"] == "optimizer-idle,grads-idle"
    assert "--rollout-tp" not in f and "--gpu-memory-utilization" not in f
    assert "--placement" not in f and (f["--tp"], f["--ep"]) == (2, 8)
    g = _flags(tmp_path, SYNC, MCORE.replace('"persist"', '"offload"').replace(
        '"local"', '"none"').replace("enable_prefix_caching: false", "enable_prefix_caching: "
                                     "true").replace("max_tokens: 16384", "max_tokens: 8192"))
    assert "--sleep" in g and "--enforce-eager" in g and "--prefix-caching" in g
    assert g["--max-num-batched-tokens"] == 8192


def test_the_async_colocated_recipe_is_one_group_streaming(tmp_path: Path) -> None:
    f = _flags(tmp_path, ASYNC)
    assert (f["--placement"], f["--staleness"], f["--in-flight-batches"]) == ("async", 4, 4)
    assert "--partial-rollout" in f and f["--groups"] == "actor+reference=16"
    # without the Megatron backend NeMo RL refuses colocated async GRPO (grpo.py assert)
    vllm = ASYNC.replace("    backend: megatron\n", "    backend: vllm\n")
    with pytest.raises(SpecError, match="only on the Megatron generation backend"):
        _flags(tmp_path, vllm, "")
    with pytest.raises(SpecError, match="enable policy.megatron_cfg"):  # a DTensor policy
        _flags(tmp_path, SYNC, MCORE, ["policy.megatron_cfg.enabled=false",
                                       "policy.dtensor_cfg.enabled=true"])


def test_the_reshard_recipe_gets_an_inference_layout(tmp_path: Path) -> None:
    f = _flags(tmp_path, SYNC, MCORE + RESHARD)
    assert (f["--rollout-tp"], f["--rollout-ep"]) == (4, 4)  # dedicated_inference_megatron_cfg
    # the training model goes to host memory after the reshard (_reshard_into_inference_model)
    assert f["--offload"] == "optimizer-idle,params-idle,grads-idle"


def _estimate(tmp_path: Path, body: str, generation: str = MCORE,
              more: tuple[str, ...] = ()):  # noqa: ANN202
    q = import_nemo_rl(_recipe(tmp_path, body, generation),
                       ["policy.model_name=qwen3-30b-a3b", *more], 1024)  # fmt: skip
    return evaluate_deployment(run_from_argv(q.algorithm, q.argv() + ["--hardware", "h100"]))


def _jobs(e, kind: Kind):  # noqa: ANN001, ANN202
    return [j for g in e.groups for j in g.jobs if j.task.kind is kind]


def test_shared_weights_no_refit_and_the_pool_beside_training(tmp_path: Path) -> None:
    e = _estimate(tmp_path, SYNC)
    (gen,), (train,) = _jobs(e, Kind.GENERATE), _jobs(e, Kind.TRAIN)
    assert gen.memory.weights == train.memory.weights  # one copy, the trainer's
    assert gen.memory.kv_cache == kv_buffer_bytes(10) == 10 * 2**30
    assert train.memory.engine == 10 * 2**30  # persist: the pool stays while training
    kinds = {t.kind for g in e.groups for t in g.transfers}
    assert "weight-sync" not in kinds and "reshard" not in kinds  # no refit at all
    assert not any(p.name == "weight sync" for p in e.phases)
    # the same run on vLLM (its own copy, refitted each step) carries a refit and a sleep
    v = _estimate(tmp_path, SYNC.replace("    backend: megatron\n", "    backend: vllm\n"), "")
    assert any(t.kind == "weight-sync" for g in v.groups for t in g.transfers)


def test_offload_mode_moves_the_pool_and_a_dedicated_layout_reshards(tmp_path: Path) -> None:
    off = _estimate(tmp_path, SYNC, MCORE.replace('"persist"', '"offload"'))
    (train,) = _jobs(off, Kind.TRAIN)
    assert train.memory.engine == 0
    (moved,) = [t for g in off.groups for t in g.transfers if "suspend/resume" in t.what]
    assert moved.bytes_per_device == 2 * 10 * 2**30  # the pool to host memory and back
    r = _estimate(tmp_path, SYNC, MCORE + RESHARD)
    (gen,), (train,) = _jobs(r, Kind.GENERATE), _jobs(r, Kind.TRAIN)
    assert (gen.layout.tp, gen.layout.ep) == (4, 4)
    assert any(t.kind == "reshard" for g in r.groups for t in g.transfers)
    (copy,) = [t for g in r.groups for t in g.transfers if "suspend/resume" in t.what]
    assert copy.bytes_per_device == 2 * gen.own.weights  # its inference copy out and back


def test_async_colocated_step_is_the_sum_of_its_phases(tmp_path: Path) -> None:
    sync, stream = _estimate(tmp_path, SYNC), _estimate(tmp_path, ASYNC)
    # one group: generation, forwards and update in sequence, so the step is their sum
    assert stream.iteration_time_s == pytest.approx(sum(p.time_s for p in stream.phases))
    assert len(stream.groups) == 1
    # the stream's marginal batch has no long tail: shorter than the drained batch
    gen = [next(p.time_s for p in e.phases if p.name == "generation") for e in (stream, sync)]
    assert gen[0] < gen[1]
    assert stream.iteration_time_s < sync.iteration_time_s
    assert any("asynchronous on shared GPUs" in n for n in stream.notes)


def test_max_requests_follows_megatron_core() -> None:
    # dynamic_context.py: pool_size - 1 (the dummy block), // tp * tp, // 4 * 4
    assert max_requests(1000, 2) == 996 and max_requests(11, 8) == 8
    assert max_requests(2, 1) == 1  # one usable block
    assert kv_buffer_bytes(2.5) == int(2.5 * 1024**3)


@pytest.mark.parametrize(("argv", "match"), [
    (["--engine", "megatron", "--gpu-memory-utilization", "0.5"], "drop --gpu-memory-util"),
    (["--kv-buffer-gib", "4"], "add --engine megatron"),
    (["--engine", "megatron", "--zero", "1", "--kv-buffer-gib", "inf"], "finite number"),
    (["--engine", "megatron", "--rollout-dtype", "fp8"], "policy's own weights"),
    (["--placement", "async", "--groups", "actor+reference=8"], "--engine megatron"),
    # megatron_cfg.enabled is required (nemo_rl/models/generation/megatron); its worker
    # gathers whole weights before decoding ("Incompatible with FSDP2", megatron_worker.py)
    (["--engine", "megatron", "--zero", "3"], "give --zero 1"),  # the DTensor (FSDP2) policy
    (["--engine", "megatron", "--zero", "3", "--rollout-tp", "2"], "give --zero 1"),
])
def test_combinations_nemo_rl_refuses_are_clear_errors(argv: list[str], match: str) -> None:
    out = CliRunner().invoke(app, ["grpo", "-m", "qwen3-1.7b", "--gpus", "8", "-H", "h100",
                                   *argv])  # fmt: skip
    assert out.exit_code == 2 and "Traceback" not in out.output
    assert match in " ".join(out.output.split())


def test_an_algorithm_that_generates_nothing_reads_no_engine() -> None:
    # DPO trains on a fixed preference set: no generation, so no engine's rule applies
    out = CliRunner().invoke(app, ["dpo", "-m", "qwen3-1.7b", "--gpus", "8", "-H", "h100",
                                   "--engine", "megatron"])  # fmt: skip
    assert out.exit_code == 0, out.output


def test_a_pool_smaller_than_one_sequence_names_its_knob() -> None:
    out = CliRunner().invoke(app, ["grpo", "-m", "qwen3-1.7b", "--gpus", "8", "-H", "h100",
                                   "--engine", "megatron", "--kv-buffer-gib", "0.001",
                                   "--zero", "1"])  # fmt: skip
    assert out.exit_code == 0 and "Traceback" not in out.output
    assert "raise --kv-buffer-gib" in " ".join(out.output.split())


def test_an_engine_apart_is_refitted(tmp_path: Path) -> None:
    # grpo-llama3.2-1b-instruct-2n8g-megatron_generation-noncolocated.yaml: generation on one
    # node of its own (colocated.enabled false, resources 8 x 1) of two; here 2 x 4 of 4 x 4
    body = SYNC.replace("    backend: megatron\n", """\
    backend: megatron
    colocated:
      enabled: false
      resources:
        gpus_per_node: 4
        num_nodes: 2
""")
    f = _flags(tmp_path, body)
    assert f["--groups"] == "rollout=8[tp=2;ep=8],actor+reference=8"  # the training layout
    # grpo_math_1B.yaml's expert_tensor_parallel_size 1 (line 217; the fixture has none)
    e = _estimate(tmp_path, body, MCORE, ("policy.megatron_cfg.expert_tensor_parallel_size=1",))
    assert any(t.kind == "weight-sync" for t in e.syncs)  # the reshard copy service's refit
    (gen,) = _jobs(e, Kind.GENERATE)
    assert (gen.layout.tp, gen.layout.ep, gen.layout.expert_tp) == (2, 8, 1)


def test_the_nemo_rl_preset_on_the_megatron_engine() -> None:
    # grpo_math_1B.yaml: the vllm_cfg defaults (TP 1, 0.6) size vLLM only; Megatron-core's
    # pool persists (kv_cache_management_mode persist): no sleep
    import json

    out = CliRunner().invoke(app, ["grpo", "-m", "qwen3-1.7b", "--gpus", "8", "-H", "h100",
                                   "--framework", "nemo-rl", "--engine", "megatron", "--zero", "1",
                                   "--json"])  # fmt: skip
    data = json.loads(out.stdout)
    engine = data["run"]["deployment"]["engine"]
    assert (engine["kind"], engine["sleep"], engine["tp"]) == ("megatron", False, None)
    assert engine["gpu_memory_utilization"] is None and engine["kv_buffer_gib"] is None
    # the deployment line's flags are this engine's defaults, not vLLM's (the line is the last
    # note, as the text ends with it)
    flags = data["notes"][-1].split("as flags: ")[1].split(")")[0].split()
    assert "--no-sleep" in flags and "--sleep" not in flags
    assert not {"--rollout-tp", "--gpu-memory-utilization", "--max-num-seqs"} & set(flags)


def _cli(argv: list[str]):  # noqa: ANN202 - the evaluation of a grpo command line
    return evaluate_deployment(run_from_argv("grpo", ["--hardware", "h100", "--engine",
                                                      "megatron", "--zero", "1", *argv]))


_MOE = ["-m", "qwen3-30b-a3b", "--gpus", "16", "--tp", "2", "--ep", "8"]


@pytest.mark.parametrize(("argv", "engine", "dedicated"), [
    (["-m", "8b", "--gpus", "8"], ["--rollout-tp", "1"], False),  # the trainer's TP 1
    (_MOE, ["--rollout-tp", "2", "--rollout-ep", "8"], False),  # the trainer's TP and EP
    (_MOE, ["--rollout-ep", "4"], True),  # EP 4 alone: a layout of its own (it was ignored)
])  # fmt: skip
def test_an_inference_layout_of_its_own_only_where_it_differs(argv: list[str], engine: list[str],
                                                              dedicated: bool) -> None:
    # config.py dedicated_inference_megatron_cfg: None (the training model shared) unless the
    # merged tensor/pipeline/expert parallel sizes differ from training's (or CP > 1)
    e = _cli(argv + engine)
    (gen,), (train,) = _jobs(e, Kind.GENERATE), _jobs(e, Kind.TRAIN)
    moved = [t for g in e.groups for t in g.transfers if "-> generate layout" in t.what
             or "suspend/resume" in t.what]  # fmt: skip
    assert bool(moved) is dedicated
    if dedicated:
        assert gen.layout.ep == 4
    else:
        assert gen.layout == train.layout  # the policy's own model, as when none is given
        assert gen.memory == _jobs(_cli(argv), Kind.GENERATE)[0].memory


def test_host_memory_holds_what_the_engine_parks_there() -> None:
    # megatron_worker.py finish_generation: a dedicated inference copy backed to host memory
    # (_offload_inference_model, torch_memory_saver with a CPU backup) whatever the pool's
    # mode; kv_cache_management_mode offload (--sleep): the pool to host memory (Megatron-core
    # KVCacheManagementMode.OFFLOAD). 8 GPUs per H100 node.
    host = {tuple(a): _cli(_MOE + a).host_memory_bytes_per_node
            for a in ([], ["--sleep"], ["--rollout-ep", "4"])}  # fmt: skip
    assert host[("--sleep",)] - host[()] == 8 * kv_buffer_bytes(10)
    copy = _jobs(_cli(_MOE + ["--rollout-ep", "4"]), Kind.GENERATE)[0].own.weights
    assert host[("--rollout-ep", "4")] - host[()] == 8 * copy


def test_the_trainers_batching_is_no_second_model_and_cp_is_pinned_to_one() -> None:
    # config.py dedicated_inference_megatron_cfg compares the TP/PP/EP/expert-TP/CP sizes:
    # a token budget that packs 4 sequences per training micro-batch leaves the model shared
    def moved(e) -> list:  # noqa: ANN001
        return [t for g in e.groups for t in g.transfers if "-> generate layout" in t.what
                or "suspend/resume" in t.what]  # fmt: skip

    budget = _cli(["-m", "8b", "--gpus", "8", "--max-tokens-per-gpu", "8192"])
    assert _jobs(budget, Kind.TRAIN)[0].layout.micro_batch > 1 and not moved(budget)
    # "Inference never uses CP, so CP is pinned to 1 (CP>1 training therefore always differs)"
    cp = _cli(["-m", "8b", "--gpus", "8", "--cp", "2", "-T", "4096"])
    (gen,) = _jobs(cp, Kind.GENERATE)
    assert (gen.layout.cp, gen.layout.tp, gen.layout.dp) == (1, 1, 8) and moved(cp)


def test_the_command_line_reproduces_a_dedicated_megatron_layout() -> None:
    # `rlmcost run FILE --command` (Run.to_command): --rollout-ep and --kv-buffer-gib are flags
    import shlex

    run = run_from_argv("grpo", [*_MOE, "--zero", "1", "--engine", "megatron", "--rollout-ep",
                                 "4", "--kv-buffer-gib", "4.5", "--sleep"])  # fmt: skip
    words = shlex.split(run.to_command())
    assert words[words.index("--rollout-ep") + 1] == "4"
    assert run_from_argv("grpo", words[words.index("grpo") + 1:]) == run


def test_only_nemo_rl_generates_with_megatron_core() -> None:
    """NeMo RL is the only framework with a preset whose generation backend can be
    Megatron-core (nemo_rl/models/generation/megatron/ at 7ea279abf); another framework's
    preset with --engine megatron is a one-line error naming the fix (its vLLM sizes had met
    the engine's own check: "drop --gpu-memory-utilization", a flag never given)."""
    from rlmcost.deployment.spec import Deployment
    from rlmcost.frameworks.megatron_checks import check_megatron_framework as check_framework
    from rlmcost.run import Run

    for fw in ("verl", "openrlhf", "trl", "slime"):
        res = CliRunner().invoke(app, ["grpo", "-m", "llama-3.2-1b", "--gpus", "8", "--framework",
                                       fw, "--engine", "megatron", "--zero", "1"])
        assert res.exit_code != 0 and "Traceback" not in res.output
        assert "NeMo RL's Megatron-core generation backend" in res.output, fw
        assert "gpu-memory-utilization" not in res.output
    with pytest.raises(SpecError, match="verl does not run it"):  # the API's Run the same
        Run.from_data({"algorithm": {"name": "grpo"}, "models": {"actor": "llama-3.2-1b"},
                       "deployment": {"framework": "verl", "engine": {"kind": "megatron"},
                                      "train": {"zero": "1"}}})  # fmt: skip
    check_framework("nemo-rl")
    check_framework(None)
    with pytest.raises(SpecError, match="--framework nemo-rl"):
        check_framework("verl")
    assert Deployment(framework="verl").engine.kind.value == "vllm"


def test_the_nemo_rl_preset_runs_the_megatron_policy_under_its_engine() -> None:
    """NeMo RL's Megatron generation decodes on its Megatron policy (megatron_generation.py
    effective_megatron_cfg @7ea279abf), configured as examples/configs/grpo_math_1B_megatron.yaml
    (v0.4.0-v0.7.0): use_distributed_optimizer true (ZeRO-1), bf16 with fp32 main parameters.
    Under --engine megatron the preset takes those, not its DTensor worker's ZeRO-3 and fp32
    parameters (which the engine refuses); a given --zero still wins."""
    import json

    res = CliRunner().invoke(app, ["grpo", "-m", "llama-3.2-1b", "--gpus", "8", "--engine",
                                   "megatron", "--json"])  # fmt: skip
    assert res.exit_code == 0, res.output
    train = json.loads(res.stdout)["run"]["deployment"]["train"]
    assert (train["zero"], train["param_dtype"]) == ("1", "bf16")
    # offload_before_refit of the Megatron policy: the optimizer out, the gradient buffers
    # freed; the parameters stay for the engine decoding with them (as the importer reads
    # the sync colocated recipe, test_the_sync_colocated_recipe_runs_the_megatron_engine)
    assert train["offload"] == ["optimizer-idle", "grads-idle"]
    vllm = json.loads(CliRunner().invoke(app, ["grpo", "-m", "llama-3.2-1b", "--gpus", "8",
                                               "--json"]).stdout)["run"]["deployment"]["train"]
    assert (vllm["zero"], vllm["param_dtype"]) == ("3", "fp32")
    assert vllm["offload"] == ["optimizer-idle", "params-idle"]
    res = CliRunner().invoke(app, ["grpo", "-m", "llama-3.2-1b", "--gpus", "8", "--engine",
                                   "megatron", "--zero", "0", "--json"])  # fmt: skip
    assert json.loads(res.stdout)["run"]["deployment"]["train"]["zero"] == "0"
