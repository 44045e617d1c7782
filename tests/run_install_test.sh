#!/usr/bin/env bash
# run_install_test.sh BUILD_DIR: installs a built tree into a temporary prefix
# (`cmake --install BUILD_DIR --prefix TMP`) and checks what a user of the install gets:
#   - the layout: include/infer.h only, libinfer.so -> .so.MAJOR -> .so.VERSION, libinfer.a,
#     bin/infer, infer.pc, lib/cmake/infer/;
#   - libinfer.so's soname is libinfer.so.0 and it exports only infer_* symbols;
#   - tests/install/ (a consumer project) configured with find_package(infer) and
#     CMAKE_PREFIX_PATH=TMP, linked against infer::infer (shared) and infer::infer_static;
#   - the same consumer.c compiled with `pkg-config --cflags --libs infer` and with
#     `--static`;
# each consumer must reproduce models/sample_output.npy from models/sample_input.npy;
#   - README.md's C example, extracted from README.md, built with the command it gives
#     and run.
# Exit 77 (CTest's skip) with a message when pkg-config, nm or readelf is missing.
# Environment: CMAKE (default cmake), CC (default cc), KEEP=1 keeps the temp directory.
set -euo pipefail
build=${1:?usage: run_install_test.sh BUILD_DIR}
build=$(cd "$build" && pwd)
src=$(cd "$(dirname "$0")/.." && pwd)
cmake_bin=${CMAKE:-cmake}
cc_bin=${CC:-cc}
# the version, written once in include/infer.h
ver() { sed -n "s/^#define INFER_VERSION_$1 \([0-9]*\)$/\1/p" "$src/include/infer.h"; }
version_want="$(ver MAJOR).$(ver MINOR).$(ver PATCH)"
major=$(ver MAJOR)

for tool in pkg-config nm readelf "$cc_bin"; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "SKIP: $tool not found (apt-get install pkg-config binutils gcc)"
    exit 77
  fi
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/infer-install.XXXXXX")
if [ "${KEEP:-0}" = 1 ]; then
  echo "keeping $tmp"
else
  trap 'rm -rf "$tmp"' EXIT
fi
prefix=$tmp/prefix
model=$src/models/sample.onnx
input=$src/models/sample_input.npy
reference=$src/models/sample_output.npy
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
ok() { echo "ok: $*"; }
# run LOG CMD...: runs CMD with its output in LOG; prints the log when it fails
run() {
  local log=$1; shift
  local rc=0
  "$@" >"$log" 2>&1 || rc=$?
  if [ "$rc" -ne 0 ]; then
    echo "FAIL: $* (exit $rc); its output:"; sed 's/^/  | /' "$log"
    return 1
  fi
}

# ---- install ----------------------------------------------------------------------
run "$tmp/install.log" "$cmake_bin" --install "$build" --prefix "$prefix" || exit 1
ok "cmake --install $build --prefix $prefix"

so=$(find "$prefix" -name libinfer.so -type l | head -n 1)
[ -n "$so" ] || { echo "FAIL: no libinfer.so symlink under $prefix"; find "$prefix"; exit 1; }
libdir=$(dirname "$so")

# ---- layout -------------------------------------------------------------------------
headers=$(cd "$prefix/include" 2>/dev/null && find . -type f | sort | tr '\n' ' ')
[ "$headers" = "./infer.h " ] && ok "include/ holds infer.h only" ||
  fail "include/ should hold infer.h only, has: ${headers:-nothing}"
[ "$(readlink "$libdir/libinfer.so")" = libinfer.so.0 ] &&
  [ "$(readlink "$libdir/libinfer.so.$major")" = libinfer.so.$version_want ] &&
  [ -f "$libdir/libinfer.so.$version_want" ] && [ ! -L "$libdir/libinfer.so.$version_want" ] &&
  ok "libinfer.so -> libinfer.so.0 -> libinfer.so.$version_want" ||
  fail "soname links: $(ls -l "$libdir"/libinfer.so* | tr '\n' ';')"
for f in "$libdir/libinfer.a" "$prefix/bin/infer" "$libdir/pkgconfig/infer.pc" \
         "$libdir/cmake/infer/inferConfig.cmake" "$libdir/cmake/infer/inferConfigVersion.cmake" \
         "$libdir/cmake/infer/inferTargets.cmake"; do
  [ -f "$f" ] || fail "missing ${f#"$prefix"/}"
done

# ---- the shared library's ABI surface --------------------------------------------------
soname=$(readelf -d "$libdir/libinfer.so.$version_want" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
[ "$soname" = libinfer.so.0 ] && ok "soname $soname" || fail "soname is '$soname', not libinfer.so.0"
exported=$(nm -D --defined-only "$libdir/libinfer.so.$version_want" | awk 'NF >= 3 {print $3}')
leaked=$(printf '%s\n' "$exported" | grep -v '^infer_' || true)
count=$(printf '%s\n' "$exported" | grep -c '^infer_' || true)
if [ -n "$leaked" ]; then
  fail "libinfer.so exports non-infer_ symbols: $(printf '%s ' $leaked | head -c 2000)"
elif [ "$count" -lt 10 ]; then
  fail "libinfer.so exports only $count infer_ symbols"
else
  ok "libinfer.so exports $count symbols, all infer_*"
fi

# ---- the installed CLI --------------------------------------------------------------------
run "$tmp/cli.log" "$prefix/bin/infer" "$model" --input "$input" --reference "$reference" --quiet &&
  ok "installed bin/infer reproduces the sample output" || failures=$((failures + 1))

# check_consumer NAME EXE SHARED(yes|no): runs it on the sample and checks how it links
check_consumer() {
  local name=$1 exe=$2 shared=$3
  if readelf -d "$exe" | grep -q 'NEEDED.*\[libinfer\.so'; then
    [ "$shared" = yes ] || { fail "$name: links libinfer.so, expected the static library"; return; }
    readelf -d "$exe" | grep -q 'NEEDED.*\[libinfer\.so\.0\]' ||
      { fail "$name: does not record the soname libinfer.so.0"; return; }
  else
    [ "$shared" = no ] || { fail "$name: does not link libinfer.so"; return; }
  fi
  if run "$tmp/$name.run.log" "$exe" "$model" "$input" "$reference"; then
    ok "$name: $(tail -n 1 "$tmp/$name.run.log")"
  else
    failures=$((failures + 1))
  fi
}

# ---- CMake: find_package(infer) -----------------------------------------------------
cbuild=$tmp/consumer-cmake
if run "$tmp/consumer-configure.log" "$cmake_bin" -S "$src/tests/install" -B "$cbuild" \
       -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_COMPILER="$cc_bin" \
       -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF &&
   run "$tmp/consumer-build.log" "$cmake_bin" --build "$cbuild"; then
  found=$(sed -n 's/^infer_DIR:PATH=//p' "$cbuild/CMakeCache.txt")
  case "$found" in
    "$prefix"/*) ok "find_package(infer) found $found" ;;
    *) fail "find_package(infer) found '$found', not the temp prefix" ;;
  esac
  check_consumer cmake_shared "$cbuild/consumer_shared" yes
  check_consumer cmake_static "$cbuild/consumer_static" no
else
  failures=$((failures + 1))
fi

# ---- pkg-config ----------------------------------------------------------------------------
export PKG_CONFIG_PATH=$libdir/pkgconfig
version=$(pkg-config --modversion infer 2>&1 || true)
[ "$version" = "$version_want" ] && ok "pkg-config --modversion infer: $version" ||
  fail "pkg-config --modversion infer: $version"
# shellcheck disable=SC2046  # the flags are meant to split
if run "$tmp/pc-shared.log" "$cc_bin" -o "$tmp/pc_shared" "$src/tests/install/consumer.c" \
       $(pkg-config --cflags --libs infer) -lm -Wl,-rpath,"$libdir"; then
  ok "cc consumer.c \$(pkg-config --cflags --libs infer): $(pkg-config --cflags --libs infer)"
  check_consumer pkgconfig_shared "$tmp/pc_shared" yes
else
  failures=$((failures + 1))
fi
# `--static` adds Libs.private; -linfer would still pick libinfer.so next to libinfer.a,
# so this build names the archive (-l:libinfer.a) to link what a static user links.
static_flags=$(pkg-config --cflags --libs --static infer | sed 's/-linfer\( \|$\)/-l:libinfer.a\1/')
# shellcheck disable=SC2086
if run "$tmp/pc-static.log" "$cc_bin" -o "$tmp/pc_static" "$src/tests/install/consumer.c" \
       $static_flags -lm; then
  ok "cc consumer.c \$(pkg-config --cflags --libs --static infer): $(pkg-config --cflags --libs --static infer)"
  check_consumer pkgconfig_static "$tmp/pc_static" no
else
  failures=$((failures + 1))
fi

# ---- the README's example, copied out of README.md as a reader would -------------------
# The C block between <!-- example:begin --> and <!-- example:end -->, built with the
# command its first line gives ("Build: cc example.c $(pkg-config ...)"), must run the
# sample model in its two threads.
mkdir -p "$tmp/readme"
awk '/<!-- example:begin -->/ { on = 1; next } /<!-- example:end -->/ { on = 0 }
     on && /^```/ { fence = !fence; next } on && fence' "$src/README.md" >"$tmp/readme/example.c"
build_cmd=$(sed -n '1s|.*Build: \(.*[^ ]\) *\*/.*|\1|p' "$tmp/readme/example.c")
if [ ! -s "$tmp/readme/example.c" ] || [ -z "$build_cmd" ]; then
  fail "README.md: no C example with a 'Build:' command between its example markers"
elif ! (cd "$tmp/readme" && CC=$cc_bin run "$tmp/readme-build.log" bash -c "cc() { \"\$CC\" \"\$@\"; }; $build_cmd"); then
  failures=$((failures + 1))
elif ! LD_LIBRARY_PATH=$libdir run "$tmp/readme-run.log" "$tmp/readme/a.out" "$model" "$input"; then
  failures=$((failures + 1))
elif [ "$(grep -c '^first output value ' "$tmp/readme-run.log")" -ne 2 ]; then
  fail "README example: expected two 'first output value' lines: $(cat "$tmp/readme-run.log")"
else
  ok "README.md's example, built with '$build_cmd', runs: $(head -n 1 "$tmp/readme-run.log")"
fi

if [ "$failures" -ne 0 ]; then
  echo "install test: $failures failure(s)"
  exit 1
fi
echo "install test: all checks passed"
