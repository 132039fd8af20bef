"""miles' model arguments read from its checkout as data (rlmcost.frameworks.miles_model_args):
``$(python3 .../miles/utils/external_utils/model_args_utils.py MODEL)`` is what the helper
(radixark/miles @31f1ca96) prints for scripts/models/MODEL.py, found without running Python.
The model files are copies under tests/data/scripts/miles_models (each names its source on its
first line); the expected words are written out by hand from those files."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rlmcost.cli import app
from rlmcost.errors import SpecError
from rlmcost.frameworks.launch_scripts import import_slime_script
from rlmcost.frameworks.miles_model_args import helper_output
from rlmcost.frameworks.shell_script import read_launch

SCRIPTS = Path(__file__).parent / "data" / "scripts"
MODELS = SCRIPTS / "miles_models"
MILES_LORA = SCRIPTS / "miles_run-qwen3-4B-megatron-lora.sh"
runner = CliRunner()

# scripts/models/qwen3-4B.py @31f1ca96: its return string with rotary_base's default, "1000000"
QWEN3_4B = ("--swiglu --num-layers 36 --hidden-size 2560 --ffn-hidden-size 9728 "
            "--num-attention-heads 32 --group-query-attention --num-query-groups 8 "
            "--use-rotary-position-embeddings --disable-bias-linear --normalization "
            "RMSNorm --norm-epsilon 1e-6 --rotary-base 1000000 --vocab-size 151936 "
            "--kv-channels 128 --qk-layernorm")  # fmt: skip


def _qwen3_30b(layers: int) -> str:
    """qwen3-30B-A3B.py as trimmed here, ``nlayers`` layers: FIRST_K_DENSE_REPLACE = 0, so
    moe_layer_freq writes ``[1,...]`` with one 1 a layer."""
    return ("--disable-bias-linear --qk-layernorm --group-query-attention "
            "--num-attention-heads 32 --num-query-groups 4 --kv-channels 128 "
            f"--num-layers {layers} --hidden-size 2048 --ffn-hidden-size 6144 --normalization "
            "RMSNorm --position-embedding-type rope --norm-epsilon 1e-6 --rotary-percent 1.0 "
            "--swiglu --untie-embeddings-and-output-weights --vocab-size 151936 --rotary-base "
            "1000000 --moe-ffn-hidden-size 768 --moe-router-score-function softmax "
            "--moe-token-dispatcher-type alltoall --moe-router-topk 8 --moe-layer-freq "
            f"[{','.join(['1'] * layers)}] --num-experts 128 --moe-grouped-gemm "
            "--moe-token-drop-policy probs")  # fmt: skip


def _checkout(root: Path, **extra: str) -> Path:
    """A miles checkout under ``root``: the model files and the helper's folder, the LoRA
    example at its place (examples/lora/; its REPO_ROOT is two folders up); ``extra`` model
    files by name."""
    (root / "scripts" / "models").mkdir(parents=True)
    for f in MODELS.glob("*.py"):
        shutil.copy(f, root / "scripts" / "models" / f.name)
    for name, text in extra.items():
        (root / "scripts" / "models" / f"{name}.py").write_text(text)
    (root / "examples" / "lora").mkdir(parents=True)
    return Path(shutil.copy(MILES_LORA, root / "examples" / "lora" / MILES_LORA.name))


def _words(root: Path, model: str, *env: str) -> str | None:
    helper = str(root / "miles" / "utils" / "external_utils" / "model_args_utils.py")
    return helper_output([*env, "python3", helper, model], [])


@pytest.mark.parametrize(("model", "env", "expected"), [
    ("qwen3-4B", [], QWEN3_4B),
    # os.environ.get("MODEL_ARGS_ROTARY_BASE") from the command's own prefix
    ("qwen3-4B", ["MODEL_ARGS_ROTARY_BASE=5000000"], QWEN3_4B.replace("1000000", "5000000")),
    # load_sibling_model_args(__file__, "qwen3-4B", rotary_base=5000000): the keyword wins
    ("qwen3-4B-Instruct-2507", ["MODEL_ARGS_ROTARY_BASE=7"], QWEN3_4B.replace("1000000",
                                                                               "5000000")),
    ("qwen3-30B-A3B", [], _qwen3_30b(48)),  # int(os.environ.get(...) or 48)
    ("qwen3-30B-A3B", ["MODEL_ARGS_NUM_LAYERS=5"], _qwen3_30b(5)),
])  # fmt: skip
def test_model_files_give_the_helpers_words(tmp_path, monkeypatch, model, env, expected) -> None:
    """The words the helper prints for each model file, worked out by hand; the environment
    rlmcost runs in is not read (only the command's K=V prefix)."""
    _checkout(tmp_path)
    monkeypatch.setenv("MODEL_ARGS_NUM_LAYERS", "7")
    monkeypatch.setenv("MODEL_ARGS_ROTARY_BASE", "9")
    assert _words(tmp_path, model, *env) == expected


def test_miles_script_imports_without_model_args(tmp_path) -> None:
    """miles examples/lora/run-qwen3-4B-megatron-lora.sh @31f1ca96 in its checkout imports
    with no --env: the query is the one its helper's output given as MODEL_ARGS gives, and a
    note names the model file read. Outside a checkout the one-line error stays."""
    script = _checkout(tmp_path)
    q = import_slime_script(script, [], [], None, None)
    given = import_slime_script(MILES_LORA, [], [f"MODEL_ARGS={QWEN3_4B}"], None, None)
    assert q.flags == given.flags
    assert any("qwen3-4B.py read as data, never run" in n for n in q.notes)
    res = runner.invoke(app, ["import", "miles", str(script)])
    assert res.exit_code == 0, res.output
    res = runner.invoke(app, ["import", "miles", str(MILES_LORA)])
    assert res.exit_code != 0 and len(res.output.strip().splitlines()) == 1, res.output


def test_a_scripts_prefix_and_variables_reach_the_model_file(tmp_path) -> None:
    """``$(K=V python3 "${MILES_DIR}/miles/.../model_args_utils.py" "${MODEL}")`` (miles'
    on-policy distillation scripts' form): the words expanded, K=V the helper's environment."""
    _checkout(tmp_path)
    script = tmp_path / "run.sh"
    script.write_text(f'MILES_DIR={tmp_path}\nMODEL=qwen3-30B-A3B\nMODEL_ARGS_LINE="$('
                      'MODEL_ARGS_NUM_LAYERS=3 python3 "${MILES_DIR}/miles/utils/external_utils/'
                      'model_args_utils.py" "${MODEL}")" || exit 1\n'
                      'read -ra MODEL_ARGS <<< "${MODEL_ARGS_LINE}"\n'
                      'python3 train.py "${MODEL_ARGS[@]}"\n')  # fmt: skip
    launch = read_launch(script, ("train.py",), [], {})
    assert " ".join(launch.words) == _qwen3_30b(3) and not launch.unresolved
    assert any("(with MODEL_ARGS_NUM_LAYERS=3)" in n for n in launch.notes)
    assert _words(tmp_path, "no-such-model") is None  # not in the checkout: no value
    assert helper_output(["python3", "model_args_utils.py", "qwen3-4B"], []) is None


@pytest.mark.parametrize(("text", "says"), [
    ("import subprocess\ndef model_args():\n    return subprocess.check_output(['touch', "
     "'RAN']).decode()\n", "a call of subprocess.check_output("),
    ("def model_args():\n    for i in range(2):\n        pass\n    return '--num-layers 2'\n",
     "a statement 'for i in range(2)"),
    ("from model_args_utils import load_sibling_model_args\ndef model_args():\n"
     "    return load_sibling_model_args(__file__, 'bad')\n", "past 8 files deep"),
    ("from model_args_utils import load_sibling_model_args\ndef model_args():\n"
     "    return load_sibling_model_args(__file__, 'qwen3-4B', nlayers=5)\n",
     "given ['nlayers'] it does not take"),
    ("def model_args(:\n", "a file not parsed (SyntaxError"),
    ("def model_args():\n    return f'--num-layers {2 ** 40}'\n", "'2 ** 40'"),
    ("from model_args_utils import moe_layer_freq\ndef model_args():\n    return "
     "moe_layer_freq(nlayers=100000000, first_k_dense_replace=1)\n", "failing (moe_layer_freq"),
    ("def model_args(n):\n    return f'--num-layers {n}'\n", "parameter n with no default"),
    ("def model_args():\n    return ''\n", "returning no words"),
    ("X = 1\n", "no def model_args()"),
    ("def model_args():\n    return " + "+".join(["'a '"] * 2000) + "\n", "nested too deep"),
], ids=lambda v: v[:40])  # fmt: skip
def test_what_is_not_read_is_one_line_naming_the_helper(tmp_path, monkeypatch, text,
                                                        says) -> None:  # fmt: skip
    """A model file the reader does not follow is never run (nothing it would write appears)
    and is one error line asking for the helper's output with --env MODEL_ARGS."""
    script = _checkout(tmp_path, bad=text)
    body = script.read_text().replace('"qwen3-4B")" || exit 1', '"bad")" || exit 1')
    script.write_text(body)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SpecError) as exc:
        import_slime_script(script, [], [], None, None)
    msg = str(exc.value)
    assert says in msg and "\n" not in msg, msg
    assert msg.endswith("--env MODEL_ARGS=\"$(python3 " + str(
        tmp_path / "miles/utils/external_utils/model_args_utils.py") + ' bad)"'), msg
    res = runner.invoke(app, ["import", "miles", str(script)])
    assert res.exit_code != 0 and len(res.output.strip().splitlines()) == 1, res.output
    assert not (tmp_path / "RAN").exists()
