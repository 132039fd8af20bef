"""verl's PrefixGrouper (``actor.use_prefix_grouper``; rlmcost.placement.prefix_grouper).

Independent references: PyTorch's FlopCounterMode over a transformers model built from a config
(the prompt run once with its KV cache kept, then each response against it, as the
``prefix_grouper`` package's split attention computes a group: prefix_grouper/forward.py at
johncaged/PrefixGrouper 050c6c38), an explicit enumeration of verl's rows (one per run of equal
``uid`` in a micro-batch: verl/trainer/ppo/prefix_grouper_utils.py ``build_pg_from_micro_batch``
at volcengine/verl b178a3cd), hand sums of the blocks' forward FLOPs, and verl's own example
launch script (examples/prefix_grouper/run_qwen3_prefix_grouper.sh @b178a3cd).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from rlmcost import blocks as bl
from rlmcost.cli import app
from rlmcost.placement.prefix_grouper import row_counts, rows_of
from rlmcost.run.command import to_command
from rlmcost.run.spec import Run
from rlmcost.specs import get_model

DATA = Path(__file__).parent / "data" / "frameworks"
SCRIPT = DATA / "verl_run_qwen3_prefix_grouper.sh"  # verl examples/prefix_grouper @b178a3cd
runner = CliRunner()

B, K, S, T = 16, 4, 512, 128
QUERY = ["grpo", "-m", "qwen3-0.6b", "-H", "h100", "--gpus", "2", "-B", str(B), "-K", str(K),
         "-S", str(S), "-T", str(T), "--framework", "verl", "--zero", "3", "--micro-batch", "8",
         "--forward-micro-batch", "8", "--json"]  # fmt: skip


def _json(args: list[str]) -> dict:
    res = runner.invoke(app, args)
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout[res.stdout.index("{"):])


def _jobs(out: dict) -> dict[tuple[str, str], dict]:
    return {(i["role"], i["kind"]): i for stage in out["stages"].values()
            for i in stage.get("invocations", [])}  # fmt: skip


def _spared(work, prompt: int, copies: int, responses: int) -> int:  # noqa: ANN001
    """The saving rlmcost prices, by hand: ``copies`` prompts' work W(0) and, counted full,
    the prompts' queries against their responses' keys (S t pairs at W's halved second
    difference)."""
    return copies * work(0) + (work(2) - 2 * work(1) + work(0)) // 2 * prompt * responses


def test_one_group_in_a_row_spares_what_flop_counter_mode_counts() -> None:
    torch = pytest.importorskip("torch")
    pytest.importorskip("transformers")
    import torch_models as tm

    from rlmcost.specs.hf_config import spec_from_config

    model = tm.build("llama", device="meta")
    arch = spec_from_config(model.config.to_dict(), name="under-test").arch()
    prompt, responses = 48, (5, 9, 17)

    def ids(n: int):  # noqa: ANN202
        return torch.zeros(1, n, dtype=torch.long, device="meta")

    with torch.no_grad():
        apart = sum(tm.count_forward(model, 1, prompt + t) for t in responses)
        with tm.counting() as c:  # the prompt once, its keys kept
            model(input_ids=ids(prompt), use_cache=True)
        grouped = c.get_total_flops()
        for t in responses:  # each response's queries over the prompt's keys and its own
            cache = model(input_ids=ids(prompt), use_cache=True).cache
            with tm.counting() as c:
                model(input_ids=ids(t), cache=cache, use_cache=True)
            grouped += c.get_total_flops()
    # source: FlopCounterMode; rlmcost's sequence work is the blocks' (tests/test_torch_exact.py)
    work = lambda t: int(bl.work_forward(arch, 1, prompt + t))  # noqa: E731
    assert apart - grouped == _spared(work, prompt, len(responses) - 1, sum(responses)) > 0


def _rows_by_enumeration(sequences: int, micro_batch: int, group: int) -> list[int]:
    uids = [i // group for i in range(sequences)]
    out = []
    for lo in range(0, sequences, micro_batch):
        mb = uids[lo:lo + micro_batch]
        out.append(1 + sum(a != b for a, b in zip(mb, mb[1:], strict=False)))  # uid runs
    return out


@given(st.integers(1, 300), st.integers(1, 64), st.integers(1, 17))
def test_rows_are_verls_uid_runs(sequences: int, micro_batch: int, group: int) -> None:
    rows = _rows_by_enumeration(sequences, micro_batch, group)
    assert row_counts(sequences, micro_batch, group) == (len(rows), sum(rows), max(rows))


def test_the_widest_row_holds_the_share_of_longest_responses() -> None:
    # 16 quantile lengths, micro-batches of 4: the heaviest stride share (4, 8, 12, 16);
    # groups of 3 fill a row with its three longest
    r = rows_of(100, tuple(range(1, 17)), 12, 4, 3)
    assert (r.micro_batches, r.rows, r.most) == (3, 6, 2)  # [g0 g1], [g1 g2], [g2 g3]
    assert (r.width, r.longest) == (100 + 8 + 12 + 16, 16)


def test_the_query_spares_the_prompt_copies_and_runs_faster() -> None:
    plain = _json([*QUERY, "--padded"])
    grouped = _json([*QUERY, "--padded", "--prefix-grouper"])
    a, b = _jobs(plain), _jobs(grouped)
    arch = get_model("qwen3-0.6b").arch()
    work = lambda t: int(bl.work_forward(arch, 1, S + t))  # noqa: E731
    n = B * K  # micro-batches of 8 hold two whole groups: one row a group, B rows
    forward = _spared(work, S, n - B, n * T)
    assert a["actor", "forward"]["work_flops"] - b["actor", "forward"]["work_flops"] == forward
    # the update: forward and backward (2 x forward), one epoch
    assert a["actor", "train"]["work_flops"] - b["actor", "train"]["work_flops"] == 3 * forward
    for key in (("actor", "forward"), ("actor", "train")):
        assert b[key]["time_s"] < a[key]["time_s"]
    assert a["actor", "generate"] == b["actor", "generate"]
    assert any("PrefixGrouper" in n for n in grouped["notes"])
    run = Run.from_data(grouped["run"])  # the Run reproduces it, its command too
    assert "--prefix-grouper" in to_command(run)
    assert _json([*to_command(run).split()[1:], "--json"])["run"] == grouped["run"]
    acts = [o["stages"]["training"]["memory_breakdown_bytes"]["activations"]
            for o in (plain, grouped)]  # fmt: skip
    assert acts[1] < acts[0]  # 2 rows of 512 + 4 x 128 tokens, not 8 sequences of 640


@pytest.mark.parametrize(("extra", "words"), [
    ([], "needs --padded"),
    (["--padded", "--cp", "2"], "without context parallelism"),
    (["--padded", "--max-tokens-per-gpu", "4096"], "without --max-tokens-per-gpu"),
])  # fmt: skip
def test_layouts_verl_would_fall_back_on_are_refused(extra: list[str], words: str) -> None:
    res = runner.invoke(app, [*QUERY, "--prefix-grouper", *extra])
    assert res.exit_code != 0
    assert words in res.output and "Traceback" not in res.output


def test_a_group_bracket_sets_it_on_its_trainer() -> None:
    out = _json([*QUERY, "--rollout-tp", "1", "--placement", "hybrid", "--groups",
                 "rollout=1,actor=1[padded;prefix-grouper]"])  # fmt: skip
    own = next(g for g in out["run"]["deployment"]["groups"] if g["members"] == "actor")
    assert own["train"]["padded"] is own["train"]["prefix_grouper"] is True
    assert out["run"]["deployment"]["train"]["prefix_grouper"] is False  # the run's own
    assert any("PrefixGrouper" in n for n in out["notes"])


def test_verls_example_script_imports_with_it() -> None:
    from verl_rows import import_verl_json

    out = import_verl_json(SCRIPT, hardware="h100")
    argv = out["query"]["argv"]
    assert "--prefix-grouper" in argv and "--padded" in argv
    notes = " ".join(out["query"]["notes"])
    assert "use_prefix_grouper: the actor's and reference's" in notes
    fallback = import_verl_json(SCRIPT, "actor_rollout_ref.model.use_remove_padding=True",
                                hardware="h100")  # fmt: skip
    assert "--prefix-grouper" not in fallback["query"]["argv"]
    assert "falls back" in " ".join(fallback["query"]["notes"])
