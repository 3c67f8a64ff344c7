# debit — one top-level Makefile.
#
# Layout: common/ is a library linked by every program; each program's directory holds
# a main.c plus modules. Everything but main.c of a program also goes into a static
# library so that unit tests (tests/unit/test_*.c) can link the real code.
#
#   make            build build/debitd, build/debit, build/debit-delayline, build/debit-netctl
#   make test       install missing Debian packages (as root), build, run unit + e2e tests
#   make check-asan the same suite, built with ASan + UBSan into build/asan
#   make fuzz       build every fuzz/fuzz_*.c with clang's libFuzzer (+ASan+UBSan) into
#                   build/fuzz and run each FUZZ_SECONDS (30) on fuzz/corpus/NAME (docs/fuzzing.md)
#   make bench      benchmarks in bench/ (ratios against nginx, curl, wget, iperf3)
#   make demo       the main job on the embedded default (see README.md)
#   make install    PREFIX=/usr/local DESTDIR= (make uninstall the same); docs/deploy.md
#   make deb        build/debit_VERSION-REV_ARCH.deb (PREFIX=/usr, built in build/deb; REV from debian/changelog)

VERSION   := 0.1.0
PREFIX    ?= /usr/local
BINDIR    ?= $(PREFIX)/bin
SBINDIR   ?= $(PREFIX)/sbin
SYSCONFDIR?= $(if $(filter /usr,$(PREFIX)),/etc,$(PREFIX)/etc)
DESTDIR   ?=
# Debian's layout when PREFIX=/usr: /etc, /lib/systemd/system (docs/deploy.md).
MANDIR    ?= $(PREFIX)/share/man
UNITDIR   ?= $(if $(filter /usr,$(PREFIX)),/lib/systemd/system,$(PREFIX)/lib/systemd/system)
COMPLDIR  ?= $(PREFIX)/share/bash-completion/completions
LOGROTDIR ?= $(SYSCONFDIR)/logrotate.d
BUILD     ?= build
# One spelling of the build folder, relative to the top when inside it: -MMD names each .d
# file's target as $@ was spelt, so BUILD=/abs/top/build (the tests' way) after BUILD=build
# would miss every header dependency and link stale objects (a .deb built so crashed at
# SIGTERM: tests/e2e/package_deb.sh).
override BUILD := $(patsubst $(CURDIR)/%,%,$(abspath $(BUILD)))
CC        ?= cc
PKG_CONFIG?= pkg-config

PKGS_COMMON := libconfig jansson
PKGS_SERVER := libmicrohttpd gnutls libcrypto libsystemd libcap libseccomp libmnl
PKGS_CLIENT := libcurl libssl libcrypto
PKGS_NETCTL := libnl-route-3.0 libnl-3.0
PKGS_DELAY  := libnetfilter_queue libmnl
PKGS_STORE  := sqlite3 libpq
# libwslay (WebSocket framing for ndt7: server/http/http_ndt7_run.c, client/measure/ws.c): Debian's libwslay-dev
# ships no pkg-config file, only CMake's, so it is named here.
LIBS_WSLAY  := -lwslay
PKGS_ALL    := $(PKGS_COMMON) $(PKGS_SERVER) $(PKGS_CLIENT) $(PKGS_NETCTL) $(PKGS_DELAY) $(PKGS_STORE)

SAN_FLAGS ?=
OPT       ?= -O2
CPPFLAGS  += -D_GNU_SOURCE -DDEBIT_VERSION='"$(VERSION)"'
CFLAGS    ?=
CFLAGS    += -std=gnu11 -Wall -Wextra $(OPT) -g -MMD -MP -pthread $(SAN_FLAGS)
LDFLAGS   += -pthread $(SAN_FLAGS)

pc_cflags = $(shell $(PKG_CONFIG) --cflags $(1) 2>/dev/null)
pc_libs   = $(shell $(PKG_CONFIG) --libs $(1) 2>/dev/null)

# Each folder is one layer; its include path is its dependency rule, so a layer that
# includes a header above it does not compile (docs/architecture.md):
#   common/          nothing but itself
#   netctl/          common                       (host network changes: delay, offloads)
#   client/measure/  common                       (the run loop, libcurl, results)
#   client/output/   common, client/measure       (summary, tables, JSON, plots)
#   client/store/    common, client/measure       (the results store: SQLite, PostgreSQL)
#   client/          all of the above             (options, scenario files, main)
#   server/content/  common                       (the RAM region, digests, ranges, conditionals, paths)
#   server/guard/    common                       (deadlines, strict parsing, per-address limits, quotas, ACLs, refusal log)
#   server/observe/  common                       (transfer records, evidence, metrics, access log, CPU budget)
#   server/run/      common, content, guard, observe  (config, server state and life cycle, reload, privileges, TLS)
#   server/http/     all of the server layers     (libmicrohttpd callbacks, routes, replies, its quirks)
#   server/          all of the above             (main.c only)
#   lab/delayline/   common
INC_common         := -Icommon
INC_netctl         := -Icommon -Inetctl
INC_client/measure := -Icommon -Iclient/measure
INC_client/output  := -Icommon -Iclient/measure -Iclient/output
INC_client/store   := -Icommon -Iclient/measure -Iclient/store
INC_client         := -Icommon -Inetctl -Iclient/measure -Iclient/output -Iclient/store -Iclient
SERVER_LAYERS      := content guard observe run http
INC_server/content := -Icommon -Iserver/content
INC_server/guard   := -Icommon -Iserver/guard
INC_server/observe := -Icommon -Iserver/observe
INC_server/run     := -Icommon -Iserver/content -Iserver/guard -Iserver/observe -Iserver/run
INC_server/http    := $(INC_server/run) -Iserver/http
INC_server         := $(INC_server/http)
INC_bench          := -Icommon -Iclient/measure -Iclient/store
INC_lab/delayline  := -Icommon -Ilab/delayline
INC_fuzz           := -Ifuzz -Icommon $(INC_server) -Inetctl -Iclient/measure -Iclient/output -Iclient/store -Iclient
INC_TESTS          := -Itests/unit -Icommon $(INC_server) -Inetctl -Iclient/measure -Iclient/output -Iclient/store \
                      -Iclient -Ilab/delayline

COMMON_SRC := $(sort $(wildcard common/*.c))
SERVER_SRC := $(sort $(wildcard server/*.c $(patsubst %,server/%/*.c,$(SERVER_LAYERS))))
NETCTL_SRC := $(sort $(wildcard netctl/*.c))
CLIENT_SRC := $(sort $(wildcard client/*.c client/measure/*.c client/output/*.c client/store/*.c))
DELAY_SRC  := $(sort $(wildcard lab/delayline/*.c))
UNIT_SRC   := $(sort $(shell find tests/unit -name 'test_*.c'))
FUZZ_SRC   := $(sort $(wildcard fuzz/fuzz_*.c))

obj = $(patsubst %.c,$(BUILD)/%.o,$(1))

COMMON_OBJ := $(call obj,$(COMMON_SRC))
SERVER_OBJ := $(call obj,$(filter-out server/main.c,$(SERVER_SRC)))

# debitd's front page: the files of server/http/www/ as C arrays (tools/embed, with xxd),
# compiled into libserver.a (served by server/http/http_www.c).
WWW_FILES  := $(sort $(wildcard server/http/www/*))
WWW_GEN    := $(BUILD)/gen/www_assets.c
SERVER_OBJ += $(BUILD)/gen/www_assets.o
$(WWW_GEN): tools/embed $(WWW_FILES)
	@mkdir -p $(dir $@)
	tools/embed $(WWW_FILES) >$@.tmp && mv $@.tmp $@
$(BUILD)/gen/www_assets.o: $(WWW_GEN) server/http/http_www.h
	$(CC) $(CPPFLAGS) -Iserver/http $(CFLAGS) -c -o $@ $<
NETCTL_OBJ := $(call obj,$(filter-out netctl/main.c,$(NETCTL_SRC)))
CLIENT_OBJ := $(call obj,$(filter-out client/main.c,$(CLIENT_SRC)))
DELAY_OBJ  := $(call obj,$(filter-out lab/delayline/main.c,$(DELAY_SRC)))

LIBCOMMON := $(BUILD)/libcommon.a
LIBSERVER := $(BUILD)/libserver.a
LIBNETCTL := $(BUILD)/libnetctl.a
LIBCLIENT := $(BUILD)/libclient.a
LIBDELAY  := $(BUILD)/libdelay.a

PROGS := $(BUILD)/debitd $(BUILD)/debit $(BUILD)/debit-delayline
ifneq ($(wildcard netctl/main.c),)
PROGS += $(BUILD)/debit-netctl
endif
UNIT_BINS := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(UNIT_SRC))
FUZZ_BINS := $(patsubst fuzz/%.c,$(BUILD)/%,$(FUZZ_SRC))

.PHONY: all test check-asan bench demo deps install uninstall deb clean unit-bins fuzz fuzz-bins
all: $(PROGS)

PC_common         := $(PKGS_COMMON)
PC_netctl         := $(PKGS_COMMON) $(PKGS_NETCTL)
PC_client/measure := $(PKGS_COMMON) libcurl libssl libcrypto
PC_client/output  := $(PKGS_COMMON) libcurl
PC_client/store   := $(PKGS_COMMON) $(PKGS_STORE)
PC_client         := $(PKGS_COMMON) $(PKGS_CLIENT) $(PKGS_NETCTL) $(PKGS_STORE)
PC_server         := $(PKGS_COMMON) $(PKGS_SERVER)
$(foreach l,$(SERVER_LAYERS),$(eval PC_server/$(l) := $(PC_server)))
PC_lab/delayline  := $(PKGS_COMMON) $(PKGS_DELAY)
PC_bench          := $(PKGS_COMMON) $(PKGS_STORE)
PC_fuzz           := $(PKGS_ALL)

# The folder of a source file, without the trailing slash: "client/measure".
srcdir = $(patsubst %/,%,$(dir $(1)))

$(BUILD)/tests/%.o: tests/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(INC_TESTS) $(call pc_cflags,$(PKGS_ALL) cmocka) $(CFLAGS) -c -o $@ $<

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(INC_$(call srcdir,$<)) $(call pc_cflags,$(PC_$(call srcdir,$<))) $(CFLAGS) -c -o $@ $<

$(LIBCOMMON): $(COMMON_OBJ)
$(LIBSERVER): $(SERVER_OBJ)
$(LIBNETCTL): $(NETCTL_OBJ)
$(LIBCLIENT): $(CLIENT_OBJ)
$(LIBDELAY):  $(DELAY_OBJ)
$(BUILD)/lib%.a:
	@mkdir -p $(dir $@)
	rm -f $@
	$(AR) rcs $@ $^

# server/http/mhd_compat.c defines setsockopt() so that libmicrohttpd's cork and no-delay calls
# reach it (tcp_nopush), and sendfile64() (the sendfile steps): exported explicitly, not only
# because a linked library happens to use them.
EXPORT_NOPUSH := -Wl,--export-dynamic-symbol=setsockopt -Wl,--export-dynamic-symbol=sendfile64

$(BUILD)/debitd: $(BUILD)/server/main.o $(LIBSERVER) $(LIBCOMMON)
	$(CC) $(LDFLAGS) $(EXPORT_NOPUSH) -o $@ $^ $(call pc_libs,$(PKGS_SERVER) $(PKGS_COMMON)) $(LIBS_WSLAY) -lm

$(BUILD)/debit: $(BUILD)/client/main.o $(LIBCLIENT) $(LIBNETCTL) $(LIBCOMMON)
	$(CC) $(LDFLAGS) -o $@ $^ $(call pc_libs,$(PKGS_CLIENT) $(PKGS_NETCTL) $(PKGS_STORE) $(PKGS_COMMON)) $(LIBS_WSLAY) -lm

$(BUILD)/debit-netctl: $(BUILD)/netctl/main.o $(LIBNETCTL) $(LIBCOMMON)
	$(CC) $(LDFLAGS) -o $@ $^ $(call pc_libs,$(PKGS_NETCTL) $(PKGS_COMMON)) -lm

$(BUILD)/debit-delayline: $(BUILD)/lab/delayline/main.o $(LIBDELAY) $(LIBCOMMON)
	$(CC) $(LDFLAGS) -o $@ $^ $(call pc_libs,$(PKGS_DELAY) $(PKGS_COMMON)) -lm

# debitd's configuration path without -c is compiled in: main.o is rebuilt when
# SYSCONFDIR changes (the stamp's name carries the value).
SYSCONF_STAMP := $(BUILD)/sysconfdir$(subst /,-,$(SYSCONFDIR)).stamp
$(BUILD)/server/main.o: CPPFLAGS += -DDEBITD_DEFAULT_CONFIG='"$(SYSCONFDIR)/debit/debitd.conf"'
$(BUILD)/server/main.o: $(SYSCONF_STAMP)
$(SYSCONF_STAMP):
	@mkdir -p $(dir $@)
	@rm -f $(BUILD)/sysconfdir*.stamp
	@touch $@

# Unit tests link the programs' libraries (all but main.c) and cmocka.
$(BUILD)/tests/%: $(BUILD)/tests/unit/%.o $(LIBSERVER) $(LIBCLIENT) $(LIBNETCTL) $(LIBDELAY) $(LIBCOMMON)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $(EXPORT_NOPUSH) -o $@ $^ $(call pc_libs,$(PKGS_ALL) cmocka) $(LIBS_WSLAY) -lm

# debitd whose setsockopt() libmicrohttpd cannot reach (tcp_nopush's fallback, checked by
# tests/e2e/server_nopush.sh): a build where the interposition is not in effect.
NOINTERPOSE := $(BUILD)/tests/debitd-nointerpose
$(NOINTERPOSE): $(BUILD)/server/main.o $(LIBSERVER) $(LIBCOMMON) tests/lib/hide-setsockopt.ver
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -Wl,--version-script=tests/lib/hide-setsockopt.ver -o $@ $(filter-out %.ver,$^) \
	  $(call pc_libs,$(PKGS_SERVER) $(PKGS_COMMON)) $(LIBS_WSLAY) -lm

unit-bins: $(UNIT_BINS) $(NOINTERPOSE)

# bench/store.sh's measuring tool (not installed).
$(BUILD)/store-bench: $(BUILD)/bench/store_bench.o $(LIBCLIENT) $(LIBNETCTL) $(LIBCOMMON)
	$(CC) $(LDFLAGS) -o $@ $^ $(call pc_libs,$(PKGS_CLIENT) $(PKGS_NETCTL) $(PKGS_STORE) $(PKGS_COMMON)) $(LIBS_WSLAY) -lm

# Fuzzing (docs/fuzzing.md). Every fuzz/fuzz_NAME.c is a libFuzzer harness linked with the
# programs' libraries, all built by clang with the fuzzer's coverage, ASan and UBSan into
# build/fuzz; fuzz/run runs each FUZZ_SECONDS on its seed corpus fuzz/corpus/NAME/ and
# fails on any crash, leak, UB or timeout (the input is kept in build/fuzz/crashes/).
FUZZ_SECONDS ?= 30
FUZZ_SAN := -fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
$(BUILD)/fuzz_%: $(BUILD)/fuzz/fuzz_%.o $(LIBSERVER) $(LIBCLIENT) $(LIBNETCTL) $(LIBCOMMON)
	$(CC) $(LDFLAGS) -fsanitize=fuzzer -o $@ $^ $(call pc_libs,$(PKGS_ALL)) $(LIBS_WSLAY) -lm

fuzz-bins: $(FUZZ_BINS)

fuzz: deps
	@$(MAKE) --no-print-directory BUILD=build/fuzz CC=clang OPT=-O1 SAN_FLAGS="$(FUZZ_SAN)" fuzz-bins
	@fuzz/run build/fuzz $(FUZZ_SECONDS)

# tools/deps installs what is missing (only as root; elsewhere it checks and explains).
deps:
	@tools/deps

# M-Lab's ndt7 client from npm (pinned) for server_ndt7.sh, fetched as the browser tests
# fetch theirs; without npm or the registry that one check skips, saying why.
NDT7_JS_FETCH = @NDT7_JS=$(CURDIR)/$(BUILD)/ndt7-js tools/ndt7-js >/dev/null 2>&1 || \
  echo "make: tools/ndt7-js could not fetch @m-lab/ndt7: server_ndt7.sh will skip its check"

test: deps
	@$(MAKE) --no-print-directory all unit-bins
	$(NDT7_JS_FETCH)
	@BUILD=$(BUILD) tests/run

check-asan: deps
	@$(MAKE) --no-print-directory BUILD=build/asan OPT=-O1 \
	  SAN_FLAGS="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined" \
	  all unit-bins
	$(subst $(BUILD),build/asan,$(NDT7_JS_FETCH))
	@# Reports go to files too, so that a daemon's report (whose stderr a test may not
	@# read) still fails the run.
	@d=$$(mktemp -d /tmp/debit-asan.XXXXXX); \
	BUILD=build/asan ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:log_path=$$d/asan \
	  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1:log_path=$$d/ubsan tests/run; rc=$$?; \
	if [ -n "$$(ls -A $$d)" ]; then echo "check-asan: sanitizer reports in $$d:"; head -n 40 $$d/*; rc=1; \
	else rmdir $$d; fi; exit $$rc

bench: deps all
	@BUILD=$(BUILD) bench/run

demo: deps all
	@BUILD=$(BUILD) tools/demo

# Configuration files go through tools/conffile: one an operator edited is never
# overwritten (the new one lands beside it as FILE.dist) nor removed by uninstall.
MAN_PAGES := $(sort $(wildcard man/*.[158]))
install: all
	install -d $(DESTDIR)$(SBINDIR) $(DESTDIR)$(BINDIR) $(DESTDIR)$(SYSCONFDIR)/debit \
	  $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man5 $(DESTDIR)$(MANDIR)/man8 \
	  $(DESTDIR)$(UNITDIR) $(DESTDIR)$(COMPLDIR) $(DESTDIR)$(LOGROTDIR)
	install -m 0755 $(BUILD)/debitd $(DESTDIR)$(SBINDIR)/debitd
	install -m 0755 $(BUILD)/debit $(DESTDIR)$(BINDIR)/debit
	for p in debit-netctl debit-delayline; do \
	  if [ -x $(BUILD)/$$p ]; then install -m 0755 $(BUILD)/$$p $(DESTDIR)$(SBINDIR)/$$p; fi; done
	for f in etc/*.conf; do tools/conffile install $$f $(DESTDIR)$(SYSCONFDIR)/debit/$${f#etc/}; done
	tools/conffile install etc/debitd.logrotate $(DESTDIR)$(LOGROTDIR)/debitd
	for m in $(MAN_PAGES); do install -m 0644 $$m $(DESTDIR)$(MANDIR)/man$${m##*.}/; done
	sed 's|/usr/sbin/|$(SBINDIR)/|g' etc/debitd.service >$(DESTDIR)$(UNITDIR)/debitd.service
	chmod 0644 $(DESTDIR)$(UNITDIR)/debitd.service
	for u in debit-probe.service debit-probe.timer; do \
	  sed 's|/usr/bin/|$(BINDIR)/|g; s|/etc/debit/|$(SYSCONFDIR)/debit/|g' etc/$$u >$(DESTDIR)$(UNITDIR)/$$u; \
	  chmod 0644 $(DESTDIR)$(UNITDIR)/$$u; done
	tools/conffile install etc/probe.conf.example $(DESTDIR)$(SYSCONFDIR)/debit/probe.conf.example
	install -m 0644 etc/completion/debit etc/completion/debitd $(DESTDIR)$(COMPLDIR)/

uninstall:
	rm -f $(DESTDIR)$(SBINDIR)/debitd $(DESTDIR)$(BINDIR)/debit \
	  $(DESTDIR)$(SBINDIR)/debit-netctl $(DESTDIR)$(SBINDIR)/debit-delayline \
	  $(DESTDIR)$(UNITDIR)/debitd.service $(DESTDIR)$(COMPLDIR)/debit $(DESTDIR)$(COMPLDIR)/debitd \
	  $(DESTDIR)$(UNITDIR)/debit-probe.service $(DESTDIR)$(UNITDIR)/debit-probe.timer
	for m in $(MAN_PAGES); do rm -f $(DESTDIR)$(MANDIR)/man$${m##*.}/$${m#man/}; done
	for f in etc/*.conf; do tools/conffile remove $$f $(DESTDIR)$(SYSCONFDIR)/debit/$${f#etc/}; done
	tools/conffile remove etc/debitd.logrotate $(DESTDIR)$(LOGROTDIR)/debitd
	tools/conffile remove etc/probe.conf.example $(DESTDIR)$(SYSCONFDIR)/debit/probe.conf.example
	rmdir $(DESTDIR)$(SYSCONFDIR)/debit 2>/dev/null || true

# The package is built from its own tree (PREFIX=/usr compiles /etc/debit/debitd.conf in)
# and staged with make install; tools/mkdeb adds the maintainer scripts (docs/deploy.md).
DEB_BUILD := $(BUILD)/deb
deb:
	@$(MAKE) --no-print-directory BUILD=$(DEB_BUILD) PREFIX=/usr all
	rm -rf $(DEB_BUILD)/root
	@$(MAKE) --no-print-directory BUILD=$(DEB_BUILD) PREFIX=/usr DESTDIR=$(abspath $(DEB_BUILD))/root install >/dev/null
	tools/mkdeb $(DEB_BUILD)/root $(VERSION) $(BUILD)

clean:
	rm -rf build

-include $(shell find $(BUILD) -name '*.d' -type f 2>/dev/null)
