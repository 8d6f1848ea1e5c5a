# The targets `sam build` runs for template.yaml's BuildMethod: makefile resources (with ARTIFACTS_DIR set to the
# resource's folder under .aws-sam/build). samconfig.toml builds in the source folder, so nothing is copied first.
NODE ?= node

# PlanFunction, ExecuteGroupFunction, …: functions/<kebab-case>.ts bundled by infra/build.mjs (the options dist/ uses).
build-%Function:
	$(NODE) infra/build.mjs --sam-function $* "$(ARTIFACTS_DIR)"

# DuckDB's native binding for each Architecture (the stack deploys the one its Architecture parameter names).
build-DuckDbLayerArm64:
	$(NODE) infra/build-layer.mjs arm64 "$(ARTIFACTS_DIR)"

build-DuckDbLayerX8664:
	$(NODE) infra/build-layer.mjs x86_64 "$(ARTIFACTS_DIR)"
