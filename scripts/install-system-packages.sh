#!/usr/bin/env bash
# install-system-packages.sh — install the Debian packages listed in scripts/apt-packages.txt.
#
# Only the missing ones are installed ("apt-get update" runs once, first), noninteractively.
# As root it installs; as another user it prints what is missing and exits 1.
#
#   scripts/install-system-packages.sh            install what is missing
#   scripts/install-system-packages.sh --check    only report; exit 1 if something is missing
#   scripts/install-system-packages.sh --list F   use another package list
set -euo pipefail

LIST="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/apt-packages.txt"
CHECK_ONLY=0
while [[ $# -gt 0 ]]; do
  case "$1" in
    --check) CHECK_ONLY=1; shift ;;
    --list) LIST=$2; shift 2 ;;
    -h|--help) sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "error: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done

[[ -r $LIST ]] || { echo "error: cannot read package list $LIST" >&2; exit 2; }
command -v dpkg-query >/dev/null || { echo "error: dpkg-query not found: this script is for Debian/Ubuntu" >&2; exit 2; }

mapfile -t PACKAGES < <(sed -e 's/#.*//' -e 's/[[:space:]]//g' "$LIST" | grep -v '^$')
[[ ${#PACKAGES[@]} -gt 0 ]] || { echo "error: no packages in $LIST" >&2; exit 2; }

installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'; }

MISSING=()
for p in "${PACKAGES[@]}"; do installed "$p" || MISSING+=("$p"); done

if [[ ${#MISSING[@]} -eq 0 ]]; then
  echo "all ${#PACKAGES[@]} packages from $(basename "$LIST") are installed: ${PACKAGES[*]}"
  exit 0
fi

echo "missing: ${MISSING[*]}"
if [[ $CHECK_ONLY == 1 ]]; then
  exit 1
fi
if [[ $(id -u) != 0 ]]; then
  echo "not root: install them with" >&2
  echo "  sudo apt-get update && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends ${MISSING[*]}" >&2
  echo "or run this script as root." >&2
  exit 1
fi

export DEBIAN_FRONTEND=noninteractive
apt-get update
apt-get install -y --no-install-recommends "${MISSING[@]}"

STILL=()
for p in "${MISSING[@]}"; do installed "$p" || STILL+=("$p"); done
if [[ ${#STILL[@]} -gt 0 ]]; then
  echo "error: still not installed: ${STILL[*]}" >&2
  exit 1
fi
echo "installed: ${MISSING[*]}"
