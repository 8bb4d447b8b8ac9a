#!/usr/bin/env bash
# Installs what gutf8 needs from Debian's packages. Idempotent: installs only what is missing.
set -euo pipefail
packages=(cmake g++ make libboost-program-options-dev libutfcpp-dev libgtest-dev
          libbenchmark-dev python3 python3-matplotlib python3-venv python3-dev help2man
          zlib1g-dev libzstd-dev liblzma-dev libbz2-dev liblz4-dev libdeflate-dev libxxhash-dev
          gzip zstd xz-utils bzip2 lz4 tabix)  # compression libraries; their tools (and bgzip) are oracles
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  sudo_cmd=""
  [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
  echo "setup: installing ${missing[*]}" >&2
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
