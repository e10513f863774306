#!/usr/bin/env bash
# Shows the code that chapter N adds to chapter N-1 (or to chapter M with
# --base M: chapter 13 rewrites chapter 9, bin/chapter-branches --base 13
# says so): the diff of the two
# chapter packages (reconciler, unit tests and RBAC role), without the
# README lessons (English and Chinese), the mutants and the exercise, and
# without the file timestamps that diff puts in its headers; then, as new files, the FILEs outside the
# chapters that the lesson adds (make diff-chapter names them:
# `bin/chapter-branches --arrivals N`, the files that chapter N's branch
# has and chapter N-1's has not: chapter 10's manifests and image, 10's
# webhook configuration, 11's fault injection).
# Usage: scripts/diff-chapter.sh [--base M] N [FILE...]
set -euo pipefail
export LC_ALL=C # diff's messages in English, whatever the locale
cd "$(dirname "$0")/.."

base=
if [[ ${1:-} == --base ]]; then
  base=${2:?usage: $0 [--base M] N [FILE...]}
  shift 2
fi
n=${1:?usage: $0 [--base M] N [FILE...]}
shift
base=${base:-$((10#$n - 1))}
chapter_dir() {
  local dirs=(chapters/"$(printf %02d "$1")"-*)
  [[ -d ${dirs[0]} ]] || { echo "error: no chapter $1 in chapters/" >&2; exit 2; }
  echo "${dirs[0]}"
}
prev=$(chapter_dir "$base")
cur=$(chapter_dir $((10#$n)))

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
