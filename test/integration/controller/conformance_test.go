package controller_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/cuetrainer/cuetrainer/internal/objdiff"
	"github.com/cuetrainer/cuetrainer/test/conformance/corpus"
)

// TestConformanceThroughAPIServer runs every case of the corpus through the
// real API server with our CRDs and webhooks, and our controller: rejected
// cases are denied with each expected field path and detail, warnings reach
// the client, and for rendered cases the objects the controller applies
// equal expected.yaml by the corpus's rules.
func TestConformanceThroughAPIServer(t *testing.T) {
	need(t)
	cases, err := corpus.Cases()
	if err != nil {
		t.Fatal(err)
	}
	var rejected, rendered int
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			docs, err := c.Input()
			if err != nil {
				t.Fatal(err)
			}
			var created []*unstructured.Unstructured
			defer func() { cleanup(t, created) }()
			n := warnings.len()
			var denial error
			var trainJob *unstructured.Unstructured
			for _, d := range docs {
				u := &unstructured.Unstructured{Object: d.Object}
				if ns := u.GetNamespace(); ns != "" {
					namespace(t, ns)
				} else if u.GetKind() == "TrainJob" || u.GetKind() == "TrainingRuntime" {
					u.SetNamespace("default")
				}
				if err := k8sClient.Create(context.Background(), u); err != nil {
					denial = err
					break
				}
				created = append(created, u)
				if u.GetKind() == "TrainJob" {
					trainJob = u
				}
			}
			got := warnings.since(n)
			for _, want := range c.Warnings {
				if !containsText(got, want) {
					t.Errorf("warning %q did not reach the client; got %q", want, got)
				}
			}

			if c.Errors != nil {
				rejected++
				if denial == nil {
					t.Fatal("admitted; Kubeflow rejects it")
				}
				for _, want := range c.Errors {
					if !denies(denial, want) {
						p := "<nil>"
						if want.Path != nil {
							p = *want.Path
						}
						t.Errorf("the denial lacks %s: %s\n  got: %v", p, want.Detail, denial)
					}
				}
				return
			}
			rendered++
			if denial != nil {
				t.Fatalf("denied: %v", denial)
			}
			if trainJob == nil {
				t.Fatal("no TrainJob in the input")
			}
			if c.Name == "45-managedby-multikueue" {
				return // nothing is applied: TestControllerLeavesOthersAlone
			}
			expected, err := c.Expected()
			if err != nil {
				t.Fatal(err)
			}
			// The API server gives the TrainJob its own uid; the corpus fixed
			// one. Owner references are compared with the corpus's.
			caseUID := fmt.Sprint(docs[len(docs)-1].Object["metadata"].(map[string]any)["uid"])
			var actual []map[string]any
			// Generous: a loaded two-core machine under -race is slow.
			eventuallyWithin(t, 3*time.Minute, "the applied objects", func() error {
				actual = actual[:0]
				var missing []string
				for _, e := range expected {
					u := unstructured.Unstructured{Object: e}
					obj := applied.get(u.GetNamespace(), u.GetKind(), u.GetName())
					if obj == nil {
						missing = append(missing, u.GetKind()+" "+u.GetName())
						continue
					}
					actual = append(actual, withUID(obj, string(trainJob.GetUID()), caseUID))
				}
				if len(missing) > 0 {
					return fmt.Errorf("not applied yet: %v", missing)
				}
				if diffs := objdiff.Diff(expected, actual); len(diffs) > 0 {
					return errors.New(strings.Join(diffs, "\n"))
				}
				return nil
			})
			for _, e := range expected {
				u := unstructured.Unstructured{Object: e}
				created = append(created, &u)
				applied.forget(u.GetNamespace(), u.GetKind(), u.GetName())
			}
		})
	}
	if rejected < 19 || rendered < 31 {
		t.Errorf("ran %d rejection and %d rendered cases, want at least 19 and 31", rejected, rendered)
	}
}

// denies reports whether the API server's error carries the expected field
// path and detail: as a cause (422 Invalid) or in the message (a webhook's
// denial, worded as Kubeflow's).
func denies(err error, want corpus.ExpectedError) bool {
	var st apierrors.APIStatus
	if errors.As(err, &st) && st.Status().Details != nil {
		for _, c := range st.Status().Details.Causes {
			if want.Path != nil && strings.EqualFold(c.Field, *want.Path) && strings.Contains(c.Message, want.Detail) {
				return true
			}
		}
	}
	msg := err.Error()
	if !strings.Contains(msg, want.Detail) {
		return false
	}
	return want.Path == nil || strings.Contains(strings.ToLower(msg), strings.ToLower(*want.Path)+":")
}

func containsText(got []string, want string) bool {
	for _, g := range got {
		if strings.Contains(g, want) {
			return true
		}
	}
	return false
}

// withUID replaces the TrainJob's uid in owner references by the corpus's.
func withUID(obj map[string]any, server, fixed string) map[string]any {
	u := unstructured.Unstructured{Object: obj}
	refs := u.GetOwnerReferences()
	for i := range refs {
		if string(refs[i].UID) == server {
			refs[i].UID = types.UID(fixed)
		}
	}
	if len(refs) > 0 {
		u.SetOwnerReferences(refs)
	}
	return u.Object
}

// cleanup deletes what a case made: the TrainJob first (so that the
// controller stops applying for it), then the rest, waiting for each to go
// (the next case may make objects of the same names).
func cleanup(t *testing.T, objs []*unstructured.Unstructured) {
	var first, rest []*unstructured.Unstructured
	for _, u := range objs {
		if u.GetKind() == "TrainJob" {
			first = append(first, u)
		} else {
			rest = append(rest, u)
		}
	}
	deleteAndWait(t, first)
	deleteAndWait(t, rest)
}

func deleteAndWait(t *testing.T, objs []*unstructured.Unstructured) {
	ctx := context.Background()
	for _, u := range objs {
		probe := &unstructured.Unstructured{}
		probe.SetGroupVersionKind(u.GroupVersionKind())
		deadline := time.Now().Add(10 * time.Second)
		for {
			// Again until it stays gone: a reconcile that read the TrainJob
			// from its cache just before it went may apply once more.
			if err := k8sClient.Delete(ctx, u); err != nil && !apierrors.IsNotFound(err) {
				t.Errorf("deleting %s %s: %v", u.GetKind(), u.GetName(), err)
				break
			}
			time.Sleep(50 * time.Millisecond)
			err := k8sClient.Get(ctx, client.ObjectKeyFromObject(u), probe)
			if apierrors.IsNotFound(err) {
				break
			}
			if time.Now().After(deadline) {
				t.Errorf("%s %s is still there: %v", u.GetKind(), u.GetName(), err)
				break
			}
		}
	}
}
