package controller_test

import (
	"strings"
	"testing"
)

// teamCRDCheck is a policy's CRD check on TrainJobs: those that ask for a
// team (the label example.com/needs-team) carry one. The TrainJob's CRD is
// Kubeflow's, so the API server does not hold it.
const teamCRDCheck = `package schemas

crdChecks: (#APIVersion): TrainJob: {
	object: _
	crd: teamLabel: [if object.metadata.labels["example.com/needs-team"] != _|_ if object.metadata.labels.team == _|_ {
		path:   "metadata.labels"
		type:   "Required value"
		detail: "a TrainJob that needs a team names it (label team)"
	}]
}
`

// TestPolicyCRDCheckInWebhook: a policy's CRD check is made by the
// validating webhook: the API server's CRD of the TrainJob does not hold
// it. Before, the webhook left every CRD check to the API server, so the
// policy's was made by vet and by no one in the cluster.
func TestPolicyCRDCheckInWebhook(t *testing.T) {
	need(t)
	ns := namespace(t, "crdcheck")
	withPolicyFile(t, 201, "team.cue", teamCRDCheck)

	mustCreate(t, torchRuntime(ns, "pytorch/pytorch:2.13").Obj())
	err := create(t, trainJob(ns, "no-team").Label("example.com/needs-team", "yes").Obj())
	if err == nil || !strings.Contains(err.Error(), "metadata.labels: Required value: a TrainJob that needs a team names it (label team)") {
		t.Errorf("a TrainJob without its team: %v, want the policy's CRD check", err)
	}
	mustCreate(t, trainJob(ns, "with-team").Label("example.com/needs-team", "yes").Label("team", "ml").Obj())
}
