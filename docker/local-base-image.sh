#!/usr/bin/env bash
# Builds a base image for docker/Dockerfile from Debian's packages, for a Docker engine that cannot pull from Docker
# Hub: Debian bookworm (debootstrap, minbase) with OpenJDK 17 and Maven, imported as local/debian-jdk17-maven:bookworm.
# It serves as both stages:
#   docker/local-base-image.sh
#   docker build -f docker/Dockerfile --network host \
#     --build-arg BUILD_IMAGE=local/debian-jdk17-maven:bookworm \
#     --build-arg RUNTIME_IMAGE=local/debian-jdk17-maven:bookworm -t scythe .
# Needs root, debootstrap (apt-get install debootstrap) and a Debian mirror (MIRROR, default deb.debian.org).
set -euo pipefail
image=${IMAGE:-local/debian-jdk17-maven:bookworm}
mirror=${MIRROR:-http://deb.debian.org/debian}
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
debootstrap --variant=minbase --include=openjdk-17-jdk-headless,maven,ca-certificates bookworm "$root" "$mirror"
rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/*
tar -C "$root" -c . | docker import -c 'ENV LANG=C.UTF-8' - "$image"
echo "built $image"
