#!/bin/bash
# The library surface, as installed (issue 11):
#  1. make install DESTDIR=D PREFIX=/usr puts the tool, libctxmon.so with
#     its soname link, libctxmon.a, the headers, the pkg-config file, one
#     man page per command and the bash completion in place; the tool is
#     linked to the shared library.
#  2. The shared library exports only ctxmon_* functions, and every
#     function the public headers declare; the static library defines no
#     other global symbol.
#  3. Each command's man page, rendered by man -l, names every option its
#     --help lists, and has EXIT STATUS and ENVIRONMENT.
#  4. The completion, sourced in bash: `ctxmon st<TAB>` gives stat,
#     `ctxmon stat --ba<TAB>` gives --backend, and after --backend the
#     backend names, each of which stat accepts.
#  5. The sources: no file of src/cli includes internal.h, and no backend
#     name appears in src/cli, src/output, src/profile or src/metrics.
#  6. Installed under a prefix the loader does not search, the tool runs
#     (its run path is $ORIGIN/../lib), and the examples link against
#     libctxmon.a with `pkg-config --static --libs ctxmon`.
. "$(dirname "$0")/lib.sh"

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
D=$T/d
for tool in nm readelf man; do
	command -v $tool >/dev/null || skip "no $tool (Debian: binutils, man-db)"
done

# make runs in the source tree, whose build/ a test run beside this one
# (test_install, test_example) may be making too: one at a time (flock on
# the Makefile, which every checkout has)
if ! flock "$ROOT/Makefile" make -s -C "$ROOT" install DESTDIR="$D" PREFIX=/usr >"$T/install.log" 2>&1; then
	cat "$T/install.log" >&2
	fail "make install DESTDIR=$D PREFIX=/usr failed"
	finish
fi

# --- 1. files ---------------------------------------------------------------
for f in bin/ctxmon lib/libctxmon.a lib/pkgconfig/ctxmon.pc \
	include/ctxmon/ctxmon.h include/ctxmon/rows.h \
	share/man/man1/ctxmon.1 share/bash-completion/completions/ctxmon; do
	[ -f "$D/usr/$f" ] || fail "not installed: /usr/$f"
done
SO=$(readelf -d "$D/usr/lib/libctxmon.so" 2>/dev/null |
	sed -n 's/.*Library soname: \[\(.*\)\]/\1/p')
echo "soname: $SO"
[ -n "$SO" ] || fail "libctxmon.so has no soname"
[ -L "$D/usr/lib/$SO" ] && [ -f "$D/usr/lib/$SO" ] ||
	fail "no $SO link to the library"
[ -L "$D/usr/lib/libctxmon.so" ] || fail "libctxmon.so is not a link"
# The tool is one more user of the shared library
readelf -d "$D/usr/bin/ctxmon" | grep -q "NEEDED.*\\[$SO\\]" ||
	fail "the installed ctxmon does not need $SO"
grep -q '^libdir=/usr/lib' "$D/usr/lib/pkgconfig/ctxmon.pc" ||
	fail "ctxmon.pc: libdir is not /usr/lib"
cmds=$("$CTXMON" --help | awk '/^commands:/ { on = 1; next } on && NF == 0 { exit } on { print $1 }')
echo "commands: $(echo $cmds)"
[ -n "$cmds" ] || fail "ctxmon --help lists no command"
for c in $cmds; do
	[ -f "$D/usr/share/man/man1/ctxmon-$c.1" ] || fail "no man page ctxmon-$c.1"
done

# --- 2. exports -------------------------------------------------------------
nm -D --defined-only "$D/usr/lib/libctxmon.so" | awk '$2 ~ /^[TDBRVW]$/ { print $3 }' |
	sort >"$T/exported"
echo "exported: $(wc -l <"$T/exported") symbols"
grep -v '^ctxmon_' "$T/exported" >"$T/leaked"
[ -s "$T/leaked" ] && fail "exported but not ctxmon_*: $(head -n 5 "$T/leaked" | tr '\n' ' ')"
# every function the headers declare, from the headers' own text
sed -n 's/.*[ *]\(ctxmon_[a-z0-9_]*\)(.*/\1/p' "$D"/usr/include/ctxmon/*.h |
	grep -v '_fn$' | sort -u >"$T/declared"
comm -23 "$T/declared" "$T/exported" >"$T/missing"
echo "declared: $(wc -l <"$T/declared"), of them not exported: $(wc -l <"$T/missing")"
# static inline helpers of the headers are not in the library
while read -r f; do
	grep -q "static inline.*$f(" "$D"/usr/include/ctxmon/*.h ||
		fail "declared in a header, not exported: $f"
done <"$T/missing"
nm --defined-only -g "$D/usr/lib/libctxmon.a" 2>/dev/null |
	awk 'NF == 3 && $2 ~ /^[TDBR]$/ { print $3 }' | grep -v '^ctxmon_' >"$T/aleaked"
[ -s "$T/aleaked" ] &&
	fail "libctxmon.a defines global non-ctxmon symbols: $(head -n 5 "$T/aleaked" | tr '\n' ' ')"

# --- 3. man pages name every option of --help -------------------------------
for c in $cmds; do
	MANWIDTH=200 man -l "$D/usr/share/man/man1/ctxmon-$c.1" 2>/dev/null |
		col -b >"$T/man.$c"
	[ -s "$T/man.$c" ] || { fail "man -l ctxmon-$c.1 rendered nothing"; continue; }
	grep -q EXAMPLES "$T/man.$c" || fail "ctxmon-$c.1 has no EXAMPLES"
	for sec in "EXIT STATUS" ENVIRONMENT; do
		grep -q "^$sec" "$T/man.$c" || fail "ctxmon-$c.1 has no $sec"
	done
	grep -q CTXMON_READ_THREADS "$T/man.$c" || fail "ctxmon-$c.1 does not name CTXMON_READ_THREADS"
	n=0
	for o in $("$CTXMON" "$c" --help | grep -oE '^ +(-[a-zA-Z], )?--[a-z][a-z-]*' |
		grep -oE -- '--[a-z][a-z-]*'); do
		n=$((n + 1))
		grep -qe "$o" "$T/man.$c" || fail "ctxmon-$c.1 does not name $o"
	done
	echo "ctxmon-$c.1: $n options of --help, all named"
	[ "$n" -gt 0 ] || fail "ctxmon $c --help lists no option"
done

# --- 4. completion ----------------------------------------------------------
cat >"$T/comp.sh" <<EOF
. "$D/usr/share/bash-completion/completions/ctxmon"
complete -p ctxmon || exit 3
t() { COMP_WORDS=("\$@"); COMP_CWORD=\$((\${#COMP_WORDS[@]} - 1)); COMPREPLY=(); _ctxmon; echo "\${COMPREPLY[*]}"; }
echo "st=\$(t ctxmon st)"
echo "ba=\$(t ctxmon stat --ba)"
echo "be=\$(t ctxmon stat --backend '')"
for c in $(echo $cmds); do echo "opts \$c=\$(t ctxmon \$c --)"; done
echo "fmt=\$(t ctxmon export --format '')"
echo "sort=\$(t ctxmon diff --sort '')"
echo "hbe=\$(t ctxmon hist --backend '')"
echo "met=\$(t ctxmon experiment --metrics '')"
EOF
bash "$T/comp.sh" >"$T/comp.out" 2>&1 || fail "sourcing the completion failed: $(cat "$T/comp.out")"
sed 's/^/  | /' "$T/comp.out"
grep -qx 'st=stat' "$T/comp.out" || fail "ctxmon st<TAB> does not complete to stat"
grep -qx 'ba=--backend' "$T/comp.out" || fail "ctxmon stat --ba<TAB> does not complete to --backend"
backends=$(sed -n 's/^be=//p' "$T/comp.out")
[ "$(echo $backends | wc -w)" -ge 3 ] || fail "too few backend names after --backend: $backends"
for b in $backends; do
	# stat must know the name: any error but "unknown backend"
	"$CTXMON" stat --backend "$b" --duration 0.1 -a -o /dev/null >/dev/null 2>"$T/be.err"
	grep -q 'unknown backend' "$T/be.err" && fail "completion offers '$b', stat does not know it"
done

# Every command completes exactly the long options its --help lists
for c in $cmds; do
	want=$("$CTXMON" "$c" --help | grep -o -- '^  \(-[a-zA-Z], \|    \)--[a-z][a-z0-9-]*' |
		sed 's/.*--/--/' | sort -u | tr '\n' ' ')
	got=$(sed -n "s/^opts $c=//p" "$T/comp.out" | tr ' ' '\n' | sed '/^$/d' | sort -u | tr '\n' ' ')
	[ -n "$want" ] && [ "$want" = "$got" ] ||
		fail "ctxmon $c --<TAB> gives '$got', --help lists '$want'"
done
# values complete after the options that take a closed set, and the
# command accepts each of them
fmts=$(sed -n 's/^fmt=//p' "$T/comp.out")
[ "$(echo $fmts | wc -w)" = 3 ] || fail "export --format completes '$fmts'"
for f in $fmts; do
	"$CTXMON" export --format "$f" -i /nonexistent -o "$T/x" >/dev/null 2>"$T/f.err"
	grep -q 'unknown format' "$T/f.err" && fail "completion offers format '$f', export does not know it"
done
sorts=$(sed -n 's/^sort=//p' "$T/comp.out")
[ "$(echo $sorts | wc -w)" -ge 5 ] || fail "diff --sort completes '$sorts'"
for f in $sorts; do
	"$CTXMON" diff --sort "$f" /nonexistent /nonexistent >/dev/null 2>"$T/s.err"
	grep -q 'unknown field' "$T/s.err" && fail "completion offers field '$f', diff does not know it"
done
sed -n 's/^hbe=//p' "$T/comp.out" | grep -qw kernel || fail "hist --backend does not complete kernel"
mets=$(sed -n 's/^met=//p' "$T/comp.out")
[ "$(echo $mets | wc -w)" -ge 5 ] || fail "experiment --metrics completes '$mets'"
for m in $mets; do
	# --regress names two metrics: a name it does not know is refused
	"$CTXMON" experiment -r 1 --regress "$m~$m" >/dev/null 2>"$T/m.err"
	grep -q "bad --regress" "$T/m.err" && fail "completion offers metric '$m', experiment does not know it"
done

# --- 6. a prefix the loader does not search ---------------------------------
# The installed tool finds its library through its run path
# ($ORIGIN/../lib), with no ldconfig and no LD_LIBRARY_PATH; the examples
# link against the installed libctxmon.a with what `pkg-config --static`
# says, and run without libctxmon.so.
P=$T/opt/ctxmon
if flock "$ROOT/Makefile" make -s -C "$ROOT" install PREFIX="$P" >"$T/install2.log" 2>&1; then
	out=$(env -i "$P/bin/ctxmon" --version 2>&1)
	echo "installed under $P: $out; RUNPATH $(readelf -d "$P/bin/ctxmon" | sed -n 's/.*RUNPATH.*\[\(.*\)\]/\1/p')"
	[ "$out" = "ctxmon $("$CTXMON" --version | cut -d' ' -f2)" ] ||
		fail "the tool installed under $P does not run: $out"
	env -i "$P/bin/ctxmon" import -q "$ROOT/tests/data/traces/pipe-6.18-sched.txt" \
		-o "$T/i.ctxm" 2>"$T/r.err" &&
		env -i "$P/bin/ctxmon" report -i "$T/i.ctxm" >/dev/null 2>>"$T/r.err" ||
		fail "the installed tool cannot import and report: $(cat "$T/r.err")"
	grep -q "^Libs.private:.*-ldw" "$P/lib/pkgconfig/ctxmon.pc" &&
		grep -q "^Libs.private:.*-lprotobuf-c" "$P/lib/pkgconfig/ctxmon.pc" ||
		fail "ctxmon.pc's Libs.private lacks libraries the library links: $(grep Libs.private "$P/lib/pkgconfig/ctxmon.pc")"
	cp -r "$ROOT/examples" "$T/ex"
	if make -C "$T/ex" PREFIX="$P" STATIC=1 CFLAGS="-O2 -Werror" >"$T/exs.log" 2>&1; then
		for x in stream count; do
			readelf -d "$T/ex/$x" | grep -q 'NEEDED.*libctxmon' &&
				fail "examples/$x built with STATIC=1 needs libctxmon.so"
		done
		echo "examples linked against $P/lib/libctxmon.a: $(ls "$T/ex/stream" "$T/ex/count" | xargs -n1 basename | tr '\n' ' ')"
	else
		sed 's/^/  | /' "$T/exs.log" | tail -n 20
		fail "the examples do not link against libctxmon.a with pkg-config --static"
	fi
else
	sed 's/^/  | /' "$T/install2.log" | tail -n 20
	fail "make install PREFIX=$P failed"
fi

# --- 5. sources -------------------------------------------------------------
# No file of the tool includes the library's internal header.
inc=$(grep -l 'internal\.h' "$ROOT"/src/cli/* 2>/dev/null)
[ -z "$inc" ] || fail "src/cli files include internal.h: $inc"
for b in $backends; do
	[ "$b" = auto ] && continue
	# (taskstats labels its rows "task" or "proc": not the backend)
	hits=$(grep -rn "\"$b\"" "$ROOT/src/cli" "$ROOT/src/output" \
		"$ROOT/src/profile" "$ROOT/src/metrics" 2>/dev/null |
		grep -v 'process ? "proc" : "task"')
	[ -z "$hits" ] || fail "backend name \"$b\" in the tool's code: $hits"
done
finish
