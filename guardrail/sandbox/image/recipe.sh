#!/usr/bin/env bash
# Builds the guardrail sandbox image without a registry: Debian bookworm (minbase) with python3,
# imported into the local Docker engine under the tag given as $1.
# The tag's suffix is the sha256 of this file, so changing the recipe yields a new tag.
# Needs root (debootstrap) and network access to a Debian mirror (GUARDRAIL_DEBIAN_MIRROR).
set -euo pipefail
tag=${1:?usage: recipe.sh IMAGE_TAG}
mirror=${GUARDRAIL_DEBIAN_MIRROR:-http://deb.debian.org/debian}
root=$(mktemp -d /tmp/guardrail-rootfs.XXXXXX)
trap 'rm -rf "$root"' EXIT
debootstrap --variant=minbase --include=python3 bookworm "$root" "$mirror" >&2
# Nothing in the sandbox needs apt's caches or the docs; a smaller image starts no faster but
# imports and ships faster.
rm -rf "$root"/var/cache/apt/* "$root"/var/lib/apt/lists/* "$root"/usr/share/doc/* "$root"/usr/share/man/*
tar -C "$root" -c . | docker import \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change 'ENV LANG=C.UTF-8' \
  --message "guardrail sandbox: debian bookworm minbase + python3" - "$tag" >&2
echo "$tag"
