#!/usr/bin/env bash
# Builds the guardrail sandbox image without a registry: Debian bookworm (minbase) with python3,
# loaded into the local Docker engine under the tag given as $1.
# The tag's suffix is the sha256 of this file, so changing the recipe yields a new tag.
# Needs root (debootstrap) and network access to a Debian mirror (GUARDRAIL_DEBIAN_MIRROR).
#
# Reproducible: the same recipe and the same packages give the same image id on any engine. The
# root filesystem is normalised (no logs, caches, backup files or host files; dates in
# /etc/shadow fixed; bytecode recompiled with a fixed hash seed and hash-based invalidation),
# packed with sorted members, numeric owners and mtimes clamped to SOURCE_DATE_EPOCH, and loaded
# as a hand-written image archive whose config has a fixed creation date (`docker import` stamps
# the time of the import into the config, hence into the id). The packages are whatever the
# mirror serves: point GUARDRAIL_DEBIAN_MIRROR at a snapshot (snapshot.debian.org/archive/
# debian/YYYYMMDDTHHMMSSZ) to pin them, or copy one image to every node with
# `guardrail sandbox export|import`.
#
#   recipe.sh TAG               debootstrap, normalise, pack and load
#   recipe.sh --pack DIR TAG    normalise nothing: pack the tree DIR and load it (tests, users
#                               with a root filesystem of their own)
# Prints the tag, then the image id, on stdout (one a line).
set -euo pipefail
epoch=${SOURCE_DATE_EPOCH:-1735689600}  # 2025-01-01T00:00:00Z
export SOURCE_DATE_EPOCH=$epoch

# Pack the tree $1 as one layer and load it as image $2; prints the image id.
pack_and_load() {
  local tree=$1 tag=$2 work layer_sha config_sha created arch
  work=$(mktemp -d /tmp/guardrail-image.XXXXXX)
  # shellcheck disable=SC2064 # expand now: the trap outlives this function's locals
  trap "rm -rf '$work'" RETURN
  local -a stable=(--sort=name --format=gnu --numeric-owner --mtime="@$epoch" --clamp-mtime)
  tar -C "$tree" "${stable[@]}" -cf "$work/layer.tar" .
  layer_sha=$(sha256sum "$work/layer.tar" | cut -c1-64)
  created=$(date -u -d "@$epoch" +%Y-%m-%dT%H:%M:%SZ)
  arch=$(docker version --format '{{.Server.Arch}}')
  printf '{"architecture":"%s","os":"linux","created":"%s","config":{"Env":["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin","LANG=C.UTF-8"]},"rootfs":{"type":"layers","diff_ids":["sha256:%s"]},"history":[{"created":"%s","comment":"guardrail sandbox: debian bookworm minbase + python3"}]}' \
    "$arch" "$created" "$layer_sha" "$created" >"$work/config.json"
  config_sha=$(sha256sum "$work/config.json" | cut -c1-64)
  mkdir "$work/archive" "$work/archive/$layer_sha"
  mv "$work/layer.tar" "$work/archive/$layer_sha/layer.tar"
  mv "$work/config.json" "$work/archive/$config_sha.json"
  printf '[{"Config":"%s.json","RepoTags":["%s"],"Layers":["%s/layer.tar"]}]' \
    "$config_sha" "$tag" "$layer_sha" >"$work/archive/manifest.json"
  tar -C "$work/archive" "${stable[@]}" -c . | docker load >&2
  echo "sha256:$config_sha"
}

# Remove what differs from one debootstrap run to the next but the sandbox never needs.
normalise() {
  local root=$1
  rm -rf "$root"/var/cache/apt/* "$root"/var/lib/apt/lists/* "$root"/usr/share/doc/* \
    "$root"/usr/share/man/* "$root"/var/log/* "$root"/var/cache/ldconfig/aux-cache \
    "$root"/var/lib/dpkg/*-old "$root"/var/cache/debconf/*-old "$root"/etc/*- \
    "$root"/etc/machine-id "$root"/var/lib/dbus/machine-id "$root"/debootstrap
  # The engine mounts its own over these; the host's must not end up in the image.
  : >"$root/etc/resolv.conf"
  : >"$root/etc/hostname"
  : >"$root/etc/hosts"
  # Field 3 of shadow is the day the password last changed: the day of the build.
  sed -i -E "s/^([^:]*:[^:]*:)[0-9]*:/\1$((epoch / 86400)):/" "$root/etc/shadow"
  # Bytecode from the packages' postinst holds the compiler's hash-seeded set order: recompile
  # it all the same way, checked by source hash (mtimes play no part) under a fixed seed.
  find "$root" -depth -name __pycache__ -type d -exec rm -rf {} +
  chroot "$root" env PYTHONHASHSEED=0 python3 -m compileall -q -j 1 \
    --invalidation-mode unchecked-hash /usr/lib/python3 /usr/lib/python3.11 >/dev/null
}

if [ "${1:-}" = --pack ]; then
  tree=${2:?usage: recipe.sh --pack DIR TAG}
  tag=${3:?usage: recipe.sh --pack DIR TAG}
  id=$(pack_and_load "$tree" "$tag")
  printf '%s\n%s\n' "$tag" "$id"
  exit 0
fi
tag=${1:?usage: recipe.sh IMAGE_TAG}
mirror=${GUARDRAIL_DEBIAN_MIRROR:-http://deb.debian.org/debian}
root=$(mktemp -d /tmp/guardrail-rootfs.XXXXXX)
trap 'rm -rf "$root"' EXIT
debootstrap --variant=minbase --include=python3 bookworm "$root" "$mirror" >&2
normalise "$root"
id=$(pack_and_load "$root" "$tag")
printf '%s\n%s\n' "$tag" "$id"
