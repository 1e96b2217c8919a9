#!/usr/bin/env bash
# The image's HEALTHCHECK: GET /health on the node's own address (SCYTHE_HOST; the node binds its HTTP port there, not
# on loopback). Bash's /dev/tcp, so the image needs no curl. Exit 0 only on "200"; no node configured: nothing to check.
set -u
[ -n "${SCYTHE_NODE:-}" ] || exit 0
host=${SCYTHE_HOST:-127.0.0.1}
port=${SCYTHE_HTTP_PORT:-9100}
exec 3<>"/dev/tcp/$host/$port" || exit 1
printf 'GET /health HTTP/1.0\r\nHost: %s\r\n\r\n' "$host" >&3
read -r -t 2 status <&3 || exit 1
case "$status" in
  HTTP/1.?" 200"*) exit 0 ;;
  *) exit 1 ;;
esac
