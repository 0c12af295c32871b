package controller_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/cuetrainer/cuetrainer/internal/testing/wrapper"
)

// TestControllerRestartDuringBurst: the controller dies in the middle of a
// burst of 200 MPI TrainJobs (from then on its applies fail, so reconciles
// under way stop half done) and is started again. Every TrainJob ends with
// exactly its objects (a JobSet, the hostfile and snapshot ConfigMaps, the
// SSH Secret), and nothing made before the stop is made again: the SSH
// Secrets and the snapshots keep their uid and data.
func TestControllerRestartDuringBurst(t *testing.T) {
	need(t)
	const n = 200
	ctx := context.Background()
	ns := namespace(t, "burst")

	data, err := os.ReadFile(filepath.Join("..", "..", "..", "deploy", "runtimes", "deepspeed-distributed.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	rt := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(data, &rt.Object); err != nil {
		t.Fatal(err)
	}
	rt.SetKind("TrainingRuntime")
	rt.SetNamespace(ns)
	rt.SetName("mpi")
	if err := k8sClient.Create(ctx, rt); err != nil {
		t.Fatal(err)
	}

	var made atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := w; i < n; i += 8 {
				tj := wrapper.TrainJob(fmt.Sprintf("job-%03d", i)).Namespace(ns).
					RuntimeRef("mpi").RuntimeRefKind("TrainingRuntime").NumNodes(2).Obj()
				if err := k8sClient.Create(ctx, tj); err != nil {
					errs <- err
					return
				}
				made.Add(1)
			}
		}(w)
	}

	// Stop the controller once some TrainJobs have their objects, while
	// others are still being created.
	eventuallyWithin(t, 5*time.Minute, "a quarter of the JobSets", func() error {
		if c := count(t, ns, "JobSet"); c < n/4 {
			return fmt.Errorf("%d JobSets", c)
		}
		return nil
	})
	// As if killed: reconciles under way apply nothing more.
	applied.crashed.Store(true)
	stopController()
	applied.crashed.Store(false)
	t.Logf("stopped with %d TrainJobs created, %d JobSets", made.Load(), count(t, ns, "JobSet"))
	before := uids(t, ns)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("creating TrainJobs: %v", err)
	}
	if stopController, err = startController(controllerCfg); err != nil {
		t.Fatal(err)
	}

	// Under -race on two cores a render of this runtime (an ECDSA P-521
	// key each) takes a while: give the 200 time.
	eventuallyWithin(t, 5*time.Minute, "every TrainJob's objects", func() error {
		for _, kind := range []string{"JobSet", "Secret"} {
			if c := count(t, ns, kind); c != n {
				return fmt.Errorf("%d %ss, want %d", c, kind, n)
			}
		}
		if c := count(t, ns, "ConfigMap"); c != 2*n {
			return fmt.Errorf("%d ConfigMaps, want %d", c, 2*n)
		}
		return nil
	})
	after := uids(t, ns)
	kept := 0
	for key, was := range before {
		now, ok := after[key]
		switch {
		case !ok:
			t.Errorf("%s is gone", key)
		case now != was:
			t.Errorf("%s was made again: %s", key, key)
		default:
			kept++
		}
	}
	if kept == 0 {
		t.Error("nothing existed at the stop: the test did not test a restart")
	}
	t.Logf("%d objects from before the stop kept their uid and data", kept)

	// Each object belongs to exactly one TrainJob, its own.
	owners := map[string]int{}
	for _, kind := range []string{"JobSet", "ConfigMap", "Secret"} {
		l := list(t, ns, kind)
		for _, o := range l {
			refs := o.GetOwnerReferences()
			if len(refs) != 1 || refs[0].Kind != "TrainJob" {
				t.Errorf("%s %s has owners %v", kind, o.GetName(), refs)
				continue
			}
			owners[refs[0].Name]++
		}
	}
	for i := 0; i < n; i++ {
		if got := owners[fmt.Sprintf("job-%03d", i)]; got != 4 {
			t.Errorf("job-%03d owns %d objects, want 4", i, got)
		}
	}
}

func list(t *testing.T, ns, kind string) []unstructured.Unstructured {
	t.Helper()
	l := &unstructured.UnstructuredList{}
	apiVersion := "v1"
	if kind == "JobSet" {
		apiVersion = "jobset.x-k8s.io/v1alpha2"
	}
	l.SetAPIVersion(apiVersion)
	l.SetKind(kind + "List")
	if err := k8sClient.List(context.Background(), l, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	// The namespace's own ConfigMap (kube-root-ca.crt) is not ours: envtest
	// runs no controller that makes it, but be sure.
	var out []unstructured.Unstructured
	for _, o := range l.Items {
		if o.GetName() != "kube-root-ca.crt" {
			out = append(out, o)
		}
	}
	return out
}

func count(t *testing.T, ns, kind string) int { return len(list(t, ns, kind)) }

// uids identifies the SSH Secrets and snapshot ConfigMaps by uid and data.
func uids(t *testing.T, ns string) map[string]string {
	out := map[string]string{}
	for _, kind := range []string{"Secret", "ConfigMap"} {
		for _, o := range list(t, ns, kind) {
			d, _ := yaml.Marshal(o.Object["data"])
			out[kind+" "+o.GetName()] = string(o.GetUID()) + "\x00" + string(d)
		}
	}
	return out
}
