#!/usr/bin/env bash
# Build the local base image the docker sandbox tests run in: a minimal Debian with python3,
# pytest and pip, made with debootstrap and `docker import` (no registry is needed or used).
# Built once per machine: exits at once when the tag already exists (pass --force to rebuild).
#
#   scripts/build_test_image.sh [--force] [TAG]
#
# Env: DEBIAN_MIRROR (default http://deb.debian.org/debian), DEBIAN_SUITE (default bookworm).
set -euo pipefail

force=0
if [ "${1:-}" = "--force" ]; then force=1; shift; fi
tag="${1:-tui-engineer-test/python:bookworm}"
source "$(dirname "$0")/debian_image.sh"

if [ "$force" -eq 0 ] && docker image inspect "$tag" >/dev/null 2>&1; then
  echo "image $tag already exists (pass --force to rebuild)"
  exit 0
fi
require_debootstrap
started=$(date +%s)
bootstrap_rootfs tui-engineer python3,python-is-python3,python3-pytest,python3-pip
# A non-root user for the tests, and no translations either.
add_user_and_slim tester /bin/sh
rm -rf "$root"/usr/share/locale/*
import_rootfs "$tag" --change 'LABEL tui-engineer.test-image=1' --change 'CMD ["/bin/sh"]'
echo "built $tag in $(( $(date +%s) - started ))s"
