"""OpenRLHF's DPO launch scripts (rlmcost.frameworks.openrlhf_dpo, shell_read, the lexer's
here-documents): ``read -r -d '' training_commands <<EOF ... EOF`` then ``deepspeed --module
$training_commands`` imports as ``rlmcost dpo``, the arguments of openrlhf/cli/train_dpo.py
@3c3be623 mapped, the GPUs from the launcher. The scripts are copied under
tests/data/scripts/openrlhf_checkout (each names its repository path and commit on its first
lines); here-documents are read as bash 5.2 reads them (the values asserted are bash's)."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rlmcost.cli import app
from rlmcost.errors import SpecError
from rlmcost.frameworks.launch_scripts import import_openrlhf_script
from rlmcost.frameworks.openrlhf_dpo import import_openrlhf_argv, launcher_gpus
from rlmcost.frameworks.shell_script import read_launch

CHECKOUT = Path(__file__).parent / "data" / "scripts" / "openrlhf_checkout" / "examples" / "scripts"
DPO = CHECKOUT / "train_dpo_llama.sh"
NONRL = CHECKOUT / "train_nonrl_slurm.sh"
runner = CliRunner()


def _typed() -> list[str]:
    """train_dpo_llama.sh's here-document, typed by hand: the words after the entry point."""
    body = DPO.read_text().split("<<EOF\n", 1)[1].split("\nEOF\n", 1)[0]
    return shlex.split(body.replace("\\\n", " "))[1:]


def test_here_documents_read_as_bash_does(tmp_path) -> None:
    """bash 5.2 prints each value asserted: an unquoted delimiter expands ``$X`` and keeps
    ``\\$``, quotes literal, backslash-newline joined; ``<<'EOF'`` literal; ``<<-EOF`` cuts
    leading tabs; ``read`` without ``-d ''`` takes the first line, a word per name and the rest
    for the last; without ``-r`` a backslash keeps the next character."""
    script = tmp_path / "hd.sh"
    script.write_text("X=5\nread -r -d '' A <<EOF\nfirst \\\n  \"q\" 'y' \\$X $X\n\ttab\nEOF\n"
                      "read -r -d '' B <<'EOF'\nlit $X \\\nEOF\n"
                      "read -r -d '' C <<-EOF\n\t\ttabbed $X\n\tEOF\n"
                      "read D E <<EOF\n  one two  three\nsecond\nEOF\n"
                      'read F <<< "a\\\\b c"\n'
                      'python3 train.py "$A" "$B" "$C" "$D" "$E" "$F"\n')  # fmt: skip
    launch = read_launch(script, ("train.py",), [], {})
    assert launch.words == ["first   \"q\" 'y' $X 5\n\ttab", "lit $X \\", "tabbed 5", "one",
                            "two  three", "ab c"]  # fmt: skip
    assert not launch.unresolved


def test_a_here_document_feeds_only_its_own_command(tmp_path) -> None:
    """``cat <<EOF; read -r V`` : the here-document is cat's input; V reads the script's
    input, which it does not hold (no value)."""
    script = tmp_path / "run.sh"
    script.write_text("cat <<EOF; read -r V\n--a 1\nEOF\npython3 train.py $V\n")
    launch = read_launch(script, ("train.py",), [], {})
    assert "from the script's input" in launch.unresolved[0].why


def test_an_unknown_value_in_a_here_document_keeps_its_variable(tmp_path) -> None:
    """A variable the script does not give stays in the command it builds (as an assignment's
    value does): a cost-free one (a data path) imports, noted; a batch size is asked for."""
    text = DPO.read_text().replace("OpenRLHF/preference_dataset_mixture2_and_safe_pku",
                                   "$DATA/prefs")  # fmt: skip
    script = tmp_path / "dpo.sh"
    script.write_text(text)
    q = import_openrlhf_script(script, [], [], 8)
    assert any("$DATA" in n for n in q.notes)
    script.write_text(text.replace("--train.batch_size 256", "--train.batch_size $BS"))
    with pytest.raises(SpecError, match=r"\$BS .* is not set in the script.*--env BS=VALUE"):
        import_openrlhf_script(script, [], [], 8)


@pytest.mark.parametrize(("text", "said"), [
    ("read -r -d '' C <<EOF\n--a 1\n", "a here-document <<EOF does not end"),
    ("read -r -d '' C <<EOF\n--a 1\n  EOF\n", "a here-document <<EOF does not end"),  # indented
    ("A=" + "x" * 600_000 + "\nread -r -d '' C <<EOF\n$A $A\nEOF\n", "grows past 1,048,576"),
    ("read -r -d '' C <<EOF\n" + "--a 1\n" * 200_000 + "EOF\n", "scripts over 1,048,576 bytes"),
])  # fmt: skip
def test_hostile_here_documents_end_in_one_line(tmp_path, text: str, said: str) -> None:
    script = tmp_path / "bad.sh"
    script.write_text(text + "deepspeed --module $C\n")
    res = runner.invoke(app, ["import", "openrlhf", str(script), "--gpus", "8"])
    assert res.exit_code != 0 and res.exception is None or isinstance(res.exception, SystemExit)
    assert said in " ".join(res.output.split())


def test_dpo_script_imports_as_its_arguments_typed() -> None:
    """OpenRLHF examples/scripts/train_dpo_llama.sh @3c3be623: the here-document's words are
    the query's, typed after ``deepspeed --num_gpus 8 --module openrlhf.cli.train_dpo``; the
    script's ``deepspeed --module`` names no count, so ``--gpus 8`` gives it."""
    q = import_openrlhf_script(DPO, [], [], 8)
    typed = import_openrlhf_argv(["deepspeed", "--num_gpus", "8", "--module",
                                  "openrlhf.cli.train_dpo", *_typed()], None)  # fmt: skip
    assert q.flags == typed.flags and q.algorithm == typed.algorithm == "dpo"
    flags = dict(q.flags)
    # train_dpo.py: batch_size pairs 256; micro_batch_size 1 pair = chosen + rejected, 2
    # sequences; max_len 8192 = prompt + response; ZeRO-3, packing, gradient checkpointing
    assert (flags["--batch"], flags["--micro-batch"], flags["--gpus"]) == (256, 2, 8)
    assert flags["--prompt-len"] + flags["--response-len"] == 8192
    assert (flags["--zero"], flags["--ckpt"], flags["--init-load"]) == ("3", "full", "sharded")
    assert "--packing" in flags and q.ignored == []
    with pytest.raises(SpecError, match=r"deepspeed \(no --num_gpus nor --include\) .*give "
                                        r"--gpus N"):  # fmt: skip
        import_openrlhf_script(DPO, [], [])


def test_dpo_import_runs_the_query_typed_by_hand() -> None:
    """The import's Run (its --json ``run``) is that of ``rlmcost dpo`` with the flags the
    query states; 8 x H100 hold it and the step's time lies between its roofline bound and an
    hour. Independent floors: the work is at least 6 FLOP per parameter and token for the
    policy's forward and backward and 2 for the reference's forward (Kaplan et al. 2020,
    arXiv:2001.08361 §2.1, C = 6N; the 0.53 B-parameter input embedding of Llama-3-8B's
    8.03 B is a lookup), over 2 x 256 sequences of 8192 tokens; the training peak per device
    is at least ZeRO-3's 16 bytes per parameter over 8 GPUs (Rajbhandari et al. 2020,
    arXiv:1910.02054 §5: bf16 weights and gradients, fp32 master weights and Adam m, v)."""
    res = runner.invoke(app, ["import", "openrlhf", str(DPO), "--gpus", "8", "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    argv = out["query"]["argv"]
    by_hand = runner.invoke(app, [*argv, "--hardware", "h100-sxm", "--json"])
    assert by_hand.exit_code == 0, by_hand.output
    hand = json.loads(by_hand.stdout)
    assert out["estimate"]["run"] == hand["run"]
    est = out["estimate"]
    assert est["algorithm"] == "dpo" and est["fits"] and est["gpus"] == 8
    it = est["iteration"]
    assert it["time_lower_bound_s"] < it["time_s"] < 3600
    params, embedding, tokens = 8_030_261_248, 128_256 * 4096, 2 * 256 * 8192
    assert it["work_flops"] >= 8 * (params - embedding) * tokens
    assert est["device_memory_bytes"]["training"] >= 16 * params // 8


def test_dpo_cost_reads_the_arguments_that_change_it() -> None:
    """train_dpo.py's cost arguments move the query; its cost-free ones (beta, the NLL term,
    a data key) leave it; an unknown one is listed as ignored."""
    base = ["deepspeed", "--num_gpus", "4", "--num_nodes", "2", "--module",
            "openrlhf.cli.train_dpo", "--model.model_name_or_path", "Qwen/Qwen2.5-7B"]  # fmt: skip
    q = import_openrlhf_argv([*base, "--ds.ring_attn_size", "2", "--ds.packing_samples",
                              "--ds.adam_offload", "--ref.offload", "--ds.lora.rank", "16",
                              "--ds.zero_stage", "3",
                              "--model.beta", "0.5", "--model.nll_loss_coef", "0.2",
                              "--data.chosen_key", "c", "--ds.not_an_arg", "1"], None)
    flags = dict(q.flags)
    assert (flags["--gpus"], flags["--cp"], flags["--lora-rank"]) == (8, 2, 16)
    assert flags["--offload"] == "optimizer,grads" and "--offload-idle" in flags
    # argparse defaults: batch 128 pairs, micro 8 pairs (16 sequences), max_len 512
    assert (flags["--batch"], flags["--micro-batch"], flags["--zero"]) == (128, 16, "3")
    assert flags["--prompt-len"] + flags["--response-len"] == 512
    assert q.ignored == ["--ds.not_an_arg"]
    # ZeRO-2 (the default): the reference runs at stage 0, where DeepSpeed offloads nothing
    two = import_openrlhf_argv([*base, "--ref.offload"], None)
    assert dict(two.flags)["--zero"] == "2" and "--offload-idle" not in dict(two.flags)
    assert any("--ref.offload: no effect" in n for n in two.notes)
    with pytest.raises(SpecError, match="QLoRA"):
        import_openrlhf_argv([*base, "--ds.load_in_4bit"], None)
    with pytest.raises(SpecError, match="give --model.model_name_or_path"):
        import_openrlhf_argv(base[:-2], None)


@pytest.mark.parametrize(("words", "gpus"), [
    (["deepspeed", "--num_gpus", "8", "--module"], 8),
    (["deepspeed", "--num_gpus=4", "--num_nodes", "2", "--module"], 8),
    (["deepspeed", "--include", "localhost:0,1,2,3", "--module"], 4),
    (["deepspeed", "-i", "a:0,1@b:0,1,2", "--module"], 5),
    (["deepspeed", "--include", "localhost", "--module"], None),  # all of its GPUs
    (["deepspeed", "--hostfile", "hosts", "--num_gpus", "8", "--module"], None),  # nodes?
    (["deepspeed", "--module"], None),
    (["torchrun", "--nproc_per_node", "8", "--nnodes", "2", "-m"], 16),
    (["torchrun", "--nproc-per-node=4", "-m"], 4),
    (["torchrun", "--nproc_per_node", "gpu", "-m"], None),
    (["python3", "-m"], None),
])  # fmt: skip
def test_launcher_gpus_as_deepspeed_and_torchrun_count_them(words, gpus) -> None:
    """deepspeed/launcher/runner.py: --num_gpus per node x --num_nodes (one node without a
    hostfile), --include NODE:SLOTS@...; torchrun: --nproc_per_node x --nnodes."""
    assert launcher_gpus(words)[0] == gpus


def test_nonrl_slurm_script_runs_the_dpo_script_it_sources() -> None:
    """OpenRLHF examples/scripts/train_nonrl_slurm.sh @3c3be623 sources train_dpo_llama.sh
    (its here-document) and runs ``torchrun --nproc_per_node 8 --nnodes $SLURM_NNODES -m
    ${training_commands}`` inside ``srun ... bash -c``: the node count is asked for, and with
    it the query is train_dpo_llama.sh's on 8 x nodes GPUs."""
    with pytest.raises(SpecError, match=r"--nnodes \$SLURM_NNODES .*--env SLURM_NNODES=N"):
        import_openrlhf_script(NONRL, [], [])
    q = import_openrlhf_script(NONRL, [], ["SLURM_NNODES=2"])
    dpo = dict(import_openrlhf_script(DPO, [], [], 16).flags)
    assert dict(q.flags) == dpo and dpo["--gpus"] == 16
    # the sourced script's deepspeed launch (under its undecided if) and the torchrun one;
    # ``echo $training_commands`` prints the command, launches nothing
    assert "the script launches 2 times; the last, line 37, is read" in q.notes


def test_flat_arguments_of_earlier_openrlhf_read_as_their_dotted_names(tmp_path) -> None:
    """OpenRLHF examples/scripts/train_dpo_llama.sh @c1ba971c, the same run in train_dpo.py's
    flat arguments (--pretrain, --train_batch_size, --micro_train_batch_size, --max_len,
    --zero_stage, --gradient_checkpointing, ...; dotted from ed62d0e2): the same query; a
    flat cost argument with an unknown value is asked for."""
    old = Path(__file__).parent / "data" / "scripts" / "openrlhf_train_dpo_llama_c1ba971c.sh"
    q = import_openrlhf_script(old, [], [], 8)
    assert q.flags == import_openrlhf_script(DPO, [], [], 8).flags and q.ignored == []
    assert any("--pretrain as --model.model_name_or_path" in n for n in q.notes)
    script = tmp_path / "dpo.sh"
    script.write_text(old.read_text().replace("--train_batch_size 256", "--train_batch_size $BS"))
    with pytest.raises(SpecError, match=r"\$BS .*--env BS=VALUE"):
        import_openrlhf_script(script, [], [], 8)


@pytest.mark.parametrize(("script", "ipo", "smooth"), [
    (DPO, "--model.ipo_enable", "--model.label_smoothing"),
    (Path(__file__).parent / "data" / "scripts" / "openrlhf_train_dpo_llama_c1ba971c.sh",
     "--ipo", "--label_smoothing"),
])  # fmt: skip
def test_the_scripts_ipo_and_cdpo_options_set_the_loss(script, ipo, smooth, tmp_path) -> None:
    """train_dpo_llama.sh (@3c3be623; @c1ba971c in the flat names) comments its loss options:
    ``# --model.ipo_enable [for IPO]``, ``# --model.label_smoothing 0.1 [for cDPO]``.
    openrlhf/models/loss.py DPOLoss @3c3be623: ipo -> ``(logits - 1/(2 beta))**2``, else
    DPO's logsigmoid mixed by the label smoothing; the same passes either way. Taken: IPO is
    ``rlmcost ipo`` (the same estimate as dpo's), cDPO ``rlmcost dpo`` with a note; before,
    ``--ipo`` was a note on a dpo query and the label smoothing read nowhere."""
    def launch(*extra: str) -> object:
        path = tmp_path / f"dpo{len(extra)}.sh"
        text = script.read_text()
        path.write_text(text.replace("\nEOF\n", " \\\n   " + " ".join(extra) + "\nEOF\n", 1))
        return import_openrlhf_script(path, [], [], 8)

    plain, as_ipo = launch(), launch(ipo)
    assert (plain.algorithm, as_ipo.algorithm) == ("dpo", "ipo")
    assert as_ipo.flags == plain.flags and as_ipo.command().startswith("rlmcost ipo ")
    cdpo = launch(smooth, "0.1")
    assert cdpo.algorithm == "dpo" and cdpo.flags == plain.flags and cdpo.ignored == []
    assert any("label_smoothing 0.1: cDPO" in n for n in cdpo.notes)
    both = launch(ipo, smooth, "0.1")
    assert both.algorithm == "ipo" and any("does not use it" in n for n in both.notes)
    ran = [runner.invoke(app, ["ipo" if q is as_ipo else "dpo", *q.argv(), "--json"])
           for q in (plain, as_ipo)]  # fmt: skip
    assert all(r.exit_code == 0 for r in ran), ran[1].output
    times = [json.loads(r.stdout)["iteration"]["time_s"] for r in ran]
    assert times[0] == times[1]  # IPO: DPO's invocations (rlmcost.algorithms)
