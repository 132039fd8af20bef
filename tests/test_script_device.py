"""The accelerator a verl launch script names (rlmcost.frameworks.script_device; issue 18: verl's
examples/tuning/32b/qwen2_32B_grpo_8_h20_megatron_vllm.sh, which verl's docs/perf/device_tuning.rst
@b178a3cd5 lists as run on 8*H20, was priced on the 80 GB H100 and called "does not fit").

Sources: verl's naming convention ``[model]_[task]_[gpunums]_[device]_[train]_[infer].sh``
(docs/perf/device_tuning.rst); its comments "# Example runnable on H20 * 8"
(examples/ppo_trainer/run_deepseek_math_gsm8k_megatron.sh) and "# tested in NNODES=1~4 * 96G H20
GPU" (examples/grpo_trainer/run_qwen3moe-30b_megatron_96gb.sh).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from rlmcost.frameworks.launch_scripts import import_verl_script
from rlmcost.frameworks.script_device import script_device

SCRIPTS = Path(__file__).parent / "data" / "scripts"
H20_32B = SCRIPTS / "verl_qwen2-32b_grpo_8_h20_megatron.sh"  # verl's 8*H20 tuning script
LORA = SCRIPTS / "verl_qwen2-7b_grpo-lora_1_h100.sh"


@pytest.mark.parametrize(
    ("name", "comment", "hardware"),
    [
        ("qwen2_32B_grpo_8_h20_megatron_vllm.sh", "", "h20"),
        ("qwen2-7b_grpo_2_h800_fsdp_vllm.sh", "", "h800"),
        ("qwen2-7b_grpo-lora_1_h100_fsdp_vllm.sh", "", "h100-sxm"),
        ("run.sh", "# Example runnable on H20 * 8", "h20"),
        ("run.sh", "# tested in NNODES=1~4 * 96G H20 GPU", "h20"),
        ("run.sh", "# on H20 set gpu_memory_utilization lower", None),  # says nothing ran
        ("run.sh", "# tested on H20\n# runs on H800 too", None),  # two: neither
        ("run_qwen2-7b_a100.sh", "", None),  # A100 40 GB or 80 GB: not one accelerator
        ("run_qwen3-235b_megatron_96gb.sh", "", None),  # a size names no accelerator
        ("run_qwen3_h20_h800.sh", "# tested on H100", None),  # its name names two
    ],
)
def test_the_script_names_its_accelerator(tmp_path, name, comment, hardware) -> None:
    script = tmp_path / name
    script.write_text(f"set -x\n{comment}\npython3 -m verl.trainer.main_ppo a=1\n")
    found = script_device(script)
    assert (found and found[0]) == hardware


def test_the_h20_tuning_script_is_priced_on_h20_and_fits() -> None:
    """Without -H the 8*H20 Qwen2.5-32B script is priced on the H20 (95.0 GiB usable) and fits;
    on the H100 (79.2 GiB) it does not: the name decides the verdict, -H still wins."""
    from rlmcost.cli.validate import run_from_argv
    from rlmcost.evaluation.deployment import evaluate_deployment

    q = import_verl_script(H20_32B, [], [], None, None)
    assert q.hardware == "h20" and "--hardware" not in dict(q.flags)  # run_import sets it
    assert any(c.flag == "--hardware" and "device_tuning.rst" in c.given for c in q.conversions)
    verdict = {hw: evaluate_deployment(run_from_argv(q.algorithm, [*q.argv(), "--hardware", hw])
                                       ).fits for hw in ("h20", "h100-sxm")}  # fmt: skip
    assert verdict == {"h20": True, "h100-sxm": False}
    given = import_verl_script(H20_32B, [], [], None, "h100")
    assert given.hardware is None  # -H: the importer's caller sets it


def test_a_comment_names_the_accelerator_of_an_imported_script(tmp_path) -> None:
    script = tmp_path / "run_qwen2_7b.sh"
    script.write_text("# Example runnable on H20 * 8\n" + LORA.read_text())
    q = import_verl_script(script, [], [], None, None)
    assert q.hardware == "h20"
    assert any("comment on line 1" in c.given for c in q.conversions)
