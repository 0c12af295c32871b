package engine

import "testing"

// TestRenderPartFollowsNumNodes: a framework's render part that replaces
// PlainML's but never counts the trainer's pods (#counts) renders a
// TrainJob's numNodes 2 and 3 alike: the load fails at the part, from the
// probes' renders, with what to do. Counting them, it loads. Before, it
// loaded, and every TrainJob of the framework ran one pod.
func TestRenderPartFollowsNumNodes(t *testing.T) {
	t.Parallel()
	policy := func(counts string) map[string]string {
		return map[string]string{"paddle.cue": `package schemas

#MLPolicy: paddle?: {}

frameworks: paddle: {
	labels: ["paddle"]
	replacesPlainML: true
}

clusterTrainingRuntimes: "paddle-distributed": {
	apiVersion: #APIVersion
	kind:       "ClusterTrainingRuntime"
	metadata: labels: (#Labels.framework): "paddle"
	spec: {
		mlPolicy: {numNodes: 1, paddle: {}}
		template: spec: replicatedJobs: [{
			name: "node"
			template: {
				metadata: labels: (#Labels.ancestor): "trainer"
				spec: template: spec: containers: [{name: "node", image: "paddlepaddle/paddle:3.0.0"}]
			}
		}]
	}
}

renderParts: (#APIVersion): TrainJob: paddle: {
	#plan:    _
	#trainer: _
	#podSet:  _
` + counts + `
	edits: paddle: {
		order: 20
		ops: [if #plan.hasTrainerNode {
			object: "jobset", path: [#plan.trainerNode, "env"], op: "upsert", by: ["name"]
			items: [{name: "PADDLE_TRAINERS_NUM", value: "\(#podSet[#plan.trainerJob].count)"}]
		}]
	}
}
`}
	}
	loadPolicyWant(t, "no counts", policy(""), `paddle.cue:26:39: renderParts.paddle: the render part paddle ignores spec.trainer.numNodes: a probe TrainJob of the runtime paddle-distributed (see probes) renders the same objects with 2 and with 3, so a user's spec.trainer.numNodes would change nothing; count the trainer's pods by it (#counts: (#plan.trainerJob): #trainer.numNodes)`)
	loadPolicyWant(t, "counted", policy(`	if #plan.trainerJob != "" if #trainer.numNodes != _|_ {
		#counts: (#plan.trainerJob): #trainer.numNodes
	}`), "")
}
