# Two commands: `make demo` and `make test`. Each installs missing Debian
# packages, configures build/ once and builds incrementally.
BUILD ?= build
JOBS ?= $(shell nproc)
export CCACHE_DIR ?= $(CURDIR)/.cache/ccache
# Paths relative to the checkout, so clones and worktrees share cache hits.
export CCACHE_BASEDIR ?= $(CURDIR)
export CCACHE_SLOPPINESS = pch_defines,time_macros,include_file_mtime,include_file_ctime

.PHONY: deps configure build demo test bench clean fuzz test-tsan test-sanitize

deps:
	@./scripts/install-deps.sh

$(BUILD)/build.ninja:
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release

configure: deps $(BUILD)/build.ninja

build: configure
	cmake --build $(BUILD) -j $(JOBS)

demo: configure
	cmake --build $(BUILD) -j $(JOBS) --target demo
	$(BUILD)/examples/demo

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

# Three runs. Eager as a user gets it by default: with glibc's allocator,
# then with tcmalloc preloaded (a stronger baseline for large allocations).
# Then eager at its best on this CPU: tcmalloc, OpenBLAS's kernels named for
# the CPU (scripts/openblas-coretype.sh; it cannot be set from inside the
# process) and idle OpenMP workers sleeping instead of spinning.
TCMALLOC = /usr/lib/x86_64-linux-gnu/libtcmalloc_minimal.so.4
bench: configure
	cmake --build $(BUILD) -j $(JOBS) --target thunder_bench
	@echo "### eager as loaded, allocator: glibc malloc"
	$(BUILD)/bench/thunder_bench
	@echo "### eager as loaded, allocator: tcmalloc (LD_PRELOAD=$(TCMALLOC))"
	LD_PRELOAD=$(TCMALLOC) $(BUILD)/bench/thunder_bench
	@echo "### eager configured for this CPU: tcmalloc, OpenBLAS core and thread setting"
	LD_PRELOAD=$(TCMALLOC) OPENBLAS_CORETYPE=$$(scripts/openblas-coretype.sh) \
	  OMP_WAIT_POLICY=PASSIVE $(BUILD)/bench/thunder_bench

clean:
	rm -rf $(BUILD)

# The differential fuzzer, open-ended: make fuzz SECONDS=600
SECONDS ?= 60
fuzz: configure
	cmake --build $(BUILD) -j $(JOBS) --target thunder_fuzz
	THUNDER_CACHE_DIR=$(CURDIR)/$(BUILD)/kernel-cache $(BUILD)/tests/thunder_fuzz --seconds $(SECONDS)

# ThreadSanitizer over the concurrency tests, in its own build folder. Not in
# CI (a second full build); run it before landing changes to the jit state,
# programs or kernels. Intra-op threads are off (libtorch's OpenMP is not
# instrumented, so its workers would be reported), see docs/threads.md.
TSAN_BUILD ?= build-tsan
test-tsan: deps
	cmake -S . -B $(TSAN_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTHUNDER_SANITIZE=thread
	cmake --build $(TSAN_BUILD) -j $(JOBS) --target jit_tests
	cd $(TSAN_BUILD) && OMP_NUM_THREADS=1 TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" \
	  THUNDER_CACHE_DIR=$(CURDIR)/$(TSAN_BUILD)/kernel-cache tests/jit_tests --gtest_filter='Threads.*'

# AddressSanitizer (leak checking on) and UndefinedBehaviorSanitizer (less its
# vptr check, see CMakeLists.txt) over the
# C++ suite, in its own build folder; .ci/run runs it after make test. -O1
# (-O0 for the test code, tests/CMakeLists.txt) and unity batches of 8 files
# (the library's instrumented build in half the time; a clean clone builds
# it once, so the batches cost nothing incrementally) keep the build short;
# generated kernels are not instrumented (their code
# is checked against eager by the suite) and come from make test's kernel
# cache. allocator_may_return_null: an impossible allocation (the fault-
# injection tests make one) returns null and our allocator throws, as
# without ASan. Resident-memory bounds skip themselves (ASan keeps freed
# memory resident on purpose). No suppressions were needed. Each test
# binary runs as a few gtest shards and the OpInfo suite runs once, not again
# on the ATen fallback (why: tests/CMakeLists.txt).
ASAN_BUILD ?= build-asan
SANITIZER_ENV = ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 \
  UBSAN_OPTIONS=print_stacktrace=1
test-sanitize: deps
	cmake -S . -B $(ASAN_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS_RELEASE=-O1 \
	  -DTHUNDER_SANITIZE=address,undefined -DCMAKE_UNITY_BUILD=ON -DCMAKE_UNITY_BUILD_BATCH_SIZE=8 \
	  -DTHUNDER_TEST_KERNEL_CACHE=$(CURDIR)/$(BUILD)/kernel-cache
	cmake --build $(ASAN_BUILD) -j $(JOBS)
	cd $(ASAN_BUILD) && $(SANITIZER_ENV) ctest --output-on-failure -j $(JOBS)
