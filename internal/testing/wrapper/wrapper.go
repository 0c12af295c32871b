// Package wrapper builds the objects the tests give cuetrainer: runtimes
// (TrainingRuntime, ClusterTrainingRuntime) and TrainJobs of
// trainer.kubeflow.org/v1alpha1, the way JobSet's pkg/util/testing
// wrappers build JobSets: a wrapper an object, a method a field, each
// method returning the wrapper. Obj is the object, for the API server;
// YAML is its text, for the engine's readers (engine.ReadYAML).
//
// The objects are unstructured (cuetrainer has no Go types of Kubeflow's
// API): every value is made what the API machinery's JSON decoding makes
// of it (int64, float64, string, bool, map[string]any, []any).
//
// The package names no framework and no TrainJob step, as cuetrainer's Go
// names none (layout_test.go): the tests pass them in (MLPolicy, Label).
package wrapper

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/json"
	"sigs.k8s.io/yaml"
)

const (
	// APIVersion is the API group and version of the objects built here.
	APIVersion = "trainer.kubeflow.org/v1alpha1"
	// FrameworkLabel is the label that names a runtime's framework to the
	// Kubeflow SDK.
	FrameworkLabel = "trainer.kubeflow.org/framework"
)

// object is what the wrappers of whole objects share: the object, and the
// wrapper its methods return (W), so that they chain.
type object[W any] struct {
	obj  map[string]any
	self W
}

func newObject[W any](self W, kind, name string) object[W] {
	return object[W]{
		obj:  map[string]any{"apiVersion": APIVersion, "kind": kind, "metadata": map[string]any{"name": name}},
		self: self,
	}
}

// Namespace sets metadata.namespace.
func (o *object[W]) Namespace(ns string) W { return o.set(ns, "metadata", "namespace") }

// Label sets the label key to value.
func (o *object[W]) Label(key, value string) W { return o.set(value, "metadata", "labels", key) }

// Annotation sets the annotation key to value.
func (o *object[W]) Annotation(key, value string) W {
	return o.set(value, "metadata", "annotations", key)
}

// UID sets metadata.uid.
func (o *object[W]) UID(uid string) W { return o.set(uid, "metadata", "uid") }

// ResourceVersion sets metadata.resourceVersion.
func (o *object[W]) ResourceVersion(rv string) W { return o.set(rv, "metadata", "resourceVersion") }

// Obj is the object, a copy of its own.
func (o *object[W]) Obj() *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: runtime.DeepCopyJSON(o.obj)}
}

// YAML is the object as a YAML document (block style, keys sorted), as
// kubectl would print it.
func (o *object[W]) YAML() string {
	data, err := yaml.Marshal(o.obj)
	if err != nil {
		panic(fmt.Sprintf("wrapper: %v", err))
	}
	return string(data)
}

func (o *object[W]) set(value any, path ...string) W {
	set(o.obj, value, path...)
	return o.self
}

func (o *object[W]) add(value any, path ...string) W {
	add(o.obj, value, path...)
	return o.self
}

// RuntimeWrapper builds a TrainingRuntime or a ClusterTrainingRuntime.
type RuntimeWrapper struct{ object[*RuntimeWrapper] }

// TrainingRuntime starts a TrainingRuntime (give it a Namespace).
func TrainingRuntime(name string) *RuntimeWrapper { return newRuntime("TrainingRuntime", name) }

// ClusterTrainingRuntime starts a ClusterTrainingRuntime.
func ClusterTrainingRuntime(name string) *RuntimeWrapper {
	return newRuntime("ClusterTrainingRuntime", name)
}

func newRuntime(kind, name string) *RuntimeWrapper {
	w := &RuntimeWrapper{}
	w.object = newObject(w, kind, name)
	return w
}

// Framework sets the framework label (FrameworkLabel).
func (w *RuntimeWrapper) Framework(name string) *RuntimeWrapper { return w.Label(FrameworkLabel, name) }

// NumNodes sets spec.mlPolicy.numNodes.
func (w *RuntimeWrapper) NumNodes(n int) *RuntimeWrapper {
	return w.set(n, "spec", "mlPolicy", "numNodes")
}

// MLPolicy sets the mlPolicy's source (the framework's policy, such as
// spec.mlPolicy.mpi) to settings; nil settings are {}.
func (w *RuntimeWrapper) MLPolicy(source string, settings map[string]any) *RuntimeWrapper {
	return w.set(orEmpty(settings), "spec", "mlPolicy", source)
}

// PodGroupPolicy sets the podGroupPolicy's source (its gang scheduler) to
// settings; nil settings are {}.
func (w *RuntimeWrapper) PodGroupPolicy(source string, settings map[string]any) *RuntimeWrapper {
	return w.set(orEmpty(settings), "spec", "podGroupPolicy", source)
}

// TemplateAnnotation sets an annotation of the JobSet template
// (spec.template.metadata.annotations).
func (w *RuntimeWrapper) TemplateAnnotation(key, value string) *RuntimeWrapper {
	return w.set(value, "spec", "template", "metadata", "annotations", key)
}

// JobSetSpec sets a field of the JobSet template's spec
// (spec.template.spec), such as startupPolicy.
func (w *RuntimeWrapper) JobSetSpec(field string, value any) *RuntimeWrapper {
	return w.set(value, "spec", "template", "spec", field)
}

// ReplicatedJob adds replicated jobs to the JobSet template, as they are
// now.
func (w *RuntimeWrapper) ReplicatedJob(jobs ...*ReplicatedJobWrapper) *RuntimeWrapper {
	for _, j := range jobs {
		w.add(j.Obj(), "spec", "template", "spec", "replicatedJobs")
	}
	return w
}

// ReplicatedJobWrapper builds a replicated job of a runtime's JobSet
// template.
type ReplicatedJobWrapper struct{ job map[string]any }

// ReplicatedJob starts a replicated job.
func ReplicatedJob(name string) *ReplicatedJobWrapper {
	return &ReplicatedJobWrapper{job: map[string]any{"name": name}}
}

// Replicas sets the job's replicas.
func (r *ReplicatedJobWrapper) Replicas(n int) *ReplicatedJobWrapper {
	set(r.job, n, "replicas")
	return r
}

// DependsOn adds a dependency: the job starts when the one named has the
// status (Ready, Complete).
func (r *ReplicatedJobWrapper) DependsOn(name, status string) *ReplicatedJobWrapper {
	add(r.job, map[string]any{"name": name, "status": status}, "dependsOn")
	return r
}

// Label sets a label of the job template (template.metadata.labels), such
// as the one that names the TrainJob step the job runs.
func (r *ReplicatedJobWrapper) Label(key, value string) *ReplicatedJobWrapper {
	set(r.job, value, "template", "metadata", "labels", key)
	return r
}

// Container adds containers to the pod template, as they are now.
func (r *ReplicatedJobWrapper) Container(cs ...*ContainerWrapper) *ReplicatedJobWrapper {
	for _, c := range cs {
		add(r.job, c.Obj(), "template", "spec", "template", "spec", "containers")
	}
	return r
}

// PodSpec sets a field of the pod template's spec
// (template.spec.template.spec), such as priorityClassName or volumes.
func (r *ReplicatedJobWrapper) PodSpec(field string, value any) *ReplicatedJobWrapper {
	set(r.job, value, "template", "spec", "template", "spec", field)
	return r
}

// Obj is the replicated job, a copy of its own.
func (r *ReplicatedJobWrapper) Obj() map[string]any { return runtime.DeepCopyJSON(r.job) }

// ContainerWrapper builds a container of a pod template.
type ContainerWrapper struct{ c map[string]any }

// Container starts a container.
func Container(name, image string) *ContainerWrapper {
	return &ContainerWrapper{c: map[string]any{"name": name, "image": image}}
}

// Requests sets the container's resource requests (quantities as numbers
// or strings, as they would be written).
func (c *ContainerWrapper) Requests(list map[string]any) *ContainerWrapper {
	set(c.c, list, "resources", "requests")
	return c
}

// Limits sets the container's resource limits.
func (c *ContainerWrapper) Limits(list map[string]any) *ContainerWrapper {
	set(c.c, list, "resources", "limits")
	return c
}

// Claims sets the resource claims the container uses, by name.
func (c *ContainerWrapper) Claims(names ...string) *ContainerWrapper {
	for _, n := range names {
		add(c.c, map[string]any{"name": n}, "resources", "claims")
	}
	return c
}

// Set sets another field of the container, such as envFrom.
func (c *ContainerWrapper) Set(field string, value any) *ContainerWrapper {
	set(c.c, value, field)
	return c
}

// Obj is the container, a copy of its own.
func (c *ContainerWrapper) Obj() map[string]any { return runtime.DeepCopyJSON(c.c) }

// TrainJobWrapper builds a TrainJob.
type TrainJobWrapper struct{ object[*TrainJobWrapper] }

// TrainJob starts a TrainJob.
func TrainJob(name string) *TrainJobWrapper {
	w := &TrainJobWrapper{}
	w.object = newObject(w, "TrainJob", name)
	return w
}

// RuntimeRef sets the name of the runtime the TrainJob runs on
// (spec.runtimeRef.name; without RuntimeRefKind, Kubeflow's default kind,
// ClusterTrainingRuntime).
func (j *TrainJobWrapper) RuntimeRef(name string) *TrainJobWrapper {
	return j.set(name, "spec", "runtimeRef", "name")
}

// RuntimeRefKind sets spec.runtimeRef.kind.
func (j *TrainJobWrapper) RuntimeRefKind(kind string) *TrainJobWrapper {
	return j.set(kind, "spec", "runtimeRef", "kind")
}

// NumNodes sets spec.trainer.numNodes.
func (j *TrainJobWrapper) NumNodes(n int) *TrainJobWrapper {
	return j.set(n, "spec", "trainer", "numNodes")
}

// Image sets spec.trainer.image.
func (j *TrainJobWrapper) Image(image string) *TrainJobWrapper {
	return j.set(image, "spec", "trainer", "image")
}

// Args sets spec.trainer.args.
func (j *TrainJobWrapper) Args(args ...string) *TrainJobWrapper {
	return j.set(args, "spec", "trainer", "args")
}

// Env adds a variable of the trainer's env with a value.
func (j *TrainJobWrapper) Env(name, value string) *TrainJobWrapper {
	return j.add(map[string]any{"name": name, "value": value}, "spec", "trainer", "env")
}

// Trainer sets another field of spec.trainer, such as resourcesPerNode.
func (j *TrainJobWrapper) Trainer(field string, value any) *TrainJobWrapper {
	return j.set(value, "spec", "trainer", field)
}

// Suspend sets spec.suspend.
func (j *TrainJobWrapper) Suspend(suspend bool) *TrainJobWrapper {
	return j.set(suspend, "spec", "suspend")
}

// ManagedBy sets spec.managedBy, the controller the TrainJob is for.
func (j *TrainJobWrapper) ManagedBy(controller string) *TrainJobWrapper {
	return j.set(controller, "spec", "managedBy")
}

// ActiveDeadlineSeconds sets spec.activeDeadlineSeconds.
func (j *TrainJobWrapper) ActiveDeadlineSeconds(s int) *TrainJobWrapper {
	return j.set(s, "spec", "activeDeadlineSeconds")
}

// RuntimePatch adds a runtime patch of the manager's, whose
// trainingRuntimeSpec is spec.
func (j *TrainJobWrapper) RuntimePatch(manager string, spec map[string]any) *TrainJobWrapper {
	return j.add(map[string]any{"manager": manager, "trainingRuntimeSpec": spec}, "spec", "runtimePatches")
}

// set puts value, made plain, at path in m, making the maps on the way.
func set(m map[string]any, value any, path ...string) {
	last := len(path) - 1
	for _, k := range path[:last] {
		next, ok := m[k].(map[string]any)
		if !ok {
			next = map[string]any{}
			m[k] = next
		}
		m = next
	}
	m[path[last]] = plain(value)
}

// add appends value, made plain, to the list at path in m.
func add(m map[string]any, value any, path ...string) {
	list, _, _ := unstructured.NestedSlice(m, path...)
	set(m, append(list, value), path...)
}

func orEmpty(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return m
}

// plain is value as the API machinery's JSON decoding makes it (an int64
// where a number is whole): what an unstructured object holds, and what
// the API server and the engine read from its YAML.
func plain(value any) any {
	data, err := json.Marshal(value)
	if err != nil {
		panic(fmt.Sprintf("wrapper: %v is not JSON: %v", value, err))
	}
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		panic(fmt.Sprintf("wrapper: %v", err))
	}
	return v
}

// Distinct makes a runtime object (decoded as Obj's are) the k-th of its
// own, in place, for the benchmarks whose documents never repeat: named
// name, with mlPolicy.numNodes 1 + k%3 unless oneNode, and a template label
// and an env value on its node containers of its own.
func Distinct(obj map[string]any, name string, k int, oneNode bool) {
	obj["metadata"].(map[string]any)["name"] = name
	spec := obj["spec"].(map[string]any)
	if mp, ok := spec["mlPolicy"].(map[string]any); ok && !oneNode {
		mp["numNodes"] = int64(1 + k%3)
	}
	tmpl := spec["template"].(map[string]any)
	tmd, _ := tmpl["metadata"].(map[string]any)
	if tmd == nil {
		tmd = map[string]any{}
		tmpl["metadata"] = tmd
	}
	tmd["labels"] = map[string]any{"bench.example.com/variant": fmt.Sprint(k)}
	for _, job := range tmpl["spec"].(map[string]any)["replicatedJobs"].([]any) {
		pod := job.(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)
		for _, c := range pod["containers"].([]any) {
			if c := c.(map[string]any); c["name"] == "node" {
				env, _ := c["env"].([]any)
				c["env"] = append(env, map[string]any{"name": "BENCH_VARIANT", "value": fmt.Sprint(k)})
			}
		}
	}
}
