# kmm — see README.md (docs/ for the rest). `make help` lists targets.
SHELL := /bin/bash
GO ?= go
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo 0.1.0-dev)
COMMIT ?= $(shell git rev-parse --short HEAD 2>/dev/null || echo unknown)
LDFLAGS := -X github.com/kmmproject/kmm/pkg/buildinfo.Version=$(VERSION) -X github.com/kmmproject/kmm/pkg/buildinfo.Commit=$(COMMIT)
export CGO_ENABLED := 1
# The real-cluster e2e package runs ~40 tests one after another (outage, interop with MM2, failover);
# its binary gets this bound as a whole.
TEST_TIMEOUT ?= 50m

DIST := dist/kmm-$(VERSION)-linux-amd64

.PHONY: dist help build test test-faults test-sanitize unit test-real lint fmt testbed-up testbed-down testbed-reset testbed-status fetch-kafka clean demo drill bench bench-smoke bench-failover

help: ## list targets
	@grep -hE '^[a-zA-Z_-]+:.*## ' $(MAKEFILE_LIST) | awk 'BEGIN{FS=":.*## "}{printf "  %-16s %s\n", $$1, $$2}'

build: ## build bin/kmm (cgo, bundled librdkafka)
	$(GO) build -ldflags "$(LDFLAGS)" -o bin/kmm ./cmd/kmm

dist: ## release: dist/kmm-<version>-linux-amd64.tar.gz (binary, README, CHANGELOG, deploy/, docs/) and its .sha256
	rm -rf $(DIST) && mkdir -p $(DIST)
	GOOS=linux GOARCH=amd64 $(GO) build -ldflags "-s -w $(LDFLAGS)" -o $(DIST)/kmm ./cmd/kmm
	cp -r README.md CHANGELOG.md deploy $(DIST)/ && mkdir -p $(DIST)/docs && cp docs/*.md docs/*.png $(DIST)/docs/
	tar -C dist -czf $(DIST).tar.gz $(notdir $(DIST))
	cd dist && sha256sum $(notdir $(DIST)).tar.gz > $(notdir $(DIST)).tar.gz.sha256 && sha256sum $(notdir $(DIST))/kmm > $(notdir $(DIST)).sha256
	$(DIST)/kmm --version
	@echo "dist: $(DIST).tar.gz"

test: build testbed-up ## unit + real-cluster tests (starts the test bed if it is not running; KMM_TEST_SHARDS=2: e2e in two halves on two beds; 3: the outage tests on a third)
	GO=$(GO) TEST_TIMEOUT=$(TEST_TIMEOUT) KMM_BIN=$(CURDIR)/bin/kmm scripts/test.sh

# The fault suite (e2e/faults_test.go, its tests named TestFault*; they also run in make test's
# e2e package): needs the bed; writes one JSON per scenario to FAULTS_OUT and regenerates the
# table in docs/reliability.md from them. KMM_FAULT_SEED=<n> repeats the SIGKILL moments of a run.
FAULTS_OUT ?= $(or $(KMM_TESTBED_DIR),$(CURDIR)/.testbed)/faults
test-faults: build testbed-up ## the fault suite (~7 min): kill -9 x10, broker stop/freeze/restart, network faults (toxiproxy), topic deleted -> docs/reliability.md
	rm -rf $(FAULTS_OUT)
	KMM_BIN=$(CURDIR)/bin/kmm KMM_REQUIRE_TESTBED=1 KMM_FAULTS_OUT=$(FAULTS_OUT) $(GO) test -count=1 -v -parallel 4 -timeout 20m -run '^TestFault' ./e2e
	$(GO) run ./scripts/faultsdoc $(FAULTS_OUT) docs/reliability.md

# The C data plane (pkg/rdkafka's dataplane.c, scan.c) under ASan + LSan and UBSan: its kfake
# tests and its real-bed tests, built with `go test -asan` and -fsanitize=undefined (halting on
# the first finding); any sanitizer report fails. scripts/test-sanitize.sh lists the tests.
test-sanitize: testbed-up ## the C data plane's tests (kfake + real bed) under AddressSanitizer, LeakSanitizer and UBSan (~1-3 min)
	GO=$(GO) scripts/test-sanitize.sh

# make unit links ~35 test binaries, ~20 of them with the static librdkafka: without DWARF
# (-ldflags=-w; stack traces do not need it) each cgo link takes less. Most of its test time
# is waiting on librdkafka and kfake timers, not CPU: -p 4 lets links and other packages use
# the cores meanwhile (the default is one package per core).
unit: ## fast tests: unit, command and in-process kfake tiers (-short: no real bed, no Java/keytool cross-checks; make test runs those)
	$(GO) test -short -count=1 -ldflags=-w -p 4 ./...

lint: ## gofmt, go vet and the package layering (scripts/layercheck, docs/architecture.md)
	@out=$$(gofmt -l $$(ls -d cmd pkg mm2conf e2e scripts 2>/dev/null)); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) run ./scripts/layercheck

fmt: ## gofmt -w
	gofmt -w $$(ls -d cmd pkg mm2conf e2e scripts 2>/dev/null)

fetch-kafka: ## fetch Apache Kafka jars from Maven Central (cached)
	scripts/testbed.sh fetch

testbed-up: ## start clusters A, B, C (KRaft, loopback) and wait until ready
	scripts/testbed.sh up

testbed-down: ## stop the clusters this bed started
	scripts/testbed.sh down

testbed-reset: ## stop and wipe cluster data and logs
	scripts/testbed.sh reset

testbed-status: ## show which clusters run
	scripts/testbed.sh status

clean: ## remove build output
	rm -rf bin

demo: build testbed-up ## replicate A->B on the local test bed with testdata/demo/mirror-maker.properties
	$(GO) run ./scripts/demo

# docs/runbook.md's planned drill with an application stand-in (scripts/drill): a producer keeping
# a ledger of every acknowledged record, a group committing after every poll; exit 1 when a record
# was lost. Its files (ledger, reads, kmm's logs, the failover and failback reports): .testbed/drill.
drill: build testbed-up ## failover drill on the local test bed: an application on A, planned failover, the application on B, failback; prints produced, consumed, lost, read twice
	$(GO) run ./scripts/drill

bench: build testbed-up ## kmm replicate vs MirrorMaker 2 vs the ceiling -> docs/benchmarks.{md,json,png} (BENCH_SCALE, BENCH_REPEATS)
	$(GO) run ./scripts/bench

bench-failover: testbed-up ## planned failover's and failback's translate+commit of 500 groups x 50 partitions, kmm vs MM2's RemoteClusterUtils + kafka-consumer-groups (BENCH_GROUPS, BENCH_PARTITIONS) -> .testbed/bench-failover
	$(GO) run ./scripts/benchfailover

bench-smoke: build testbed-up ## the benchmark harness at tiny sizes (CI): checks it end to end, output in .testbed/bench-smoke
	BENCH_SMOKE=1 $(GO) run ./scripts/bench
