/*
 * file/input.h - open an input that may be compressed (input.c).
 *
 * Shared by the recording reader (every command's -i) and the importer,
 * so that both tell gzip, zstd and xz by the same magic and decompress
 * them the same way, as a stream.
 */
#ifndef CTXMON_FILE_INPUT_H
#define CTXMON_FILE_INPUT_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct input;

/*
 * Take over @fd (closed by input__close(), also on failure) and read its
 * first bytes to tell whether it is gzip, zstd or xz.  Returns NULL and
 * sets errno when out of memory or when the first read fails.
 */
struct input *input__fdopen(int fd);

/*
 * Read up to @n decompressed bytes (fewer only at the end of the data).
 * Returns how many, or -errno: -EBADMSG for a corrupt or truncated
 * compressed stream, with the reason in input__error().
 */
ssize_t input__read(struct input *in, void *buf, size_t n);

/* "gzip", "zstd", "xz", or NULL when the input is not compressed. */
const char *input__codec(const struct input *in);

/* Why the last input__read() failed, in one line ("" when it did not). */
const char *input__error(const struct input *in);

/* Whether that failure is the data ending early (a truncated file)
 * rather than damage inside it. */
bool input__cut(const struct input *in);

/* The file descriptor under @in (still owned by @in). */
int input__fd(const struct input *in);

/* Close the input and its fd; accepts NULL. */
void input__close(struct input *in);

/*
 * What a binary file that ctxmon does not read is, told by its magic
 * (@head: its first @len bytes, after any decompression): "an ELF
 * program", "bzip2-compressed: decompress it first", ...; NULL when the
 * magic is not one of those.
 */
const char *input__foreign_kind(const void *head, size_t len);

#endif
