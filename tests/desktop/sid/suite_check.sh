#!/usr/bin/env bash
# Inside the sid chroot (root, via enter.sh), on the copy of the checkout at /opt/ghosttype: the
# project's CI entry point, .ci/run, as on a fresh current Debian (sid's packages, its Python): system
# packages, the venv, the whole test suite. The desktop tier itself is not run in here (it builds and
# enters this very chroot). Writes /out/ci-run.log and /out/suite.json ({"ok", "seconds", "summary"}).
set -u
cd /opt/ghosttype
t0=$(date +%s)
# The served-model tests run against python -m llama_cpp.server only: llama.cpp's own server, built
# from source, is tested by the run outside (it would add a 10-minute build to every fresh overlay).
GHOSTTYPE_DESKTOP_TIER=no GHOSTTYPE_SERVED_ENGINES=llama_cpp.server bash .ci/run >/out/ci-run.log 2>&1
rc=$?
t1=$(date +%s)
summary=$(grep -E '^[0-9]+ (passed|failed)|^=+ .*(passed|failed|error)' /out/ci-run.log | tail -1)
python3 -c 'import json, sys; print(json.dumps({"ok": sys.argv[1] == "0", "seconds": int(sys.argv[2]), "summary": sys.argv[3]}))' \
  "$rc" $((t1 - t0)) "$summary" >/out/suite.json
tail -40 /out/ci-run.log
exit $rc
