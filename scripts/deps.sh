#!/usr/bin/env bash
# Installs the system packages pkgtool needs to build and test, and only the
# ones that are missing. Quiet when everything is already present.
#
#   Debian/Ubuntu: apt-get installs what dpkg-query does not report installed
#                  (through sudo when not running as root).
#   Elsewhere:     checks pkg-config and says what to install.
set -euo pipefail

# nginx and openssl are for the tests: delivery tests serve published folders with nginx
# (started by the tests themselves) and check signatures with openssl.
DEBIAN_PACKAGES=(libarchive-dev libxml2-dev zlib1g-dev libdeflate-dev libisal-dev libcurl4-openssl-dev libarchive-tools zip pkg-config python3 nginx openssl)
PKG_CONFIG_MODULES=(libarchive libxml-2.0 zlib)
# PkgKit links libdeflate and ISA-L on Linux only.
if [ "$(uname -s)" = Linux ]; then PKG_CONFIG_MODULES+=(libdeflate libisal); fi

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

    echo "deps: installing missing packages: ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    # Debian starts nginx's service on install (on port 80); the tests run their own nginx,
    # so forbid service starts for the length of the install, unless a policy already exists.
    POLICY=/usr/sbin/policy-rc.d
    if [ ! -e "$POLICY" ]; then
        printf '#!/bin/sh\nexit 101\n' | "${SUDO[@]}" tee "$POLICY" >/dev/null
        "${SUDO[@]}" chmod 755 "$POLICY"
        trap '"${SUDO[@]}" rm -f "$POLICY"' EXIT
    fi
    "${SUDO[@]}" apt-get update
    "${SUDO[@]}" apt-get install -y --no-install-recommends "${missing[@]}"
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
