"""`rlmcost import nemo-rl` reads a config's 4-GPU nodes as GB200 unless -H names another.

Source: NeMo RL's docs say its GB200 systems have 4 GPUs a node ('For GB200 systems with 4 GPUs
per node, use --gres=gpu:4', docs/cluster.md and docs/about/algorithms/*.md @7ea279abf), and its
recipes for them are the *-Nn4g ones (cluster.gpus_per_node: 4), which do not fit 80 GB H100s
(e.g. recipes/llm/performance/grpo-qwen3-30ba3b-4n4g.yaml: 112 GiB a GPU)."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from rlmcost.cli import app
from rlmcost.frameworks.nemo_rl import import_nemo_rl

BASE = Path(__file__).parent / "data" / "frameworks" / "nemo_rl_grpo_math.yaml"


def _hardware(argv: list[str]) -> str:
    out = CliRunner().invoke(app, ["import", "nemo-rl", str(BASE), *argv, "--json"])
    assert out.exit_code == 0, out.output
    return json.loads(out.stdout)["estimate"]["hardware"]


def test_four_gpus_a_node_is_gb200_unless_given() -> None:
    q = import_nemo_rl(BASE, ["cluster.gpus_per_node=4", "cluster.num_nodes=2"])
    assert q.hardware == "gb200" and ("--gpus", 8) in q.flags
    assert "--hardware" not in dict(q.flags)  # a caller's own --hardware is not contradicted
    assert any(c.flag == "--hardware" and "docs/cluster.md" in c.how for c in q.conversions)
    assert import_nemo_rl(BASE, ["cluster.gpus_per_node=8"]).hardware is None
    assert _hardware(["cluster.gpus_per_node=4"]) == "gb200"
    assert _hardware(["cluster.gpus_per_node=4", "-H", "h100-sxm"]) == "h100-sxm"
    assert _hardware(["cluster.gpus_per_node=8"]) == "h100-sxm"  # the default
