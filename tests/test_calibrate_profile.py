"""Profiles and the calibrated time model, on synthetic profiles (no torch needed).

A synthetic profile says "GEMMs run at 50 % of peak, decode streams at 25 % of HBM
bandwidth"; the time model must then take exactly 2x and 4x the roofline times.
"""

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

from rlmcost.calibrate import (
    builtin_profile,
    calibrated_seconds,
    calibrated_time,
    load_profile,
    resolve_profile,
    roofline_seconds,
)
from rlmcost.calibrate.profile import builtin_devices
from rlmcost.choices import Dtype
from rlmcost.errors import SpecError
from rlmcost.specs import get_hardware

ROOT = Path(__file__).resolve().parents[1]
H200 = get_hardware("h200")


def synthetic(device="h200", dtype="bf16", **changes):
    """A profile measured against the h200 datasheet, with flat or sloped tables."""
    data = {
        "schema": "rlmcost-calibration/1",
        "device": device,
        "device_name": "NVIDIA H200 (synthetic)",
        "torch": "2.13.0",
        "dtype": dtype,
        "threads": 1,
        "quick": False,
        "peak_flops_per_s": H200.peak(Dtype.BF16),
        "peak_bytes_per_s": H200.hbm_bandwidth_bytes_per_s,
        "peak_source": "synthetic: h200 datasheet",
        "compute_efficiency": {
            "gemm": [[1e9, 0.5], [1e12, 0.5]],
            "train": [[1e9, 0.2], [1e11, 0.6]],
        },
        "bandwidth_efficiency": {"decode": [[1e6, 0.25]], "copy": [[1e6, 0.8]]},
    }
    data.update(changes)
    return data


def write(tmp_path, data, name="h200.json"):
    path = tmp_path / name
    path.write_text(json.dumps(data))
    return path


@pytest.fixture
def profile(tmp_path):
    return load_profile(write(tmp_path, synthetic()), H200)


# --------------------------------------------------------------------------------------------
# The time model reads the profile and changes its estimate as the profile says
# --------------------------------------------------------------------------------------------


def test_gemm_at_half_efficiency_takes_twice_the_roofline(profile):
    flops = 1e15
    roof = roofline_seconds(flops, 1e6, H200.peak(Dtype.BF16), H200.hbm_bandwidth_bytes_per_s)
    assert roof == flops / H200.peak(Dtype.BF16)
    got = calibrated_seconds(flops, 1e6, H200, Dtype.BF16, profile, "gemm")
    assert got == pytest.approx(2 * roof)


def test_decode_at_quarter_bandwidth_takes_four_times_the_roofline(profile):
    bytes_moved, flops = 140e9, 1e9  # a 70B bf16 decode step: memory-bound
    got = calibrated_time(
        bytes_moved=bytes_moved,
        flops=flops,
        hardware=H200,
        dtype=Dtype.BF16,
        profile=profile,
        kernel="decode",
    )
    assert got.bound == "memory"
    assert got.bandwidth_efficiency == 0.25
    assert got.seconds == pytest.approx(4 * bytes_moved / H200.hbm_bandwidth_bytes_per_s)
    assert got.profile == profile.name and "h200.json" in got.profile


def test_changing_the_profile_changes_the_estimate_proportionally(tmp_path):
    times = []
    for eff in (0.8, 0.4, 0.1):
        data = synthetic(compute_efficiency={"gemm": [[1e9, eff]]})
        prof = load_profile(write(tmp_path, data), H200)
        times.append(calibrated_seconds(1e16, 0, H200, Dtype.BF16, prof))
    assert times[1] == pytest.approx(2 * times[0])
    assert times[2] == pytest.approx(8 * times[0])


def test_efficiency_is_interpolated_in_log_size(profile):
    # train table: 0.2 at 1e9 FLOPs, 0.6 at 1e11 -> 0.4 at 1e10 (midpoint in log size)
    assert profile.compute(1e10, "train") == pytest.approx(0.4)
    assert profile.compute(1e9, "train") == pytest.approx(0.2)
    assert profile.compute(1e5, "train") == pytest.approx(0.2)  # held below the table
    assert profile.compute(1e20, "train") == pytest.approx(0.6)  # held above it
    assert profile.compute(0, "train") == pytest.approx(0.2)  # no work: any value serves
    with pytest.raises(SpecError, match="non-negative"):
        profile.compute(-1.0, "train")
    t = calibrated_time(1e10, 0, H200, Dtype.BF16, profile, "train")
    assert t.compute_efficiency == pytest.approx(0.4)
    assert t.seconds == pytest.approx(1e10 / (0.4 * H200.peak(Dtype.BF16)))


def test_efficiency_is_clamped_to_one(tmp_path):
    data = synthetic(compute_efficiency={"gemm": [[1e9, 1.3]]})
    prof = load_profile(write(tmp_path, data), H200)
    assert prof.compute(1e9) == 1.0
    assert calibrated_seconds(1e15, 0, H200, Dtype.BF16, prof) == pytest.approx(
        1e15 / H200.peak(Dtype.BF16)
    )


def test_compute_kernel_takes_copy_bandwidth_and_memory_kernel_takes_gemm(profile):
    t = calibrated_time(1e12, 1e9, H200, Dtype.BF16, profile, "train")
    assert t.bandwidth_efficiency == 0.8  # the copy table
    t = calibrated_time(1e12, 1e9, H200, Dtype.BF16, profile, "decode")
    assert t.compute_efficiency == 0.5  # the gemm table


def test_no_profile_is_the_roofline():
    t = calibrated_time(1e15, 4.8e12, H200, Dtype.BF16, None)
    assert t.profile == "roofline (no profile)"
    assert t.seconds == roofline_seconds(
        1e15, 4.8e12, H200.peak(Dtype.BF16), H200.hbm_bandwidth_bytes_per_s
    )


def test_profile_peaks_serve_when_no_hardware_is_given(tmp_path):
    data = synthetic(device="cpu", dtype="fp32", peak_flops_per_s=1e11, peak_bytes_per_s=1e10)
    prof = load_profile(write(tmp_path, data, "cpu.json"))
    assert calibrated_seconds(1e11, 0, None, Dtype.FP32, prof) == pytest.approx(2.0)
    assert calibrated_seconds(1e3, 1e10, None, Dtype.FP32, prof, "decode") == pytest.approx(4.0)


def test_time_model_errors(profile):
    with pytest.raises(SpecError, match="measured in bf16"):
        calibrated_seconds(1e12, 0, H200, Dtype.FP32, profile)
    with pytest.raises(SpecError, match="no kernel class 'softmax'"):
        calibrated_seconds(1e12, 0, H200, Dtype.BF16, profile, "softmax")
    with pytest.raises(SpecError, match="needs a hardware spec"):
        calibrated_seconds(1e12, 0, None, Dtype.BF16, None)
    with pytest.raises(SpecError, match="must not be negative"):
        calibrated_seconds(-1, 0, H200, Dtype.BF16, profile)
    with pytest.raises(SpecError, match="no compute efficiency table 'moe'"):
        profile.compute(1e9, "moe")


def test_profile_is_the_algorithms_efficiency_protocol(profile):
    from rlmcost.timing import Efficiency, Roofline

    assert isinstance(profile, Efficiency)
    roof = Roofline(H200, 1, Dtype.BF16, profile).phase(1e15, 0).bound_s
    assert roof == pytest.approx(calibrated_seconds(1e15, 0, H200, Dtype.BF16, profile))


# --------------------------------------------------------------------------------------------
# Loading: one-line errors
# --------------------------------------------------------------------------------------------


def one_line(exc):
    return "\n" not in str(exc.value)


def test_missing_and_unreadable_files(tmp_path):
    with pytest.raises(SpecError, match="cannot read calibration profile .*No such file") as e:
        load_profile(tmp_path / "nope.json")
    assert one_line(e)
    with pytest.raises(SpecError, match="cannot read calibration profile") as e:
        load_profile(tmp_path)  # a directory
    assert one_line(e)
    binary = tmp_path / "bin.json"
    binary.write_bytes(b"\xff\xfe\x00")
    with pytest.raises(SpecError, match="cannot read") as e:
        load_profile(binary)
    assert one_line(e)


def test_not_json_and_wrong_schema(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(SpecError, match="is not JSON") as e:
        load_profile(bad)
    assert one_line(e)
    with pytest.raises(SpecError, match="not a calibration profile"):
        load_profile(write(tmp_path, {"hardware": []}))
    with pytest.raises(SpecError, match="a JSON object"):
        load_profile(write(tmp_path, [1, 2]))


@pytest.mark.parametrize(
    "changes,message",
    [
        ({"dtype": "fp128"}, "field 'dtype'"),
        ({"peak_flops_per_s": 0}, "field 'peak_flops_per_s'"),
        ({"compute_efficiency": {"gemm": []}}, "empty"),
        ({"compute_efficiency": {"gemm": [[2e9, 0.5], [1e9, 0.6]]}}, "increase strictly"),
        ({"compute_efficiency": {"gemm": [[1e9, -0.5]]}}, "positive"),
        ({"compute_efficiency": {"gemm": [[0, 0.5]]}}, "positive"),
        ({"surprise": 1}, "surprise"),
    ],
)
def test_schema_mismatch(tmp_path, changes, message):
    with pytest.raises(SpecError, match=message) as e:
        load_profile(write(tmp_path, synthetic(**changes)))
    assert one_line(e)


def test_profile_for_another_device(tmp_path):
    path = write(tmp_path, synthetic())
    with pytest.raises(SpecError, match="measured on h200 .* not h100-sxm") as e:
        load_profile(path, get_hardware("h100"))
    assert one_line(e)
    cpu = ROOT / "rlmcost" / "calibrate" / "profiles" / "cpu.json"
    with pytest.raises(SpecError, match="measured on cpu"):
        load_profile(cpu, H200)


def test_profile_against_other_peaks(tmp_path):
    path = write(tmp_path, synthetic(peak_flops_per_s=1e15))
    with pytest.raises(SpecError, match="recalibrate"):
        load_profile(path, H200)


# --------------------------------------------------------------------------------------------
# Built-in profiles and the committed CPU profile
# --------------------------------------------------------------------------------------------


def test_every_shipped_profile_loads_as_its_device():
    for name in builtin_devices():
        assert builtin_profile(name).device == name


def test_committed_cpu_profile_loads_and_is_shipped():
    committed = ROOT / "rlmcost" / "calibrate" / "profiles" / "cpu.json"
    prof = load_profile(committed)
    assert prof.device == "cpu" and prof.dtype is Dtype.FP32
    assert builtin_profile("cpu").to_json() == prof.to_json()
    assert "cpu" in builtin_devices()
    # the profile's own rows: every analytic count equals FlopCounterMode's
    assert prof.kernels and all(k["analytic_flops"] == k["counted_flops"] for k in prof.kernels)
    # and it is self-consistent: the time model at a measured kernel gives its measured time
    gemm = max((k for k in prof.kernels if k["name"] == "gemm"), key=lambda k: k["analytic_flops"])
    t = calibrated_seconds(gemm["analytic_flops"], 0, None, Dtype.FP32, prof, "gemm")
    assert math.isclose(t, gemm["seconds"], rel_tol=1e-9)


def test_no_builtin_profile_for_unmeasured_hardware():
    assert builtin_profile(get_hardware("mi300x")) is None
    assert resolve_profile(None, get_hardware("mi300x")) is None
    assert resolve_profile(None, None) is None


def test_resolve_profile_prefers_the_file(tmp_path):
    path = write(tmp_path, synthetic())
    assert resolve_profile(path, H200).name.startswith(str(path))


def test_resolve_profile_reads_the_shipped_profile_of_the_hardware(tmp_path, monkeypatch):
    """A profile shipped for the query's hardware is the one it uses (the answer without a
    file, None, comes without loading the Profile model: tests/test_cli_startup.py)."""
    import rlmcost.calibrate
    import rlmcost.calibrate.profile

    write(tmp_path, synthetic())  # profiles/h200.json
    monkeypatch.setattr(rlmcost.calibrate, "PROFILES", tmp_path)
    monkeypatch.setattr(rlmcost.calibrate.profile, "PROFILES", tmp_path)
    shipped = resolve_profile(None, H200)
    assert shipped is not None and shipped.device == "h200"
    assert shipped.to_json() == load_profile(tmp_path / "h200.json").to_json()
    assert resolve_profile(None, get_hardware("mi300x")) is None


# --------------------------------------------------------------------------------------------
# Without torch
# --------------------------------------------------------------------------------------------

BLOCK_TORCH = "import sys; sys.modules['torch'] = None; "


def python(code):
    return subprocess.run(
        [sys.executable, "-c", BLOCK_TORCH + code], capture_output=True, text=True, cwd=ROOT
    )


def test_package_and_time_model_work_without_torch():
    r = python(
        "from rlmcost.calibrate import load_profile, calibrated_seconds\n"
        "from rlmcost.choices import Dtype\n"
        "p = load_profile('rlmcost/calibrate/profiles/cpu.json')\n"
        "print(calibrated_seconds(1e12, 1e9, None, Dtype.FP32, p) > 0)\n"
        "assert 'torch' not in [m for m in sys.modules if sys.modules[m] is not None]"
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "True"


def test_cli_says_how_to_install_torch():
    r = python("from rlmcost.cli import app; app(['calibrate', '--quick'])")
    assert r.returncode == 2
    assert r.stderr.strip() == 'error: rlmcost calibrate needs torch: pip install -e ".[calibrate]"'
