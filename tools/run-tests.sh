#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Run kselftest-harness test binaries and add up their results.
#
# Usage: tools/run-tests.sh [BINARY...]    (default: every build/tests/**/*_test)
#
# Each binary's TAP output is shown as it runs.  Every "ok N" / "not ok N"
# line is one test case; "ok N # SKIP" counts as skipped, "ok N # XFAIL"
# as passed.  A binary that crashes, times out, reports fewer results than
# its plan, or exits non-zero without reporting a failure counts as one
# failure of its own.  The last line printed is
#
#	N passed, N failed, N skipped
#
# and the exit status is 0 iff nothing failed and something passed.
#
# VALOR_TEST_TIMEOUT: seconds one binary may run (default 600).

set -uo pipefail
set +m

timeout_s=${VALOR_TEST_TIMEOUT:-600}
case $timeout_s in
'' | *[!0-9]*)
	echo "run-tests: VALOR_TEST_TIMEOUT must be a number of seconds" >&2
	exit 2
	;;
esac

if [ $# -gt 0 ]; then
	bins=("$@")
else
	mapfile -t bins < <(find build/tests -type f -name '*_test' -perm -u+x \
				 2>/dev/null | sort)
fi

total_pass=0
total_fail=0
total_skip=0
failed_bins=()
current_sid=
log=$(mktemp)

# Every process of the running binary, including test children that the
# harness moved into their own process groups, shares its session.
kill_session()
{
	local sid=$1 stat rest pid

	[ -n "$sid" ] || return 0
	for stat in /proc/[0-9]*/stat; do
		read -r rest <"$stat" 2>/dev/null || continue
		pid=${rest%% *}
		rest=${rest##*) }	# fields after "pid (comm) "
		set -- $rest
		[ "${4:-}" = "$sid" ] && kill -KILL "$pid" 2>/dev/null
	done
	return 0
}

cleanup()
{
	kill_session "$current_sid"
	rm -f "$log"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# run_one BINARY: run it with a timeout, streaming its output into $log
# and to stdout.  Sets rc (exit status, 124 on timeout).
run_one()
{
	local bin=$1 pid timer tailpid done_pid status

	: >"$log"
	# setsid: the binary leads a session of its own, so that on timeout
	# every process it left behind can be found and killed.  stdbuf -oL:
	# whole lines reach the log in order with the harness's stderr.
	setsid stdbuf -oL "$bin" >"$log" 2>&1 </dev/null &
	pid=$!
	current_sid=$pid
	tail -n +1 -s 0.2 --pid="$pid" -f "$log" &
	tailpid=$!
	sleep "$timeout_s" &
	timer=$!

	wait -n -p done_pid "$pid" "$timer"
	status=$?
	if [ "$done_pid" = "$timer" ]; then
		kill_session "$pid"
		wait "$pid" 2>/dev/null
		rc=124
	else
		rc=$status
		kill "$timer" 2>/dev/null
		wait "$timer" 2>/dev/null
		# Test children still running after their parent exited.
		kill_session "$pid"
	fi
	current_sid=
	wait "$tailpid" 2>/dev/null
}

for bin in "${bins[@]}"; do
	name=${bin#./}
	if [ ! -x "$bin" ]; then
		echo "# run-tests: $name: not an executable file"
		total_fail=$((total_fail + 1))
		failed_bins+=("$name (missing)")
		continue
	fi

	echo "# run-tests: $name"
	started=$SECONDS
	run_one "$bin"

	pass=0 fail=0 skip=0 plan=-1
	while IFS= read -r line; do
		case $line in
		"ok "[0-9]*" # SKIP"*) skip=$((skip + 1)) ;;
		"ok "[0-9]*) pass=$((pass + 1)) ;;
		"not ok "[0-9]*) fail=$((fail + 1)) ;;
		"1..0 # SKIP"*) plan=0 skip=$((skip + 1)) ;;
		1..[0-9]*) plan=${line#1..} plan=${plan%% *} ;;
		esac
	done <"$log"

	problem=
	if [ $rc -eq 124 ]; then
		problem="timed out after ${timeout_s}s"
	elif [ $rc -gt 128 ]; then
		problem="killed by signal $((rc - 128))"
	elif [ "$plan" != 0 ] && [ $((pass + fail + skip)) -lt "$plan" ]; then
		problem="reported $((pass + fail + skip)) of $plan results (exit $rc)"
	elif [ $plan -lt 0 ]; then
		problem="printed no test plan (exit $rc)"
	elif [ $rc -ne 0 ] && [ $fail -eq 0 ] && [ $rc -ne 4 ]; then
		# 4 is KSFT_SKIP: a binary that skipped as a whole.
		problem="exited with status $rc without reporting a failure"
	fi
	if [ -n "$problem" ]; then
		echo "not ok - $name: $problem"
		fail=$((fail + 1))
	fi
	if [ $fail -gt 0 ]; then
		failed_bins+=("$name")
	fi
	echo "# run-tests: $name: $pass passed, $fail failed, $skip skipped" \
	     "($((SECONDS - started))s)"
	total_pass=$((total_pass + pass))
	total_fail=$((total_fail + fail))
	total_skip=$((total_skip + skip))
done

if [ ${#bins[@]} -eq 0 ]; then
	echo "# run-tests: no test binaries found (build them with make check)"
fi
echo "# run-tests: ${#bins[@]} binaries in ${SECONDS}s"
if [ ${#failed_bins[@]} -gt 0 ]; then
	echo "# run-tests: failures in: ${failed_bins[*]}"
fi
echo "$total_pass passed, $total_fail failed, $total_skip skipped"
[ $total_fail -eq 0 ] && [ $total_pass -gt 0 ]
