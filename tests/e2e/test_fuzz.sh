#!/bin/bash
# A short, bounded libFuzzer run of the recording reader and the text
# importer (tests/fuzz/run.sh): any crash, leak, hang or runaway allocation
# found on the seed corpora plus FUZZ_TIME seconds of mutation fails.
cd "$(dirname "$0")/../.." || exit 1
out=$(FUZZ_TIME=${FUZZ_TIME:-15} tests/fuzz/run.sh build/fuzz 2>&1)
rc=$?
echo "$out" | tail -n 20
if echo "$out" | grep -q '^SKIP:'; then
	echo "$out" | grep '^SKIP:' | tail -n 1
	exit 77
fi
exit $rc
