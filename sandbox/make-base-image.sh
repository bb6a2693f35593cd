#!/usr/bin/env bash
# Build omni's sandbox base image without any container registry:
# debootstrap a minimal Debian from the configured apt mirror, then `docker import` it.
# Usage: sandbox/make-base-image.sh [IMAGE_TAG]   (default omni-base:bookworm)
# Env:   OMNI_DEBIAN_MIRROR (default http://deb.debian.org/debian), OMNI_DEBIAN_SUITE (default bookworm)
set -euo pipefail
tag="${1:-omni-base:bookworm}"
mirror="${OMNI_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
suite="${OMNI_DEBIAN_SUITE:-bookworm}"
if docker image inspect "$tag" >/dev/null 2>&1; then
  echo "base image $tag already exists"; exit 0
fi
command -v debootstrap >/dev/null || { echo "debootstrap is not installed (apt-get install debootstrap)" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "debootstrap needs root" >&2; exit 2; }
rootfs="$(mktemp -d /tmp/omni-rootfs.XXXXXX)"
trap 'rm -rf "$rootfs"' EXIT
debootstrap --variant=minbase \
  --include=python3,python3-venv,python3-pip,git,ca-certificates,ripgrep,procps \
  "$suite" "$rootfs" "$mirror"
# Keep the image small: apt lists and caches are not needed at run time.
rm -rf "$rootfs"/var/lib/apt/lists/* "$rootfs"/var/cache/apt/archives/*.deb
tar -C "$rootfs" -c . | docker import -c 'ENV LANG=C.UTF-8' - "$tag"
echo "built $tag"
