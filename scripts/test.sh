#!/usr/bin/env bash
# The one test command: installs what the tests need — the Python packages of `.[test]`, Debian's chromium
# for the browser tests, Debian's postgresql for the PostgreSQL storage tests, Debian's libcairo2 for
# the page's PNG picture (cairosvg) and Debian's nginx-light for the deploy recipe's proxy in front of
# two servers (tests/server/test_proxy_affinity.py) — and runs the whole suite.
# Extra arguments go to pytest, e.g. `bash scripts/test.sh tests/engine -q`.
set -euo pipefail
cd "$(dirname "$0")/.."

missing=()
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null || missing+=(postgresql)
ldconfig -p 2>/dev/null | grep 'libcairo\.so\.2' >/dev/null || missing+=(libcairo2)
# In /usr/sbin, off many users' PATH.
{ [ -x /usr/sbin/nginx ] || command -v nginx >/dev/null 2>&1; } || missing+=(nginx-light)
if [ ${#missing[@]} -gt 0 ]; then
    echo "== installing Debian packages: ${missing[*]}"
    sudo_cmd=""
    [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
    $sudo_cmd apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${missing[@]}" >/dev/null
fi

echo "== installing Python packages"
python3 -m pip install -q --disable-pip-version-check -e '.[test]'

echo "== running the tests"
exec python3 -m pytest "$@"
