#!/usr/bin/env bash
# The netc GitHub Action (action.yml), step 2: `netc check` twice, as annotations on the
# pull request (`--format github`) and as a SARIF log for code scanning.
#
#   NETC_PATHS  files and directories, split on whitespace (default `.`: every .net file).
#   NETC_ARGS   more arguments for `netc check`, split on whitespace (`-D warnings`).
#   NETC_SARIF  the SARIF file to write (empty: none).
#   GITHUB_OUTPUT: the file where a step's outputs go.
# Writes the outputs `exit-code` (netc's: 0 clean, 1 errors, 2 could not check) and
# `sarif-file`, and always exits 0: action.yml fails the job after the upload.
set -uo pipefail
read -r -a paths <<<"${NETC_PATHS:-.}"
[ ${#paths[@]} -gt 0 ] || paths=(.)
read -r -a args <<<"${NETC_ARGS:-}"
netc check --format github "${args[@]}" "${paths[@]}"
code=$?
if [ -n "${NETC_SARIF:-}" ]; then
  # The log is written whatever netc found; exit code 1 only means there are errors in it.
  netc check --format sarif "${args[@]}" "${paths[@]}" >"$NETC_SARIF"
  sarif_code=$?
  if [ "$sarif_code" -gt 1 ]; then code=$sarif_code; fi
fi
{
  echo "exit-code=$code"
  echo "sarif-file=${NETC_SARIF:-}"
} >>"${GITHUB_OUTPUT:?}"
exit 0
