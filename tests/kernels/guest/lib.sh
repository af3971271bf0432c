# guest/lib.sh - helpers of the guest scripts (sourced; POSIX sh, busybox).
#
# The guests have no python: ctxmon's --json output (one line) is read with
# sed and grep.  A guest script prints one verdict line per test (see
# tests/kernels/run.sh): use pass/fail/skip below; anything else it prints
# is detail.

: "${CTXMON:?}" "${WL:?}"

pass() { echo "PASS $1"; }
fail() { echo "FAIL $1: $2"; }
skip() { echo "SKIP $1: $2"; }

# jfirst FILE KEY: the first value of "KEY": in FILE (a number, true/false,
# or a string without its quotes).
jfirst() {
	grep -o "\"$2\":\"\\{0,1\\}[^,\"}]*" "$1" | head -n 1 | sed 's/^[^:]*:"\{0,1\}//'
}

# jrow FILE KIND ID KEY: KEY of the row of KIND ("thread": "tid", or
# "process": "pid") whose id is ID; empty if there is none.
jrow() {
	case $2 in
	thread) sect='s/.*"threads":\[//; s/\],"processes":.*//'; idk=tid ;;
	*) sect='s/.*"processes":\[//; s/\],"cpus":.*//'; idk=pid ;;
	esac
	sed -e "$sect" -e "s/^.*{\"$idk\":$3,/,/" -e "t ok" -e d -e ":ok" \
		-e "s/{\"$idk\":.*//" "$1" |
		grep -o "[{,]\"$4\":[^,}]*" | head -n 1 | sed 's/^.*://'
}

# kcount_get ERRFILE KEY: a value from kcount's line
# "kcount: pid=P nvcsw=V nivcsw=I status=S cpu_us=C".
kcount_get() {
	sed -n "s/^kcount:.* $2=\\([0-9-]*\\).*/\\1/p" "$1" | tail -n 1
}

# show FILE: FILE's lines as detail (indented).
show() { sed 's/^/  | /' "$1"; }

# jkernel FILE KEY: KEY of the "kernel" object (stat's comparison with the
# command's getrusage).
jkernel() {
	grep -o '"kernel":{[^}]*}' "$1" | grep -o "[{,]\"$2\":[^,}]*" | head -n 1 | sed 's/^.*://'
}

# long_or SHORT LONG: SHORT in make test, LONG in make check (CTXMON_LONG=1,
# which tests/kernels/run.sh passes to the guest).
long_or() {
	if [ "${CTXMON_LONG:-0}" = 1 ]; then echo "$2"; else echo "$1"; fi
}
