# hcclprof — see README.md.
GO      ?= go
BIN     ?= bin/hcclprof
PKGS    := ./...
BENCH_DIR ?= $(or $(TMPDIR),/tmp)/hcclprof-bench

.PHONY: build install dist test test-all judge bench scale scale-summaries scale-gathered scale-trace lint demo fuzz clean

build:
	$(GO) build -ldflags "-X main.version=$(VERSION) -X main.commit=$(COMMIT)" -o $(BIN) ./cmd/hcclprof

install:
	$(GO) install ./cmd/hcclprof

# Static release binaries (no cgo: the SQLite driver is pure Go) under dist/, named
# hcclprof-OS-ARCH, with the version and commit stamped (hcclprof --version).
VERSION ?= $(shell git describe --always --dirty 2>/dev/null || echo devel)
COMMIT  ?= $(shell c=$$(git rev-parse --short=12 HEAD 2>/dev/null) && { git diff --quiet HEAD 2>/dev/null && echo $$c || echo $$c-dirty; })
DIST_PLATFORMS ?= linux/amd64 linux/arm64
dist:
	@mkdir -p dist
	@for p in $(DIST_PLATFORMS); do \
	  os=$${p%/*}; arch=$${p#*/}; echo "dist/hcclprof-$$os-$$arch ($(VERSION), commit $(COMMIT))"; \
	  CGO_ENABLED=0 GOOS=$$os GOARCH=$$arch $(GO) build -trimpath \
	    -ldflags "-s -w -X main.version=$(VERSION) -X main.commit=$(COMMIT)" \
	    -o dist/hcclprof-$$os-$$arch ./cmd/hcclprof || exit 1; \
	done

# The everyday run: -short keeps a representative part of each slow matrix (one
# what-if per knob, the judge on one job of each classic family, the small built-ins) and says
# "-short: ..." where it does. The limit is for a machine busy with other work.
# The test binaries are linked without DWARF (-ldflags=-w): a debugger's tables, which
# no test reads (stack traces and build info stay), and a quarter of the linker's
# time, relinked for every package each run.
TEST_LDFLAGS ?= -w
test:
	$(GO) test -short -count=1 -timeout 30m -ldflags=$(TEST_LDFLAGS) $(PKGS)

# Every case of every matrix (what CI runs). The generator-against-analyzer matrices
# take many minutes on a loaded 2-core machine: the per-package limit is raised from
# go test's 10 minutes.
test-all:
	$(GO) test -count=1 -timeout 30m -ldflags=$(TEST_LDFLAGS) $(PKGS)

# The diagnosis judge: JUDGE_N generated jobs with injected causes (a slow rank or
# host, slow NICs, links or servers, a slow input pipeline, launch gaps, warm-up,
# uneven stages, bubbles, ranks not profiled, healthy jobs), each analysed as
# analyze does and scored against the generator's truth: the confusion matrix,
# precision and recall per cause, localisation and false alarms. A benchmark, not a
# test (make test keeps a sample): about 15 minutes for 360 jobs on two cores.
JUDGE_N ?= 360
JUDGE_SEED ?= 1
judge:
	$(GO) run ./fixtures/judge/cmd/judge -n $(JUDGE_N) -seed $(JUDGE_SEED)

# Go benchmarks of the hot paths; the big-trace ones need ../shared/realdata and make a
# ~120 MB trace under $(BENCH_DIR) on first use. Then one whole analyze of that rank on
# one core, with its peak RSS, and Python's json.load of the same file for comparison.
bench: build
	HCCLPROF_BENCH_DIR=$(BENCH_DIR) $(GO) test -run '^$$' -bench . -benchmem -cpu 1 $(PKGS)
	@echo "--- the big trace from its file on two cores (read in parts):"
	HCCLPROF_BENCH_DIR=$(BENCH_DIR) $(GO) test -run '^$$' -bench 'TraceViewFile' -benchmem -cpu 2 -count 5 ./parser
	@if [ -f $(BENCH_DIR)/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json ]; then \
	  echo "--- hcclprof analyze of the big trace (GOMAXPROCS=1):"; \
	  GOMAXPROCS=1 /usr/bin/env time -f 'wall %e s, peak RSS %M KB' $(BIN) analyze $(BENCH_DIR) --format json >/dev/null || true; \
	  echo "--- the same on all cores:"; \
	  /usr/bin/env time -f 'wall %e s, peak RSS %M KB' $(BIN) analyze $(BENCH_DIR) --format json >/dev/null || true; \
	  if command -v python3 >/dev/null; then \
	    echo "--- python3 json.load of the same file:"; \
	    python3 -c "import json,time,sys; t=time.time(); json.load(open(sys.argv[1])); print('wall %.2f s' % (time.time()-t))" \
	      $(BENCH_DIR)/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json; \
	  fi; \
	fi
	@echo "--- hcclprof gen of 64 ranks × ~100 MB (text export, all cores; ~6.4 GB under $(BENCH_DIR)/gen64, removed after):"
	@rm -rf $(BENCH_DIR)/gen64
	@/usr/bin/env time -f 'wall %e s, peak RSS %M KB' $(BIN) gen fixtures/testdata/gen-64rank-100mb.yaml -o $(BENCH_DIR)/gen64
	@rm -rf $(BENCH_DIR)/gen64
	@echo "--- analyze at scale:"
	@$(MAKE) --no-print-directory scale

# Whole-process time, throughput and peak RSS of analyze on generated clusters of
# SCALE_RANKS ranks (fixtures/testdata/scale-N.yaml, ~1.2 MB a rank; 4096 ranks need
# 5 GB of disk under $(BENCH_DIR): make scale SCALE_RANKS="64 512 4096"), SCALE_RUNS
# runs each for the spread.
SCALE_RANKS ?= 64 512
SCALE_RUNS ?= 3
scale: build
	@for n in $(SCALE_RANKS); do \
	  rm -rf $(BENCH_DIR)/scale$$n; \
	  $(BIN) gen fixtures/testdata/scale-$$n.yaml -o $(BENCH_DIR)/scale$$n >/dev/null || exit 1; \
	  bytes=$$(du -sb $(BENCH_DIR)/scale$$n | cut -f1); \
	  for run in $$(seq $(SCALE_RUNS)); do \
	    /usr/bin/env time -f '%e %M' -o $(BENCH_DIR)/scale.time $(BIN) analyze $(BENCH_DIR)/scale$$n >/dev/null || exit 1; \
	    read wall rss < $(BENCH_DIR)/scale.time; \
	    awk -v n=$$n -v b=$$bytes -v w=$$wall -v r=$$rss -v k=$$run 'BEGIN { printf "%d ranks (%.0f MB), run %d: analyze wall %.2f s, %.0f MB/s, peak RSS %.0f MiB\n", n, b/1e6, k, w, b/1e6/w, r/1024 }'; \
	  done; \
	  rm -rf $(BENCH_DIR)/scale$$n $(BENCH_DIR)/scale.time; \
	done

# One big trace: the benchmarks' real rank repeated TRACE_TIMES times (×240: 489 MB,
# ×960: 1.96 GB under $(BENCH_DIR); needs ../shared/realdata), analyze and summarize
# timed SCALE_RUNS times each, with the trace's size and events per second.
TRACE_TIMES ?= 240 960
scale-trace: build
	@for n in $(TRACE_TIMES); do \
	  rm -rf $(BENCH_DIR)/trace$$n $(BENCH_DIR)/trace$$n.sum; \
	  trace=$$($(GO) run ./internal/benchtrace/repeat -times $$n -o $(BENCH_DIR)/trace$$n) || exit 1; \
	  bytes=$$(stat -c %s $$trace); \
	  for run in $$(seq $(SCALE_RUNS)); do \
	    /usr/bin/env time -f '%e %M' -o $(BENCH_DIR)/scale.time $(BIN) analyze $(BENCH_DIR)/trace$$n >/dev/null || exit 1; \
	    read wall rss < $(BENCH_DIR)/scale.time; \
	    awk -v n=$$n -v b=$$bytes -v w=$$wall -v r=$$rss -v k=$$run 'BEGIN { printf "trace x%d (%.0f MB), run %d: analyze wall %.2f s, %.0f MB/s, peak RSS %.0f MiB\n", n, b/1e6, k, w, b/1e6/w, r/1024 }'; \
	    /usr/bin/env time -f '%e %M' -o $(BENCH_DIR)/scale.time $(BIN) summarize --quiet $(BENCH_DIR)/trace$$n -o $(BENCH_DIR)/trace$$n.sum >/dev/null || exit 1; \
	    read wall rss < $(BENCH_DIR)/scale.time; \
	    awk -v n=$$n -v w=$$wall -v r=$$rss -v k=$$run 'BEGIN { printf "trace x%d, run %d: summarize wall %.2f s, peak RSS %.0f MiB\n", n, k, w, r/1024 }'; \
	  done; \
	  rm -rf $(BENCH_DIR)/trace$$n $(BENCH_DIR)/trace$$n.sum $(BENCH_DIR)/scale.time; \
	done

# The same analyze on 4096 ranks without device timelines (summaries only: ~0.6 GB).
scale-summaries: build
	@rm -rf $(BENCH_DIR)/scale4096s
	@$(BIN) gen fixtures/testdata/scale-4096-summaries.yaml -o $(BENCH_DIR)/scale4096s >/dev/null || exit 1
	@bytes=$$(du -sb $(BENCH_DIR)/scale4096s | cut -f1); \
	for run in $$(seq $(SCALE_RUNS)); do \
	  /usr/bin/env time -f '%e %M' -o $(BENCH_DIR)/scale.time $(BIN) analyze $(BENCH_DIR)/scale4096s >/dev/null || exit 1; \
	  read wall rss < $(BENCH_DIR)/scale.time; \
	  awk -v b=$$bytes -v w=$$wall -v r=$$rss -v k=$$run 'BEGIN { printf "4096 ranks, summaries only (%.0f MB), run %d: analyze wall %.2f s, peak RSS %.0f MiB\n", b/1e6, k, w, r/1024 }'; \
	done
	@rm -rf $(BENCH_DIR)/scale4096s $(BENCH_DIR)/scale.time

# The workflow for clusters too big to copy: summarize each generated cluster of
# SCALE_RANKS ranks (timed once), then analyze the gathered summaries SCALE_RUNS times.
scale-gathered: build
	@for n in $(SCALE_RANKS); do \
	  rm -rf $(BENCH_DIR)/scale$$n $(BENCH_DIR)/gathered$$n; \
	  $(BIN) gen fixtures/testdata/scale-$$n.yaml -o $(BENCH_DIR)/scale$$n >/dev/null || exit 1; \
	  bytes=$$(du -sb $(BENCH_DIR)/scale$$n | cut -f1); \
	  /usr/bin/env time -f '%e %M' -o $(BENCH_DIR)/scale.time $(BIN) summarize --quiet $(BENCH_DIR)/scale$$n -o $(BENCH_DIR)/gathered$$n >/dev/null || exit 1; \
	  read wall rss < $(BENCH_DIR)/scale.time; \
	  sbytes=$$(du -sb $(BENCH_DIR)/gathered$$n | cut -f1); \
	  awk -v n=$$n -v b=$$bytes -v s=$$sbytes -v w=$$wall -v r=$$rss 'BEGIN { printf "%d ranks (%.0f MB): summarize wall %.2f s, peak RSS %.0f MiB; summaries %.1f MB, %.0fx smaller\n", n, b/1e6, w, r/1024, s/1e6, b/s }'; \
	  rm -rf $(BENCH_DIR)/scale$$n; \
	  for run in $$(seq $(SCALE_RUNS)); do \
	    /usr/bin/env time -f '%e %M' -o $(BENCH_DIR)/scale.time $(BIN) analyze $(BENCH_DIR)/gathered$$n >/dev/null || exit 1; \
	    read wall rss < $(BENCH_DIR)/scale.time; \
	    awk -v n=$$n -v w=$$wall -v r=$$rss -v k=$$run 'BEGIN { printf "%d gathered summaries, run %d: analyze wall %.2f s, peak RSS %.0f MiB\n", n, k, w, r/1024 }'; \
	  done; \
	  rm -rf $(BENCH_DIR)/gathered$$n $(BENCH_DIR)/scale.time; \
	done

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	  if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet $(PKGS)

# Analyze the bundled sample (generated by hcclprof gen demo-2server-8rank).
demo: build
	$(BIN) analyze fixtures/samples/demo-2server-8rank

# Every fuzz target in the tree, found rather than listed: the packages whose tests hold
# a func Fuzz*, and in each the targets go test -list names (parser's formats name
# theirs, parser/formats.go). FUZZ_PKGS narrows the packages (FUZZ_PKGS=./parser).
FUZZTIME ?= 20s
FUZZ_PKGS ?= $(shell git grep -l '^func Fuzz' -- '*_test.go' 2>/dev/null | xargs -r -n1 dirname | sort -u | sed 's|^|./|')

# Each fuzz target in turn (the seeds include the real files when present).
fuzz:
	@for p in $(FUZZ_PKGS); do \
	  ts=$$($(GO) test -list '^Fuzz' $$p) || { echo "$$ts"; exit 1; }; \
	  for t in $$(echo "$$ts" | grep '^Fuzz'); do \
	    $(GO) test $$p -run '^$$' -fuzz "^$$t\$$" -fuzztime $(FUZZTIME) -fuzzminimizetime 100x || exit 1; \
	  done; \
	done

clean:
	rm -rf bin dist
