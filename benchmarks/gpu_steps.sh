# Sourced by gpu_check.sh and gpu_probe.sh: their steps, each under its own time limit, and the summary.
# The sourcing script sets OUT (the file every step's output is added to); FAILED is 1 once a step fails.

SUMMARY=()
FAILED=0
step() {    # step NAME SECONDS COMMAND...: run it under its limit, its output to the terminal and OUT
    local name=$1 limit=$2 started code
    shift 2
    printf '\n== %s (limit %s s): %s\n' "$name" "$limit" "$*" | tee -a "$OUT"
    started=$(date +%s)
    timeout --kill-after=10 "$limit" "$@" 2>&1 | tee -a "$OUT"
    code=${PIPESTATUS[0]}
    [ "$code" -eq 124 ] && echo "-- $name ran out of its $limit s" | tee -a "$OUT"
    [ "$code" -ne 0 ] && FAILED=1
    SUMMARY+=("$(printf '%-14s exit %3s  %4s s  load average %s' "$name" "$code" "$(( $(date +%s) - started ))" \
                "$(cut -d' ' -f1 /proc/loadavg)")")
}

summary() {    # every step's exit code, seconds and the load average at its end
    {
        printf '\n== summary (load average now %s)\n' "$(cut -d' ' -f1-3 /proc/loadavg)"
        printf '%s\n' "${SUMMARY[@]}"
        echo "numbers in $OUT"
    } | tee -a "$OUT"
}
