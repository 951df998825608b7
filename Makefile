# The two commands: `make demo` and `make test`. Both install what is missing, configure and
# build as needed. Other targets: bench, asan, tsan, fuzz, build, bootstrap, clean.
#
# CI=true turns warnings into errors.

CMAKE_FLAGS ?=
ifeq ($(CI),true)
CMAKE_FLAGS += -DCUTOFF_WERROR=ON
endif
CTEST_JOBS ?= $(shell nproc)

.PHONY: all help bootstrap configure build test demo bench asan tsan fuzz clean

all: build

help:
	@sed -n '1,4p' Makefile | sed 's/^# \{0,1\}//'

bootstrap:
	@scripts/bootstrap

configure: bootstrap
	@cmake --preset default $(CMAKE_FLAGS) >/dev/null

build: configure
	@cmake --build --preset default

test: build
	@ctest --preset default -j $(CTEST_JOBS)

# The lab with its defaults on SQLite; `make demo ARGS="--db postgresql://..."` for PostgreSQL.
demo: build
	@build/bin/cutoff lab $(ARGS)

bench: build
	@scripts/run-benchmarks build/bin

asan: bootstrap
	@cmake --preset asan-ubsan $(CMAKE_FLAGS) >/dev/null
	@cmake --build --preset asan-ubsan
	@CUTOFF_TEST_TIME_SCALE=3 ctest --preset asan-ubsan -j $(CTEST_JOBS)

tsan: bootstrap
	@cmake --preset tsan $(CMAKE_FLAGS) >/dev/null
	@cmake --build --preset tsan
	@CUTOFF_TEST_TIME_SCALE=5 ctest --preset tsan -j $(CTEST_JOBS)

clean:
	rm -rf build build-*/

# libFuzzer: build every *_fuzz target with clang and run each for FUZZ_SECONDS.
FUZZ_SECONDS ?= 60
fuzz: bootstrap
	@cmake --preset fuzz >/dev/null
	@cmake --build --preset fuzz
	@scripts/run-fuzzers build-fuzz/bin $(FUZZ_SECONDS)
