# The commands README names. `make run` serves; `make test` runs every test.
.PHONY: openapi run test lint test-sql test-faults schemathesis package test-package image test-image ci bench

run:
	@scripts/install-deps.sh
	@scripts/ensure-redis.sh
	OVATION_COOKIE_SECURE=$${OVATION_COOKIE_SECURE:-false} cargo run --release -- serve

# Every test on one Redis, then the backend-neutral modules again on a 3-master Redis
# Cluster the harness starts, then the TypeScript client against a live server.
test:
	@scripts/install-deps.sh --browser
	cargo test --workspace
	OVATION_TEST_REDIS=cluster cargo test --test it -- $(CLUSTER_MODULES)
	scripts/test-clients.sh

CLUSTER_MODULES = votes:: reads:: limits:: idempotency:: group_commit:: layouts:: scores:: archive:: league_play:: keys:: webhooks:: families:: ledger:: sharded_votes:: events:: board_webhooks:: adjustments:: trending:: voters:: held:: windows:: leagues:: sessions:: cli:: admin:: ops:: contract:: webhook_verify::

# The engine and what it stands on speak no HTTP: no actix, utoipa or ApiError there.
# The vendored crates are their published versions with their .patch applied, and used;
# the alert rules pass promtool and the Grafana dashboard reads.
lint:
	cargo fmt --all -- --check
	cargo clippy --all-targets -- -D warnings
	! grep -rnE '^[^/]*\b(actix[a-z_]*|utoipa|ApiError)\b' src/engine src/store src/domain
	scripts/check-patches.sh
	scripts/check-deploy.sh

test-sql:
	scripts/test-sql-backends.sh

# docs/openapi.json, the API's document as the server serves it (a test compares them).
openapi:
	OVATION_LOG=error cargo run -q -- openapi > docs/openapi.json

# The crash test: redis-server killed with SIGKILL under load; prints what was lost.
test-faults:
	@scripts/install-deps.sh
	cargo test --test it -- --ignored --nocapture crash::

# The API against its own OpenAPI document (about two minutes); fails on any finding.
schemathesis:
	scripts/schemathesis.sh

# The Debian package (target/deb/ovation_<version>_<arch>.deb), and its test: contents,
# the unit under systemd-analyze, the packaged service answering /readyz.
package:
	scripts/package-deb.sh

test-package:
	scripts/test-package.sh

# The container image (docker build works as well), and its test: built here with
# buildah from bases made with debootstrap, its service answering /readyz.
image:
	scripts/test-image.sh --build-only

test-image:
	scripts/test-image.sh

ci: lint test test-sql test-faults schemathesis test-package test-image

# The vote shapes are also measured on a newer Redis than Debian's when it builds
# (scripts/build-redis.sh); without it the load bench measures Debian's alone.
bench:
	@scripts/install-deps.sh --bench
	cargo build --release
	BENCH_REDIS_ALSO=$$(scripts/build-redis.sh || true) cargo bench --bench load
	cargo bench --bench rolling
	cargo bench --bench huge
	cargo bench --bench cluster
	cargo bench --bench league
	cargo bench --bench families
	cargo bench --bench ledger
	cargo bench --bench drain
	cargo bench --bench tv_final
	cargo bench --bench push
