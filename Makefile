# pkgtool — build, test and demo entry points.
#
#   make demo    build a release binary and run scripts/demo.sh
#   make test    build (debug) and run the test suite
#   make help    list every target
#
# Builds are quiet (`swift build -q`): they print nothing unless they fail, and then the
# compiler's errors. Other long steps write a log under build/logs/ and show its tail on failure.

SWIFT             ?= swift
# Release builds link Swift's runtime and Foundation statically on Linux: measured on this
# machine, start-up went from 17.3 to 8.5 ms (`pkgtool --version`) and every command's peak RSS
# down by 5.5 MiB (the shared libraries' pages it touches). RELEASE_FLAGS= builds dynamically.
# The test build stays dynamic: swift-testing has no static library.
RELEASE_FLAGS     ?= $(if $(filter Linux,$(shell uname -s)),--static-swift-stdlib,)
SWIFT_BUILD_FLAGS ?=
SWIFT_TEST_FLAGS  ?= --parallel
# Suites that hold a thread for a long time (building a package against PkgKit alone, killing
# extracts mid-install): run on their own, so that they cannot starve the network tests, which
# await on Swift's cooperative threads (as many as cores: two here), into their time limits.
LONG_SUITES       := PortabilityTests|ExtractFaultTests
# Suites that fill a URLSession's delegate queue, which on Linux holds the one queue every session
# of the process runs on: alone, so that they trip no other test's idle timeout (and no long suite
# holds the threads their awaits need).
QUEUE_SUITES      := BackPressureTests
# Suites whose time-outs and retries are measured on the clock (idle timeouts, slow servers):
# run by themselves after the others, so that tests blocking a thread on a child process cannot
# hold up their awaits (a 0.5 s idle timeout took 28 s under the full parallel run).
NETWORK_SUITES    := CatalogFetchTests|NginxDownloadTests|ResumableDownloadTests|SyncCommandTests
PREFIX            ?= /usr/local
BINDIR            ?= $(PREFIX)/bin
DATADIR           ?= $(PREFIX)/share
MANDIR            ?= $(DATADIR)/man
BASH_COMPLETION_DIR ?= $(DATADIR)/bash-completion/completions
ZSH_COMPLETION_DIR  ?= $(DATADIR)/zsh/site-functions
FISH_COMPLETION_DIR ?= $(DATADIR)/fish/vendor_completions.d
DESTDIR           ?=
INSTALL           ?= install

RELEASE_BIN := .build/release/pkgtool
# The binary `make install` installs, and whose completion scripts it writes. Give another one
# (PKGTOOL_BIN=.build/debug/pkgtool) to install without building.
PKGTOOL_BIN ?= $(RELEASE_BIN)
# The man page, made by swift-argument-parser's generate-manual plugin (`make man`).
MAN_CONFIG  ?= release
MANPAGE     ?= .build/plugins/GenerateManual/outputs/pkgtool/pkgtool.1
COMPLETIONS_DIR ?= build/completions
DOCS_DIR    := build/docs
QUIETLY     := bash scripts/quietly.sh
# The one place the version is written is Sources/PkgKit/Support/Version.swift.
VERSION     := $(shell sed -n 's/.*static let current = "\(.*\)".*/\1/p' Sources/PkgKit/Support/Version.swift)

.DEFAULT_GOAL := build

.PHONY: help deps build test demo man completions install uninstall docs clean bench fuzz

help:
	@echo "pkgtool $(VERSION) make targets:"
	@echo "  deps         install missing system packages (Debian: apt-get, via sudo when not root)"
	@echo "  build        release build (default): $(RELEASE_BIN)  [RELEASE_FLAGS=... SWIFT_BUILD_FLAGS=...]"
	@echo "  test         debug build of pkgtool, its man page, then swift test  [SWIFT_TEST_FLAGS=...]"
	@echo "  demo         build, then run scripts/demo.sh on Samples/ (output in build/)"
	@echo "  man          the man page, by swift-argument-parser's generate-manual plugin: $(MANPAGE)"
	@echo "  install      build, then install pkgtool, its man page and bash/zsh/fish completions"
	@echo "               under \$$(DESTDIR)\$$(PREFIX) (PREFIX=$(PREFIX)); PKGTOOL_BIN=... installs that binary unbuilt"
	@echo "  uninstall    remove what install installed"
	@echo "  docs         PkgKit's DocC documentation: $(DOCS_DIR)/PkgKit.doccarchive"
	@echo "  clean        remove .build and build/"
	@echo "  bench        build, then run bench/run.sh (pkgtool vs bsdtar)"
	@echo "  fuzz         run scripts/fuzz.sh"
	@echo "  soak         chaos soak of sync: 300 syncs against a faulty loopback server, at most 10 minutes  [SEED=N]"

deps:
	@bash scripts/deps.sh

build: deps
	@echo "==> Building pkgtool (release) into $(RELEASE_BIN). A first build also compiles swift-crypto,"
	@echo "    swift-argument-parser and swift-system: about 10 minutes on 2 cores; later builds take seconds."
	@$(SWIFT) build -c release -q --product pkgtool $(RELEASE_FLAGS) $(SWIFT_BUILD_FLAGS)

test: deps
	@echo "==> Building pkgtool and the tests (debug). A first build also compiles swift-crypto,"
	@echo "    swift-argument-parser and swift-system: about 6 minutes on 2 cores; later builds take seconds."
	@$(SWIFT) build --build-tests -q $(SWIFT_BUILD_FLAGS)
	@$(MAKE) --no-print-directory man MAN_CONFIG=debug
	@echo "==> Running the test suite (a few minutes: end-to-end tests run the binary on real packages)"
	@$(SWIFT) test --skip-build $(SWIFT_TEST_FLAGS) --skip '$(LONG_SUITES)|$(QUEUE_SUITES)|$(NETWORK_SUITES)'
	@$(SWIFT) test --skip-build $(SWIFT_TEST_FLAGS) --filter '$(LONG_SUITES)'
	@$(SWIFT) test --skip-build $(SWIFT_TEST_FLAGS) --filter '$(QUEUE_SUITES)'
	@$(SWIFT) test --skip-build $(SWIFT_TEST_FLAGS) --filter '$(NETWORK_SUITES)'

demo: build
	@echo "==> Running scripts/demo.sh with $(RELEASE_BIN)"
	@PKGTOOL=$(RELEASE_BIN) bash scripts/demo.sh

# The plugin builds the package's products in MAN_CONFIG (nothing new after `make build` or
# `make test`), then its own generate-manual tool (once, about half a minute).
man:
	@echo "==> Writing the man page with swift-argument-parser's generate-manual plugin ($(MAN_CONFIG) build)"
	@$(QUIETLY) build/logs/man.log $(SWIFT) package plugin generate-manual --configuration $(MAN_CONFIG)
	@test -s $(MANPAGE) || { echo "man: the plugin wrote no $(MANPAGE)" >&2; exit 1; }

completions:
	@mkdir -p $(COMPLETIONS_DIR)
	@for shell in bash zsh fish; do \
	    $(PKGTOOL_BIN) --generate-completion-script $$shell > $(COMPLETIONS_DIR)/pkgtool.$$shell || exit 1; \
	done

# Builds the release binary and the man page first, unless PKGTOOL_BIN names another binary.
install: $(if $(filter $(RELEASE_BIN),$(PKGTOOL_BIN)),build man) completions
	@echo "==> Installing pkgtool $(VERSION), its man page and shell completions under $(DESTDIR)$(PREFIX)"
	@test -s $(MANPAGE) || { echo "install: no man page at $(MANPAGE): run 'make man' first" >&2; exit 1; }
	$(INSTALL) -d "$(DESTDIR)$(BINDIR)" "$(DESTDIR)$(MANDIR)/man1" "$(DESTDIR)$(BASH_COMPLETION_DIR)" \
	    "$(DESTDIR)$(ZSH_COMPLETION_DIR)" "$(DESTDIR)$(FISH_COMPLETION_DIR)"
	$(INSTALL) -m 0755 $(PKGTOOL_BIN) "$(DESTDIR)$(BINDIR)/pkgtool"
	$(INSTALL) -m 0644 $(MANPAGE) "$(DESTDIR)$(MANDIR)/man1/pkgtool.1"
	$(INSTALL) -m 0644 $(COMPLETIONS_DIR)/pkgtool.bash "$(DESTDIR)$(BASH_COMPLETION_DIR)/pkgtool"
	$(INSTALL) -m 0644 $(COMPLETIONS_DIR)/pkgtool.zsh "$(DESTDIR)$(ZSH_COMPLETION_DIR)/_pkgtool"
	$(INSTALL) -m 0644 $(COMPLETIONS_DIR)/pkgtool.fish "$(DESTDIR)$(FISH_COMPLETION_DIR)/pkgtool.fish"

uninstall:
	rm -f "$(DESTDIR)$(BINDIR)/pkgtool" "$(DESTDIR)$(MANDIR)/man1/pkgtool.1" \
	    "$(DESTDIR)$(BASH_COMPLETION_DIR)/pkgtool" "$(DESTDIR)$(ZSH_COMPLETION_DIR)/_pkgtool" \
	    "$(DESTDIR)$(FISH_COMPLETION_DIR)/pkgtool.fish"

# swift-docc-plugin: symbol graphs from a debug build of PkgKit, then docc. Broken links fail it.
docs:
	@echo "==> Building PkgKit's documentation with DocC into $(DOCS_DIR)/PkgKit.doccarchive"
	@echo "    (about half a minute once pkgtool is built; a first run also builds the plugin's tools)"
	@mkdir -p $(DOCS_DIR)
	@rm -rf $(DOCS_DIR)/PkgKit.doccarchive
	@$(QUIETLY) build/logs/docs.log $(SWIFT) package --allow-writing-to-directory $(DOCS_DIR) \
	    generate-documentation --target PkgKit --output-path $(DOCS_DIR)/PkgKit.doccarchive --warnings-as-errors
	@echo "    done: $(DOCS_DIR)/PkgKit.doccarchive"

clean:
	rm -rf .build build

bench: build
	@test -f bench/run.sh || { echo "bench/run.sh does not exist yet" >&2; exit 1; }
	bash bench/run.sh
	bash bench/sync.sh

fuzz:
	@test -f scripts/fuzz.sh || { echo "scripts/fuzz.sh does not exist yet" >&2; exit 1; }
	bash scripts/fuzz.sh

# The chaos soak (Tests/Soak, the work in Tests/Support/Soak.swift): 300 runs of the debug
# pkgtool sync against a loopback server that picks faults from a seed, SIGTERM and SIGKILL at
# random moments, SPEC section 7's invariants checked after every run. It stops starting runs
# after 9 minutes and exits non-zero on any violation; SEED=N replays the soak of seed N.
.PHONY: soak
soak: deps
	@echo "==> Building pkgtool and pkgsoak (debug)"
	@$(SWIFT) build -q --product pkgtool $(SWIFT_BUILD_FLAGS)
	@$(SWIFT) build -q --product pkgsoak $(SWIFT_BUILD_FLAGS)
	@.build/debug/pkgsoak --pkgtool .build/debug/pkgtool $(if $(SEED),--seed $(SEED),)
