# Shared by the bench scripts (sourced, not run, from the project root).

build=${BUILD_DIR:-build}
pacer=$build/pacer
[ -x "$pacer" ] || scripts/build.sh "$build" >/dev/null

# start_mock PACER STATS_FILE [MOCK_COMMAND [FLAGS...]]: starts `pacer mock` (or the given mock
# subcommand, e.g. native-mock, with its flags) on a free port in the background and waits for
# its "listening on HOST:PORT" line; sets mock_pid and port.
start_mock() {
    local pacer=$1 stats=$2 command=${3:-mock} fifo line
    shift $(( $# < 3 ? $# : 3 ))
    fifo=$(mktemp -u)
    mkfifo "$fifo"
    "$pacer" "$command" --port 0 --stats-output "$stats" "$@" >"$fifo" &
    mock_pid=$!
    read -r line <"$fifo"
    rm -f "$fifo"
    port=${line##*:}
}
