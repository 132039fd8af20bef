"""TRL under accelerate's DeepSpeed plugin: ``offload_optimizer_device: cpu`` is ZeRO-Offload,
which keeps the gradient partition on the host beside the Adam states (DeepSpeed
runtime/zero/stage3.py at v0.13.2: ``grad_partitions_flat_buffer`` on ``self.device``, the CPU
under ``offload_optimizer``), so the import offloads both, as OpenRLHF's ``--adam_offload``."""

from __future__ import annotations

from pathlib import Path

from rlmcost.frameworks.trl import import_trl

DATA = Path(__file__).parent / "data" / "frameworks"


def test_deepspeed_optimizer_offload_keeps_gradients_on_the_host(tmp_path: Path) -> None:
    cfg = (DATA / "trl_accelerate_zero3.yaml").read_text()
    accel = tmp_path / "zero3_offload.yaml"
    accel.write_text(cfg.replace("offload_optimizer_device: none",
                                 "offload_optimizer_device: cpu"))  # fmt: skip
    q = import_trl(DATA / "trl_grpo.yaml", accelerate=accel)
    assert dict(q.flags)["--offload"] == "optimizer,grads"
    plain = import_trl(DATA / "trl_grpo.yaml", accelerate=DATA / "trl_accelerate_zero3.yaml")
    assert "--offload" not in dict(plain.flags)
