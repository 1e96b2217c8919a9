#!/usr/bin/env bash
# What the test suite needs beyond a JDK and Maven: a headless Chromium for BrowserReportTest (report.html rendered in a
# real browser). Installs the Debian package when it is missing and this runs as root with apt-get; otherwise says
# what to install. Without it the browser test is skipped, unless SCYTHE_REQUIRE_BROWSER is set (.ci/run sets it).
set -euo pipefail
for b in chromium chromium-browser google-chrome; do
  if command -v "$b" >/dev/null 2>&1; then
    echo "test dependencies: $b present ($("$b" --version 2>/dev/null | head -1))"
    exit 0
  fi
done
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "test dependencies: installing chromium (Debian package) for BrowserReportTest"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium >/dev/null \
    || { apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium >/dev/null; }
  chromium --version
else
  echo "test dependencies: no chromium; install it (apt-get install chromium) or BrowserReportTest is skipped" >&2
  exit 1
fi
