#!/usr/bin/env bash
# Renders a `ktune report` HTML page to a PNG with headless Chromium, to check that the page
# (inline SVG, no network) displays. Usage:
#   scripts/render_report.sh report.html [report.png] [WIDTHxHEIGHT]
# Installs Debian's chromium package when it is missing and apt-get is available.
set -euo pipefail
html=${1:?usage: $0 report.html [out.png] [WIDTHxHEIGHT]}
png=${2:-${html%.html}.png}
size=${3:-1200x1600}
[ -f "$html" ] || { echo "render_report: no such file: $html" >&2; exit 2; }
browser=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
if [ -z "$browser" ]; then
  if command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
    echo "render_report: installing chromium (apt-get install -y chromium)" >&2
    apt-get install -y chromium >/dev/null || { apt-get update >/dev/null && apt-get install -y chromium >/dev/null; }
    browser=$(command -v chromium)
  else
    echo "render_report: no chromium found; install it (apt-get install -y chromium)" >&2
    exit 2
  fi
fi
abs_html=$(cd "$(dirname "$html")" && pwd)/$(basename "$html")
abs_png=$(cd "$(dirname "$png")" && pwd)/$(basename "$png")
rm -f "$abs_png"
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
"$browser" --headless --no-sandbox --disable-gpu --disable-dev-shm-usage --hide-scrollbars \
  --user-data-dir="$profile" --screenshot="$abs_png" --window-size="${size/x/,}" \
  "file://$abs_html" >/dev/null 2>&1 || true
if [ ! -s "$abs_png" ]; then
  echo "render_report: chromium produced no screenshot of $html" >&2
  exit 1
fi
echo "rendered $html -> $png ($size)"
