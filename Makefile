# ctxmon - build, test and run.
#
#   make            release build: build/ctxmon, build/libctxmon.a
#   make run        install missing Debian packages, build, run the demo job
#   make test       same set-up, then unit and end-to-end tests (test build:
#                   -Werror, ASan/UBSan, in build/test)
#   make bench      benchmarks (not part of make test), see BENCHMARKS.md
#   make install    PREFIX=/usr/local: library, headers, pkg-config file
#   make format     clang-format the sources

O       ?= build
SAN     ?= 0
PREFIX  ?= /usr/local
CC      ?= gcc

CFLAGS_BASE := -std=c11 -D_GNU_SOURCE -g -O2 -Wall -Wextra -Wshadow \
	-Wno-missing-field-initializers -fno-strict-aliasing -Iinclude -Isrc \
	$(shell pkg-config --cflags libtraceevent 2>/dev/null)
ifeq ($(SAN),1)
CFLAGS_BASE += -Werror -O1 -fno-omit-frame-pointer -fsanitize=address,undefined \
	-fno-sanitize-recover=undefined
LDFLAGS_SAN := -fsanitize=address,undefined
endif
CFLAGS  ?=
CFLAGS  += $(CFLAGS_BASE)
LIBS    := $(shell pkg-config --libs libtraceevent 2>/dev/null || echo -ltraceevent) \
	-lzstd -lm $(shell pkg-config --libs ncursesw 2>/dev/null || echo -lncursesw)
LDFLAGS += $(LDFLAGS_SAN)

LIB_SRCS := $(sort $(wildcard src/*.c src/capture/*.c src/analysis/*.c src/output/*.c src/file/*.c))
CLI_SRCS := $(sort $(wildcard src/cli/*.c))
LIB_OBJS := $(LIB_SRCS:%.c=$(O)/%.o)
CLI_OBJS := $(CLI_SRCS:%.c=$(O)/%.o)
UNIT_SRCS := $(sort $(wildcard tests/unit/test_*.c))
UNIT_BINS := $(UNIT_SRCS:tests/unit/%.c=$(O)/tests/%)
WL_SRCS  := $(sort $(wildcard tests/workloads/*.c))
WL_BINS  := $(WL_SRCS:tests/workloads/%.c=$(O)/workloads/%)

all: $(O)/ctxmon $(O)/libctxmon.a workloads

$(O)/%.o: %.c $(wildcard include/ctxmon/*.h src/*.h src/*/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c -o $@ $<

$(O)/libctxmon.a: $(LIB_OBJS)
	@rm -f $@
	ar rcs $@ $^

$(O)/ctxmon: $(CLI_OBJS) $(O)/libctxmon.a
	$(CC) $(LDFLAGS) -o $@ $(CLI_OBJS) $(O)/libctxmon.a $(LIBS)

$(O)/tests/%: tests/unit/%.c $(O)/libctxmon.a $(wildcard tests/unit/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Itests/unit $(LDFLAGS) -o $@ $< $(O)/libctxmon.a $(LIBS) -lcmocka

$(O)/workloads/%: tests/workloads/%.c
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -D_GNU_SOURCE -O2 -g -Wall -Wextra -Werror -o $@ $< -pthread

workloads: $(WL_BINS)
unit-bins: $(UNIT_BINS)

deps:
	@scripts/setup.sh

run: deps
	@$(MAKE) --no-print-directory all
	@scripts/run-demo.sh $(O)

test: deps
	@$(MAKE) --no-print-directory O=build/test SAN=1 all unit-bins
	@$(MAKE) --no-print-directory all
	@tests/run.sh build/test

bench: deps
	@$(MAKE) --no-print-directory all
	@bench/run.sh $(O)

install: $(O)/libctxmon.a
	install -d $(DESTDIR)$(PREFIX)/include/ctxmon $(DESTDIR)$(PREFIX)/lib/pkgconfig
	install -m 644 include/ctxmon/*.h $(DESTDIR)$(PREFIX)/include/ctxmon/
	install -m 644 $(O)/libctxmon.a $(DESTDIR)$(PREFIX)/lib/
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@VERSION@|0.1.0|' ctxmon.pc.in \
		> $(DESTDIR)$(PREFIX)/lib/pkgconfig/ctxmon.pc
	@if [ -f $(O)/ctxmon ]; then install -d $(DESTDIR)$(PREFIX)/bin && \
		install -m 755 $(O)/ctxmon $(DESTDIR)$(PREFIX)/bin/; fi

format:
	clang-format -i $(LIB_SRCS) $(CLI_SRCS) include/ctxmon/*.h src/*.h

clean:
	rm -rf build

.PHONY: all deps run test bench install format clean workloads unit-bins

# ---- BPF ----
# The bpf backend (src/capture/bpf.c) carries the programs of
# src/capture/bpf/ctxsw.bpf.c as a bpftool skeleton; the object and the
# skeleton are generated under $(O)/bpf, never in src/.
#   make vmlinux   regenerate src/capture/bpf/vmlinux.h from this kernel's
#                  BTF (CO-RE: any BTF-enabled kernel will do)
BPF_CLANG  ?= clang
BPFTOOL    ?= $(shell command -v bpftool 2>/dev/null || echo /usr/sbin/bpftool)
LLVM_STRIP ?= llvm-strip
BPF_ARCH   := $(shell uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/' \
	-e 's/ppc64le/powerpc/' -e 's/s390x/s390/' -e 's/riscv64/riscv/')
BPF_SRC    := src/capture/bpf
BPF_OUT    := $(O)/bpf
BPF_CFLAGS := -g -O2 -target bpf -mcpu=v3 -D__TARGET_ARCH_$(BPF_ARCH) \
	-I$(BPF_SRC) -Wall -Werror

$(BPF_OUT)/ctxsw.bpf.o: $(BPF_SRC)/ctxsw.bpf.c $(BPF_SRC)/ctxsw.h $(BPF_SRC)/vmlinux.h
	@mkdir -p $(dir $@)
	$(BPF_CLANG) $(BPF_CFLAGS) -c -o $@ $<
	$(LLVM_STRIP) -g $@

$(BPF_OUT)/ctxsw.skel.h: $(BPF_OUT)/ctxsw.bpf.o
	$(BPFTOOL) gen skeleton $< name ctxsw_bpf > $@.tmp
	mv $@.tmp $@

$(O)/src/capture/bpf.o: $(BPF_OUT)/ctxsw.skel.h $(BPF_SRC)/ctxsw.h $(BPF_SRC)/bpf_backend.h
$(O)/src/capture/bpf.o: CFLAGS += -I$(BPF_OUT) -I$(BPF_SRC)

LIBS += $(shell pkg-config --libs libbpf 2>/dev/null || echo -lbpf) -lelf -lz

# Helper of the tests/e2e/test_bpf_*.sh scripts (not a unit test: it needs
# root, so it lives outside $(O)/tests).
$(O)/e2e/bpf_check: tests/e2e/bpf_check.c $(O)/libctxmon.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -I$(BPF_SRC) $(LDFLAGS) -o $@ $< $(O)/libctxmon.a $(LIBS)

unit-bins: $(O)/e2e/bpf_check
$(O)/tests/test_bpf: CFLAGS += -I$(BPF_SRC)

vmlinux:
	$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > $(BPF_SRC)/vmlinux.h.tmp
	mv $(BPF_SRC)/vmlinux.h.tmp $(BPF_SRC)/vmlinux.h

.PHONY: vmlinux
# ---- end BPF ----

# ---- importers (issue 13) ----
# trace.dat is read through libtracecmd (Debian libtracecmd-dev); without
# it `ctxmon import` says so for a trace.dat and reads everything else.
ifneq ($(shell pkg-config --exists libtracecmd 2>/dev/null && echo y),)
$(O)/src/file/import_tracedat.o: CFLAGS += -DHAVE_LIBTRACECMD \
	$(shell pkg-config --cflags libtracecmd)
LIBS += $(shell pkg-config --libs libtracecmd)
endif
# ---- end importers ----
