#!/usr/bin/env bash
# Builds the binaries the controller and webhook tests run against, from
# the Go module proxy, into a versioned cache directory; what is there
# already is kept. See ../shared/docs/control-plane.md for the versions.
#
#   envtest tier:   etcd, kube-apiserver
#   cluster tier:   kube-controller-manager, kube-scheduler, kwok (and its
#                   stages, kwok-stages/), jobset-controller
#
# Usage: hack/testbins.sh [envtest|all]   (prints the directory)
#        hack/testbins.sh --print           (prints it, builds nothing)
set -euo pipefail

K8S=v1.37.2 STAGING=v0.37.2 ETCD=v3.6.16 KWOK=v0.8.0 JOBSET=v0.12.0
tier=${1:-all}
dir=${CUETRAINER_TESTBINS:-$HOME/.cache/cuetrainer/testbins/k8s-$K8S-etcd-$ETCD-kwok-$KWOK-jobset-$JOBSET}
if [ "$tier" = --print ]; then
  echo "$dir"
  exit 0
fi
mkdir -p "$dir"

want=(etcd kube-apiserver)
if [ "$tier" = all ]; then
  want+=(kube-controller-manager kube-scheduler kwok kwok-stages jobset-controller)
fi
missing=()
for b in "${want[@]}"; do
  [ -x "$dir/$b" ] || missing+=("$b")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "$dir"
  exit 0
fi

work=$(mktemp -d)
trap 'chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT
export GOCACHE="$work/gocache" GOFLAGS=-mod=mod GOTOOLCHAIN=local CGO_ENABLED=0

need() { [[ " ${missing[*]} " == *" $1 "* ]]; }
major=${K8S#v}; major=${major%%.*}
minor=${K8S#v*.}; minor=${minor%%.*}

if need kube-apiserver || need kube-controller-manager || need kube-scheduler; then
  mkdir -p "$work/k8s" && cd "$work/k8s"
  # k8s.io/kubernetes points its staging modules at ./staging: pin each to
  # its published version instead.
  gomod=$(go mod download -json "k8s.io/kubernetes@$K8S" | sed -n 's/.*"GoMod": "\(.*\)",*/\1/p')
  {
    echo "module testbins"
    echo "go 1.26"
    echo "require k8s.io/kubernetes $K8S"
    sed -n 's#^\s*\(k8s.io/[a-z0-9-]*\) => ./staging/src/.*#replace \1 => \1 '"$STAGING"'#p' "$gomod"
  } > go.mod
  echo 'package main' > tools.go
  for b in kube-apiserver kube-controller-manager kube-scheduler; do
    if need "$b"; then
      go build -trimpath -o "$dir/$b" -ldflags "-X k8s.io/component-base/version.gitVersion=$K8S -X k8s.io/component-base/version.gitMajor=$major -X k8s.io/component-base/version.gitMinor=$minor" "k8s.io/kubernetes/cmd/$b"
    fi
  done
fi

if need etcd; then
  mkdir -p "$work/etcd" && cd "$work/etcd"
  printf 'module testbins\ngo 1.26\nrequire go.etcd.io/etcd/server/v3 %s\n' "$ETCD" > go.mod
  go build -trimpath -o "$dir/etcd" go.etcd.io/etcd/server/v3
fi

if need kwok; then
  GOBIN="$dir" go install -trimpath "sigs.k8s.io/kwok/cmd/kwok@$KWOK"
fi

if need kwok-stages; then
  # The stages that make a fake node Ready and keep it so, and run pods:
  # Running, then Succeeded for a Job's pods, then gone when deleted.
  src=$(go mod download -json "sigs.k8s.io/kwok@$KWOK" | sed -n 's/.*"Dir": "\(.*\)",*/\1/p')
  mkdir -p "$work/kwok-stages"
  cp "$src"/kustomize/stage/node/fast/node-initialize.yaml "$src"/kustomize/stage/node/heartbeat/node-heartbeat.yaml \
    "$src"/kustomize/stage/pod/fast/pod-ready.yaml "$src"/kustomize/stage/pod/fast/pod-complete.yaml \
    "$src"/kustomize/stage/pod/fast/pod-delete.yaml "$work/kwok-stages/"
  chmod -R u+w "$work/kwok-stages" && rm -rf "$dir/kwok-stages" && mv "$work/kwok-stages" "$dir/kwok-stages"
fi

if need jobset-controller; then
  src=$(go mod download -json "sigs.k8s.io/jobset@$JOBSET" | sed -n 's/.*"Dir": "\(.*\)",*/\1/p')
  cp -r "$src" "$work/jobset" && chmod -R u+w "$work/jobset" && cd "$work/jobset"
  go build -trimpath -o "$dir/jobset-controller" .
fi

echo "$dir"
