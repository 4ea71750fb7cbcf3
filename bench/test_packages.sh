#!/usr/bin/env bash
# The benchmark's packages (scripts/deps.sh --bench) are enough for what its suites build: a tree
# configured as scripts/bench.sh configures its own, with the jars of the packages that only the
# tests need out of sight, still has every target a suite builds (each `cmake --build ...
# --target` of bench/suites.d/*.sh). A fresh machine installs the benchmark's packages alone, and
# there a target that also wants a test's jar would not be made: its suite would fail.
#
#   test_packages.sh SOURCE_DIR WORK_DIR
set -euo pipefail
src=$1 work=$2
command -v dpkg >/dev/null || { echo "test_packages: SKIPPED: not a Debian machine (no dpkg)"; exit 77; }
rm -rf "$work"
mkdir -p "$work/java"

# jars of the packages the tests install on top of the benchmark's
test_only=$(comm -23 <(bash "$src/scripts/deps.sh" --list | sort -u) \
                     <(bash "$src/scripts/deps.sh" --list --bench | sort -u))
hidden=()
for p in $test_only; do
  while read -r f; do
    case "$f" in /usr/share/java/*.jar) hidden+=("$(basename "$f")") ;; esac
  done < <(dpkg -L "$p" 2>/dev/null || true)
done
# the control: the tests' Lucene framework runs on a jar the benchmark's packages do not bring;
# if none is hidden, this test shows nothing
if ((${#hidden[@]} == 0)); then
  echo "test_packages: no test-only package's jar is installed here; run scripts/deps.sh" >&2
  exit 1
fi
echo "hidden (test-only packages' jars): ${hidden[*]}"
for j in /usr/share/java/*.jar; do
  name=$(basename "$j")
  [[ " ${hidden[*]} " == *" $name "* ]] || ln -s "$j" "$work/java/$name"
done

cmake -S "$src" -B "$work/tree" -DCMAKE_BUILD_TYPE=Release -DND_BUILD_TESTS=OFF \
      -DND_BUILD_SANITIZED_TESTS=OFF -DND_BUILD_CROSS=OFF -DND_BUILD_DOTNET=ON \
      -DND_BUILD_JAVA=ON -DND_BUILD_PYTHON=ON -DND_LUCENE_JAVA_DIR="$work/java" \
      >"$work/configure.log" 2>&1 || { cat "$work/configure.log"; exit 1; }
targets=$(cmake --build "$work/tree" --target help)
status=0
wanted=$(sed -n 's/.*cmake --build "[^"]*" --target \([^|]*\).*/\1/p' "$src"/bench/suites.d/*.sh |
         tr ' ' '\n' | grep -v '^$' | sort -u)
[ -n "$wanted" ] || { echo "test_packages: no target found in bench/suites.d/*.sh" >&2; exit 1; }
for t in $wanted; do
  if grep -qw "$t" <<<"$targets"; then
    echo "ok: $t"
  else
    echo "MISSING with the benchmark's packages alone: $t" >&2
    grep -i "warning" -A2 "$work/configure.log" >&2 || true
    status=1
  fi
done
rm -rf "$work"
exit $status
