# covenant — `make help` lists the targets.
.DEFAULT_GOAL := help
CARGO ?= cargo
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

bench: ## criterion benches: decode, evaluate, router; launcher Application; CRD diff vs parse; pins
	$(CARGO) bench --bench admission --bench launcher --bench evolution --bench versioning

bench-load: ## covenant vs a bare parse-and-allow server over TLS, side by side (pinned cores)
	$(CARGO) build --release --bin covenant --example bare_webhook --example loadbench
	taskset -c 0 target/release/examples/loadbench --rounds 5 --seconds 3

docs: ## regenerate docs/rules.md from the catalogue (a test fails when it drifts)
	$(CARGO) run -q -- rules --output md > docs/rules.md

certs: ## make a dev CA and serving certificate for DNS=$(DNS) in certs/out and print the caBundle
	certs/make-certs.sh $(DNS)

deploy-render: ## render the kustomize base
	kubectl kustomize deploy/

.PHONY: help run test lint fmt bench bench-load docs certs deploy-render
