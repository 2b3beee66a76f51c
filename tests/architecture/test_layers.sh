#!/bin/bash
# The layering rules of docs/architecture.md, checked on the source: which folder may include
# which, Qt only in the app, and the app reaching the engine through its public headers only.
# Usage: test_layers.sh SOURCE_DIR. Prints every breach and exits 1 when there is one.
set -u
src="${1:?usage: test_layers.sh SOURCE_DIR}/src"
failures=0

# folder -> the folders its files may include (besides itself)
declare -A allowed=(
  [platform]=""
  [engine]=""
  [cuda]="engine"
  [launch]="engine cuda"
  [hub]="engine"
  [loadgen]="engine hub"
  [quantize]="engine"
  [server]="engine launch hub"
  [testing]="engine platform"
  [gui]="engine launch hub loadgen server"
  [app]="platform engine launch hub loadgen quantize server testing gui"
)
# What the app may include of the engine: the request API and plain data, nothing of its inside.
engine_public="engine.h request.h result.h prompt_builder.h capacity_planner.h serving_settings.h engine_stats.h engine_metrics.h
  backend_memory.h generation_config.h model_config.h model_folder.h tokenizer.h sampling_params.h
  request_stream.h chat_message.h utf8_path.h structured_output.h"

breach() {
  echo "BREACH: $*"
  failures=$((failures + 1))
}

for folder in "${!allowed[@]}"; do
  [ -d "$src/$folder" ] || { breach "src/$folder is missing (update this test with the layout)"; continue; }
  while IFS= read -r line; do
    file=${line%%:*}
    target=$(sed -n 's/.*#include "\([a-z_]*\)\/.*/\1/p' <<<"$line")
    [ -z "$target" ] || [ "$target" = "$folder" ] && continue
    case " ${allowed[$folder]} " in
      *" $target "*) ;;
      *) breach "${file#"$src"/} includes $target/ (src/$folder may include: ${allowed[$folder]:-nothing else})" ;;
    esac
  done < <(grep -rn '#include "[a-z_]*/' "$src/$folder" --include='*.h' --include='*.cpp' --include='*.cu' --include='*.cuh')
  if [ "$folder" != gui ] && [ "$folder" != app ]; then
    while IFS= read -r line; do
      breach "${line#"$src"/} includes Qt (only src/gui and the brook executable may)"
    done < <(grep -rln '#include <Q' "$src/$folder" --include='*.h' --include='*.cpp')
  fi
done

while IFS= read -r line; do
  header=$(sed -n 's/.*#include "engine\/\([a-z0-9_/]*\.h\)".*/\1/p' <<<"$line")
  case " $(echo $engine_public) " in
    *" $header "*) ;;
    *) breach "$(sed 's/:.*//' <<<"${line#"$src"/}") includes engine/$header, which is inside the engine (src/gui uses its public headers)" ;;
  esac
done < <(grep -rn '#include "engine/' "$src/gui")

if [ "$failures" -gt 0 ]; then
  echo "$failures layering breach(es)"
  exit 1
fi
echo "layering holds: ${#allowed[@]} folders checked"
