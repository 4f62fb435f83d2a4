# pkgtool — build, test and demo entry points.
#
#   make demo    build a release binary and run scripts/demo.sh
#   make test    build (debug) and run the test suite
#   make help    list every target
#
# Builds are quiet (`swift build -q`, scripts/swift-build.sh): they print nothing unless they fail,
# and then the compiler's errors. Other long steps (installing packages, fetching dependencies,
# each pass of the tests) write a log under build/logs/ and show what failed, if anything.

SWIFT             ?= swift
# Release builds link Swift's runtime and Foundation statically on Linux: start-up takes half the
# time and every command's peak RSS drops by the shared libraries' pages it would touch
# (bench/PROFILES.md). RELEASE_FLAGS= builds dynamically.
# The test build stays dynamic: swift-testing has no static library.
RELEASE_FLAGS     ?= $(if $(filter Linux,$(shell uname -s)),--static-swift-stdlib,)
SWIFT_BUILD_FLAGS ?=
SWIFT_TEST_FLAGS  ?= --parallel
PREFIX            ?= /usr/local
BINDIR            ?= $(PREFIX)/bin
DATADIR           ?= $(PREFIX)/share
MANDIR            ?= $(DATADIR)/man
BASH_COMPLETION_DIR ?= $(DATADIR)/bash-completion/completions
ZSH_COMPLETION_DIR  ?= $(DATADIR)/zsh/site-functions
FISH_COMPLETION_DIR ?= $(DATADIR)/fish/vendor_completions.d
DESTDIR           ?=
INSTALL           ?= install
# `make install` strips the copy it installs (its symbol table and debug information, about half
# of a release binary, are of no use to a user); the binary under .build/ keeps them for a debugger.
# INSTALL_STRIP= installs it as built.
INSTALL_STRIP     ?= -s

RELEASE_BIN := .build/release/pkgtool
DEBUG_BIN   := .build/debug/pkgtool
# The binary `make install` installs, and whose completion scripts it writes. Give another one
# (PKGTOOL_BIN=.build/debug/pkgtool) to install without building.
PKGTOOL_BIN ?= $(RELEASE_BIN)
# The man page (`make man`): swift-argument-parser's generate-manual tool, built in MAN_CONFIG
# with that configuration's own flags, reads the help of that configuration's pkgtool. (Its
# command plugin would rebuild the whole package without RELEASE_FLAGS: the release binary would
# lose its static linking, and `make build` and `make man` would rebuild each other.)
MAN_CONFIG  ?= release
MAN_FLAGS   := $(if $(filter release,$(MAN_CONFIG)),$(RELEASE_FLAGS)) $(SWIFT_BUILD_FLAGS)
MANPAGE     ?= build/man/pkgtool.1
COMPLETIONS_DIR ?= build/completions
DOCS_DIR    := build/docs
QUIETLY     := bash scripts/quietly.sh
BUILDING    := bash scripts/swift-build.sh
TESTING     := bash scripts/run-tests.sh
# The one place the version is written is Sources/PkgKit/Support/Version.swift.
VERSION     := $(shell sed -n 's/.*static let current = "\(.*\)".*/\1/p' Sources/PkgKit/Support/Version.swift)

.DEFAULT_GOAL := build

.PHONY: help deps test-deps build test demo man completions install uninstall docs clean bench fuzz

help:
	@echo "pkgtool $(VERSION) make targets:"
	@echo "  deps         install the missing system packages a build needs (Debian: apt-get, via sudo when not root)"
	@echo "  test-deps    deps, and what the tests run: bsdtar, zip, python3, nginx (its service left disabled), openssl"
	@echo "  build        release build (default): $(RELEASE_BIN)  [RELEASE_FLAGS=... SWIFT_BUILD_FLAGS=...]"
	@echo "  test         debug build of pkgtool, its man page, then swift test  [SWIFT_TEST_FLAGS=...]"
	@echo "  demo         build, then run scripts/demo.sh on Samples/ (output in build/)"
	@echo "  man          the man page, by swift-argument-parser's generate-manual, from MAN_CONFIG's build (release): $(MANPAGE)"
	@echo "  install      build, then install pkgtool (stripped), its man page and bash/zsh/fish completions"
	@echo "               under \$$(DESTDIR)\$$(PREFIX) (PREFIX=$(PREFIX)); PKGTOOL_BIN=... installs that binary unbuilt"
	@echo "  uninstall    remove what install installed"
	@echo "  docs         PkgKit's DocC documentation: $(DOCS_DIR)/PkgKit.doccarchive"
	@echo "  docs-reference  docs/diagnostics.md, from the table pkgtool explain prints (debug build)"
	@echo "  clean        remove .build and build/"
	@echo "  bench        build, then bench/run.sh (pkgtool vs bsdtar), sync.sh (sync vs curl + extract), chunks.sh (chunked deltas), transport.sh, catalog.sh (catalog checks: bytes, time, memory)"
	@echo "  fuzz         run scripts/fuzz.sh"
	@echo "  soak         chaos soak of sync: 300 syncs against a faulty loopback server, at most 10 minutes  [SEED=N]"

deps:
	@bash scripts/deps.sh build

test-deps:
	@bash scripts/deps.sh test

build: deps
	@$(BUILDING) "pkgtool (release) into $(RELEASE_BIN)" $(RELEASE_BIN) 12 -- \
	    $(SWIFT) build -c release -q --product pkgtool $(RELEASE_FLAGS) $(SWIFT_BUILD_FLAGS)

# The whole suite in one pass, said before it runs; its full output goes to build/logs/.
test: test-deps
	@$(BUILDING) "pkgtool and the tests (debug)" $(DEBUG_BIN) 10 -- $(SWIFT) build --build-tests -q $(SWIFT_BUILD_FLAGS)
	@$(MAKE) --no-print-directory man MAN_CONFIG=debug
	@$(TESTING) suite "Running the test suite (a few minutes: end-to-end tests run the binary on real packages and real servers)" -- \
	    $(SWIFT) test --skip-build $(SWIFT_TEST_FLAGS)

demo: build
	@echo "==> Running scripts/demo.sh with $(RELEASE_BIN)"
	@PKGTOOL=$(RELEASE_BIN) bash scripts/demo.sh

# MAN_CONFIG's pkgtool must be built: `make build` (release) or `make test` (debug) does it.
man: $(if $(filter release,$(MAN_CONFIG)),build)
	@echo "==> Writing the man page ($(MANPAGE)) from the $(MAN_CONFIG) build's help"
	@test -x .build/$(MAN_CONFIG)/pkgtool || { echo "man: no .build/$(MAN_CONFIG)/pkgtool: build it first" >&2; exit 1; }
	@$(QUIETLY) build/logs/man.log $(SWIFT) build -c $(MAN_CONFIG) -q --product generate-manual $(MAN_FLAGS)
	@$(QUIETLY) build/logs/man.log bash scripts/man-page.sh .build/$(MAN_CONFIG)/generate-manual .build/$(MAN_CONFIG)/pkgtool $(MANPAGE)

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
	$(INSTALL) -m 0755 $(INSTALL_STRIP) $(PKGTOOL_BIN) "$(DESTDIR)$(BINDIR)/pkgtool"
	$(INSTALL) -m 0644 $(MANPAGE) "$(DESTDIR)$(MANDIR)/man1/pkgtool.1"
	$(INSTALL) -m 0644 $(COMPLETIONS_DIR)/pkgtool.bash "$(DESTDIR)$(BASH_COMPLETION_DIR)/pkgtool"
	$(INSTALL) -m 0644 $(COMPLETIONS_DIR)/pkgtool.zsh "$(DESTDIR)$(ZSH_COMPLETION_DIR)/_pkgtool"
	$(INSTALL) -m 0644 $(COMPLETIONS_DIR)/pkgtool.fish "$(DESTDIR)$(FISH_COMPLETION_DIR)/pkgtool.fish"

uninstall:
	rm -f "$(DESTDIR)$(BINDIR)/pkgtool" "$(DESTDIR)$(MANDIR)/man1/pkgtool.1" \
	    "$(DESTDIR)$(BASH_COMPLETION_DIR)/pkgtool" "$(DESTDIR)$(ZSH_COMPLETION_DIR)/_pkgtool" \
	    "$(DESTDIR)$(FISH_COMPLETION_DIR)/pkgtool.fish"

# PkgKit's symbols, its re-exported layers' included, from a debug build, then docc (scripts/docs.sh).
# Broken links fail it.
docs: deps
	@echo "==> Building PkgKit's documentation with DocC into $(DOCS_DIR)/PkgKit.doccarchive"
	@$(BUILDING) "PkgKit (debug)" $(DEBUG_BIN) 10 -- $(SWIFT) build -q --product pkgtool $(SWIFT_BUILD_FLAGS)
	@mkdir -p $(DOCS_DIR)
	@$(QUIETLY) build/logs/docs.log bash scripts/docs.sh $(DOCS_DIR)/PkgKit.doccarchive
	@echo "    done: $(DOCS_DIR)/PkgKit.doccarchive"

clean:
	rm -rf .build build

# The benchmarks need what the tests need (bsdtar, nginx, curl), and transportbench for the
# HTTP clients' side by side. run.sh and sync.sh move what they are done with into
# bench/work/trash; sync.sh empties it and waits six minutes before timing (bench/before_timing.sh), and
# it is removed here once nothing is timed any more.
bench: build test-deps
	@$(BUILDING) "transportbench (release)" .build/release/transportbench 10 -- \
	    $(SWIFT) build -c release -q --product transportbench $(RELEASE_FLAGS) $(SWIFT_BUILD_FLAGS)
	bash bench/run.sh
	bash bench/sync.sh
	bash bench/chunks.sh
	bash bench/transport.sh
	bash bench/catalog.sh
	rm -rf bench/work/trash

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

# docs/diagnostics.md is generated from the explanations `pkgtool explain` prints, so that the
# two cannot disagree; ExplainTests fails while the committed file is not what this writes.
.PHONY: docs-reference
docs-reference: deps
	@echo "==> Building pkgtool (debug) and writing docs/diagnostics.md"
	@$(SWIFT) build -q --product pkgtool $(SWIFT_BUILD_FLAGS)
	@.build/debug/pkgtool explain --markdown > docs/diagnostics.md.tmp && mv docs/diagnostics.md.tmp docs/diagnostics.md
