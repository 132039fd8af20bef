#!/usr/bin/env bash
# One-shot GPU calibration on a machine with a CUDA device (e.g. one H200).
#
#   bash benchmarks/calibrate_gpu.sh            # writes under ${OUT:-calibration-run}
#
# Steps (about 5-8 minutes on one H200; each step has its own timeout so a hang cannot eat
# the device budget):
#   1. environment: nvidia-smi, torch + CUDA versions; stops if torch sees no GPU;
#   2. the CUDA-only tests (FLOP counts of every kernel on the GPU, bf16);
#   3. `rlmcost calibrate --device cuda --quick --json`  (sanity: every FLOP count matches);
#   4. `rlmcost calibrate --device cuda --out <dir>/<hardware>.json --json`  (the full profile);
#   5. copies the profile to benchmarks/profiles/<hardware>.json (measured profiles, checked
#      against the default efficiencies by tests; not built-ins: rlmcost/calibrate/profiles/
#      README.md says why).
# Everything printed also lands in <dir>/*.txt and *.json, so $OUT brings the results back.
# Collectives need two or more GPUs (NCCL); with one GPU they are skipped with a note.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT_DIR="${OUT:-calibration-run}"
mkdir -p "$OUT_DIR"
log() { echo "== $*" | tee -a "$OUT_DIR/steps.txt"; }

log "1/5 environment"
{ nvidia-smi || true; python -c "import sys, torch; print(sys.version); print('torch', torch.__version__, 'cuda', torch.version.cuda, 'available', torch.cuda.is_available(), 'devices', torch.cuda.device_count()); print(torch.cuda.get_device_name() if torch.cuda.is_available() else 'no GPU')"; } 2>&1 | tee "$OUT_DIR/env.txt"
python -c "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)" || {
  log "torch sees no GPU: install a CUDA build of torch==2.13.0 (pip install -e '.[calibrate]' from the CUDA wheel index) and rerun"; exit 1; }
python -c "import rlmcost" 2>/dev/null || pip install -e . --no-deps -q

log "2/5 CUDA tests (FLOP counts on the GPU)"
timeout 300 python -m pytest tests/test_calibrate_kernels.py -p no:cacheprovider -q -rs 2>&1 | tee "$OUT_DIR/tests.txt"

log "3/5 quick calibration"
timeout 240 rlmcost calibrate --device cuda --quick --json > "$OUT_DIR/quick.json" 2> "$OUT_DIR/quick.stderr.txt"
echo "exit $?" | tee -a "$OUT_DIR/steps.txt"; tail -5 "$OUT_DIR/quick.stderr.txt"

HW=$(python -c "import torch; from rlmcost.calibrate.device import match_hardware; print(match_hardware(torch.cuda.get_device_name()).name)")
log "4/5 full calibration on $HW"
COLUMNS=160 timeout 480 rlmcost calibrate --device cuda --out "$OUT_DIR/$HW.json" > "$OUT_DIR/full.txt" 2>&1
status=$?
echo "exit $status" | tee -a "$OUT_DIR/steps.txt"; cat "$OUT_DIR/full.txt"

log "5/5 keep the profile"
if [ "$status" -eq 0 ] && [ -f "$OUT_DIR/$HW.json" ]; then
  mkdir -p benchmarks/profiles && cp "$OUT_DIR/$HW.json" "benchmarks/profiles/$HW.json"
  python -c "from rlmcost.calibrate import load_profile; from rlmcost.specs import get_hardware; p = load_profile('benchmarks/profiles/$HW.json', get_hardware('$HW')); print('ok:', p.name, sorted(p.compute_efficiency))" | tee -a "$OUT_DIR/steps.txt"
else
  log "full calibration failed; profile not kept"
fi
