# peerd: one Makefile for the whole tree.
#
#   make            build everything under build/ (binaries in build/bin/)
#   make test       install missing dependencies, build, run unit tests,
#                   the same tests under ASan+UBSan, pool/ under TSan,
#                   a fuzz smoke run and the integration tests (with the
#                   interop tests when a bitcoind is found)
#   make interop    build, then every test that needs Bitcoin Core (-m interop)
#   make bench      run the benchmarks (BENCH=REGEX for a subset)
#   make soak       the long integration runs (2,000-block kill -9 test)
#   make run        build and run something real (see README)
#   make fuzz       build the libFuzzer targets (clang)
#   make deps       check dependencies; as root, apt-get what is missing
#   make man        the man pages under build/man/ (from doc/*.1.in and
#                   each binary's own -help)
#   make install    PREFIX=/usr/local DESTDIR=
#
# V=1 shows the commands.

PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
SYSCONFDIR ?= /etc
# /usr/local/lib/... are on systemd's search paths (systemd 252).
UNITDIR ?= $(PREFIX)/lib/systemd/system
SYSUSERSDIR ?= $(PREFIX)/lib/sysusers.d
TMPFILESDIR ?= $(PREFIX)/lib/tmpfiles.d
MANDIR ?= $(PREFIX)/share/man
# The config examples: conf/peerd.conf (every key) and contrib/conf/ (one per network).
DOCDIR ?= $(PREFIX)/share/doc/peerd
# bash-completion's own directory for a /usr install; under /usr/local its
# completions dir is searched too (bash-completion 2.x: XDG_DATA_DIRS).
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
DESTDIR ?=
PKG_CONFIG ?= pkg-config
FUZZ_CC ?= clang
BUILD ?= build
# One spelling for the same directory (BUILD=build or BUILD=$PWD/build), so
# the dependency files name the targets make is asked for and a header
# change always rebuilds what includes it.
override BUILD := $(patsubst $(CURDIR)/%,%,$(abspath $(BUILD)))
# Test data is vendored in tests/data (see tests/data/README.md);
# VECTORS=/path points the tests and benchmarks elsewhere.
TESTDATA := $(abspath $(CURDIR)/tests/data)
VECTORS ?= $(TESTDATA)
PYTHON ?= /usr/bin/python3
NPROC := $(shell nproc 2>/dev/null || echo 2)
BENCH ?=
FUZZ_SECONDS ?= 3

ifeq ($(V),1)
Q :=
msg = @true
else
Q := @
msg = @printf '  %-6s %s\n' $(1) $(2)
endif

PKGS := libuv libsodium libsecp256k1 nettle gmp jansson inih libsystemd lmdb libmicrohttpd libcares libzmq
TEST_PKGS := cmocka

# pkg-config runs only when a target needs it, so `make deps` works on a
# machine that has none of the libraries yet.
PKG_CFLAGS = $(shell $(PKG_CONFIG) --cflags $(PKGS) 2>/dev/null)
PKG_LIBS = $(shell $(PKG_CONFIG) --libs $(PKGS) 2>/dev/null)
TEST_CFLAGS = $(shell $(PKG_CONFIG) --cflags $(TEST_PKGS) 2>/dev/null)
TEST_LIBS = $(shell $(PKG_CONFIG) --libs $(TEST_PKGS) 2>/dev/null)

WARN := -Wall -Wextra -Wshadow -Wstrict-prototypes -Werror
# _GNU_SOURCE: POSIX and the few GNU extensions we use (memmem, pipe2).
STD := -std=c11 -D_GNU_SOURCE
OPT ?= -O2 -g
# -MMD -MP: header dependencies without a separate depend step.
ALL_CFLAGS = $(STD) $(OPT) $(WARN) -I. -MMD -MP $(PKG_CFLAGS) $(DEFS) $(CFLAGS)
LDLIBS_ALL = $(PKG_LIBS) -lpthread -lm

# -fno-sanitize-recover: a UBSan finding fails the test instead of printing.
# -fno-omit-frame-pointer: readable sanitizer stacks.
ASAN_FLAGS := -O1 -g -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
TSAN_FLAGS := -O1 -g -fsanitize=thread -fno-omit-frame-pointer
FUZZ_FLAGS := -O1 -g -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all

LIB_DIRS := base proto addrman bip324 cmpct script pool chain mempool mining conf json index fees
LIB_SRCS := $(wildcard $(addsuffix /*.c,$(LIB_DIRS)))
# daemon/ and its rooms (net/, p2p/, sync/, txrelay/, node/, ctl/); the object
# trees mirror these paths.
DAEMON_SRCS := $(wildcard daemon/*.c daemon/*/*.c)
# Everything of peerd but main(), so unit tests can link daemon internals.
DAEMON_LIB_SRCS := $(filter-out daemon/main.c,$(DAEMON_SRCS))
PEERTOOL_SRCS := $(wildcard tools/peertool*.c)
PEERCTL_SRCS := $(wildcard tools/peerctl*.c)
TESTUTIL_SRCS := $(wildcard tests/unit/testutil*.c)
TEST_SRCS := $(wildcard tests/unit/test_*.c)
TSAN_TEST_SRCS := $(wildcard tests/unit/test_pool*.c) tests/unit/test_clock.c tests/unit/test_chain_store_shared.c \
                  tests/unit/test_chain_coins_async.c
BENCH_SRCS := $(wildcard bench/*.c)
FUZZ_SRCS := $(wildcard tests/fuzz/fuzz_*.c)

obj = $(patsubst %.c,$(1)/obj/%.o,$(2))

LIB := $(BUILD)/libpeerd.a
DLIB := $(BUILD)/libpeerd-daemon.a
ASAN_DLIB := $(BUILD)/asan/libpeerd-daemon.a
FUZZ_DLIB := $(BUILD)/fuzz/libpeerd-daemon.a
ASAN_LIB := $(BUILD)/asan/libpeerd.a
TSAN_LIB := $(BUILD)/tsan/libpeerd.a
FUZZ_LIB := $(BUILD)/fuzz/libpeerd.a

BINS := $(if $(DAEMON_SRCS),$(BUILD)/bin/peerd) \
	$(if $(PEERTOOL_SRCS),$(BUILD)/bin/peertool) \
	$(if $(PEERCTL_SRCS),$(BUILD)/bin/peerctl)
TESTS := $(patsubst tests/unit/%.c,$(BUILD)/test/%,$(TEST_SRCS))
ASAN_TESTS := $(patsubst tests/unit/%.c,$(BUILD)/asan/test/%,$(TEST_SRCS))
TSAN_TESTS := $(patsubst tests/unit/%.c,$(BUILD)/tsan/test/%,$(TSAN_TEST_SRCS))
FUZZERS := $(patsubst tests/fuzz/%.c,$(BUILD)/fuzz/bin/%,$(FUZZ_SRCS))

.PHONY: all test test-build unit interop bench bench-ibd bench-index bench-utxo soak fuzz fuzz-smoke integration run \
	deps install uninstall clean format man

all: $(BINS)

# Test and fuzz mains are made only through pattern rules, so make would
# delete them as intermediates; keep them so rebuilds stay incremental.
.SECONDARY: $(foreach v,$(BUILD) $(BUILD)/asan $(BUILD)/tsan, \
		$(call obj,$(v),$(TEST_SRCS) $(TESTUTIL_SRCS))) \
	$(call obj,$(BUILD)/fuzz,$(FUZZ_SRCS))

# ---- objects, one tree per build flavour -------------------------------
$(BUILD)/obj/%.o: %.c
	$(call msg,CC,$<)
	@mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) -c $< -o $@

$(BUILD)/asan/obj/%.o: %.c
	$(call msg,CC-ASAN,$<)
	@mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) $(ASAN_FLAGS) -c $< -o $@

$(BUILD)/tsan/obj/%.o: %.c
	$(call msg,CC-TSAN,$<)
	@mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) $(TSAN_FLAGS) -c $< -o $@

$(BUILD)/fuzz/obj/%.o: %.c
	$(call msg,CC-FUZZ,$<)
	@mkdir -p $(@D)
	$(Q)$(FUZZ_CC) $(ALL_CFLAGS) $(FUZZ_FLAGS) -c $< -o $@

# ---- libraries --------------------------------------------------------
define make_lib
$(1): $(call obj,$(2),$(3))
	$$(call msg,AR,$$@)
	@mkdir -p $$(@D)
	$$(Q)rm -f $$@ && ar rcs $$@ $$^
endef
$(eval $(call make_lib,$(LIB),$(BUILD),$(LIB_SRCS)))
$(eval $(call make_lib,$(DLIB),$(BUILD),$(DAEMON_LIB_SRCS)))
$(eval $(call make_lib,$(ASAN_DLIB),$(BUILD)/asan,$(DAEMON_LIB_SRCS)))
$(eval $(call make_lib,$(FUZZ_DLIB),$(BUILD)/fuzz,$(DAEMON_LIB_SRCS)))
$(eval $(call make_lib,$(ASAN_LIB),$(BUILD)/asan,$(LIB_SRCS)))
$(eval $(call make_lib,$(TSAN_LIB),$(BUILD)/tsan,$(LIB_SRCS)))
$(eval $(call make_lib,$(FUZZ_LIB),$(BUILD)/fuzz,$(LIB_SRCS)))

# ---- programs ---------------------------------------------------------
$(BUILD)/bin/peerd: $(call obj,$(BUILD),$(DAEMON_SRCS)) $(LIB)
	$(call msg,LINK,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(OPT) -o $@ $^ $(LDLIBS_ALL)

# The programs again with ASan+UBSan: the integration suite runs against
# them a second time, so a leak or UB on a real path fails the tests.
$(BUILD)/asan/bin/peerd: $(call obj,$(BUILD)/asan,$(DAEMON_SRCS)) $(ASAN_LIB)
	$(call msg,LINK,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(ASAN_FLAGS) -o $@ $^ $(LDLIBS_ALL)

$(BUILD)/asan/bin/peertool: $(call obj,$(BUILD)/asan,$(PEERTOOL_SRCS)) $(ASAN_LIB)
	$(call msg,LINK,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(ASAN_FLAGS) -o $@ $^ $(LDLIBS_ALL)

$(BUILD)/asan/bin/peerctl: $(call obj,$(BUILD)/asan,$(PEERCTL_SRCS)) $(ASAN_LIB)
	$(call msg,LINK,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(ASAN_FLAGS) -o $@ $^ $(LDLIBS_ALL)

$(BUILD)/bin/peertool: $(call obj,$(BUILD),$(PEERTOOL_SRCS)) $(LIB)
	$(call msg,LINK,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(OPT) -o $@ $^ $(LDLIBS_ALL)

$(BUILD)/bin/peerctl: $(call obj,$(BUILD),$(PEERCTL_SRCS)) $(LIB)
	$(call msg,LINK,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(OPT) -o $@ $^ $(LDLIBS_ALL)

# bench_pool.c runs the pool's test job (test code, not in the library).
$(BUILD)/bin/peerbench: $(call obj,$(BUILD),$(BENCH_SRCS) tests/unit/testutil_pool.c) $(DLIB) $(LIB)
	$(call msg,LINK,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(OPT) -o $@ $^ $(LDLIBS_ALL)

# The test helpers and the benchmark harness find tests/data by its
# absolute path when VECTORS is unset, whatever the working directory.
$(foreach v,$(BUILD) $(BUILD)/asan $(BUILD)/tsan,$(call obj,$(v),$(TESTUTIL_SRCS))) \
$(call obj,$(BUILD),bench/bench.c): DEFS = -DPEERD_TESTDATA='"$(TESTDATA)"'

# ---- unit tests: plain, ASan+UBSan, TSan (pool/) ----------------------
$(BUILD)/obj/tests/unit/%.o $(BUILD)/asan/obj/tests/unit/%.o $(BUILD)/tsan/obj/tests/unit/%.o: CFLAGS += $(TEST_CFLAGS)

# The daemon archive comes first; only the members a test uses are linked.
$(BUILD)/test/%: $(BUILD)/obj/tests/unit/%.o $(call obj,$(BUILD),$(TESTUTIL_SRCS)) $(DLIB) $(LIB)
	$(call msg,LINK,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(OPT) -o $@ $^ $(LDLIBS_ALL) $(TEST_LIBS)

$(BUILD)/asan/test/%: $(BUILD)/asan/obj/tests/unit/%.o $(call obj,$(BUILD)/asan,$(TESTUTIL_SRCS)) $(ASAN_DLIB) $(ASAN_LIB)
	$(call msg,LINK,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(ASAN_FLAGS) -o $@ $^ $(LDLIBS_ALL) $(TEST_LIBS)

$(BUILD)/tsan/test/%: $(BUILD)/tsan/obj/tests/unit/%.o $(call obj,$(BUILD)/tsan,$(TESTUTIL_SRCS)) $(TSAN_LIB)
	$(call msg,LINK,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(TSAN_FLAGS) -o $@ $^ $(LDLIBS_ALL) $(TEST_LIBS)

# ---- fuzz targets (clang libFuzzer) -----------------------------------
$(BUILD)/fuzz/bin/%: $(BUILD)/fuzz/obj/tests/fuzz/%.o $(FUZZ_DLIB) $(FUZZ_LIB)
	$(call msg,LINK,$@)
	@mkdir -p $(@D)
	$(Q)$(FUZZ_CC) -fsanitize=fuzzer,address,undefined -o $@ $^ $(LDLIBS_ALL)

fuzz: $(FUZZERS)

# ---- top-level actions -------------------------------------------------
deps:
	@scripts/deps.sh

ASAN_BINS := $(patsubst $(BUILD)/bin/%,$(BUILD)/asan/bin/%,$(BINS))
test-build: $(BINS) $(ASAN_BINS) $(TESTS) $(ASAN_TESTS) $(TSAN_TESTS) $(FUZZERS)

# Build in parallel, then run the suites one after another so their output
# reads in order. The last line is the total over every suite.
test: deps
	@$(MAKE) --no-print-directory -j$(NPROC) test-build
	@VECTORS=$(VECTORS) BUILD=$(BUILD) PYTHON=$(PYTHON) FUZZ_SECONDS=$(FUZZ_SECONDS) \
		UNIT_TESTS="$(notdir $(TESTS))" TSAN_TESTS="$(notdir $(TSAN_TESTS))" \
		scripts/run-tests.sh

unit: $(TESTS)
	@VECTORS=$(VECTORS) BUILD=$(BUILD) UNIT_TESTS="$(notdir $(TESTS))" scripts/run-tests.sh unit

# Every test that needs Bitcoin Core (pytest marker `interop`, which
# conftest.py also gives each test that starts a bitcoind): BITCOIND=/path,
# else ../shared/bin, else PATH; skipped without one.
interop: deps
	@$(MAKE) --no-print-directory -j$(NPROC) all
	@VECTORS=$(VECTORS) BUILD=$(BUILD) PYTHON=$(PYTHON) scripts/run-tests.sh interop

# Blocks for bench/bench_connect.c, made by peertool chaingen (never
# committed: they are generated, deterministic, and 0.5-5 MB each).
BENCH_DATA := $(BUILD)/bench
BENCH_BLOCKS := $(addprefix $(BENCH_DATA)/,connect_ecdsa.dat connect_schnorr.dat \
	connect_mixed.dat chain2000.dat coinbase600.dat)

$(BENCH_DATA)/connect_%.dat: $(BUILD)/bin/peertool
	$(call msg,GEN,$@)
	@mkdir -p $(@D)
	$(Q)$(BUILD)/bin/peertool chaingen --seed bench --blocks 102 --bench-block $* \
		--out $@.tmp >/dev/null && mv $@.tmp $@

$(BENCH_DATA)/chain2000.dat: $(BUILD)/bin/peertool
	$(call msg,GEN,$@)
	@mkdir -p $(@D)
	$(Q)$(BUILD)/bin/peertool chaingen --seed bench --blocks 2000 --no-verify \
		--out $@.tmp >/dev/null && mv $@.tmp $@

# bench/bench_index.c's BlockFilterIndexSync: Core's 600 coinbase-only blocks.
$(BENCH_DATA)/coinbase600.dat: $(BUILD)/bin/peertool
	$(call msg,GEN,$@)
	@mkdir -p $(@D)
	$(Q)$(BUILD)/bin/peertool chaingen --seed bench --blocks 600 --txs-per-block 0 \
		--mix p2wpkh --no-verify --out $@.tmp >/dev/null && mv $@.tmp $@

bench: deps
	@$(MAKE) --no-print-directory -j$(NPROC) $(BUILD)/bin/peerbench $(BINS)
	@$(MAKE) --no-print-directory $(BENCH_BLOCKS)
	@VECTORS=$(VECTORS) BENCH_DATA=$(BENCH_DATA) $(BUILD)/bin/peerbench '$(value BENCH)'

# The long runs `make test` leaves out (pytest marker `soak`).
soak: deps
	@$(MAKE) --no-print-directory -j$(NPROC) $(BINS)
	@VECTORS=$(VECTORS) BUILD=$(BUILD) PEERD_SOAK=1 $(PYTHON) -m pytest -q -p no:cacheprovider \
		-m soak tests/integration

run: deps
	@$(MAKE) --no-print-directory -j$(NPROC) all
	@VECTORS=$(VECTORS) BUILD=$(BUILD) scripts/run.sh

# The unit's other paths use systemd specifiers (%E, %S, %t); only the
# binary's location depends on PREFIX. An existing config is never replaced.
# The pages take their option lists from the binaries' -help (doc/mkman.sh).
MAN_PAGES := $(BUILD)/man/peerd.1 $(BUILD)/man/peerctl.1 $(BUILD)/man/peertool.1
man: $(MAN_PAGES)
$(MAN_PAGES): $(BINS) doc/mkman.sh doc/help2roff.awk $(wildcard doc/*.1.in)
	sh doc/mkman.sh $(BUILD)/bin $(BUILD)/man

install: all man
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(UNITDIR) $(DESTDIR)$(SYSUSERSDIR) \
		$(DESTDIR)$(TMPFILESDIR) $(DESTDIR)$(SYSCONFDIR)/peerd
	install -m 0755 $(BINS) $(DESTDIR)$(BINDIR)/
	sed 's|/usr/local/bin/peerd|$(BINDIR)/peerd|' systemd/peerd.service > $(BUILD)/peerd.service
	install -m 0644 $(BUILD)/peerd.service $(DESTDIR)$(UNITDIR)/peerd.service
	sed 's|/usr/local/lib/sysusers.d|$(SYSUSERSDIR)|' systemd/peerd.sysusers > $(BUILD)/peerd.sysusers
	sed 's|/usr/local/lib/tmpfiles.d|$(TMPFILESDIR)|' systemd/peerd.tmpfiles > $(BUILD)/peerd.tmpfiles
	install -m 0644 $(BUILD)/peerd.sysusers $(DESTDIR)$(SYSUSERSDIR)/peerd.conf
	install -m 0644 $(BUILD)/peerd.tmpfiles $(DESTDIR)$(TMPFILESDIR)/peerd.conf
	sed 's|/usr/local/share/doc/peerd|$(DOCDIR)|' conf/peerd.conf > $(BUILD)/peerd.conf
	[ -e $(DESTDIR)$(SYSCONFDIR)/peerd/peerd.conf ] || \
		install -m 0644 $(BUILD)/peerd.conf $(DESTDIR)$(SYSCONFDIR)/peerd/peerd.conf
	install -d $(DESTDIR)$(DOCDIR)/examples
	install -m 0644 $(BUILD)/peerd.conf $(DESTDIR)$(DOCDIR)/peerd.conf.example
	install -m 0644 contrib/conf/*.conf $(DESTDIR)$(DOCDIR)/examples/
	install -d $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(BASHCOMPDIR)
	install -m 0644 $(BUILD)/man/peerd.1 $(BUILD)/man/peerctl.1 $(BUILD)/man/peertool.1 \
		$(DESTDIR)$(MANDIR)/man1/
	install -m 0644 contrib/completion/peerctl.bash $(DESTDIR)$(BASHCOMPDIR)/peerctl
	install -m 0644 contrib/completion/peertool.bash $(DESTDIR)$(BASHCOMPDIR)/peertool
	@if [ -z "$(DESTDIR)" ]; then \
		echo "next: edit $(SYSCONFDIR)/peerd/peerd.conf (a network and connect= or addnode=;" \
			"examples in $(DOCDIR)/examples/), then:" \
			"systemd-sysusers; systemd-tmpfiles --create peerd.conf;" \
			"systemctl daemon-reload; systemctl enable --now peerd"; \
	else \
		echo "staged in $(DESTDIR): nothing on this system changed. On the target system," \
			"after copying the tree to /: edit $(SYSCONFDIR)/peerd/peerd.conf, then run" \
			"systemd-sysusers; systemd-tmpfiles --create peerd.conf;" \
			"systemctl daemon-reload; systemctl enable --now peerd"; \
	fi

uninstall:
	rm -f $(addprefix $(DESTDIR)$(BINDIR)/,$(notdir $(BINS)))
	rm -f $(DESTDIR)$(UNITDIR)/peerd.service $(DESTDIR)$(SYSUSERSDIR)/peerd.conf \
		$(DESTDIR)$(TMPFILESDIR)/peerd.conf
	rm -f $(addprefix $(DESTDIR)$(MANDIR)/man1/,peerd.1 peerctl.1 peertool.1) \
		$(DESTDIR)$(BASHCOMPDIR)/peerctl $(DESTDIR)$(BASHCOMPDIR)/peertool
	rm -rf $(DESTDIR)$(DOCDIR)

format:
	clang-format -i $$(git ls-files '*.c' '*.h')

# make run's datadir is run/, outside $(BUILD): its chain survives this.
clean:
	rm -rf $(BUILD)

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)

# Initial block download against Bitcoin Core (outside make test, needs a
# bitcoind): 20,000 empty and 2,000 transaction blocks from a Core node,
# synced by peerd and by a second Core node, then the latter with 2,017
# empty blocks above and -assumevalid at the tip for both; prints
# doc/performance.md's table.
# BENCH_IBD_ARGS="--runs 2" or "--only empty" to vary.
bench-ibd: deps
	@$(MAKE) --no-print-directory -j$(NPROC) all
	@BUILD=$(BUILD) BENCH_DATA=$(BENCH_DATA) $(PYTHON) scripts/bench-ibd.py $(BENCH_IBD_ARGS)

# -txindex and -blockfilterindex built by peerd and by Bitcoin Core on the
# same 2,000-block signed chain: wall time and bytes on disk (needs a
# bitcoind; tests/integration/test_bench_index.py runs 120 blocks in make test).
# BENCH_INDEX_ARGS="--runs 3" or "--blocks 500" to vary.
bench-index: deps
	@$(MAKE) --no-print-directory -j$(NPROC) all
	@BUILD=$(BUILD) $(PYTHON) scripts/bench-index.py $(BENCH_INDEX_ARGS)

# A UTXO set larger than the cache (issue 24): a peertool chaingen --grow-utxo
# chain to 10 million coins, synced by peerd and by Core with -dbcache=100
# and -assumevalid, then -reindex-chainstate; prints doc/performance.md's
# table. BENCH_UTXO_ARGS="--coins 2000000 --json r.json" to vary;
# scripts/plot-utxo.py r.json doc draws the PNGs (python3-matplotlib,
# which this target installs as make deps installs the rest).
bench-utxo: deps
	@scripts/deps.sh plots
	@$(MAKE) --no-print-directory -j$(NPROC) all
	@BUILD=$(BUILD) BENCH_DATA=$(BENCH_DATA) $(PYTHON) scripts/bench-utxo.py $(BENCH_UTXO_ARGS)
