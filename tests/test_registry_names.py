"""Names resolve exactly or not at all; errors list real candidates; hardware fields."""

from __future__ import annotations

import json
import re

import pytest

from rlmcost.errors import SpecError
from rlmcost.placement.transfer import host_bandwidth_bytes_per_s
from rlmcost.specs import get_hardware, get_model, hardware, models
from rlmcost.specs.registry import _norm, keys

MODEL_NAMES = {m.name for m in models()}
HARDWARE_NAMES = {h.name for h in hardware()}
SUGGESTION = re.compile(r"(?:ambiguous: |did you mean )(.+?)\?")


def suggested(message: str) -> list[str]:
    """The names an error message offers ('a, b or c?'), without '(and N more)'."""
    m = SUGGESTION.search(message)
    if not m:
        return []
    text = re.sub(r" \(and \d+ more\)$", "", m.group(1))
    return [n for part in text.split(", ") for n in part.split(" or ")]


def _walk(specs, get, names):
    for spec in specs:
        for word in (spec.name, *spec.aliases, *getattr(spec, "hf_ids", ())):
            # every declared name resolves to its own spec
            assert get(word) is spec, word
        for word in (spec.name, *spec.aliases):
            for i in range(1, len(word)):
                prefix = word[:i]
                if not _norm(prefix):
                    continue
                try:
                    hit = get(prefix)
                except SpecError as exc:
                    offered = suggested(str(exc))
                    # an error offers at least one candidate, and only real names
                    assert offered and set(offered) <= names, (prefix, str(exc))
                    assert "\n" not in str(exc)
                else:
                    # a prefix that resolves is itself a declared name of what it resolves to
                    assert _norm(prefix) in keys(hit), (prefix, hit.name)


def test_every_model_name_alias_and_prefix_resolves_exactly_or_lists_candidates():
    _walk(models(), get_model, MODEL_NAMES)


def test_every_hardware_name_alias_and_prefix_resolves_exactly_or_lists_candidates():
    _walk(hardware(), get_hardware, HARDWARE_NAMES)


def test_no_two_specs_share_a_name():
    for specs in (models(), hardware()):
        seen: dict[str, str] = {}
        for spec in specs:
            for key in keys(spec):
                assert seen.setdefault(key, spec.name) == spec.name, key


@pytest.mark.parametrize(
    "query, name",
    [("h20", "h20"), ("H20", "h20"), ("h100", "h100-sxm"), ("H200 SXM", "h200"),
     ("a800", "a800-80gb"), ("GB200", "gb200")],
)  # fmt: skip
def test_hardware_names(query, name):
    assert get_hardware(query).name == name


@pytest.mark.parametrize(
    "query, offered",
    [("a100", ["a100-40gb", "a100-80gb"]), ("h1", ["h100-sxm", "h100-pcie"]),
     ("mi250x", ["mi250x-gcd"]), ("h2", ["h200", "h20"])],
)  # fmt: skip
def test_partial_hardware_names_are_errors_with_candidates(query, offered):
    with pytest.raises(SpecError) as exc:
        get_hardware(query)
    assert set(offered) <= set(suggested(str(exc.value)))


@pytest.mark.parametrize(
    "query, name",
    [("7b", "llama-2-7b"), ("13b", "llama-2-13b"), ("8b", "llama-3.1-8b"),
     ("70b", "llama-3.1-70b"), ("405b", "llama-3.1-405b"), ("175b", "gpt-3-175b"),
     ("Qwen/Qwen2.5-7B-Instruct", "qwen2.5-7b"), ("Qwen/Qwen2.5-7B", "qwen2.5-7b"),
     ("Qwen2.5-7B-Instruct", "qwen2.5-7b"),
     ("meta-llama/Llama-3.1-8B-Instruct", "llama-3.1-8b"),
     ("meta-llama/Meta-Llama-3.1-8B-Instruct", "llama-3.1-8b"),
     ("deepseek-ai/DeepSeek-R1-Distill-Qwen-7B", "qwen2.5-7b"),
     ("deepseek-ai/DeepSeek-R1-Distill-Qwen-14B", "qwen2.5-14b"),
     ("deepseek-ai/DeepSeek-R1-Distill-Qwen-32B", "qwen2.5-32b"),
     ("deepseek-ai/DeepSeek-R1-Distill-Qwen-1.5B", "deepseek-r1-distill-qwen-1.5b"),
     ("deepseek-ai/DeepSeek-R1-Distill-Llama-8B", "llama-3.1-8b"),
     ("deepseek-ai/DeepSeek-R1-Distill-Llama-70B", "llama-3.1-70b"),
     ("meta-llama/Llama-3.3-70B-Instruct", "llama-3.1-70b"), ("llama-3.3-70b", "llama-3.1-70b"),
     ("Qwen/Qwen3-30B-A3B-Instruct-2507", "qwen3-30b-a3b-2507"),
     ("zai-org/GLM-4.5-Air", "glm-4.5-air"),
     ("google/gemma-3-27b-it", "gemma-3-27b"), ("microsoft/phi-4", "phi-4")],
)  # fmt: skip
def test_model_names_aliases_and_hf_ids(query, name):
    assert get_model(query).name == name


@pytest.mark.parametrize(
    "query, offered",
    [("30b", ["qwen3-30b-a3b"]), ("mixtral-8x22", ["mixtral-8x22b"]),
     ("qwen3", ["qwen3-8b", "qwen3-30b-a3b"]), ("Qwen/Qwen3-8B-FP8", ["qwen3-8b"]),
     ("gemma-3", ["gemma-3-1b", "gemma-3-27b"])],
)  # fmt: skip
def test_partial_model_names_are_errors_with_candidates(query, offered):
    with pytest.raises(SpecError) as exc:
        get_model(query)
    assert set(offered) <= set(suggested(str(exc.value)))


def test_a_size_is_matched_as_a_word_not_inside_another_number():
    # '1b' starts a word of llama-3.2-1b and gemma-3-1b (models.json); inside DeepSeek-V3's
    # alias '671b' it is part of another number, offered only when nothing better is
    with pytest.raises(SpecError) as exc:
        get_model("1b")
    offered = suggested(str(exc.value))
    assert {"llama-3.2-1b", "gemma-3-1b"} <= set(offered)
    assert "deepseek-v3" not in offered and "deepseek-r1" not in offered
    with pytest.raises(SpecError) as exc:
        get_model("71b")  # found only inside '671b': still offered
    assert "deepseek-v3" in suggested(str(exc.value))


def test_long_candidate_lists_are_cut_with_a_count():
    with pytest.raises(SpecError, match=r"\(and \d+ more\)\?"):
        get_model("q")


def test_hf_id_is_not_a_path_unless_it_exists(tmp_path, monkeypatch):
    with pytest.raises(SpecError, match="not a built-in name or Hugging Face id, nor an existing"):
        get_model("some-org/some-model")
    # a downloaded checkpoint folder with an unknown name is read through its config.json
    folder = tmp_path / "some-org" / "some-model"
    folder.mkdir(parents=True)
    cfg = dict(model_type="llama", hidden_size=64, intermediate_size=128, num_hidden_layers=2,
               num_attention_heads=4, vocab_size=100)  # fmt: skip
    (folder / "config.json").write_text(json.dumps(cfg))
    monkeypatch.chdir(tmp_path)
    assert get_model("some-org/some-model").d_model == 64


def test_mla_models_resolve_by_name_and_id_and_distills_stay_dense():
    for name, spec in (("deepseek-ai/DeepSeek-V3", "deepseek-v3"),
                       ("deepseek-ai/DeepSeek-V3-0324", "deepseek-v3"),
                       ("DeepSeek-R1", "deepseek-r1")):  # fmt: skip
        assert get_model(name).name == spec and get_model(name).is_mla
    with pytest.raises(SpecError, match="unknown model"):
        get_model("deepseek-v3-0325")
    assert get_model("deepseek-r1-distill-qwen-1.5b").model_type == "qwen2"


# total_memory that torch prints in its allocator messages ("GPU 0 has a total capacity of
# X GiB"), quoted from OOM reports on each device; hbm_usable_bytes comes from
# torch.cuda.get_device_properties (MiB) or from these messages themselves.
OOM_TOTAL_CAPACITY_GIB = {
    "h200": "139.80",  # 8xH200 OOM reports (Qwen3-30B-A3B SFT), total capacity of 139.80 GiB
    "b200": "178.35",  # 8xB200 OOM reports, total capacity of 178.35 GiB
    "h20": "95.00",  # 97285 MiB
    "l40s": "44.52",  # L40S OOM reports, total capacity of 44.52 GiB
    "gb200": "184.31",  # vllm-project/vllm#43951 on 4x GB200
    "a100-80gb": "79.14",  # 'NVIDIA A100-SXM4-80GB (79.14 GiB)' (79.14-79.25 by driver)
    "mi300x": "191.98",  # 196592 MiB under ROCm
}


@pytest.mark.parametrize("name, gib", sorted(OOM_TOTAL_CAPACITY_GIB.items()))
def test_usable_hbm_matches_what_torch_reports(name, gib):
    hw = get_hardware(name)
    # torch's allocator message prints total_memory / 2**30 with two decimals
    assert f"{hw.hbm_usable_bytes / 2**30:.2f}" == gib


def test_h100_usable_is_torch_total_memory():
    # _CudaDeviceProperties(name='NVIDIA H100 80GB HBM3', total_memory=81079..81090MB):
    # MiB floored; 79.18 GiB, about 1 % under nvidia-smi's 81559 MiB
    assert get_hardware("h100-sxm").hbm_usable_bytes == 81079 * 2**20


@pytest.mark.parametrize("hw", hardware(), ids=lambda h: h.name)
def test_hardware_fields(hw):
    assert hw.hbm_capacity_bytes == hw.hbm_usable_bytes
    # usable within 10 % of the datasheet (vendors' "GB" are sometimes GiB, minus reserves)
    assert 0.9 * hw.hbm_bytes <= hw.hbm_usable_bytes <= 1.1 * hw.hbm_bytes
    assert hw.hbm_usable_source and hw.host_link_source and hw.source
    assert host_bandwidth_bytes_per_s(hw) == hw.host_link_bandwidth_bytes_per_s


@pytest.mark.parametrize(
    "name, gbps",
    [("a100-80gb", 32), ("a800-80gb", 32), ("l40s", 32), ("h100-sxm", 64), ("h200", 64),
     ("h20", 64), ("b200", 64), ("mi300x", 64), ("gb200", 450)],
)  # fmt: skip
def test_host_link_per_direction(name, gbps):
    # PCIe Gen4 x16 = 64 GB/s both ways, Gen5 x16 = 128 GB/s; GB200's NVLink-C2C 900 GB/s
    assert get_hardware(name).host_link_bandwidth_bytes_per_s == gbps * 10**9


def test_h20_datasheet():
    h20 = get_hardware("h20")
    # NVIDIA H20 product brief: 148 TFLOPS bf16 dense, 96 GB HBM3 at 4.0 TB/s, NVLink 900 GB/s
    assert (h20.peak_flops_per_s["bf16"], h20.hbm_bytes, h20.hbm_bandwidth_bytes_per_s) == (
        148 * 10**12,
        96 * 10**9,
        4 * 10**12,
    )
    assert h20.intra_node_bandwidth_bytes_per_s * 2 == 900 * 10**9


@pytest.mark.parametrize("size, both", [
    ("671b", {"deepseek-v3", "deepseek-r1"}),  # models.json aliases deepseek-v3-671b, -r1-671b
    ("0.5b", {"qwen2.5-0.5b", "qwen2-0.5b"}),  # the names themselves end in 0.5b
])  # fmt: skip
def test_size_both_specs_answer_to_is_ambiguous(size, both):
    # a size in an alias (DeepSeek's '671b') reads as the one in a name does ('0.5b'):
    # ambiguous, listing the candidates, not "unknown model"
    with pytest.raises(SpecError) as err:
        get_model(size)
    message = str(err.value)
    assert "is ambiguous" in message and set(suggested(message)) == both


def test_inside_a_word_is_a_misspelling():
    # '71b' starts no word of DeepSeek's names ('671b' does): offered, not called ambiguous
    with pytest.raises(SpecError, match="unknown model '71b'; did you mean"):
        get_model("71b")
