package engine

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/cuetrainer/cuetrainer/engine/internal/contract"
	"github.com/cuetrainer/cuetrainer/engine/internal/k8s"
	"github.com/cuetrainer/cuetrainer/engine/internal/value"
	"sigs.k8s.io/yaml"
)

// Cluster reads a real cluster's objects, for the lookups a review declares
// and the context kinds its rules read. Offline sessions have none: they
// find only what they admitted.
type Cluster interface {
	// Get returns the object of the group, kind, namespace ("" for a
	// cluster-scoped kind) and name, or nil when it does not exist.
	Get(ctx context.Context, group, kind, namespace, name string) (map[string]any, error)
	// List returns every object of the kind.
	List(ctx context.Context, apiVersion, kind string) ([]map[string]any, error)
}

// Request is what an admission request says besides the object.
type Request struct {
	// Operation is CREATE (the default) or UPDATE.
	Operation string
	// OldObject is the object before an UPDATE, as the cluster holds it.
	OldObject map[string]any
	// Now is when the request came; the zero time means the rules get no
	// time, and so make no mutation that needs one.
	Now time.Time
	// VerdictOnly asks for the findings alone (a validating webhook's
	// answer): the object with its defaults is not decoded (Result.Object
	// stays nil) and the session does not keep it for later documents.
	// Decoding it is a fifth of a runtime's review.
	VerdictOnly bool
	// SchemaChecked says the API server has checked the object against its
	// kind's CRD (its OpenAPI and CEL rules): a validating webhook is called
	// after those checks pass, and an object the controller reads from the
	// cluster passed them when it was written. The review then leaves out
	// the CUE's copy of them (crdChecks), some two fifths of a TrainJob's.
	SchemaChecked bool
}

// find returns the object a lookup names: one the session admitted, or,
// with a cluster, the cluster's (its pinned copy first, when the session
// renders from pinned copies). Objects of the kinds the engine admits come
// back with their defaults, evaluated once per uid and resourceVersion.
func (s *Session) find(ctx context.Context, input map[string]any, l contract.LookupRef) (*stored, error) {
	if s.e.clusterScoped(l.Group, l.Kind) {
		// A cluster-scoped object has no namespace, whatever the lookup
		// says: the cluster's reads leave it out too (controller.cluster).
		l.Namespace = ""
	}
	s.mu.RLock()
	s.note(l.Key())
	st, ok := s.objects[l.Key()]
	s.mu.RUnlock()
	if ok {
		return st, nil
	}
	if s.opts.Cluster == nil {
		return nil, nil
	}
	var obj map[string]any
	if s.opts.Controller && l.Pinned != nil {
		pinned, err := s.pinnedCopy(ctx, input, l)
		if err != nil {
			return nil, err
		}
		obj = pinned
	}
	if obj == nil {
		got, err := s.clusterGet(ctx, l.Group, l.Kind, l.Namespace, l.Name)
		if err != nil {
			return nil, fmt.Errorf("reading %s %s: %w", l.Kind, l.Name, err)
		}
		obj = got
	}
	if obj == nil {
		return nil, nil
	}
	st = s.e.existing(obj)
	if st.tooBig != "" {
		return nil, fmt.Errorf("%s %s is too big to evaluate: %s", l.Kind, l.Name, st.tooBig)
	}
	return st, nil
}

// clusterScoped reports whether the engine knows the kind for
// cluster-scoped (clusterKinds).
func (e *core) clusterScoped(group, kind string) bool {
	return e.decl.ClusterKinds[kind+"."+group]
}

// clusterGet reads an object from the session's cluster once: one
// document's lookups may name the same object twice (the TrainJob's runtime
// snapshot is the runtime's pinned copy and an existing object of its
// render). A session with a cluster admits one document after another.
func (s *Session) clusterGet(ctx context.Context, group, kind, namespace, name string) (map[string]any, error) {
	key := group + "/" + kind + "/" + namespace + "/" + name
	s.mu.RLock()
	obj, ok := s.fetched[key]
	s.mu.RUnlock()
	if ok {
		return obj, nil
	}
	obj, err := s.opts.Cluster.Get(ctx, group, kind, namespace, name)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	if s.fetched == nil {
		s.fetched = map[string]map[string]any{}
	}
	s.fetched[key] = obj
	s.mu.Unlock()
	return obj, nil
}

// pinnedCopy reads the copy of l's object kept in a ConfigMap, nil when there
// is none. A copy that another object controls, that does not parse, or that
// holds another object is an error, not a reason to read the live object.
func (s *Session) pinnedCopy(ctx context.Context, input map[string]any, l contract.LookupRef) (map[string]any, error) {
	p := l.Pinned
	cm, err := s.clusterGet(ctx, "", "ConfigMap", p.Namespace, p.Name)
	if err != nil {
		return nil, fmt.Errorf("reading ConfigMap %s/%s: %w", p.Namespace, p.Name, err)
	}
	if cm == nil {
		return nil, nil
	}
	where := fmt.Sprintf("ConfigMap %s/%s", p.Namespace, p.Name)
	uid := k8s.Str(k8s.Meta(input)["uid"])
	if owner := controllerOf(cm); owner == nil || uid == "" || k8s.Str(owner["uid"]) != uid {
		return nil, fmt.Errorf("invalid pinned copy %s: it exists but is controlled by another object", where)
	}
	obj, err := s.e.parsePinned(cm, p.Key)
	if err != nil {
		return nil, fmt.Errorf("invalid pinned copy %s: %v", where, err)
	}
	d := Document{Object: obj}
	if k8s.GroupOf(d.APIVersion()) != l.Group || d.Kind() != l.Kind || d.Name() != l.Name {
		return nil, fmt.Errorf("invalid pinned copy %s: it holds %s %q of group %q, not %s %q of group %q",
			where, d.Kind(), d.Name(), k8s.GroupOf(d.APIVersion()), l.Kind, l.Name, l.Group)
	}
	return obj, nil
}

// parsePinned parses the copy under key of a ConfigMap's data, once per
// uid and resourceVersion of the ConfigMap: a controller reads the same
// copy on every reconcile of its object. The object is shared: its
// readers copy what they change (existing).
func (e *core) parsePinned(cm map[string]any, key string) (map[string]any, error) {
	m := k8s.Meta(cm)
	uid, version := k8s.Str(m["uid"]), k8s.Str(m["resourceVersion"])
	cacheKey := uid + "/" + version + "/" + key
	if uid != "" && version != "" {
		if obj, ok := e.pinnedCopies.Get(cacheKey); ok {
			return obj, nil
		}
	}
	data, _ := cm["data"].(map[string]any)
	text, ok := data[key].(string)
	if !ok {
		return nil, fmt.Errorf("no data key %q", key)
	}
	var obj map[string]any
	if err := yaml.Unmarshal([]byte(text), &obj); err != nil {
		return nil, err
	}
	if uid != "" && version != "" {
		e.pinnedCopies.Put(cacheKey, obj)
	}
	return obj, nil
}

func controllerOf(obj map[string]any) map[string]any {
	refs, _ := k8s.Meta(obj)["ownerReferences"].([]any)
	for _, r := range refs {
		if m, ok := r.(map[string]any); ok && m["controller"] == true {
			return m
		}
	}
	return nil
}

// existing returns a cluster's object with the defaults its review gives it,
// evaluated once per uid and resourceVersion. The object exists whatever the
// rules say of it now; one that does not even fit the schema is kept as read.
// One too big to evaluate (k8s/limits.go) is not evaluated, and says why
// (stored.tooBig): a runtime put in the cluster past the webhooks would
// cost every TrainJob that names it seconds. It is measured once, too.
func (e *core) existing(obj map[string]any) *stored {
	raw := Document{File: "cluster", Object: obj}
	admitted := e.admits(raw.APIVersion(), raw.Kind())
	m := k8s.Meta(obj)
	key := identityKey(raw.APIVersion(), raw.Kind(), raw.Namespace(), raw.Name()) + "/" + k8s.Str(m["uid"]) + "/" + k8s.Str(m["resourceVersion"])
	cacheable := admitted && k8s.Str(m["uid"]) != "" && k8s.Str(m["resourceVersion"]) != ""
	if cacheable {
		// Looked up before the copy below: a runtime read for every
		// request is the same object most of the time.
		if st, ok := e.existingCache.Get(key); ok {
			return st
		}
	}
	var st *stored
	if size := k8s.SizeFindings(obj, e.crdSchema(raw.APIVersion(), raw.Kind())); size != nil {
		st = &stored{doc: raw, tooBig: size[0].String()}
	} else {
		// A copy with integers as int64, whatever decoded it (YAML gives
		// float64), which the caller may go on using; without the fields
		// the API server writes itself, which no rule reads
		// (serverManaged).
		obj, _ = value.AsJSON(e.withoutServerManaged(obj)).(map[string]any)
		d := Document{File: "cluster", Object: obj}
		if !admitted {
			return &stored{doc: d}
		}
		_, st = newSession(e, SessionOptions{}).evaluate(context.Background(), d, Request{})
		if st == nil {
			st = &stored{doc: d}
		}
	}
	if cacheable {
		e.existingCache.Put(key, st)
	}
	return st
}

// clusterContext lists the context kinds' objects from the cluster, by the
// #Context field that holds them and name.
func (s *Session) clusterContext(ctx context.Context) (map[string]map[string]any, error) {
	out := map[string]map[string]any{}
	apiVersions := value.SortedKeys(s.e.decl.ContextKinds)
	for _, apiVersion := range apiVersions {
		kinds := s.e.decl.ContextKinds[apiVersion]
		names := make([]string, 0, len(kinds))
		for k := range kinds {
			names = append(names, k)
		}
		sort.Strings(names)
		for _, kind := range names {
			objs, err := s.opts.Cluster.List(ctx, apiVersion, kind)
			if err != nil {
				return nil, fmt.Errorf("listing %s %s: %w", apiVersion, kind, err)
			}
			f := kinds[kind]
			if out[f] == nil {
				out[f] = map[string]any{}
			}
			for _, o := range objs {
				out[f][k8s.Str(k8s.Meta(o)["name"])] = s.e.withoutServerManaged(o)
			}
		}
	}
	return out, nil
}
