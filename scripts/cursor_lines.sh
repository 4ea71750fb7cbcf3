#!/usr/bin/env bash
# cursor_lines.sh - lines of each binding's input cursor class(es) at a commit, as
# docs/design.md's "Cursor code per binding" table counts them: all / code, where a code
# line is neither blank nor only a comment (//, ///, a /* */ block, #) nor part of a
# Python docstring (a string that is a statement of its own).
#
#   scripts/cursor_lines.sh [commit ...]    (default: HEAD; "." is the working tree)
set -euo pipefail
cd "$(dirname "$0")/.."

bindings=(
  "Java|bindings/java/src/main/java/io/nativedir/NativeInput.java"
  ".NET|bindings/dotnet/NativeDir/NativeInput.cs bindings/dotnet/NativeDir/SafeHandles.cs"
  "Lucene.NET|bindings/dotnet/NativeDir.Lucene/NativeIndexInput.cs bindings/dotnet/NativeDir.Lucene/SharedFile.cs"
  "Python|bindings/python/nativedir/_input.py"
)

# one file on stdin, its name in $1: prints "all code"
count() {
  python3 -c '
import ast, sys
name, text = sys.argv[1], sys.stdin.read()
lines = text.splitlines()
skip = set()
if name.endswith(".py"):
    # docstrings: every string that is a statement of its own (modules, classes,
    # functions, and the attribute docstrings under enum members)
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) \
                and isinstance(node.value.value, str):
            skip.update(range(node.lineno, node.end_lineno + 1))
code, in_block = 0, False
for i, line in enumerate(lines, 1):
    s = line.strip()
    if not s or i in skip:
        continue
    if name.endswith(".py"):
        code += not s.startswith("#")
        continue
    if in_block:
        in_block = "*/" not in s
        continue
    if s.startswith("//"):
        continue
    if s.startswith("/*"):
        in_block = "*/" not in s
        continue
    code += 1
print(len(lines), code)
' "$1"
}

for commit in "${@:-HEAD}"; do
  if [ "$commit" = . ]; then echo "working tree"; else echo "$commit ($(git rev-parse --short "$commit"))"; fi
  total_all=0 total_code=0
  for b in "${bindings[@]}"; do
    label=${b%%|*}
    all=0 code=0
    for f in ${b#*|}; do
      if [ "$commit" = . ]; then src=(cat "$f"); else src=(git show "$commit:$f"); fi
      read -r a c < <("${src[@]}" | count "$f")
      all=$((all + a)) code=$((code + c))
    done
    printf '  %-11s %5d / %d\n' "$label" "$all" "$code"
    total_all=$((total_all + all)) total_code=$((total_code + code))
  done
  printf '  %-11s %5d / %d\n' all "$total_all" "$total_code"
done
