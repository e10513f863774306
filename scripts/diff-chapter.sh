#!/usr/bin/env bash
# Shows the code that a chapter adds to the chapter it builds on (make
# diff-chapter N: the chapter before, or the one it rewrites, as the table
# of chapters says; bin/chapter-branches --dirs N names both directories):
# the diff of the two
# chapter packages (reconciler, unit tests and RBAC role), without the
# README lessons (English and Chinese), the mutants and the exercise, and
# without the file timestamps that diff puts in its headers; then, as new files, the FILEs outside the
# chapters that the lesson adds (make diff-chapter names them:
# `bin/chapter-branches --arrivals N`, the files that chapter N's branch
# has and chapter N-1's has not: chapter 10's manifests and image, 11's
# webhook configuration, 12's fault injection).
# Usage: scripts/diff-chapter.sh BASE_DIR DIR [FILE...]
set -euo pipefail
export LC_ALL=C # diff's messages in English, whatever the locale
cd "$(dirname "$0")/.."

prev=${1:?usage: $0 BASE_DIR DIR [FILE...]}
cur=${2:?usage: $0 BASE_DIR DIR [FILE...]}
shift 2
for d in "$prev" "$cur"; do
  [[ -d $d ]] || { echo "error: no chapter directory $d" >&2; exit 2; }
done

out=$(mktemp)
trap 'rm -f "$out"' EXIT
# diff exits 1 when the chapters differ, which is the point; 2 is trouble.
status=0
diff -ruN --exclude=README.md --exclude=README.zh-CN.md --exclude=mutants --exclude=exercise "$prev" "$cur" >"$out" || status=$?
(( status <= 1 )) || exit "$status"
for f in "$@"; do
  [[ -f $f ]] || { echo "error: $f: no such file" >&2; exit 2; }
  status=0
  diff -uN /dev/null "$f" >>"$out" || status=$?
  (( status <= 1 )) || exit "$status"
done
sed -E 's/^((---|\+\+\+) [^\t]+)\t.*$/\1/' "$out"
