#!/bin/bash
# Runs samples-go's workflow tests with the loop guard installed on every
# TestWorkflowEnvironment. See docs/samples-go.md. Usage:
#   run.sh SAMPLES_DIR LOOPGUARD_DIR OUT_DIR
# SAMPLES_DIR: a throwaway copy of github.com/temporalio/samples-go (it is
# modified in place).
set -eu
samples=$(realpath "$1"); loopguard=$(realpath "$2"); out=$(realpath -m "$3")
here=$(dirname "$(realpath "$0")")
mkdir -p "$out"
export GOWORK=off GOFLAGS=-mod=mod
cd "$samples"
go list -m go.temporal.io/sdk go.temporal.io/api > "$out/versions-samples.txt"

# Packages whose modules the Go proxy available here does not serve (403)
# cannot build: drop them and their requirements (datadog's tree needs
# inet.af/netaddr).
for d in googleadk opentelemetry-v2 workflowstreams datadog; do rm -rf "$d"; done
for m in go.temporal.io/sdk/contrib/googleadk google.golang.org/adk/v2 \
         go.temporal.io/sdk/contrib/opentelemetry-v2 go.temporal.io/sdk/contrib/workflowstreams \
         $(grep -E 'DataDog|datadog|inet.af/netaddr' go.mod | awk '{print $1}'); do
  go mod edit -droprequire="$m"
done

# One test file per package with workflow tests: installs the guard (mode
# from $LOOPGUARD_MODE at run time) and records halts.
go list -f '{{if or .TestGoFiles .XTestGoFiles}}{{.ImportPath}} {{.Name}} {{.Dir}}{{end}}' ./... > "$out/packages.txt"
while read -r path name dir; do
  sed -e "s|PKGNAME|$name|" -e "s|PKGPATH|$path|" "$here/hook_test.go.tmpl" > "$dir/zz_loopguard_hook_test.go"
done < "$out/packages.txt"
go mod edit -require=github.com/loopguard/loopguard@v0.0.0 -replace=github.com/loopguard/loopguard="$loopguard"
go mod tidy   # raises the SDK to loopguard's version if samples-go's is older

# A patched copy of the SDK version now selected: every test environment
# appends the hook's interceptors to its own.
sdkver=$(go list -m -f '{{.Version}}' go.temporal.io/sdk)
sdk="$out/sdk-$sdkver"
rm -rf "$sdk"; cp -r "$(go list -m -f '{{.Dir}}' go.temporal.io/sdk)" "$sdk"; chmod -R u+w "$sdk"
cp "$here/hook_internal.go.txt" "$sdk/internal/zz_loopguard_hook.go"
cp "$here/hook_testsuite.go.txt" "$sdk/testsuite/zz_loopguard_hook.go"
f="$sdk/internal/internal_workflow_testsuite.go"
sed -i -e 's|^\t\tr = newRegistryWithOptions(registryOptions{disableAliasing: s.disableRegistrationAliasing})$|&\n\t\tr.interceptors = loopguardTestInterceptors|' \
       -e 's|^\tenv.registry.interceptors = options.Interceptors$|\tenv.registry.interceptors = append(append([]WorkerInterceptor(nil), options.Interceptors...), loopguardTestInterceptors...)|' "$f"
[ "$(grep -c loopguardTestInterceptors "$f")" = 2 ] || { echo "SDK patch did not apply" >&2; exit 1; }
go mod edit -replace=go.temporal.io/sdk="$sdk"
go list -m go.temporal.io/sdk go.temporal.io/api > "$out/versions.txt"

# Build once; run the same binaries three times (the mode is read at run time).
go test -count=1 -run XXX_build_only ./... > "$out/build.txt" 2>&1 || true
for mode in off zero scoped; do
  rm -f "$out/halts-$mode.tsv"; touch "$out/halts-$mode.tsv"
  LOOPGUARD_MODE=$mode LOOPGUARD_HALTS="$out/halts-$mode.tsv" \
    go test -count=1 -timeout 10m -json ./... > "$out/test-$mode.json" 2>&1 || true
done
