#!/usr/bin/env bash
# Regenerates the generated tables in spec/instructions.md from the instruction
# table, using a built simtspec (default build/release/simtspec).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-build/release/simtspec}
python3 - "$bin" <<'PY'
import re, subprocess, sys
bin = sys.argv[1]
path = "spec/instructions.md"
text = open(path).read()
for table in ("instructions", "specials", "events"):
    out = subprocess.run([bin, "doc", table], check=True, capture_output=True, text=True).stdout
    text = re.sub(r"(<!-- BEGIN %s -->\n).*?(<!-- END %s -->)" % (table, table),
                  lambda m: m.group(1) + out + m.group(2), text, flags=re.S)
open(path, "w").write(text)
PY
