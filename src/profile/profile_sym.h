/*
 * profile_sym.h - symbols of the profile's stacks (profile_sym.c): the
 * kernel's from /proc/kallsyms, user code's through libdw from copies of
 * the processes' /proc/PID/maps taken while they lived.
 */
#ifndef CTXMON_PROFILE_SYM_H
#define CTXMON_PROFILE_SYM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct psym;

struct psym *psym__new(void);
void psym__free(struct psym *s);
/* Copy /proc/@tgid/maps (replacing an older copy): 0, or 1 when the
 * mappings are those of the older copy; -errno when it is gone or
 * unreadable. */
int psym__snapshot(struct psym *s, pid_t tgid);
/* The same unless the copy was taken at or after @since_ns
 * (CLOCK_MONOTONIC, the clock of bpf_ktime_get_ns): -EAGAIN then, as a
 * new copy would show no mapping the old one lacks.  For a stack taken
 * at @since_ns with an address no mapping holds: the copy taken at exec,
 * before the dynamic loader mapped the libraries, or before a dlopen. */
int psym__refresh(struct psym *s, pid_t tgid, uint64_t since_ns);
/* Give @tgid a copy of @parent's mappings (a fork that did not exec);
 * -ENOENT when @parent has none. */
int psym__inherit(struct psym *s, pid_t tgid, pid_t parent);
/* Whether a copy of @tgid's mappings exists. */
bool psym__has(const struct psym *s, pid_t tgid);
/* The kernel symbol of @addr into @buf, -ENOENT if none. */
int psym__kernel(struct psym *s, uint64_t addr, char *buf, size_t len);
/* The user symbol of @addr in @tgid into @buf ("func", or
 * "[file+0xoff]" when the file has no symbol there); -ENOENT when no
 * mapping holds it.  @ret: @addr is a return address (looked up at
 * addr - 1, inside the call). */
int psym__user(struct psym *s, pid_t tgid, uint64_t addr, bool ret,
	       char *buf, size_t len);

/* A thread's user registers at the copy (x86_64). */
struct psym_regs {
	uint64_t ip, sp, bp, bx, r12, r13, r14, r15;
};

/*
 * Unwind a copy of @tgid's user stack (@len bytes from @r->sp) with the
 * CFI (.eh_frame, .debug_frame) of its mapped files, as libdw does for a
 * live process: into @pcs (leaf first, at most @max) the lookup addresses
 * (return addresses less one), their number into *@n.  *@truncated: the
 * walk needed memory outside the copy (deeper than the copy reached).
 * 0, or -ENOENT when no mappings of @tgid are known.
 */
int psym__unwind(struct psym *s, pid_t tgid, pid_t tid,
		 const struct psym_regs *r, const void *stack, size_t len,
		 uint64_t *pcs, size_t max, size_t *n, bool *truncated);

#endif
