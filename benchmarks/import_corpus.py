"""`rlmcost import` over a framework's own examples: how many import, and why the others are
refused.

Each framework's example launchers and configs (the files below, under the root of a checkout
of its repository, or of a bare git mirror, whose HEAD is unpacked to a temporary folder) go
through the matching importer, in this process (the command line's own entry,
``rlmcost.cli.app``, with ``--json``; its output is dropped): a file imports (OK), is refused
with a one-line error (grouped by reason, the file's name and line taken out), or raises
anything else (a traceback: a bug). It asserts nothing.

- verl: examples/**/*.sh but data_preprocess, sft, generation, skypilot, slurm (not RL
  training launches) -> ``rlmcost import verl FILE``.
- slime: scripts/*.sh -> ``rlmcost import slime FILE``.
- openrlhf: examples/scripts/*.sh -> ``rlmcost import openrlhf FILE``.
- nemo-rl: examples/configs/{grpo,ppo,dpo,distillation}*.yaml and the same under
  examples/configs/recipes/llm
  -> ``rlmcost import nemo-rl FILE``.
- trl (open-r1): recipes/*/grpo/*.yaml, each with each of recipes/accelerate_configs/*.yaml ->
  ``rlmcost import trl FILE --accelerate ACC``.

Usage: python benchmarks/import_corpus.py verl=/work/.mirror/volcengine+verl/repo
       slime=... openrlhf=... nemo-rl=... trl=...  [-v: every file's outcome]

Measured 2026-12 on the mirrors' HEADs (verl b178a3cd, NeMo RL 7ea279ab, slime 624b824a,
OpenRLHF 3c3be623, open-r1 1416fa0c), files OK before -> after this file's change, 0
tracebacks either way: verl 80 -> 92 of 127 (17 s on this 2-core machine); slime 10 -> 10 of
23; OpenRLHF 7 -> 7 of 17; NeMo RL 110 -> 110 of 150; TRL 12 -> 12 of 20. The refusals left:
models of types rlmcost does not ship (Qwen2.5/3-VL, Qwen3.5, Nemotron-H, GLM-4.1V, MiniCPM-o,
Seed-OSS, MiniMax), variables the scripts take from the environment (SLURM_*, --env gives
them), placeholders left to fill in, group methods with one response per prompt, SFT and
reward-model training scripts, and verl's split-placement trainer.

After the model types and importer fixes that followed (Qwen2.5/3-VL, Qwen3.5, Nemotron-H,
Seed-OSS, MiniMax-M2, GLM-4.7-Flash, GLM-4.1V; Qwen3 2507's context; Megatron TP above the KV
heads; NeMo RL's Automodel expert parallelism; SGLang's data-parallel attention), same mirrors,
2026-12: verl 108 of 127, slime 11 of 23, OpenRLHF 7 of 17, NeMo RL 140 of 150, TRL 12 of 20
(278 of 337, from 219), 0 tracebacks. NeMo RL's 10 left: Nemotron 3 Super (latent MoE, 6),
DeepSeek-V3 recipes whose model is an instruction to follow (2), GLM-5.1 (DeepSeek Sparse
Attention, no cost model), allenai/Llama-3.1-Tulu-3-8B-SFT (not built in).

After verl's split placement (as device groups), verl's group methods at rollout.n=1 (as
--group 1 under --framework verl) and a launch line without its backslash read as the
continuation it means, same mirrors, 2026-12: verl 108 -> 110 of 127, slime 11 -> 12 of 23
(Kimi-K2), OpenRLHF 7, NeMo RL 140, TRL 12 unchanged (278 -> 281 of 337), 0 tracebacks. The
two verl rollout_correction scripts with rollout.n=1 now stop at verl's own check (a mini-batch
of 4 sequences a rank under micro-batches of 8 per GPU: fsdp_workers.py asserts it). The
refusals left are the frameworks' or the scripts' own: variables from the environment
(SLURM_*, ARNOLD_*, BASE_FOLDER, EVAL_ARGS that no line sets), placeholders, SFT and
reward-model scripts, TRL's divisibility check, sources that are not there (slime's
run-qwen2.5-0.5B-reproducibility.sh sources scripts/scripts/models/...), a variable used before
the line that sets it (verl gspo run_qwen3_32b_gspo_npu.sh: sp_size), an expert grid Megatron
refuses (slime run-glm4.7-30B-A3B.sh: EP 8 over TP x CP x DP = 4), and models not built in.

After Nemotron 3 Super's latent MoE and DeepSeek Sparse Attention (GLM-5, GLM-5.1,
DeepSeek-V3.2) got cost models, same mirrors, 2026-12: NeMo RL 140 -> 147 of 150 (the six
Nemotron 3 Super recipes, GLM-5.1), the others unchanged (281 -> 288 of 337), 0 tracebacks.
NeMo RL's 3 left: the two DeepSeek-V3 recipes whose model is an instruction to follow and
allenai/Llama-3.1-Tulu-3-8B-SFT (not built in); slime's GLM-5 scripts import with
``--env EVAL_ARGS=`` (the scripts never set it).

It also evaluates each file that imports and says whether it fits the device (at the config's
maximum lengths: the frameworks' peaks follow the real lengths, so a no-fit names its shortfall
and the estimate's advice the longest sequence that fits). Same mirrors, 2026-12-07: verl 111 OK
(73 fit, 38 do not), slime 12 (8, 4: the Kimi-K2 scripts with no KV room for a sequence, MiniMax-M2,
the AMD Qwen3-4B), OpenRLHF 8 (6, 2), NeMo RL 158 (151, 7: the two 1-GPU PPO base configs its docs
run on 8, five within 0.4-6.1 GiB), TRL 12 (11, 1), 0 tracebacks.

NeMo RL's PPO configs (examples/configs/ppo*.yaml and recipes/llm/ppo-*.yaml) join the corpus
now that `rlmcost import nemo-rl` reads them as ``rlmcost ppo`` (they had been read as GRPO):
NeMo RL 148 of 150 -> 158 of 160, the others unchanged (verl 111 of 127, slime 12 of 23,
OpenRLHF 8 of 17, TRL 12 of 20), 0 tracebacks.

NeMo RL's on-policy distillation configs (examples/configs/distillation*.yaml and
recipes/llm/distillation-*.yaml) join the corpus now that `rlmcost import nemo-rl` reads them as
``rlmcost opd --teacher MODEL``, 2026-12-07: NeMo RL 160 -> 175 files, 158 -> 171 OK (151 -> 164
fit, 7 do not, unchanged), 4 refused (the 2 DeepSeek-V3 placeholders and the 2 cross-tokenizer
off-policy distillation recipes, which generate nothing), 0 tracebacks.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import re
import subprocess
import sys
import tempfile
from collections import Counter, defaultdict
from pathlib import Path

VERL_SKIP = ("data_preprocess", "sft", "generation", "skypilot", "slurm")
"""verl example folders that launch no RL training (preprocessing, SFT, offline generation,
cluster launchers)."""


def _files(framework: str, root: Path) -> list[tuple[Path, list[str]]]:
    """The files of ``framework`` under ``root`` and the extra arguments of each."""
    if framework == "verl":
        return [(p, []) for p in sorted((root / "examples").rglob("*.sh"))
                if not set(p.relative_to(root / "examples").parts[:-1]) & set(VERL_SKIP)]
    if framework == "slime":
        return [(p, []) for p in sorted((root / "scripts").glob("*.sh"))]
    if framework == "openrlhf":
        return [(p, []) for p in sorted((root / "examples" / "scripts").glob("*.sh"))]
    if framework == "nemo-rl":
        conf = root / "examples" / "configs"
        return [(p, []) for d in (conf, conf / "recipes" / "llm")
                for g in ("grpo*.yaml", "ppo*.yaml", "dpo*.yaml", "distillation*.yaml")
                for p in sorted(d.glob(g))]  # fmt: skip
    if framework == "trl":
        accs = sorted((root / "recipes" / "accelerate_configs").glob("*.yaml"))
        return [(p, ["--accelerate", str(a)]) for p in sorted(root.glob("recipes/*/grpo/*.yaml"))
                for a in accs]
    raise SystemExit(f"unknown framework {framework!r}: verl, slime, openrlhf, nemo-rl, trl")


def _checkout(root: Path, tmp: Path) -> Path:
    """``root`` itself, or for a bare git repository its HEAD unpacked under ``tmp``."""
    if (root / "HEAD").is_file() and (root / "objects").is_dir():
        out = tmp / root.parent.name
        out.mkdir()
        tar = subprocess.run(["git", "-C", str(root), "archive", "HEAD"], check=True,
                             capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", str(out)], input=tar, check=True)
        return out
    return root


def _import(framework: str, path: Path, extra: list[str]) -> tuple[str, str]:
    """(``OK`` | ``no-fit`` | ``refused`` | ``traceback``, the reason) of importing one file:
    ``no-fit``, it imports but its estimate does not fit the device (at the config's maximum
    lengths; the reason gives the shortfall)."""
    import json

    import typer.main

    from rlmcost.cli import app

    cmd = typer.main.get_command(app)
    err, out = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            cmd.main(args=["import", framework, str(path), *extra, "--json"],
                     prog_name="rlmcost")
            code = 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 1
        except Exception as exc:  # noqa: BLE001  # a bug: report it, go on
            return "traceback", f"{type(exc).__name__}: {exc}"
    if code == 0:
        estimate = json.loads(out.getvalue())["estimate"]
        if estimate.get("fits"):
            return "OK", ""
        return "no-fit", f"{estimate.get('shortfall_bytes', 0) / 2**30:.1f} GiB over"
    lines = [ln for ln in err.getvalue().splitlines() if ln.startswith("error:")]
    return "refused", lines[-1] if lines else err.getvalue().strip()[-200:]


def _reason(text: str, path: Path) -> str:
    """A refusal's words without the file's own name and line."""
    text = text.replace(str(path), "FILE").replace(path.name, "FILE")
    return re.sub(r"line \d+", "line N", text)[:220]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("roots", nargs="+", metavar="FRAMEWORK=ROOT")
    ap.add_argument("-v", "--verbose", action="store_true", help="every file's outcome")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        for spec in a.roots:
            framework, _, root = spec.partition("=")
            files = _files(framework, _checkout(Path(root), Path(tmp)))
            counts: Counter[str] = Counter()
            reasons: dict[str, list[str]] = defaultdict(list)
            for path, extra in files:
                outcome, why = _import(framework, path, extra)
                counts[outcome] += 1
                name = "/".join(path.parts[-2:]) + (f" [{Path(extra[1]).stem}]" if extra else "")
                if a.verbose:
                    print(f"  {outcome:9} {name} {why}", flush=True)
                if outcome == "no-fit":
                    reasons["no-fit"].append(f"{name} ({why})")
                elif outcome != "OK":
                    reasons[f"{outcome}: {_reason(why, path)}"].append(name)
            print(f"{framework}: {len(files)} files, {counts['OK'] + counts['no-fit']} OK "
                  f"({counts['OK']} fit, {counts['no-fit']} do not at their maximum lengths), "
                  f"{counts['refused']} refused, {counts['traceback']} tracebacks")
            for why, names in sorted(reasons.items(), key=lambda kv: -len(kv[1])):
                print(f"  {len(names):3} {why}\n      {', '.join(names[:6])}"
                      + (" ..." if len(names) > 6 else ""))
            sys.stdout.flush()


if __name__ == "__main__":
    main()
