# covenant — `make help` lists the targets.
.DEFAULT_GOAL := help
CARGO ?= cargo
# Where cargo builds (CARGO_TARGET_DIR if set, as cargo itself reads it).
TARGET_DIR := $(or $(CARGO_TARGET_DIR),target)
DNS ?= covenant.covenant-system.svc

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk 'BEGIN {FS = ":.*## "}; {printf "  %-14s %s\n", $$1, $$2}'

run: ## run the webhook on its embedded defaults with a generated certificate (loopback)
	$(CARGO) run --release -- serve --dev

test: ## run every test (offline; starts its own TLS servers on loopback)
	$(CARGO) test

lint: ## clippy with warnings denied, and the format check
	$(CARGO) fmt --check
	$(CARGO) clippy --all-targets -- -D warnings

fmt: ## format the code
	$(CARGO) fmt

bench: ## criterion benches: decode, evaluate, router; launcher Application; CRD diff vs parse; pins; live-view lookups at 1k/10k/100k objects
	$(CARGO) bench --bench admission --bench launcher --bench evolution --bench versioning --bench lookup

# The load benches measure covenant as it ships: the binary `make static` builds, alone (a
# build shared with the examples would switch on the features their dev-dependencies unify
# into shared crates). The bare server, the floor and the bench are built the same way.
BENCH_BUILD = RUSTFLAGS="$(STATIC_RUSTFLAGS)" $(CARGO) build --profile dist --locked --target $(STATIC_TARGET)
BENCH_DIR = $(TARGET_DIR)/$(STATIC_TARGET)/dist

bench-load: static ## covenant vs a bare parse-and-allow server and the floor (body read, nothing parsed) over TLS, side by side (pinned cores)
	$(BENCH_BUILD) --example bare_webhook --example loadbench
	taskset -c 0 $(BENCH_DIR)/examples/loadbench --rounds 5 --seconds 3

bench-apiserver: static ## as the kube-apiserver sends reviews: one HTTP/2 connection, concurrent streams, covenant watching a stand-in API server holding 1,000 constructs and 5,000 Components
	$(BENCH_BUILD) --example bare_webhook --example loadbench
	taskset -c 0 $(BENCH_DIR)/examples/loadbench --apiserver --rounds 5 --seconds 3

bench-instructions: static ## instructions per request, whole server under callgrind: covenant, bare, floor (exact; BODY=, N=, BIN=)
	$(BENCH_BUILD) --example bare_webhook
	BIN=$${BIN:-$(STATIC_BIN)} BARE=$(BENCH_DIR)/examples/bare_webhook examples/instructions.sh

SOAK_SECONDS ?= 300
SOAK_RATE ?= 200
bench-burst: static ## peak memory of 32 concurrent 5 MiB CRD updates (VmHWM; BIN= to compare a build)
	BIN=$${BIN:-$(STATIC_BIN)} examples/burst.sh

soak: static ## SOAK_SECONDS (300) at SOAK_RATE (200) req/s with certificate rotation; memory must stay flat
	$(BENCH_BUILD) --example soak
	$(BENCH_DIR)/examples/soak --seconds $(SOAK_SECONDS) --rate $(SOAK_RATE)

FUZZ_SECONDS ?= 120
fuzz: ## run each cargo-fuzz target FUZZ_SECONDS (120) on a corpus seeded from the fixtures (nightly)
	@command -v cargo-fuzz >/dev/null || $(CARGO) install cargo-fuzz --locked
	fuzz/seed.sh
	cd fuzz && for t in review check_yaml schema_diff; do \
	  mkdir -p corpus/$$t; \
	  $(CARGO) +nightly fuzz run -O $$t corpus/$$t seeds/$$t -- \
	    -max_total_time=$(FUZZ_SECONDS) -timeout=20 -rss_limit_mb=4096 -max_len=262144 -print_final_stats=1 || exit 1; \
	done

docs: ## regenerate docs/rules.md from the catalogue (a test fails when it drifts)
	$(CARGO) run -q -- rules --output md > docs/rules.md

certs: ## make a dev CA and serving certificate for DNS=$(DNS) in certs/out and print the caBundle
	certs/make-certs.sh $(DNS)

IMAGE ?= covenant:0.1.0
STATIC_TARGET := x86_64-unknown-linux-gnu
STATIC_BIN := $(TARGET_DIR)/$(STATIC_TARGET)/dist/covenant

STATIC_RUSTFLAGS := -C target-feature=+crt-static

static: ## a fully static binary (glibc, crt-static) of the dist profile: what the image and `make dist` ship
	RUSTFLAGS="$(STATIC_RUSTFLAGS)" $(CARGO) build --profile dist --locked --target $(STATIC_TARGET) --bin covenant

image: static ## build the image $(IMAGE) from the static binary (deploy/image/Dockerfile; needs a Docker daemon)
	rm -rf $(TARGET_DIR)/image && mkdir -p $(TARGET_DIR)/image
	cp -r deploy/image/rootfs $(TARGET_DIR)/image/rootfs
	mkdir -p $(TARGET_DIR)/image/scratch/tmp
	cp $(STATIC_BIN) $(TARGET_DIR)/image/covenant
	@test -f /etc/ssl/certs/ca-certificates.crt || { echo "no /etc/ssl/certs/ca-certificates.crt: install the ca-certificates package"; exit 1; }
	cp /etc/ssl/certs/ca-certificates.crt $(TARGET_DIR)/image/ca-certificates.crt
	docker build -q -f deploy/image/Dockerfile -t $(IMAGE) $(TARGET_DIR)/image

push: ## push $(IMAGE) to its registry (set IMAGE=registry.example.com/covenant:0.1.0)
	docker push $(IMAGE)

console-test: ## the console's pages in Debian's headless chromium via chromedriver (apt install chromium chromium-driver); screenshots in target/console-screenshots
	$(CARGO) test --test integration console:: -- --ignored --nocapture

precommit-test: ## pre-commit itself (from PyPI, in a venv under target/) runs both hooks of .pre-commit-hooks.yaml at HEAD on a temporary repository
	test -x $(TARGET_DIR)/precommit-venv/bin/pre-commit || { python3 -m venv $(TARGET_DIR)/precommit-venv && $(TARGET_DIR)/precommit-venv/bin/pip install -q pre-commit; }
	PATH="$(abspath $(TARGET_DIR))/precommit-venv/bin:$$PATH" $(CARGO) test --test integration meets_ci::pre_commit -- --ignored --nocapture

image-smoke: ## start $(IMAGE) exactly as deploy/ runs it, send reviews, SIGTERM it (needs a Docker daemon)
	COVENANT_IMAGE=$(IMAGE) $(CARGO) test --test integration image:: -- --ignored --nocapture

# The archive's own folder: `target/dist` is cargo's, for the `dist` profile's builds.
ARCHIVE_DIR := $(TARGET_DIR)/archive

dist: static ## a release archive: the static binary and its SHA-256 checksum, in target/archive
	rm -rf $(ARCHIVE_DIR) && mkdir -p $(ARCHIVE_DIR)/covenant-$$($(STATIC_BIN) version | awk '{print $$2}')-x86_64-linux
	d=$(ARCHIVE_DIR)/covenant-$$($(STATIC_BIN) version | awk '{print $$2}')-x86_64-linux; \
	  cp $(STATIC_BIN) README.md $$d/ && tar -C $(ARCHIVE_DIR) -czf $$d.tar.gz $$(basename $$d) && \
	  (cd $(ARCHIVE_DIR) && sha256sum $$(basename $$d).tar.gz > $$(basename $$d).tar.gz.sha256) && \
	  rm -rf $$d && ls -l $(ARCHIVE_DIR)
	@# What a pipeline does with it (docs/ci.md): verify the checksum, unpack, run.
	cd $(ARCHIVE_DIR) && sha256sum -c covenant-*.tar.gz.sha256 && mkdir unpacked && \
	  tar -C unpacked -xzf covenant-*.tar.gz && unpacked/covenant-*/covenant version && rm -rf unpacked

deploy-vap: ## rewrite deploy/components/admission-policies from `covenant vap` (a test fails when it drifts)
	$(CARGO) run -q -- vap > deploy/components/admission-policies/policies.yaml

deploy-config: ## rewrite deploy/config/covenant.yaml from the binary's default config (a test fails when it drifts)
	$(CARGO) run -q -- config print-default > deploy/config/covenant.yaml

# The install as applied: deploy/ with the image set to $(IMAGE), through a kustomize
# overlay written to $(TARGET_DIR)/install (deploy/ itself is never edited).
INSTALL_DIR := $(TARGET_DIR)/install
install-overlay:
	@mkdir -p $(INSTALL_DIR)
	@name='$(IMAGE)'; tag="$${name##*:}"; repo="$${name%:*}"; \
	  case "$$tag" in */*|"$$name") tag=latest; repo="$$name";; esac; \
	  printf 'apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n  - %s\nimages:\n  - name: covenant\n    newName: %s\n    newTag: "%s"\n' \
	    "$$(realpath --relative-to=$(INSTALL_DIR) deploy)" "$$repo" "$$tag" > $(INSTALL_DIR)/kustomization.yaml

deploy-render: install-overlay ## print the manifests `make deploy` applies (IMAGE= sets the image)
	@kubectl kustomize $(INSTALL_DIR)

deploy: install-overlay ## apply deploy/ to the current kubectl context with IMAGE=registry/covenant:tag
	kubectl apply --server-side -k $(INSTALL_DIR)

.PHONY: help run test lint fmt console-test precommit-test bench bench-load bench-apiserver bench-instructions bench-burst soak fuzz docs certs static image push image-smoke dist deploy-vap deploy-config install-overlay deploy-render deploy
