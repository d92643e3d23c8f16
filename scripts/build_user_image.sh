#!/usr/bin/env bash
# Build the image .ci/run's README pass runs in: a minimal Debian with only python3, its venv
# module and git (and the CA certificates pip needs), as a user's machine has; no pytest, no
# bwrap, no node, nothing of ours. Made with debootstrap and `docker import` (no registry).
#
# Cached by content: the tag ends in a hash of this script and the suite and mirror it builds
# from, so a rerun on the same machine reuses the image (about 1 s) and a change here builds a
# new one. Prints the tag on stdout (all else on stderr).
#
#   scripts/build_user_image.sh            # prints e.g. tui-engineer-user:bookworm-3f2a9c1d0e4b
#
# Env: DEBIAN_MIRROR (default http://deb.debian.org/debian), DEBIAN_SUITE (default bookworm).
# Needs root, debootstrap and a Docker Engine. Measured: debootstrap 39 s, import 9 s.
set -euo pipefail

suite="${DEBIAN_SUITE:-bookworm}"
mirror="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
packages="python3,python3-venv,git,ca-certificates"

hash=$( { cat "$0"; echo "$suite $mirror $packages"; } | sha256sum | cut -c1-12)
tag="tui-engineer-user:$suite-$hash"

if docker image inspect "$tag" >/dev/null 2>&1; then
  echo "image $tag already built (cached by content)" >&2
  echo "$tag"
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

root="$(mktemp -d /var/tmp/tui-engineer-user-rootfs.XXXXXX)"
trap 'rm -rf "$root" "$root.log"' EXIT
started=$(date +%s)
echo "debootstrap --variant=minbase $suite ($packages) from $mirror ..." >&2
debootstrap --variant=minbase --include="$packages" "$suite" "$root" "$mirror" \
  >"$root.log" 2>&1 || { tail -n 40 "$root.log" >&2; exit 1; }
booted=$(date +%s)

# A user as on any machine (uid 1000, a home of their own): the README's commands run as them.
chroot "$root" useradd --create-home --uid 1000 --user-group --shell /bin/bash user
chroot "$root" apt-get clean
rm -rf "$root"/var/lib/apt/lists/* "$root"/usr/share/doc/* "$root"/usr/share/man/* \
  "$root"/var/cache/debconf/*-old "$root"/var/log/*.log

tar --numeric-owner -C "$root" -c . | docker import \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change 'ENV LANG=C.UTF-8' \
  --change 'LABEL tui-engineer.user-image=1' \
  --change 'USER user' \
  --change 'WORKDIR /home/user' \
  --change 'CMD ["/bin/bash"]' \
  - "$tag" >/dev/null
echo "built $tag: debootstrap $((booted - started)) s, import $(( $(date +%s) - booted )) s" >&2
echo "$tag"
