#!/usr/bin/env bash
# Build the image .ci/run's README pass runs in: a minimal Debian with only python3, its venv
# module and git (and the CA certificates pip needs), as a user's machine has; no pytest, no
# bwrap, no node, nothing of ours. Made with debootstrap and `docker import` (no registry).
#
# Cached by content: the tag ends in a hash of this script, scripts/debian_image.sh and the
# suite and mirror it builds from, so a rerun on the same machine reuses the image (about 1 s)
# and a change here builds a new one. Prints the tag on stdout (all else on stderr).
#
#   scripts/build_user_image.sh            # prints e.g. tui-engineer-user:bookworm-3f2a9c1d0e4b
#
# Env: DEBIAN_MIRROR (default http://deb.debian.org/debian), DEBIAN_SUITE (default bookworm).
# Needs root, debootstrap and a Docker Engine. Measured: debootstrap 39 s, import 9 s.
set -euo pipefail

source "$(dirname "$0")/debian_image.sh"
packages="python3,python3-venv,git,ca-certificates"

hash=$( { cat "$0" "$(dirname "$0")/debian_image.sh"; echo "$suite $mirror $packages"; } \
  | sha256sum | cut -c1-12)
tag="tui-engineer-user:$suite-$hash"

if docker image inspect "$tag" >/dev/null 2>&1; then
  echo "image $tag already built (cached by content)" >&2
  echo "$tag"
  exit 0
fi
require_debootstrap
started=$(date +%s)
bootstrap_rootfs tui-engineer-user "$packages"
booted=$(date +%s)
# A user as on any machine: the README's commands run as them.
add_user_and_slim user /bin/bash
import_rootfs "$tag" --change 'LABEL tui-engineer.user-image=1' --change 'USER user' \
  --change 'WORKDIR /home/user' --change 'CMD ["/bin/bash"]'
echo "built $tag: debootstrap $((booted - started)) s, import $(( $(date +%s) - booted )) s" >&2
echo "$tag"
