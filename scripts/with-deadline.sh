#!/usr/bin/env bash
# with-deadline.sh SECONDS COMMAND [ARGS...]
# Runs COMMAND. If it is still running after SECONDS, prints a backtrace of every thread of every
# process it started (gdb when present, else the kernel's view from /proc), kills them all, and
# exits 124, so a hang costs minutes and leaves evidence instead of eating CI's 90.
# Otherwise exits with COMMAND's status.
set -uo pipefail
if [ $# -lt 2 ] || ! [[ $1 =~ ^[0-9]+$ ]]; then
    echo "usage: with-deadline.sh SECONDS COMMAND [ARGS...]" >&2
    exit 2
fi
limit=$1
shift

descendants() { # pid -> the pid and every process below it, parents first
    local all
    all=$(ps -e -o pid=,ppid=)
    local queue=("$1") found=()
    while [ ${#queue[@]} -gt 0 ]; do
        local pid=${queue[0]}
        queue=("${queue[@]:1}")
        found+=("$pid")
        queue+=($(awk -v p="$pid" '$2 == p { print $1 }' <<<"$all"))
    done
    echo "${found[@]}"
}

print_backtraces() { # pid...
    local pid
    for pid in "$@"; do
        [ -d "/proc/$pid" ] || continue
        echo "---- process $pid: $(tr '\0' ' ' < "/proc/$pid/cmdline" 2>/dev/null | cut -c1-300)"
        if command -v gdb >/dev/null 2>&1; then
            timeout 60 gdb -p "$pid" -batch -nx -ex 'set pagination off' -ex 'thread apply all bt' 2>&1 |
                grep -vE '^\[(New LWP|Thread debugging|Inferior)|^Using host libthread_db|^warning: (Unable|Could not)' || true
        else
            local task
            for task in /proc/"$pid"/task/*; do
                echo "thread ${task##*/} ($(cat "$task/comm" 2>/dev/null)): wchan=$(cat "$task/wchan" 2>/dev/null) syscall=$(cut -d' ' -f1 "$task/syscall" 2>/dev/null)"
                cat "$task/stack" 2>/dev/null | sed 's/^/    /' || true
            done
        fi
    done
}

"$@" &
child=$!
trap 'kill -KILL $(descendants "$child") 2>/dev/null; exit 143' INT TERM
sleep "$limit" &
sleeper=$!
finished=""
wait -n -p finished "$child" "$sleeper"
status=$?
if [ "$finished" = "$child" ]; then
    kill "$sleeper" 2>/dev/null
    wait "$sleeper" 2>/dev/null
    exit "$status"
fi
pids=$(descendants "$child")
echo "with-deadline: '$*' still running after ${limit} s; backtraces of every thread follow, then it is killed" >&2
print_backtraces $pids >&2
kill -KILL $pids 2>/dev/null
wait "$child" 2>/dev/null
echo "with-deadline: killed '$*' after ${limit} s (exit 124)" >&2
exit 124
