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
suite="${DEBIAN_SUITE:-bookworm}"
mirror="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"

if [ "$force" -eq 0 ] && docker image inspect "$tag" >/dev/null 2>&1; then
  echo "image $tag already exists (pass --force to rebuild)"
  exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
  echo "debootstrap needs root: run this script as root (or with sudo)" >&2
  exit 1
fi
if ! command -v debootstrap >/dev/null 2>&1; then
  echo "debootstrap is missing: apt-get install -y debootstrap" >&2
  exit 1
fi

root="$(mktemp -d /var/tmp/tui-engineer-rootfs.XXXXXX)"
trap 'rm -rf "$root"' EXIT
started=$(date +%s)
echo "debootstrap $suite from $mirror into $root ..."
debootstrap --variant=minbase --include=python3,python-is-python3,python3-pytest,python3-pip \
  "$suite" "$root" "$mirror" >"$root.log" 2>&1 || { tail -n 40 "$root.log" >&2; exit 1; }
rm -f "$root.log"

# A non-root user for the tests (uid 1000), and nothing the image does not need at run time.
chroot "$root" useradd --create-home --uid 1000 --user-group --shell /bin/sh tester
chroot "$root" apt-get clean
rm -rf "$root"/var/lib/apt/lists/* "$root"/usr/share/doc/* "$root"/usr/share/man/* \
  "$root"/usr/share/locale/* "$root"/var/cache/debconf/*-old "$root"/var/log/*.log

tar --numeric-owner -C "$root" -c . | docker import \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change 'ENV LANG=C.UTF-8' \
  --change 'LABEL tui-engineer.test-image=1' \
  --change 'CMD ["/bin/sh"]' \
  - "$tag" >/dev/null
echo "built $tag in $(( $(date +%s) - started ))s"
