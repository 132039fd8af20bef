"""vLLM's own running cap where verl passes none (before verl PR 2960), by the vLLM that verl
pinned and the GPU (rlmcost.frameworks.verl_versions.vllm_own_running_cap).

Sources: verl setup.py (volcengine/verl) ``vllm<=0.6.3`` to PR 769 (1b8b0e83b, 2025-03-27),
then ``<=0.8.2``, ``<=0.8.3`` (PR 1186, 2025-04-21), ``<=0.8.5`` (PR 1505, 2025-05-14),
``>=0.7.3,<=0.9.1`` (PR 2747, 2025-07-28); vLLM: V0 ``EngineArgs.max_num_seqs = 256``;
V1's 1024 on every GPU (vLLM PR 15357 docs, "raised from 256 in V0 to 1024 in V1"; taken back by
PR 16158 after 0.8.3); PR 17073 (>= 70 GiB: 1024); PR 17885 (A100 excepted), in
``EngineArgs._set_default_args`` of vllm/engine/arg_utils.py (the memory test of
``tests/engine/test_arg_utils.py::test_defaults_with_usage_context``). verl PR 2960's own
description: "vllm's default value 256 sometimes is too small".
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner
from verl_rows import CONFIG, R

from rlmcost.cli import app
from rlmcost.errors import SpecError
from rlmcost.frameworks.verl import import_verl

runner = CliRunner()


def _config(tmp_path: Path, **keys: object) -> Path:
    f = tmp_path / "run.yaml"
    f.write_text(json.dumps({**CONFIG, **{f"{R}.{k}": v for k, v in keys.items()}}))
    return f


def _cap(tmp_path: Path, version: str, hardware: str | None, **keys: object) -> object:
    """The running cap the import gives the engine: its ``--max-num-seqs``, or the verl
    preset's 256 where the flag is left out (ImportedQuery.convert omits a preset default)."""
    q = import_verl(_config(tmp_path, **keys), [], version, hardware)
    return dict(q.flags).get("--max-num-seqs", 256)


@pytest.mark.parametrize(("version", "a100_80", "h100"), [
    ("0.2", 256, 256),          # vLLM <= 0.6.3: V0, 256 on every GPU
    ("2025-04-02", 1024, 1024),  # v0.3.0.post1, vLLM <= 0.8.2: V1's 1024 on every GPU
    ("0.5.0", 1024, 1024),      # vLLM <= 0.8.5: >= 70 GiB (PR 17073), A100-80GB included
    ("2025-08-01", 256, 1024),  # vLLM <= 0.9.1: A100 excepted (PR 17885)
    ("0.6.0", 1024, 1024),      # after PR 2960: rollout.yaml's 1024 reaches vLLM
])  # fmt: skip
def test_vllms_own_cap_by_verl_version_and_gpu(tmp_path: Path, version: str, a100_80: int,
                                               h100: int) -> None:  # fmt: skip
    assert _cap(tmp_path, version, "a100-80gb") == a100_80
    assert _cap(tmp_path, version, "h100-sxm") == h100


def test_small_gpus_and_memory_rule_gpus(tmp_path: Path) -> None:
    # 0.8.5's rule: memory only (A100-40GB 39.6 GiB, L40S 44.5 GiB below 70 GiB)
    assert _cap(tmp_path, "0.5.0", "a100-40gb") == 256
    assert _cap(tmp_path, "0.5.0", "l40s") == 256
    # 0.9.1's rule: H20 (95 GiB) and MI300X are large; the A800's name has no "a100"
    for hw in ("h20", "mi300x", "a800-80gb"):
        assert _cap(tmp_path, "2025-08-01", hw) == 1024, hw
    # V1 before PR 16158: 1024 even on a 40 GB A100
    assert _cap(tmp_path, "2025-04-02", "a100-40gb") == 1024


def test_the_config_key_is_still_ignored_before_pr_2960(tmp_path: Path) -> None:
    assert _cap(tmp_path, "2025-08-01", "a100-80gb", max_num_seqs=64) == 256
    assert _cap(tmp_path, "2025-08-09", "a100-80gb", max_num_seqs=64) == 64


def test_without_hardware_the_large_gpu_default_is_stated(tmp_path: Path) -> None:
    q = import_verl(_config(tmp_path), [], "2025-08-01")
    assert dict(q.flags)["--max-num-seqs"] == 1024
    how = next(c.how for c in q.conversions if c.flag == "--max-num-seqs")
    assert "give the hardware" in how and "256 on A100" in how


def test_async_mode_and_sglang_do_not_depend_on_the_gpu(tmp_path: Path) -> None:
    # AsyncEngineArgs without a usage context: SchedulerConfig's 128; SGLang: its own (0)
    assert _cap(tmp_path, "2025-08-01", "a100-80gb", mode="async") == 128
    assert _cap(tmp_path, "2025-08-01", "a100-80gb", name="sglang") == 0


def test_the_reason_names_the_vllm_and_the_gpu(tmp_path: Path) -> None:
    q = import_verl(_config(tmp_path), [], "2025-08-01", "a100-80gb")
    how = next(c.how for c in q.conversions if c.flag == "--max-num-seqs")
    assert "0.9.1" in how and "a100-80gb" in how and "PR 17885" in how


def test_a_bad_hardware_is_a_spec_error(tmp_path: Path) -> None:
    with pytest.raises(SpecError, match="unknown hardware"):
        import_verl(_config(tmp_path), [], "0.5.0", "x100")


def _cli(f: Path, *args: str) -> dict:
    out = runner.invoke(app, ["import", "verl", str(f), "--json", *args])
    assert out.exit_code == 0, out.output
    return json.loads(out.stdout)["deployment"]["engine"]


def test_import_cli_takes_the_hardware(tmp_path: Path) -> None:
    f = _config(tmp_path)
    assert _cli(f, "--verl-version", "2025-08-01", "--hardware", "a100-80gb")[
        "max_num_seqs"] == 256  # fmt: skip
    # without --hardware: the command's default, h100-sxm
    assert _cli(f, "--verl-version", "2025-08-01")["max_num_seqs"] == 1024
    assert _cli(f, "--verl-version", "0.2", "-H", "h100-sxm")["max_num_seqs"] == 256
    bad = runner.invoke(app, ["import", "verl", str(f), "--verl-version", "0.5.0",
                              "--hardware", "x100"])  # fmt: skip
    assert bad.exit_code == 2 and "Traceback" not in bad.output
    assert "unknown hardware 'x100'" in bad.output


def test_the_pin_moves_on_the_merge_day(tmp_path: Path) -> None:
    # verl PR 2747 (d255783a0, 2025-07-28 23:32 UTC): vllm<=0.8.5 -> <=0.9.1 (A100 excepted)
    assert _cap(tmp_path, "2025-07-27", "a100-80gb") == 1024
    assert _cap(tmp_path, "2025-07-28", "a100-80gb") == 256
    # verl PR 769 (1b8b0e83b, 2025-03-27): vllm<=0.6.3 (V0, 256) -> <=0.8.2 (V1, 1024)
    assert _cap(tmp_path, "2025-03-26", "h100-sxm") == 256
    assert _cap(tmp_path, "2025-03-27", "h100-sxm") == 1024
