#!/bin/sh
# Runs the `; RUN:` lines of one pass test (lit's substitutions, without lit):
#   run.sh FILE THUNDER_OPT FILECHECK
# Each RUN line is a shell command (a pipeline's status is its last command's,
# as in lit without pipefail); the test fails on the first that fails.
file=$1 opt=$2 filecheck=$3
runs=$(sed -n 's/^; *RUN: *//p' "$file")
[ -n "$runs" ] || { echo "no RUN lines in $file" >&2; exit 1; }
echo "$runs" | while IFS= read -r cmd; do
  cmd=$(printf '%s' "$cmd" | sed -e "s|%thunder-opt|$opt|g" -e "s|%FileCheck|$filecheck|g" -e "s|%s|$file|g")
  echo "RUN: $cmd"
  sh -c "$cmd" || exit 1
done
