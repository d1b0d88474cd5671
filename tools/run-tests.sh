#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Run kselftest-harness test binaries and add up their results.
#
# Usage: tools/run-tests.sh [BINARY...] [--vm [GUEST_TEST...]]
#
# BINARY: host test binaries (default: every build/tests/**/*_test but
# the guest tests of build/tests/kmod/).  --vm: then run the guest tests
# (default: all of them) in a QEMU guest with valor.ko loaded, through
# tools/vmtest/vmtest.sh, and count every result it reports -- each guest
# binary, the dmesg check after it, loading and unloading the module --
# exactly like a host binary's output.  A result the guest never finished
# (panic, timeout) is a failure; if QEMU cannot run here at all, the guest
# run is one skip with the reason.
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

bins=()
vm=0
vm_tests=()
while [ $# -gt 0 ]; do
	if [ "$1" = --vm ]; then
		vm=1
	elif [ $vm -eq 1 ]; then
		vm_tests+=("$1")
	else
		bins+=("$1")
	fi
	shift
done
if [ ${#bins[@]} -eq 0 ] && [ $vm -eq 0 ]; then
	# build/tests/kmod/ holds the guest tests: they need valor.ko.
	mapfile -t bins < <(find build/tests -path build/tests/kmod -prune -o \
				 -type f -name '*_test' -perm -u+x -print \
				 2>/dev/null | sort)
fi
vm_results=build/vm/results

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
		read -r rest 2>/dev/null <"$stat" || continue
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

# tally NAME OUTPUT RC SECONDS LIMIT: count the TAP in the file OUTPUT of
# one binary that exited with RC (124: killed at its time limit, LIMIT
# seconds), add it to the totals and print its line.
tally()
{
	local name=$1 out=$2 rc=$3 secs=$4 limit=$5
	local line pass=0 fail=0 skip=0 plan=-1 problem=

	while IFS= read -r line; do
		case $line in
		"ok "[0-9]*" # SKIP"*) skip=$((skip + 1)) ;;
		"ok "[0-9]*) pass=$((pass + 1)) ;;
		"not ok "[0-9]*) fail=$((fail + 1)) ;;
		"1..0 # SKIP"*) plan=0 skip=$((skip + 1)) ;;
		1..[0-9]*) plan=${line#1..} plan=${plan%% *} ;;
		esac
	done <"$out"

	if [ $rc -eq 124 ]; then
		problem="timed out after ${limit}s"
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
	     "(${secs}s)"
	total_pass=$((total_pass + pass))
	total_fail=$((total_fail + fail))
	total_skip=$((total_skip + skip))
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
	tally "$name" "$log" "$rc" $((SECONDS - started)) "$timeout_s"
done

# The guest: vmtest.sh shows the console as the guest runs and leaves
# each result in $vm_results/NAME.out (its TAP) and NAME.rc (its exit
# status; 124 when the guest's per-binary timeout killed it), listed in
# order in $vm_results/expected.  It has its own wall-clock limit.
vm_count=0
if [ $vm -eq 1 ]; then
	echo "# run-tests: vm: tools/vmtest/vmtest.sh ${vm_tests[*]}"
	started=$SECONDS
	bash tools/vmtest/vmtest.sh --results "$vm_results" -- "${vm_tests[@]}"
	vm_rc=$?
	echo "# run-tests: vm: vmtest.sh exited with status $vm_rc" \
	     "after $((SECONDS - started))s"
	if [ $vm_rc -eq 4 ] && [ -s "$vm_results/skip" ]; then
		echo "ok - vm # SKIP $(cat "$vm_results/skip")"
		total_skip=$((total_skip + 1))
		vm_count=1
	elif [ ! -s "$vm_results/expected" ]; then
		echo "not ok - vm: vmtest.sh failed before booting the guest" \
		     "(exit $vm_rc)"
		total_fail=$((total_fail + 1))
		failed_bins+=("vm")
		vm_count=1
	else
		ending=$(cat "$vm_results/ending" 2>/dev/null || echo "did not boot")
		[ "$ending" = finished ] ||
			echo "# run-tests: vm: the guest $ending"
		while IFS= read -r entry; do
			vm_count=$((vm_count + 1))
			name=vm/$entry
			out=$vm_results/$entry.out
			if [ -f "$vm_results/$entry.rc" ]; then
				tally "$name" "$out" "$(cat "$vm_results/$entry.rc")" \
				      "$(cat "$vm_results/$entry.seconds" 2>/dev/null || echo 0)" \
				      "$(cat "$vm_results/test-timeout" 2>/dev/null || echo '?')"
			elif [ -f "$out" ]; then
				echo "not ok - $name: output cut off (the guest $ending)"
				total_fail=$((total_fail + 1))
				failed_bins+=("$name")
			else
				echo "not ok - $name: never ran (the guest $ending)"
				total_fail=$((total_fail + 1))
				failed_bins+=("$name")
			fi
		done <"$vm_results/expected"
	fi
fi

if [ ${#bins[@]} -eq 0 ] && [ $vm -eq 0 ]; then
	echo "# run-tests: no test binaries found (build them with make check)"
fi
if [ $vm -eq 1 ]; then
	echo "# run-tests: ${#bins[@]} binaries and $vm_count guest results in ${SECONDS}s"
else
	echo "# run-tests: ${#bins[@]} binaries in ${SECONDS}s"
fi
if [ ${#failed_bins[@]} -gt 0 ]; then
	echo "# run-tests: failures in: ${failed_bins[*]}"
fi
echo "$total_pass passed, $total_fail failed, $total_skip skipped"
[ $total_fail -eq 0 ] && [ $total_pass -gt 0 ]
