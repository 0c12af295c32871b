# cuetrainer — build, test and generate.
GO        ?= go
CUE_VERSION := v0.17.1
CUE       := $(GO) run cuelang.org/go/cmd/cue@$(CUE_VERSION)
BIN       := bin/cuetrainer
SHARED    ?= ../shared
# VERSION is the release: the image tag deploy/kustomization.yaml names.
VERSION   ?= $(shell sed -n 's/^ *newTag: *//p' deploy/kustomization.yaml)
IMAGE_DIR ?= bin/image
RELEASE_DIR ?= bin/release

.PHONY: all build check manifests test vet fmt cue-gen cue-vet conformance-data bench clean testbins testbins-envtest fuzz image image-docker release

all: build test

build:
	$(GO) build -o $(BIN) ./cmd/cuetrainer

# image writes the container image, offline, as an OCI image layout in
# IMAGE_DIR (tag VERSION): a static binary at /cuetrainer, run as the
# nonroot user 65532, on no base image (hack/image). The time it records is
# the last commit's, so the same commit gives the same image. Push it with
# `skopeo copy oci:$(IMAGE_DIR):$(VERSION) docker://ghcr.io/cuetrainer/cuetrainer:$(VERSION)`.
image:
	CGO_ENABLED=0 GOOS=linux $(GO) build -trimpath -ldflags "-s -w -X main.version=$(VERSION)" -o $(IMAGE_DIR).bin/cuetrainer ./cmd/cuetrainer
	SOURCE_DATE_EPOCH=$${SOURCE_DATE_EPOCH:-$$(git log -1 --format=%ct 2>/dev/null || echo 0)} \
		$(GO) run ./hack/image -binary $(IMAGE_DIR).bin/cuetrainer -out $(IMAGE_DIR) -tag $(VERSION) -arch $$($(GO) env GOARCH)

# image-docker builds the same image with a container builder from
# deploy/Dockerfile (distroless static, nonroot), for those who push with one.
image-docker:
	docker build -f deploy/Dockerfile --build-arg VERSION=$(VERSION) -t ghcr.io/cuetrainer/cuetrainer:$(VERSION) .

# release writes what a release ships into RELEASE_DIR: install.yaml (the
# CRDs, RBAC, webhooks and controller of deploy/, the image at VERSION),
# runtimes.yaml (deploy/runtimes) and cuetrainer-chart.tgz (a Helm chart of
# install.yaml's objects), as Kubeflow Trainer's releases do.
release:
	$(GO) run ./hack/release -deploy deploy -out $(RELEASE_DIR) -version $(VERSION)

# check is what CI runs (.ci/run): the control plane the integration tests
# need (built once, then cached), then test, then fuzz.
check: testbins test fuzz

# fuzz runs each fuzz target for a number of inputs, one target per go test
# (-fuzz takes one). A failing input is written to the package's
# testdata/fuzz/ and fails the run; committed there, go test runs it from
# then on. The budgets are counts, not durations: go1.26's fuzz coordinator
# can fail a duration-bounded run that found nothing, with a bare "context
# deadline exceeded", when the deadline races its workers
# (golang/go#75804, fixed in go1.27). Minimizing a new interesting input is
# bounded too (by default it may take 60 s, showing 0 execs/s); -timeout
# fails a hanging input. FUZZSCALE multiplies every count.
FUZZSCALE ?= 1
FUZZ_TARGETS := engine:FuzzAdmit:200 engine:FuzzPolicy:6 engine/internal/k8s:FuzzReadYAML:20000 engine/internal/k8s:FuzzReadJSON:20000 engine:FuzzRender:200 engine:FuzzMemo:200 controller/webhooks:FuzzAdmissionReview:200

fuzz:
	@set -e; for t in $(FUZZ_TARGETS); do \
		pkg=$${t%%:*}; rest=$${t#*:}; fn=$${rest%%:*}; n=$$(( $${rest#*:} * $(FUZZSCALE) )); \
		echo "fuzz $$fn ./$$pkg for $$n inputs"; \
		$(GO) test -run '^$$' -fuzz "^$$fn\$$" -fuzztime $${n}x -fuzzminimizetime 20x -timeout 15m ./$$pkg; \
	done

# test: formatting, vet, the CUE, and every Go test with the race detector.
# The integration tests skip without the control plane, unless CI=true.
# The engine's package is the longest (its tests load policies, and each
# load tries the policy on every probe): 24 to 30 minutes on 2 cores.
test: fmt-check vet cue-vet
	$(GO) test -race -count=1 -timeout 50m ./...

vet:
	$(GO) vet ./...

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change: $$out"; exit 1; fi

fmt:
	gofmt -w $$(git ls-files '*.go')
	$(CUE) fmt ./schemas ./runtimes

# cue-vet checks that the CUE compiles and is formatted.
cue-vet:
	$(CUE) vet -c=false ./schemas ./runtimes
	@$(CUE) fmt --check ./schemas ./runtimes

# cue-gen regenerates schemas/gen from the pinned Go modules. `cue get go`
# writes into cue.mod/gen, which CUE reads for the main module only: the
# packages move to schemas/gen and their imports become the module's
# (cuetrainer.dev/cuetrainer/schemas/gen/k8s.io/...), so that a CUE module
# that depends on ours has them. k8s.io/* v0.37 tags embedded structs
# `json:""` rather than `json:",inline"`, which `cue get go` takes for a
# field named after the type: the first sed turns those back into
# embeddings. The types whose Go code marshals itself (Quantity,
# IntOrString, Time), which `cue get go` leaves open, get their OpenAPI
# shapes from hack/cuegen/overlays. hack/cuelocal then copies the packages a runtime's template
# reaches through imports (batch/v1, jobset) into the schemas package
# (schemas/k8s_gen.cue), which reads them without an import.
cue-gen:
	rm -rf cue.mod/gen schemas/gen
	$(CUE) get go k8s.io/api/core/v1 k8s.io/apimachinery/pkg/apis/meta/v1 \
		sigs.k8s.io/jobset/api/jobset/v1alpha2 k8s.io/api/scheduling/v1
	find cue.mod/gen -name '*.cue' | xargs sed -E -i \
		-e 's/^(\s+)([A-Z][A-Za-z0-9]*):\s+(([a-z0-9]+\.)?#\2)( |$$)/\1\3\5/' \
		-e 's/^(\s+)(([a-z0-9]+\.)?#[A-Z][A-Za-z0-9]*) @protobuf\([^)]*\)\s*$$/\1\2/' \
		-e 's#^(\s*(import\s+)?([A-Za-z0-9_]+\s+)?")((k8s\.io|sigs\.k8s\.io)/[^"]*"\s*)$$#\1cuetrainer.dev/cuetrainer/schemas/gen/\4#'
	mv cue.mod/gen schemas/gen
	cp -r hack/cuegen/overlays/. schemas/gen/
	$(GO) run ./hack/cuelocal -o schemas/k8s_gen.cue

# manifests regenerates deploy/'s generated parts from the CUE: the CRDs,
# the webhook configurations and the shipped runtimes, and the CRD schemas
# the engine embeds (engine/internal/crd/crdschemas.json); a test fails when they differ.
manifests:
	$(GO) run ./cmd/cuetrainer export crds --dir deploy/crds
	$(GO) run ./cmd/cuetrainer export webhooks > deploy/webhooks.yaml
	$(GO) run ./cmd/cuetrainer runtimes export --dir deploy/runtimes
	UPDATE_GOLDEN=1 $(GO) test -count=1 -run '^TestEmbeddedCRDSchemas$$' ./engine

# conformance-data refreshes the test copy of the conformance corpus.
conformance-data:
	rm -rf test/conformance/testdata/kubeflow
	mkdir -p test/conformance/testdata
	cp -r $(SHARED)/conformance/kubeflow test/conformance/testdata/kubeflow
	rm -rf test/conformance/testdata/ome
	cp -r $(SHARED)/conformance/ome test/conformance/testdata/ome
	cp $(SHARED)/conformance/README.md test/conformance/testdata/README.md

# bench compares our evaluation with baselines measured in the same run; it
# is not part of CI. The cue command is installed at the pinned version for
# the `cue vet` comparison. The admission, controller and cold-start rows
# (test/bench) run on envtest: its binaries are built first if missing. The
# table goes to BENCHMARKS.md, the admission latency plot to
# docs/bench-admission.png.
# testbins builds etcd, kube-apiserver, kube-controller-manager,
# kube-scheduler, kwok and the JobSet controller from the Go module proxy
# into a versioned cache directory (about 8 minutes cold on 2 cores; kept
# for later runs). testbins-envtest builds only etcd and kube-apiserver.
testbins:
	hack/testbins.sh all

testbins-envtest:
	hack/testbins.sh envtest

bench: testbins-envtest
	GOBIN=$(CURDIR)/bin $(GO) install cuelang.org/go/cmd/cue@$(CUE_VERSION)
	$(GO) run ./hack/benchtable -cue $(CURDIR)/bin/cue -o BENCHMARKS.md

clean:
	rm -rf bin
