#!/usr/bin/env bash
# The netc GitHub Action (action.yml), step 1: puts `netc` on the job's PATH.
#
#   NETC_INSTALL  wheel (default): `pip install netc==NETC_VERSION` into a virtual environment
#                 of its own (runners' system Pythons refuse `pip install`, PEP 668);
#                 source: `cargo install --locked --path cli` from the action's own checkout
#                 (needs Rust 1.88+; minutes); none: a netc already on PATH.
#   NETC_VERSION  the wheel's version; empty: the version of the action's checkout, so that
#                 `uses: OWNER/netc@v0.1.0` runs netc 0.1.0.
#   NETC_WHEEL    a wheel file to install instead of the index's (tests, private builds).
#   NETC_ACTION_PATH, NETC_TOOLS, GITHUB_PATH: where the action is, where to install, and
#                 the file that adds a folder to the PATH of the next steps.
set -euo pipefail
action_path="${NETC_ACTION_PATH:?}"
tools="${NETC_TOOLS:?}"
version="${NETC_VERSION:-}"
if [ -z "$version" ]; then
  version="$(sed -n 's/^version = "\(.*\)"/\1/p' "$action_path/Cargo.toml" | head -1)"
fi
case "${NETC_INSTALL:-wheel}" in
  wheel)
    python3 -m venv "$tools/venv"
    if [ -n "${NETC_WHEEL:-}" ]; then
      "$tools/venv/bin/pip" install --quiet --disable-pip-version-check --no-index "$NETC_WHEEL"
    else
      "$tools/venv/bin/pip" install --quiet --disable-pip-version-check "netc==$version"
    fi
    bin="$tools/venv/bin"
    ;;
  source)
    cargo install --locked --path "$action_path/cli" --root "$tools/cargo"
    bin="$tools/cargo/bin"
    ;;
  none)
    bin="$(dirname "$(command -v netc)")"
    ;;
  *)
    echo "install: unknown way \`$NETC_INSTALL\` (wheel, source or none)" >&2
    exit 2
    ;;
esac
bin="$(cd "$bin" && pwd)"
echo "$bin" >>"${GITHUB_PATH:?}"
"$bin/netc" --version
