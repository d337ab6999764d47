#!/usr/bin/env bash
# The one test command: installs what the tests need (Python packages and Debian's chromium for the
# browser tests) and runs the whole suite. Extra arguments go to pytest, e.g. `bash scripts/test.sh -k engine`.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v chromium >/dev/null 2>&1; then
    echo "== installing Debian's chromium for the browser tests"
    sudo_cmd=""
    [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
    $sudo_cmd apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq chromium >/dev/null
fi

echo "== installing Python packages"
python3 -m pip install -q --disable-pip-version-check -e '.[test]'

echo "== running the tests"
exec python3 -m pytest "$@"
