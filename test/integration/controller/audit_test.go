package controller_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	eventsv1 "k8s.io/api/events/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/cuetrainer/cuetrainer/internal/testing/wrapper"
)

// orgRegistryPolicy is an organisation's rule on runtimes: images come from
// its registry.
const orgRegistryPolicy = `package schemas

admission: (#APIVersion): ClusterTrainingRuntime: {
	object: _
	policy: orgRegistry: [
		for i, job in *object.spec.template.spec.replicatedJobs | []
		for j, c in *job.template.spec.template.spec.containers | []
		if !(c.image =~ "^registry\\.example\\.com/") {
			path:   "spec.template.spec.replicatedJobs[\(i)].template.spec.template.spec.containers[\(j)].image"
			type:   "Forbidden"
			detail: "images come from registry.example.com/ on this cluster"
		}]
}
`

// TestRuntimeAudit: a runtime created before an organisation's rule (as
// the shipped runtimes are, installed with cuetrainer) is not checked by
// the webhook again; when the rule is loaded, the controller reviews the
// cluster's runtimes with it and reports the one that breaks it, with a
// Warning event (PolicyViolation) and the gauge, and not the one that
// keeps it. Before, nothing said so.
func TestRuntimeAudit(t *testing.T) {
	need(t)
	ctx := context.Background()
	runtime := func(name, image string) client.Object {
		return wrapper.ClusterTrainingRuntime(name).NumNodes(1).MLPolicy("torch", nil).ReplicatedJob(nodeJob(image)).Obj()
	}
	mustCreate(t, runtime("audit-public", "pytorch/pytorch:2.13"))
	mustCreate(t, runtime("audit-org", "registry.example.com/pytorch:2.13"))

	withPolicyFile(t, 101, "org-registry.cue", orgRegistryPolicy)

	events := func(name string) ([]string, error) {
		var list eventsv1.EventList
		if err := k8sClient.List(ctx, &list, client.InNamespace("default")); err != nil {
			return nil, err
		}
		var notes []string
		for _, ev := range list.Items {
			if ev.Regarding.Kind == "ClusterTrainingRuntime" && ev.Regarding.Name == name && ev.Reason == "PolicyViolation" {
				notes = append(notes, ev.Note)
			}
		}
		return notes, nil
	}
	eventually(t, "the audit's event on audit-public", func() error {
		notes, err := events("audit-public")
		if err != nil {
			return err
		}
		want := "spec.template.spec.replicatedJobs[0].template.spec.template.spec.containers[0].image: Forbidden: images come from registry.example.com/ on this cluster"
		for _, n := range notes {
			if strings.Contains(n, want) {
				return nil
			}
		}
		return fmt.Errorf("events %q, want one holding %q", notes, want)
	})
	if got := gauge(t, "cuetrainer_runtimes_breaking_policy"); got < 1 {
		t.Errorf("cuetrainer_runtimes_breaking_policy = %v, want the runtime counted", got)
	}
	if notes, err := events("audit-org"); err != nil || len(notes) > 0 {
		t.Errorf("the runtime that keeps the rule: events %q, %v", notes, err)
	}
}
