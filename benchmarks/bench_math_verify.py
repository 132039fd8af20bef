"""Seconds per response of NeMo RL's math verifier (HFVerifyWorker, hf_math_verify), measured here.

Run: python benchmarks/bench_math_verify.py [--per-length 200] [--seed 0]
(needs ``pip install math-verify==0.9.0 latex2sympy2-extended==1.11.0 sympy==1.14.0``, the
versions NVIDIA-NeMo/RL v0.7.0's uv.lock pins; not an rlmcost dependency).

It calls what ``nemo_rl/environments/math_environment.py`` ``HFVerifyWorker.verify`` calls per
response (v0.3.0-v0.7.0): ``math_metric(gold_extraction_target=(LatexExtractionConfig(),),
pred_extraction_target=(ExprExtractionConfig(), LatexExtractionConfig()))`` on
``["\\boxed{" + ground_truth + "}"]`` and ``[response]``, one response at a time, in one process
(a verify worker is one Ray actor, one process). The responses are synthetic chains of thought
in the shape ``examples/prompts/cot.txt`` asks for (steps with inline and display LaTeX, the
answer in ``\\boxed{}``), at a given number of tokens (4 characters a token), with answers of
the kinds OpenMathInstruct-2 has (integers, fractions, radicals, decimals, intervals, tuples,
polynomials), half of them wrong (a wrong answer runs sympy's comparison to the end). It
prints, per length, the mean, median, 90th percentile and largest seconds per response, then
the least squares line ``fixed + per_token x tokens`` through the means (a worker's chunk
takes the sum of its responses' times, so the mean is what a chunk's time scales with): the figures
``rlmcost.perf.nemo_rl_env`` cites. Timings are printed, never asserted.
"""

from __future__ import annotations

import argparse
import logging
import random
import statistics
import sys
import time
from typing import Any

LENGTHS = (200, 800, 1600, 3200, 6400, 12800)
CHARS_PER_TOKEN = 4
STEPS = (
    "First, we compute $a = {x} + {y} = {s}$.",
    "Then $\\frac{{{x}}}{{{y}}} + \\frac{{1}}{{{y}}} = \\frac{{{x1}}}{{{y}}}$, so we have "
    "${x} \\cdot {y} = {p}$.",
    "Let's substitute: if $b^2 = {p}$, then $b = \\sqrt{{{p}}}$.",
    "So the total number of items is {s}, and each one costs ${y}.",
    "\\[ x^2 - {s}x + {p} = 0 \\implies (x - {x})(x - {y}) = 0 \\]",
    "Therefore the remaining amount is ${s} - {x} = {y}$ dollars.",
    "The area is $\\pi r^2 = {p}\\pi$ and the perimeter is $2\\pi r$.",
)
ANSWERS = (  # (ground truth, a correct response's answer, a wrong one)
    ("12", "12", "13"),
    ("\\frac{3}{4}", "\\frac{3}{4}", "\\frac{4}{3}"),
    ("2\\sqrt{3}", "2\\sqrt{3}", "3\\sqrt{2}"),
    ("0.5", "\\frac{1}{2}", "0.25"),
    ("(-\\infty, 3]", "(-\\infty, 3]", "(-\\infty, 3)"),
    ("(2, 3)", "(2, 3)", "(3, 2)"),
    ("x^2 + 1", "1 + x^2", "x^2 - 1"),
)


def response(tokens: int, answer: str, rng: random.Random) -> str:
    """A chain of thought of about ``tokens`` tokens ending in ``\\boxed{answer}``."""
    parts, n = [], 0
    while n < tokens * CHARS_PER_TOKEN:
        x, y = rng.randint(2, 99), rng.randint(2, 99)
        step = rng.choice(STEPS).format(x=x, y=y, s=x + y, p=x * y, x1=x + 1)
        parts.append(step)
        n += len(step) + 1
    return " ".join(parts) + f" The final answer is $\\boxed{{{answer}}}$."


def _run(verify: Any, rng: random.Random, per_length: int) -> list[tuple[float, ...]]:
    """Per length: mean, median, 90th percentile and largest seconds per response."""
    out = []
    for tokens in LENGTHS:
        seconds = []
        for i in range(per_length):
            gold, right, wrong = ANSWERS[i % len(ANSWERS)]
            text = response(tokens, right if i % 2 else wrong, rng)
            t0 = time.perf_counter()
            try:
                verify(["\\boxed{" + gold + "}"], [text])
            except BaseException:  # noqa: BLE001 - HFVerifyWorker scores these 0
                pass
            seconds.append(time.perf_counter() - t0)
        seconds.sort()
        out.append((statistics.fmean(seconds), statistics.median(seconds),
                    seconds[int(0.9 * (len(seconds) - 1))], seconds[-1]))  # fmt: skip
    return out


def _line(xs: tuple[int, ...], ys: list[float]) -> tuple[float, float]:
    """Least squares ``a + b x`` through the points: ``(a, b)``."""
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    b = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / \
        sum((x - mx) ** 2 for x in xs)  # fmt: skip
    return my - b * mx, b


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--per-length", type=int, default=200)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    try:
        from math_verify.metric import math_metric
        from math_verify.parser import ExprExtractionConfig, LatexExtractionConfig
    except ImportError:
        print("error: math-verify is not installed; pip install math-verify==0.9.0",
              file=sys.stderr)  # fmt: skip
        return 2
    logging.getLogger("math_verify").setLevel(logging.CRITICAL)
    verify = math_metric(gold_extraction_target=(LatexExtractionConfig(),),
                         pred_extraction_target=(ExprExtractionConfig(), LatexExtractionConfig()))
    verify(["\\boxed{1}"], ["\\boxed{1}"])  # warm-up: first-call imports and caches
    # the same responses in every run: the least of the runs is the one least slowed by other
    # processes on a shared machine (contention only adds time)
    runs = [_run(verify, random.Random(args.seed), args.per_length) for _ in range(args.repeats)]
    print("tokens  " + "  ".join(f"run{r}: mean/median/p90/max ms" for r in range(args.repeats)))
    for i, tokens in enumerate(LENGTHS):
        cells = ("/".join(f"{1e3 * x:.2f}" for x in run[i]) for run in runs)
        print(f"{tokens:6d}  " + "  ".join(cells))
    for name, stat, pick in (("value", 0, min), ("low", 1, min), ("high", 0, max)):
        ys = [pick(run[i][stat] for run in runs) for i in range(len(LENGTHS))]
        fixed, per_token = _line(LENGTHS, ys)
        what = "means" if stat == 0 else "medians"
        print(f"{name}: {1e3 * fixed:.3f} ms + {1e6 * per_token:.3f} us x tokens "
              f"({pick.__name__} over runs of the {what})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
