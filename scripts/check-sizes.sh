#!/usr/bin/env bash
# Checks the size targets of docs/architecture.md ("Size targets") and prints the figures:
#   no function in src/ over 120 lines, no src/cli file over 300 lines, src/cli under 3,000 lines,
#   no source file over 800 lines, each outside library called from one module.
# What breaks a target today is listed, with its size, in scripts/size-exceptions.txt. The check
# fails on a new breach, on a listed one that grew, and on a listed one that is gone or smaller
# (so the list only ever shrinks: run with --update to rewrite it, and commit it).
#   scripts/check-sizes.sh            check (CI runs this)
#   scripts/check-sizes.sh --update   rewrite scripts/size-exceptions.txt from the tree
# Function lengths come from Universal Ctags (a function's first to last line, lambdas inside
# included).
set -euo pipefail
cd "$(dirname "$0")/.."
"$(pwd)/scripts/deps.sh" universal-ctags

# Debian's universal-ctags installs ctags-universal (and `ctags` only as an alternative).
ctags=$(command -v ctags-universal || command -v ctags)
readonly function_max=120 cli_file_max=300 cli_total_max=3000 file_max=800
readonly exceptions=scripts/size-exceptions.txt
# Outside libraries (beyond the common base: Boost, fmt) and the #include that calls each.
readonly libraries=(
    "libsndfile:sndfile.h"
    "libsamplerate:samplerate.h"
    "OpenSSL:openssl/"
    "CLI11:CLI/"
    "NVML (dlopen):dlfcn.h"
    "liburing:liburing"
)

# Every breach as one line: KIND NAME SIZE (sorted), the figures on standard error.
breaches() {
    local sources
    sources=$(find src include -name '*.cpp' -o -name '*.hpp' | sort)

    "$ctags" -R --languages=C++ --kinds-C++=f --fields=+ne -o - src |
        awk -F'\t' -v max="$function_max" '
            { start = 0; end = 0
              for (i = 4; i <= NF; i++) {
                  if ($i ~ /^line:/) start = substr($i, 6)
                  if ($i ~ /^end:/) end = substr($i, 5) }
              if (end == 0) next
              n = end - start + 1; key = $2 ":" $1
              if (n > len[key]) len[key] = n
              if (n > longest) { longest = n; name = key } }
            END { over = 0
                  for (k in len) if (len[k] > max) { print "function", k, len[k]; over++ }
                  printf "functions over %d lines: %d (longest: %s, %d lines)\n", max, over, name,
                         longest > "/dev/stderr" }'

    # shellcheck disable=SC2086
    wc -l $sources | awk -v max="$file_max" '$2 != "total" && $1 > max { print "file", $2, $1 }'
    # shellcheck disable=SC2086
    wc -l $sources | awk -v max="$file_max" '$2 != "total" { if ($1 > max) n++; if ($1 > top) { top = $1; f = $2 } }
        END { printf "source files over %d lines: %d (largest: %s, %d lines)\n", max, n, f, top > "/dev/stderr" }'

    local cli_total=0 n cli_over=0 f
    for f in src/cli/*.cpp src/cli/*.hpp include/pacer/cli/*.hpp; do
        [ -f "$f" ] || continue
        n=$(wc -l <"$f")
        cli_total=$((cli_total + n))
        if [ "$n" -gt "$cli_file_max" ]; then
            echo "cli-file $f $n"
            cli_over=$((cli_over + 1))
        fi
    done
    [ "$cli_total" -lt "$cli_total_max" ] || echo "cli-total src/cli $cli_total"
    echo "cli files over $cli_file_max lines: $cli_over; cli total: $cli_total lines (target under $cli_total_max)" >&2

    local entry lib pattern modules count
    for entry in "${libraries[@]}"; do
        lib=${entry%%:*}
        pattern=${entry#*:}
        # shellcheck disable=SC2086
        modules=$(grep -l "#include <$pattern" $sources 2>/dev/null |
            sed -E 's#^(src|include/pacer)/([a-z_]+)/.*#\2#; s#^src/[^/]*$#(top)#' | sort -u | paste -sd, - || true)
        count=$(echo "$modules" | awk -F, 'NF { print NF } !NF { print 0 }')
        echo "${lib}: ${modules:-none}" | sed 's/^/  /' >&2
        [ "$count" -le 1 ] || echo "library ${lib// /_} $modules"
    done
}

current=$(breaches | sort)
if [ "${1:-}" = "--update" ]; then
    {
        echo "# What breaks a size target today (scripts/check-sizes.sh). Only ever shrink this list."
        echo "# KIND NAME SIZE (library: the modules that call it)"
        echo "$current"
    } >"$exceptions"
    echo "pacer: wrote $exceptions ($(echo "$current" | grep -c . || true) entries)"
    exit 0
fi

listed=$(grep -v '^#' "$exceptions" | sort)
status=0
while read -r kind name size; do
    [ -n "$kind" ] || continue
    was=$(echo "$listed" | awk -v k="$kind" -v n="$name" '$1 == k && $2 == n { print $3 }')
    if [ -z "$was" ]; then
        echo "pacer: new size breach: $kind $name ($size)" >&2
        status=1
    elif [ "$kind" != library ] && [ "$size" -gt "$was" ]; then
        echo "pacer: $kind $name grew from $was to $size lines" >&2
        status=1
    elif [ "$kind" = library ] && [ "$size" != "$was" ]; then
        echo "pacer: library $name is now called from $size (listed: $was)" >&2
        status=1
    fi
done <<<"$current"
while read -r kind name size; do
    [ -n "$kind" ] || continue
    now=$(echo "$current" | awk -v k="$kind" -v n="$name" '$1 == k && $2 == n { print $3 }')
    if [ "$now" != "$size" ] && { [ -z "$now" ] || [ "$kind" != library ]; }; then
        echo "pacer: $kind $name is now ${now:-within its target} (listed: $size): run scripts/check-sizes.sh --update" >&2
        status=1
    fi
done <<<"$listed"
echo "size targets: $(echo "$listed" | grep -c . || true) listed breaches, $([ $status -eq 0 ] && echo "none new or grown" || echo "see above")"
exit $status
