#!/usr/bin/env bash
# deps.sh [build|test]
# Installs the system packages pkgtool needs, and only the ones that are missing. Quiet when
# everything is already present; apt's own output goes to build/logs/deps.log and is shown only
# if it fails.
#
#   build: what `make build` and `make demo` need (the libraries pkgtool links).
#   test:  that, plus what the tests and `make bench` run (bsdtar, zip, python3, nginx, openssl,
#          curl). The default.
#
#   Debian/Ubuntu: apt-get installs what dpkg-query does not report installed
#                  (through sudo when not running as root).
#   Elsewhere:     checks pkg-config and says what to install.
set -euo pipefail
cd "$(dirname "$0")/.."

purpose=${1:-test}
BUILD_PACKAGES=(libarchive-dev libxml2-dev zlib1g-dev libdeflate-dev libisal-dev pkg-config)
# The delivery tests serve published folders with nginx (started by the tests themselves) and
# check signatures with openssl; the interop tests read packages with bsdtar and zip; the
# benchmarks compare with bsdtar and curl.
TEST_PACKAGES=(libarchive-tools zip python3 nginx openssl curl)
case $purpose in
    build) DEBIAN_PACKAGES=("${BUILD_PACKAGES[@]}") ;;
    test) DEBIAN_PACKAGES=("${BUILD_PACKAGES[@]}" "${TEST_PACKAGES[@]}") ;;
    *) echo "usage: deps.sh [build|test]" >&2; exit 64 ;;
esac
PKG_CONFIG_MODULES=(libarchive libxml-2.0 zlib)
# PkgKit links libdeflate and ISA-L on Linux only.
if [ "$(uname -s)" = Linux ]; then PKG_CONFIG_MODULES+=(libdeflate libisal); fi
# Where Debian looks for the policy that keeps services from starting (a variable for the tests).
POLICY=${POLICY_RC_D:-/usr/sbin/policy-rc.d}
LOGS=${DEPS_LOGS:-build/logs}

if command -v dpkg-query >/dev/null 2>&1; then
    missing=()
    for pkg in "${DEBIAN_PACKAGES[@]}"; do
        if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'ok installed'; then
            missing+=("$pkg")
        fi
    done
    if [ "${#missing[@]}" -eq 0 ]; then
        exit 0
    fi

    SUDO=()
    if [ "$(id -u)" -ne 0 ]; then
        if command -v sudo >/dev/null 2>&1; then
            SUDO=(sudo)
        else
            echo "deps: missing packages: ${missing[*]}" >&2
            echo "deps: not root and sudo is not available; run as root:" >&2
            echo "      apt-get update && apt-get install -y --no-install-recommends ${missing[*]}" >&2
            exit 1
        fi
    fi

    echo "deps: installing missing packages (apt's output in $LOGS/): ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    # Debian starts nginx's service on install (on port 80); the tests run their own nginx,
    # so forbid service starts for the length of the install, unless a policy already exists.
    if [ ! -e "$POLICY" ]; then
        printf '#!/bin/sh\nexit 101\n' | "${SUDO[@]}" tee "$POLICY" >/dev/null
        "${SUDO[@]}" chmod 755 "$POLICY"
        trap '"${SUDO[@]}" rm -f "$POLICY"' EXIT
    fi
    bash scripts/quietly.sh "$LOGS/apt-update.log" "${SUDO[@]}" apt-get update
    bash scripts/quietly.sh "$LOGS/apt-install.log" "${SUDO[@]}" apt-get install -y --no-install-recommends "${missing[@]}"
    # The tests need nginx's binary, not its service: one installed here is not enabled either,
    # or a developer's machine would serve port 80 after its next boot. (An nginx that was
    # already installed is the machine owner's and is left as it is.)
    if [[ " ${missing[*]} " == *" nginx "* ]]; then
        if command -v deb-systemd-helper >/dev/null 2>&1; then
            "${SUDO[@]}" deb-systemd-helper disable nginx.service >/dev/null 2>&1 || true
        fi
        if command -v systemctl >/dev/null 2>&1; then
            "${SUDO[@]}" systemctl disable --quiet nginx.service >/dev/null 2>&1 || true
        fi
        if command -v update-rc.d >/dev/null 2>&1; then
            "${SUDO[@]}" update-rc.d nginx disable >/dev/null 2>&1 || true
        fi
    fi
    exit 0
fi

# Not Debian: check with pkg-config only; installing is up to the user.
if ! command -v pkg-config >/dev/null 2>&1; then
    echo "deps: pkg-config not found. Install pkg-config, libarchive, libxml2 and zlib" >&2
    echo "      (macOS: brew install pkg-config libarchive libxml2 zlib)." >&2
    exit 1
fi
missing=()
for mod in "${PKG_CONFIG_MODULES[@]}"; do
    if ! pkg-config --exists "$mod"; then
        missing+=("$mod")
    fi
done
if [ "${#missing[@]}" -ne 0 ]; then
    echo "deps: pkg-config cannot find: ${missing[*]}" >&2
    echo "      Install the development packages for libarchive, libxml2 and zlib" >&2
    echo "      (Fedora: dnf install libarchive-devel libxml2-devel zlib-devel;" >&2
    echo "       macOS: brew install libarchive libxml2 zlib, then add their" >&2
    echo "       lib/pkgconfig folders to PKG_CONFIG_PATH)." >&2
    exit 1
fi
exit 0
