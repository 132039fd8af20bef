"""How much HBM bandwidth a batch-1 decode step's kernels draw from a given number of Hopper SMs.

Run on one Hopper GPU (needs PyTorch with CUDA; Triton for the streaming-read part):
``python benchmarks/bench_decode_gemv.py [--sms 78] [--json out.json]``.

Two measurements, each at every SM and at ``--sms`` SMs (the H20 has 78):

* **streaming read**: a Triton kernel that sums a 2 GiB bf16 buffer with one persistent
  program per SM (the grid is the SM count; ``--sms`` programs for the restricted case), over
  a sweep of block sizes and warp counts; the best of the sweep is what that many SMs can pull
  from HBM (bytes in flight per SM bound it: Little's law);
* **cuBLAS batch-1 linears**: ``torch.nn.functional.linear`` of one token through the weight
  shapes of Qwen3-8B and Qwen3-32B (q/k/v fused, o, gate/up fused, down, lm_head), what an
  engine's decode step at batch 1 runs with ``UnquantizedLinearMethod``; several copies of
  each weight rotate so that none is served from L2. The restricted case asks cuBLASLt to
  leave SMs free (``torch._C._set_sm_carveout_experimental``) where this PyTorch has it. The
  kernels' names (torch.profiler) say which cuBLAS kernel ran.

Figures are printed as GB/s of bytes read; nothing is asserted.

Figures, one H100 SXM 80GB HBM3 (PyTorch 2.11.0+cu130, Triton 3.6): streaming read, best of the
sweep, 2.904 TB/s on 132 SMs, 2.425 on 78, 2.222 on 66, 1.502 on 39 (rlmcost.perf.sm_bandwidth
takes them; a second run 2.444 on 78, 2.914 on 132). cuBLAS batch-1 linears on all SMs:
Qwen3-8B's shapes 2.80 TB/s in all (2.10-2.86 by shape), Qwen3-32B's 2.83 (2.54-2.88), the
same through cuBLASLt; kernel ``nvjet_sm90_tst_256x8_64x6_2x1_v_bz_TNT`` (the weights on
wgmma's M, the token padded to 8).
With 54 SMs carved out the cuBLASLt figures did not fall (2.76 / 2.81 TB/s): that kernel did not
take the carve-out, so the restricted linear rows measure nothing about 78 SMs.
"""

from __future__ import annotations

import argparse
import functools
import json

import torch

SHAPES = {  # (N_out, K) of a decode step's linears (Hugging Face configs)
    "qwen3-8b": [(4096 + 2 * 1024, 4096), (4096, 4096), (2 * 12288, 4096), (4096, 12288),
                 (151936, 4096)],
    "qwen3-32b": [(8192 + 2 * 1024, 5120), (5120, 8192), (2 * 25600, 5120), (5120, 25600),
                  (151936, 5120)],
}  # fmt: skip


def _time_ms(fn, iters: int) -> float:
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    start.record()
    for _ in range(iters):
        fn()
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end) / iters


def _graph_ms(x: torch.Tensor, ws: list[torch.Tensor], rounds: int = 4) -> float:
    """Milliseconds of one batch-1 linear, replayed from a CUDA graph that runs through every
    weight copy ``rounds`` times (no host launch in the timing; no copy is in L2 when read)."""
    for w in ws:  # warm-up: cuBLAS picks its kernel and workspace outside the capture
        torch.nn.functional.linear(x, w)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for _ in range(rounds):
            for w in ws:
                torch.nn.functional.linear(x, w)
    return _time_ms(graph.replay, 5) / (rounds * len(ws))


def streaming_read(programs: int) -> dict[str, float]:
    import triton
    import triton.language as tl

    @triton.jit
    def read_sum(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
        pid = tl.program_id(0)
        step = tl.num_programs(0) * BLOCK
        acc = tl.zeros([BLOCK], dtype=tl.float32)
        for start in range(pid * BLOCK, n, step):
            offs = start + tl.arange(0, BLOCK)
            acc += tl.load(x_ptr + offs, mask=offs < n, other=0.0).to(tl.float32)
        tl.store(out_ptr + pid, tl.sum(acc, axis=0))

    n = 1 << 30  # 2 GiB of bf16
    x = torch.ones(n, device="cuda", dtype=torch.bfloat16)
    out = torch.empty(programs, device="cuda", dtype=torch.float32)
    best: dict[str, float] = {}
    for block in (4096, 8192, 16384, 32768):
        for warps in (8, 16, 32):
            run = functools.partial(read_sum[(programs,)], x, out, n, BLOCK=block,
                                    num_warps=warps)  # fmt: skip
            ms = _time_ms(run, 10)
            best[f"block{block}_warps{warps}"] = 2 * n / (ms * 1e-3) / 1e9
    del x
    return best


def linears(carveout: int, library: str) -> dict[str, dict[str, float]]:
    torch.backends.cuda.preferred_blas_library(library)
    set_carveout = getattr(torch._C, "_set_sm_carveout_experimental", None)
    if carveout and set_carveout is None:
        return {"error": {"no _set_sm_carveout_experimental in this PyTorch": 0.0}}
    if set_carveout is not None:
        set_carveout(carveout if carveout else None)
    res: dict[str, dict[str, float]] = {}
    for model, shapes in SHAPES.items():
        total_bytes, total_ms = 0, 0.0
        rows: dict[str, float] = {}
        for n_out, k in shapes:
            copies = max(2, int(4e8 // (n_out * k * 2)) + 1)  # > 400 MB in rotation: not L2
            ws = [torch.randn(n_out, k, device="cuda", dtype=torch.bfloat16) for _ in range(copies)]
            x = torch.randn(1, k, device="cuda", dtype=torch.bfloat16)
            ms = _graph_ms(x, ws)
            b = n_out * k * 2
            rows[f"{n_out}x{k}"] = b / (ms * 1e-3) / 1e9
            total_bytes += b
            total_ms += ms
            del ws
        rows["all_GBps"] = total_bytes / (total_ms * 1e-3) / 1e9
        res[model] = rows
    if set_carveout is not None:
        set_carveout(None)
    return res


def kernel_names(library: str) -> list[str]:
    from torch.profiler import ProfilerActivity, profile

    torch.backends.cuda.preferred_blas_library(library)
    w = torch.randn(25600 * 2, 5120, device="cuda", dtype=torch.bfloat16)
    x = torch.randn(1, 5120, device="cuda", dtype=torch.bfloat16)
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(3):
            torch.nn.functional.linear(x, w)
        torch.cuda.synchronize()
    return sorted({e.key for e in prof.key_averages()})


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sms", type=int, default=78)
    ap.add_argument("--json", default="")
    args = ap.parse_args()
    props = torch.cuda.get_device_properties(0)
    all_sms = props.multi_processor_count
    out = {"device": props.name, "sms": all_sms, "torch": torch.__version__,
           "cuda": torch.version.cuda}  # fmt: skip
    print(out, flush=True)
    for lib in ("cublas", "cublaslt"):
        out[f"kernels_m1_{lib}"] = kernel_names(lib)
        print("kernels", lib, out[f"kernels_m1_{lib}"], flush=True)
    for label, programs in (("all", all_sms), ("restricted", args.sms)):
        try:
            r = streaming_read(programs)
            out[f"read_{label}"] = r
            print(f"read {label} ({programs} programs): best {max(r.values()):.0f} GB/s", r,
                  flush=True)  # fmt: skip
        except Exception as e:  # noqa: BLE001 - a missing Triton is reported, not fatal
            print("read failed:", e, flush=True)
    for label, carve, lib in (
        ("all", 0, "cublas"),
        ("all_lt", 0, "cublaslt"),
        ("restricted_lt", all_sms - args.sms, "cublaslt"),
    ):
        r2 = linears(carve, lib)
        out[f"linear_{label}"] = r2
        print(f"linear {label} (carveout {carve}):", json.dumps(r2), flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
