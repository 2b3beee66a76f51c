#!/bin/bash
# Errors pass on whole: a callee's failure is returned as r.failure() (or withContext(prefix,
# r.failure()) with words in front), never re-wrapped as makeError(r.error()), which keeps the
# words and drops the code and the field the front ends answer by (src/engine/result.h).
# Usage: test_error_passing.sh SOURCE_DIR. Prints every site and exits 1 when there is one.
set -u
src="${1:?usage: test_error_passing.sh SOURCE_DIR}/src"
sites=$(grep -rnE 'makeError\([A-Za-z_][A-Za-z_0-9]*(\.|->)error\(\)\)' "$src" --include='*.h' --include='*.cpp' --include='*.cu')
if [ -n "$sites" ]; then
  echo "$sites" | sed "s|^$src/|LOSSY: |"
  echo "re-wrapped errors lose their code: return r.failure() instead"
  exit 1
fi
echo "every passed-on error keeps its code"
