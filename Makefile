# hcclprof — see README.md.
GO      ?= go
BIN     ?= bin/hcclprof
PKGS    := ./...
BENCH_DIR ?= $(or $(TMPDIR),/tmp)/hcclprof-bench

.PHONY: build test bench lint demo fuzz clean

build:
	$(GO) build -o $(BIN) ./cmd/hcclprof

test:
	$(GO) test -count=1 $(PKGS)

# Go benchmarks of the hot paths; the big-trace ones need ../shared/realdata and make a
# ~120 MB trace under $(BENCH_DIR) on first use. Then one whole analyze of that rank on
# one core, with its peak RSS, and Python's json.load of the same file for comparison.
bench: build
	HCCLPROF_BENCH_DIR=$(BENCH_DIR) $(GO) test -run '^$$' -bench . -benchmem -cpu 1 $(PKGS)
	@if [ -f $(BENCH_DIR)/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json ]; then \
	  echo "--- hcclprof analyze of the big trace (GOMAXPROCS=1):"; \
	  GOMAXPROCS=1 /usr/bin/env time -f 'wall %e s, peak RSS %M KB' $(BIN) analyze $(BENCH_DIR) --format json >/dev/null || true; \
	  if command -v python3 >/dev/null; then \
	    echo "--- python3 json.load of the same file:"; \
	    python3 -c "import json,time,sys; t=time.time(); json.load(open(sys.argv[1])); print('wall %.2f s' % (time.time()-t))" \
	      $(BENCH_DIR)/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json; \
	  fi; \
	fi

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	  if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet $(PKGS)

# Analyze the bundled sample (a hand-made 2-rank profile in torch_npu's real text layout).
demo: build
	$(BIN) analyze fixtures/samples/torchnpu-2rank

FUZZ_TARGETS := FuzzTraceView FuzzStepTraceCSV FuzzKernelDetails FuzzCommunicationJSON FuzzCommMatrixJSON FuzzProfilerInfo
FUZZTIME ?= 20s

# Each parser's fuzz target in turn (the seeds include the real files when present).
fuzz:
	@for t in $(FUZZ_TARGETS); do \
	  $(GO) test ./parser -run '^$$' -fuzz "^$$t\$$" -fuzztime $(FUZZTIME) -fuzzminimizetime 100x || exit 1; \
	done

clean:
	rm -rf bin
