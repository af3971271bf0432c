/*
 * fuzz_reader.c - libFuzzer target: any bytes given to the recording
 * reader.  Whatever the input, the reader must not crash, hang or grow
 * without bound (ASan and libFuzzer's -rss_limit_mb watch that), every
 * event it delivers must format as text, and damaged input must come with
 * a message.  Each input is read on one thread and with helper threads,
 * which must agree record for record (read_twice.h).
 */
#include "read_twice.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	read_twice(data, size);
	return 0;
}
