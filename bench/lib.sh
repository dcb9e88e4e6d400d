# Shared by the bench scripts (sourced, not run).

# start_mock PACER STATS_FILE: starts `pacer mock` on a free port in the background and waits
# for its "listening on HOST:PORT" line; sets mock_pid and port.
start_mock() {
    local fifo line
    fifo=$(mktemp -u)
    mkfifo "$fifo"
    "$1" mock --port 0 --stats-output "$2" >"$fifo" &
    mock_pid=$!
    read -r line <"$fifo"
    rm -f "$fifo"
    port=${line##*:}
}
