package engine

import "testing"

// TestRenderRefusalsChecked: a policy's render edit that makes every
// JobSet one the Job API refuses (a volume mount of no volume of the pod)
// fails the load at the edit, from the probes' trial renders; with the
// volume added too, the policy loads. Before, it loaded, and every
// TrainJob of a torch runtime would have failed to start.
func TestRenderRefusalsChecked(t *testing.T) {
	t.Parallel()
	policy := func(volume string) map[string]string {
		return map[string]string{"p.cue": `package schemas

renderParts: (#APIVersion): TrainJob: torch: {
	#plan: _
	edits: scratch: {
		order: 60
		ops: [if #plan.hasTrainerNode {object: "jobset", path: [#plan.trainerNode, "volumeMounts"], op: "set", value: [{name: "scratch", mountPath: "/scratch"}]},` + volume + `]
	}
}
`}
	}
	loadPolicyWant(t, "a mount of no volume", policy(""), `p.cue:7:33: rule edits.scratch cannot be evaluated for TrainJob default/probe, a probe of the runtime torch-distributed (see probes): edit scratch makes the JobSet jobset one the cluster refuses: spec.replicatedJobs[0].template.spec.template.spec.containers[0].volumeMounts[0].name: Not found: "scratch": the Job API refuses every Job of it: no volume of the pod has that name ()`)
	loadPolicyWant(t, "the volume too", policy(`
			if #plan.hasTrainerNode {object: "jobset", path: [#plan.podSet[#plan.trainerJob].paths.pod, "volumes"], op: "set", value: [{name: "scratch", emptyDir: {}}]},`), "")
}
