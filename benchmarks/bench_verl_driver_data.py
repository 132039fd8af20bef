"""How long verl's single driver spends on one step's padded batch beside the serialization
rlmcost prices (rlmcost.perf.controller_data, DATAPROTO_SERDE_BYTES_PER_S from verl PR 3425),
measured on this machine, single-threaded as Ray's TaskRunner actor (num_cpus=1) runs it.

1. The ``old_log_prob`` timer's own work (verl/trainer/ppo/ray_trainer.py ``fit`` at volcengine/
   verl 85d5b2ee2): ``DataProto.concat`` of the collected log-probs and entropies, then
   ``agg_loss`` (token-mean: verl's ``masked_mean``, with its ``torch.where``) of the entropy
   over [N, T], as ratios to ``DataProto.__getstate__`` of the same fp32 tensors (the
   serialization whose rate PR 3425 measured): rlmcost.perf.controller_data
   ``RESULT_CONCAT_PER_STATE`` and ``ENTROPY_MEAN_PER_STATE``.
2. torch.save into a BytesIO from two threads (``verl/utils/ray_utils.py parallel_put``): does
   it run in parallel, or hold the GIL?
3. With ``ray`` installed: ``ray.put`` / a worker's ``ray.get`` of a DataProto-like object
   (verl/protocol.py ``__getstate__``: consolidate, torch.save, getvalue) against
   ``__getstate__`` / ``__setstate__`` alone: Ray's own copies around them.

Usage: python benchmarks/bench_verl_driver_data.py [--sequences 2048]
Measured 2026-12-05 on this sandbox's 2-core Xeon (torch 2.13 CPU, ray 2.60): (1) three runs
at N = 2048 and 1024: concat 0.14-0.31 x (median 0.23) the __getstate__ of the two outputs,
agg_loss 0.83-1.39 x (median 1.24) that of the entropy alone (an earlier form without verl's
torch.where measured 0.67-0.76 x torch.save for both together); two runs: (2) no speed-up
(GIL-bound); (3) ray.put 1.1-2.0 x __getstate__ (medians 1.5 and 1.7), a worker's ray.get
1.25-3.8 x __setstate__ (medians 2.0 and 2.3): noisy on two cores.
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import io
import statistics
import time
from typing import Any

import torch

T = 28_672  # the Qwen2.5-Math-7B DAPO rows' max_response_length
S = 2_048  # their max_prompt_length


def _best(f: Any, reps: int = 3) -> float:
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        f()
        times.append(time.perf_counter() - t)
    return min(times)


def _save(x: Any) -> bytes:
    buf = io.BytesIO()
    torch.save(x, buf)
    return buf.getvalue()


def driver_work(n: int, chunks: int = 8) -> None:
    """(1) as verl runs it: ``torch.cat`` of each output over the data shards
    (``DataProto.concat``), then ``agg_loss`` token-mean = ``verl_F.masked_mean``
    (verl/utils/torch_functional.py at b25bb7d4f: ``torch.where(mask.bool(), values, 0.0)``,
    times the int64 mask, summed, over ``mask.sum()``), against ``DataProto.__getstate__`` of
    the two outputs (consolidate, torch.save, getvalue: what PR 3425's rate times)."""
    lens = torch.randint(100, 3000, (n,))
    mask = (torch.arange(T)[None, :] < lens[:, None]).long()
    lp = [torch.rand(n // chunks, T) for _ in range(chunks)]
    en = [torch.rand(n // chunks, T) for _ in range(chunks)]
    ent = torch.cat(en)

    def masked_mean() -> float:
        valid = torch.where(mask.bool(), ent, 0.0)
        return ((valid * mask).sum() / (mask.sum() + 1e-8)).item()

    cat_s = _best(lambda: (torch.cat(lp), torch.cat(en)))
    agg_s = _best(masked_mean)
    out = _DataProtoLike({"old_log_probs": torch.cat(lp), "entropys": ent})
    state_s = _best(out.__getstate__)
    print(f"(1) concat {cat_s:.2f} s = {cat_s / state_s:.2f} x __getstate__ of the same two "
          f"tensors ({state_s:.2f} s); agg_loss {agg_s:.2f} s = {2 * agg_s / state_s:.2f} x "
          "__getstate__ of the entropy alone")


def threads(n: int) -> None:
    xs = [{"a": torch.rand(n // 4, T)} for _ in range(2)]
    serial = _best(lambda: [_save(x) for x in xs])
    with cf.ThreadPoolExecutor(2) as ex:
        threaded = _best(lambda: list(ex.map(_save, xs)))
    print(f"(2) two torch.saves: serial {serial:.2f} s, two threads {threaded:.2f} s")


class _DataProtoLike:
    """verl/protocol.py DataProto's torch path; consolidate() as one flat copy."""

    def __init__(self, batch: dict[str, torch.Tensor]) -> None:
        self.batch = batch

    def __getstate__(self) -> tuple[bytes, None, dict[str, Any]]:
        flat = torch.cat([v.reshape(-1).view(torch.uint8) for v in self.batch.values()])
        views, off = {}, 0
        for k, v in self.batch.items():
            size = v.numel() * v.element_size()
            views[k] = flat[off:off + size].view(v.dtype).view(v.shape)
            off += size
        return _save(views), None, {}

    def __setstate__(self, data: tuple[bytes, None, dict[str, Any]]) -> None:
        self.batch = torch.load(io.BytesIO(data[0]), weights_only=False)


def ray_copies(n: int, reps: int = 6) -> None:
    try:
        import ray
    except ImportError:
        print("(3) skipped: ray is not installed")
        return
    rows = max(1, n // 8)
    batch = {"prompts": torch.randint(0, 9, (rows, S)),
             "responses": torch.randint(0, 9, (rows, T)),
             "response_mask": torch.randint(0, 2, (rows, T)),
             **{k: torch.randint(0, 9, (rows, S + T))
                for k in ("input_ids", "attention_mask", "position_ids")}}  # fmt: skip
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)

    @ray.remote(num_cpus=1)
    class Worker:
        def setstate_s(self, state: Any) -> float:
            t = time.perf_counter()
            _DataProtoLike.__new__(_DataProtoLike).__setstate__(state)
            return time.perf_counter() - t

        def get_s(self, refs: list[Any]) -> float:
            t = time.perf_counter()
            ray.get(refs[0])
            return time.perf_counter() - t

    w = Worker.remote()  # type: ignore[attr-defined]
    dp = _DataProtoLike(batch)
    puts, gets = [], []
    for _ in range(reps):
        t = time.perf_counter()
        state = dp.__getstate__()
        gs = time.perf_counter() - t
        t = time.perf_counter()
        ref = ray.put(dp)
        puts.append((time.perf_counter() - t) / gs)
        gets.append(ray.get(w.get_s.remote([ref])) / ray.get(w.setstate_s.remote(state)))
    ray.shutdown()
    print(f"(3) ray.put / __getstate__ median {statistics.median(puts):.2f} "
          f"({min(puts):.2f}-{max(puts):.2f}); worker ray.get / __setstate__ median "
          f"{statistics.median(gets):.2f} ({min(gets):.2f}-{max(gets):.2f})")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sequences", type=int, default=2048, help="N (the rows run 8192)")
    n = p.parse_args().sequences
    torch.set_num_threads(1)
    driver_work(n)
    threads(n)
    ray_copies(n)


if __name__ == "__main__":
    main()
