#!/usr/bin/env bash
# gpu-check.sh: on a CUDA machine (the H200 host), in one go: unpack the carried
# protobuf-c packages, build for sm_90, run every test including the `gpu` ones,
# run compute-sanitizer on light models, compare a torchvision ResNet-50 on CPU and
# GPU, and print a short summary last.
#
#   tools/gpu-check.sh            # from the repository root
#   ZOO_TABLE=1 tools/gpu-check.sh
#       instead of the tests: build infer and model_check only, export the torchvision
#       zoo (ZOO_MODELS, default all 17; ZOO_EXPORTER torchscript (default), dynamo or
#       both) and write tools/model-table.sh's table (cpu, cuda fp32, cuda fp16) to
#       $OUT/model_table.md and the summary (zoo in ZOO_DIR, default /tmp/zoo).
#       Per-model export and run times go to the summary too. Cells not started by
#       ZOO_TABLE_LIMIT s (default 540) after the start read "not run (time)"; the export
#       stops ZOO_TABLE_RESERVE s (150) before.
#       ZOO_TABLE_COLUMNS="fp32 fp16" leaves the CPU column out (about 40 s).
#   ZOO_PROFILE=1
#       instead of the full suite: the gpu-labelled tests (CTEST_REGEX narrows them), then
#       the zoo exported at opset 17 as tools/bench_peer.py exports it, and per model
#       (ZOO_MODELS; batches as the speed issue's table) infer's fp16 throughput with
#       device-resident inputs (--bench --no-transfers) and the costliest steps of
#       --profile: where the time goes, before a peer benchmark.
#       QDQ_BENCH=1 (ZOO_MODELS holding resnet50): its QDQ model (models/quantize_qdq.py)
#       on the GPU against the CPU, and its fp16 img/s beside the float model's; then its
#       symmetric int8 QDQ model with --config int8=0 and 1 (int8 tensor cores) alike.
#       PROFILE_CONFIG="key=value" adds a second profile with that config (e.g.
#       cuda.conv_impl=pw-stream); NCU="regex:count:model:infer args;..." runs Nsight
#       Compute on the first launches of those kernels in that model's build and profile.
#   Other knobs: ZOO_MODELS (without ZOO_TABLE: the models the model tests export and
#   check, default resnet50,mobilenet_v2,efficientnet_b0,vit_b_16),
#   CTEST_REGEX (only the tests it matches), CTEST_LIMIT (s), QUICK=1,
#   SKIP_TORCH=1, SKIP_BENCH=1, SKIP_TESTS=1 (build, then the benchmark only),
#   BENCH_MODELS="name:batch,...", BENCH_COMPILE=1 (torch.compile in the peer benchmark),
#   BENCH_DEADLINE=S, BENCH_EXTRAS=0 (no profiles or --cache times after the benchmark),
#   BENCH_PREWARM=N (with BENCH_COMPILE: export and compile every case in N processes
#   first), BENCH_APPEND=1 (keep the cases an earlier call on the same, still warm
#   machine measured, and print the table over all: the zoo with torch.compile takes
#   two calls).
#   STREAMS_BENCH=1
#       instead of the full suite: the gpu tests of issue 12 (async runs, in-place
#       buffers, uint8 inputs, --streams, threads, bindings, server; CTEST_REGEX overrides
#       them), then ResNet-50 and MobileNetV2 (STREAMS_MODELS) exported at opset 17,
#       batch 256 fp16: --bench --no-transfers (the compute-only reference), plain --bench,
#       and --bench --streams N (STREAMS_N, default "1 2 3") from host fp32 input and with
#       --input-type u8; the summary gives images/s, the share of --no-transfers and the
#       copy time hidden of each.
#   COMPARE_PRECISION=1 (with STREAMS_BENCH or the full suite): --compare-precision timed
#   on the zoo's ResNet-50 and ViT-B/16 (ZOO_MODELS must hold them).
#   The fp16 model tests compare infer's error with PyTorch's own fp16 error on the same
#   weights and input, which the CTest setup gpu_model_zoo_torch_fp16 measures once on
#   this GPU (models/torch_fp16_error.py) into the zoo's torch_fp16_error.json before
#   them; the summary lists both.
# Expects (carried, ignored by git): .deps/*.deb (protobuf-c, from
# ../shared/gpu-host/debs; libmicrohttpd and jansson for infer-server, from Debian 12)
# and .data/onnx-tests.tgz (tar of the ONNX backend test folders node/ and light/).
# tools/gpu-prepare.sh makes both on a development machine. Without the libmicrohttpd/
# jansson .debs (or without the host's libgnutls.so.30) infer-server is not built and
# the server tests skip; without curl they use a python3 stand-in for it.
# Logs go to $OUT (or ./gpu-check-out) when set.
set -uo pipefail
cd "$(dirname "$0")/.."
root=$PWD
t_start=$(date +%s)
out=${OUT:-$root/gpu-check-out}
mkdir -p "$out"
summary=()
# conformance failure lists for the record
keep_failures() { grep -E '^test_.* (FAIL|CRASH|HANG|unsupported) ' "$1" > "$2" 2>/dev/null; }
note() { summary+=("$*"); echo "== $*"; }

# ---- dependencies: protobuf-c (and the server's libraries) from the carried .debs ------
pc=/tmp/pc
mkdir -p $pc
for f in .deps/*.deb; do dpkg -x "$f" $pc; done
export PATH=$pc/usr/bin:$PATH
export LD_LIBRARY_PATH=$pc/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
# infer-server: tools/server/CMakeLists.txt tries pkg-config first (the unpacked .pc
# files say prefix=/usr and are not on its path, so it finds nothing), then these
# cache variables. The binary finds the libraries through LD_LIBRARY_PATH (and the
# build RPATH); libmicrohttpd12 needs the host's own libgnutls.so.30.
pcl=$pc/usr/lib/x86_64-linux-gnu
server_args=()
if [ -e $pc/usr/include/microhttpd.h ] && [ -e $pc/usr/include/jansson.h ] &&
  [ -e $pcl/libmicrohttpd.so ] && [ -e $pcl/libjansson.so ]; then
  if ldconfig -p 2>/dev/null | grep -q 'libgnutls\.so\.30 ' || [ -e /usr/lib/x86_64-linux-gnu/libgnutls.so.30 ]; then
    server_args=(-DMICROHTTPD_INCLUDE_DIR=$pc/usr/include -DMICROHTTPD_LIBRARY=$pcl/libmicrohttpd.so
                 -DJANSSON_INCLUDE_DIR=$pc/usr/include -DJANSSON_LIBRARY=$pcl/libjansson.so)
    server_note="libmicrohttpd + jansson from .deps"
  else
    server_note="not built: libgnutls.so.30 (needed by libmicrohttpd12) is not on this host"
  fi
else
  server_note="not built: no libmicrohttpd/jansson .debs in .deps (tools/gpu-prepare.sh)"
fi
server_note="$server_note; curl: $(command -v curl >/dev/null && echo present || echo 'absent (python3 stand-in)')"
data=/tmp/onnx-tests
mkdir -p $data && tar xzf .data/onnx-tests.tgz -C $data

# ---- build ------------------------------------------------------------------------
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$out/gpu.txt"
build=/tmp/build-gpu
t0=$(date +%s)
cmake -S . -B $build -G Ninja -DCMAKE_BUILD_TYPE=Release -DINFER_CUDA=ON \
  -DCMAKE_CUDA_ARCHITECTURES=90 -DINFER_ONNX_TESTS_DIR=$data \
  -DPROTOC_C=$pc/usr/bin/protoc-c -DPROTOBUF_C_INCLUDE_DIR=$pc/usr/include \
  -DPROTOBUF_C_LIBRARY=$pc/usr/lib/x86_64-linux-gnu/libprotobuf-c.so \
  "-DINFER_ZOO_MODELS=$(echo "${ZOO_MODELS:-resnet50,mobilenet_v2,efficientnet_b0,vit_b_16}" | tr , ';')" \
  "${server_args[@]}" >"$out/configure.log" 2>&1 &&
  if [ "${ZOO_TABLE:-0}" = 1 ]; then
    cmake --build $build -j 16 --target infer model_check >"$out/build.log" 2>&1
  else
    cmake --build $build -j 16 >"$out/build.log" 2>&1
  fi
rc=$?
note "build: rc=$rc in $(( $(date +%s) - t0 )) s (log: build.log)"
note "infer-server: $server_note; $(grep -E 'infer: (infer-server|libmicrohttpd)' "$out/configure.log" | head -1)"
if [ $rc -ne 0 ]; then tail -40 "$out/build.log"; printf '%s\n' "${summary[@]}"; exit 1; fi
$build/infer --diagnose >"$out/diagnose.log" 2>&1
note "diagnose (rc=$?): $(grep -E 'TFLOP/s|PROBLEM' "$out/diagnose.log" | head -3 | tr '\n' ' ')"

finish() {
  echo
  echo "==================== summary ===================="
  printf '%s\n' "${summary[@]}" | tee "$out/summary.txt"
  # the device tool brings back a handful of files: pack the logs into one (the summary
  # and the model table stay beside it)
  (cd "$out" && tar czf /tmp/gpu-check-logs.tgz --exclude summary.txt --exclude model_table.md . &&
    find . -mindepth 1 -maxdepth 1 ! -name model_table.md -exec rm -rf {} + &&
    mv /tmp/gpu-check-logs.tgz logs.tgz && printf '%s\n' "${summary[@]}" > summary.txt)
}

# build times of ResNet-50 b256 fp16 without and with the algorithm cache (issue 5:
# cold and warm)
cache_build_times() { # MODEL.onnx [BATCH]: build times without and with the algorithm cache
  [ -f "$1" ] || return
  local b=${2:-256} m
  m=$(basename "$1" .onnx)
  rm -f /tmp/algo_$m.cache
  for k in cold warm; do
    $build/infer "$1" --device cuda --precision fp16 --batch $b \
      --cache /tmp/algo_$m.cache --bench --duration 1 >"$out/cache_${m}_$k.log" 2>&1
    note "$m b$b fp16 --cache, $k: $(grep -E '^build:' "$out/cache_${m}_$k.log")"
  done
}

# issue 16: --compare-precision's ranked table (CUDA fp16 against the CPU's fp32, batch 1)
# on ResNet-50 and ViT-B/16, timed (target: under 30 s each), from the zoo exports in $1
compare_precision_times() {
  local m t0 rc
  for m in resnet50 vit_b_16; do
    [ -f "$1/$m.onnx" ] || { note "$m --compare-precision: no $1/$m.onnx"; continue; }
    t0=$(date +%s%N)
    $build/infer "$1/$m.onnx" --device cuda --precision fp16 --batch 1 --compare-precision \
      >"$out/compare_precision_$m.log" 2>&1
    rc=$?
    note "$m --compare-precision cuda fp16: rc=$rc in $(( ($(date +%s%N) - t0) / 1000000 )) ms, $(grep -cE '^ *[0-9]+ ' "$out/compare_precision_$m.log") rows; first: $(grep -m1 -E '^ *1 ' "$out/compare_precision_$m.log" | tr -s ' ' | cut -c1-160)"
  done
}

# The costliest op types of a --profile log (FILE): per op and implementation the summed
# step medians, the step count, costliest first; N lines (the profile's columns:
# # node op impl ms share ...)
profile_by_op() {
  grep -E '^ +[0-9]+ ' "$1" |
    awk '{ t[$3" "$4] += $5; c[$3" "$4]++ } END { for (k in t) printf "%8.3f ms %4d x %s\n", t[k], c[k], k }' |
    sort -rn | head -"$2"
}

# ---- the peer benchmark (the section at the end says what it runs) ----------------------
peer_bench() {
if [ "${SKIP_BENCH:-0}" != 1 ] && python3 -c 'import torch, torchvision' 2>/dev/null; then
    t0=$(date +%s)
    PYTHONUNBUFFERED=1 python3 tools/bench_peer.py --infer $build/infer \
      ${BENCH_MODELS:+--models "$BENCH_MODELS"} ${BENCH_COMPILE:+--compile} \
      ${BENCH_PREWARM:+--prewarm $BENCH_PREWARM} ${BENCH_APPEND:+--append} --out /tmp/bench \
      --deadline ${BENCH_DEADLINE:-400} --markdown "$out/peer_table.md" >"$out/bench_peer.log" 2>&1
    note "peer benchmark (rc=$?, $(( $(date +%s) - t0 )) s; peer_table.md):"
    while read -r l; do note "  $l"; done < <(grep -E '^\||^geometric|^fp16|^fp32' "$out/bench_peer.log")
    # BENCH_EXTRAS=0 leaves out the profiles and the --cache build times (a short call)
    [ "${BENCH_EXTRAS:-1}" = 1 ] &&
    grep -E '^\| [a-z]' "$out/bench_peer.log" | awk -F'|' '{gsub(/[ x]/,"",$(NF-1)); if ($(NF-1)+0 < 1.2) print $2, $3}' |
    while read -r m b; do
      [ -f /tmp/bench/$m.onnx ] || continue
      $build/infer /tmp/bench/$m.onnx --device cuda --precision fp16 --batch $b --profile \
        >"$out/profile_${m}_$b.log" 2>&1
      note "  profile $m b$b: $(grep -E '^total' "$out/profile_${m}_$b.log" | cut -c1-80)"
      while read -r l; do note "    $l"; done < <(profile_by_op "$out/profile_${m}_$b.log" 8)
    done
    if [ "${BENCH_EXTRAS:-1}" = 1 ]; then
      cache_build_times /tmp/bench/vit_b_16.onnx 128
      cache_build_times /tmp/bench/resnet50.onnx 256
    fi
  fi
  
}

# ---- ZOO_TABLE=1: export the torchvision zoo, table of cpu / cuda fp32 / cuda fp16 ------------
if [ "${ZOO_TABLE:-0}" = 1 ]; then
  models=${ZOO_MODELS:-resnet18,resnet50,resnext50_32x4d,wide_resnet50_2,mobilenet_v2,mobilenet_v3_large,efficientnet_b0,densenet121,vgg16,squeezenet1_1,googlenet,inception_v3,shufflenet_v2_x1_0,regnet_y_400mf,mnasnet1_0,convnext_tiny,vit_b_16}
  exporter=${ZOO_EXPORTER:-torchscript}
  zoo=${ZOO_DIR:-/tmp/zoo}
  deadline=$(( t_start + ${ZOO_TABLE_LIMIT:-540} ))
  left=$(( deadline - ${ZOO_TABLE_RESERVE:-150} - $(date +%s) ))
  [ $left -lt 30 ] && left=30
  rm -rf "$zoo"  # a table of this run's exports only (no earlier ones kept beside failures)
  t0=$(date +%s)
  timeout $left python3 models/export_zoo.py "$zoo" --models "$models" --exporter "$exporter" \
    >"$out/zoo_export.log" 2>&1
  rc=$?
  note "zoo export ($exporter, $(echo "$models" | tr ',' '\n' | wc -l) models): rc=$rc in $(( $(date +%s) - t0 )) s$([ $rc = 124 ] && echo " (stopped at ${left} s)")"
  # the versions, each model's time and opset (or its error), the last line
  while read -r l; do note "  $l"; done < <(grep -E '^torch |^  note:| s \(export |FAILED|WARNING|^exported ' \
    "$out/zoo_export.log" | sed 's/  |out|.*//' | cut -c1-300)
  dirs=("$zoo")
  [ "$exporter" = both ] && dirs+=("$zoo/dynamo")
  t0=$(date +%s)
  MODELS=$models MODEL_TABLE_DEADLINE=$deadline MODEL_TABLE_LOGS="$out/model_table_logs" \
    tools/model-table.sh --columns "${ZOO_TABLE_COLUMNS:-cpu fp32 fp16}" $build/infer "${dirs[@]}" \
    >"$out/model_table.md" 2>"$out/model_table.log"
  rc=$?
  note "model table: rc=$rc in $(( $(date +%s) - t0 )) s (model_table.md; per-cell times in model_table.log)"
  while read -r l; do note "$l"; done <"$out/model_table.md"
  note "  $(head -1 "$out/model_table.log")"
  while read -r l; do note "  $l"; done < <(grep -E '^model-table: \S+ +(cpu|fp32|fp16) +[0-9.]+ s ' "$out/model_table.log" |
    sed 's/^model-table: //' | awk '!($1 in t) { order[++n] = $1 } { t[$1] = t[$1] sprintf(" %s %s s;", $2, $3) }
      END { for (i = 1; i <= n; i++) printf "%s:%s\n", order[i], t[order[i]] }')
  cache_build_times "$zoo/resnet50.onnx"
  finish
  exit 0
fi

# ---- ZOO_PROFILE=1: gpu tests, then infer alone on the zoo: throughput and profile -------
zoo_batch() {
  case $1 in
    resnext50_32x4d|wide_resnet50_2|inception_v3|vgg16|vit_b_16|densenet121|convnext_tiny) echo 128 ;;
    *) echo 256 ;;
  esac
}
if [ "${ZOO_PROFILE:-0}" = 1 ]; then
  t0=$(date +%s)
  timeout ${CTEST_LIMIT:-200} ctest --test-dir $build -j 8 --output-on-failure --timeout 120 \
    -L gpu ${CTEST_REGEX:+-R "$CTEST_REGEX"} >"$out/ctest.log" 2>&1
  note "ctest -L gpu: rc=$? in $(( $(date +%s) - t0 )) s: $(grep -E 'tests passed' "$out/ctest.log")"
  while read -r l; do note "  $l"; done < <(grep -E '^\s+[0-9]+ - .*\((Failed|Timeout|Not Run)' "$out/ctest.log" | head -30)
  cp $build/Testing/Temporary/LastTest.log "$out/ctest_full.log" 2>/dev/null
  models=${ZOO_MODELS:-resnet50,mobilenet_v2,resnet18,resnext50_32x4d,wide_resnet50_2,mobilenet_v3_large,efficientnet_b0,densenet121,vgg16,squeezenet1_1,googlenet,inception_v3,shufflenet_v2_x1_0,regnet_y_400mf,mnasnet1_0,convnext_tiny,vit_b_16}
  zoo=/tmp/zoo17
  t0=$(date +%s)
  python3 models/export_zoo.py $zoo --models "$models" --opset 17 >"$out/zoo_export.log" 2>&1
  note "zoo export opset 17: rc=$? in $(( $(date +%s) - t0 )) s: $(tail -1 "$out/zoo_export.log")"
  for m in $(echo "$models" | tr ',' ' '); do
    [ -f $zoo/$m.onnx ] || continue
    b=$(zoo_batch $m)
    $build/infer $zoo/$m.onnx --device cuda --precision fp16 --batch $b --bench --no-transfers \
      --duration 1 --verbose >"$out/bench_$m.log" 2>&1
    rc=$?
    note "$m b$b: rc=$rc $(grep -E '^throughput' "$out/bench_$m.log" | sed 's/throughput: //') | $(grep -oE 'implementations chosen: .*' "$out/bench_$m.log" | cut -c1-150)"
    [ $rc -ne 0 ] && note "  $(grep -vE '^infer: (pass|cuda|plan|batch)' "$out/bench_$m.log" | tail -2 | cut -c1-250)"
    grep -qE 'Concat parts written in place' "$out/bench_$m.log" &&
      note "  $(grep -oE '[0-9]+ of [0-9]+ Concat parts written in place' "$out/bench_$m.log" | head -1)"
    $build/infer $zoo/$m.onnx --device cuda --precision fp16 --batch $b --profile \
      >"$out/profile_$m.log" 2>&1
    note "  $(grep -E '^total' "$out/profile_$m.log" | cut -c1-120)"
    while read -r l; do note "    $l"; done < <(profile_by_op "$out/profile_$m.log" 6)
    # the first convolution (a network's stem: which implementation took it)
    note "    first conv $(grep -m1 -E '^ +[0-9]+ +[^ ]+ +(FusedConv|Conv) ' "$out/profile_$m.log" | sed 's/  */ /g' | cut -c1-160)"
    # and the three costliest single steps (node, op, implementation, ms, share, roofline)
    while read -r l; do note "    step $l"; done < <(grep -E '^ +[0-9]+ ' "$out/profile_$m.log" |
      sort -k5 -rn | head -3 | sed 's/  */ /g' | cut -c1-160)
    if [ -n "${PROFILE_CONFIG:-}" ]; then # the same profile with an implementation forced
      $build/infer $zoo/$m.onnx --device cuda --precision fp16 --batch $b --profile \
        --config "$PROFILE_CONFIG" >"$out/profile_${m}_config.log" 2>&1
      note "  --config $PROFILE_CONFIG: $(grep -E '^total' "$out/profile_${m}_config.log" | cut -c1-100)"
      while read -r l; do note "    $l"; done < <(profile_by_op "$out/profile_${m}_config.log" 4)
    fi
  done
  # NCU="regex:count:model:infer args;...": per run, Nsight Compute's speed-of-light,
  # occupancy, memory and warp-stall sections for the first `count` launches of the
  # kernels matching regex while the zoo's `model` (empty: the first of ZOO_MODELS)
  # builds and profiles with those extra infer args (e.g. --config cuda.conv_impl=...);
  # clocks left alone
  if [ -n "${NCU:-}" ]; then
    ncu_bin=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
    k=0
    IFS=';' read -ra ncu_runs <<<"$NCU"
    for r in "${ncu_runs[@]}"; do
      k=$((k + 1))
      IFS=':' read -r kre kcount nm kargs <<<"$r"
      nm=${nm:-${models%%,*}}
      t0=$(date +%s)
      timeout ${NCU_LIMIT:-120} $ncu_bin --clock-control none --kernel-name "regex:$kre" \
        --launch-count ${kcount:-6} --section SpeedOfLight --section Occupancy \
        --section LaunchStats --section MemoryWorkloadAnalysis --section WarpStateStats \
        $build/infer $zoo/$nm.onnx --device cuda --precision fp16 --batch $(zoo_batch $nm) --profile \
        $kargs >"$out/ncu_$k.txt" 2>&1
      note "ncu run $k on $nm, /$kre/ x${kcount:-6} $kargs: rc=$? in $(( $(date +%s) - t0 )) s (ncu_$k.txt)"
      while read -r l; do note "  $l"; done < <(grep -E '^  [a-zA-Z_].*\(|DRAM Throughput|Duration|Achieved Occupancy|Registers Per|L1/TEX Hit|L2 Hit|Grid Size' "$out/ncu_$k.txt" | sed 's/  */ /g' | head -${NCU_LINES:-80})
    done
  fi
  # QDQ_BENCH=1: the zoo's ResNet-50 made a QDQ model (models/quantize_qdq.py: ONNX
  # Runtime's static recipe, calibrated by the CPU build), its outputs on the GPU against
  # the CPU's (fp32 and fp16), and its fp16 throughput beside the float model's
  if [ "${QDQ_BENCH:-0}" = 1 ] && [ -f $zoo/resnet50.onnx ]; then
    python3 models/quantize_qdq.py $zoo/resnet50.onnx $zoo/resnet50_qdq.onnx --infer $build/infer \
      --batch 2 >"$out/qdq_quantize.log" 2>&1
    note "qdq resnet50: rc=$? $(tail -1 "$out/qdq_quantize.log" | cut -c1-150)"
    $build/infer $zoo/resnet50_qdq.onnx --input $zoo/resnet50_input.npy --output /tmp/qdq_cpu \
      >"$out/qdq_cpu.log" 2>&1
    $build/infer $zoo/resnet50_qdq.onnx --input $zoo/resnet50_input.npy \
      --reference $zoo/resnet50_output.npy --atol 1 >"$out/qdq_vs_float.log" 2>&1
    note "  CPU: QDQ vs the float model: $(grep -E '^output' "$out/qdq_vs_float.log" | cut -c1-140)"
    for prec in fp32 fp16; do
      $build/infer $zoo/resnet50_qdq.onnx --device cuda --precision $prec \
        --input $zoo/resnet50_input.npy --reference /tmp/qdq_cpu/logits.npy --atol 1 --verbose \
        >"$out/qdq_gpu_$prec.log" 2>&1
      note "  cuda $prec vs CPU: rc=$? $(grep -E '^output' "$out/qdq_gpu_$prec.log" | cut -c1-120) | $(grep -oE 'implementations chosen: .*' "$out/qdq_gpu_$prec.log" | cut -c1-160)"
    done
    for mm in resnet50 resnet50_qdq; do
      $build/infer $zoo/$mm.onnx --device cuda --precision fp16 --batch 256 --bench \
        --no-transfers --duration 2 >"$out/qdq_bench_$mm.log" 2>&1
      note "  $mm b256 fp16, inputs on the device: $(grep -E '^throughput' "$out/qdq_bench_$mm.log")"
    done
    # the same recipe with symmetric int8 activations (--symmetric), what --config int8=1
    # runs on int8 tensor cores (Int8Conv): outputs against the CPU's, and img/s with the
    # int8 path off and on (QDQ_VARIANTS="int8=0 int8=1,cuda.cudnn_rtc=0 ..." for others;
    # where no int8 engine is taken, the refusal in the implementation names says why),
    # then the int8 model's --profile by op
    python3 models/quantize_qdq.py $zoo/resnet50.onnx $zoo/resnet50_qdq_s8.onnx --infer $build/infer \
      --batch 2 --symmetric >"$out/qdq_s8_quantize.log" 2>&1
    note "qdq resnet50 int8 symmetric: rc=$? $(tail -1 "$out/qdq_s8_quantize.log" | cut -c1-150)"
    $build/infer $zoo/resnet50_qdq_s8.onnx --input $zoo/resnet50_input.npy --output /tmp/qdq_s8_cpu \
      >"$out/qdq_s8_cpu.log" 2>&1
    for v in ${QDQ_VARIANTS:-int8=0 int8=1}; do
      cfg="--config ${v%%,*}"
      case $v in *,*) cfg="$cfg --config ${v#*,}" ;; esac
      tag=$(printf '%s' "$v" | tr ',=.' '_xx')
      $build/infer $zoo/resnet50_qdq_s8.onnx --device cuda --precision fp16 $cfg \
        --input $zoo/resnet50_input.npy --reference /tmp/qdq_s8_cpu/logits.npy --atol 1 --verbose \
        >"$out/qdq_s8_gpu_$tag.log" 2>&1
      note "  cuda fp16 $v vs CPU: rc=$? $(grep -E '^output' "$out/qdq_s8_gpu_$tag.log" | cut -c1-120) | $(grep -oE 'pass int8-conv: .*' "$out/qdq_s8_gpu_$tag.log") | $(grep -oE 'implementations chosen: .*' "$out/qdq_s8_gpu_$tag.log" | cut -c1-500)"
      [ "$v" != int8=0 ] && grep -m3 -iE 'error|int8conv' "$out/qdq_s8_gpu_$tag.log" | while read -r l; do note "    $l"; done
      t_build=$(date +%s.%N)
      $build/infer $zoo/resnet50_qdq_s8.onnx --device cuda --precision fp16 $cfg \
        --batch 256 --bench --no-transfers --duration 2 >"$out/qdq_s8_bench_$tag.log" 2>&1
      note "  resnet50_qdq_s8 b256 fp16 $v, inputs on the device: $(grep -E '^throughput' "$out/qdq_s8_bench_$tag.log") ($(awk -v a="$t_build" -v b="$(date +%s.%N)" 'BEGIN { printf "%.0f", b - a }') s with the build)"
    done
    # where the int8 model's time goes, beside the float model's
    $build/infer $zoo/resnet50_qdq_s8.onnx --device cuda --precision fp16 --config int8=1 \
      --batch 256 --profile >"$out/qdq_s8_profile.log" 2>&1
    note "  resnet50_qdq_s8 int8=1 b256 --profile: $(grep -E '^total' "$out/qdq_s8_profile.log" | cut -c1-100)"
    while read -r l; do note "    $l"; done < <(profile_by_op "$out/qdq_s8_profile.log" 8)
  fi
  [ -n "${BENCH_MODELS:-}" ] && peer_bench # the peer benchmark of these too, when asked
  finish
  exit 0
fi

# ---- STREAMS_BENCH=1: issue 12's gpu tests, then images/s from host memory with N streams --
if [ "${STREAMS_BENCH:-0}" = 1 ]; then
  t0=$(date +%s)
  timeout ${CTEST_LIMIT:-300} ctest --test-dir $build -j 4 --output-on-failure --timeout 200 -L gpu \
    -R "${CTEST_REGEX:-async|image_u8|bench_streams|iobinding|gpu_threads|gpu_server|gpu_failures}" \
    >"$out/ctest.log" 2>&1
  note "ctest (issue 12 gpu tests): rc=$? in $(( $(date +%s) - t0 )) s: $(grep -E 'tests passed' "$out/ctest.log")"
  while read -r l; do note "  $l"; done < <(grep -E '^\s+[0-9]+ - .*\((Failed|Timeout|Not Run)' "$out/ctest.log" | head -20)
  cp $build/Testing/Temporary/LastTest.log "$out/ctest_full.log" 2>/dev/null
  zoo=/tmp/zoo17
  models=${STREAMS_MODELS:-resnet50,mobilenet_v2}
  python3 models/export_zoo.py $zoo --models "$models" --opset 17 >"$out/zoo_export.log" 2>&1
  note "zoo export opset 17: rc=$? $(tail -1 "$out/zoo_export.log")"
  ips() { grep -oE '[0-9.]+ images/s' "$1" | head -1 | cut -d' ' -f1; }
  for m in $(echo "$models" | tr ',' ' '); do
    [ -f $zoo/$m.onnx ] || continue
    run=($build/infer $zoo/$m.onnx --device cuda --precision fp16 --batch 256 --bench --duration 2)
    "${run[@]}" --no-transfers >"$out/streams_${m}_nt.log" 2>&1
    ref=$(ips "$out/streams_${m}_nt.log")
    note "$m b256 fp16 --no-transfers: ${ref:-?} img/s; $(grep -E '^device' "$out/streams_${m}_nt.log")"
    "${run[@]}" >"$out/streams_${m}_plain.log" 2>&1
    v=$(ips "$out/streams_${m}_plain.log")
    note "  plain --bench (set_input copy per run): ${v:-?} img/s ($(awk -v a="${v:-0}" -v b="${ref:-1}" 'BEGIN{printf "%.0f", 100*a/b}')%); $(grep -E '^device' "$out/streams_${m}_plain.log")"
    for n in ${STREAMS_N:-1 2 3}; do
      for in_type in f32 u8; do
        log="$out/streams_${m}_${n}_${in_type}.log"
        "${run[@]}" --streams $n --input-type $in_type >"$log" 2>&1
        rc=$?
        v=$(ips "$log")
        note "  --streams $n, $in_type input: rc=$rc ${v:-?} img/s ($(awk -v a="${v:-0}" -v b="${ref:-1}" 'BEGIN{printf "%.0f", 100*a/b}')% of --no-transfers); $(grep -oE '[0-9]+% of the copy time hidden' "$log"); $(grep -E '^stream 0:' "$log" | grep -oE 'median [0-9.]+ ')ms median latency (stream 0)"
        [ $rc -ne 0 ] && note "    $(tail -2 "$log" | cut -c1-250)"
      done
    done
  done
  [ "${COMPARE_PRECISION:-0}" = 1 ] && compare_precision_times $build/models-zoo
  [ -n "${BENCH_MODELS:-}" ] && peer_bench # the peer benchmark of these too, when asked
  finish
  exit 0
fi

# ---- SKIP_TESTS=1: build and benchmark only (a second call after a green test run) -----
if [ "${SKIP_TESTS:-0}" = 1 ]; then
  note "tests: skipped (SKIP_TESTS=1)"
else
# The model tests (model_* and gpu_model_* rows) export their models themselves (the
# CTest fixture model_zoo_export: INFER_ZOO_MODELS, from ZOO_MODELS, into $build/models-zoo).

# ---- QUICK=1: only GPU conformance (fp32, fp16) and the benchmarks ------------------------
if [ "${QUICK:-0}" = 1 ]; then
  for p in fp32 fp16; do
    r=0.95; [ $p = fp16 ] && r=0.90
    t0=$(date +%s)
    $build/tests/conformance $data/node --device cuda --precision $p --compare-cpu \
      --min-ratio $r --jobs 16 >"$out/conformance_$p.log" 2>&1
    note "conformance node cuda $p (rc=$?, $(( $(date +%s) - t0 )) s): $(grep -E '^cuda' "$out/conformance_$p.log")"
    while read -r l; do note "  $l"; done < <(grep -E '< 95%' "$out/conformance_$p.log" | head -25)
  done
  SKIP_TORCH=1
else
# ---- all tests, gpu included ----------------------------------------------------------
t0=$(date +%s)
# CPU-only checks that CI runs anyway (sanitizers, valgrind, malformed files) are
# left out here to keep the call short.
timeout ${CTEST_LIMIT:-330} ctest --test-dir $build -j 6 --output-on-failure --timeout 300 \
  -LE 'sanitize|valgrind|malformed' ${CTEST_REGEX:+-R "$CTEST_REGEX"} >"$out/ctest.log" 2>&1
note "ctest: rc=$? in $(( $(date +%s) - t0 )) s: $(grep -E 'tests passed' "$out/ctest.log")"
while read -r l; do note "  $l"; done < <(grep -E '^\s+[0-9]+ - .*\((Failed|Timeout|Not Run)' "$out/ctest.log" | head -30)
while read -r l; do note "  $l"; done < <(grep -E 'Test +#[0-9]+: (gpu_model|model_)\S+ .*(Passed|Failed)' "$out/ctest.log" | head -12)
# issue 6: the failure, thread, binding and server tests, CPU and GPU, passed or skipped
while read -r l; do note "  $l"; done < <(grep -E 'Test +#[0-9]+: (test_failures|gpu_failures|test_threads|gpu_threads|iobinding_cpu|gpu_iobinding|server|gpu_server) ' "$out/ctest.log")
cp $build/Testing/Temporary/LastTest.log "$out/ctest_full.log" 2>/dev/null
keep_failures "$out/ctest_full.log" "$out/failures.txt"
# issue 16: PyTorch's own fp16 error per zoo model (measured once by the setup test
# gpu_model_zoo_torch_fp16 into the zoo's torch_fp16_error.json, before the fp16 model
# tests, which hold infer to 1.5x it), infer's against it, and the DBNet-pattern model's
# GPU fp16 error against the CPU fp16-storage emulation
peer_file=$build/models-zoo/torch_fp16_error.json
if [ -f "$peer_file" ]; then
  cp "$peer_file" "$out/"
  while read -r l; do note "  pytorch fp16 $l"; done < <(grep -oE '"name": "[^"]+", "rel": [^,]+' "$peer_file" | tr -d '"')
else
  note "  pytorch fp16 error: $peer_file not made (see gpu_model_zoo_torch_fp16 in ctest_full.log)"
fi
while read -r l; do note "  $l"; done < <(grep -E "^[a-z0-9_]+: max\|ref\| .*PyTorch's fp16|^fp16 error: infer" "$out/ctest_full.log" |
  sed -E "s/: max\|ref\| .*//" | paste -d' ' - - | cut -c1-200)
while read -r l; do note "  precision: $l"; done < <(grep -E '^(fp16-storage emulation|CUDA fp16): map max abs err' "$out/ctest_full.log" | sort -u)
# each conformance run prints its summary line; LastTest.log holds every test's output
for t in gpu_conformance_fp32 gpu_conformance_fp16 gpu_conformance_fp32_kernels gpu_conformance_fp16_kernels gpu_diff_fp32 gpu_diff_fp16; do
  line=$(awk -v t="$t" '$0 ~ "Testing: "t"$" {on=1} on && /^cuda (fp32|fp16): passed/ {print; exit}' \
    "$out/ctest_full.log")
  note "$t: ${line:-no summary line}"
done

# ---- compute-sanitizer on light models -------------------------------------------------
if command -v compute-sanitizer >/dev/null; then
  for m in squeezenet resnet50; do
    compute-sanitizer --tool memcheck --error-exitcode 9 $build/infer $data/light/light_$m.onnx \
      --device cuda --input $data/light/light_${m}_input_0.pb --quiet >"$out/memcheck_$m.log" 2>&1
    note "memcheck light_$m: rc=$? $(grep -m1 'ERROR SUMMARY' "$out/memcheck_$m.log")"
  done
fi
fi # QUICK
[ "${COMPARE_PRECISION:-0}" = 1 ] && compare_precision_times $build/models-zoo

# ---- torchvision ResNet-50: CPU reference vs GPU fp32 and fp16 ------------------------------
if [ "${SKIP_TORCH:-0}" != 1 ] && python3 -c 'import torch, torchvision' 2>/dev/null; then
  python3 models/export_resnet50.py /tmp/r50 >"$out/export.log" 2>&1
  if [ -f /tmp/r50/resnet50.onnx ]; then
    mkdir -p /tmp/r50/cpu
    $build/infer /tmp/r50/resnet50.onnx --input /tmp/r50/input.npy --output /tmp/r50/cpu --quiet
    res=$($build/infer /tmp/r50/resnet50.onnx --input /tmp/r50/input.npy \
      --reference /tmp/r50/torch_logits.npy --rtol 1e-3 --atol 1e-4 2>&1 | tail -1)
    note "resnet50 cpu vs pytorch fp32: $res"
    for p in fp32 fp16; do
      tol="--rtol 1e-3 --atol 1e-4"; [ $p = fp16 ] && tol="--rtol 2e-2 --atol 2e-2"
      res=$($build/infer /tmp/r50/resnet50.onnx --device cuda --precision $p \
        --input /tmp/r50/input.npy --reference /tmp/r50/cpu/logits.npy $tol 2>&1 | tail -1)
      note "resnet50 cuda $p vs cpu: $res"
    done
  else
    note "resnet50: export failed (export.log)"
  fi
fi

fi # SKIP_TESTS

# ---- peer benchmark: PyTorch and infer, same models/batches/precision, one run -------------
# BENCH_MODELS="name:batch,..." picks cases (default: the whole zoo at the speed issue's
# batches, plus batch 1 of ResNet-50, MobileNetV2, ViT-B/16); BENCH_COMPILE=1 adds
# torch.compile (default and reduce-overhead); BENCH_DEADLINE (s, default 400) stops
# starting new cases. Then the profile of every case below 1.2x (the 8 costliest op kinds).
peer_bench

finish
