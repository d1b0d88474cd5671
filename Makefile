# SPDX-License-Identifier: GPL-2.0
#
# Valor for Linux.  Non-recursive; all output goes to build/.  The one
# exception is the kernel module: Kbuild (top-level Kbuild, kmod/Kbuild)
# builds it beside its sources and `make kmod` copies it to build/kmod/.
# `make help` lists the targets.  Quiet by default; V=1 shows the commands.

BUILD := build

CC ?= cc
AR ?= ar
CFLAGS ?= -O2 -g
LDFLAGS ?=

WARNINGS := -Wall -Wextra -Werror
BASE_CFLAGS := -std=gnu11 $(WARNINGS) -fno-strict-aliasing -D_GNU_SOURCE \
	       -pthread
BASE_CPPFLAGS := -Iuapi -Ilibvalor/include
DEPFLAGS = -MMD -MP

ALL_CFLAGS = $(BASE_CPPFLAGS) $(BASE_CFLAGS) $(DEPFLAGS) $(CPPFLAGS) $(CFLAGS)
# The kselftest headers are included as system headers: the 6.1 harness
# macros do not build cleanly with -Wextra (unused parameters, signed
# against unsigned comparisons), and our own test code should.
TEST_CPPFLAGS := -isystem $(BUILD)/kselftest -Itests/lib

ifeq ($(V),1)
Q :=
quiet = @:
else
Q := @
quiet = @printf '  %-7s %s\n'
endif

# Packages first (once, again when the list changes), then the harness.
DEPS_STAMP := $(BUILD)/.deps-stamp
KSELFTEST_HDR := $(BUILD)/kselftest/kselftest_harness.h

# ---- sources ------------------------------------------------------------

LIB_SRCS := $(sort $(wildcard libvalor/core/*.c))
LIB_OBJS := $(LIB_SRCS:%.c=$(BUILD)/obj/%.o)
LIB_PIC_OBJS := $(LIB_SRCS:%.c=$(BUILD)/obj-pic/%.o)
LIB_A := $(BUILD)/lib/libvalor.a
LIB_SONAME := libvalor.so.0
LIB_SO_REAL := $(BUILD)/lib/$(LIB_SONAME)
LIB_SO := $(BUILD)/lib/libvalor.so
LIB_MAP := libvalor/libvalor.map

# The in-process runtime: the engine and libvalor/runtime/ in one archive
# that `valor cc` links into every program (--whole-archive), compiled
# position-independent and never instrumented (own object directory).
# RT_SRCS is a wildcard so the archive builds from whatever parts exist.
RT_SRCS := $(sort $(wildcard libvalor/core/*.c libvalor/runtime/*.c))
RT_OBJS := $(RT_SRCS:%.c=$(BUILD)/obj-rt/%.o)
# The sanitizer system call hooks syscall_hooks.c does not define, as
# empty functions generated from the installed clang's header
# (tools/gen-syscall-hooks.py): a program that calls any of them links.
SYSCALL_HOOKS_HDR := $(shell $(or $(PASS_CLANG),clang-14) -print-resource-dir \
	2>/dev/null)/include/sanitizer/linux_syscall_hooks.h
SYSCALL_HOOKS_GEN := $(BUILD)/gen/syscall_hooks_rest.c
RT_OBJS += $(SYSCALL_HOOKS_GEN:%.c=$(BUILD)/obj-rt/%.o)
RT_RUNTIME_OBJS := $(filter $(BUILD)/obj-rt/libvalor/runtime/% \
	$(BUILD)/obj-rt/$(BUILD)/gen/%,$(RT_OBJS))
RT_OPTIONS_DEF := libvalor/runtime/options.def
RT_A := $(BUILD)/lib/libvalor-rt.a
# Symbols the program exports so shared libraries (libstdc++, ...) reach
# the runtime's interceptors and entry points: see the rule below.
RT_DYNLIST := $(BUILD)/lib/libvalor-rt.dynlist
# For a gcc command that compiles and links at once: -fsanitize=thread
# for cc1 only, so that the driver does not link libtsan.  (A specs file
# has no comment syntax; this is its documentation.)
RT_GCC_SPECS := $(BUILD)/lib/valor-gcc.specs
RT_FILES := $(if $(RT_SRCS),$(RT_A) $(RT_DYNLIST) $(RT_GCC_SPECS))
# Last on the command line: whatever CFLAGS says, the runtime is
# optimized, has frame pointers for its own stacks and is not sanitized.
RT_CFLAGS := -fPIC -O2 -g -fno-omit-frame-pointer -fno-sanitize=all
RT_CPPFLAGS := -Ilibvalor/runtime -Ilibvalor/core
# Except the access entry points, whose check needs no frame, on x86-64
# (libvalor/runtime/tsan_access.h; Documentation/runtime-abi.md).
# The pass's entry points (pass_access.c) are built the same way.
ifeq ($(shell uname -m),x86_64)
$(BUILD)/obj-rt/libvalor/runtime/tsan_access.o \
$(BUILD)/obj-rt/libvalor/runtime/pass_access.o: RT_CFLAGS += -fomit-frame-pointer -ffixed-bp
endif

# The LLVM pass plugin for clang (libvalor/instrument/;
# Documentation/instrumentation-pass.md): the pass in C++, and the
# runtime's access check compiled to bitcode with the runtime's headers
# and embedded in the plugin.  Built with Debian's clang 14 and
# llvm-14-dev whatever CC is: the plugin runs inside that clang.
LLVM_CONFIG ?= llvm-config-14
PASS_CLANG ?= clang-14
PASS_CXX ?= clang++-14
PASS_SO := $(BUILD)/lib/valor-pass.so
PASS_CHECK_BC := $(BUILD)/obj-pass/valor-check.bc
PASS_OBJS := $(BUILD)/obj-pass/valor_pass.o $(BUILD)/obj-pass/check_blob.o
# LLVM's headers as system headers: they do not build cleanly with -Wextra.
PASS_CXXFLAGS = -isystem $(shell $(LLVM_CONFIG) --includedir) \
	$(filter-out -I%,$(shell $(LLVM_CONFIG) --cxxflags)) \
	-Ilibvalor/runtime -fPIC -O2 -g $(WARNINGS) $(DEPFLAGS)
# The check is built as the program's code is: position-independent for
# a PIE, frame pointers, nothing sanitized.
PASS_CHECK_CFLAGS := -std=gnu11 $(WARNINGS) -fno-strict-aliasing \
	-D_GNU_SOURCE -O2 -fPIE -fno-omit-frame-pointer -fno-sanitize=all \
	$(BASE_CPPFLAGS) $(RT_CPPFLAGS) $(DEPFLAGS)
# valor cc --compiler=clang loads it: it is part of the runtime.
RT_FILES += $(PASS_SO)

VALOR_SRCS := $(sort $(wildcard tools/valor/*.c))
VALOR_OBJS := $(VALOR_SRCS:%.c=$(BUILD)/obj/%.o)
VALOR_BIN := $(if $(VALOR_SRCS),$(BUILD)/bin/valor)

TESTLIB_SRCS := $(sort $(wildcard tests/lib/*.c))
TESTLIB_OBJS := $(TESTLIB_SRCS:%.c=$(BUILD)/obj/%.o)
# tests/kmod/ holds the guest tests: they run in the QEMU guest, not here.
TEST_SRCS := $(filter-out tests/kmod/%,\
	       $(sort $(shell find tests -name '*_test.c' -type f 2>/dev/null)))
TEST_OBJS := $(TEST_SRCS:%.c=$(BUILD)/obj/%.o)
TEST_BINS := $(TEST_SRCS:%.c=$(BUILD)/%)
TEST_LDLIBS := -lpthread -lm

# Our C (and the pass's C++) sources and headers, for clang-format.
# Not Kbuild's generated *.mod.c.
FORMAT_FILES = $(filter-out %.mod.c,$(patsubst ./%,%,$(shell find . \
		 -path ./build -prune -o -path ./.git -prune -o -type f \
		 \( -name '*.c' -o -name '*.h' -o -name '*.cpp' \) -print | sort)))

# The benchmark harness (tools/bench/README.md).  The floor is the stub
# __tsan_* runtime every instrumented variant is measured against: never
# instrumented, -O2 whatever CFLAGS says, position-independent like the
# real runtime, -mcx16 for an inline 128-bit compare-and-swap.  It is an
# archive because the workloads link it statically, as valor cc links the
# real runtime.
BENCH_FLOOR_OBJ := $(BUILD)/bench/obj/floor.o
BENCH_FLOOR_A := $(BUILD)/bench/lib/libvalor-floor.a
BENCH_FLOOR_CFLAGS := -O2 -fPIC -mcx16 -fno-sanitize=all
# The helper that runs each measured program: static, so that the peak
# RSS a program inherits from it across exec is a few hundred KB.
BENCH_SPAWN := $(BUILD)/bench/lib/bench-spawn
BENCH_FILES := $(BENCH_FLOOR_A) $(BENCH_SPAWN)
PYTHON ?= python3
BENCH_ARGS ?=

# ---- the kernel module and the guest ------------------------------------

# Kbuild output must match the guest kernel, so the default is the headers
# tree of the linux-headers-amd64 the guest kernel is derived from
# (tools/fetch-guest-kernel.sh), never `uname -r`.  Deferred (?= is
# recursive): the headers may only be installed by this run's deps stamp.
KDIR ?= $(or $(wildcard /usr/src/$(shell dpkg-query -W -f='$${Depends}' \
	  linux-headers-amd64 2>/dev/null | \
	  sed -n 's/^\(linux-headers-[^ ,]*-amd64\).*/\1/p')),$(lastword \
	  $(sort $(wildcard /usr/src/linux-headers-*-amd64))))
KMOD_KO := $(BUILD)/kmod/valor.ko
# A command-line CC= or CFLAGS= is for our user-space code: keep it away
# from Kbuild, which compiles with Debian's kernel compiler (gcc-12).
# Our V=1 is Kbuild's V=1.  Module BTF needs the kernel's vmlinux, which
# headers packages do not ship: skip it rather than warn on every build.
KBUILD_ARGS = -C $(KDIR) M=$(CURDIR) $(if $(filter 1,$(V)),V=1) \
	      CONFIG_DEBUG_INFO_BTF_MODULES=
MAKEOVERRIDES :=

# Guest tests: tests/kmod/*_test.c, each linked statically (the guest has
# no C library) with tests/kmod/lib/*.c, and tests/kmod/progs/*.c, the
# static programs those tests run as targets.
KTEST_SRCS := $(sort $(wildcard tests/kmod/*_test.c))
KTEST_BINS := $(KTEST_SRCS:%.c=$(BUILD)/%)
KTESTLIB_SRCS := $(sort $(wildcard tests/kmod/lib/*.c))
KTESTLIB_OBJS := $(KTESTLIB_SRCS:%.c=$(BUILD)/obj/%.o)
KPROG_SRCS := $(sort $(wildcard tests/kmod/progs/*.c))
KPROG_BINS := $(KPROG_SRCS:%.c=$(BUILD)/%)
KTEST_OBJS := $(KTEST_SRCS:%.c=$(BUILD)/obj/%.o) $(KTESTLIB_OBJS) \
	      $(KPROG_SRCS:%.c=$(BUILD)/obj/%.o)
KTEST_CPPFLAGS := -isystem $(BUILD)/kselftest -Itests/kmod/lib

# The guest kernel, redone when the headers package changes.
VM_KERNEL := $(BUILD)/vm/kernel.id
HEADERS_LIST := $(wildcard /var/lib/dpkg/info/linux-headers-amd64.list)

CHECKPATCH := $(BUILD)/checkpatch/checkpatch.pl
# Not Kbuild's generated valor.mod.c.
CHECKPATCH_FILES = $(sort $(filter-out %.mod.c,$(wildcard kmod/*.c kmod/*.h)))

EXAMPLE_PROGRAM := tools/examples/bank.c
# valor's documented exit status for "conflicts found".
VALOR_EXIT_CONFLICTS := 66

# ---- targets ------------------------------------------------------------

.PHONY: all lib runtime tests check check-long example deps format \
	format-check clean help kmod guest-tests vmkernel vmtest checkpatch \
	bench bench-quick
.DEFAULT_GOAL := all

all: lib runtime $(VALOR_BIN)

lib: $(LIB_A) $(LIB_SO)

runtime: $(RT_FILES)

# Tests build programs with build/bin/valor cc, which needs the runtime;
# the harness's smoke test (tests/tools/bench_smoke_test.c) needs its files.
tests: $(TEST_BINS) $(RT_FILES) $(VALOR_BIN) $(BENCH_FILES)

# The guest run counts into the same closing line as the host tests.
check: all tests kmod guest-tests vmkernel
	$(Q)bash tools/run-tests.sh $(TEST_BINS) --vm $(KTEST_BINS)

# ---- the kernel module and the guest ------------------------------------

# Kbuild knows what is out of date; this rule always asks it, then copies
# the module only when it changed.
kmod: | $(DEPS_STAMP)
	$(Q)if [ ! -f "$(KDIR)/Makefile" ]; then \
		echo "kmod: no kernel headers at KDIR='$(KDIR)';" \
		     "run make deps (installs linux-headers-amd64) or set KDIR=" >&2; \
		exit 1; \
	fi
	$(Q)$(MAKE) --no-print-directory $(KBUILD_ARGS) modules
	$(Q)mkdir -p $(dir $(KMOD_KO))
	$(Q)cmp -s kmod/valor.ko $(KMOD_KO) || cp kmod/valor.ko $(KMOD_KO)

guest-tests: $(KTEST_BINS) $(KPROG_BINS)

vmkernel: $(VM_KERNEL)

$(VM_KERNEL): tools/fetch-guest-kernel.sh $(HEADERS_LIST) | $(DEPS_STAMP)
	$(quiet) FETCH $(@D)/vmlinuz
	$(Q)bash tools/fetch-guest-kernel.sh $(@D)
	$(Q)touch $@

# Only the guest: the same counting and closing line as check.
vmtest: kmod guest-tests vmkernel
	$(Q)bash tools/run-tests.sh --vm $(KTEST_BINS)

$(CHECKPATCH): tools/fetch-linux-source.sh | $(DEPS_STAMP)
	$(quiet) FETCH $(@D)
	$(Q)bash tools/fetch-linux-source.sh $(@D) scripts/checkpatch.pl \
		scripts/spelling.txt scripts/const_structs.checkpatch
	$(Q)touch $@

# --no-tree: checkpatch runs outside a kernel tree and finds spelling.txt
# and const_structs.checkpatch beside itself.  MACRO_ARG_REUSE: the
# emulator's macros paste a mnemonic string into inline asm several times,
# which has no side effect to repeat.
checkpatch: $(CHECKPATCH)
	$(Q)perl $(CHECKPATCH) --no-tree --strict --quiet --show-types \
		--ignore MACRO_ARG_REUSE \
		--file $(CHECKPATCH_FILES) && \
		echo "checkpatch: $(words $(CHECKPATCH_FILES)) files clean"

# A longer differential run: the differential test reads the variable.
check-long: export VALOR_DIFF_TRACES := 1000000
# About 40 minutes for the differential test alone on 2 CPUs.
check-long: export VALOR_TEST_TIMEOUT := 10800
check-long: check

# The bundled example: a real racy program, built with `valor cc` and run
# under `valor run`; it must report its conflict (exit status 66).
example: all
	$(Q)mkdir -p $(BUILD)/examples
	$(Q)echo "./$(BUILD)/bin/valor cc -O1 -o $(BUILD)/examples/bank $(EXAMPLE_PROGRAM)"
	$(Q)./$(BUILD)/bin/valor cc -O1 -o $(BUILD)/examples/bank $(EXAMPLE_PROGRAM)
	$(Q)echo "./$(BUILD)/bin/valor run -- ./$(BUILD)/examples/bank"
	$(Q)./$(BUILD)/bin/valor run -- ./$(BUILD)/examples/bank; \
	rc=$$?; \
	if [ $$rc -eq $(VALOR_EXIT_CONFLICTS) ]; then \
		echo "example: valor exited $$rc: conflicts found, as this racy example should"; \
	else \
		echo "example: expected the conflict report and exit status $(VALOR_EXIT_CONFLICTS), got $$rc" >&2; \
		exit 1; \
	fi

# The benchmarks: not part of check (timings are noisy on shared
# machines); tests/tools/bench_smoke_test runs the harness on tiny sizes.
# bench.py builds the workloads (tools/bench/workloads/*.c) itself.
bench: all $(BENCH_FILES)
	$(Q)$(PYTHON) tools/bench/bench.py $(BENCH_ARGS)

bench-quick: all $(BENCH_FILES)
	$(Q)$(PYTHON) tools/bench/bench.py --quick $(BENCH_ARGS)

deps: $(DEPS_STAMP)

# The stamp is redone whenever the package list (the script) changes.
$(DEPS_STAMP): tools/install-deps.sh
	$(Q)mkdir -p $(@D)
	$(Q)bash tools/install-deps.sh
	$(Q)touch $@

$(KSELFTEST_HDR): tools/fetch-linux-source.sh | $(DEPS_STAMP)
	$(quiet) FETCH $(@D)
	$(Q)bash tools/fetch-linux-source.sh $(@D) \
		tools/testing/selftests/kselftest_harness.h \
		tools/testing/selftests/kselftest.h
	$(Q)touch $@ $(@D)/kselftest.h

# ---- compiling and linking ----------------------------------------------

$(BUILD)/obj/%.o: %.c | $(DEPS_STAMP)
	$(quiet) CC $<
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) -c -o $@ $<

$(BUILD)/obj-pic/%.o: %.c | $(DEPS_STAMP)
	$(quiet) CC-PIC $<
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) -fPIC -c -o $@ $<

$(BUILD)/obj-rt/%.o: %.c | $(DEPS_STAMP)
	$(quiet) CC-RT $<
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) $(RT_CPPFLAGS) $(RT_CFLAGS) -c -o $@ $<

$(SYSCALL_HOOKS_GEN): tools/gen-syscall-hooks.py \
		libvalor/runtime/syscall_hooks.c $(wildcard $(SYSCALL_HOOKS_HDR)) \
		| $(DEPS_STAMP)
	$(quiet) GEN $@
	$(Q)mkdir -p $(@D)
	$(Q)if [ -f "$(SYSCALL_HOOKS_HDR)" ]; then \
		$(PASS_CLANG) -E -P -x c "$(SYSCALL_HOOKS_HDR)" >$@.i; \
	else \
		: >$@.i; \
	fi
	$(Q)$(PYTHON) tools/gen-syscall-hooks.py $@.i \
		libvalor/runtime/syscall_hooks.c >$@.tmp
	$(Q)rm -f $@.i
	$(Q)mv $@.tmp $@

$(PASS_CHECK_BC): libvalor/instrument/check.c | $(DEPS_STAMP)
	$(quiet) BC $<
	$(Q)mkdir -p $(@D)
	$(Q)$(PASS_CLANG) $(PASS_CHECK_CFLAGS) -emit-llvm -c -o $@ $<

$(BUILD)/obj-pass/valor_pass.o: libvalor/instrument/valor_pass.cpp | $(DEPS_STAMP)
	$(quiet) CXX $<
	$(Q)mkdir -p $(@D)
	$(Q)$(PASS_CXX) $(PASS_CXXFLAGS) -c -o $@ $<

$(BUILD)/obj-pass/check_blob.o: libvalor/instrument/check_blob.S $(PASS_CHECK_BC)
	$(quiet) AS $<
	$(Q)mkdir -p $(@D)
	$(Q)$(PASS_CLANG) -DVALOR_CHECK_BC='"$(PASS_CHECK_BC)"' -c -o $@ $<

# No LLVM library on the link line: the plugin uses the one clang loaded.
$(PASS_SO): $(PASS_OBJS)
	$(quiet) LD $@
	$(Q)mkdir -p $(@D)
	$(Q)$(PASS_CXX) -shared -o $@ $(PASS_OBJS)

$(BENCH_FLOOR_OBJ): tools/bench/floor.c | $(DEPS_STAMP)
	$(quiet) CC-FLOOR $<
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(BASE_CFLAGS) $(DEPFLAGS) $(BENCH_FLOOR_CFLAGS) -c -o $@ $<

$(BENCH_FLOOR_A): $(BENCH_FLOOR_OBJ)
	$(quiet) AR $@
	$(Q)mkdir -p $(@D)
	$(Q)rm -f $@
	$(Q)$(AR) rcs $@ $^

$(BENCH_SPAWN): tools/bench/spawn.c | $(DEPS_STAMP)
	$(quiet) LD $@
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(BASE_CFLAGS) $(DEPFLAGS) -O2 -static -o $@ $<

# Every runtime file sees the option table through rt.h; so does
# `valor run --help` (tools/valor/cmd_run.c).
$(RT_RUNTIME_OBJS) $(BUILD)/obj/tools/valor/cmd_run.o: $(RT_OPTIONS_DEF)

# Test code and its helpers see the harness and tests/lib.
$(TEST_OBJS) $(TESTLIB_OBJS): ALL_CFLAGS += $(TEST_CPPFLAGS)
$(TEST_OBJS) $(TESTLIB_OBJS): $(KSELFTEST_HDR)
# Guest test code sees the harness and tests/kmod/lib.
$(KTEST_OBJS): ALL_CFLAGS += $(KTEST_CPPFLAGS)
$(KTEST_OBJS): $(KSELFTEST_HDR)

$(LIB_A): $(LIB_OBJS)
	$(quiet) AR $@
	$(Q)mkdir -p $(@D)
	$(Q)rm -f $@
	$(Q)$(AR) rcs $@ $^

$(RT_A): $(RT_OBJS)
	$(quiet) AR $@
	$(Q)mkdir -p $(@D)
	$(Q)rm -f $@
	$(Q)$(AR) rcs $@ $^

# A linker dynamic list of every function the runtime defines for the
# program: global, default visibility, not an rt_* internal -- the
# __tsan_* entry points, the <valor/valor.h> API and the intercepted libc
# functions (a versioned definition, name@VERSION, is listed by name).
# __tsan_init is always listed: ld refuses an empty list, and a listed
# symbol the program does not define is ignored.  Written to a temporary
# file first so that a failed run leaves no half list behind.
$(RT_DYNLIST): $(RT_RUNTIME_OBJS) Makefile
	$(quiet) GEN $@
	$(Q)mkdir -p $(@D)
	$(Q)$(if $(RT_RUNTIME_OBJS),readelf --syms --wide $(RT_RUNTIME_OBJS),:) \
		>$@.syms
	$(Q){ \
		echo '/* Generated by the Makefile from $(BUILD)/obj-rt/libvalor/runtime/: do not edit. */'; \
		echo '{'; \
		{ \
			echo __tsan_init; \
			awk '($$4 == "FUNC" || $$4 == "IFUNC") && \
			     ($$5 == "GLOBAL" || $$5 == "WEAK") && \
			     $$6 == "DEFAULT" && $$7 != "UND" && \
			     $$8 !~ /^rt_/ { sub(/@.*/, "", $$8); print $$8 }' \
			     $@.syms; \
		} | LC_ALL=C sort -u | sed 's/.*/\t&;/'; \
		echo '};'; \
	} >$@.tmp
	$(Q)rm -f $@.syms
	$(Q)mv $@.tmp $@

$(RT_GCC_SPECS): Makefile
	$(quiet) GEN $@
	$(Q)mkdir -p $(@D)
	$(Q)printf '%s\n' \
		'%rename cc1_options valor_cc1_options' \
		'' \
		'*cc1_options:' \
		'%(valor_cc1_options) -fsanitize=thread' \
		'' >$@.tmp
	$(Q)mv $@.tmp $@

$(LIB_SO_REAL): $(LIB_PIC_OBJS) $(LIB_MAP)
	$(quiet) LD $@
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(BASE_CFLAGS) $(CFLAGS) $(LDFLAGS) -shared \
		-Wl,-soname,$(LIB_SONAME) -Wl,--version-script=$(LIB_MAP) \
		-Wl,-z,defs -o $@ $(LIB_PIC_OBJS) -lpthread -lm

$(LIB_SO): $(LIB_SO_REAL)
	$(Q)ln -sf $(LIB_SONAME) $@

$(BUILD)/bin/valor: $(VALOR_OBJS) $(LIB_A)
	$(quiet) LD $@
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(BASE_CFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $(VALOR_OBJS) \
		$(LIB_A) -lelf -lpthread -lm

$(TEST_BINS): $(BUILD)/tests/%: $(BUILD)/obj/tests/%.o $(TESTLIB_OBJS) $(LIB_A)
	$(quiet) LD $@
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(BASE_CFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $< \
		$(TESTLIB_OBJS) $(LIB_A) $(TEST_LDLIBS)

$(KTEST_BINS): $(BUILD)/tests/kmod/%: $(BUILD)/obj/tests/kmod/%.o $(KTESTLIB_OBJS)
	$(quiet) LD $@
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(BASE_CFLAGS) $(CFLAGS) $(LDFLAGS) -static -o $@ $^ \
		$(TEST_LDLIBS)

$(KPROG_BINS): $(BUILD)/tests/kmod/progs/%: $(BUILD)/obj/tests/kmod/progs/%.o
	$(quiet) LD $@
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(BASE_CFLAGS) $(CFLAGS) $(LDFLAGS) -static -o $@ $< \
		$(TEST_LDLIBS)

# ---- housekeeping -------------------------------------------------------

format: | $(DEPS_STAMP)
	$(Q)clang-format -i $(FORMAT_FILES)

format-check: | $(DEPS_STAMP)
	$(Q)bad=; \
	for f in $(FORMAT_FILES); do \
		clang-format "$$f" | cmp -s - "$$f" || bad="$$bad $$f"; \
	done; \
	if [ -n "$$bad" ]; then \
		echo "format-check: not clang-formatted (run make format):"; \
		for f in $$bad; do echo "  $$f"; done; \
		exit 1; \
	fi; \
	echo "format-check: all files formatted"

# Kbuild's products live beside the module sources; without headers
# there is nothing of Kbuild's to clean.
clean:
	$(Q)if [ -f "$(KDIR)/Makefile" ]; then \
		$(MAKE) --no-print-directory $(KBUILD_ARGS) clean; \
	fi
	rm -rf $(BUILD)

help:
	@echo 'Targets:'
	@echo '  all (default)  build/lib/libvalor.a, build/lib/libvalor.so, the runtime, build/bin/valor'
	@echo '  runtime        build/lib/libvalor-rt.a, its .dynlist and valor-gcc.specs (for valor cc)'
	@echo '  check          build everything and run every test, host and guest (tools/run-tests.sh)'
	@echo '  check-long     check with a longer differential run (VALOR_DIFF_TRACES=1000000)'
	@echo '  example        build $(EXAMPLE_PROGRAM) with valor cc and run it under valor run'
	@echo '  bench          benchmarks: tools/bench/workloads/ native, floor, libtsan and'
	@echo '                 Valor (3 analyses), 5 rounds + scaling; table, build/bench/results.{json,png}'
	@echo '  bench-quick    the same with one round and small sizes (tools/bench/README.md)'
	@echo '  tests          build the host test binaries under build/tests/ only'
	@echo '  kmod           build valor.ko with Kbuild against KDIR, copy it to $(KMOD_KO)'
	@echo '  guest-tests    build the static guest tests build/tests/kmod/ and their progs/'
	@echo '  vmkernel       fetch the guest kernel matching the headers into $(BUILD)/vm/'
	@echo '  vmtest         kmod, guest-tests, vmkernel, then run the guest tests in QEMU'
	@echo '  checkpatch     the kernel'"'"'s checkpatch.pl --strict on kmod/*.[ch]'
	@echo '  deps           install the Debian packages (tools/install-deps.sh; automatic)'
	@echo '  format         clang-format our .c and .h files in place'
	@echo '  format-check   list files that clang-format would change; fail if any'
	@echo '  clean          remove build/ and Kbuild'"'"'s products in kmod/'
	@echo 'Variables: V=1 (show commands), CC, CFLAGS (default -O2 -g), LDFLAGS,'
	@echo '  VALOR_TEST_TIMEOUT (seconds per test binary, default 600),'
	@echo '  KDIR (kernel headers; default the linux-headers-amd64 tree under /usr/src),'
	@echo '  BENCH_ARGS (more bench.py options, e.g. --workloads=fft,lu), PYTHON,'
	@echo '  VMTEST_TIMEOUT, VMTEST_TEST_TIMEOUT and more: tools/vmtest/README.md'

-include $(LIB_OBJS:.o=.d) $(LIB_PIC_OBJS:.o=.d) $(RT_OBJS:.o=.d) \
	 $(VALOR_OBJS:.o=.d) \
	 $(TESTLIB_OBJS:.o=.d) $(TEST_OBJS:.o=.d) $(KTEST_OBJS:.o=.d) \
	 $(BENCH_FLOOR_OBJ:.o=.d) $(BENCH_SPAWN).d \
	 $(PASS_CHECK_BC:.bc=.d) $(BUILD)/obj-pass/valor_pass.d
